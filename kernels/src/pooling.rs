//! AVERAGE_POOL_2D and MAX_POOL_2D over NHWC input.
//!
//! Follows TFLM's `reference_integer_ops::AveragePool`/`MaxPool` (int8) and
//! `reference_ops::AveragePool`/`MaxPool` (float). The window is clipped to the input (padding
//! cells are not counted); the int8 average rounds `acc / count` to nearest with ties away
//! from zero (`(acc ± count/2) / count`), the float average is `sum / count` with the sum taken
//! in window order.
//!
//! int16 (`reference_integer_ops::AveragePool`/`MaxPool` for `int16_t`): as int8, with int32
//! sums, the max starting from `-32768` and the activation range of the int16 output.
//! L2_POOL_2D (float32 only in TFLM, `reference_ops::L2Pool`): per channel
//! `sqrt(sum_squares / count)` with `sum_squares` from `0.0` adding `v * v` in window order,
//! `count` the clipped window's cells (as `f32`), `std::sqrt` (correctly rounded, computed
//! here by [`crate::libm_f32::sqrtf`], bit-identical with IEEE `sqrtf`), then clamped
//! to the activation range.
//!
//! # Where the windows are
//!
//! As the pinned wheel places them, for every window size a model can hold (up to
//! 2^31 - 1): output row `y` reads input rows `y * stride - padding + k` for the `k` in
//! `0..filter` that fall inside the input (`filter_y_start = max(0, -origin)`,
//! `filter_y_end = min(filter_height, input_height - origin)`), likewise for columns. The
//! padding is [`tflm_padding`]: TFLite's `max(0, (out - 1) * stride + filter - in) / 2` from
//! TFLM's output size, computed in 64 bits (0 for both axes where an output size is negative),
//! then narrowed to the `int16_t` of `PoolParams::padding_values`, so a window more than
//! 65,535 cells larger than the input is shifted by a multiple of 65,536 (measured on the
//! wheel: a SAME window of 2^17 - 1 rows over 4 rows starts at row 1). The kernels run over
//! the model's output shape; where TFLM's computed size is positive Kiln requires the
//! model's to be it, where it is not (a VALID window larger than the input) the model's is
//! used, as TFLM does. [`prepare_f32`] refuses what TFLM computes with overflowing `int`
//! arithmetic, and an empty window (no input cell) of AVERAGE_POOL_2D (TFLM returns there and
//! leaves the rest of the output unwritten) or L2_POOL_2D (NaN); MAX_POOL_2D's empty window
//! is the type's lowest value, clamped, as in TFLM.

use crate::arch::{lane_sums_s8, lanes_add_s8, max_s8x4, min_s8x4};
use crate::quant::{
    Activation, Padding, PrepareError, QuantParams, activation_range_f32, activation_range_i8,
    activation_range_i16,
};
use crate::util::{clamp_f32, clamp_i32, max_f32, tap_range};

/// Constant parameters of a pooling node (TFLM's `PoolParams` plus shapes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Input/output batch count.
    pub batches: usize,
    /// Input height.
    pub input_height: usize,
    /// Input width.
    pub input_width: usize,
    /// Channels (same for input and output).
    pub depth: usize,
    /// Output height.
    pub output_height: usize,
    /// Output width.
    pub output_width: usize,
    /// Window height.
    pub filter_height: usize,
    /// Window width.
    pub filter_width: usize,
    /// Vertical stride.
    pub stride_height: usize,
    /// Horizontal stride.
    pub stride_width: usize,
    /// Implicit padding rows before the input, as TFLM's kernels see it ([`tflm_padding`]:
    /// negative where TFLM's narrowing to 16 bits wraps).
    pub padding_height: i32,
    /// Implicit padding columns before the input (as `padding_height`).
    pub padding_width: i32,
    /// Lower clamp of the quantized output.
    pub quantized_activation_min: i32,
    /// Upper clamp of the quantized output.
    pub quantized_activation_max: i32,
    /// Lower clamp of the float output.
    pub float_activation_min: f32,
    /// Upper clamp of the float output.
    pub float_activation_max: f32,
}

/// Builtin options of a pooling node (`TfLitePoolParams`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Padding type.
    pub padding: Padding,
    /// Vertical stride.
    pub stride_height: usize,
    /// Horizontal stride.
    pub stride_width: usize,
    /// Window height.
    pub filter_height: usize,
    /// Window width.
    pub filter_width: usize,
    /// Fused activation.
    pub activation: Activation,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Which pooling kernel: they treat a window without input cells differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// AVERAGE_POOL_2D: TFLM's kernel returns at the first empty window, leaving that output
    /// and the rest unwritten.
    Average,
    /// MAX_POOL_2D: an empty window gives the lowest value, clamped to the activation range.
    Max,
    /// L2_POOL_2D: TFLM sizes the output itself (its computed size must be positive and the
    /// model's); an empty window gives `sqrt(0 / 0)`, NaN.
    L2,
}

/// Why a pooling node cannot be compiled as TFLM runs it (`axis` 0 is the height, 1 the
/// width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowError {
    /// The model's output extent is not TFLM's computed one (which is positive).
    OutputSize {
        axis: usize,
        computed: i64,
        declared: usize,
    },
    /// TFLM computes no output extent (a VALID window larger than the input, `computed` <= 0):
    /// L2_POOL_2D's output would have no elements (the pinned wheel refuses it).
    NoOutput { axis: usize, computed: i64 },
    /// The window of output row or column `index` holds no input cell (`padding`: TFLM's
    /// padding, after its narrowing to 16 bits). AVERAGE_POOL_2D leaves that output and the
    /// ones after it unwritten, L2_POOL_2D writes NaN.
    EmptyWindow {
        axis: usize,
        index: usize,
        padding: i32,
    },
    /// TFLM's `int` arithmetic for the window of output row or column `index` overflows
    /// (`index * stride - padding`, or the input extent less that): undefined behaviour.
    Overflow {
        axis: usize,
        index: usize,
        stride: usize,
        padding: i32,
    },
}

/// A pooling node's prepare failure: its quantization, or its windows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PoolError {
    /// As for every operator (shapes, quantization, activation range).
    Prepare(PrepareError),
    /// The windows (see [`WindowError`]).
    Window(WindowError),
}

impl From<PrepareError> for PoolError {
    fn from(e: PrepareError) -> Self {
        PoolError::Prepare(e)
    }
}

/// TFLM's `ComputeOutSizeChecked` for one axis (dilation 1): `(input + stride - 1) / stride`
/// (SAME) or `(input + stride - filter) / stride` (VALID) in 64 bits, the division
/// truncating toward zero; `None` where TFLM fails it (a negative size).
pub fn out_size(padding: Padding, input: usize, filter: usize, stride: usize) -> Option<i64> {
    let out = raw_out_size(padding, input, filter, stride);
    (out >= 0).then_some(out)
}

/// [`out_size`] before TFLM's check (negative where it fails).
fn raw_out_size(padding: Padding, input: usize, filter: usize, stride: usize) -> i64 {
    let (input, filter, stride) = (input as i64, filter as i64, stride as i64);
    let numerator = match padding {
        Padding::Same => input + stride - 1,
        Padding::Valid => input + stride - filter,
    };
    numerator / stride
}

