//! LEAKY_RELU: `x > 0 ? x : alpha * x`.
//!
//! Follows TFLM's `leaky_relu.cc`/`leaky_relu_common.cc`: the float kernel is
//! `reference_ops::LeakyRelu` (`val > 0 ? val : val * alpha`, so NaN stays NaN and `alpha` may
//! be negative or above 1); the int8/int16 kernel is `reference_ops::QuantizeLeakyRelu`, which
//! requantizes `x - input_zero_point` with an identity multiplier (`input_scale /
//! output_scale`) when it is `>= 0` and with an alpha multiplier (`input_scale * alpha /
//! output_scale`, negative for negative `alpha`) otherwise, adds the output zero point and
//! clamps to the type's range. Both multipliers are computed in `double` from the float scales
//! and alpha before `QuantizeMultiplier`, as the pinned TFLM wheel does
//! (`static_cast<double>(input_scale) * static_cast<double>(alpha) / ...`); computing them in
//! `float` gives multipliers a few units in the 24th bit away, which changes some outputs by 1.

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::quant::{PrepareError, QuantParams, ShiftRange, quantize_multiplier};
use crate::util::{map, map_in_place};

/// Constant parameters of a LEAKY_RELU node (TFLM's `LeakyReluOpData` plus `alpha`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// `alpha` (float kernel).
    pub alpha: f32,
    /// Input zero point (subtracted).
    pub input_zero_point: i32,
    /// Output zero point (added).
    pub output_zero_point: i32,
    /// Q31 multiplier of `input_scale * alpha / output_scale` (may be negative).
    pub output_multiplier_alpha: i32,
    /// Exponent of `output_multiplier_alpha`.
    pub output_shift_alpha: i32,
    /// Q31 multiplier of `input_scale / output_scale`.
    pub output_multiplier_identity: i32,
    /// Exponent of `output_multiplier_identity`.
    pub output_shift_identity: i32,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters of a float LEAKY_RELU.
pub fn prepare_f32(alpha: f32) -> Params {
    Params {
        alpha,
        input_zero_point: 0,
        output_zero_point: 0,
        output_multiplier_alpha: 0,
        output_shift_alpha: 0,
        output_multiplier_identity: 0,
        output_shift_identity: 0,
    }
}

/// Build-time parameters of an int8 LEAKY_RELU (`CalculateOpDataLeakyRelu`):
/// `QuantizeMultiplier(double(input_scale) * double(alpha) / double(output_scale))` and
/// `QuantizeMultiplier(double(input_scale) / double(output_scale))`.
pub fn prepare_s8(
    input: QuantParams,
    output: QuantParams,
    alpha: f32,
) -> Result<Params, PrepareError> {
    prepare_quantized(input, output, alpha)
}

/// Build-time parameters of an int16 LEAKY_RELU (same computation as [`prepare_s8`]).
pub fn prepare_s16(
    input: QuantParams,
    output: QuantParams,
    alpha: f32,
) -> Result<Params, PrepareError> {
    prepare_quantized(input, output, alpha)
}

fn prepare_quantized(
    input: QuantParams,
    output: QuantParams,
    alpha: f32,
) -> Result<Params, PrepareError> {
    let (input_scale, output_scale) = (f64::from(input.scale), f64::from(output.scale));
    let alpha_multiplier = input_scale * f64::from(alpha) / output_scale;
    let identity_multiplier = input_scale / output_scale;
    let (output_multiplier_alpha, output_shift_alpha) =
        quantize_multiplier(alpha_multiplier, ShiftRange::I32)?;
    let (output_multiplier_identity, output_shift_identity) =
        quantize_multiplier(identity_multiplier, ShiftRange::I32)?;
    Ok(Params {
        alpha,
        input_zero_point: input.zero_point,
        output_zero_point: output.zero_point,
        output_multiplier_alpha,
        output_shift_alpha,
        output_multiplier_identity,
        output_shift_identity,
    })
}

