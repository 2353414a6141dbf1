//! Instructions per unit of work for `kiln plan --layers`' estimates, fitted by
//! `tools/fit_insn_rates.py` (do not edit) to Kiln's firmware on QEMU
//! (`tools/data/firmware.json`, opt-level "s", 24 models).

/// The kinds of work, in the order of the rates: MACs of convolutions, of depthwise
/// convolutions and of the other MAC kernels; elements and constant bytes of the layers
/// without MACs; layers with code (a call's cost).
pub const KINDS: [&str; 6] = [
    "conv_macs",
    "depthwise_macs",
    "other_macs",
    "elements",
    "weights",
    "layers",
];

/// Cortex-M4 (DSP kernels) instructions per unit of each of [`KINDS`].
pub const M4: [f64; 6] = [1.6590, 2.4606, 2.0965, 5.2265, 3.8962, 256.5104];

/// Cortex-M55 (Helium kernels) instructions per unit of each of [`KINDS`].
pub const M55: [f64; 6] = [0.3060, 1.0660, 0.2068, 1.4030, 1.0351, 330.3558];

/// The models fitted.
pub const MODELS: usize = 24;

/// The estimate's error on the fitted models, in percent: median and worst (M4, M55),
/// and the model of the worst.
pub const M4_ERROR: (f64, f64, &str) = (5.7, 95.8, "tflm_mnist_lstm_int8");
pub const M55_ERROR: (f64, f64, &str) = (19.9, 98.3, "tflm_mnist_lstm_int8");

/// The kinds of code, in the order of the code rates: distinct kernel functions of
/// convolutions, of depthwise convolutions, of the other MAC kernels and of the rest;
/// operators that call a kernel.
pub const CODE_KINDS: [&str; 5] = [
    "conv_kernels",
    "depthwise_kernels",
    "other_mac_kernels",
    "other_kernels",
    "calling_ops",
];

/// Cortex-M4 code bytes per unit of each of [`CODE_KINDS`], opt-level "s".
pub const CODE_M4_S: [f64; 5] = [3806.5120, 508.3463, 906.9315, 241.0238, 106.8462];

/// Cortex-M4 code bytes per unit of each of [`CODE_KINDS`], opt-level 3.
pub const CODE_M4_3: [f64; 5] = [5312.9549, 573.3644, 1645.2612, 278.0417, 115.6765];

/// The models fitted for the code estimate.
pub const CODE_MODELS: usize = 24;

/// The code estimate's error on the fitted models at opt-level "s": median in percent,
/// worst in bytes, and the model of the worst.
pub const CODE_ERROR: (f64, f64, &str) = (9.3, 2209.0, "siliconlabs_image_example1");