/// The padding TFLM's pooling kernels use, `(height, width)`: `ComputePaddingHeightWidth`
/// of the pinned wheel (tensorflow/lite/micro/kernels/padding.h: sizes and paddings in 64
/// bits; where an output size is negative it gives up and leaves both paddings 0), each
/// `max(0, (out - 1) * stride + filter - input) / 2`, then narrowed to `int16_t` by
/// `PoolParams::padding_values` (tensorflow/lite/kernels/internal/types.h), modulo 2^16:
/// a window more than 65,535 cells taller than its input is placed elsewhere than the
/// formula says, as the wheel does.
pub fn tflm_padding(input_hw: [usize; 2], options: &Options) -> (i32, i32) {
    let axis = |input: usize, filter: usize, stride: usize| {
        out_size(options.padding, input, filter, stride).map(|out| {
            let total = (out - 1) * stride as i64 + filter as i64 - input as i64;
            total.max(0) / 2
        })
    };
    // Width first, as TFLM: a failure there leaves the height's padding 0 too.
    let Some(width) = axis(input_hw[1], options.filter_width, options.stride_width) else {
        return (0, 0);
    };
    let Some(height) = axis(input_hw[0], options.filter_height, options.stride_height) else {
        return (0, 0);
    };
    (height as i16 as i32, width as i16 as i32)
}

/// The height padding of TFLite's formula before TFLM's narrowing to 16 bits (what the
/// tiler's strips of rows assume), `None` where TFLM computes no output row.
pub fn standard_padding(input_height: usize, options: &Options) -> Option<usize> {
    let (stride, filter) = (options.stride_height, options.filter_height);
    let out = out_size(options.padding, input_height, filter, stride).filter(|&o| o > 0)?;
    let total = (out - 1) * stride as i64 + filter as i64 - input_height as i64;
    usize::try_from(total.max(0) / 2).ok()
}

/// Checks the windows of one axis as TFLM's kernels place them (`out * stride - padding`,
/// clipped to the input): every `int` it computes must fit, and for AVERAGE_POOL_2D and
/// L2_POOL_2D every window must hold an input cell.
fn check_axis(
    axis: usize,
    kind: Kind,
    outputs: usize,
    stride: usize,
    padding: i32,
    input: usize,
    filter: usize,
) -> Result<(), WindowError> {
    let fits = |v: i64| i32::MIN as i64 <= v && v <= i32::MAX as i64;
    for index in 0..outputs {
        let at = (index as i64).checked_mul(stride as i64);
        let origin = at.map(|a| a - padding as i64);
        let Some(origin) = origin.filter(|&o| {
            fits(at.unwrap_or(i64::MAX)) && fits(o) && fits(-o) && fits(input as i64 - o)
        }) else {
            return Err(WindowError::Overflow {
                axis,
                index,
                stride,
                padding,
            });
        };
        let (start, end) = tap_range(origin as isize, 1, input, filter);
        if start >= end && kind != Kind::Max {
            return Err(WindowError::EmptyWindow {
                axis,
                index,
                padding,
            });
        }
    }
    Ok(())
}

/// Shapes, padding and windows of a pooling node (`CalculateOpDataPooling`) from the input
/// shape `[N, H, W, C]` and the output's height and width as the model declares them, for
/// float32 (and, through [`prepare_s8`] and [`prepare_s16`], the quantized types).
///
/// TFLM's AVERAGE_POOL_2D and MAX_POOL_2D run over the model's output shape whatever the
/// size they compute: where that size is positive Kiln requires the model's to be it (a
/// different one is a broken model, refused on purpose), where it is 0 or TFLM fails it (a
/// VALID window larger than the input) the model's is used, as in TFLM. L2_POOL_2D
/// resizes its output to the computed size, which must be positive and the model's. The
/// windows are TFLM's ([`tflm_padding`]); a model whose windows TFLM computes with
/// overflowing `int` arithmetic, or (AVERAGE_POOL_2D, L2_POOL_2D) whose window holds no
/// input cell, is refused.
pub fn prepare_f32(
    input_shape: [usize; 4],
    output_hw: [usize; 2],
    options: &Options,
    kind: Kind,
) -> Result<Params, PoolError> {
    let [batches, input_height, input_width, depth] = input_shape;
    if options.stride_height == 0
        || options.stride_width == 0
        || options.filter_height == 0
        || options.filter_width == 0
        || batches == 0
        || depth == 0
        || output_hw.contains(&0)
    {
        return Err(PrepareError::InvalidShape.into());
    }
    let inputs = [input_height, input_width];
    let filters = [options.filter_height, options.filter_width];
    let strides = [options.stride_height, options.stride_width];
    for axis in 0..2 {
        let declared = output_hw[axis];
        let computed = raw_out_size(options.padding, inputs[axis], filters[axis], strides[axis]);
        if computed > 0 && computed != declared as i64 {
            return Err(PoolError::Window(WindowError::OutputSize {
                axis,
                computed,
                declared,
            }));
        }
        if computed <= 0 && kind == Kind::L2 {
            return Err(PoolError::Window(WindowError::NoOutput { axis, computed }));
        }
    }
    let (padding_height, padding_width) = tflm_padding(inputs, options);
    let paddings = [padding_height, padding_width];
    for axis in 0..2 {
        check_axis(
            axis,
            kind,
            output_hw[axis],
            strides[axis],
            paddings[axis],
            inputs[axis],
            filters[axis],
        )
        .map_err(PoolError::Window)?;
    }
    let (float_activation_min, float_activation_max) = activation_range_f32(options.activation);
    Ok(Params {
        batches,
        input_height,
        input_width,
        depth,
        output_height: output_hw[0],
        output_width: output_hw[1],
        filter_height: options.filter_height,
        filter_width: options.filter_width,
        stride_height: options.stride_height,
        stride_width: options.stride_width,
        padding_height,
        padding_width,
        quantized_activation_min: 0,
        quantized_activation_max: 0,
        float_activation_min,
        float_activation_max,
    })
}

/// Build-time parameters of an int8 pooling node (`PoolingPrepare`): the windows of
/// [`prepare_f32`]; input and output must share scale (within 1e-6) and zero point, the
/// activation range comes from the output.
pub fn prepare_s8(
    input_shape: [usize; 4],
    output_hw: [usize; 2],
    options: &Options,
    kind: Kind,
    input: QuantParams,
    output: QuantParams,
) -> Result<Params, PoolError> {
    let mut p = prepare_f32(input_shape, output_hw, options, kind)?;
    check_same_quantization(input, output)?;
    let (min, max) = activation_range_i8(options.activation, output.scale, output.zero_point)?;
    p.quantized_activation_min = min;
    p.quantized_activation_max = max;
    p.float_activation_min = 0.0;
    p.float_activation_max = 0.0;
    Ok(p)
}

fn check_same_quantization(input: QuantParams, output: QuantParams) -> Result<(), PrepareError> {
    let d = input.scale as f64 - output.scale as f64;
    let scale_diff = if d < 0.0 { -d } else { d };
    if !(scale_diff <= 1.0e-6) || input.zero_point != output.zero_point {
        return Err(PrepareError::UnsupportedQuantization);
    }
    Ok(())
}