/// The element function of the quantized LEAKY_RELU kernels on a widened input, clamped to
/// `lo..=hi` (the output type's range).
#[inline(always)]
fn leaky_relu_quantized_op(p: &Params, x: i32, lo: i32, hi: i32) -> i32 {
    let input_value = x.wrapping_sub(p.input_zero_point);
    let (m, s) = if input_value >= 0 {
        (p.output_multiplier_identity, p.output_shift_identity)
    } else {
        (p.output_multiplier_alpha, p.output_shift_alpha)
    };
    let unclamped = p
        .output_zero_point
        .wrapping_add(multiply_by_quantized_multiplier(input_value, m, s));
    unclamped.clamp(lo, hi)
}

/// The element function of the int8 LEAKY_RELU kernels.
#[inline(always)]
fn leaky_relu_s8_op(p: &Params, x: i8) -> i8 {
    leaky_relu_quantized_op(p, x as i32, i8::MIN as i32, i8::MAX as i32) as i8
}

/// The element function of the int16 LEAKY_RELU kernels.
#[inline(always)]
fn leaky_relu_s16_op(p: &Params, x: i16) -> i16 {
    leaky_relu_quantized_op(p, x as i32, i16::MIN as i32, i16::MAX as i32) as i16
}

/// Int8 LEAKY_RELU (`reference_ops::QuantizeLeakyRelu<int8_t>`).
pub fn leaky_relu_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    map(input, output, |x| leaky_relu_s8_op(p, x));
}

/// [`leaky_relu_s8`] with the output overwriting the input (`data` holds the input and
/// receives the output); byte-identical with [`leaky_relu_s8`].
pub fn leaky_relu_s8_in_place(p: &Params, data: &mut [i8]) {
    map_in_place(data, |x| leaky_relu_s8_op(p, x));
}

/// Int16 LEAKY_RELU (`reference_ops::QuantizeLeakyRelu<int16_t>`).
pub fn leaky_relu_s16(p: &Params, input: &[i16], output: &mut [i16]) {
    map(input, output, |x| leaky_relu_s16_op(p, x));
}

/// [`leaky_relu_s16`] with the output overwriting the input (`data` holds the input and
/// receives the output); byte-identical with [`leaky_relu_s16`].
pub fn leaky_relu_s16_in_place(p: &Params, data: &mut [i16]) {
    map_in_place(data, |x| leaky_relu_s16_op(p, x));
}

/// The element function of the float LEAKY_RELU kernels: `x > 0 ? x : x * alpha`.
#[inline(always)]
fn leaky_relu_f32_op(p: &Params, x: f32) -> f32 {
    if x > 0.0 { x } else { x * p.alpha }
}

/// Float LEAKY_RELU (`reference_ops::LeakyRelu`): `x > 0 ? x : x * alpha`.
pub fn leaky_relu_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    map(input, output, |x| leaky_relu_f32_op(p, x));
}

/// [`leaky_relu_f32`] with the output overwriting the input (`data` holds the input and
/// receives the output); byte-identical with [`leaky_relu_f32`].
pub fn leaky_relu_f32_in_place(p: &Params, data: &mut [f32]) {
    map_in_place(data, |x| leaky_relu_f32_op(p, x));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_and_int8() {
        let p = prepare_f32(0.2);
        let mut out = [0.0f32; 3];
        leaky_relu_f32(&p, &[1.0, -1.0, -0.0], &mut out);
        assert_eq!(out, [1.0, -0.2, -0.0]);

        let q = QuantParams {
            scale: 0.5,
            zero_point: 1,
        };
        let p = prepare_s8(q, q, 0.5).unwrap();
        let mut out = [0i8; 4];
        leaky_relu_s8(&p, &[1, 5, -3, -128], &mut out);
        // (-3 - 1) * 0.5 = -2 -> -1; (-129) * 0.5 = -64.5 -> -64 (ties up) -> -63
        assert_eq!(out, [1, 5, -1, -63]);
    }
}
