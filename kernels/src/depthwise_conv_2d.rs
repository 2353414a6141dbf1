//! DEPTHWISE_CONV_2D: per-channel 2-D convolution over NHWC input with a `[1, KH, KW, C*M]`
//! filter (`M` = depth multiplier), stride, dilation, implicit zero padding and optional bias.
//! Output channel `oc = ic * M + m` reads input channel `ic`.
//!
//! Follows TFLM's `reference_integer_ops::DepthwiseConvPerChannel` (int8, and its int16
//! overload for 16x8: int16 input/output, int8 filter, required int64 bias, 64-bit
//! accumulator, no zero-point offsets) and `reference_ops::DepthwiseConv` (float). Taps outside the input are skipped as in the
//! reference; each float sum runs over `filter_y`, `filter_x` in increasing order.
//!
//! For speed the loops visit taps outer and channels inner (contiguous in both input and
//! filter). That changes nothing numerically: integer sums are order-independent and each
//! float output channel still accumulates its own taps in the reference order.
//!
//! # In place
//!
//! With depth multiplier 1 (output channel `c` reads only input channel `c`) and no more
//! output pixels than input pixels, the `*_in_place` kernels let the output overwrite the
//! input (TinyEngine's in-place depthwise, in NHWC): one channel at a time, channel `c` of the
//! whole output is computed into a scratch buffer of [`in_place_scratch_elements`] elements,
//! then stored at the output's NHWC positions for channel `c`. Those positions hold only
//! input channel `c`, which is dead by then, and lie inside the input; other channels are not
//! touched. Afterwards the first `batches * output_height * output_width * output_depth`
//! elements of the buffer are the output tensor. Each output element is computed with the
//! same operations in the same order as by the out-of-place kernel, so the results are
//! identical (bit for bit for float). [`in_place_supported`] tells when they apply.

mod fast;
pub use fast::{
    band_bytes, depthwise_conv_2d_s8_fast, depthwise_conv_2d_s8_fast_in_place,
    depthwise_conv_2d_s8_fast_lean, depthwise_conv_2d_s8_fast_single, fast_filter_len,
    fast_scratch_bytes, lean_scratch_bytes, pack_weights, packed_len, prepare_fast_s8,
};

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::int16::{Accumulator, check_shifts_s16};
use crate::quant::{
    Activation, Padding, PrepareError, QuantParams, activation_range_f32, activation_range_i8,
    activation_range_i16, compute_padding_height_width, populate_per_channel_multipliers,
};
use crate::util::{clamp_f32, clamp_i32, tap_range};

/// Constant parameters of a DEPTHWISE_CONV_2D node (TFLM's `DepthwiseParams` plus shapes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Input/output batch count.
    pub batches: usize,
    /// Input height.
    pub input_height: usize,
    /// Input width.
    pub input_width: usize,
    /// Input channels.
    pub input_depth: usize,
    /// Filter height.
    pub filter_height: usize,
    /// Filter width.
    pub filter_width: usize,
    /// Output channels per input channel.
    pub depth_multiplier: usize,
    /// Output height.
    pub output_height: usize,
    /// Output width.
    pub output_width: usize,
    /// Output channels (`input_depth * depth_multiplier`, last filter dim).
    pub output_depth: usize,
    /// Vertical stride.
    pub stride_height: usize,
    /// Horizontal stride.
    pub stride_width: usize,
    /// Vertical dilation.
    pub dilation_height_factor: usize,
    /// Horizontal dilation.
    pub dilation_width_factor: usize,
    /// Implicit zero rows before the input.
    pub padding_height: usize,
    /// Implicit zero columns before the input.
    pub padding_width: usize,
    /// `-input_zero_point`
    pub input_offset: i32,
    /// `output_zero_point`
    pub output_offset: i32,
    /// Lower clamp of the quantized output.
    pub quantized_activation_min: i32,
    /// Upper clamp of the quantized output.
    pub quantized_activation_max: i32,
    /// Lower clamp of the float output.
    pub float_activation_min: f32,
    /// Upper clamp of the float output.
    pub float_activation_max: f32,
}

/// Builtin options of a DEPTHWISE_CONV_2D node (`TfLiteDepthwiseConvParams`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Padding type.
    pub padding: Padding,
    /// Vertical stride.
    pub stride_height: usize,
    /// Horizontal stride.
    pub stride_width: usize,
    /// Vertical dilation.
    pub dilation_height_factor: usize,
    /// Horizontal dilation.
    pub dilation_width_factor: usize,
    /// Depth multiplier (`output_depth / input_depth`).
    pub depth_multiplier: usize,
    /// Fused activation.
    pub activation: Activation,
}

