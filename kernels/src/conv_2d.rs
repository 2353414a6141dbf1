//! CONV_2D: 2-D convolution over NHWC input with an OHWI filter, stride, dilation, implicit
//! zero padding, optional bias and grouped convolution (`input_depth` a multiple of the
//! filter's input depth).
//!
//! Follows TFLM's `reference_integer_ops::ConvPerChannel` (int8; TFLM uses it for every int8
//! conv, broadcasting a single filter scale to all channels), its int16-activation overload
//! `ConvPerChannel<AccumScalar>` (16x8: int16 input/output, int8 filter, no zero-point
//! offsets; [`conv_2d_s16`] for an int64 bias or none, [`conv_2d_s16_bias32`] for an int32
//! bias) and `reference_ops::Conv` (float).
//! Taps falling outside the input are skipped, exactly as the reference does; the float sum
//! runs over `filter_y`, `filter_x`, `in_channel` in increasing order.
//!
//! # In-place pointwise convolution
//!
//! A pointwise CONV_2D (1x1 filter, stride 1, no padding, one group; see
//! [`pointwise_in_place_supported`]) maps each input pixel to the output pixel at the same
//! position, so its output can share the input's buffer: [`conv_2d_s8_pointwise_in_place`]
//! and [`conv_2d_f32_pointwise_in_place`] take one slice `data` of
//! [`pointwise_in_place_len`] `= max(in_len, out_len)` elements, where `P = batches *
//! height * width`, `in_len = P * input_depth` and `out_len = P * output_depth`. The input
//! is the last `in_len` elements of `data` (it starts at `off = data.len() - in_len`, which is
//! 0 when `output_depth <= input_depth`); on return the output is the first `out_len`
//! elements. Pixels are processed in increasing order: all `output_depth` outputs of pixel
//! `p` are computed into a scratch slice of [`pointwise_in_place_scratch_elements`]
//! elements from input pixel `p` (at `off + p * input_depth`), then copied to
//! `data[p * output_depth..(p + 1) * output_depth]`.
//!
//! That store never overwrites an input pixel still to be read: pixels `q > p` start at
//! `off + (p + 1) * input_depth`, and `(p + 1) * output_depth <= off + (p + 1) * input_depth`
//! for every `p < P`. With `output_depth <= input_depth`, `off = 0` and this is
//! `output_depth <= input_depth`. With `output_depth > input_depth`, `off = P *
//! (output_depth - input_depth)` and it is `(p + 1) * (output_depth - input_depth) <= P *
//! (output_depth - input_depth)`, i.e. `p + 1 <= P`. (Input pixel `p` itself has already been
//! read into the scratch slice when it is overwritten.) The arithmetic is that of
//! [`conv_2d_s8`] / [`conv_2d_f32`] for the same parameters (the only tap of each output is
//! the pixel itself, input channels summed in increasing order), so the outputs are
//! identical, bit for bit for float.
//!
//! # In-place convolution by rows
//!
//! Any other CONV_2D whose output rows are no longer than its input rows (`output_width *
//! output_depth <= input_width * input_depth`; see [`rows_in_place_supported`]) can also
//! write its output over its input, a row at a time: [`conv_2d_s8_rows_in_place`],
//! [`conv_2d_s8_fast_rows_in_place`] and [`conv_2d_f32_rows_in_place`] take one slice `data`
//! holding the input and return the output at its start. Output rows are computed in
//! increasing order into a ring of `d + 1` rows (`d = padding_height`, the delay;
//! [`rows_in_place_scratch_elements`]), and row `r` is stored over the input once row `r +
//! d` is computed.
//!
//! That store never overwrites an input row still to be read: output row `q` reads input rows
//! from `q * stride_height - padding_height` on, so once row `r + d` is computed the rows
//! still to come read only input rows from `(r + d + 1) * stride_height - d >= r + 1` on; and
//! output row `r` of batch `b` ends `b * out_batch + (r + 1) * out_row` elements into
//! `data`, no further than `b * in_batch + (r + 1) * in_row`: within the input rows of the
//! batches before `b` and rows `0..=r` of batch `b`. Each row is computed by the ordinary
//! kernel on the input rows from the row's first tap on (a batch of one output row, its
//! padding the rows of the window above the input), so the outputs are identical, bit for
//! bit for float.

mod fast;
pub use fast::{
    conv_2d_s8_fast, conv_2d_s8_fast_pointwise_in_place, conv_2d_s8_fast_rows_in_place,
    fast_filter_len, fast_rows_in_place_scratch_bytes, fast_scratch_bytes, lean_scratch_bytes,
    prepare_fast_s8, s8_scratch_bytes,
};

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::int16::{Accumulator, check_shifts_s16};
use crate::quant::{
    Activation, Padding, PrepareError, QuantParams, activation_range_f32, activation_range_i8,
    activation_range_i16, compute_padding_height_width, populate_per_channel_multipliers,
};
use crate::util::{clamp_f32, clamp_i32, tap_range};

