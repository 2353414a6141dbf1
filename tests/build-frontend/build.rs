//! Compiles models with the build.rs front end, as a user's firmware crate would.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let shared = "../../../shared/models";
    kiln_build::Model::new(format!("{shared}/tflm_hello_world_int8.tflite"))
        .ram_budget(1024)
        .flash_budget(4 * 1024)
        .compile("hello")?;
    kiln_build::Model::new(format!("{shared}/tflm_person_detect_int8.tflite"))
        .ram_budget(64 * 1024)
        .compile("person")?;
    kiln_build::Model::new("../models/cnn_float.tflite")
        .align(8)
        .compile("cnn_float")?;
    // Every other model Kiln compiles, with default options.
    for stem in PUBLIC {
        kiln_build::Model::new(format!("{shared}/{stem}.tflite")).compile(stem)?;
    }
    for stem in OWN {
        kiln_build::Model::new(format!("../models/{stem}.tflite")).compile(stem)?;
    }
    // The every-layer variants of Kiln's models of the newer operators
    // (`../models/all_outputs`, made by `tools/gen_ops_models.py`), as `<stem>_all`.
    for stem in OWN_ALL {
        kiln_build::Model::new(format!("../models/all_outputs/{stem}.tflite"))
            .compile(&format!("{stem}_all"))?;
    }
    Ok(())
}

/// Public models (`../shared/models`) besides hello_world_int8 and person_detect above; the
/// audio preprocessor's custom ops are not supported.
const PUBLIC: [&str; 11] = [
    "tflm_hello_world_float",
    "mlperf_tiny_vww_mobilenetv1_025_96_int8",
    "mlperf_tiny_kws_dscnn_int8",
    "mlperf_tiny_ic_resnet8_int8",
    "mlperf_tiny_ad_autoencoder_int8",
    "mlperf_tiny_sww_int8",
    "tflm_micro_speech_int8",
    "tflm_simple_add",
    "tflm_mnist_lstm_int8",
    "tflm_dtln_noise_suppression",
    "tflm_keyword_scrambled_int8",
];

/// Kiln's own test models (`tests/models`) besides cnn_float above.
const OWN: [&str; 17] = [
    "mlp_int8",
    "mlp_float",
    "cnn_int8",
    "branches_int8",
    "branches_float",
    "svdf_int8",
    "lstm_int8",
    "aliasing_int8",
    "aliasing_float",
    "depthwise_int8",
    "depthwise_float",
    "pointwise_int8",
    "pointwise_float",
    "features_int8",
    "features_float",
    "lstm_float",
    "math_float",
];

/// Kiln's own models whose every-layer variants are compiled too (those of
/// `tools/gen_ops_models.py`).
const OWN_ALL: [&str; 4] = [
    "features_int8",
    "features_float",
    "lstm_float",
    "math_float",
];