/// The out-of-place kernels need no scratch memory (the `*_in_place` kernels take a typed
/// scratch slice of [`in_place_scratch_elements`] elements instead).
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Shapes and padding from the input shape `[N, H, W, C]`, the filter shape
/// `[1, KH, KW, C*M]` and the options (`CalculateOpDataDepthwiseConv`). The output height/width
/// are computed from the padding type; the planner must check they match the model's output.
pub fn prepare_f32(
    input_shape: [usize; 4],
    filter_shape: [usize; 4],
    options: &Options,
) -> Result<Params, PrepareError> {
    let [batches, input_height, input_width, input_depth] = input_shape;
    let [one, filter_height, filter_width, output_depth] = filter_shape;
    if one != 1
        || options.stride_height == 0
        || options.stride_width == 0
        || options.dilation_height_factor == 0
        || options.dilation_width_factor == 0
        || options.depth_multiplier == 0
        || filter_height == 0
        || filter_width == 0
        || input_depth == 0
        || batches == 0
        || output_depth != input_depth * options.depth_multiplier
    {
        return Err(PrepareError::InvalidShape);
    }
    let pad = compute_padding_height_width(
        options.padding,
        options.stride_height,
        options.stride_width,
        options.dilation_height_factor,
        options.dilation_width_factor,
        input_height,
        input_width,
        filter_height,
        filter_width,
    );
    if pad.out_height == 0 || pad.out_width == 0 {
        return Err(PrepareError::InvalidShape);
    }
    let (float_activation_min, float_activation_max) = activation_range_f32(options.activation);
    Ok(Params {
        batches,
        input_height,
        input_width,
        input_depth,
        filter_height,
        filter_width,
        depth_multiplier: options.depth_multiplier,
        output_height: pad.out_height,
        output_width: pad.out_width,
        output_depth,
        stride_height: options.stride_height,
        stride_width: options.stride_width,
        dilation_height_factor: options.dilation_height_factor,
        dilation_width_factor: options.dilation_width_factor,
        padding_height: pad.height,
        padding_width: pad.width,
        input_offset: 0,
        output_offset: 0,
        quantized_activation_min: 0,
        quantized_activation_max: 0,
        float_activation_min,
        float_activation_max,
    })
}

/// Build-time parameters of an int8 DEPTHWISE_CONV_2D (`DepthwiseConvPrepare`): shapes as
/// [`prepare_f32`], offsets, activation range, and per-output-channel multipliers/shifts
/// (`output_multiplier`/`output_shift` are `C*M` long; `filter_scales` has 1 or `C*M`
/// entries).
#[allow(clippy::too_many_arguments)]
pub fn prepare_s8(
    input_shape: [usize; 4],
    filter_shape: [usize; 4],
    options: &Options,
    input: QuantParams,
    filter_scales: &[f32],
    output: QuantParams,
    output_multiplier: &mut [i32],
    output_shift: &mut [i32],
) -> Result<Params, PrepareError> {
    let mut p = prepare_f32(input_shape, filter_shape, options)?;
    if output_multiplier.len() != p.output_depth {
        return Err(PrepareError::InvalidShape);
    }
    populate_per_channel_multipliers(
        input.scale,
        filter_scales,
        output.scale,
        output_multiplier,
        output_shift,
    )?;
    let (min, max) = activation_range_i8(options.activation, output.scale, output.zero_point)?;
    p.input_offset = -input.zero_point;
    p.output_offset = output.zero_point;
    p.quantized_activation_min = min;
    p.quantized_activation_max = max;
    p.float_activation_min = 0.0;
    p.float_activation_max = 0.0;
    Ok(p)
}

/// Calls `pixel(batch_input, y_origin, (fy0, fy1), x_origin, (fx0, fx1), output_pixel)` for
/// each output pixel in NHWC order.
#[inline(always)]
fn for_each_output_pixel<T, U>(
    p: &Params,
    input: &[T],
    output: &mut [U],
    mut pixel: impl FnMut(&[T], isize, (usize, usize), isize, (usize, usize), &mut [U]),
) {
    let in_batch = p.input_height * p.input_width * p.input_depth;
    if p.output_depth == 0 || in_batch == 0 {
        return;
    }
    let mut out_pixels = output.chunks_exact_mut(p.output_depth);
    for in_b in input.chunks_exact(in_batch).take(p.batches) {
        for oy in 0..p.output_height {
            let y_origin = (oy * p.stride_height) as isize - p.padding_height as isize;
            let ys = tap_range(
                y_origin,
                p.dilation_height_factor,
                p.input_height,
                p.filter_height,
            );
            for ox in 0..p.output_width {
                let x_origin = (ox * p.stride_width) as isize - p.padding_width as isize;
                let xs = tap_range(
                    x_origin,
                    p.dilation_width_factor,
                    p.input_width,
                    p.filter_width,
                );
                let Some(out_px) = out_pixels.next() else {
                    return;
                };
                pixel(in_b, y_origin, ys, x_origin, xs, out_px);
            }
        }
    }
}

