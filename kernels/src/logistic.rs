//! LOGISTIC (sigmoid), int8 and int16.
//!
//! Int16 follows TFLM's int16 `reference_integer_ops::Logistic` (the `sigmoid(i / 24)` table
//! with linear interpolation) with the parameters of `logistic_common.cc`: zero points 0, a
//! power-of-two input scale of `2^-12` used as is (multiplier 3), any other rescaled by
//! `input_scale * 3 * 4096` doubled up to above 16383.5, and an output scale of `2^-15`
//! (by `CheckedLog2`, shared with int16 TANH: [`Params16`], `checked_log2`).
//!
//! Follows TFLM's `reference_integer_ops::Logistic` with the parameters of
//! `CalculateArithmeticOpDataLogistic`: the input (minus zero point) is rescaled to Q4.27,
//! `gemmlowp::logistic` is evaluated in fixed point and the Q0.31 result is rounded to the
//! int8 output (scale 1/256, zero point -128, which TFLM requires). Inputs beyond
//! `input_range_radius` saturate directly.

use crate::fixed_point::{logistic, multiply_by_quantized_multiplier, rounding_divide_by_pot};
use crate::quant::{
    PrepareError, QuantParams, ShiftRange, calculate_input_radius, frexp, round_f64,
};
use crate::util::in_place_by_chunks;

/// Constant parameters of an int8 LOGISTIC or TANH node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Input zero point (subtracted).
    pub input_zero_point: i32,
    /// `|input - zero_point|` at or beyond which the output saturates.
    pub input_range_radius: i32,
    /// Q31 multiplier of `input_scale * 2^27`.
    pub input_multiplier: i32,
    /// Exponent of `input_multiplier` (`frexp` exponent, may be positive).
    pub input_left_shift: i32,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// The int8 parameters shared by LOGISTIC and TANH (`kInputIntegerBits = 4`): `frexp` of
/// `input_scale * 2^27`, its significand rounded to Q31 *without* TFLM's usual renormalization,
/// and `CalculateInputRadius(4, shift, 31)`.
///
/// The shift must be in `0..=62`: `CalculateInputRadius` divides by `1 << shift` in 64 bits
/// (undefined in TFLM for a negative shift, i.e. an input scale below `2^-28`). From 31 on the
/// radius is 0 and every input saturates, so the requantization is never reached.
pub(crate) fn prepare_q4(input: QuantParams) -> Result<Params, PrepareError> {
    const Q4_INPUT: ShiftRange = ShiftRange { min: 0, max: 62 };
    let input_real_multiplier = input.scale as f64 * (1i32 << (31 - 4)) as f64;
    let (q, input_left_shift) = frexp(input_real_multiplier);
    Q4_INPUT.check(input_real_multiplier, input_left_shift)?;
    // static_cast<int32_t>(TfLiteRound(q * 2^31)); a significand rounding up to 2^31 wraps
    // like the x86 conversion TFLM's reference builds run on.
    let input_multiplier = round_f64(q * (1i64 << 31) as f64) as i64 as i32;
    Ok(Params {
        input_zero_point: input.zero_point,
        input_range_radius: calculate_input_radius(4, input_left_shift, 31),
        input_multiplier,
        input_left_shift,
    })
}

/// Build-time parameters of an int8 LOGISTIC: the output zero point must be -128.
pub fn prepare_s8(input: QuantParams, output: QuantParams) -> Result<Params, PrepareError> {
    if output.zero_point != -128 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    prepare_q4(input)
}

/// Int8 LOGISTIC (`reference_integer_ops::Logistic`).
pub fn logistic_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    debug_assert_eq!(input.len(), output.len());
    for (o, &x) in output.iter_mut().zip(input) {
        let v = x as i32 - p.input_zero_point;
        *o = if v <= -p.input_range_radius {
            i8::MIN
        } else if v >= p.input_range_radius {
            i8::MAX
        } else {
            let input_in_q4 =
                multiply_by_quantized_multiplier(v, p.input_multiplier, p.input_left_shift);
            let output_in_q0 = logistic::<4>(input_in_q4);
            let output_in_q23 = rounding_divide_by_pot(output_in_q0, 31 - 8);
            (output_in_q23 - 128).clamp(i8::MIN as i32, i8::MAX as i32) as i8
        };
    }
}

