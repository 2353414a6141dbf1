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
