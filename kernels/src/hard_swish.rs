//! HARD_SWISH: `x * relu6(x + 3) / 6`.
//!
//! Follows TFLM's `hard_swish.cc`/`hard_swish_common.cc`: the float kernel is
//! `reference_ops::HardSwish<float>` (`in * min(6, max(0, in + 3)) / 6` in `f32`, C++
//! `std::min`/`std::max` semantics); the int8 kernel is the quantized
//! `reference_ops::HardSwish<int8_t>`, an int16 fixed-point computation: the input (minus
//! zero point) is put on a "hires" scale (`<< 7`), a "relu-ish" factor in `[0, 1]` is derived
//! from it with a saturating 16-bit multiplier, multiplied (`SaturatingDoublingHighMul`,
//! truncating) with the input rescaled to the output scale, and rounded down by the output
//! exponent. Both int16 multipliers come from `QuantizeMultiplier` of `float` ratios followed
//! by `DownScaleInt32ToInt16Multiplier`.

use crate::quant::{PrepareError, QuantParams, ShiftRange, quantize_multiplier};
use crate::util::{map, map_in_place};

/// Constant parameters of an int8 HARD_SWISH node (TFLM's `HardSwishParams`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Input zero point (subtracted).
    pub input_zero_point: i32,
    /// Output zero point (added).
    pub output_zero_point: i32,
    /// Q15 multiplier of `(input_scale / 128) / (3 / 32768)`.
    pub reluish_multiplier_fixedpoint_int16: i16,
    /// Exponent of the relu-ish multiplier (`> 0` left shift, `< 0` right shift).
    pub reluish_multiplier_exponent: i32,
    /// Q15 multiplier of `(input_scale / 128) / output_scale`.
    pub output_multiplier_fixedpoint_int16: i16,
    /// Exponent (`<= 0`) of the output multiplier.
    pub output_multiplier_exponent: i32,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// `tflite::DownScaleInt32ToInt16Multiplier`.
fn down_scale_int32_to_int16_multiplier(m: i32) -> i16 {
    const ROUNDING_OFFSET: i32 = 1 << 15;
    if m >= i32::MAX - ROUNDING_OFFSET {
        return i16::MAX;
    }
    ((m + ROUNDING_OFFSET) >> 16) as i16
}

/// Build-time parameters of an int8 HARD_SWISH (`HardSwishPrepare`). Fails like TFLM when the
/// output multiplier would need a left shift, and (where TFLM's fixed-point helpers would
/// leave their defined range) for shifts beyond 15 bits, which need scales more than `2^15`
/// apart.
pub fn prepare_s8(input: QuantParams, output: QuantParams) -> Result<Params, PrepareError> {
    let hires_input_scale = (1.0f32 / 128.0) * input.scale;
    let reluish_scale = 3.0f32 / 32768.0;
    let output_multiplier = (hires_input_scale / output.scale) as f64;
    let reluish_multiplier = (hires_input_scale / reluish_scale) as f64;
    // TFLM ensures `output_multiplier_exponent <= 0`; the int16 helpers shift by at most 15
    // bits right (and the reluish value 16 bits left, one bit of it separately).
    const OUTPUT: ShiftRange = ShiftRange { min: -15, max: 0 };
    const RELUISH: ShiftRange = ShiftRange { min: -15, max: 16 };
    let (om, output_multiplier_exponent) = quantize_multiplier(output_multiplier, OUTPUT)?;
    let (rm, reluish_multiplier_exponent) = quantize_multiplier(reluish_multiplier, RELUISH)?;
    if om < 0 || rm < 0 {
        return Err(PrepareError::MultiplierOutOfRange);
    }
    Ok(Params {
        input_zero_point: input.zero_point,
        output_zero_point: output.zero_point,
        reluish_multiplier_fixedpoint_int16: down_scale_int32_to_int16_multiplier(rm),
        reluish_multiplier_exponent,
        output_multiplier_fixedpoint_int16: down_scale_int32_to_int16_multiplier(om),
        output_multiplier_exponent,
    })
}

/// `reference_ops::SaturatingLeftShift`: `value * 2^amount` saturated to `i16`.
#[inline]
fn saturating_left_shift(value: i16, amount: i32) -> i16 {
    let result = value as i64 * (1i64 << amount);
    result.clamp(i16::MIN as i64, i16::MAX as i64) as i16
}

/// `gemmlowp::SaturatingRoundingDoublingHighMul` for `int16_t`.
#[inline]
fn saturating_rounding_doubling_high_mul_i16(a: i16, b: i16) -> i16 {
    if a == b && a == i16::MIN {
        return i16::MAX;
    }
    let ab = a as i32 * b as i32;
    let nudge: i32 = if ab >= 0 { 1 << 14 } else { 1 - (1 << 14) };
    // C++ `/` truncates toward zero, as Rust's does.
    ((ab + nudge) / (1 << 15)) as i16
}

/// `reference_ops::SaturatingDoublingHighMul` (`SQDMULH`: truncating toward zero).
#[inline]
fn saturating_doubling_high_mul_i16(a: i16, b: i16) -> i16 {
    if a == b && a == i16::MIN {
        return i16::MAX;
    }
    ((a as i32 * b as i32) / (1 << 15)) as i16
}

