//! `no_std`, allocation-free operator kernels for Kiln.
//!
//! Generated `invoke()` code calls these with constant shapes and parameters and with slices
//! of the static arena. Integer kernels follow TensorFlow Lite for Microcontrollers' reference
//! kernels bit for bit (the build pinned in `tools/requirements.txt`, PyPI `tflite-micro`
//! 0.dev20261023182759): requantization uses gemmlowp's double rounding. Float kernels perform
//! the same `f32` operations in the same order as TFLM's reference float kernels.
//!
//! # Conventions
//!
//! * One module per operator. Each exposes a `Params` struct (sometimes a few) whose fields
//!   are all public scalars (`usize` shapes, `i32` quantization constants, `f32` float
//!   clamps), derive `Clone, Copy, Debug, PartialEq`, and can be written as a `const` item.
//!   The exceptions are [`broadcast::Broadcast`] and [`pad::Params`], whose fields are
//!   `[usize; N]` arrays (still `const`-constructible).
//! * Kernels are named by data type: `conv_2d::conv_2d_s8`, `conv_2d::conv_2d_f32`,
//!   `fully_connected::fully_connected_s8`, ... They take `&Params`, per-channel data
//!   (`output_multiplier: &[i32]`, `output_shift: &[i32]`) as separate slices, the input
//!   slices, weights, `bias: Option<&[i32]>` (`Option<&[f32]>` for float) and the output
//!   `&mut` slice, in that order.
//! * Every operator module has `pub const fn scratch_bytes(p: &Params) -> usize`; a kernel
//!   takes a `&mut [u8]` scratch argument only if that can be non-zero (none do today).
//! * Slices must be exactly as long as the shapes in `Params` say (checked with
//!   `debug_assert!`). With parameters produced by the module's `prepare*` functions the
//!   kernels cannot panic; integer accumulation wraps like the C++ does in practice.
//! * Build-time work: each operator module has `prepare*` functions (host side, but
//!   `no_std`) that compute everything TFLM computes in `Prepare` — requantization
//!   multipliers and shifts (per channel into caller-provided `&mut [i32]` slices), offsets,
//!   activation ranges, padding, softmax's `diff_min`, ADD's input multipliers, ... — and
//!   return a [`quant::PrepareError`] where TFLM's `Prepare` would fail. Shared helpers
//!   (`QuantizeMultiplier`, `CalculateActivationRangeQuantized`, `ComputePaddingHeightWidth`,
//!   ...) are in [`quant`]; the gemmlowp arithmetic is in [`fixed_point`].
//! * Layouts are TFLite's: NHWC activations, OHWI conv filters, `[1, H, W, C*M]` depthwise
//!   filters, `[out, in]` fully-connected weights.
//! * Windowed operators (conv, depthwise, pooling) take their builtin options as an `Options`
//!   struct in `prepare*` and compute the output height/width from the padding type like TFLM
//!   does; the planner must check these against the model's output shape. Binary operators
//!   (ADD, SUB, MUL) have a same-shape kernel and a `*_broadcast_*` kernel taking a
//!   [`broadcast::Broadcast`] built at build time; both compute identical elements.
//!
//! # Operators
//!
//! | module | kernels |
//! | --- | --- |
//! | [`fully_connected`] | `fully_connected_s8` (per-tensor), `fully_connected_per_channel_s8`, `fully_connected_f32` |
//! | [`conv_2d`] | `conv_2d_s8` (per-channel, grouped), `conv_2d_f32` |
//! | [`depthwise_conv_2d`] | `depthwise_conv_2d_s8`, `depthwise_conv_2d_f32` |
//! | [`pooling`] | `average_pool_s8`, `max_pool_s8`, `average_pool_f32`, `max_pool_f32` |
//! | [`add`] | `add_s8`, `add_broadcast_s8`, `add_s16`, `add_broadcast_s16`, `add_f32`, `add_broadcast_f32` |
//! | [`sub`] | `sub_s8`, `sub_broadcast_s8`, `sub_f32`, `sub_broadcast_f32` |
//! | [`mul`] | `mul_s8`, `mul_broadcast_s8`, `mul_f32`, `mul_broadcast_f32` |
//! | [`softmax`] | `softmax_s8`, `softmax_s8_s16`, `softmax_f32` |
//! | [`logistic`], [`tanh`] | `logistic_s8`, `tanh_s8` |
//! | [`relu`] | `relu_s8`, `relu6_s8`, `relu_f32`, `relu6_f32` |
//! | [`quantize`], [`dequantize`] | `quantize_f32_s8`, `requantize_s8_s8`, `dequantize_s8_f32` |
//! | [`concatenation`], [`pad`] | generic copies: `concatenation::<T>`, `pad::<T>` |
//!
//! RESHAPE needs no kernel (the plan aliases the buffers).
#![no_std]
#![forbid(unsafe_code)]
// `!(a < b)` on floats is used deliberately so that NaN parameters are rejected.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

#[cfg(test)]
extern crate std;

pub mod add;
pub mod broadcast;
pub mod concatenation;
pub mod conv_2d;
pub mod depthwise_conv_2d;
pub mod dequantize;
pub mod fixed_point;
pub mod fully_connected;
mod int16;
pub mod logistic;
pub mod lstm;
pub mod math;
pub mod mean;
pub mod mul;
pub mod pad;
pub mod pooling;
pub mod quant;
pub mod quantize;
pub mod relu;
pub mod requantize;
pub mod softmax;
pub mod sub;
pub mod svdf;
pub mod tanh;
mod util;
