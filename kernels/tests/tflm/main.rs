//! Kernels against TFLM: cases produced by `tools/kernel_check_<op>.py` (single-op models built
//! with the TF converter and run in the pinned TFLM interpreter).
//!
//! Each operator module checks the few cases hardcoded in `data/<op>.cases`. When the
//! environment variable `KILN_TFLM_CASES` names a directory, `<dir>/<op>.cases` (the full dump
//! a kernel_check script writes) is checked as well.

mod cases;

mod cast;
mod conv_2d_16x8;
mod depthwise_conv_2d_16x8;
mod div;
mod fully_connected_16x8;
mod hard_swish;
mod leaky_relu;
mod logistic_tanh_f32;
mod maximum_minimum;
mod mean;
mod quantize_16x8;
mod resize;
mod softmax_16x8;
mod strided_slice;
mod transpose;
mod transpose_conv;
