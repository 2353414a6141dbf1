//! TRANSPOSE_CONV: transposed 2-D convolution over NHWC input with an OHWI filter, strides,
//! implicit padding, optional bias and fused activation; float32, int8 (per-channel) and 16x8
//! (int16 activations, int8 per-channel weights).
//!
//! Follows TFLM's `transpose_conv.cc` with `reference_ops::TransposeConv` (float) and
//! `reference_integer_ops::TransposeConv` (int8): a "scatter" over the input — for every
//! input pixel and channel, each filter tap adds `input * filter` to the output element it
//! lands on (taps outside the output are skipped) — followed by a pass that adds the bias
//! and clamps (float), or adds the bias, requantizes per channel, adds the output offset and
//! clamps (int8). The float kernel accumulates in the output itself, in TFLM's loop order;
//! the int8 kernel accumulates in an `int32` scratch buffer the size of the output (TFLM's
//! `RequestScratchBufferInArena`), passed as bytes — see [`scratch_bytes`]. The 16x8 kernel
//! is TFLM's int16 `reference_integer_ops::TransposeConv`: `int64` accumulators (TFLM's
//! scatter into an output-sized int64 scratch; here gathered per output element, which gives
//! the same exact sums without scratch), no input or output offsets, an int64 bias (an int16 bias
//! widened to int64, as TFLM converts it into a second scratch buffer; here per element, no
//! buffer), the 64-bit `MultiplyByQuantizedMultiplier` and the fused activation's int16
//! range. (TFLM reads an int32 bias of a 16x8 TRANSPOSE_CONV as int64 data, past its end:
//! the operator module refuses it.)
//!
//! The padding is `ComputePaddingHeightWidth` applied to the *output* height/width (what
//! TFLM's `Prepare` does); the output shape comes from the model's output tensor (TFLM
//! ignores the `output_shape` input tensor). The fused activation is applied as the pinned
//! TFLM does (checked for RELU on both types).

use crate::fixed_point::{multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_i64};
use crate::int16::check_shifts_s16;
use crate::quant::{
    Activation, Padding, PrepareError, QuantParams, activation_range_f32, activation_range_i8,
    activation_range_i16, compute_padding_height_width, populate_per_channel_multipliers,
};
use crate::util::{clamp_f32, clamp_i32};

/// Constant parameters of a TRANSPOSE_CONV node (TFLM's `ConvParams` plus shapes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Input/output batch count.
    pub batches: usize,
    /// Input height.
    pub input_height: usize,
    /// Input width.
    pub input_width: usize,
    /// Input channels (last filter dim).
    pub input_depth: usize,
    /// Filter height.
    pub filter_height: usize,
    /// Filter width.
    pub filter_width: usize,
    /// Output height (from the output tensor).
    pub output_height: usize,
    /// Output width (from the output tensor).
    pub output_width: usize,
    /// Output channels (first filter dim).
    pub output_depth: usize,
    /// Vertical stride.
    pub stride_height: usize,
    /// Horizontal stride.
    pub stride_width: usize,
    /// Rows the output window starts above the scatter origin (`padding_values.height`).
    pub padding_height: usize,
    /// Columns the output window starts left of the scatter origin (`padding_values.width`).
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
    /// `true` for the int8 kernel, which needs an `int32` scratch buffer of the output's
    /// size ([`scratch_bytes`]).
    pub int32_scratch: bool,
}

impl Params {
    /// Number of input elements.
    pub const fn input_size(&self) -> usize {
        self.batches * self.input_height * self.input_width * self.input_depth
    }

    /// Number of output elements.
    pub const fn output_size(&self) -> usize {
        self.batches * self.output_height * self.output_width * self.output_depth
    }
}

/// Builtin options of a TRANSPOSE_CONV node (`TfLiteTransposeConvParams`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Padding type.
    pub padding: Padding,
    /// Vertical stride.
    pub stride_height: usize,
    /// Horizontal stride.
    pub stride_width: usize,
    /// Fused activation.
    pub activation: Activation,
}