/// Constant parameters of a CONV_2D node (TFLM's `ConvParams` plus shapes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Input/output batch count.
    pub batches: usize,
    /// Input height.
    pub input_height: usize,
    /// Input width.
    pub input_width: usize,
    /// Input channels (a multiple of `filter_input_depth`; the ratio is the group count).
    pub input_depth: usize,
    /// Filter height.
    pub filter_height: usize,
    /// Filter width.
    pub filter_width: usize,
    /// Filter input channels (last filter dim).
    pub filter_input_depth: usize,
    /// Output height.
    pub output_height: usize,
    /// Output width.
    pub output_width: usize,
    /// Output channels (first filter dim).
    pub output_depth: usize,
    /// Vertical stride.
    pub stride_height: usize,
    /// Horizontal stride.
    pub stride_width: usize,
    /// Vertical dilation.
    pub dilation_height_factor: usize,
    /// Horizontal dilation.
    pub dilation_width_factor: usize,
    /// Implicit zero rows before the input (`padding_values.height`).
    pub padding_height: usize,
    /// Implicit zero columns before the input (`padding_values.width`).
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

/// Builtin options of a CONV_2D node (`TfLiteConvParams`).
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
    /// Fused activation.
    pub activation: Activation,
}

/// The reference kernels need no scratch memory (the in-place pointwise kernels take a typed
/// scratch slice of [`pointwise_in_place_scratch_elements`] elements instead).
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Shapes and padding of a CONV_2D from the input shape `[N, H, W, C]`, the filter shape
/// `[O, KH, KW, I]` and the options (`CalculateOpDataConv`: `ComputePaddingHeightWidth`).
/// The output height/width are computed from the padding type; the planner must check they
/// match the model's output tensor `[N, output_height, output_width, O]`.
/// Quantization fields are zero and the float clamps are those of `options.activation`.
pub fn prepare_f32(
    input_shape: [usize; 4],
    filter_shape: [usize; 4],
    options: &Options,
) -> Result<Params, PrepareError> {
    let [batches, input_height, input_width, input_depth] = input_shape;
    let [
        output_depth,
        filter_height,
        filter_width,
        filter_input_depth,
    ] = filter_shape;
    if options.stride_height == 0
        || options.stride_width == 0
        || options.dilation_height_factor == 0
        || options.dilation_width_factor == 0
        || filter_input_depth == 0
        || filter_height == 0
        || filter_width == 0
        || input_depth % filter_input_depth != 0
        || output_depth % (input_depth / filter_input_depth).max(1) != 0
        || input_depth == 0
        || output_depth == 0
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
    if pad.out_height == 0 || pad.out_width == 0 || batches == 0 {
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
        filter_input_depth,
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

/// Build-time parameters of an int8 CONV_2D (`ConvPrepare` + `CalculateOpDataConv` +
/// `PopulateConvolutionQuantizationParams`): shapes and padding as [`prepare_f32`], offsets,
/// activation range, and one multiplier/shift per output channel written to
/// `output_multiplier`/`output_shift` (each `O` long). `filter_scales` has 1 or `O` entries.
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

/// Checks (in debug builds) the slice lengths a kernel gets against `p`: `[input, filter,
/// output]`, the bias if any (one per output channel), and the per-channel multipliers and
/// shifts if the kernel takes them.
#[inline(always)]
fn debug_check_lengths(
    p: &Params,
    [input, filter, output]: [usize; 3],
    bias: Option<usize>,
    per_channel: Option<[usize; 2]>,
) {
    debug_assert_eq!(
        input,
        p.batches * p.input_height * p.input_width * p.input_depth
    );
    debug_assert_eq!(
        filter,
        p.output_depth * p.filter_height * p.filter_width * p.filter_input_depth
    );
    debug_assert!(bias.is_none_or(|b| b == p.output_depth));
    debug_assert!(per_channel.is_none_or(|m| m == [p.output_depth; 2]));
    debug_assert_eq!(
        output,
        p.batches * p.output_height * p.output_width * p.output_depth
    );
}

/// Precomputed strides and the tap window of one output pixel.
struct Geometry {
    in_row: usize,
    in_batch: usize,
    filter_row: usize,
    filter_oc: usize,
    filters_per_group: usize,
    groups: usize,
}

impl Geometry {
    fn new(p: &Params) -> Geometry {
        let groups = p.input_depth / p.filter_input_depth.max(1);
        Geometry {
            in_row: p.input_width * p.input_depth,
            in_batch: p.input_height * p.input_width * p.input_depth,
            filter_row: p.filter_width * p.filter_input_depth,
            filter_oc: p.filter_height * p.filter_width * p.filter_input_depth,
            filters_per_group: p.output_depth / groups.max(1),
            groups,
        }
    }
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
    let g = Geometry::new(p);
    if p.output_depth == 0 || g.in_batch == 0 {
        return;
    }
    let mut out_pixels = output.chunks_exact_mut(p.output_depth);
    for in_b in input.chunks_exact(g.in_batch).take(p.batches) {
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

/// Int8 CONV_2D (`reference_integer_ops::ConvPerChannel`):
/// `acc = sum w * (x + input_offset) + bias[o]`, then
/// `MultiplyByQuantizedMultiplier(acc, output_multiplier[o], output_shift[o]) + output_offset`,
/// clamped to the activation range.
pub fn conv_2d_s8(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    output: &mut [i8],
) {
    debug_check_lengths(
        p,
        [input.len(), filter.len(), output.len()],
        bias.map(<[_]>::len),
        Some([output_multiplier.len(), output_shift.len()]),
    );
    if pointwise_in_place_supported(p) {
        conv_2d_s8_pointwise(
            p,
            output_multiplier,
            output_shift,
            input,
            filter,
            bias,
            output,
        );
    } else {
        conv_2d_s8_windowed(
            p,
            output_multiplier,
            output_shift,
            input,
            filter,
            bias,
            output,
        );
    }
}

/// [`conv_2d_s8`] for 1x1 stride-1 convolutions: one input pixel to one output pixel, no
/// window arithmetic. Not inlined, so that each path keeps its own code.
#[inline(never)]
fn conv_2d_s8_pointwise(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    output: &mut [i8],
) {
    let pixel = pointwise_pixel_s8(p, output_multiplier, output_shift, filter, bias);
    pointwise(p, input, output, pixel);
}

/// [`conv_2d_s8`] for any window.
#[inline(never)]
fn conv_2d_s8_windowed(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    output: &mut [i8],
) {
    let g = Geometry::new(p);
    let fid = p.filter_input_depth;
    let input_offset = p.input_offset;
    for_each_output_pixel(
        p,
        input,
        output,
        |in_b, y_origin, (fy0, fy1), x_origin, (fx0, fx1), out_px| {
            let mut oc = 0;
            for group in 0..g.groups {
                let in_channel0 = group * fid;
                for _ in 0..g.filters_per_group {
                    let f_oc = &filter[oc * g.filter_oc..][..g.filter_oc];
                    let mut acc: i32 = 0;
                    for fy in fy0..fy1 {
                        let iy = (y_origin + (p.dilation_height_factor * fy) as isize) as usize;
                        let in_y = &in_b[iy * g.in_row..][..g.in_row];
                        let f_y = &f_oc[fy * g.filter_row..][..g.filter_row];
                        for fx in fx0..fx1 {
                            let ix = (x_origin + (p.dilation_width_factor * fx) as isize) as usize;
                            let xs = &in_y[ix * p.input_depth + in_channel0..][..fid];
                            let ws = &f_y[fx * fid..][..fid];
                            for (&x, &w) in xs.iter().zip(ws) {
                                acc = acc
                                    .wrapping_add((w as i32).wrapping_mul(x as i32 + input_offset));
                            }
                        }
                    }
                    if let Some(b) = bias {
                        acc = acc.wrapping_add(b[oc]);
                    }
                    let acc = multiply_by_quantized_multiplier(
                        acc,
                        output_multiplier[oc],
                        output_shift[oc],
                    )
                    .wrapping_add(p.output_offset);
                    out_px[oc] =
                        clamp_i32(acc, p.quantized_activation_min, p.quantized_activation_max)
                            as i8;
                    oc += 1;
                }
            }
        },
    );
}

/// Float CONV_2D (`reference_ops::Conv`): `total` starts at `0.0` and accumulates
/// `input * filter` over `filter_y`, `filter_x`, `in_channel`; the output is
/// `clamp(total + bias)` (bias `0.0` when absent).
pub fn conv_2d_f32(
    p: &Params,
    input: &[f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
) {
    debug_check_lengths(
        p,
        [input.len(), filter.len(), output.len()],
        bias.map(<[_]>::len),
        None,
    );
    if pointwise_in_place_supported(p) {
        conv_2d_f32_pointwise(p, input, filter, bias, output);
    } else {
        conv_2d_f32_windowed(p, input, filter, bias, output);
    }
}

/// [`conv_2d_f32`] for 1x1 stride-1 convolutions (see [`conv_2d_s8_pointwise`]).
#[inline(never)]
fn conv_2d_f32_pointwise(
    p: &Params,
    input: &[f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
) {
    pointwise(p, input, output, pointwise_pixel_f32(p, filter, bias));
}

/// [`conv_2d_f32`] for any window.
#[inline(never)]
fn conv_2d_f32_windowed(
    p: &Params,
    input: &[f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
) {
    let g = Geometry::new(p);
    let fid = p.filter_input_depth;
    for_each_output_pixel(
        p,
        input,
        output,
        |in_b, y_origin, (fy0, fy1), x_origin, (fx0, fx1), out_px| {
            let mut oc = 0;
            for group in 0..g.groups {
                let in_channel0 = group * fid;
                for _ in 0..g.filters_per_group {
                    let f_oc = &filter[oc * g.filter_oc..][..g.filter_oc];
                    let mut total = 0.0f32;
                    for fy in fy0..fy1 {
                        let iy = (y_origin + (p.dilation_height_factor * fy) as isize) as usize;
                        let in_y = &in_b[iy * g.in_row..][..g.in_row];
                        let f_y = &f_oc[fy * g.filter_row..][..g.filter_row];
                        for fx in fx0..fx1 {
                            let ix = (x_origin + (p.dilation_width_factor * fx) as isize) as usize;
                            let xs = &in_y[ix * p.input_depth + in_channel0..][..fid];
                            let ws = &f_y[fx * fid..][..fid];
                            for (&x, &w) in xs.iter().zip(ws) {
                                total += x * w;
                            }
                        }
                    }
                    let bias_value = match bias {
                        Some(b) => b[oc],
                        None => 0.0,
                    };
                    out_px[oc] = clamp_f32(
                        total + bias_value,
                        p.float_activation_min,
                        p.float_activation_max,
                    );
                    oc += 1;
                }
            }
        },
    );
}

/// Build-time parameters of a 16x8 CONV_2D (int16 input/output, int8 filter): as
/// [`prepare_s8`], but with the activation range of an int16 output. The offsets are stored
/// for completeness; TFLM's int16 kernel ignores them (the converter makes int16 zero points
/// 0). Fails with [`PrepareError::MultiplierOutOfRange`] for a requantization multiplier of
/// 128 or more (exponent >= 8), outside the domain of TFLM's 64-bit
/// `MultiplyByQuantizedMultiplier` (its result is undefined there).
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

/// The 16x8 CONV_2D (`reference_integer_ops::ConvPerChannel<AccumScalar>`): no input or
/// output offsets, `acc = sum w * x + bias[o]` in `A`, requantized with `A`'s
/// `MultiplyByQuantizedMultiplier`, clamped.
fn conv_2d_s16_impl<A: Accumulator>(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i16],
    filter: &[i8],
    bias: Option<&[A]>,
    output: &mut [i16],
) {
    debug_check_lengths(
        p,
        [input.len(), filter.len(), output.len()],
        bias.map(<[_]>::len),
        Some([output_multiplier.len(), output_shift.len()]),
    );
    let g = Geometry::new(p);
    let fid = p.filter_input_depth;
    for_each_output_pixel(
        p,
        input,
        output,
        |in_b, y_origin, (fy0, fy1), x_origin, (fx0, fx1), out_px| {
            let mut oc = 0;
            for group in 0..g.groups {
                let in_channel0 = group * fid;
                for _ in 0..g.filters_per_group {
                    let f_oc = &filter[oc * g.filter_oc..][..g.filter_oc];
                    let mut acc = A::ZERO;
                    for fy in fy0..fy1 {
                        let iy = (y_origin + (p.dilation_height_factor * fy) as isize) as usize;
                        let in_y = &in_b[iy * g.in_row..][..g.in_row];
                        let f_y = &f_oc[fy * g.filter_row..][..g.filter_row];
                        for fx in fx0..fx1 {
                            let ix = (x_origin + (p.dilation_width_factor * fx) as isize) as usize;
                            let xs = &in_y[ix * p.input_depth + in_channel0..][..fid];
                            let ws = &f_y[fx * fid..][..fid];
                            for (&x, &w) in xs.iter().zip(ws) {
                                acc = acc.mac(w as i32, x as i32);
                            }
                        }
                    }
                    if let Some(b) = bias {
                        acc = acc.add(b[oc]);
                    }
                    let scaled = acc.requantize(output_multiplier[oc], output_shift[oc]);
                    out_px[oc] = clamp_i32(
                        scaled,
                        p.quantized_activation_min,
                        p.quantized_activation_max,
                    ) as i16;
                    oc += 1;
                }
            }
        },
    );
}

/// 16x8 CONV_2D with an int64 bias (the converter's default) or none
/// (`ConvPerChannel<int64_t>`: 64-bit accumulator, `MultiplyByQuantizedMultiplier(int64_t,
/// ...)`; the pinned TFLM takes this path for a missing bias too, checked against it).
pub fn conv_2d_s16(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i16],
    filter: &[i8],
    bias: Option<&[i64]>,
    output: &mut [i16],
) {
    conv_2d_s16_impl::<i64>(
        p,
        output_multiplier,
        output_shift,
        input,
        filter,
        bias,
        output,
    );
}

/// 16x8 CONV_2D with an int32 bias (`ConvPerChannel<int32_t>`: 32-bit accumulator,
/// double-rounding `MultiplyByQuantizedMultiplier(int32_t, ...)`). TFLM only takes this path
/// for an int32 bias tensor, hence the non-optional `bias`.
pub fn conv_2d_s16_bias32(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i16],
    filter: &[i8],
    bias: &[i32],
    output: &mut [i16],
) {
    conv_2d_s16_impl::<i32>(
        p,
        output_multiplier,
        output_shift,
        input,
        filter,
        Some(bias),
        output,
    );
}

/// `a * b * c * d`, or `None` on overflow.
#[inline(always)]
const fn checked_product(a: usize, b: usize, c: usize, d: usize) -> Option<usize> {
    match a.checked_mul(b) {
        Some(ab) => match ab.checked_mul(c) {
            Some(abc) => abc.checked_mul(d),
            None => None,
        },
        None => None,
    }
}

/// Whether the in-place pointwise kernels ([`conv_2d_s8_pointwise_in_place`],
/// [`conv_2d_f32_pointwise_in_place`]) apply to `p`: a 1x1 filter, stride 1, no padding
/// (any dilation, irrelevant for a 1x1 filter), the output height/width equal to the input's,
/// one group (`filter_input_depth == input_depth`), non-zero depths, and input/output
/// lengths that fit in `usize`. Any batch count.
#[inline(always)]
pub const fn pointwise_in_place_supported(p: &Params) -> bool {
    p.filter_height == 1
        && p.filter_width == 1
        && p.stride_height == 1
        && p.stride_width == 1
        && p.padding_height == 0
        && p.padding_width == 0
        && p.output_height == p.input_height
        && p.output_width == p.input_width
        && p.filter_input_depth == p.input_depth
        && p.input_depth > 0
        && p.output_depth > 0
        && checked_product(p.batches, p.input_height, p.input_width, p.input_depth).is_some()
        && checked_product(p.batches, p.output_height, p.output_width, p.output_depth).is_some()
}

/// Length, in elements, of the `data` slice of the in-place pointwise kernels:
/// `max(in_len, out_len)` with `in_len = batches * input_height * input_width * input_depth`
/// and `out_len = batches * output_height * output_width * output_depth`. Only meaningful
/// for parameters with [`pointwise_in_place_supported`].
pub const fn pointwise_in_place_len(p: &Params) -> usize {
    let in_len = p.batches * p.input_height * p.input_width * p.input_depth;
    let out_len = p.batches * p.output_height * p.output_width * p.output_depth;
    if in_len > out_len { in_len } else { out_len }
}

/// Length, in elements of the activation type, of the `scratch` slice of the in-place
/// pointwise kernels: the outputs of one pixel, `output_depth`.
pub const fn pointwise_in_place_scratch_elements(p: &Params) -> usize {
    p.output_depth
}

/// Shared pixel loop of the in-place pointwise kernels (see the module documentation): for
/// each pixel `p` in increasing order, `pixel(input_pixel, scratch)` fills `scratch` with the
/// outputs of input pixel `p`, which are then stored at output pixel `p` at the start of
/// `data`.
#[inline(always)]
fn pointwise_in_place<T: Copy>(
    p: &Params,
    data: &mut [T],
    scratch: &mut [T],
    mut pixel: impl FnMut(&[T], &mut [T]),
) {
    debug_assert!(pointwise_in_place_supported(p));
    debug_assert_eq!(data.len(), pointwise_in_place_len(p));
    debug_assert_eq!(scratch.len(), pointwise_in_place_scratch_elements(p));
    let cin = p.input_depth;
    let cout = p.output_depth;
    let pixels = p.batches * p.input_height * p.input_width;
    if cin == 0 || cout == 0 || pixels == 0 {
        return;
    }
    let scratch = &mut scratch[..cout];
    // Input pixel `p` is at `off + p * cin`; output pixel `p` goes to `p * cout`, which never
    // reaches input pixels after `p` (module documentation).
    let off = data.len() - pixels * cin;
    for px in 0..pixels {
        pixel(&data[off + px * cin..][..cin], scratch);
        data[px * cout..][..cout].copy_from_slice(scratch);
    }
}

/// In-place pointwise [`conv_2d_s8`]: `data` is [`pointwise_in_place_len`] long and holds the
/// input in its last `batches * input_height * input_width * input_depth` elements; on return
/// its first `batches * output_height * output_width * output_depth` elements hold the output
/// (the rest is unspecified). `scratch` must be [`pointwise_in_place_scratch_elements`] long;
/// its contents are irrelevant. Only for parameters with [`pointwise_in_place_supported`]; the
/// output is identical to the out-of-place kernel's.
pub fn conv_2d_s8_pointwise_in_place(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    data: &mut [i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    scratch: &mut [i8],
) {
    debug_assert_eq!(filter.len(), p.output_depth * p.input_depth);
    debug_assert!(bias.is_none_or(|b| b.len() == p.output_depth));
    debug_assert!(
        output_multiplier.len() == p.output_depth && output_shift.len() == p.output_depth
    );
    let pixel = pointwise_pixel_s8(p, output_multiplier, output_shift, filter, bias);
    pointwise_in_place(p, data, scratch, pixel);
}

/// One output pixel of an int8 pointwise convolution from its input pixel: output channel
/// `oc` from filter row `oc` (OHWI with H = W = 1: contiguous rows, split once, no division
/// per pixel), the same operations as [`conv_2d_s8`].
#[inline(always)]
fn pointwise_pixel_s8<'a>(
    p: &'a Params,
    output_multiplier: &'a [i32],
    output_shift: &'a [i32],
    filter: &'a [i8],
    bias: Option<&'a [i32]>,
) -> impl Fn(&[i8], &mut [i8]) + 'a {
    let input_offset = p.input_offset;
    let rows = filter.chunks_exact(p.input_depth.max(1));
    move |xs, out_px| {
        for (oc, (o, ws)) in out_px.iter_mut().zip(rows.clone()).enumerate() {
            let mut acc: i32 = 0;
            for (&x, &w) in xs.iter().zip(ws) {
                acc = acc.wrapping_add((w as i32).wrapping_mul(x as i32 + input_offset));
            }
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

/// In-place pointwise [`conv_2d_f32`], with `data` and `scratch` as in
/// [`conv_2d_s8_pointwise_in_place`]. Only for parameters with
/// [`pointwise_in_place_supported`]; the output is bit-identical to the out-of-place kernel's.
pub fn conv_2d_f32_pointwise_in_place(
    p: &Params,
    data: &mut [f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    scratch: &mut [f32],
) {
    debug_assert_eq!(filter.len(), p.output_depth * p.input_depth);
    debug_assert!(bias.is_none_or(|b| b.len() == p.output_depth));
    pointwise_in_place(p, data, scratch, pointwise_pixel_f32(p, filter, bias));
}

/// One output pixel of a float pointwise convolution from its input pixel, the same
/// operations in the same order as [`conv_2d_f32`].
#[inline(always)]
fn pointwise_pixel_f32<'a>(
    p: &'a Params,
    filter: &'a [f32],
    bias: Option<&'a [f32]>,
) -> impl Fn(&[f32], &mut [f32]) + 'a {
    let rows = filter.chunks_exact(p.input_depth.max(1));
    move |xs, out_px| {
        for (oc, (o, ws)) in out_px.iter_mut().zip(rows.clone()).enumerate() {
            let mut total = 0.0f32;
            for (&x, &w) in xs.iter().zip(ws) {
                total += x * w;
            }
            let bias_value = match bias {
                Some(b) => b[oc],
                None => 0.0,
            };
            *o = clamp_f32(
                total + bias_value,
                p.float_activation_min,
                p.float_activation_max,
            );
        }
    }
}

/// Whether the in-place kernels by rows ([`conv_2d_s8_rows_in_place`],
/// [`conv_2d_s8_fast_rows_in_place`], [`conv_2d_f32_rows_in_place`]) apply to `p`: output rows
/// no longer than input rows and not empty, an output no longer than the input (per batch),
/// every output row's window starting above the
/// input's end (no row made of padding alone), and lengths that fit in `usize`. Any filter,
/// stride, dilation, padding and batch count (module documentation).
#[inline(always)]
pub const fn rows_in_place_supported(p: &Params) -> bool {
    let (Some(in_row), Some(out_row)) = (
        p.input_width.checked_mul(p.input_depth),
        p.output_width.checked_mul(p.output_depth),
    ) else {
        return false;
    };
    out_row > 0
        && out_row <= in_row
        && p.output_height > 0
        && p.output_height.saturating_mul(out_row) <= p.input_height.saturating_mul(in_row)
        && p.input_height > 0
        && (p.output_height - 1).saturating_mul(p.stride_height)
            < p.input_height.saturating_add(p.padding_height)
        && checked_product(p.batches, p.input_height, p.input_width, p.input_depth).is_some()
        && checked_product(p.batches, p.padding_height + 1, out_row, 1).is_some()
}

/// Length, in elements of the activation type, of the ring of output rows the in-place
/// kernels by rows hold: `(padding_height + 1) * output_width * output_depth`.
pub const fn rows_in_place_scratch_elements(p: &Params) -> usize {
    (p.padding_height + 1) * p.output_width * p.output_depth
}

/// Shared row loop of the in-place kernels by rows (module documentation): for each batch and
/// output row in increasing order, `row(q, input, out_row)` computes the row, a CONV_2D of
/// parameters `q` (one output row, the input rows from its first tap on) over `input` into
/// the ring; a row is stored at its place `d` rows later.
#[inline(always)]
fn rows_in_place<T: Copy>(
    p: &Params,
    data: &mut [T],
    ring: &mut [T],
    mut row: impl FnMut(&Params, &[T], &mut [T]),
) {
    debug_assert!(rows_in_place_supported(p));
    let (in_row, out_row) = (
        p.input_width * p.input_depth,
        p.output_width * p.output_depth,
    );
    let (in_batch, out_batch) = (p.input_height * in_row, p.output_height * out_row);
    debug_assert_eq!(data.len(), p.batches * in_batch);
    let slots = p.padding_height + 1;
    let ring = &mut ring[..slots * out_row];
    for b in 0..p.batches {
        let (at, out_at) = (b * in_batch, b * out_batch);
        // Output row `r`, `slot` of the ring, to its place.
        let store = |data: &mut [T], ring: &[T], r: usize| {
            let slot = &ring[(r % slots) * out_row..][..out_row];
            data[out_at + r * out_row..][..out_row].copy_from_slice(slot);
        };
        for oy in 0..p.output_height {
            let origin = (oy * p.stride_height) as isize - p.padding_height as isize;
            let first = origin.max(0) as usize;
            let q = Params {
                batches: 1,
                input_height: p.input_height - first,
                output_height: 1,
                padding_height: (first as isize - origin) as usize,
                ..*p
            };
            let input = &data[at + first * in_row..at + in_batch];
            row(&q, input, &mut ring[(oy % slots) * out_row..][..out_row]);
            if oy + 1 >= slots {
                store(data, ring, oy + 1 - slots);
            }
        }
        for r in (p.output_height + 1).saturating_sub(slots)..p.output_height {
            store(data, ring, r);
        }
    }
}

/// In-place [`conv_2d_s8`] by rows: `data` holds the input (`batches * input_height *
/// input_width * input_depth` elements); on return its first `batches * output_height *
/// output_width * output_depth` hold the output (the rest is unspecified). `scratch` holds at
/// least [`rows_in_place_scratch_elements`]; its contents are irrelevant. Only for parameters
/// with [`rows_in_place_supported`]; the output is identical to the out-of-place kernel's.
pub fn conv_2d_s8_rows_in_place(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    data: &mut [i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    scratch: &mut [i8],
) {
    rows_in_place(p, data, scratch, |q, input, out| {
        conv_2d_s8(q, output_multiplier, output_shift, input, filter, bias, out)
    });
}

/// In-place [`conv_2d_f32`] by rows, with `data` and `scratch` as in
/// [`conv_2d_s8_rows_in_place`]: bit-identical to the out-of-place kernel.
pub fn conv_2d_f32_rows_in_place(
    p: &Params,
    data: &mut [f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    scratch: &mut [f32],
) {
    rows_in_place(p, data, scratch, |q, input, out| {
        conv_2d_f32(q, input, filter, bias, out)
    });
}

/// Runs `pixel` on each input pixel and its output pixel: the pointwise fast path of the
/// out-of-place kernels (no window arithmetic per output channel).
#[inline(always)]
fn pointwise<T: Copy>(p: &Params, input: &[T], output: &mut [T], pixel: impl Fn(&[T], &mut [T])) {
    let (cin, cout) = (p.input_depth.max(1), p.output_depth.max(1));
    for (xs, out_px) in input.chunks_exact(cin).zip(output.chunks_exact_mut(cout)) {
        pixel(xs, out_px);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn opts(padding: Padding, stride: usize, dilation: usize, activation: Activation) -> Options {
        Options {
            padding,
            stride_height: stride,
            stride_width: stride,
            dilation_height_factor: dilation,
            dilation_width_factor: dilation,
            activation,
        }
    }

    fn q(scale: f32, zero_point: i32) -> QuantParams {
        QuantParams { scale, zero_point }
    }

    /// Naive reference transcribed from the TFLM loops (index arithmetic, skip outside taps).
    #[allow(clippy::too_many_arguments)]
    fn naive_s8(
        p: &Params,
        m: &[i32],
        s: &[i32],
        input: &[i8],
        filter: &[i8],
        bias: Option<&[i32]>,
    ) -> Vec<i8> {
        let mut out = vec![0i8; p.batches * p.output_height * p.output_width * p.output_depth];
        let groups = p.input_depth / p.filter_input_depth;
        let fpg = p.output_depth / groups;
        for b in 0..p.batches {
            for oy in 0..p.output_height {
                for ox in 0..p.output_width {
                    for oc in 0..p.output_depth {
                        let group = oc / fpg;
                        let mut acc = 0i32;
                        for fy in 0..p.filter_height {
                            let iy = (oy * p.stride_height) as isize - p.padding_height as isize
                                + (p.dilation_height_factor * fy) as isize;
                            for fx in 0..p.filter_width {
                                let ix = (ox * p.stride_width) as isize - p.padding_width as isize
                                    + (p.dilation_width_factor * fx) as isize;
                                if iy < 0
                                    || ix < 0
                                    || iy >= p.input_height as isize
                                    || ix >= p.input_width as isize
                                {
                                    continue;
                                }
                                for ic in 0..p.filter_input_depth {
                                    let x = input[((b * p.input_height + iy as usize)
                                        * p.input_width
                                        + ix as usize)
                                        * p.input_depth
                                        + ic
                                        + group * p.filter_input_depth]
                                        as i32;
                                    let w = filter[((oc * p.filter_height + fy) * p.filter_width
                                        + fx)
                                        * p.filter_input_depth
                                        + ic] as i32;
                                    acc += w * (x + p.input_offset);
                                }
                            }
                        }
                        if let Some(bias) = bias {
                            acc += bias[oc];
                        }
                        let acc =
                            multiply_by_quantized_multiplier(acc, m[oc], s[oc]) + p.output_offset;
                        out[((b * p.output_height + oy) * p.output_width + ox) * p.output_depth
                            + oc] =
                            acc.clamp(p.quantized_activation_min, p.quantized_activation_max) as i8;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn identity_1x1() {
        let mut m = [0; 2];
        let mut s = [0; 2];
        let p = prepare_s8(
            [1, 2, 2, 2],
            [2, 1, 1, 2],
            &opts(Padding::Valid, 1, 1, Activation::None),
            q(0.5, 3),
            &[1.0],
            q(0.5, 3),
            &mut m,
            &mut s,
        )
        .unwrap();
        assert_eq!(
            (p.output_height, p.output_width, p.input_offset),
            (2, 2, -3)
        );
        let input = [1i8, 2, 3, 4, 5, 6, 7, 8];
        let filter = [1i8, 0, 0, 1];
        let mut out = [0i8; 8];
        conv_2d_s8(&p, &m, &s, &input, &filter, None, &mut out);
        assert_eq!(out, input);
    }

    #[test]
    fn same_padding_3x3_sum() {
        // All-ones 3x3 filter on a 3x3 image of ones with SAME padding: counts of in-image taps.
        let mut m = [0; 1];
        let mut s = [0; 1];
        let p = prepare_s8(
            [1, 3, 3, 1],
            [1, 3, 3, 1],
            &opts(Padding::Same, 1, 1, Activation::None),
            q(1.0, 0),
            &[1.0],
            q(1.0, -1),
            &mut m,
            &mut s,
        )
        .unwrap();
        assert_eq!((p.padding_height, p.padding_width), (1, 1));
        let input = [1i8; 9];
        let filter = [1i8; 9];
        let mut out = [0i8; 9];
        conv_2d_s8(&p, &m, &s, &input, &filter, Some(&[10]), &mut out);
        assert_eq!(out, [13, 15, 13, 15, 18, 15, 13, 15, 13]);
    }

    fn pseudo_random(seed: &mut u32) -> i8 {
        *seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (*seed >> 24) as i8
    }

    #[test]
    fn matches_naive_reference_on_many_shapes() {
        let mut seed = 7u32;
        for &(h, w, c, o, k, stride, dil, padding, groups) in &[
            (
                5usize,
                5usize,
                3usize,
                4usize,
                3usize,
                1usize,
                1usize,
                Padding::Same,
                1usize,
            ),
            (6, 7, 2, 3, 3, 2, 1, Padding::Same, 1),
            (7, 6, 2, 2, 3, 1, 2, Padding::Same, 1),
            (8, 8, 4, 4, 2, 2, 1, Padding::Valid, 2),
            (9, 5, 1, 2, 5, 3, 1, Padding::Same, 1),
            (4, 4, 4, 8, 1, 1, 1, Padding::Valid, 4),
            (6, 6, 3, 2, 3, 1, 2, Padding::Valid, 1),
        ] {
            let fid = c / groups;
            let n = 2;
            let input: Vec<i8> = (0..n * h * w * c)
                .map(|_| pseudo_random(&mut seed))
                .collect();
            let filter: Vec<i8> = (0..o * k * k * fid)
                .map(|_| pseudo_random(&mut seed))
                .collect();
            let bias: Vec<i32> = (0..o).map(|i| i as i32 * 37 - 50).collect();
            let scales: Vec<f32> = (0..o).map(|i| 0.002 + 0.001 * i as f32).collect();
            let mut m = vec![0; o];
            let mut s = vec![0; o];
            let p = prepare_s8(
                [n, h, w, c],
                [o, k, k, fid],
                &opts(padding, stride, dil, Activation::Relu6),
                q(0.05, 5),
                &scales,
                q(0.02, -20),
                &mut m,
                &mut s,
            )
            .unwrap();
            let mut out = vec![0i8; n * p.output_height * p.output_width * o];
            conv_2d_s8(&p, &m, &s, &input, &filter, Some(&bias), &mut out);
            assert_eq!(
                out,
                naive_s8(&p, &m, &s, &input, &filter, Some(&bias)),
                "{h} {w} {c} {o} {k} {stride} {dil}"
            );
            conv_2d_s8(&p, &m, &s, &input, &filter, None, &mut out);
            assert_eq!(out, naive_s8(&p, &m, &s, &input, &filter, None));
        }
    }

    #[test]
    fn float_conv_with_dilation_and_bias() {
        let p = prepare_f32(
            [1, 3, 3, 1],
            [1, 2, 2, 1],
            &opts(Padding::Valid, 1, 2, Activation::None),
        )
        .unwrap();
        assert_eq!((p.output_height, p.output_width), (1, 1));
        let input = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
        let filter = [1.0f32, 10.0, 100.0, 1000.0];
        let mut out = [0.0f32; 1];
        conv_2d_f32(&p, &input, &filter, Some(&[0.5]), &mut out);
        // taps (0,0)=1, (0,2)=3, (2,0)=7, (2,2)=9
        assert_eq!(out, [1.0 + 30.0 + 700.0 + 9000.0 + 0.5]);
        let p = prepare_f32(
            [1, 3, 3, 1],
            [1, 2, 2, 1],
            &opts(Padding::Valid, 1, 2, Activation::ReluN1To1),
        )
        .unwrap();
        conv_2d_f32(&p, &input, &filter, None, &mut out);
        assert_eq!(out, [1.0]);
    }

    #[test]
    fn rejects_bad_shapes() {
        assert!(
            prepare_f32(
                [1, 3, 3, 3],
                [2, 3, 3, 2],
                &opts(Padding::Same, 1, 1, Activation::None)
            )
            .is_err()
        );
        assert!(
            prepare_f32(
                [1, 3, 3, 1],
                [1, 3, 3, 1],
                &opts(Padding::Same, 0, 1, Activation::None)
            )
            .is_err()
        );
        assert!(
            prepare_f32(
                [1, 2, 2, 1],
                [1, 3, 3, 1],
                &opts(Padding::Valid, 1, 1, Activation::None)
            )
            .is_err()
        );
    }
}