/// Clipped window `(start, end)` in input coordinates for output position `out` (empty,
/// `(0, 0)`, where no input cell falls in it). `out * stride - pad` fits an `i32`, as
/// [`prepare_f32`] checks.
#[inline]
fn window(out: usize, stride: usize, pad: i32, input_size: usize, filter: usize) -> (usize, usize) {
    let origin = (out * stride) as isize - pad as isize;
    let (f0, f1) = tap_range(origin, 1, input_size, filter);
    if f0 >= f1 {
        return (0, 0);
    }
    (
        (origin + f0 as isize) as usize,
        (origin + f1 as isize) as usize,
    )
}

/// Runs `pixel(batch_input, (y0, y1), (x0, x1), output_pixel)` over all output pixels, where the
/// ranges are the clipped input window; stops early if `pixel` returns `false`.
#[inline(always)]
fn for_each_output_pixel<T, U>(
    p: &Params,
    input: &[T],
    output: &mut [U],
    mut pixel: impl FnMut(&[T], (usize, usize), (usize, usize), &mut [U]) -> bool,
) -> bool {
    let in_batch = p.input_height * p.input_width * p.depth;
    if p.depth == 0 || in_batch == 0 {
        return true;
    }
    let mut out_pixels = output.chunks_exact_mut(p.depth);
    for in_b in input.chunks_exact(in_batch).take(p.batches) {
        for oy in 0..p.output_height {
            let ys = window(
                oy,
                p.stride_height,
                p.padding_height,
                p.input_height,
                p.filter_height,
            );
            for ox in 0..p.output_width {
                let xs = window(
                    ox,
                    p.stride_width,
                    p.padding_width,
                    p.input_width,
                    p.filter_width,
                );
                let Some(out_px) = out_pixels.next() else {
                    return true;
                };
                if !pixel(in_b, ys, xs, out_px) {
                    return false;
                }
            }
        }
    }
    true
}

/// Int8 AVERAGE_POOL_2D (`reference_integer_ops::AveragePool`). Returns `false` (like TFLM)
/// if some window holds no input cell, which [`prepare_s8`] rules out.
pub fn average_pool_s8(p: &Params, input: &[i8], output: &mut [i8]) -> bool {
    debug_assert_eq!(
        input.len(),
        p.batches * p.input_height * p.input_width * p.depth
    );
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.depth
    );
    let row = p.input_width * p.depth;
    let mut acc = [0i32; 64];
    for_each_output_pixel(p, input, output, |in_b, (y0, y1), (x0, x1), out_px| {
        let count = ((y1 - y0) * (x1 - x0)) as i32;
        if count == 0 {
            return false;
        }
        for c0 in (0..p.depth).step_by(acc.len()) {
            let n = (p.depth - c0).min(acc.len());
            let acc = &mut acc[..n];
            acc.fill(0);
            for y in y0..y1 {
                let in_y = &in_b[y * row..][..row];
                for x in x0..x1 {
                    for (a, &v) in acc.iter_mut().zip(&in_y[x * p.depth + c0..][..n]) {
                        *a = a.wrapping_add(v as i32);
                    }
                }
            }
            for (out, &a) in out_px[c0..c0 + n].iter_mut().zip(acc.iter()) {
                let avg = if a > 0 {
                    (a + count / 2) / count
                } else {
                    (a - count / 2) / count
                };
                *out = clamp_i32(avg, p.quantized_activation_min, p.quantized_activation_max) as i8;
            }
        }
        true
    })
}

/// Taps a set of `arch::lanes_add_s8`'s 16-bit lanes sums before they are added into 32
/// bits (its limit). Also MEAN's (`crate::mean`).
pub(crate) const LANE_TAPS: usize = 256;

/// Int8 AVERAGE_POOL_2D, the same bytes as [`average_pool_s8`] (`reference_integer_ops::
/// AveragePool`) with fewer instructions: the window of four channels at a time is summed
/// with one 32-bit load per tap into 16-bit lanes (`arch::lanes_add_s8`: `SXTAB16` on the
/// DSP extension, bytes offset by 128 and split into two words in plain Rust), eight
/// channels in two words where the depth allows, kept in registers; a set of lanes holds at
/// most `LANE_TAPS` (256) taps before it is added into the channels' 32-bit sums (wrapping, as
/// TFLM's sums are taken modulo 2^32 either way). The last `depth % 4` channels are summed
/// one at a time (with Helium, 16 channels per tap first, `arch::lanes_add16_s8`). Then
/// TFLM's `(acc ± count / 2) / count` and the clamp. Returns `false`
/// (like TFLM) if some window holds no input cell, which [`prepare_s8`] rules out.
pub fn average_pool_s8_fast(p: &Params, input: &[i8], output: &mut [i8]) -> bool {
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.depth
    );
    let row = p.input_width * p.depth;
    let depth = p.depth;
    let (lo, hi) = (p.quantized_activation_min, p.quantized_activation_max);
    for_each_output_pixel(p, input, output, |in_b, ys, xs, out_px| {
        let count = ((ys.1 - ys.0) * (xs.1 - xs.0)) as i32;
        if count == 0 {
            return false;
        }
        let average = |a: i32| {
            let avg = if a > 0 {
                a.wrapping_add(count / 2) / count
            } else {
                a.wrapping_sub(count / 2) / count
            };
            clamp_i32(avg, lo, hi) as i8
        };
        // Written out rather than looped, so that the sums stay in registers at every
        // opt-level.
        let mut c0 = 0;
        // Helium: 16 channels per tap in 16-bit lanes, windows of at most `LANE_TAPS` taps.
        #[cfg(kiln_arch = "mve")]
        if count as usize <= LANE_TAPS {
            while c0 + 16 <= depth {
                let mut acc = [0i16; 16];
                for y in ys.0..ys.1 {
                    let at = y * row + xs.0 * depth + c0;
                    crate::arch::lanes_add16_s8(&mut acc, in_b, at, xs.1 - xs.0, depth);
                }
                let Some(o) = out_px.get_mut(c0..c0 + 16) else {
                    return true;
                };
                for (o, &a) in o.iter_mut().zip(&acc) {
                    *o = average(a as i32);
                }
                c0 += 16;
            }
        }
        while c0 + 8 <= depth {
            let [s0, s1, s2, s3, s4, s5, s6, s7] = sum_words_s8::<2>(in_b, row, depth, ys, xs, c0);
            let Some(o) = out_px.get_mut(c0..c0 + 8) else {
                return true;
            };
            (o[0], o[1], o[2], o[3]) = (average(s0), average(s1), average(s2), average(s3));
            (o[4], o[5], o[6], o[7]) = (average(s4), average(s5), average(s6), average(s7));
            c0 += 8;
        }
        if c0 + 4 <= depth {
            let [s0, s1, s2, s3, ..] = sum_words_s8::<1>(in_b, row, depth, ys, xs, c0);
            let Some(o) = out_px.get_mut(c0..c0 + 4) else {
                return true;
            };
            (o[0], o[1], o[2], o[3]) = (average(s0), average(s1), average(s2), average(s3));
            c0 += 4;
        }
        while c0 < depth {
            let mut a = 0i32;
            for y in ys.0..ys.1 {
                for x in xs.0..xs.1 {
                    let v = in_b.get(y * row + x * depth + c0).copied().unwrap_or(0);
                    a = a.wrapping_add(v as i32);
                }
            }
            out_px[c0] = average(a);
            c0 += 1;
        }
        true
    })
}

