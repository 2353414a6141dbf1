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
//!   The exceptions are [`broadcast::Broadcast`], [`pad::Params`], [`mean::Params`],
//!   [`transpose::Params`] and [`strided_slice::Params`], whose fields are fixed-size
//!   `[usize; N]` / `[i32; N]` arrays, and a few `bool` flags (resize options) and `i16`
//!   fixed-point multipliers ([`hard_swish::Params`]) — all still `const`-constructible and
//!   printed by `Debug` as valid Rust.
//! * Kernels are named by data type: `conv_2d::conv_2d_s8`, `conv_2d::conv_2d_f32`,
//!   `fully_connected::fully_connected_s8`, ... They take `&Params`, per-channel data
//!   (`output_multiplier: &[i32]`, `output_shift: &[i32]`) as separate slices, the input
//!   slices, weights, `bias: Option<&[i32]>` (`Option<&[f32]>` for float) and the output
//!   `&mut` slice, in that order. 16x8 kernels (int16 activations, int8 weights) follow TFLM's
//!   bias-type dispatch: `*_s16` takes `Option<&[i64]>` (an int64 bias or none, the 64-bit
//!   accumulator path), `*_s16_bias32` takes `&[i32]` (TFLM's int32 path, taken only for an
//!   int32 bias tensor). Element-type-agnostic operators are generic (`transpose::<T>`,
//!   `strided_slice::<T>`, `maximum::<T>`, `cast::<T, U>`, ...). Constant tables TFLM builds
//!   in `Prepare` (int16 SOFTMAX's lookup tables) are written by `prepare*` into
//!   caller-provided slices and passed to the kernel right after `&Params`.
//! * Every operator module has `pub const fn scratch_bytes(p: &Params) -> usize` (operators
//!   without `Params` take their only build-time value instead); a kernel takes a
//!   `&mut [u8]` scratch argument, last, only if that can be non-zero — today only
//!   [`transpose_conv::transpose_conv_s8`] (TFLM's int32 accumulator buffer of the output's
//!   size). [`mean`] needs none: it finishes one output at a time instead of TFLM's int32
//!   scratch, which gives the same integers.
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
//! * In-place forms, for the planner's aliasing (the output overwrites an input that dies at
//!   the operator; byte-identical with the ordinary kernel): elementwise unary kernels have
//!   `*_in_place(.., data: &mut [T])` (RELU, RELU6, LOGISTIC, TANH, LEAKY_RELU, HARD_SWISH,
//!   int8 and int16 requantization); same-shape ADD and MUL have `*_in_place1` /
//!   `*_in_place2`, where input 1 or 2 is the `&mut` slice receiving the output; depthwise
//!   convolutions with depth multiplier 1 have `depthwise_conv_2d_*_in_place` (see
//!   [`depthwise_conv_2d::in_place_supported`]), which compute one output channel plane at a
//!   time into a typed scratch slice of [`depthwise_conv_2d::in_place_scratch_elements`]
//!   elements and store it over that channel of the input; they are slower than the ordinary
//!   kernel, so Kiln uses them only where they lower the arena. Pointwise convolutions (1x1,
//!   stride 1, see [`conv_2d::pointwise_in_place_supported`]) have
//!   `conv_2d_*_pointwise_in_place`: one slice whose end holds the input and whose start
//!   receives the output, one output pixel at a time through a scratch pixel.
//! * Fast int8 kernels: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and ADD also have
//!   `*_s8_fast` kernels (and in-place forms), byte-identical with the reference ones for
//!   the layers their `prepare_fast_s8` accepts, which computes their tables at build time
//!   (folded biases, multipliers and right shifts, filters in the kernel's layout; see
//!   [`gemm`] for the conditions and the arithmetic). They run on the microkernels of
//!   `arch` (not public): inline assembly with the DSP extension on Cortex-M4/M7/M33
//!   (`cfg(kiln_arch = "dsp")`), with Helium's vector instructions on Cortex-M55/M85
//!   (`cfg(kiln_arch = "mve")`), both chosen by `build.rs` from the target and
//!   `-C target-cpu`, blocked for RV32IM's one-instruction `MUL` (the hot loops as `asm!`)
//!   on `riscv32im*` targets (`cfg(kiln_arch = "riscv")`: ESP32-C3/C6-class), plain Rust
//!   elsewhere. The DSP forms load words at any byte address:
//!   Armv7-M and Armv8-M Mainline allow that unless the program sets `CCR.UNALIGN_TRP`
//!   (reset value 0), as CMSIS-NN also requires. [`ARCH`] names the microkernels compiled.
//!   Those modules, `arch::riscv` (its `asm!` loops, the depthwise blocks' unchecked loads)
//!   and `arch::x86` (the host's `sqrtss` and fused multiply-add) are the crate's only
//!   `unsafe` code.
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
//! | [`pooling`] | `average_pool_s8`, `max_pool_s8` (and their `_fast` forms, the same bytes: channels four to a word, sums in 16-bit lanes, lane-wise maxima), `average_pool_f32`, `max_pool_f32` |
//! | [`add`] | `add_s8`, `add_broadcast_s8`, `add_s16`, `add_broadcast_s16`, `add_f32`, `add_broadcast_f32` |
//! | [`sub`] | `sub_s8`, `sub_broadcast_s8`, `sub_f32`, `sub_broadcast_f32` |
//! | [`mul`] | `mul_s8`, `mul_broadcast_s8`, `mul_f32`, `mul_broadcast_f32` |
//! | [`softmax`] | `softmax_s8`, `softmax_s8_s16` (and their `_table` forms, the same values with `exp` from a build-time table), `softmax_f32` |
//! | [`logistic`], [`tanh`] | `logistic_s8` (and `logistic_s8_table`, the same bytes from a build-time table), `tanh_s8` |
//! | [`relu`] | `relu_s8`, `relu6_s8`, `relu_f32`, `relu6_f32` |
//! | [`quantize`], [`dequantize`] | `quantize_f32_s8`, `requantize_s8_s8`, `dequantize_s8_f32` (and `dequantize_s8_f32_table`, the same floats from a build-time table) |
//! | [`concatenation`], [`pad`] | generic copies: `concatenation::<T>`, `pad::<T>` |
//! | [`mean`] | `mean_s8` (and `mean_s8_fast`, the same bytes, where the innermost kept axis is contiguous), `mean_s16`, `mean_f32` (any axes, up to 6-D) |
//! | [`conv_2d`] (16x8) | `conv_2d_s16` (int64 bias or none), `conv_2d_s16_bias32` |
//! | [`depthwise_conv_2d`] (16x8) | `depthwise_conv_2d_s16` (int64 bias) |
//! | [`fully_connected`] (16x8) | `fully_connected_s16`, `fully_connected_s16_bias32`, `fully_connected_per_channel_s16`, `fully_connected_per_channel_s16_bias32` |
//! | [`softmax`] (16x8) | `softmax_s16` (with the `exp` / `1 / (1 + x)` tables from `prepare_s16`) |
//! | [`requantize`] | `requantize_s16_s8`, `requantize_s8_s16`, `requantize_s16_s16` (QUANTIZE) |
//! | [`leaky_relu`] | `leaky_relu_s8`, `leaky_relu_s16`, `leaky_relu_f32` |
//! | [`hard_swish`] | `hard_swish_s8`, `hard_swish_f32` |
//! | [`activations_f32`] | `logistic_f32`, `tanh_f32` (glibc-exact `expf` / `tanhf`, see [`glibc_math`]) |
//! | [`maximum_minimum`] | generic `maximum`, `maximum_broadcast`, `minimum`, `minimum_broadcast` |
//! | [`div`] | `div_f32`, `div_broadcast_f32` |
//! | [`log_softmax`] | `log_softmax_f32`, `log_softmax_s8` |
//! | [`l2_normalization`] | `l2_normalization_s8`, `l2_normalization_f32` |
//! | [`elementwise`] | `abs_f32`, `square_f32`, `sqrt_f32`, `rsqrt_f32`, `sin_f32`, `cos_f32`, `log_f32`, `ceil_f32`, `floor_f32`, `round_f32`, `exp_f32`, `elu_f32` (glibc-exact, see [`libm_f32`]) |
//! | [`cast`] | generic `cast::<T, U>` over `i8`, `i16`, `i32`, `f32` (and from `bool`) |
//! | [`transpose`], [`strided_slice`] | generic copies: `transpose::<T>` (up to 5-D), `strided_slice::<T>` (up to 4-D) |
//! | [`resize_nearest_neighbor`], [`resize_bilinear`] | generic `resize_nearest_neighbor::<T>`; `resize_bilinear_s8`, `resize_bilinear_f32` |
//! | [`transpose_conv`] | `transpose_conv_s8` (per-channel, int32 scratch), `transpose_conv_f32` |
//! | [`space_to_depth`], [`space_to_batch_nd`] | generic moves: `depth_to_space::<T>`, `space_to_depth::<T>`, `batch_to_space_nd::<T>`, `space_to_batch_nd::<T>` (3-D and 4-D) |
//! | [`mirror_pad`], [`reverse`], [`broadcast_to`] | generic moves: `mirror_pad::<T>` (up to 6-D), `reverse::<T>` (contiguous axes), `broadcast_to::<T>` (up to 5-D) |
//! | [`dynamic_update_slice`] | generic `dynamic_update_slice::<T, I>` (runtime int32/int64 start indices, clamped) |
//! | [`fill`] | `fill::<T>` (FILL), `zeros_like::<T, U>`, `write::<T, U>` (build-time values: SHAPE, constant BROADCAST_ARGS), `broadcast_args::<T>` |
//! | [`comparisons`], [`logical`], [`select`] | EQUAL ... LESS_EQUAL (broadcasting, int8 requantized as TFLM), LOGICAL_AND/OR/NOT, SELECT_V2: bools as bytes |
//! | [`prelu`], [`squared_difference`], [`floor_div_mod`], [`add_n`] | PRELU, SQUARED_DIFFERENCE, FLOOR_DIV/FLOOR_MOD, ADD_N (see each module) |
//! | [`reduce`], [`arg_min_max`], [`cumsum`] | SUM, REDUCE_MAX/MIN/ALL on [`mean`]'s layout; ARG_MAX/ARG_MIN; CUMSUM |
//! | [`gather`], [`slice`](mod@slice), [`split`] | GATHER, GATHER_ND, EMBEDDING_LOOKUP; SLICE; SPLIT, SPLIT_V, UNPACK and PACK (byte copies) |
//! | [`batch_matmul`] | BATCH_MATMUL float32/int8/int16 (operands read through strides, no scratch) |
//! | [`lstm`], [`lstm_f32`], [`lstm_s16`], [`svdf`] | UNIDIRECTIONAL_SEQUENCE_LSTM int8, float32, int16; SVDF (`svdf_s8` TFLM's loops, `svdf_s8_fast` on the DSP extension) |
//! | [`row_sum`] | the sinks of tiled regions: a strip's per-channel sums or dot products added to an INT32 accumulator, the whole-image average or FULLY_CONNECTED finished from it |
//! | [`neg`], [`math`] | NEG float32; the exp/log helpers behind SOFTMAX and friends |
//! | [`conv_2d`], [`depthwise_conv_2d`], [`fully_connected`], [`add`] (fast int8) | `conv_2d_s8_fast`, `conv_2d_s8_fast_pointwise_in_place`, `conv_2d_s8_fast_rows_in_place`, `depthwise_conv_2d_s8_fast`, `depthwise_conv_2d_s8_fast_single`, `depthwise_conv_2d_s8_fast_in_place`, `fully_connected_s8_fast`, the fast ADD kernels (see each module), on [`gemm`] |
//!
//! RESHAPE needs no kernel (the plan aliases the buffers). The modules in the second part of
//! the table are checked against the pinned TFLM by `kernels/tests/tflm/` (cases generated by
//! `tools/kernel_check_*.py`).
#![no_std]
// `unsafe` is confined to `arch::dsp` and `arch::mve` (inline assembly), `arch::riscv`
// (inline assembly, unchecked depthwise loads) and `arch::x86` (`sqrtss`, FMA), which
// argue each block.
#![deny(unsafe_code)]
// `!(a < b)` on floats is used deliberately so that NaN parameters are rejected.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

