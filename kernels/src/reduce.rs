//! SUM, REDUCE_MAX, REDUCE_MIN and REDUCE_ALL over a constant set of axes (`keep_dims` only changes the
//! output shape). They share MEAN's layout ([`crate::mean::Params`]: kept and reduced
//! dimension groups, axes resolved like TFLM's `ResolveAxis`, negative axes counted from the
//! end, duplicates ignored) and its traversal (each output element folds its reduced
//! elements in increasing input-index order).
//!
//! Follows TFLM's `reduce_common.cc`:
//!
//! * SUM float32: `reference_ops::ReduceGeneric` with the initial value `0.0f` and the
//!   reducer `in + current`, in input order.
//! * SUM int8/int16: `reference_ops::QuantizedMeanOrSum` with `compute_sum`: the multiplier
//!   is `QuantizeMultiplier(input_scale / output_scale)` (no division by the count), each
//!   output `MultiplyByQuantizedMultiplier(sum - input_zero_point * count, ...) +
//!   output_zero_point`, clamped. The pinned TFLM takes this path also when input and output
//!   quantization are equal.
//! * REDUCE_MAX / REDUCE_MIN float32: `ReduceGeneric` from `numeric_limits<float>::lowest()`
//!   (max) or `max()` (min) with `(in > current) ? in : current` (`<` for min): a NaN input
//!   never replaces the running value, and an output whose inputs are all NaN or all
//!   `-inf` (max) / `+inf` (min) is the initial value (`-f32::MAX` / `f32::MAX`), as in TFLM.
//! * REDUCE_MAX / REDUCE_MIN int8: the same from `-128` / `127`; TFLM requires equal input
//!   and output quantization (checked at lowering), so no requantization.
//!
//! * REDUCE_ALL bool: `ReduceGeneric` from `true` with `in && current` (TFLM's `EvalAll`);
//!   bools are bytes, any non-zero byte counting as true, the output 0 or 1.
//!
//! TFLM's int16/int32 REDUCE_MAX/REDUCE_MIN and int32 SUM are refused by the pinned TFLM
//! ("Only float32 and int8 types are supported"), so there are no such kernels. None of
//! these kernels needs scratch memory (TFLM's int32 sum buffer is replaced by finishing one
//! output element at a time).

use crate::mean::{Params, for_each_output, mean_quantized, prepare_f32, reduce};
use crate::quant::{PrepareError, QuantParams, ShiftRange, quantize_multiplier};

/// The kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Shapes of a SUM, REDUCE_MAX or REDUCE_MIN (float32 or int8 max/min): as
/// [`crate::mean::prepare_f32`].
pub fn prepare(input_shape: &[usize], axis: &[i32]) -> Result<Params, PrepareError> {
    prepare_f32(input_shape, axis)
}

/// Build-time parameters of an int8 or int16 SUM (`PrepareMeanOrSumHelper`: the multiplier
/// of `input_scale / output_scale`, not divided by the count).
pub fn prepare_sum_quantized(
    input_shape: &[usize],
    axis: &[i32],
    input: QuantParams,
    output: QuantParams,
) -> Result<Params, PrepareError> {
    let mut p = prepare_f32(input_shape, axis)?;
    p.input_zero_point = input.zero_point;
    p.output_zero_point = output.zero_point;
    let (multiplier, shift) =
        quantize_multiplier(input.scale as f64 / output.scale as f64, ShiftRange::I32)?;
    p.output_multiplier = multiplier;
    p.output_shift = shift;
    Ok(p)
}

/// Float SUM: `0.0` plus every reduced element, in input order.
pub fn sum_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(output.len(), p.output_size());
    for_each_output(p, output, |base| {
        reduce(p, input, base, 0.0f32, |a, x| x + a)
    });
}

/// Int8 SUM (`QuantizedMeanOrSum<int8_t, int32_t>`, `compute_sum`).
pub fn sum_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    mean_quantized(p, input, output, i8::MIN as i32, i8::MAX as i32, |v| {
        v as i8
    });
}

/// Int16 SUM (`QuantizedMeanOrSum<int16_t, int32_t>`, `compute_sum`).
pub fn sum_s16(p: &Params, input: &[i16], output: &mut [i16]) {
    mean_quantized(p, input, output, i16::MIN as i32, i16::MAX as i32, |v| {
        v as i16
    });
}

/// Float REDUCE_MAX (`ReduceGeneric` from `lowest()`, `in > current ? in : current`).
pub fn reduce_max_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    debug_assert_eq!(input.len(), p.input_size());
    for_each_output(p, output, |base| {
        reduce(p, input, base, f32::MIN, |a, x| if x > a { x } else { a })
    });
}

/// Float REDUCE_MIN (`ReduceGeneric` from `max()`, `in < current ? in : current`).
pub fn reduce_min_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    debug_assert_eq!(input.len(), p.input_size());
    for_each_output(p, output, |base| {
        reduce(p, input, base, f32::MAX, |a, x| if x < a { x } else { a })
    });
}

/// Int8 REDUCE_MAX (input and output quantization equal).
pub fn reduce_max_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    debug_assert_eq!(input.len(), p.input_size());
    for_each_output(p, output, |base| {
        reduce(p, input, base, i8::MIN, |a, x| a.max(x))
    });
}

/// Int8 REDUCE_MIN (input and output quantization equal).
pub fn reduce_min_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    debug_assert_eq!(input.len(), p.input_size());
    for_each_output(p, output, |base| {
        reduce(p, input, base, i8::MAX, |a, x| a.min(x))
    });
}

/// Bool REDUCE_ALL: whether every reduced element is true (`1`, else `0`).
pub fn reduce_all_bool(p: &Params, input: &[u8], output: &mut [u8]) {
    debug_assert_eq!(input.len(), p.input_size());
    for_each_output(p, output, |base| {
        reduce(p, input, base, 1u8, |a, x| u8::from(a != 0 && x != 0))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_maxima_and_minima() {
        let p = prepare(&[2, 3], &[1, -1]).unwrap();
        let mut out = [0.0f32; 2];
        sum_f32(&p, &[1.0, 2.0, 3.0, -1.0, -0.5, 0.25], &mut out);
        assert_eq!(out, [6.0, -1.25]);
        reduce_max_f32(
            &p,
            &[f32::NAN, -1.0, 3.0, f32::NEG_INFINITY, f32::NAN, -7.0],
            &mut out,
        );
        assert_eq!(out, [3.0, -7.0]);
        reduce_min_f32(&p, &[f32::INFINITY; 6], &mut out);
        assert_eq!(out, [f32::MAX; 2]);

        let p = prepare(&[2, 3], &[0]).unwrap();
        let mut out = [0i8; 3];
        reduce_max_s8(&p, &[-128, 5, 7, -128, 9, -3], &mut out);
        assert_eq!(out, [-128, 9, 7]);
        reduce_min_s8(&p, &[-128, 5, 7, -128, 9, -3], &mut out);
        assert_eq!(out, [-128, 5, -3]);

        // (3 + 4 - 2 * 1) * 0.5 / 1.0 = 2.5 -> 3, + 2; saturates at 127.
        let q = |scale, zero_point| QuantParams { scale, zero_point };
        let p = prepare_sum_quantized(&[2, 2], &[1], q(0.5, 1), q(1.0, 2)).unwrap();
        let mut out = [0i8; 2];
        sum_s8(&p, &[3, 4, 127, 127], &mut out);
        assert_eq!(out, [5, 127]);
    }
}