/// Calls `tap(x, w)` for each tap of output channel `oc` (reading input channel `ic` of the
/// batch `in_b`) at one output pixel, `filter_y` outer and `filter_x` inner, both increasing
/// (the reference order). The window arguments are as [`for_each_output_pixel`] computes them.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn for_each_tap<T: Copy, W: Copy>(
    p: &Params,
    in_b: &[T],
    filter: &[W],
    y_origin: isize,
    (fy0, fy1): (usize, usize),
    x_origin: isize,
    (fx0, fx1): (usize, usize),
    ic: usize,
    oc: usize,
    mut tap: impl FnMut(T, W),
) {
    let in_row = p.input_width * p.input_depth;
    let f_row = p.filter_width * p.output_depth;
    for fy in fy0..fy1 {
        let iy = (y_origin + (p.dilation_height_factor * fy) as isize) as usize;
        let in_y = &in_b[iy * in_row..][..in_row];
        let f_y = &filter[fy * f_row..][..f_row];
        for fx in fx0..fx1 {
            let ix = (x_origin + (p.dilation_width_factor * fx) as isize) as usize;
            tap(in_y[ix * p.input_depth + ic], f_y[fx * p.output_depth + oc]);
        }
    }
}

/// Int8 output of channel `oc` from its tap sum `acc`: `+ bias[oc]`,
/// `MultiplyByQuantizedMultiplier`, `+ output_offset`, clamped.
#[inline(always)]
fn output_s8(p: &Params, acc: i32, bias: Option<&[i32]>, oc: usize, m: i32, s: i32) -> i8 {
    let mut a = acc;
    if let Some(b) = bias {
        a = a.wrapping_add(b[oc]);
    }
    let a = multiply_by_quantized_multiplier(a, m, s).wrapping_add(p.output_offset);
    clamp_i32(a, p.quantized_activation_min, p.quantized_activation_max) as i8
}

/// Float output of channel `oc` from its tap sum `total`: `clamp(total + bias)` (bias `0.0`
/// when absent).
#[inline(always)]
fn output_f32(p: &Params, total: f32, bias: Option<&[f32]>, oc: usize) -> f32 {
    let bias_value = match bias {
        Some(b) => b[oc],
        None => 0.0,
    };
    clamp_f32(
        total + bias_value,
        p.float_activation_min,
        p.float_activation_max,
    )
}

/// Int16 output of channel `oc` from its 64-bit tap sum `acc`: `+ bias[oc]`, the 64-bit
/// `MultiplyByQuantizedMultiplier` with `m[oc]`, `s[oc]`, clamped.
#[inline(always)]
fn output_s16(p: &Params, acc: i64, bias: &[i64], oc: usize, m: &[i32], s: &[i32]) -> i16 {
    let scaled = acc.add(bias[oc]).requantize(m[oc], s[oc]);
    clamp_i32(
        scaled,
        p.quantized_activation_min,
        p.quantized_activation_max,
    ) as i16
}

/// Output channels processed per pass of the int8 kernel (stack accumulators).
const CHUNK: usize = 32;

