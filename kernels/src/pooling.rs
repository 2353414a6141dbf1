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

use crate::quant::{
    Activation, Padding, PrepareError, QuantParams, activation_range_f32, activation_range_i8,
    activation_range_i16, compute_padding_height_width,
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
    /// Implicit padding rows before the input.
    pub padding_height: usize,
    /// Implicit padding columns before the input.
    pub padding_width: usize,
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

/// Shapes and padding of a float pooling node from the input shape `[N, H, W, C]`
/// (`CalculateOpDataPooling`); the output height/width are computed from the padding type and
/// must match the model's output tensor.
pub fn prepare_f32(input_shape: [usize; 4], options: &Options) -> Result<Params, PrepareError> {
    let [batches, input_height, input_width, depth] = input_shape;
    if options.stride_height == 0
        || options.stride_width == 0
        || options.filter_height == 0
        || options.filter_width == 0
        || batches == 0
        || depth == 0
    {
        return Err(PrepareError::InvalidShape);
    }
    let pad = compute_padding_height_width(
        options.padding,
        options.stride_height,
        options.stride_width,
        1,
        1,
        input_height,
        input_width,
        options.filter_height,
        options.filter_width,
    );
    if pad.out_height == 0 || pad.out_width == 0 {
        return Err(PrepareError::InvalidShape);
    }
    let p = Params {
        batches,
        input_height,
        input_width,
        depth,
        output_height: pad.out_height,
        output_width: pad.out_width,
        filter_height: options.filter_height,
        filter_width: options.filter_width,
        stride_height: options.stride_height,
        stride_width: options.stride_width,
        padding_height: pad.height,
        padding_width: pad.width,
        quantized_activation_min: 0,
        quantized_activation_max: 0,
        float_activation_min: activation_range_f32(options.activation).0,
        float_activation_max: activation_range_f32(options.activation).1,
    };
    // TFLM's AveragePool fails on a window with no input cell; that cannot happen with TFLM's
    // padding, but reject it here so the kernels' `false` return is unreachable.
    if !windows_nonempty(&p) {
        return Err(PrepareError::InvalidShape);
    }
    Ok(p)
}

/// Build-time parameters of an int8 pooling node (`PoolingPrepare`): input and output must
/// share scale (within 1e-6) and zero point, the activation range comes from the output.
pub fn prepare_s8(
    input_shape: [usize; 4],
    options: &Options,
    input: QuantParams,
    output: QuantParams,
) -> Result<Params, PrepareError> {
    let mut p = prepare_f32(input_shape, options)?;
    let d = input.scale as f64 - output.scale as f64;
    let scale_diff = if d < 0.0 { -d } else { d };
    if !(scale_diff <= 1.0e-6) || input.zero_point != output.zero_point {
        return Err(PrepareError::UnsupportedQuantization);
    }
    let (min, max) = activation_range_i8(options.activation, output.scale, output.zero_point)?;
    p.quantized_activation_min = min;
    p.quantized_activation_max = max;
    p.float_activation_min = 0.0;
    p.float_activation_max = 0.0;
    Ok(p)
}

fn windows_nonempty(p: &Params) -> bool {
    let rows = (0..p.output_height).all(|oy| {
        let (a, b) = window(
            oy,
            p.stride_height,
            p.padding_height,
            p.input_height,
            p.filter_height,
        );
        a < b
    });
    let cols = (0..p.output_width).all(|ox| {
        let (a, b) = window(
            ox,
            p.stride_width,
            p.padding_width,
            p.input_width,
            p.filter_width,
        );
        a < b
    });
    rows && cols
}

/// Clipped window `(start, end)` in input coordinates for output position `out`.
#[inline]
fn window(
    out: usize,
    stride: usize,
    pad: usize,
    input_size: usize,
    filter: usize,
) -> (usize, usize) {
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
    options: &Options,
    input: QuantParams,
    output: QuantParams,
) -> Result<Params, PrepareError> {
    let mut p = prepare_f32(input_shape, options)?;
    let d = input.scale as f64 - output.scale as f64;
    let scale_diff = if d < 0.0 { -d } else { d };
    if !(scale_diff <= 1.0e-6) || input.zero_point != output.zero_point {
        return Err(PrepareError::UnsupportedQuantization);
    }
    let (min, max) = activation_range_i16(options.activation, output.scale, output.zero_point)?;
    p.quantized_activation_min = min;
    p.quantized_activation_max = max;
    p.float_activation_min = 0.0;
    p.float_activation_max = 0.0;
    Ok(p)
}

/// Int16 AVERAGE_POOL_2D (`reference_integer_ops::AveragePool` for `int16_t`). Returns
/// `false` if some window holds no input cell, which [`prepare_s16`] rules out.
pub fn average_pool_s16(p: &Params, input: &[i16], output: &mut [i16]) -> bool {
    debug_assert_eq!(
        output.len(),
        p.batches * p.output_height * p.output_width * p.depth
    );
    let row = p.input_width * p.depth;
    for_each_output_pixel(p, input, output, |in_b, (y0, y1), (x0, x1), out_px| {
        let count = ((y1 - y0) * (x1 - x0)) as i32;
        if count == 0 {
            return false;
        }
        for (c, out) in out_px.iter_mut().enumerate() {
            let mut a = 0i32;
            for y in y0..y1 {
                let in_y = &in_b[y * row..][..row];
                for x in x0..x1 {
                    a = a.wrapping_add(in_y[x * p.depth + c] as i32);
                }
            }
            let avg = if a > 0 {
                (a + count / 2) / count
            } else {
                (a - count / 2) / count
            };
            *out = clamp_i32(avg, p.quantized_activation_min, p.quantized_activation_max) as i16;
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
    for_each_output_pixel(p, input, output, |in_b, (y0, y1), (x0, x1), out_px| {
        out_px.fill(i16::MIN);
        for y in y0..y1 {
            let in_y = &in_b[y * row..][..row];
            for x in x0..x1 {
                for (m, &v) in out_px.iter_mut().zip(&in_y[x * p.depth..][..p.depth]) {
                    *m = (*m).max(v);
                }
            }
        }
        for m in out_px.iter_mut() {
            *m = clamp_i32(
                *m as i32,
                p.quantized_activation_min,
                p.quantized_activation_max,
            ) as i16;
        }
        true
    });
}

/// Float L2_POOL_2D (`reference_ops::L2Pool`, see the module docs). Returns `false` if some
/// window holds no input cell, which [`prepare_f32`] rules out.
pub fn l2_pool_f32(p: &Params, input: &[f32], output: &mut [f32]) -> bool {
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
        out_px.fill(0.0);
        for y in y0..y1 {
            let in_y = &in_b[y * row..][..row];
            for x in x0..x1 {
                for (t, &v) in out_px.iter_mut().zip(&in_y[x * p.depth..][..p.depth]) {
                    *t += v * v;
                }
            }
        }
        for t in out_px.iter_mut() {
            *t = clamp_f32(
                crate::libm_f32::sqrtf(*t / count),
                p.float_activation_min,
                p.float_activation_max,
            );
        }
        true
    })
}

#[cfg(test)]
mod tests_int16_l2 {
    use super::*;

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
        let p = prepare_s16([1, 1, 2, 1], &o, q, q).unwrap();
        let mut y = [0i16];
        assert!(average_pool_s16(&p, &[-3, -2], &mut y));
        assert_eq!(y, [-3]);
        max_pool_s16(&p, &[-32768, -32768], &mut y);
        assert_eq!(y, [-32768]);
        let p = prepare_f32([1, 1, 2, 1], &o).unwrap();
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

    const Q: QuantParams = QuantParams {
        scale: 0.5,
        zero_point: 0,
    };

    #[test]
    fn rejects_empty_output() {
        // A 2x2 window on a 1x2 input with VALID padding has no output row.
        assert_eq!(
            prepare_s8(
                [1, 1, 2, 1],
                &opts(Padding::Valid, 1, 2, Activation::None),
                Q,
                Q
            ),
            Err(PrepareError::InvalidShape)
        );
    }

    #[test]
    fn average_int8() {
        let p = prepare_s8(
            [1, 2, 2, 2],
            &opts(Padding::Valid, 1, 2, Activation::None),
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
        let p = prepare_s8(
            [1, 3, 3, 1],
            &opts(Padding::Same, 1, 3, Activation::None),
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
        let p = prepare_s8(
            [1, 2, 2, 1],
            &opts(Padding::Valid, 2, 2, Activation::Relu),
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
        let p = prepare_f32([1, 2, 2, 1], &opts(Padding::Valid, 1, 2, Activation::None)).unwrap();
        let mut out = [0f32; 1];
        assert!(average_pool_f32(&p, &[1.0, 2.0, 3.0, 4.5], &mut out));
        assert_eq!(out, [2.625]);
        max_pool_f32(&p, &[1.0, 2.0, 3.0, 4.5], &mut out);
        assert_eq!(out, [4.5]);
        let p = prepare_f32([1, 2, 2, 1], &opts(Padding::Valid, 1, 2, Activation::Relu6)).unwrap();
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
            prepare_s8(
                [1, 2, 2, 1],
                &opts(Padding::Valid, 1, 2, Activation::None),
                a,
                b
            ),
            Err(PrepareError::UnsupportedQuantization)
        );
    }
}
