//! MUL: elementwise product with optional broadcasting and fused activation.
//!
//! Follows TFLM's `reference_integer_ops::Mul`/`BroadcastMul4DSlow` (int8:
//! `output_offset + MultiplyByQuantizedMultiplier((x + in1_off) * (y + in2_off), m, shift)`,
//! clamped) and `reference_ops::Mul`/`BroadcastMul4DSlow` (float: `clamp(x * y)`), with the
//! multiplier of `mul_common.cc` (`double(s1) * double(s2) / double(s_out)`). int16 is the
//! int8 element function on int16 (`MulElementwise<int16_t, int16_t>`; TFLM requires zero
//! points 0, [`prepare_s16`]); int32 is unquantized, `clamp(x * y)` with
//! `CalculateActivationRange<int32_t>` (the product wraps where C++ would overflow).

use crate::broadcast::{Broadcast, broadcast_binary};
use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::quant::{
    Activation, PrepareError, QuantParams, ShiftRange, activation_range_f32, activation_range_i8,
    activation_range_i16, quantize_multiplier,
};
use crate::util::{clamp_f32, clamp_i32, zip_map, zip_map_in_place1, zip_map_in_place2};

/// Constant parameters of a MUL node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// `-input1_zero_point`
    pub input1_offset: i32,
    /// `-input2_zero_point`
    pub input2_offset: i32,
    /// `output_zero_point`
    pub output_offset: i32,
    /// Q31 multiplier of `s1 * s2 / s_out`.
    pub output_multiplier: i32,
    /// Exponent of `output_multiplier`.
    pub output_shift: i32,
    /// Lower clamp of the quantized output.
    pub quantized_activation_min: i32,
    /// Upper clamp of the quantized output.
    pub quantized_activation_max: i32,
    /// Lower clamp of the float output.
    pub float_activation_min: f32,
    /// Upper clamp of the float output.
    pub float_activation_max: f32,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters of a float MUL.
pub fn prepare_f32(activation: Activation) -> Params {
    let (min, max) = activation_range_f32(activation);
    Params {
        input1_offset: 0,
        input2_offset: 0,
        output_offset: 0,
        output_multiplier: 0,
        output_shift: 0,
        quantized_activation_min: 0,
        quantized_activation_max: 0,
        float_activation_min: min,
        float_activation_max: max,
    }
}

/// Build-time parameters of an int8 MUL (`CalculateOpDataMul`).
pub fn prepare_s8(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
    activation: Activation,
) -> Result<Params, PrepareError> {
    let (min, max) = activation_range_i8(activation, output.scale, output.zero_point)?;
    let real_multiplier = input1.scale as f64 * input2.scale as f64 / output.scale as f64;
    let (output_multiplier, output_shift) = quantize_multiplier(real_multiplier, ShiftRange::I32)?;
    Ok(Params {
        input1_offset: -input1.zero_point,
        input2_offset: -input2.zero_point,
        output_offset: output.zero_point,
        output_multiplier,
        output_shift,
        quantized_activation_min: min,
        quantized_activation_max: max,
        float_activation_min: 0.0,
        float_activation_max: 0.0,
    })
}

/// Build-time parameters of an int16 MUL (`CalculateOpDataMul`): zero points must be 0.
pub fn prepare_s16(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
    activation: Activation,
) -> Result<Params, PrepareError> {
    if input1.zero_point != 0 || input2.zero_point != 0 || output.zero_point != 0 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    let (min, max) = activation_range_i16(activation, output.scale, output.zero_point)?;
    let real_multiplier = input1.scale as f64 * input2.scale as f64 / output.scale as f64;
    let (output_multiplier, output_shift) = quantize_multiplier(real_multiplier, ShiftRange::I32)?;
    Ok(Params {
        input1_offset: 0,
        input2_offset: 0,
        output_offset: 0,
        output_multiplier,
        output_shift,
        quantized_activation_min: min,
        quantized_activation_max: max,
        float_activation_min: 0.0,
        float_activation_max: 0.0,
    })
}

