//! RELU and RELU6 (standalone activation operators).
//!
//! Follows TFLM's `activations.cc`/`activations_common.cc`: int8 RELU requantizes
//! (`output_offset + MultiplyByQuantizedMultiplier(x - input_zero_point, m, shift)`, clamped to
//! `[max(-128, output_zero_point), 127]`); int8 RELU6 only clamps to the *input's* quantized
//! `0` and `6` (no requantization, like TFLM); the float versions clamp with C++ comparisons.

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::quant::{
    PrepareError, QuantParams, ShiftRange, quantize_multiplier, round_f32, round_f64,
};
use crate::util::{map, map_in_place};

/// Constant parameters of a RELU/RELU6 node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// RELU: input zero point (subtracted). RELU6: quantized 0 (lower bound).
    pub input_offset: i32,
    /// RELU: output zero point (added).
    pub output_offset: i32,
    /// RELU: Q31 multiplier of `input_scale / output_scale`.
    pub output_multiplier: i32,
    /// RELU: exponent of `output_multiplier`.
    pub output_shift: i32,
    /// Lower clamp (RELU: `max(-128, output_zero_point)`; RELU6: quantized 0).
    pub quantized_activation_min: i32,
    /// Upper clamp (RELU: 127; RELU6: quantized 6).
    pub quantized_activation_max: i32,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters of an int8 RELU (`CalculateReluOpData<int8_t>`).
pub fn prepare_relu_s8(input: QuantParams, output: QuantParams) -> Result<Params, PrepareError> {
    let real_multiplier = input.scale as f64 / output.scale as f64;
    let (output_multiplier, output_shift) = quantize_multiplier(real_multiplier, ShiftRange::I32)?;
    // zero_point + (int)roundf(0.0f / scale)
    let q0 = output
        .zero_point
        .wrapping_add(round_f32(0.0 / output.scale) as i32);
    Ok(Params {
        input_offset: input.zero_point,
        output_offset: output.zero_point,
        output_multiplier,
        output_shift,
        quantized_activation_min: q0.max(i8::MIN as i32),
        quantized_activation_max: i8::MAX as i32,
    })
}

/// Build-time parameters of an int8 RELU6 (`Relu6Prepare`): the bounds are the input's
/// quantized 0 (its zero point) and `FloatToQuantizedType<int8_t>(6.0f)`.
pub fn prepare_relu6_s8(input: QuantParams) -> Result<Params, PrepareError> {
    let six = (round_f64((6.0f32 / input.scale) as f64) + input.zero_point as f64) as i32;
    let six = six.clamp(i8::MIN as i32, i8::MAX as i32);
    Ok(Params {
        input_offset: input.zero_point,
        output_offset: 0,
        output_multiplier: 0,
        output_shift: 0,
        quantized_activation_min: input.zero_point,
        quantized_activation_max: six,
    })
}

/// The element function of the int8 RELU kernels.
#[inline(always)]
fn relu_s8_op(p: &Params, x: i8) -> i8 {
    let v = p
        .output_offset
        .wrapping_add(multiply_by_quantized_multiplier(
            (x as i32).wrapping_sub(p.input_offset),
            p.output_multiplier,
            p.output_shift,
        ));
    let v = v
        .max(p.quantized_activation_min)
        .min(p.quantized_activation_max);
    v as i8
}

/// Int8 RELU (`ReluQuantized<int8_t>`).
pub fn relu_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    map(input, output, |x| relu_s8_op(p, x));
}

/// [`relu_s8`] with the output overwriting the input (`data` holds the input and receives
/// the output); byte-identical with [`relu_s8`].
pub fn relu_s8_in_place(p: &Params, data: &mut [i8]) {
    map_in_place(data, |x| relu_s8_op(p, x));
}

/// The element function of the int8 RELU6 kernels.
#[inline(always)]
fn relu6_s8_op(zero: i8, six: i8, x: i8) -> i8 {
    if x > six {
        six
    } else if x < zero {
        zero
    } else {
        x
    }
}