/// The window sums of channels `c0..c0 + 4 * W` (`W` words of four int8 channels per tap,
/// `W` 1 or 2) in channel order (the first `4 * W` entries), through the lanes of
/// `arch::lanes_add_s8` (one run per window row). Sums wrap modulo 2^32. A window of more
/// than `LANE_TAPS` (256) taps is summed in parts of at most that many (rows, or parts of a
/// row).
#[inline(always)]
fn sum_words_s8<const W: usize>(
    in_b: &[i8],
    row: usize,
    depth: usize,
    (y0, y1): (usize, usize),
    (x0, x1): (usize, usize),
    c0: usize,
) -> [i32; 8] {
    let width = x1 - x0;
    let lanes = |(y0, y1): (usize, usize), (x0, x1): (usize, usize)| {
        let mut acc = [0u32; 4];
        for y in y0..y1 {
            acc = lanes_add_s8::<W>(acc, in_b, y * row + x0 * depth + c0, x1 - x0, depth);
        }
        lane_sums_s8(acc, (y1 - y0) * (x1 - x0))
    };
    if width * (y1 - y0) <= LANE_TAPS {
        return lanes((y0, y1), (x0, x1));
    }
    let mut total = [0i32; 8];
    let cols = width.min(LANE_TAPS);
    let rows = LANE_TAPS / cols;
    let mut x = x0;
    while x < x1 {
        let x_end = (x + cols).min(x1);
        let mut y = y0;
        while y < y1 {
            let y_end = (y + rows).min(y1);
            for (t, v) in total.iter_mut().zip(lanes((y, y_end), (x, x_end))) {
                *t = t.wrapping_add(v);
            }
            y = y_end;
        }
        x = x_end;
    }
    total
}

/// Int8 MAX_POOL_2D (`reference_integer_ops::MaxPool`): the window maximum (starting from
/// `-128`), clamped to the activation range.
pub fn max_pool_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    debug_assert_eq!(
        input.len(),
        p.batches * p.input_height * p.input_width * p.depth
    );
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.depth
    );
    let row = p.input_width * p.depth;
    let lo = p
        .quantized_activation_min
        .clamp(i8::MIN as i32, i8::MAX as i32) as i8;
    let hi = p
        .quantized_activation_max
        .clamp(i8::MIN as i32, i8::MAX as i32) as i8;
    for_each_output_pixel(p, input, output, |in_b, (y0, y1), (x0, x1), out_px| {
        out_px.fill(i8::MIN);
        for y in y0..y1 {
            let in_y = &in_b[y * row..][..row];
            for x in x0..x1 {
                for (m, &v) in out_px.iter_mut().zip(&in_y[x * p.depth..][..p.depth]) {
                    *m = (*m).max(v);
                }
            }
        }
        for m in out_px.iter_mut() {
            *m = (*m).max(lo).min(hi);
        }
        true
    });
}

/// Int8 MAX_POOL_2D, the same bytes as [`max_pool_s8`] with fewer instructions: four
/// channels per 32-bit load, their maxima taken lane by lane (`arch::max_s8x4`: `SSUB8` +
/// `SEL` on the DSP extension) and kept in registers over the window (eight channels in
/// two words where the depth allows), then clamped the same way; the last `depth % 4`
/// channels one at a time.
pub fn max_pool_s8_fast(p: &Params, input: &[i8], output: &mut [i8]) {
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.depth
    );
    let row = p.input_width * p.depth;
    let depth = p.depth;
    let (lo, hi) = (p.quantized_activation_min, p.quantized_activation_max);
    let lane = |v: i32| (v.clamp(i8::MIN as i32, i8::MAX as i32) as u8 as u32) * 0x0101_0101;
    let (lo4, hi4) = (lane(lo), lane(hi));
    let clamp = |m: u32| {
        let m = if lo > i8::MIN as i32 {
            max_s8x4(m, lo4)
        } else {
            m
        };
        if hi < i8::MAX as i32 {
            min_s8x4(m, hi4)
        } else {
            m
        }
    };
    let store = |o: &mut [i8], m: u32| {
        let b = m.to_le_bytes();
        (o[0], o[1], o[2], o[3]) = (b[0] as i8, b[1] as i8, b[2] as i8, b[3] as i8);
    };
    for_each_output_pixel(p, input, output, |in_b, (y0, y1), (x0, x1), out_px| {
        let mut c0 = 0;
        while c0 + 8 <= depth {
            let (m0, m1) = max_words_s8::<2>(in_b, row, depth, (y0, y1), (x0, x1), c0);
            let Some(o) = out_px.get_mut(c0..c0 + 8) else {
                return true;
            };
            store(&mut o[..4], clamp(m0));
            store(&mut o[4..], clamp(m1));
            c0 += 8;
        }
        if c0 + 4 <= depth {
            let (m0, _) = max_words_s8::<1>(in_b, row, depth, (y0, y1), (x0, x1), c0);
            let Some(o) = out_px.get_mut(c0..c0 + 4) else {
                return true;
            };
            store(o, clamp(m0));
            c0 += 4;
        }
        while c0 < depth {
            let mut m = i8::MIN;
            for y in y0..y1 {
                for x in x0..x1 {
                    m = m.max(in_b.get(y * row + x * depth + c0).copied().unwrap_or(m));
                }
            }
            out_px[c0] = clamp_i32(m as i32, lo, hi) as i8;
            c0 += 1;
        }
        true
    });
}

/// The window maxima of channels `c0..c0 + 4 * W` (`W` 1 or 2), four per word (lane `i`:
/// channel `c0 + 4k + i` of word `k`), from `-128` in every lane. A tap outside `in_b`
/// (never the case in Kiln's calls) ends the window early.
#[inline(always)]
fn max_words_s8<const W: usize>(
    in_b: &[i8],
    row: usize,
    depth: usize,
    (y0, y1): (usize, usize),
    (x0, x1): (usize, usize),
    c0: usize,
) -> (u32, u32) {
    let word = |b: &[i8], at: usize| {
        u32::from_le_bytes([
            b[at] as u8,
            b[at + 1] as u8,
            b[at + 2] as u8,
            b[at + 3] as u8,
        ])
    };
    let (mut m0, mut m1) = (0x8080_8080u32, 0x8080_8080u32);
    for y in y0..y1 {
        let mut at = y * row + x0 * depth + c0;
        for _ in x0..x1 {
            let Some(b) = in_b.get(at..at + 4 * W) else {
                return (m0, m1);
            };
            m0 = max_s8x4(m0, word(b, 0));
            if W == 2 {
                m1 = max_s8x4(m1, word(b, 4));
            }
            at += depth;
        }
    }
    (m0, m1)
}

