//! Instructions per unit of work for `kiln plan --layers`' estimates, fitted by
//! `tools/fit_insn_rates.py` (do not edit) to Kiln's firmware on QEMU
//! (`tools/data/firmware.json`, opt-level "s", 23 models).

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
pub const M4: [f64; 6] = [1.7971, 2.5335, 2.0891, 5.5908, 7.2212, 605.6696];

/// Cortex-M55 (Helium kernels) instructions per unit of each of [`KINDS`].
pub const M55: [f64; 6] = [0.3953, 1.1698, 0.2093, 4.3228, 6.0172, 289.7068];

/// The models fitted.
pub const MODELS: usize = 23;

/// The estimate's error on the fitted models, in percent: median and worst (M4, M55),
/// and the model of the worst.
pub const M4_ERROR: (f64, f64, &str) = (14.5, 95.1, "tflm_mnist_lstm_int8");
pub const M55_ERROR: (f64, f64, &str) = (28.3, 96.3, "tflm_mnist_lstm_int8");

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
pub const CODE_M4_S: [f64; 5] = [3889.2951, 1417.3388, 809.1604, 227.1726, 111.3826];

/// Cortex-M4 code bytes per unit of each of [`CODE_KINDS`], opt-level 3.
pub const CODE_M4_3: [f64; 5] = [5829.0606, 1803.4474, 1290.8187, 429.3816, 105.1358];

/// The models fitted for the code estimate.
pub const CODE_MODELS: usize = 23;

/// The code estimate's error on the fitted models at opt-level "s": median in percent,
/// worst in bytes, and the model of the worst.
pub const CODE_ERROR: (f64, f64, &str) = (15.6, 3287.0, "tflm_dtln_noise_suppression");
