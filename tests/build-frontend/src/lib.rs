//! Models compiled by `kiln-build` in `build.rs`, included from `OUT_DIR`.
//!
//! The generated code must compile without a single warning, documented (the lints below).
#![deny(warnings, missing_docs, unsafe_code)]

/// hello_world (int8) with RAM and flash budgets.
pub mod hello {
    include!(concat!(env!("OUT_DIR"), "/hello.rs"));
}

/// Person detection with a RAM budget.
pub mod person {
    include!(concat!(env!("OUT_DIR"), "/person.rs"));
}

/// Kiln's float CNN with 8-byte alignment.
pub mod cnn_float {
    include!(concat!(env!("OUT_DIR"), "/cnn_float.rs"));
}

/// Includes `$OUT_DIR/<name>.rs` as `pub mod <name>` for each model `build.rs` compiled.
macro_rules! generated {
    ($($name:ident),* $(,)?) => {
        $(
            #[doc = concat!("`", stringify!($name), "`, default options.")]
            pub mod $name {
                include!(concat!(env!("OUT_DIR"), "/", stringify!($name), ".rs"));
            }
        )*
    };
}

generated!(
    tflm_hello_world_float,
    mlperf_tiny_vww_mobilenetv1_025_96_int8,
    mlperf_tiny_kws_dscnn_int8,
    mlperf_tiny_ic_resnet8_int8,
    mlperf_tiny_ad_autoencoder_int8,
    mlperf_tiny_sww_int8,
    tflm_micro_speech_int8,
    tflm_simple_add,
    tflm_mnist_lstm_int8,
    tflm_dtln_noise_suppression,
    tflm_keyword_scrambled_int8,
    mlp_int8,
    mlp_float,
    cnn_int8,
    branches_int8,
    branches_float,
    svdf_int8,
    lstm_int8,
    aliasing_int8,
    aliasing_float,
    depthwise_int8,
    depthwise_float,
    pointwise_int8,
    pointwise_float,
    features_int8,
    features_float,
    lstm_float,
    math_float,
    features_int8_all,
    features_float_all,
    lstm_float_all,
    math_float_all,
);

/// The same hello_world model through `include_model!`, to compare the front ends.
pub mod hello_macro {
    kiln::include_model!(
        "../../../../shared/models/tflm_hello_world_int8.tflite",
        ram_budget = 1024,
        flash_budget = 4 * 1024
    );
}

/// Where `build.rs` wrote its files.
pub const OUT_DIR: &str = env!("OUT_DIR");