/// Float AVERAGE_POOL_2D (`reference_ops::AveragePool`): `sum / count` with the sum started at
/// `0.0` and taken over the clipped window row by row, then clamped. Returns `false` (like
/// TFLM) if some window holds no input cell, which [`prepare_f32`] rules out.
pub fn average_pool_f32(p: &Params, input: &[f32], output: &mut [f32]) -> bool {
    debug_assert_eq!(
        input.len(),
        p.batches * p.input_height * p.input_width * p.depth
    );
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.depth
    );
    let row = p.input_width * p.depth;
    for_each_output_pixel(p, input, output, |in_b, (y0, y1), (x0, x1), out_px| {
        let count = ((y1 - y0) * (x1 - x0)) as f32;
        if count == 0.0 {
            return false;
        }
        // The output pixel accumulates each channel's sum in window order.
        out_px.fill(0.0);
        for y in y0..y1 {
            let in_y = &in_b[y * row..][..row];
            for x in x0..x1 {
                for (t, &v) in out_px.iter_mut().zip(&in_y[x * p.depth..][..p.depth]) {
                    *t += v;
                }
            }
        }
        for t in out_px.iter_mut() {
            *t = clamp_f32(*t / count, p.float_activation_min, p.float_activation_max);
        }
        true
    })
}

/// Float MAX_POOL_2D (`reference_ops::MaxPool`): the window maximum (starting from
/// `f32::MIN`, C++ `std::max` semantics), clamped.
pub fn max_pool_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    debug_assert_eq!(
        input.len(),
        p.batches * p.input_height * p.input_width * p.depth
    );
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.depth
    );
    let row = p.input_width * p.depth;
    for_each_output_pixel(p, input, output, |in_b, (y0, y1), (x0, x1), out_px| {
        out_px.fill(f32::MIN);
        for y in y0..y1 {
            let in_y = &in_b[y * row..][..row];
            for x in x0..x1 {
                for (m, &v) in out_px.iter_mut().zip(&in_y[x * p.depth..][..p.depth]) {
                    *m = max_f32(*m, v);
                }
            }
        }
        for m in out_px.iter_mut() {
            *m = clamp_f32(*m, p.float_activation_min, p.float_activation_max);
        }
        true
    });
}

/// Build-time parameters of an int16 pooling node: as [`prepare_s8`] (input and output
/// quantization equal), with the int16 output's activation range.
pub fn prepare_s16(
    input_shape: [usize; 4],
    output_hw: [usize; 2],
    options: &Options,
    kind: Kind,
    input: QuantParams,
    output: QuantParams,
) -> Result<Params, PoolError> {
    let mut p = prepare_f32(input_shape, output_hw, options, kind)?;
    check_same_quantization(input, output)?;
    let (min, max) = activation_range_i16(options.activation, output.scale, output.zero_point)?;
    p.quantized_activation_min = min;
    p.quantized_activation_max = max;
    p.float_activation_min = 0.0;
    p.float_activation_max = 0.0;
    Ok(p)
}

/// Int16 AVERAGE_POOL_2D (`reference_integer_ops::AveragePool` for `int16_t`). Returns
/// `false` if some window holds no input cell, which [`prepare_s16`] rules out.
///
/// The window is summed in blocks of channels (`window_blocks`; integer sums, so the order
/// does not matter), and `(acc ± count / 2) / count` divides by the pixel's one `count`
/// through its `Reciprocal` (the same quotients as the per-element division of TFLM).
pub fn average_pool_s16(p: &Params, input: &[i16], output: &mut [i16]) -> bool {
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.depth
    );
    let row = p.input_width * p.depth;
    let (lo, hi) = (p.quantized_activation_min, p.quantized_activation_max);
    // The reciprocals of the last window sizes, by size modulo 4: a pool has few sizes (the
    // full window, and clipped ones at the borders), each then costs one division per call.
    let mut recent: [(usize, Option<Reciprocal>); 4] = [(0, None); 4];
    for_each_output_pixel(p, input, output, |in_b, ys, xs, out_px| {
        let count = (ys.1 - ys.0) * (xs.1 - xs.0);
        if count == 0 {
            return false;
        }
        // `|sum| + count / 2 <= count * 2^15 + count / 2 < 2^(16 + l)` for `count <= 2^l`:
        // the reciprocal's domain with 16 bits (windows up to 2^15 cells; larger ones divide
        // element by element).
        let slot = &mut recent[count % 4];
        if slot.0 != count {
            let r = u32::try_from(count)
                .ok()
                .and_then(|d| Reciprocal::new(d, 16));
            *slot = (count, r);
        }
        let recip = slot.1;
        let count = count as i32;
        let step = |a: i32, v: i16| a.wrapping_add(v as i32);
        match recip {
            Some(r) => {
                let half = (count / 2) as u32;
                let average = |a: i32| {
                    let q = r.divide(a.unsigned_abs() + half) as i32;
                    if a > 0 { q } else { -q }
                };
                window_blocks(in_b, row, p.depth, ys, xs, out_px, 0i32, step, |a| {
                    clamp_i32(average(a), lo, hi) as i16
                });
            }
            None => {
                let average = |a: i32| {
                    if a > 0 {
                        a.wrapping_add(count / 2) / count
                    } else {
                        a.wrapping_sub(count / 2) / count
                    }
                };
                window_blocks(in_b, row, p.depth, ys, xs, out_px, 0i32, step, |a| {
                    clamp_i32(average(a), lo, hi) as i16
                });
            }
        }
        true
    })
}

/// Int16 MAX_POOL_2D: the window maximum (from `-32768`), clamped to the activation range.
pub fn max_pool_s16(p: &Params, input: &[i16], output: &mut [i16]) {
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.depth
    );
    let row = p.input_width * p.depth;
    let (lo, hi) = (p.quantized_activation_min, p.quantized_activation_max);
    for_each_output_pixel(p, input, output, |in_b, ys, xs, out_px| {
        window_blocks(
            in_b,
            row,
            p.depth,
            ys,
            xs,
            out_px,
            i16::MIN,
            |m, v| m.max(v),
            |m| clamp_i32(m as i32, lo, hi) as i16,
        );
        true
    });
}

/// Division of the numerators `n < 2^(bits + l)` by a fixed `d`, `l = ceil(log2 d)`, as a
/// multiplication (Granlund-Montgomery): with `N = bits + l <= 31` and
/// `m = ceil(2^(N + l) / d)`, `floor(n * m / 2^(N + l)) = floor(n / d)` for every `n < 2^N`.
/// (`m * d = 2^(N + l) + e` with `0 <= e < d`, so `n * m / 2^(N + l)` exceeds `n / d` by
/// `n * e / (d * 2^(N + l)) < 1 / d`, which never reaches the next integer; `m <= 2^(N + 1)`,
/// so `n * m < 2^63`.) `m` itself takes one division, in 32 bits while `N + l <= 31`.
#[derive(Clone, Copy)]
struct Reciprocal {
    m: u64,
    shift: u32,
}

impl Reciprocal {
    /// `None` when `bits + l > 31`.
    #[inline]
    fn new(d: u32, bits: u32) -> Option<Self> {
        if d == 0 {
            return None;
        }
        let l = 32 - (d - 1).leading_zeros();
        let n_bits = bits + l;
        if n_bits > 31 {
            return None;
        }
        let shift = n_bits + l;
        let m = if shift <= 31 {
            (1u32 << shift).div_ceil(d) as u64
        } else {
            (1u64 << shift).div_ceil(d as u64)
        };
        Some(Reciprocal { m, shift })
    }