/// [`logistic_s8`] with the output overwriting the input (`data` holds the input and
/// receives the output); byte-identical with [`logistic_s8`].
pub fn logistic_s8_in_place(p: &Params, data: &mut [i8]) {
    // Through the out-of-place kernel: see `in_place_by_chunks`.
    in_place_by_chunks::<i8, 64>(data, |input, output| logistic_s8(p, input, output));
}

/// The int8 LOGISTIC of every input byte, indexed by the byte (`table[x as u8]`): TFLM's
/// arithmetic ([`logistic_s8`]) run on all 256 inputs at build time, so
/// [`logistic_s8_table`] gives the same bytes by construction with one load per element.
pub fn table_s8(p: &Params) -> [i8; 256] {
    let mut input = [0i8; 256];
    for (i, x) in input.iter_mut().enumerate() {
        *x = i as u8 as i8;
    }
    let mut table = [0i8; 256];
    logistic_s8(p, &input, &mut table);
    table
}

/// Int8 LOGISTIC through the build-time [`table_s8`]: byte-identical with [`logistic_s8`].
pub fn logistic_s8_table(table: &[i8; 256], input: &[i8], output: &mut [i8]) {
    crate::util::map(input, output, |x| table[x as u8 as usize]);
}

/// [`logistic_s8_table`] in place.
pub fn logistic_s8_table_in_place(table: &[i8; 256], data: &mut [i8]) {
    crate::util::map_in_place(data, |x| table[x as u8 as usize]);
}

/// Constant parameters of an int16 LOGISTIC or TANH node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params16 {
    /// The input multiplier (`0`: the power-of-two case, `3 << input_left_shift`).
    pub input_multiplier: i32,
    /// The rounding right shift after the multiplication.
    pub input_left_shift: i32,
}

/// `CheckedLog2`: `(|frac(log2 x)| < 1e-3, round(log2 x))`, in `float` as TFLM computes it
/// (`std::log(x) * (1.0f / std::log(2.0f))`).
pub(crate) fn checked_log2(x: f32) -> (bool, i32) {
    let inv_ln2 = 1.0f32 / f32::from_bits(0x3f31_7218); // 1 / logf(2)
    let x_log2 = crate::libm_f32::logf(x) * inv_ln2;
    let rounded = crate::quant::round_f32(x_log2);
    let frac = x_log2 - rounded;
    let r = if rounded.is_nan() {
        i32::MIN // cvttss2si
    } else {
        rounded as i32
    };
    (f32::from_bits(frac.to_bits() & 0x7fff_ffff) < 1e-3, r)
}

/// The int16 parameters of LOGISTIC (`pot_shifts` 1) and TANH (`pot_shifts` 2: TANH also
/// takes a power-of-two input scale of `2^-11` as is): zero points 0 and an output scale of
/// `2^-15`, else [`PrepareError::UnsupportedQuantization`].
pub(crate) fn prepare_q3_16(
    input: QuantParams,
    output: QuantParams,
    pot_shifts: i32,
) -> Result<Params16, PrepareError> {
    if input.zero_point != 0 || output.zero_point != 0 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    let (mut pot, log2) = checked_log2(input.scale);
    let mut input_left_shift = (15 - 3) + log2;
    pot &= (0..pot_shifts).contains(&input_left_shift);
    let input_multiplier = if pot {
        0
    } else {
        let mut multiplier = input.scale as f64 * 4096.0 * 3.0;
        input_left_shift = 0;
        while multiplier <= 32767.0 / 2.0 && input_left_shift <= 30 {
            input_left_shift += 1;
            multiplier *= 2.0;
        }
        // static_cast<int32_t>: truncation (x86: INT32_MIN beyond the range).
        if multiplier < 2_147_483_648.0 {
            multiplier as i32
        } else {
            i32::MIN
        }
    };
    let (ok, out_log2) = checked_log2(output.scale);
    if !ok || out_log2 != -15 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    Ok(Params16 {
        input_multiplier,
        input_left_shift,
    })
}