/// Scratch memory of the int8 kernel: 4 bytes (an `int32` accumulator) per output element;
/// 0 for the float and the 16x8 kernels.
pub const fn scratch_bytes(p: &Params) -> usize {
    scratch_bytes_for(p.output_size(), p.int32_scratch)
}

/// [`scratch_bytes`] from the output's element count and whether the kernel is the int8 one
/// (what the planner knows before any `prepare`).
pub const fn scratch_bytes_for(output_elements: usize, int8: bool) -> usize {
    if int8 { output_elements * 4 } else { 0 }
}

/// Shapes and padding of a float TRANSPOSE_CONV from the input shape `[N, H, W, I]`, the
/// filter shape `[O, KH, KW, I]`, the output tensor's shape `[N, OH, OW, O]` and the options.
pub fn prepare_f32(
    input_shape: [usize; 4],
    filter_shape: [usize; 4],
    output_shape: [usize; 4],
    options: &Options,
) -> Result<Params, PrepareError> {
    let [batches, input_height, input_width, input_depth] = input_shape;
    let [
        output_depth,
        filter_height,
        filter_width,
        filter_input_depth,
    ] = filter_shape;
    let [out_batches, output_height, output_width, out_depth] = output_shape;
    if options.stride_height == 0
        || options.stride_width == 0
        || filter_input_depth != input_depth
        || out_depth != output_depth
        || out_batches != batches
        || input_shape.contains(&0)
        || filter_shape.contains(&0)
        || output_shape.contains(&0)
    {
        return Err(PrepareError::InvalidShape);
    }
    let pad = compute_padding_height_width(
        options.padding,
        options.stride_height,
        options.stride_width,
        1,
        1,
        output_height,
        output_width,
        filter_height,
        filter_width,
    );
    let (float_activation_min, float_activation_max) = activation_range_f32(options.activation);
    Ok(Params {
        batches,
        input_height,
        input_width,
        input_depth,
        filter_height,
        filter_width,
        output_height,
        output_width,
        output_depth,
        stride_height: options.stride_height,
        stride_width: options.stride_width,
        padding_height: pad.height,
        padding_width: pad.width,
        input_offset: 0,
        output_offset: 0,
        quantized_activation_min: 0,
        quantized_activation_max: 0,
        float_activation_min,
        float_activation_max,
        int32_scratch: false,
    })
}

/// Build-time parameters of an int8 TRANSPOSE_CONV (`Prepare` + `CalculateOpData`): shapes
/// and padding as [`prepare_f32`], offsets, the activation range, and one multiplier/shift
/// per output channel (`PopulateConvolutionQuantizationParams`) written to
/// `output_multiplier`/`output_shift` (each `O` long; `filter_scales` has 1 or `O` entries).
#[allow(clippy::too_many_arguments)]
pub fn prepare_s8(
    input_shape: [usize; 4],
    filter_shape: [usize; 4],
    output_shape: [usize; 4],
    options: &Options,
    input: QuantParams,
    filter_scales: &[f32],
    output: QuantParams,
    output_multiplier: &mut [i32],
    output_shift: &mut [i32],
) -> Result<Params, PrepareError> {
    let mut p = prepare_f32(input_shape, filter_shape, output_shape, options)?;
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
    if output_shift.iter().any(|&s| s > 30) {
        return Err(PrepareError::MultiplierOutOfRange);
    }
    let (min, max) = activation_range_i8(options.activation, output.scale, output.zero_point)?;
    p.input_offset = -input.zero_point;
    p.output_offset = output.zero_point;
    p.quantized_activation_min = min;
    p.quantized_activation_max = max;
    p.float_activation_min = 0.0;
    p.float_activation_max = 0.0;
    p.int32_scratch = true;
    Ok(p)
}