    /// `n / d` for `n < 2^(bits + l)`.
    #[inline(always)]
    fn divide(&self, n: u32) -> u32 {
        ((n as u64 * self.m) >> self.shift) as u32
    }
}

/// Reduces the clipped window `(y0, y1) x (x0, x1)` of each channel with `step` from `init`
/// (in window order, rows then columns, per channel), writing `finish(result)` to `out_px`.
/// Channels go in blocks of 8 and 4 (kept in registers and vectorised where the target has
/// vectors), the last few one at a time: each channel's window is visited once.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn window_blocks<T: Copy, A: Copy, U>(
    in_b: &[T],
    row: usize,
    depth: usize,
    (y0, y1): (usize, usize),
    (x0, x1): (usize, usize),
    out_px: &mut [U],
    init: A,
    step: impl Fn(A, T) -> A,
    finish: impl Fn(A) -> U,
) {
    /// One block of `L` channels from channel `c0`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn block<T: Copy, A: Copy, U, const L: usize>(
        in_b: &[T],
        row: usize,
        depth: usize,
        (y0, y1): (usize, usize),
        (x0, x1): (usize, usize),
        c0: usize,
        out: &mut [U],
        init: A,
        step: &impl Fn(A, T) -> A,
        finish: &impl Fn(A) -> U,
    ) {
        let mut acc = [init; L];
        for y in y0..y1 {
            let Some(in_y) = in_b.get(y * row..(y + 1) * row) else {
                return;
            };
            for x in x0..x1 {
                let Some(v) = in_y.get(x * depth + c0..x * depth + c0 + L) else {
                    return;
                };
                for (a, &v) in acc.iter_mut().zip(v) {
                    *a = step(*a, v);
                }
            }
        }
        for (o, &a) in out.iter_mut().zip(&acc) {
            *o = finish(a);
        }
    }
    let mut c0 = 0;
    while c0 + 8 <= depth {
        block::<T, A, U, 8>(
            in_b,
            row,
            depth,
            (y0, y1),
            (x0, x1),
            c0,
            &mut out_px[c0..],
            init,
            &step,
            &finish,
        );
        c0 += 8;
    }
    if c0 + 4 <= depth {
        block::<T, A, U, 4>(
            in_b,
            row,
            depth,
            (y0, y1),
            (x0, x1),
            c0,
            &mut out_px[c0..],
            init,
            &step,
            &finish,
        );
        c0 += 4;
    }
    while c0 < depth {
        block::<T, A, U, 1>(
            in_b,
            row,
            depth,
            (y0, y1),
            (x0, x1),
            c0,
            &mut out_px[c0..],
            init,
            &step,
            &finish,
        );
        c0 += 1;
    }
}

/// Float L2_POOL_2D (`reference_ops::L2Pool`, see the module docs). Returns `false` if some
/// window holds no input cell, which [`prepare_f32`] rules out.
pub fn l2_pool_f32(p: &Params, input: &[f32], output: &mut [f32]) -> bool {
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.depth
    );
    let row = p.input_width * p.depth;
    let (lo, hi) = (p.float_activation_min, p.float_activation_max);
    for_each_output_pixel(p, input, output, |in_b, ys, xs, out_px| {
        let count = ((ys.1 - ys.0) * (xs.1 - xs.0)) as f32;
        if count == 0.0 {
            return false;
        }
        // Each channel's sum of squares from 0.0 in window order (blocks of channels only
        // keep several channels' sums side by side).
        window_blocks(
            in_b,
            row,
            p.depth,
            ys,
            xs,
            out_px,
            0.0f32,
            |t, v| t + v * v,
            |t| clamp_f32(crate::libm_f32::sqrtf(t / count), lo, hi),
        );
        true
    })
}

#[cfg(test)]
mod tests_int16_l2 {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn reciprocal_divides_exactly() {
        let mut ds: Vec<u32> = (1..=3000).collect();
        ds.extend([
            32_767,
            32_768,
            32_769,
            65_535,
            1 << 20,
            (1 << 31) - 1,
            1 << 31,
        ]);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut tried = 0;
        for &d in &ds {
            for bits in [0, 1, 8, 16, 20, 31] {
                let Some(r) = Reciprocal::new(d, bits) else {
                    continue;
                };
                tried += 1;
                let l = 32 - (d - 1).leading_zeros();
                let top = (1u32 << (bits + l)) - 1;
                let mut ns: Vec<u32> = (0..200)
                    .chain([top, top.saturating_sub(1), top / 2])
                    .collect();
                for k in 1..40u32 {
                    let kd = k.wrapping_mul(d);
                    ns.extend([kd.wrapping_sub(1), kd, kd.wrapping_add(1)]);
                }
                for _ in 0..100 {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    ns.push(seed as u32);
                }
                for n in ns.into_iter().map(|n| n.min(top)) {
                    assert_eq!(r.divide(n), n / d, "{n} / {d}, {bits} bits");
                }
            }
        }
        assert!(tried > 10_000, "{tried}");
        assert!(Reciprocal::new(1 << 16, 16).is_none());
        assert!(Reciprocal::new(1 << 15, 16).is_some());
    }

    /// A window of more than 2^15 cells divides element by element.
    #[test]
    fn int16_average_of_a_huge_window() {
        let o = Options {
            padding: Padding::Valid,
            stride_height: 1,
            stride_width: 1,
            filter_height: 1,
            filter_width: 40_000,
            activation: Activation::None,
        };
        let q = QuantParams {
            scale: 0.5,
            zero_point: 0,
        };
        let p = prepare_s16([1, 1, 40_000, 2], [1, 1], &o, Kind::Average, q, q).unwrap();
        let x: Vec<i16> = (0..80_000)
            .map(|i| {
                if i % 2 == 0 {
                    32_767
                } else {
                    -7 - (i % 5) as i16
                }
            })
            .collect();
        let mut y = [0i16; 2];
        assert!(average_pool_s16(&p, &x, &mut y));
        let odd: i32 = (0..40_000).map(|k| -7 - ((2 * k + 1) % 5)).sum();
        assert_eq!(y, [32_767, ((odd - 20_000) / 40_000) as i16]);
    }

