//! SQUARED_DIFFERENCE: `(x - y)^2` elementwise, with optional broadcasting.
//!
//! Follows TFLM's `squared_difference.cc`: float32 and int32 compute `d = x - y; d * d` in
//! their own type (int32 wraps where C++ would overflow); int8 and int16 rescale both inputs
//! onto twice the larger input scale (`left_shift` 7 for int8, 0 for int16, multipliers from
//! `QuantizeMultiplierSmallerThanOneExp`), square the difference of the rescaled values and
//! requantize it with `QuantizeMultiplier(twice_max^2 / (2^(2 * left_shift) * s_out))`,
//! clamped to the type's range (no fused activation). [`prepare_quantized`] repeats
//! `PrepareQuantized`'s `double`/`float` evaluation order. TFLM broadcasts these with its
//! 4-D helpers (`BroadcastBinaryFunction4DSlow`); the operator module refuses more than 4
//! broadcast dimensions.

use crate::broadcast::{Broadcast, broadcast_binary};
use crate::fixed_point::{
    multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_smaller_than_one_exp,
};
use crate::quant::{
    PrepareError, QuantParams, ShiftRange, quantize_multiplier,
    quantize_multiplier_smaller_than_one_exp,
};
use crate::util::clamp_i32;

/// Constant parameters of a quantized SQUARED_DIFFERENCE (TFLM's `ArithmeticParams` subset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub input1_offset: i32,
    pub input2_offset: i32,
    pub output_offset: i32,
    pub left_shift: i32,
    pub input1_multiplier: i32,
    pub input1_shift: i32,
    pub input2_multiplier: i32,
    pub input2_shift: i32,
    pub output_multiplier: i32,
    pub output_shift: i32,
    pub quantized_activation_min: i32,
    pub quantized_activation_max: i32,
}

/// The kernels need no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

/// `PrepareQuantized` with int8's `left_shift = 7` and range.
pub fn prepare_s8(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
) -> Result<Params, PrepareError> {
    prepare_quantized(input1, input2, output, 7, i8::MIN as i32, i8::MAX as i32)
}

/// `PrepareQuantized` with int16's `left_shift = 0` and range (zero points must be 0).
pub fn prepare_s16(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
) -> Result<Params, PrepareError> {
    if input1.zero_point != 0 || input2.zero_point != 0 || output.zero_point != 0 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    prepare_quantized(input1, input2, output, 0, i16::MIN as i32, i16::MAX as i32)
}

/// TFLM's `PrepareQuantized`.
pub fn prepare_quantized(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
    left_shift: i32,
    min: i32,
    max: i32,
) -> Result<Params, PrepareError> {
    let max_scale = if input1.scale < input2.scale {
        input2.scale
    } else {
        input1.scale
    };
    let twice_max = 2.0 * max_scale as f64;
    let real1 = input1.scale as f64 / twice_max;
    let real2 = input2.scale as f64 / twice_max;
    // `(1 << left_shift * 2) * output.scale` is a float product in TFLM.
    let denominator = ((1i32 << (left_shift * 2)) as f32 * output.scale) as f64;
    let real_output = twice_max * twice_max / denominator;
    let (input1_multiplier, input1_shift) = quantize_multiplier_smaller_than_one_exp(real1)?;
    let (input2_multiplier, input2_shift) = quantize_multiplier_smaller_than_one_exp(real2)?;
    let (output_multiplier, output_shift) = quantize_multiplier(real_output, ShiftRange::I32)?;
    Ok(Params {
        input1_offset: input1.zero_point.wrapping_neg(),
        input2_offset: input2.zero_point.wrapping_neg(),
        output_offset: output.zero_point,
        left_shift,
        input1_multiplier,
        input1_shift,
        input2_multiplier,
        input2_shift,
        output_multiplier,
        output_shift,
        quantized_activation_min: min,
        quantized_activation_max: max,
    })
}

