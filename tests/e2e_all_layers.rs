//! End to end, every layer: the `all_outputs/` variants of the public models expose every
//! operator's output as a model output; each is compared byte for byte with TFLM's
//! (`golden_all/`), so the first output that differs names the first wrong layer.

mod common;

macro_rules! golden {
    ($name:ident, $file:literal, $stem:literal) => {
        mod $name {
            kiln::include_model!($file);
        }
        #[test]
        fn $name() {
            check_golden!(
                $name,
                common::shared_models().join("golden_all").join($stem)
            );
        }
    };
}

golden!(
    hello_world_int8,
    "../../shared/models/all_outputs/tflm_hello_world_int8.tflite",
    "tflm_hello_world_int8"
);
golden!(
    hello_world_float,
    "../../shared/models/all_outputs/tflm_hello_world_float.tflite",
    "tflm_hello_world_float"
);
golden!(
    person_detect,
    "../../shared/models/all_outputs/tflm_person_detect_int8.tflite",
    "tflm_person_detect_int8"
);
golden!(
    vww,
    "../../shared/models/all_outputs/mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite",
    "mlperf_tiny_vww_mobilenetv1_025_96_int8"
);
golden!(
    kws_dscnn,
    "../../shared/models/all_outputs/mlperf_tiny_kws_dscnn_int8.tflite",
    "mlperf_tiny_kws_dscnn_int8"
);
golden!(
    ic_resnet8,
    "../../shared/models/all_outputs/mlperf_tiny_ic_resnet8_int8.tflite",
    "mlperf_tiny_ic_resnet8_int8"
);
golden!(
    ad_autoencoder,
    "../../shared/models/all_outputs/mlperf_tiny_ad_autoencoder_int8.tflite",
    "mlperf_tiny_ad_autoencoder_int8"
);
golden!(
    sww,
    "../../shared/models/all_outputs/mlperf_tiny_sww_int8.tflite",
    "mlperf_tiny_sww_int8"
);
golden!(
    micro_speech,
    "../../shared/models/all_outputs/tflm_micro_speech_int8.tflite",
    "tflm_micro_speech_int8"
);
golden!(
    simple_add,
    "../../shared/models/all_outputs/tflm_simple_add.tflite",
    "tflm_simple_add"
);
golden!(
    mnist_lstm,
    "../../shared/models/all_outputs/tflm_mnist_lstm_int8.tflite",
    "tflm_mnist_lstm_int8"
);
golden!(
    dtln,
    "../../shared/models/all_outputs/tflm_dtln_noise_suppression.tflite",
    "tflm_dtln_noise_suppression"
);
golden!(
    keyword_scrambled,
    "../../shared/models/all_outputs/tflm_keyword_scrambled_int8.tflite",
    "tflm_keyword_scrambled_int8"
);
golden!(
    audio_preprocessor,
    "../../shared/models/all_outputs/tflm_audio_preprocessor_int8.tflite",
    "tflm_audio_preprocessor_int8"
);
