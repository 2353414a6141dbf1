//! LOGISTIC (sigmoid), int8.
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