/// Build-time parameters of an int32 MUL: only the activation range.
pub fn prepare_i32(activation: Activation) -> Params {
    let (min, max) = crate::sub::activation_range_i32(activation);
    let mut p = prepare_f32(Activation::None);
    (p.quantized_activation_min, p.quantized_activation_max) = (min, max);
    p
}

/// The element function of the int8 MUL kernels.
#[inline(always)]
fn mul_func(p: &Params, x: i8, y: i8) -> i8 {
    mul_quantized(p, x as i32, y as i32) as i8
}

/// The element function of the int16 MUL kernels.
#[inline(always)]
fn mul_func16(p: &Params, x: i16, y: i16) -> i16 {
    mul_quantized(p, x as i32, y as i32) as i16
}

/// The element function of the int32 MUL kernels: `clamp(x * y)`.
#[inline(always)]
fn mul_func32(p: &Params, x: i32, y: i32) -> i32 {
    clamp_i32(
        x.wrapping_mul(y),
        p.quantized_activation_min,
        p.quantized_activation_max,
    )
}

/// `MulElementwise` on widened inputs, clamped.
#[inline(always)]
fn mul_quantized(p: &Params, x: i32, y: i32) -> i32 {
    let a = p.input1_offset.wrapping_add(x);
    let b = p.input2_offset.wrapping_add(y);
    let v = p
        .output_offset
        .wrapping_add(multiply_by_quantized_multiplier(
            a.wrapping_mul(b),
            p.output_multiplier,
            p.output_shift,
        ));
    clamp_i32(v, p.quantized_activation_min, p.quantized_activation_max)
}

/// Int16 MUL of two same-shaped tensors.
pub fn mul_s16(p: &Params, input1: &[i16], input2: &[i16], output: &mut [i16]) {
    zip_map(input1, input2, output, |x, y| mul_func16(p, x, y));
}

/// Int16 MUL with broadcasting.
pub fn mul_broadcast_s16(
    p: &Params,
    b: &Broadcast,
    input1: &[i16],
    input2: &[i16],
    output: &mut [i16],
) {
    broadcast_binary(b, input1, input2, output, |x, y| mul_func16(p, x, y));
}

/// Int32 MUL of two same-shaped tensors.
pub fn mul_i32(p: &Params, input1: &[i32], input2: &[i32], output: &mut [i32]) {
    zip_map(input1, input2, output, |x, y| mul_func32(p, x, y));
}

/// Int32 MUL with broadcasting.
pub fn mul_broadcast_i32(
    p: &Params,
    b: &Broadcast,
    input1: &[i32],
    input2: &[i32],
    output: &mut [i32],
) {
    broadcast_binary(b, input1, input2, output, |x, y| mul_func32(p, x, y));
}

/// Int8 MUL of two same-shaped tensors (`reference_integer_ops::Mul`).
pub fn mul_s8(p: &Params, input1: &[i8], input2: &[i8], output: &mut [i8]) {
    zip_map(input1, input2, output, |x, y| mul_func(p, x, y));
}

/// [`mul_s8`] with the output overwriting input 1 (`input1_output` holds input 1 and
/// receives the product); byte-identical with [`mul_s8`].
pub fn mul_s8_in_place1(p: &Params, input1_output: &mut [i8], input2: &[i8]) {
    zip_map_in_place1(input1_output, input2, |x, y| mul_func(p, x, y));
}

/// [`mul_s8`] with the output overwriting input 2 (`input2_output` holds input 2 and
/// receives the product); byte-identical with [`mul_s8`].
pub fn mul_s8_in_place2(p: &Params, input1: &[i8], input2_output: &mut [i8]) {
    zip_map_in_place2(input1, input2_output, |x, y| mul_func(p, x, y));
}