/// Int8 DEPTHWISE_CONV_2D (`reference_integer_ops::DepthwiseConvPerChannel`):
/// `acc = sum w * (x + input_offset) + bias[oc]`, then
/// `MultiplyByQuantizedMultiplier(acc, output_multiplier[oc], output_shift[oc]) +
/// output_offset`, clamped.
pub fn depthwise_conv_2d_s8(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    output: &mut [i8],
) {
    debug_assert_eq!(
        input.len(),
        p.batches * p.input_height * p.input_width * p.input_depth
    );
    debug_assert_eq!(
        filter.len(),
        p.filter_height * p.filter_width * p.output_depth
    );
    debug_assert_eq!(p.output_depth, p.input_depth * p.depth_multiplier);
    debug_assert!(bias.is_none_or(|b| b.len() == p.output_depth));
    debug_assert!(
        output_multiplier.len() == p.output_depth && output_shift.len() == p.output_depth
    );
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.output_depth
    );
    let dm = p.depth_multiplier.max(1);
    let in_row = p.input_width * p.input_depth;
    let f_row = p.filter_width * p.output_depth;
    let input_offset = p.input_offset;
    // Input channels per chunk so that a chunk covers at most CHUNK output channels.
    let ic_per_chunk = (CHUNK / dm).max(1);
    for_each_output_pixel(
        p,
        input,
        output,
        |in_b, y_origin, (fy0, fy1), x_origin, (fx0, fx1), out_px| {
            let mut ic0 = 0;
            while ic0 < p.input_depth {
                let ic1 = (ic0 + ic_per_chunk).min(p.input_depth);
                // With dm > CHUNK a chunk is one input channel, split into CHUNK-wide output runs.
                let mut oc0 = ic0 * dm;
                let oc_end = ic1 * dm;
                while oc0 < oc_end {
                    let oc1 = (oc0 + CHUNK).min(oc_end);
                    let n = oc1 - oc0;
                    let mut acc = [0i32; CHUNK];
                    let acc = &mut acc[..n];
                    for fy in fy0..fy1 {
                        let iy = (y_origin + (p.dilation_height_factor * fy) as isize) as usize;
                        let in_y = &in_b[iy * in_row..][..in_row];
                        let f_y = &filter[fy * f_row..][..f_row];
                        for fx in fx0..fx1 {
                            let ix = (x_origin + (p.dilation_width_factor * fx) as isize) as usize;
                            let ws = &f_y[fx * p.output_depth + oc0..][..n];
                            if dm == 1 {
                                let xs = &in_y[ix * p.input_depth + oc0..][..n];
                                for ((a, &x), &w) in acc.iter_mut().zip(xs).zip(ws) {
                                    *a = a.wrapping_add(
                                        (w as i32).wrapping_mul(x as i32 + input_offset),
                                    );
                                }
                            } else {
                                // Output channel oc reads input channel oc / dm.
                                for (k, (a, &w)) in acc.iter_mut().zip(ws).enumerate() {
                                    let x = in_y[ix * p.input_depth + (oc0 + k) / dm];
                                    *a = a.wrapping_add(
                                        (w as i32).wrapping_mul(x as i32 + input_offset),
                                    );
                                }
                            }
                        }
                    }
                    let outs = out_px[oc0..oc1].iter_mut().zip(acc.iter());
                    let quant = output_multiplier[oc0..oc1]
                        .iter()
                        .zip(&output_shift[oc0..oc1]);
                    for (k, ((out, &a), (&m, &s))) in outs.zip(quant).enumerate() {
                        *out = output_s8(p, a, bias, oc0 + k, m, s);
                    }
                    oc0 = oc1;
                }
                ic0 = ic1;
            }
        },
    );
}

/// Float DEPTHWISE_CONV_2D (`reference_ops::DepthwiseConv`): each output channel's `total`
/// starts at `0.0` and accumulates `input * filter` over `filter_y`, `filter_x`; the output
/// is `clamp(total + bias)` (bias `0.0` when absent). The output pixel itself serves as the
/// accumulator.
pub fn depthwise_conv_2d_f32(
    p: &Params,
    input: &[f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
) {
    debug_assert_eq!(
        input.len(),
        p.batches * p.input_height * p.input_width * p.input_depth
    );
    debug_assert_eq!(
        filter.len(),
        p.filter_height * p.filter_width * p.output_depth
    );
    debug_assert_eq!(p.output_depth, p.input_depth * p.depth_multiplier);
    debug_assert!(bias.is_none_or(|b| b.len() == p.output_depth));
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.output_depth
    );
    let dm = p.depth_multiplier.max(1);
    let in_row = p.input_width * p.input_depth;
    let f_row = p.filter_width * p.output_depth;
    for_each_output_pixel(
        p,
        input,
        output,
        |in_b, y_origin, (fy0, fy1), x_origin, (fx0, fx1), out_px| {
            out_px.fill(0.0);
            for fy in fy0..fy1 {
                let iy = (y_origin + (p.dilation_height_factor * fy) as isize) as usize;
                let in_y = &in_b[iy * in_row..][..in_row];
                let f_y = &filter[fy * f_row..][..f_row];
                for fx in fx0..fx1 {
                    let ix = (x_origin + (p.dilation_width_factor * fx) as isize) as usize;
                    let xs = &in_y[ix * p.input_depth..][..p.input_depth];
                    let ws = &f_y[fx * p.output_depth..][..p.output_depth];
                    for ((totals, wm), &x) in
                        out_px.chunks_exact_mut(dm).zip(ws.chunks_exact(dm)).zip(xs)
                    {
                        for (t, &w) in totals.iter_mut().zip(wm) {
                            *t += x * w;
                        }
                    }
                }
            }
            for (oc, t) in out_px.iter_mut().enumerate() {
                *t = output_f32(p, *t, bias, oc);
            }
        },
    );
}