    /// The fast int8 pools against the reference ones: every block width (depths 1..=21),
    /// clipped windows, activation clamps, and windows of more than 256 taps (the 16-bit
    /// lanes then flush between rows, and within a row wider than 256).
    #[test]
    fn fast_int8_pools_match_reference() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let q = QuantParams {
            scale: 0.25,
            zero_point: -3,
        };
        // (input h, w, filter h, w, stride h, w, padding, activation)
        let shapes = [
            (5, 3, 3, 2, 2, 1, Padding::Same, Activation::None),
            (4, 4, 2, 2, 2, 2, Padding::Valid, Activation::Relu),
            (8, 8, 8, 8, 1, 1, Padding::Valid, Activation::None),
            (7, 6, 3, 3, 2, 2, Padding::Same, Activation::Relu6),
            (20, 20, 20, 20, 1, 1, Padding::Valid, Activation::None),
            (2, 300, 2, 300, 1, 1, Padding::Valid, Activation::None),
            (3, 600, 2, 513, 1, 40, Padding::Same, Activation::ReluN1To1),
        ];
        for (ih, iw, fh, fw, sh, sw, padding, activation) in shapes {
            let o = Options {
                padding,
                stride_height: sh,
                stride_width: sw,
                filter_height: fh,
                filter_width: fw,
                activation,
            };
            for depth in (1..=21).filter(|&d| iw < 100 || d % 5 == 1) {
                let oh = out_size(padding, ih, fh, sh).unwrap() as usize;
                let ow = out_size(padding, iw, fw, sw).unwrap() as usize;
                let shape = [2, ih, iw, depth];
                let n = 2 * ih * iw * depth;
                // Mostly extremes, so the sums take both signs; with a large window, mostly
                // 127 (255 in a lane), so a lane holding more than 256 taps would overflow.
                let lows = if fh * fw > 256 { 1 } else { 2 };
                let x: Vec<i8> = (0..n)
                    .map(|_| match next() % 8 {
                        r if r < lows => i8::MIN,
                        2 => next() as i8,
                        _ => i8::MAX,
                    })
                    .collect();
                let m = 2 * oh * ow * depth;
                for kind in [Kind::Average, Kind::Max] {
                    let p = prepare_s8(shape, [oh, ow], &o, kind, q, q).unwrap();
                    let (mut want, mut got) = (std::vec![0i8; m], std::vec![1i8; m]);
                    if kind == Kind::Average {
                        assert!(average_pool_s8(&p, &x, &mut want));
                        assert!(average_pool_s8_fast(&p, &x, &mut got));
                    } else {
                        max_pool_s8(&p, &x, &mut want);
                        max_pool_s8_fast(&p, &x, &mut got);
                    }
                    assert_eq!(got, want, "{kind:?} {shape:?} {o:?}");
                }
            }
        }
    }

    /// The blocked kernels against TFLM's per-channel loops, for depths that use every block
    /// width, clipped windows and sums of both signs.
    #[test]
    fn blocked_int16_and_l2_pools_match_per_channel_loops() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for depth in 1..=21 {
            let o = Options {
                padding: Padding::Same,
                stride_height: 2,
                stride_width: 1,
                filter_height: 3,
                filter_width: 2,
                activation: Activation::None,
            };
            let q = QuantParams {
                scale: 0.5,
                zero_point: 0,
            };
            let shape = [2, 5, 3, depth];
            let p = prepare_s16(shape, [3, 3], &o, Kind::Average, q, q).unwrap();
            let n = 2 * 5 * 3 * depth;
            let x: Vec<i16> = (0..n).map(|_| next() as i16).collect();
            let xf: Vec<f32> = x.iter().map(|&v| v as f32 / 64.0).collect();
            let m = p.batches * p.output_height * p.output_width * depth;
            let (mut avg, mut max, mut l2) =
                (std::vec![0i16; m], std::vec![0i16; m], std::vec![0f32; m]);
            assert!(average_pool_s16(&p, &x, &mut avg));
            max_pool_s16(&p, &x, &mut max);
            let pf = prepare_f32(shape, [3, 3], &o, Kind::L2).unwrap();
            assert!(l2_pool_f32(&pf, &xf, &mut l2));
            let mut k = 0;
            for b in 0..2 {
                for oy in 0..p.output_height {
                    let (y0, y1) = window(oy, 2, p.padding_height, 5, 3);
                    for ox in 0..p.output_width {
                        let (x0, x1) = window(ox, 1, p.padding_width, 3, 2);
                        for c in 0..depth {
                            let (mut a, mut mx, mut sq, mut count) = (0i32, i16::MIN, 0f32, 0i32);
                            for y in y0..y1 {
                                for xx in x0..x1 {
                                    let i = ((b * 5 + y) * 3 + xx) * depth + c;
                                    a += x[i] as i32;
                                    mx = mx.max(x[i]);
                                    sq += xf[i] * xf[i];
                                    count += 1;
                                }
                            }
                            let want = if a > 0 {
                                (a + count / 2) / count
                            } else {
                                (a - count / 2) / count
                            };
                            assert_eq!(avg[k] as i32, want, "depth {depth} at {k}");
                            assert_eq!(max[k], mx, "depth {depth} at {k}");
                            let l = crate::libm_f32::sqrtf(sq / count as f32);
                            assert_eq!(l2[k].to_bits(), l.to_bits(), "depth {depth} at {k}");
                            k += 1;
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn int16_and_l2_pools() {
        let o = Options {
            padding: Padding::Valid,
            stride_height: 1,
            stride_width: 1,
            filter_height: 1,
            filter_width: 2,
            activation: Activation::None,
        };
        let q = QuantParams {
            scale: 0.5,
            zero_point: 0,
        };
        let p = prepare_s16([1, 1, 2, 1], [1, 1], &o, Kind::Average, q, q).unwrap();
        let mut y = [0i16];
        assert!(average_pool_s16(&p, &[-3, -2], &mut y));
        assert_eq!(y, [-3]);
        max_pool_s16(&p, &[-32768, -32768], &mut y);
        assert_eq!(y, [-32768]);
        let p = prepare_f32([1, 1, 2, 1], [1, 1], &o, Kind::L2).unwrap();
        let mut y = [0.0f32];
        assert!(l2_pool_f32(&p, &[3.0, 4.0], &mut y));
        assert_eq!(y, [(12.5f32).sqrt()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(padding: Padding, stride: usize, filter: usize, activation: Activation) -> Options {
        Options {
            padding,
            stride_height: stride,
            stride_width: stride,
            filter_height: filter,
            filter_width: filter,
            activation,
        }
    }

    /// TFLM's output size of `shape` (positive here).
    fn out(shape: [usize; 4], o: &Options) -> [usize; 2] {
        let h = out_size(o.padding, shape[1], o.filter_height, o.stride_height).unwrap();
        let w = out_size(o.padding, shape[2], o.filter_width, o.stride_width).unwrap();
        [h as usize, w as usize]
    }

    fn s8(
        shape: [usize; 4],
        o: &Options,
        kind: Kind,
        a: QuantParams,
        b: QuantParams,
    ) -> Result<Params, PoolError> {
        prepare_s8(shape, out(shape, o), o, kind, a, b)
    }

    const Q: QuantParams = QuantParams {
        scale: 0.5,
        zero_point: 0,
    };

    #[test]
    fn rejects_empty_output() {
        // A 2x2 window on a 1x2 input with VALID padding: TFLM computes no output row.
        let o = opts(Padding::Valid, 1, 2, Activation::None);
        assert_eq!(
            prepare_f32([1, 1, 2, 1], [1, 1], &o, Kind::L2),
            Err(PoolError::Window(WindowError::NoOutput {
                axis: 0,
                computed: 0
            }))
        );
        assert_eq!(
            prepare_s8([1, 1, 2, 1], [0, 1], &o, Kind::Max, Q, Q),
            Err(PoolError::Prepare(PrepareError::InvalidShape))
        );
    }

    /// Windows larger than the input, placed as the pinned wheel places them (the values in
    /// the comments were measured on it; tests/fidelity.rs checks whole models).
    #[test]
    fn windows_larger_than_the_input() {
        let tall = |padding, filter, stride| Options {
            padding,
            stride_height: stride,
            stride_width: 1,
            filter_height: filter,
            filter_width: 1,
            activation: Activation::None,
        };
        let rows = [10i8, 20, 30, 40];
        let reversed = [40i8, 30, 20, 10];
        // SAME, 2^17 - 1 rows over 4: padding 65,535, which int16_t holds as -1, so the first
        // window starts at row 1 (max 30 of the reversed rows) and the last is empty.
        let o = tall(Padding::Same, (1 << 17) - 1, 1);
        assert_eq!(tflm_padding([4, 1], &o), (-1, 0));
        let p = prepare_s8([1, 4, 1, 1], [4, 1], &o, Kind::Max, Q, Q).unwrap();
        let mut y = [0i8; 4];
        max_pool_s8(&p, &reversed, &mut y);
        assert_eq!(y, [30, 20, 10, -128]);
        // 2^16 rows: padding 32,767 fits, every window holds all four rows.
        let o = tall(Padding::Same, 1 << 16, 1);
        assert_eq!(tflm_padding([4, 1], &o), (32_767, 0));
        // 2^30 - 10 rows: padding 2^29 - 6 narrows to -6, the first window starts past the
        // input: MAX_POOL_2D gives -128, AVERAGE_POOL_2D is refused.
        let o = tall(Padding::Same, (1 << 30) - 10, 1);
        assert_eq!(tflm_padding([4, 1], &o), (-6, 0));
        let p = prepare_s8([1, 4, 1, 1], [4, 1], &o, Kind::Max, Q, Q).unwrap();
        max_pool_s8(&p, &rows, &mut y);
        assert_eq!(y, [-128; 4]);
        assert_eq!(
            prepare_s8([1, 4, 1, 1], [4, 1], &o, Kind::Average, Q, Q),
            Err(PoolError::Window(WindowError::EmptyWindow {
                axis: 0,
                index: 0,
                padding: -6
            }))
        );
        // VALID, 5 rows over 4: TFLM's output height is 0, the model's (2) is used, padding 0.
        let o = tall(Padding::Valid, 5, 1);
        assert_eq!(out_size(Padding::Valid, 4, 5, 1), Some(0));
        let p = prepare_s8([1, 4, 1, 1], [2, 1], &o, Kind::Average, Q, Q).unwrap();
        let mut y = [0i8; 2];
        assert!(average_pool_s8(&p, &rows, &mut y));
        assert_eq!(y, [25, 30]);
        // A negative output size (here the width's) leaves both paddings 0.
        let o = Options {
            padding: Padding::Valid,
            stride_height: 1,
            stride_width: 3,
            filter_height: 65_539,
            filter_width: 65_539,
            activation: Activation::None,
        };
        assert_eq!(out_size(Padding::Valid, 5, 65_539, 3), None);
        assert_eq!(tflm_padding([1, 5], &o), (0, 0));
        // A size TFLM computes must be the model's.
        assert_eq!(
            prepare_s8(
                [1, 4, 1, 1],
                [3, 1],
                &tall(Padding::Same, 5, 2),
                Kind::Max,
                Q,
                Q
            ),
            Err(PoolError::Window(WindowError::OutputSize {
                axis: 0,
                computed: 2,
                declared: 3
            }))
        );
        // Output row 2 at stride 2^30: 2^31 overflows TFLM's int.
        assert_eq!(
            prepare_s8(
                [1, 4, 1, 1],
                [3, 1],
                &tall(Padding::Valid, 5, 1 << 30),
                Kind::Max,
                Q,
                Q
            ),
            Err(PoolError::Window(WindowError::Overflow {
                axis: 0,
                index: 2,
                stride: 1 << 30,
                padding: 0
            }))
        );
    }

    #[test]
    fn average_int8() {
        let p = s8(
            [1, 2, 2, 2],
            &opts(Padding::Valid, 1, 2, Activation::None),
            Kind::Average,
            Q,
            Q,
        )
        .unwrap();
        assert_eq!((p.output_height, p.output_width), (1, 1));
        let mut out = [0i8; 2];
        // ch0: 1+2+2+2 = 7 -> 7/4 = 1.75 -> 2 ; ch1: -1-2-2-1 = -6 -> -1.5 -> -2
        assert!(average_pool_s8(&p, &[1, -1, 2, -2, 2, -2, 2, -1], &mut out));
        assert_eq!(out, [2, -2]);
        // ties: 2/4 = 0.5 -> 1 ; -2/4 -> -1
        assert!(average_pool_s8(&p, &[1, -1, 1, -1, 0, 0, 0, 0], &mut out));
        assert_eq!(out, [1, -1]);
    }

    #[test]
    fn average_same_padding_counts_only_inside() {
        let p = s8(
            [1, 3, 3, 1],
            &opts(Padding::Same, 1, 3, Activation::None),
            Kind::Average,
            Q,
            Q,
        )
        .unwrap();
        let input = [1i8, 2, 3, 4, 5, 6, 7, 8, 9];
        let mut out = [0i8; 9];
        assert!(average_pool_s8(&p, &input, &mut out));
        // corner (0,0): (1+2+4+5)/4 = 3 ; center: 45/9 = 5 ; edge (0,1): (1+2+3+4+5+6)/6 = 3.5 -> 4 ; (1,0): 27/6 = 4.5 -> 5
        assert_eq!(out, [3, 4, 4, 5, 5, 6, 6, 7, 7]);
    }

    #[test]
    fn max_int8_with_relu() {
        let q = QuantParams {
            scale: 0.1,
            zero_point: -5,
        };
        let p = s8(
            [1, 2, 2, 1],
            &opts(Padding::Valid, 2, 2, Activation::Relu),
            Kind::Max,
            q,
            q,
        )
        .unwrap();
        assert_eq!(p.quantized_activation_min, -5);
        let mut out = [0i8; 1];
        max_pool_s8(&p, &[-100, -50, -20, -9], &mut out);
        assert_eq!(out, [-5]);
        max_pool_s8(&p, &[-100, 50, -20, -9], &mut out);
        assert_eq!(out, [50]);
    }

    #[test]
    fn float_pools() {
        let o = opts(Padding::Valid, 1, 2, Activation::None);
        let p = prepare_f32([1, 2, 2, 1], [1, 1], &o, Kind::Average).unwrap();
        let mut out = [0f32; 1];
        assert!(average_pool_f32(&p, &[1.0, 2.0, 3.0, 4.5], &mut out));
        assert_eq!(out, [2.625]);
        max_pool_f32(&p, &[1.0, 2.0, 3.0, 4.5], &mut out);
        assert_eq!(out, [4.5]);
        let o = opts(Padding::Valid, 1, 2, Activation::Relu6);
        let p = prepare_f32([1, 2, 2, 1], [1, 1], &o, Kind::Max).unwrap();
        max_pool_f32(&p, &[1.0, 2.0, 30.0, 4.5], &mut out);
        assert_eq!(out, [6.0]);
    }

    #[test]
    fn rejects_mismatched_quantization() {
        let a = QuantParams {
            scale: 0.5,
            zero_point: 0,
        };
        let b = QuantParams {
            scale: 0.5,
            zero_point: 1,
        };
        assert_eq!(
            s8(
                [1, 2, 2, 1],
                &opts(Padding::Valid, 1, 2, Activation::None),
                Kind::Average,
                a,
                b
            ),
            Err(PoolError::Prepare(PrepareError::UnsupportedQuantization))
        );
    }
}