/// Int8 MUL with broadcasting (`reference_integer_ops::BroadcastMul4DSlow`).
pub fn mul_broadcast_s8(
    p: &Params,
    b: &Broadcast,
    input1: &[i8],
    input2: &[i8],
    output: &mut [i8],
) {
    broadcast_binary(b, input1, input2, output, |x, y| mul_func(p, x, y));
}

/// The element function of the float MUL kernels: `clamp(x * y)`.
#[inline(always)]
fn mul_f32_op(p: &Params, x: f32, y: f32) -> f32 {
    clamp_f32(x * y, p.float_activation_min, p.float_activation_max)
}

/// Float MUL of two same-shaped tensors (`reference_ops::Mul`): `clamp(x * y)`.
pub fn mul_f32(p: &Params, input1: &[f32], input2: &[f32], output: &mut [f32]) {
    zip_map(input1, input2, output, |x, y| mul_f32_op(p, x, y));
}

/// [`mul_f32`] with the output overwriting input 1 (`input1_output` holds input 1 and
/// receives the product); byte-identical with [`mul_f32`].
pub fn mul_f32_in_place1(p: &Params, input1_output: &mut [f32], input2: &[f32]) {
    zip_map_in_place1(input1_output, input2, |x, y| mul_f32_op(p, x, y));
}

/// [`mul_f32`] with the output overwriting input 2 (`input2_output` holds input 2 and
/// receives the product); byte-identical with [`mul_f32`].
pub fn mul_f32_in_place2(p: &Params, input1: &[f32], input2_output: &mut [f32]) {
    zip_map_in_place2(input1, input2_output, |x, y| mul_f32_op(p, x, y));
}

/// Float MUL with broadcasting (`reference_ops::BroadcastMul4DSlow`).
pub fn mul_broadcast_f32(
    p: &Params,
    b: &Broadcast,
    input1: &[f32],
    input2: &[f32],
    output: &mut [f32],
) {
    broadcast_binary(b, input1, input2, output, |x, y| mul_f32_op(p, x, y));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int16_and_int32_mul() {
        let q = |scale| QuantParams {
            scale,
            zero_point: 0,
        };
        let p = prepare_s16(q(0.01), q(0.01), q(0.0001), Activation::None).unwrap();
        let mut o = [0i16; 3];
        // 1.0 * 0.5 = 0.5 -> 5000; 3.0 * 3.0 = 9 saturates; -1.0 * 0.5 = -5000.
        mul_s16(&p, &[100, 300, -100], &[50, 300, 50], &mut o);
        assert_eq!(o, [5000, 32767, -5000]);
        let nonzero = QuantParams {
            scale: 0.01,
            zero_point: 1,
        };
        assert!(prepare_s16(nonzero, q(0.01), q(0.01), Activation::None).is_err());
        let p = prepare_i32(Activation::Relu6);
        let mut o = [0i32; 3];
        mul_i32(&p, &[2, -3, 2], &[2, 4, 5], &mut o);
        assert_eq!(o, [4, 0, 6]);
    }

    #[test]
    fn int8_mul() {
        let q = QuantParams {
            scale: 0.5,
            zero_point: 0,
        };
        let p = prepare_s8(q, q, q, Activation::None).unwrap();
        let mut out = [0i8; 4];
        // (a*0.5)*(b*0.5)/0.5 = a*b/2
        mul_s8(&p, &[2, 3, -3, 100], &[4, 3, 3, 100], &mut out);
        assert_eq!(out, [4, 5, -4, 127]); // 4.5 -> 5, -4.5 -> -4 (SRDHM rounds ties up)
        let b = Broadcast::new(&[4], &[1]).unwrap();
        mul_broadcast_s8(&p, &b, &[2, 3, -3, 100], &[2], &mut out);
        assert_eq!(out, [2, 3, -3, 100]);
        let p = prepare_f32(Activation::Relu);
        let mut f = [0f32; 2];
        mul_f32(&p, &[2.0, -2.0], &[3.0, 3.0], &mut f);
        assert_eq!(f, [6.0, 0.0]);
    }
}