/// Build-time parameters of a 16x8 DEPTHWISE_CONV_2D (int16 input/output, int8 filter): as
/// [`prepare_s8`], but with the activation range of an int16 output. TFLM's int16 kernel
/// ignores the stored offsets (the converter makes int16 zero points 0). Fails with
/// [`PrepareError::MultiplierOutOfRange`] for a requantization multiplier of 128 or more
/// (exponent >= 8), outside the domain of TFLM's 64-bit `MultiplyByQuantizedMultiplier`.
#[allow(clippy::too_many_arguments)]
pub fn prepare_s16(
    input_shape: [usize; 4],
    filter_shape: [usize; 4],
    options: &Options,
    input: QuantParams,
    filter_scales: &[f32],
    output: QuantParams,
    output_multiplier: &mut [i32],
    output_shift: &mut [i32],
) -> Result<Params, PrepareError> {
    let mut p = prepare_s8(
        input_shape,
        filter_shape,
        options,
        input,
        filter_scales,
        output,
        output_multiplier,
        output_shift,
    )?;
    check_shifts_s16(output_multiplier, output_shift)?;
    (p.quantized_activation_min, p.quantized_activation_max) =
        activation_range_i16(options.activation, output.scale, output.zero_point)?;
    Ok(p)
}

/// 16x8 DEPTHWISE_CONV_2D (`reference_integer_ops::DepthwiseConvPerChannel` for `int16_t`
/// input): `acc = sum w * x + bias[oc]` in `i64` (no offsets), then the 64-bit
/// `MultiplyByQuantizedMultiplier(int64_t, ...)`, clamped. TFLM reads the bias as int64
/// whatever its type, and the pinned build crashes on an int16 depthwise without bias, so
/// the bias here is a required int64 slice.
pub fn depthwise_conv_2d_s16(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i16],
    filter: &[i8],
    bias: &[i64],
    output: &mut [i16],
) {
    debug_assert_eq!(
        input.len(),
        p.batches * p.input_height * p.input_width * p.input_depth
    );
    debug_assert_eq!(
        filter.len(),
        p.filter_height * p.filter_width * p.output_depth
    );
    debug_assert_eq!(p.output_depth, p.input_depth * p.depth_multiplier);
    debug_assert_eq!(bias.len(), p.output_depth);
    debug_assert!(
        output_multiplier.len() == p.output_depth && output_shift.len() == p.output_depth
    );
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.output_depth
    );
    let dm = p.depth_multiplier.max(1);
    let in_row = p.input_width * p.input_depth;
    let f_row = p.filter_width * p.output_depth;
    for_each_output_pixel(
        p,
        input,
        output,
        |in_b, y_origin, (fy0, fy1), x_origin, (fx0, fx1), out_px| {
            for (oc, out) in out_px.iter_mut().enumerate() {
                let ic = oc / dm;
                let mut acc: i64 = 0;
                for fy in fy0..fy1 {
                    let iy = (y_origin + (p.dilation_height_factor * fy) as isize) as usize;
                    let in_y = &in_b[iy * in_row..][..in_row];
                    let f_y = &filter[fy * f_row..][..f_row];
                    for fx in fx0..fx1 {
                        let ix = (x_origin + (p.dilation_width_factor * fx) as isize) as usize;
                        let x = in_y[ix * p.input_depth + ic];
                        let w = f_y[fx * p.output_depth + oc];
                        acc = acc.mac(w as i32, x as i32);
                    }
                }
                *out = output_s16(p, acc, bias, oc, output_multiplier, output_shift);
            }
        },
    );
}

/// Whether the `*_in_place` kernels apply to `p`: depth multiplier 1 (output channel `c`
/// reads only input channel `c`) and no more output pixels (`batches * output_height *
/// output_width`) than input pixels, so that the output fits in the input's buffer.
pub const fn in_place_supported(p: &Params) -> bool {
    const fn pixels(batches: usize, height: usize, width: usize) -> Option<usize> {
        match batches.checked_mul(height) {
            Some(bh) => bh.checked_mul(width),
            None => None,
        }
    }
    if p.depth_multiplier != 1 || p.output_depth != p.input_depth {
        return false;
    }
    match (
        pixels(p.batches, p.output_height, p.output_width),
        pixels(p.batches, p.input_height, p.input_width),
    ) {
        (Some(out), Some(inp)) => out <= inp,
        _ => false,
    }
}

/// Length, in elements of the activation type, of the `scratch` slice the `*_in_place`
/// kernels take: one output channel, `batches * output_height * output_width`.
pub const fn in_place_scratch_elements(p: &Params) -> usize {
    p.batches * p.output_height * p.output_width
}