/// Int8 RELU6 (`Relu6Quantized<int8_t>`): `x > six ? six : x < zero ? zero : x`.
pub fn relu6_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    let zero = p.quantized_activation_min as i8;
    let six = p.quantized_activation_max as i8;
    map(input, output, |x| relu6_s8_op(zero, six, x));
}

/// [`relu6_s8`] with the output overwriting the input (`data` holds the input and receives
/// the output); byte-identical with [`relu6_s8`].
pub fn relu6_s8_in_place(p: &Params, data: &mut [i8]) {
    let zero = p.quantized_activation_min as i8;
    let six = p.quantized_activation_max as i8;
    map_in_place(data, |x| relu6_s8_op(zero, six, x));
}

/// The element function of the float RELU kernels: `x < 0 ? 0 : x`.
#[inline(always)]
fn relu_f32_op(x: f32) -> f32 {
    if x < 0.0 { 0.0 } else { x }
}

/// Float RELU (`ReluFloat`): `x < 0 ? 0 : x`.
pub fn relu_f32(input: &[f32], output: &mut [f32]) {
    map(input, output, relu_f32_op);
}

/// [`relu_f32`] with the output overwriting the input (`data` holds the input and receives
/// the output); byte-identical with [`relu_f32`].
pub fn relu_f32_in_place(data: &mut [f32]) {
    map_in_place(data, relu_f32_op);
}

/// The element function of the float RELU6 kernels: `x > 6 ? 6 : x < 0 ? 0 : x`.
#[inline(always)]
fn relu6_f32_op(x: f32) -> f32 {
    // Same as the C++ chain, including NaN (propagated) and -0.0 (kept).
    x.clamp(0.0, 6.0)
}

/// Float RELU6 (`Relu6Float`): `x > 6 ? 6 : x < 0 ? 0 : x`.
pub fn relu6_f32(input: &[f32], output: &mut [f32]) {
    map(input, output, relu6_f32_op);
}

/// [`relu6_f32`] with the output overwriting the input (`data` holds the input and receives
/// the output); byte-identical with [`relu6_f32`].
pub fn relu6_f32_in_place(data: &mut [f32]) {
    map_in_place(data, relu6_f32_op);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relu_int8() {
        let q = QuantParams {
            scale: 0.5,
            zero_point: -10,
        };
        let p = prepare_relu_s8(q, q).unwrap();
        assert_eq!(
            (p.quantized_activation_min, p.quantized_activation_max),
            (-10, 127)
        );
        let mut out = [0i8; 4];
        relu_s8(&p, &[-128, -10, -9, 127], &mut out);
        assert_eq!(out, [-10, -10, -9, 127]);
        // Rescaling: output scale twice the input's.
        let p = prepare_relu_s8(
            q,
            QuantParams {
                scale: 1.0,
                zero_point: 0,
            },
        )
        .unwrap();
        relu_s8(&p, &[-128, -10, -7, 127], &mut out);
        assert_eq!(out, [0, 0, 2, 69]); // (-7+10)/2 = 1.5 -> 2 ; 137/2 = 68.5 -> 69
    }

    #[test]
    fn relu6_int8_and_float() {
        let p = prepare_relu6_s8(QuantParams {
            scale: 0.1,
            zero_point: 0,
        })
        .unwrap();
        assert_eq!(
            (p.quantized_activation_min, p.quantized_activation_max),
            (0, 60)
        );
        let mut out = [0i8; 4];
        relu6_s8(&p, &[-5, 0, 59, 100], &mut out);
        assert_eq!(out, [0, 0, 59, 60]);
        let p = prepare_relu6_s8(QuantParams {
            scale: 0.01,
            zero_point: -128,
        })
        .unwrap();
        assert_eq!(p.quantized_activation_max, 127);
        let mut f = [0f32; 4];
        relu_f32(&[-1.0, 0.5, 7.0, -0.0], &mut f);
        assert_eq!(f, [0.0, 0.5, 7.0, 0.0]);
        relu6_f32(&[-1.0, 0.5, 7.0, 6.0], &mut f);
        assert_eq!(f, [0.0, 0.5, 6.0, 6.0]);
    }
}