/// TFLM's quantized `SquaredDifference` on widened values, clamped.
#[inline]
fn quantized(p: &Params, x: i32, y: i32) -> i32 {
    let a = p
        .input1_offset
        .wrapping_add(x)
        .wrapping_mul(1i32 << p.left_shift);
    let b = p
        .input2_offset
        .wrapping_add(y)
        .wrapping_mul(1i32 << p.left_shift);
    let a = multiply_by_quantized_multiplier_smaller_than_one_exp(
        a,
        p.input1_multiplier,
        p.input1_shift,
    );
    let b = multiply_by_quantized_multiplier_smaller_than_one_exp(
        b,
        p.input2_multiplier,
        p.input2_shift,
    );
    let d = a.wrapping_sub(b);
    let raw =
        multiply_by_quantized_multiplier(d.wrapping_mul(d), p.output_multiplier, p.output_shift)
            .wrapping_add(p.output_offset);
    clamp_i32(raw, p.quantized_activation_min, p.quantized_activation_max)
}

/// Int8 SQUARED_DIFFERENCE of two same-shaped tensors.
pub fn squared_difference_s8(p: &Params, input1: &[i8], input2: &[i8], output: &mut [i8]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = quantized(p, x as i32, y as i32) as i8;
    }
}

/// Int8 SQUARED_DIFFERENCE with broadcasting.
pub fn squared_difference_broadcast_s8(
    p: &Params,
    b: &Broadcast,
    input1: &[i8],
    input2: &[i8],
    output: &mut [i8],
) {
    broadcast_binary(b, input1, input2, output, |x, y| {
        quantized(p, x as i32, y as i32) as i8
    });
}

/// Int16 SQUARED_DIFFERENCE of two same-shaped tensors.
pub fn squared_difference_s16(p: &Params, input1: &[i16], input2: &[i16], output: &mut [i16]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = quantized(p, x as i32, y as i32) as i16;
    }
}

/// Int16 SQUARED_DIFFERENCE with broadcasting.
pub fn squared_difference_broadcast_s16(
    p: &Params,
    b: &Broadcast,
    input1: &[i16],
    input2: &[i16],
    output: &mut [i16],
) {
    broadcast_binary(b, input1, input2, output, |x, y| {
        quantized(p, x as i32, y as i32) as i16
    });
}

#[inline(always)]
fn sq_f32(x: f32, y: f32) -> f32 {
    let d = x - y;
    d * d
}

#[inline(always)]
fn sq_i32(x: i32, y: i32) -> i32 {
    let d = x.wrapping_sub(y);
    d.wrapping_mul(d)
}

/// Float SQUARED_DIFFERENCE of two same-shaped tensors.
pub fn squared_difference_f32(input1: &[f32], input2: &[f32], output: &mut [f32]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = sq_f32(x, y);
    }
}

/// Float SQUARED_DIFFERENCE with broadcasting.
pub fn squared_difference_broadcast_f32(
    b: &Broadcast,
    input1: &[f32],
    input2: &[f32],
    output: &mut [f32],
) {
    broadcast_binary(b, input1, input2, output, sq_f32);
}

/// Int32 SQUARED_DIFFERENCE of two same-shaped tensors.
pub fn squared_difference_i32(input1: &[i32], input2: &[i32], output: &mut [i32]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = sq_i32(x, y);
    }
}

/// Int32 SQUARED_DIFFERENCE with broadcasting.
pub fn squared_difference_broadcast_i32(
    b: &Broadcast,
    input1: &[i32],
    input2: &[i32],
    output: &mut [i32],
) {
    broadcast_binary(b, input1, input2, output, sq_i32);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        let mut f = [0.0f32; 2];
        squared_difference_f32(&[3.0, -1.0], &[1.0, 1.0], &mut f);
        assert_eq!(f, [4.0, 4.0]);
        let mut i = [0i32; 2];
        squared_difference_i32(&[3, -100], &[1, 100], &mut i);
        assert_eq!(i, [4, 40000]);
        let q = QuantParams {
            scale: 0.5,
            zero_point: 0,
        };
        let p = prepare_s8(q, q, q).unwrap();
        let mut o = [0i8; 3];
        // (3 - 1)^2 = 4 real = 8 quantized; (10 - 0)^2 = 100 real saturates at 127.
        squared_difference_s8(&p, &[6, 20, 0], &[2, 0, 0], &mut o);
        assert_eq!(o, [8, 127, 0]);
    }
}