/// Build-time parameters of an int16 LOGISTIC.
pub fn prepare_s16(input: QuantParams, output: QuantParams) -> Result<Params16, PrepareError> {
    prepare_q3_16(input, output, 1)
}

/// The power-of-two case resolved: `(multiplier, shift)` as the kernels apply them.
#[inline]
pub(crate) fn resolve16(p: &Params16) -> (i32, i32) {
    if p.input_multiplier == 0 {
        (3i32.wrapping_shl(p.input_left_shift as u32), 0)
    } else {
        (p.input_multiplier, p.input_left_shift)
    }
}

#[inline]
fn logistic_s16_op(multiplier: i32, shift: i32, x: i16) -> i16 {
    let round = if shift > 0 { 1i32 << (shift - 1) } else { 0 };
    let input = (x as i32).wrapping_mul(multiplier).wrapping_add(round) >> shift;
    let abs = input.unsigned_abs();
    let uh = abs >> 9;
    let result: u32 = if uh >= 255 {
        0x7fff << 10
    } else {
        let ua = crate::lstm::SIGMOID_TABLE[uh as usize] as u32;
        let ub = crate::lstm::SIGMOID_TABLE[uh as usize + 1] as u32;
        (ua << 9).wrapping_add((abs & 0x1ff).wrapping_mul(ub.wrapping_sub(ua)))
    };
    let result = if input >= 0 {
        result.wrapping_add(1 << 9)
    } else {
        (1u32 << 25)
            .wrapping_sub(result)
            .wrapping_add(1 << 9)
            .wrapping_sub(1)
    };
    (result >> 10) as i16
}

/// Int16 LOGISTIC (the int16 `reference_integer_ops::Logistic`).
pub fn logistic_s16(p: &Params16, input: &[i16], output: &mut [i16]) {
    let (m, s) = resolve16(p);
    crate::util::map(input, output, |x| logistic_s16_op(m, s, x));
}

/// [`logistic_s16`] in place.
pub fn logistic_s16_in_place(p: &Params16, data: &mut [i16]) {
    let (m, s) = resolve16(p);
    crate::util::map_in_place(data, |x| logistic_s16_op(m, s, x));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logistic_close_to_real() {
        let input = QuantParams {
            scale: 0.1,
            zero_point: 3,
        };
        let p = prepare_s8(
            input,
            QuantParams {
                scale: 1.0 / 256.0,
                zero_point: -128,
            },
        )
        .unwrap();
        let xs: std::vec::Vec<i8> = (-128..=127).map(|v| v as i8).collect();
        let mut out = std::vec![0i8; xs.len()];
        logistic_s8(&p, &xs, &mut out);
        for (&x, &o) in xs.iter().zip(&out) {
            let r = 0.1 * (x as f64 - 3.0);
            let expected = (1.0 / (1.0 + (-r).exp()) * 256.0 - 128.0).clamp(-128.0, 127.0);
            assert!((o as f64 - expected).abs() <= 1.0, "{x} {o} {expected}");
        }
        assert_eq!(out[(3 + 128) as usize], 0); // logistic(0) = 0.5 -> 128 - 128
        // The table gives the arithmetic's bytes, out of place and in place.
        let table = table_s8(&p);
        let mut by_table = std::vec![0i8; xs.len()];
        logistic_s8_table(&table, &xs, &mut by_table);
        assert_eq!(by_table, out);
        let mut data = xs.clone();
        logistic_s8_table_in_place(&table, &mut data);
        assert_eq!(data, out);
        assert!(
            prepare_s8(
                input,
                QuantParams {
                    scale: 1.0 / 256.0,
                    zero_point: 0
                }
            )
            .is_err()
        );
    }
}