/// `gemmlowp::RoundingDivideByPOT` for `int16_t` (`exponent` in `0..=15`).
#[inline]
fn rounding_divide_by_pot_i16(x: i16, exponent: i32) -> i16 {
    crate::fixed_point::rounding_divide_by_pot_i16(x, exponent)
}

/// The element function of the int8 HARD_SWISH kernels.
#[inline(always)]
fn hard_swish_s8_op(p: &Params, x: i8) -> i8 {
    let input_value = (x as i32 - p.input_zero_point) as i16;
    let input_value_on_hires_input_scale = (input_value as i32 * (1 << 7)) as i16;
    let input_value_on_preshift_output_scale = saturating_rounding_doubling_high_mul_i16(
        input_value_on_hires_input_scale,
        p.output_multiplier_fixedpoint_int16,
    );
    let mut reluish_value = input_value_on_hires_input_scale;
    if p.reluish_multiplier_exponent > 0 {
        reluish_value = saturating_left_shift(reluish_value, p.reluish_multiplier_exponent - 1);
    }
    reluish_value = saturating_rounding_doubling_high_mul_i16(
        reluish_value,
        p.reluish_multiplier_fixedpoint_int16,
    );
    if p.reluish_multiplier_exponent > 0 {
        reluish_value = saturating_left_shift(reluish_value, 1);
    }
    if p.reluish_multiplier_exponent < 0 {
        reluish_value = rounding_divide_by_pot_i16(reluish_value, -p.reluish_multiplier_exponent);
    }
    reluish_value = ((reluish_value as i32 + (1 << 15)) >> 1) as i16;
    let preshift_output_value =
        saturating_doubling_high_mul_i16(reluish_value, input_value_on_preshift_output_scale);
    let mut output_value =
        rounding_divide_by_pot_i16(preshift_output_value, -p.output_multiplier_exponent);
    // int16_t += int32_t: the sum is narrowed back to int16_t.
    output_value = (output_value as i32 + p.output_zero_point) as i16;
    output_value = output_value.min(i8::MAX as i16).max(i8::MIN as i16);
    output_value as i8
}

/// Int8 HARD_SWISH (`reference_ops::HardSwish<int8_t>` with `HardSwishParams`).
pub fn hard_swish_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    // An explicit loop rather than `map`: with it LLVM emits the same code as for the loop
    // this kernel had before the in-place variant; with `map` it scheduled it differently.
    debug_assert_eq!(input.len(), output.len());
    for (o, &x) in output.iter_mut().zip(input) {
        *o = hard_swish_s8_op(p, x);
    }
}

/// [`hard_swish_s8`] with the output overwriting the input (`data` holds the input and
/// receives the output); byte-identical with [`hard_swish_s8`].
pub fn hard_swish_s8_in_place(p: &Params, data: &mut [i8]) {
    map_in_place(data, |x| hard_swish_s8_op(p, x));
}

/// The element function of the float HARD_SWISH kernels.
#[inline(always)]
fn hard_swish_f32_op(x: f32) -> f32 {
    let t = x + 3.0;
    // std::max(0.f, t) = (0 < t) ? t : 0; std::min(6.f, m) = (m < 6) ? m : 6.
    let m = if 0.0 < t { t } else { 0.0 };
    let m = if m < 6.0 { m } else { 6.0 };
    x * m / 6.0
}

/// Float HARD_SWISH (`reference_ops::HardSwish<float>`):
/// `in * std::min(6.f, std::max(0.f, in + 3)) / 6`.
pub fn hard_swish_f32(input: &[f32], output: &mut [f32]) {
    map(input, output, hard_swish_f32_op);
}

/// [`hard_swish_f32`] with the output overwriting the input (`data` holds the input and
/// receives the output); byte-identical with [`hard_swish_f32`].
pub fn hard_swish_f32_in_place(data: &mut [f32]) {
    map_in_place(data, hard_swish_f32_op);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int8_is_close_to_real() {
        let (i, o) = (
            QuantParams {
                scale: 0.05,
                zero_point: -10,
            },
            QuantParams {
                scale: 0.03,
                zero_point: -50,
            },
        );
        let p = prepare_s8(i, o).unwrap();
        for x in -128..=127i32 {
            let mut out = [0i8];
            hard_swish_s8(&p, &[x as i8], &mut out);
            let r = 0.05 * (x + 10) as f32;
            let want = r * (r + 3.0).clamp(0.0, 6.0) / 6.0 / 0.03 - 50.0;
            let want = want.clamp(-128.0, 127.0);
            assert!(
                (out[0] as f32 - want).abs() <= 1.5,
                "{x}: {} {want}",
                out[0]
            );
        }
        let mut f = [0.0f32; 4];
        hard_swish_f32(&[-4.0, 0.0, 1.0, 4.0], &mut f);
        assert_eq!(f, [-0.0, 0.0, 1.0 * 4.0 / 6.0, 4.0]);
    }
}