/// Build-time parameters of a 16x8 TRANSPOSE_CONV: as [`prepare_s8`] (shapes, padding,
/// per-channel multipliers), the exponents checked for the 64-bit `MultiplyByQuantizedMultiplier`
/// and the activation range of an int16 output. Input and output zero points must be 0 (the
/// kernel has no offsets).
#[allow(clippy::too_many_arguments)]
pub fn prepare_s16(
    input_shape: [usize; 4],
    filter_shape: [usize; 4],
    output_shape: [usize; 4],
    options: &Options,
    input: QuantParams,
    filter_scales: &[f32],
    output: QuantParams,
    output_multiplier: &mut [i32],
    output_shift: &mut [i32],
) -> Result<Params, PrepareError> {
    if input.zero_point != 0 || output.zero_point != 0 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    let mut p = prepare_s8(
        input_shape,
        filter_shape,
        output_shape,
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
    p.input_offset = 0;
    p.output_offset = 0;
    p.int32_scratch = false;
    Ok(p)
}

/// Runs TFLM's scatter loops, calling `acc(output_index, input_index, filter_index)` for
/// every in-bounds tap, in TFLM's order (batch, in_y, in_x, in_channel, filter_y, filter_x,
/// out_channel).
#[inline(always)]
fn scatter(p: &Params, mut acc: impl FnMut(usize, usize, usize)) {
    let (ih, iw, id) = (p.input_height, p.input_width, p.input_depth);
    let (oh, ow, od) = (p.output_height, p.output_width, p.output_depth);
    let (fh, fw) = (p.filter_height, p.filter_width);
    for batch in 0..p.batches {
        for in_y in 0..ih {
            let out_y_origin = (in_y * p.stride_height) as isize - p.padding_height as isize;
            for in_x in 0..iw {
                let out_x_origin = (in_x * p.stride_width) as isize - p.padding_width as isize;
                for in_channel in 0..id {
                    let input_index = ((batch * ih + in_y) * iw + in_x) * id + in_channel;
                    for filter_y in 0..fh {
                        let out_y = out_y_origin + filter_y as isize;
                        if out_y < 0 || out_y >= oh as isize {
                            continue;
                        }
                        for filter_x in 0..fw {
                            let out_x = out_x_origin + filter_x as isize;
                            if out_x < 0 || out_x >= ow as isize {
                                continue;
                            }
                            let out_base =
                                ((batch * oh + out_y as usize) * ow + out_x as usize) * od;
                            for out_channel in 0..od {
                                let filter_index = ((out_channel * fh + filter_y) * fw + filter_x)
                                    * id
                                    + in_channel;
                                acc(out_base + out_channel, input_index, filter_index);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Int8 TRANSPOSE_CONV (`reference_integer_ops::TransposeConv`): `scratch` (at least
/// [`scratch_bytes`] bytes) holds the `int32` accumulators; `acc += (x + input_offset) * w`
/// in scatter order, then `acc + bias[o]` is requantized with the channel's multiplier/shift,
/// offset and clamped.
#[allow(clippy::too_many_arguments)]
pub fn transpose_conv_s8(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    output: &mut [i8],
    scratch: &mut [u8],
) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(
        filter.len(),
        p.output_depth * p.filter_height * p.filter_width * p.input_depth
    );
    debug_assert!(bias.is_none_or(|b| b.len() == p.output_depth));
    debug_assert!(
        output_multiplier.len() == p.output_depth && output_shift.len() == p.output_depth
    );
    debug_assert_eq!(output.len(), p.output_size());
    debug_assert!(scratch.len() >= p.output_size() * 4);
    let n = p.output_size();
    let Some(acc_bytes) = scratch.get_mut(..n * 4) else {
        return;
    };
    acc_bytes.fill(0);
    scatter(p, |o, i, f| {
        let cell = &mut acc_bytes[o * 4..o * 4 + 4];
        let cur = i32::from_ne_bytes([cell[0], cell[1], cell[2], cell[3]]);
        let v = (input[i] as i32 + p.input_offset).wrapping_mul(filter[f] as i32);
        cell.copy_from_slice(&cur.wrapping_add(v).to_ne_bytes());
    });
    if p.output_depth == 0 {
        return;
    }
    for (pixel, acc_pixel) in output
        .chunks_exact_mut(p.output_depth)
        .zip(acc_bytes.chunks_exact(p.output_depth * 4))
    {
        for (oc, (o, cell)) in pixel.iter_mut().zip(acc_pixel.chunks_exact(4)).enumerate() {
            let mut acc = i32::from_ne_bytes([cell[0], cell[1], cell[2], cell[3]]);
            if let Some(b) = bias {
                acc = acc.wrapping_add(b[oc]);
            }
            let acc =
                multiply_by_quantized_multiplier(acc, output_multiplier[oc], output_shift[oc])
                    .wrapping_add(p.output_offset);
            *o = clamp_i32(acc, p.quantized_activation_min, p.quantized_activation_max) as i8;
        }
    }
}

/// The 16x8 kernel with the bias as `bias(channel)` (already int64).
///
/// TFLM scatters `input * filter` into an `int64` scratch of the output's size; an `int64`
/// sum of 16x8-bit products cannot overflow (each is below 2^22 in magnitude), so it does not
/// depend on the order of its terms, and this kernel gathers each output element's taps
/// instead: the same integers, no scratch.
#[allow(clippy::too_many_arguments)]
fn transpose_conv_s16_impl(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i16],
    filter: &[i8],
    bias: Option<impl Fn(usize) -> i64>,
    output: &mut [i16],
) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(
        filter.len(),
        p.output_depth * p.filter_height * p.filter_width * p.input_depth
    );
    debug_assert!(
        output_multiplier.len() == p.output_depth && output_shift.len() == p.output_depth
    );
    debug_assert_eq!(output.len(), p.output_size());
    let (ih, iw, id) = (p.input_height, p.input_width, p.input_depth);
    let (oh, ow, od) = (p.output_height, p.output_width, p.output_depth);
    let (fh, fw) = (p.filter_height, p.filter_width);
    let mut k = 0;
    for batch in 0..p.batches {
        for out_y in 0..oh {
            let ty = taps(out_y, p.stride_height, p.padding_height, ih, fh);
            for out_x in 0..ow {
                let tx = taps(out_x, p.stride_width, p.padding_width, iw, fw);
                for oc in 0..od {
                    let mut acc = 0i64;
                    for ky in ty.k0..ty.k1 {
                        let (filter_y, in_y) = (ty.r + ky * ty.stride, ty.q - ky);
                        for kx in tx.k0..tx.k1 {
                            let (filter_x, in_x) = (tx.r + kx * tx.stride, tx.q - kx);
                            let x0 = ((batch * ih + in_y) * iw + in_x) * id;
                            let f0 = ((oc * fh + filter_y) * fw + filter_x) * id;
                            for (&x, &w) in input[x0..x0 + id].iter().zip(&filter[f0..f0 + id]) {
                                acc = acc.wrapping_add((x as i32 * w as i32) as i64);
                            }
                        }
                    }
                    if let Some(bias) = &bias {
                        acc = acc.wrapping_add(bias(oc));
                    }
                    let acc = multiply_by_quantized_multiplier_i64(
                        acc,
                        output_multiplier[oc],
                        output_shift[oc],
                    );
                    output[k] =
                        clamp_i32(acc, p.quantized_activation_min, p.quantized_activation_max)
                            as i16;
                    k += 1;
                }
            }
        }
    }
}

/// The filter taps landing on one output row (or column) `o` of a transposed convolution:
/// tap `r + k * stride` from input row `q - k`, for `k` in `k0..k1` (in increasing tap order).
struct Taps {
    r: usize,
    q: usize,
    stride: usize,
    k0: usize,
    k1: usize,
}

/// The taps `f` in `0..filter` with an input row `i` in `0..n` such that
/// `o == i * stride - pad + f`: `f ≡ o + pad (mod stride)`, so `f = r + k * stride` and
/// `i = q - k` with `(q, r) = divmod(o + pad, stride)`; `k <= q` (`f <= o + pad`), `k > q - n`
/// (`i < n`) and `r + k * stride < filter`. Two divisions per output row or column instead
/// of one per tap and channel.
#[inline]
fn taps(o: usize, stride: usize, pad: usize, n: usize, filter: usize) -> Taps {
    let t = o + pad;
    let none = Taps {
        r: 0,
        q: 0,
        stride,
        k0: 0,
        k1: 0,
    };
    if stride == 0 {
        return none;
    }
    let (q, r) = (t / stride, t % stride);
    if r >= filter {
        return none;
    }
    let k0 = (q + 1).saturating_sub(n);
    let k1 = ((filter - 1 - r) / stride + 1).min(q + 1).max(k0);
    Taps {
        r,
        q,
        stride,
        k0,
        k1,
    }
}

/// 16x8 TRANSPOSE_CONV with an int64 bias or none (TFLM's int16
/// `reference_integer_ops::TransposeConv`): `acc = sum x * w` in int64 over the taps that land
/// on the output element, then `acc + bias[o]` is requantized with the 64-bit
/// `MultiplyByQuantizedMultiplier` and clamped. No scratch (see the module docs).
#[allow(clippy::too_many_arguments)]
pub fn transpose_conv_s16(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i16],
    filter: &[i8],
    bias: Option<&[i64]>,
    output: &mut [i16],
) {
    debug_assert!(bias.is_none_or(|b| b.len() == p.output_depth));
    transpose_conv_s16_impl(
        p,
        output_multiplier,
        output_shift,
        input,
        filter,
        bias.map(|b| move |c: usize| b[c]),
        output,
    );
}

/// [`transpose_conv_s16`] with an int16 bias, widened to int64 (TFLM's conversion).
#[allow(clippy::too_many_arguments)]
pub fn transpose_conv_s16_bias16(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i16],
    filter: &[i8],
    bias: &[i16],
    output: &mut [i16],
) {
    debug_assert_eq!(bias.len(), p.output_depth);
    transpose_conv_s16_impl(
        p,
        output_multiplier,
        output_shift,
        input,
        filter,
        Some(|c: usize| bias[c] as i64),
        output,
    );
}

/// The float accumulation of [`scatter`]'s taps, `output[o] += input[i] * filter[f]`, with
/// the loops over the filter position outside the one over the input channel. For one output
/// element and one input pixel only one filter position is in bounds (`filter_y = out_y -
/// in_y * stride + pad`), so each output element still receives its products in TFLM's order
/// (input pixel, then input channel), now as one running sum per output channel over the
/// contiguous input channels and filter row: the same `f32` operations in the same order, with
/// the bounds tests once per filter position instead of once per input channel.
fn scatter_f32(p: &Params, input: &[f32], filter: &[f32], output: &mut [f32]) {
    let (ih, iw, id) = (p.input_height, p.input_width, p.input_depth);
    let (oh, ow, od) = (p.output_height, p.output_width, p.output_depth);
    let (fh, fw) = (p.filter_height, p.filter_width);
    let filter_stride = fh * fw * id;
    for batch in 0..p.batches {
        for in_y in 0..ih {
            let out_y_origin = (in_y * p.stride_height) as isize - p.padding_height as isize;
            for in_x in 0..iw {
                let out_x_origin = (in_x * p.stride_width) as isize - p.padding_width as isize;
                let at = ((batch * ih + in_y) * iw + in_x) * id;
                let Some(xs) = input.get(at..at + id) else {
                    return;
                };
                for filter_y in 0..fh {
                    let out_y = out_y_origin + filter_y as isize;
                    if out_y < 0 || out_y >= oh as isize {
                        continue;
                    }
                    for filter_x in 0..fw {
                        let out_x = out_x_origin + filter_x as isize;
                        if out_x < 0 || out_x >= ow as isize {
                            continue;
                        }
                        let out_base = ((batch * oh + out_y as usize) * ow + out_x as usize) * od;
                        let Some(pixel) = output.get_mut(out_base..out_base + od) else {
                            return;
                        };
                        let tap = (filter_y * fw + filter_x) * id;
                        for (oc, o) in pixel.iter_mut().enumerate() {
                            let f = oc * filter_stride + tap;
                            let Some(ws) = filter.get(f..f + id) else {
                                return;
                            };
                            let mut acc = *o;
                            for (&x, &w) in xs.iter().zip(ws) {
                                acc += x * w;
                            }
                            *o = acc;
                        }
                    }
                }
            }
        }
    }
}

/// Float TRANSPOSE_CONV (`reference_ops::TransposeConv`): the output is zeroed, every tap
/// adds `input * filter` to its output element in scatter order, then each element gets
/// `+ bias[o]` (only when there is a bias) and is clamped.
pub fn transpose_conv_f32(
    p: &Params,
    input: &[f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(
        filter.len(),
        p.output_depth * p.filter_height * p.filter_width * p.input_depth
    );
    debug_assert!(bias.is_none_or(|b| b.len() == p.output_depth));
    debug_assert_eq!(output.len(), p.output_size());
    output.fill(0.0);
    scatter_f32(p, input, filter, output);
    if p.output_depth == 0 {
        return;
    }
    for pixel in output.chunks_exact_mut(p.output_depth) {
        for (oc, o) in pixel.iter_mut().enumerate() {
            let mut acc = *o;
            if let Some(b) = bias {
                acc += b[oc];
            }
            *o = clamp_f32(acc, p.float_activation_min, p.float_activation_max);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stride_two_upsampling() {
        let o = Options {
            padding: Padding::Valid,
            stride_height: 2,
            stride_width: 2,
            activation: Activation::None,
        };
        // 1x1 input, 2x2 filter, stride 2: the output is the filter times the input.
        let p = prepare_f32([1, 1, 1, 1], [1, 2, 2, 1], [1, 2, 2, 1], &o).unwrap();
        let mut out = [0.0f32; 4];
        transpose_conv_f32(&p, &[2.0], &[1.0, 2.0, 3.0, 4.0], Some(&[0.5]), &mut out);
        assert_eq!(out, [2.5, 4.5, 6.5, 8.5]);

        let q = |scale, zero_point| QuantParams { scale, zero_point };
        let (mut m, mut s) = ([0; 1], [0; 1]);
        let p = prepare_s8(
            [1, 2, 1, 1],
            [1, 2, 1, 1],
            [1, 4, 1, 1],
            &o,
            q(1.0, -1),
            &[1.0],
            q(1.0, 0),
            &mut m,
            &mut s,
        )
        .unwrap();
        assert_eq!(scratch_bytes(&p), 16);
        let mut scratch = [0u8; 16];
        let mut out = [0i8; 4];
        transpose_conv_s8(
            &p,
            &m,
            &s,
            &[0, 2],
            &[3, -1],
            Some(&[10]),
            &mut out,
            &mut scratch,
        );
        // (x + 1) * w + 10: x=0 -> 13, 9; x=2 -> 19, 7
        assert_eq!(out, [13, 9, 19, 7]);
    }

    #[test]
    fn f32_sums_equal_tflm_scatter_order() {
        // scatter_f32 against the float adds in TFLM's scatter order, bit for bit (values of
        // mixed magnitude, so a different order of the adds would round differently).
        let mut seed = 11u32;
        let mut next = move || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let m = (seed >> 9) as f32 / (1 << 23) as f32 - 0.5;
            m * [1.0e-3f32, 1.0, 1.0e3][(seed & 3) as usize % 3]
        };
        for (pad, sh, sw, kh, kw) in [
            (Padding::Valid, 2, 2, 3, 3),
            (Padding::Same, 2, 1, 4, 2),
            (Padding::Same, 3, 3, 2, 1),
            (Padding::Same, 1, 2, 3, 5),
            (Padding::Valid, 3, 1, 5, 2),
            (Padding::Same, 2, 4, 5, 3),
            (Padding::Valid, 1, 1, 2, 2),
        ] {
            let o = Options {
                padding: pad,
                stride_height: sh,
                stride_width: sw,
                activation: Activation::None,
            };
            let (n, h, w, ci, co) = (2, 3, 2, 5, 3);
            let (oh, ow) = match pad {
                Padding::Same => (h * sh, w * sw),
                Padding::Valid => ((h - 1) * sh + kh, (w - 1) * sw + kw),
            };
            let p = prepare_f32([n, h, w, ci], [co, kh, kw, ci], [n, oh, ow, co], &o).unwrap();
            let input: std::vec::Vec<f32> = (0..p.input_size()).map(|_| next()).collect();
            let filter: std::vec::Vec<f32> = (0..co * kh * kw * ci).map(|_| next()).collect();
            let mut want = std::vec![0.0f32; p.output_size()];
            scatter(&p, |o, i, f| want[o] += input[i] * filter[f]);
            let mut got = std::vec![0.0f32; p.output_size()];
            scatter_f32(&p, &input, &filter, &mut got);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<std::vec::Vec<_>>();
            assert_eq!(bits(&got), bits(&want));
        }
    }

    #[test]
    fn s16_gather_equals_tflm_scatter() {
        // The gathered 16x8 sums equal TFLM's scatter into int64 accumulators, for strides,
        // both paddings and filters larger than the stride.
        let mut seed = 7u32;
        let mut next = move || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            seed >> 8
        };
        for (pad, sh, sw, kh, kw) in [
            (Padding::Valid, 2, 2, 3, 3),
            (Padding::Same, 2, 1, 4, 2),
            (Padding::Same, 3, 3, 2, 1),
            (Padding::Same, 1, 2, 3, 5),
            (Padding::Valid, 3, 1, 5, 2),
            (Padding::Same, 2, 4, 5, 3),
        ] {
            let o = Options {
                padding: pad,
                stride_height: sh,
                stride_width: sw,
                activation: Activation::None,
            };
            let (n, h, w, ci, co) = (2, 3, 2, 2, 3);
            let (oh, ow) = match pad {
                Padding::Same => (h * sh, w * sw),
                Padding::Valid => ((h - 1) * sh + kh, (w - 1) * sw + kw),
            };
            let q = |scale, zero_point| QuantParams { scale, zero_point };
            let (mut m, mut s) = ([0; 3], [0; 3]);
            let p = prepare_s16(
                [n, h, w, ci],
                [co, kh, kw, ci],
                [n, oh, ow, co],
                &o,
                q(1.0 / 128.0, 0),
                &[0.01, 0.02, 0.03],
                q(1.0, 0),
                &mut m,
                &mut s,
            )
            .unwrap();
            assert_eq!(scratch_bytes(&p), 0);
            let input: std::vec::Vec<i16> = (0..p.input_size()).map(|_| next() as i16).collect();
            let filter: std::vec::Vec<i8> = (0..co * kh * kw * ci).map(|_| next() as i8).collect();
            let bias = [1_000_000i64, -7, 123_456_789];
            let mut acc = std::vec![0i64; p.output_size()];
            scatter(&p, |o, i, f| {
                acc[o] += (input[i] as i32 * filter[f] as i32) as i64
            });
            let want: std::vec::Vec<i16> = acc
                .iter()
                .enumerate()
                .map(|(k, &a)| {
                    let c = k % co;
                    let v = multiply_by_quantized_multiplier_i64(a + bias[c], m[c], s[c]);
                    v.clamp(-32768, 32767) as i16
                })
                .collect();
            let mut out = std::vec![0i16; p.output_size()];
            transpose_conv_s16(&p, &m, &s, &input, &filter, Some(&bias), &mut out);
            assert_eq!(out, want);
            let b16 = [300i16, -2, 9];
            transpose_conv_s16_bias16(&p, &m, &s, &input, &filter, &b16, &mut out);
            let mut out64 = std::vec![0i16; p.output_size()];
            transpose_conv_s16(&p, &m, &s, &input, &filter, Some(&[300, -2, 9]), &mut out64);
            assert_eq!(out, out64);
        }
        let o = Options {
            padding: Padding::Valid,
            stride_height: 1,
            stride_width: 1,
            activation: Activation::None,
        };
        let q = |scale, zero_point| QuantParams { scale, zero_point };
        let (mut m, mut s) = ([0; 1], [0; 1]);
        assert!(
            prepare_s16(
                [1, 1, 1, 1],
                [1, 1, 1, 1],
                [1, 1, 1, 1],
                &o,
                q(1.0, 3),
                &[1.0],
                q(1.0, 0),
                &mut m,
                &mut s
            )
            .is_err()
        );
    }
}