/// Shared loop of the `*_in_place` kernels: for each channel `c`, fills `scratch` with
/// `element(in_b, y_origin, ys, x_origin, xs, c)` for every output pixel in NHWC order, then
/// stores it at the output's positions of channel `c` in `data`.
#[inline(always)]
fn in_place<T: Copy>(
    p: &Params,
    data: &mut [T],
    scratch: &mut [T],
    mut element: impl FnMut(&[T], isize, (usize, usize), isize, (usize, usize), usize) -> T,
) {
    debug_assert!(in_place_supported(p));
    debug_assert_eq!(
        data.len(),
        p.batches * p.input_height * p.input_width * p.input_depth
    );
    debug_assert_eq!(scratch.len(), in_place_scratch_elements(p));
    let channels = p.input_depth;
    let in_batch = p.input_height * p.input_width * channels;
    if in_place_scratch_elements(p) == 0 || in_batch == 0 {
        return;
    }
    // The loops of `for_each_output_pixel`, run once per channel. With dilation 1 (the common
    // case) `tap_range` needs no division, which matters here as it runs per element.
    let taps = |origin: isize, dilation: usize, size: usize, filter: usize| {
        if dilation == 1 {
            tap_range(origin, 1, size, filter)
        } else {
            tap_range(origin, dilation, size, filter)
        }
    };
    for c in 0..channels {
        let mut out = scratch.iter_mut();
        for in_b in data.chunks_exact(in_batch).take(p.batches) {
            for oy in 0..p.output_height {
                let y_origin = (oy * p.stride_height) as isize - p.padding_height as isize;
                let ys = taps(
                    y_origin,
                    p.dilation_height_factor,
                    p.input_height,
                    p.filter_height,
                );
                for ox in 0..p.output_width {
                    let x_origin = (ox * p.stride_width) as isize - p.padding_width as isize;
                    let xs = taps(
                        x_origin,
                        p.dilation_width_factor,
                        p.input_width,
                        p.filter_width,
                    );
                    if let Some(o) = out.next() {
                        *o = element(in_b, y_origin, ys, x_origin, xs, c);
                    }
                }
            }
        }
        // Output channel `c` over input channel `c`, which is no longer needed.
        for (d, &v) in data[c..].iter_mut().step_by(channels).zip(scratch.iter()) {
            *d = v;
        }
    }
}

