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
pub const M4: [f64; 6] = [1.6596, 2.4607, 2.0955, 5.2540, 3.9015, 256.9369];

/// Cortex-M55 (Helium kernels) instructions per unit of each of [`KINDS`].
pub const M55: [f64; 6] = [0.3062, 1.0665, 0.2068, 1.4038, 1.0351, 330.3412];

/// The models fitted.
pub const MODELS: usize = 24;

/// The estimate's error on the fitted models, in percent: median and worst (M4, M55),
/// and the model of the worst.
pub const M4_ERROR: (f64, f64, &str) = (5.7, 95.8, "tflm_mnist_lstm_int8");
pub const M55_ERROR: (f64, f64, &str) = (20.3, 98.3, "tflm_mnist_lstm_int8");

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
pub const CODE_M4_S: [f64; 5] = [3824.6620, 498.9054, 918.1056, 236.9445, 104.7618];

/// Cortex-M4 code bytes per unit of each of [`CODE_KINDS`], opt-level 3.
pub const CODE_M4_3: [f64; 5] = [5321.8280, 565.1603, 1651.4203, 279.1405, 114.2774];

/// The models fitted for the code estimate.
pub const CODE_MODELS: usize = 24;

/// The code estimate's error on the fitted models at opt-level "s": median in percent,
/// worst in bytes, and the model of the worst.
pub const CODE_ERROR: (f64, f64, &str) = (8.8, 2202.0, "siliconlabs_image_example1");
