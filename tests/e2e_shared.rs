//! End to end: public models compiled with `include_model!`, run on TFLM's golden inputs,
//! outputs compared byte for byte (float models: exactly, as TFLM's reference float kernels).

mod common;

macro_rules! golden {
    ($name:ident, $file:literal, $stem:literal) => {
        mod $name {
            kiln::include_model!($file);
        }
        #[test]
        fn $name() {
            check_golden!($name, common::shared_models().join("golden").join($stem));
        }
    };
}

golden!(
    hello_world_int8,
    "../../shared/models/tflm_hello_world_int8.tflite",
    "tflm_hello_world_int8"
);
golden!(
    hello_world_float,
    "../../shared/models/tflm_hello_world_float.tflite",
    "tflm_hello_world_float"
);
golden!(
    person_detect,
    "../../shared/models/tflm_person_detect_int8.tflite",
    "tflm_person_detect_int8"
);
golden!(
    vww,
    "../../shared/models/mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite",
    "mlperf_tiny_vww_mobilenetv1_025_96_int8"
);
golden!(
    kws_dscnn,
    "../../shared/models/mlperf_tiny_kws_dscnn_int8.tflite",
    "mlperf_tiny_kws_dscnn_int8"
);
golden!(
    ic_resnet8,
    "../../shared/models/mlperf_tiny_ic_resnet8_int8.tflite",
    "mlperf_tiny_ic_resnet8_int8"
);
golden!(
    ad_autoencoder,
    "../../shared/models/mlperf_tiny_ad_autoencoder_int8.tflite",
    "mlperf_tiny_ad_autoencoder_int8"
);
golden!(
    micro_speech,
    "../../shared/models/tflm_micro_speech_int8.tflite",
    "tflm_micro_speech_int8"
);
golden!(
    simple_add,
    "../../shared/models/tflm_simple_add.tflite",
    "tflm_simple_add"
);
golden!(
    sww,
    "../../shared/models/mlperf_tiny_sww_int8.tflite",
    "mlperf_tiny_sww_int8"
);
golden!(
    mnist_lstm,
    "../../shared/models/tflm_mnist_lstm_int8.tflite",
    "tflm_mnist_lstm_int8"
);
golden!(
    dtln,
    "../../shared/models/tflm_dtln_noise_suppression.tflite",
    "tflm_dtln_noise_suppression"
);
golden!(
    audio_preprocessor,
    "../../shared/models/tflm_audio_preprocessor_int8.tflite",
    "tflm_audio_preprocessor_int8"
);
golden!(
    keyword_scrambled,
    "../../shared/models/tflm_keyword_scrambled_int8.tflite",
    "tflm_keyword_scrambled_int8"
);

/// vww planned as TFLM plans it (stored order, TFLM's greedy offsets): same outputs, and
/// the default plan's arena is smaller.
mod vww_tflm_plan {
    kiln::include_model!(
        "../../shared/models/mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite",
        optimize = false
    );
}

#[test]
fn vww_tflm_plan() {
    check_golden!(
        vww_tflm_plan,
        common::shared_models()
            .join("golden")
            .join("mlperf_tiny_vww_mobilenetv1_025_96_int8")
    );
    assert_eq!(vww_tflm_plan::ARENA_BYTES, 64512);
    assert_eq!(vww::ARENA_BYTES, 55296);
}

/// The smallest plans under a RAM budget, layer by layer (`tile = false`: with tiling, a
/// strip plan with faster kernels meets some of these budgets): the convolutions in place,
/// the MobileNets' widening pointwise ones over their input at the end of their output (a
/// group of pieces: the output's other bytes are reserved only from that convolution on).
/// Same outputs, in a smaller arena than the fastest plan's.
macro_rules! golden_under_budget {
    ($name:ident, $fast:ident, $file:literal, $stem:literal, $budget:literal $(, $opt:ident = $val:tt)*) => {
        mod $name {
            kiln::include_model!($file, ram_budget = $budget $(, $opt = $val)*);
        }
        #[test]
        fn $name() {
            check_golden!($name, common::shared_models().join("golden").join($stem));
            assert_eq!($name::ARENA_BYTES, $budget);
            const { assert!($name::ARENA_BYTES < $fast::ARENA_BYTES) };
        }
    };
}

golden_under_budget!(
    vww_smallest,
    vww,
    "../../shared/models/mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite",
    "mlperf_tiny_vww_mobilenetv1_025_96_int8",
    46136,
    tile = false
);
golden_under_budget!(
    person_detect_smallest,
    person_detect,
    "../../shared/models/tflm_person_detect_int8.tflite",
    "tflm_person_detect_int8",
    37440,
    tile = false
);
// (sww's smallest untiled plan, its convolutions in place by rows, is as small as its
// tilings within 20 % extra MACs: tests/tiling.rs runs those at 30 %.)
golden_under_budget!(
    sww_smallest,
    sww,
    "../../shared/models/mlperf_tiny_sww_int8.tflite",
    "mlperf_tiny_sww_int8",
    3712,
    tile = false
);

/// SignalRfft's lean form (`signal_rfft_unpadded`: its 480-sample frames read where they
/// are, without the 1,024-byte zero-padded copy), taken only under a RAM budget the fastest
/// plan misses: the arena plus the 160 bytes of noise estimate (SignalEnergy runs in place
/// over the spectrum in both plans).
mod audio_preprocessor_lean {
    kiln::include_model!(
        "../../shared/models/tflm_audio_preprocessor_int8.tflite",
        ram_budget = 2164
    );
}

#[test]
fn audio_preprocessor_lean() {
    check_golden!(
        audio_preprocessor_lean,
        common::shared_models()
            .join("golden")
            .join("tflm_audio_preprocessor_int8")
    );
    assert_eq!(audio_preprocessor_lean::ARENA_BYTES, 2004);
    const { assert!(audio_preprocessor_lean::ARENA_BYTES < audio_preprocessor::ARENA_BYTES) };
}

// The smallest untiled plans: the fast convolutions on their reference kernels, which need
// no scratch (`Step::without_scratch`), at or below the best-order live-bytes bound
// (tests/tiling.rs computes it: ic_resnet8's 3x3 convolutions run in place a row at a time,
// 33,792 B against a bound of 49,152 B); only that plan meets these budgets.
golden_under_budget!(
    ic_resnet8_without_scratch,
    ic_resnet8,
    "../../shared/models/mlperf_tiny_ic_resnet8_int8.tflite",
    "mlperf_tiny_ic_resnet8_int8",
    33792,
    tile = false
);
golden_under_budget!(
    micro_speech_without_scratch,
    micro_speech,
    "../../shared/models/tflm_micro_speech_int8.tflite",
    "tflm_micro_speech_int8",
    5960,
    tile = false
);

// Below the layer-by-layer bound: the first operators run one strip of rows at a time
// (`kiln_planner::tiling`), chosen because no untiled plan meets the budget; the budgets are
// `kiln plan --min-ram`'s arenas.
golden_under_budget!(
    person_detect_tiled,
    person_detect_smallest,
    "../../shared/models/tflm_person_detect_int8.tflite",
    "tflm_person_detect_int8",
    19008
);
golden_under_budget!(
    vww_tiled,
    vww_smallest,
    "../../shared/models/mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite",
    "mlperf_tiny_vww_mobilenetv1_025_96_int8",
    36864
);
golden_under_budget!(
    ic_resnet8_tiled,
    ic_resnet8,
    "../../shared/models/mlperf_tiny_ic_resnet8_int8.tflite",
    "mlperf_tiny_ic_resnet8_int8",
    22528
);