/// In-place [`depthwise_conv_2d_s8`]: `data` holds the input (`batches * input_height *
/// input_width * input_depth` elements) and, on return, the output in its first `batches *
/// output_height * output_width * output_depth` elements (the rest is unspecified). `scratch`
/// must be [`in_place_scratch_elements`] long; its contents are irrelevant. Only for
/// parameters with [`in_place_supported`]; the output is identical to the out-of-place
/// kernel's.
pub fn depthwise_conv_2d_s8_in_place(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    data: &mut [i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    scratch: &mut [i8],
) {
    debug_assert_eq!(
        filter.len(),
        p.filter_height * p.filter_width * p.output_depth
    );
    debug_assert!(bias.is_none_or(|b| b.len() == p.output_depth));
    debug_assert!(
        output_multiplier.len() == p.output_depth && output_shift.len() == p.output_depth
    );
    let input_offset = p.input_offset;
    in_place(p, data, scratch, |in_b, y_origin, ys, x_origin, xs, c| {
        let mut acc = 0i32;
        for_each_tap(
            p,
            in_b,
            filter,
            y_origin,
            ys,
            x_origin,
            xs,
            c,
            c,
            |x: i8, w: i8| {
                acc = acc.wrapping_add((w as i32).wrapping_mul(x as i32 + input_offset));
            },
        );
        output_s8(p, acc, bias, c, output_multiplier[c], output_shift[c])
    });
}

/// In-place [`depthwise_conv_2d_f32`], with `data` and `scratch` as in
/// [`depthwise_conv_2d_s8_in_place`]. Only for parameters with [`in_place_supported`]; the
/// output is bit-identical to the out-of-place kernel's.
pub fn depthwise_conv_2d_f32_in_place(
    p: &Params,
    data: &mut [f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    scratch: &mut [f32],
) {
    debug_assert_eq!(
        filter.len(),
        p.filter_height * p.filter_width * p.output_depth
    );
    debug_assert!(bias.is_none_or(|b| b.len() == p.output_depth));
    in_place(p, data, scratch, |in_b, y_origin, ys, x_origin, xs, c| {
        let mut total = 0.0f32;
        for_each_tap(
            p,
            in_b,
            filter,
            y_origin,
            ys,
            x_origin,
            xs,
            c,
            c,
            |x: f32, w: f32| {
                total += x * w;
            },
        );
        output_f32(p, total, bias, c)
    });
}

/// In-place [`depthwise_conv_2d_s16`] (16x8), with `data` and `scratch` as in
/// [`depthwise_conv_2d_s8_in_place`]. Only for parameters with [`in_place_supported`]; the
/// output is identical to the out-of-place kernel's.
pub fn depthwise_conv_2d_s16_in_place(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    data: &mut [i16],
    filter: &[i8],
    bias: &[i64],
    scratch: &mut [i16],
) {
    debug_assert_eq!(
        filter.len(),
        p.filter_height * p.filter_width * p.output_depth
    );
    debug_assert_eq!(bias.len(), p.output_depth);
    debug_assert!(
        output_multiplier.len() == p.output_depth && output_shift.len() == p.output_depth
    );
    in_place(p, data, scratch, |in_b, y_origin, ys, x_origin, xs, c| {
        let mut acc: i64 = 0;
        for_each_tap(
            p,
            in_b,
            filter,
            y_origin,
            ys,
            x_origin,
            xs,
            c,
            c,
            |x: i16, w: i8| {
                acc = acc.mac(w as i32, x as i32);
            },
        );
        output_s16(p, acc, bias, c, output_multiplier, output_shift)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn opts(
        padding: Padding,
        stride: usize,
        dilation: usize,
        dm: usize,
        activation: Activation,
    ) -> Options {
        Options {
            padding,
            stride_height: stride,
            stride_width: stride,
            dilation_height_factor: dilation,
            dilation_width_factor: dilation,
            depth_multiplier: dm,
            activation,
        }
    }

    fn q(scale: f32, zero_point: i32) -> QuantParams {
        QuantParams { scale, zero_point }
    }

    /// Naive transcription of TFLM's DepthwiseConvPerChannel loops.
    fn naive_s8(
        p: &Params,
        m: &[i32],
        s: &[i32],
        input: &[i8],
        filter: &[i8],
        bias: Option<&[i32]>,
    ) -> Vec<i8> {
        let mut out = vec![0i8; p.batches * p.output_height * p.output_width * p.output_depth];
        for b in 0..p.batches {
            for oy in 0..p.output_height {
                for ox in 0..p.output_width {
                    for ic in 0..p.input_depth {
                        for mm in 0..p.depth_multiplier {
                            let oc = mm + ic * p.depth_multiplier;
                            let mut acc = 0i32;
                            for fy in 0..p.filter_height {
                                for fx in 0..p.filter_width {
                                    let ix = (ox * p.stride_width) as isize
                                        - p.padding_width as isize
                                        + (p.dilation_width_factor * fx) as isize;
                                    let iy = (oy * p.stride_height) as isize
                                        - p.padding_height as isize
                                        + (p.dilation_height_factor * fy) as isize;
                                    if ix >= 0
                                        && ix < p.input_width as isize
                                        && iy >= 0
                                        && iy < p.input_height as isize
                                    {
                                        let x = input[((b * p.input_height + iy as usize)
                                            * p.input_width
                                            + ix as usize)
                                            * p.input_depth
                                            + ic]
                                            as i32;
                                        let w = filter
                                            [(fy * p.filter_width + fx) * p.output_depth + oc]
                                            as i32;
                                        acc += w * (x + p.input_offset);
                                    }
                                }
                            }
                            if let Some(bias) = bias {
                                acc += bias[oc];
                            }
                            let acc = multiply_by_quantized_multiplier(acc, m[oc], s[oc])
                                + p.output_offset;
                            out[((b * p.output_height + oy) * p.output_width + ox)
                                * p.output_depth
                                + oc] = acc
                                .clamp(p.quantized_activation_min, p.quantized_activation_max)
                                as i8;
                        }
                    }
                }
            }
        }
        out
    }

    fn naive_f32(p: &Params, input: &[f32], filter: &[f32], bias: Option<&[f32]>) -> Vec<f32> {
        let mut out = vec![0f32; p.batches * p.output_height * p.output_width * p.output_depth];
        for b in 0..p.batches {
            for oy in 0..p.output_height {
                for ox in 0..p.output_width {
                    for ic in 0..p.input_depth {
                        for mm in 0..p.depth_multiplier {
                            let oc = mm + ic * p.depth_multiplier;
                            let mut total = 0f32;
                            for fy in 0..p.filter_height {
                                for fx in 0..p.filter_width {
                                    let ix = (ox * p.stride_width) as isize
                                        - p.padding_width as isize
                                        + (p.dilation_width_factor * fx) as isize;
                                    let iy = (oy * p.stride_height) as isize
                                        - p.padding_height as isize
                                        + (p.dilation_height_factor * fy) as isize;
                                    if ix >= 0
                                        && ix < p.input_width as isize
                                        && iy >= 0
                                        && iy < p.input_height as isize
                                    {
                                        let x = input[((b * p.input_height + iy as usize)
                                            * p.input_width
                                            + ix as usize)
                                            * p.input_depth
                                            + ic];
                                        let w = filter
                                            [(fy * p.filter_width + fx) * p.output_depth + oc];
                                        total += x * w;
                                    }
                                }
                            }
                            let bias_value = bias.map_or(0.0, |b| b[oc]);
                            out[((b * p.output_height + oy) * p.output_width + ox)
                                * p.output_depth
                                + oc] = clamp_f32(
                                total + bias_value,
                                p.float_activation_min,
                                p.float_activation_max,
                            );
                        }
                    }
                }
            }
        }
        out
    }

    fn lcg(seed: &mut u32) -> u32 {
        *seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        *seed >> 8
    }

    #[test]
    fn matches_naive_reference() {
        let mut seed = 99u32;
        for &(h, w, c, dm, k, stride, dil, padding) in &[
            (
                5usize,
                5usize,
                3usize,
                1usize,
                3usize,
                1usize,
                1usize,
                Padding::Same,
            ),
            (6, 7, 40, 1, 3, 2, 1, Padding::Same),
            (7, 6, 2, 3, 3, 1, 2, Padding::Same),
            (8, 8, 4, 2, 2, 2, 1, Padding::Valid),
            (5, 5, 1, 40, 3, 1, 1, Padding::Same),
            (9, 4, 20, 2, 5, 3, 1, Padding::Same),
        ] {
            let n = 2;
            let o = c * dm;
            let input: Vec<i8> = (0..n * h * w * c).map(|_| lcg(&mut seed) as i8).collect();
            let filter: Vec<i8> = (0..k * k * o).map(|_| lcg(&mut seed) as i8).collect();
            let bias: Vec<i32> = (0..o).map(|i| i as i32 * 13 - 200).collect();
            let scales: Vec<f32> = (0..o).map(|i| 0.003 + 0.0005 * i as f32).collect();
            let mut m = vec![0; o];
            let mut s = vec![0; o];
            let p = prepare_s8(
                [n, h, w, c],
                [1, k, k, o],
                &opts(padding, stride, dil, dm, Activation::Relu),
                q(0.05, -3),
                &scales,
                q(0.04, -128),
                &mut m,
                &mut s,
            )
            .unwrap();
            let mut out = vec![0i8; n * p.output_height * p.output_width * o];
            depthwise_conv_2d_s8(&p, &m, &s, &input, &filter, Some(&bias), &mut out);
            assert_eq!(
                out,
                naive_s8(&p, &m, &s, &input, &filter, Some(&bias)),
                "{h} {w} {c} {dm} {k}"
            );
            depthwise_conv_2d_s8(&p, &m, &s, &input, &filter, None, &mut out);
            assert_eq!(out, naive_s8(&p, &m, &s, &input, &filter, None));

            let pf = prepare_f32(
                [n, h, w, c],
                [1, k, k, o],
                &opts(padding, stride, dil, dm, Activation::None),
            )
            .unwrap();
            let inf: Vec<f32> = input.iter().map(|&v| v as f32 * 0.37).collect();
            let ff: Vec<f32> = filter.iter().map(|&v| v as f32 * 0.011).collect();
            let bf: Vec<f32> = bias.iter().map(|&v| v as f32 * 0.1).collect();
            let mut outf = vec![0f32; out.len()];
            depthwise_conv_2d_f32(&pf, &inf, &ff, Some(&bf), &mut outf);
            let expected = naive_f32(&pf, &inf, &ff, Some(&bf));
            assert!(
                outf.iter()
                    .zip(&expected)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            );
        }
    }

    #[test]
    fn depth_multiplier_two_by_hand() {
        let mut m = [0; 4];
        let mut s = [0; 4];
        let p = prepare_s8(
            [1, 1, 1, 2],
            [1, 1, 1, 4],
            &opts(Padding::Valid, 1, 1, 2, Activation::None),
            q(1.0, 0),
            &[1.0],
            q(1.0, 0),
            &mut m,
            &mut s,
        )
        .unwrap();
        let mut out = [0i8; 4];
        depthwise_conv_2d_s8(
            &p,
            &m,
            &s,
            &[3, 5],
            &[1, 2, 3, 4],
            Some(&[0, 1, 0, -1]),
            &mut out,
        );
        assert_eq!(out, [3, 7, 15, 19]);
    }
}