#[cfg(test)]
extern crate std;

pub mod activations_f32;
pub mod add;
pub mod add_n;
mod arch;
pub mod arg_min_max;
pub use arch::NAME as ARCH;
pub mod batch_matmul;
pub mod broadcast;
pub mod broadcast_to;
pub mod cast;
pub mod comparisons;
pub mod concatenation;
pub mod conv_2d;
pub mod cumsum;
pub mod depthwise_conv_2d;
pub mod dequantize;
pub mod div;
pub mod dynamic_update_slice;
pub mod elementwise;
pub mod fill;
pub mod fixed_point;
pub mod floor_div_mod;
mod fmath;
pub mod fully_connected;
pub mod gather;
pub mod gemm;
pub mod glibc_math;
pub mod hard_swish;
mod int16;
pub mod l2_normalization;
pub mod leaky_relu;
pub mod libm_f32;
pub mod log_softmax;
pub mod logical;
pub mod logistic;
pub mod lstm;
pub mod lstm_f32;
pub mod lstm_s16;
pub mod math;
pub mod maximum_minimum;
pub mod mean;
pub mod mirror_pad;
pub mod mul;
pub mod neg;
pub mod pad;
pub mod pooling;
pub mod prelu;
pub mod quant;
pub mod quantize;
pub mod reduce;
pub mod relu;
pub mod requantize;
pub mod resize_bilinear;
pub mod resize_nearest_neighbor;
pub mod reverse;
pub mod row_sum;
pub mod select;
pub mod signal_delay;
pub mod signal_energy;
pub mod signal_fft_auto_scale;
pub mod signal_filter_bank;
pub mod signal_filter_bank_log;
pub mod signal_filter_bank_spectral_subtraction;
pub mod signal_filter_bank_square_root;
pub mod signal_framer;
pub mod signal_overlap_add;
pub mod signal_pcan;
pub mod signal_rfft;
pub mod signal_stacker;
pub mod signal_window;
pub mod slice;
pub mod softmax;
pub mod space_to_batch_nd;
pub mod space_to_depth;
pub mod split;
pub mod squared_difference;
pub mod strided_slice;
pub mod sub;
pub mod svdf;
pub mod tanh;
pub mod transpose;
pub mod transpose_conv;
mod util;
