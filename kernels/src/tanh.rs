//! TANH, int8 and int16.
//!
//! Int16 follows TFLM's int16 `reference_integer_ops::Tanh` (LOGISTIC's table at twice the
//! argument, `tanh(x) = 2 sigmoid(2x) - 1`) with the parameters of `tanh.cc` (see
//! [`crate::logistic::Params16`]; a power-of-two input scale of `2^-12` or `2^-11` is used
//! as is).
//!
//! Follows TFLM's `reference_integer_ops::Tanh` with the parameters of `tanh.cc`'s
//! `CalculateArithmeticOpData` (shared with LOGISTIC, see [`crate::logistic::Params`]): the
//! input is rescaled to Q4.27, `gemmlowp::tanh` is evaluated in fixed point and the Q0.31
//! result is rounded to Q0.7. TFLM adds no output zero point (the converter emits scale 1/128,
//! zero point 0) and does not check it, so neither does this module.

use crate::fixed_point::{multiply_by_quantized_multiplier, rounding_divide_by_pot, tanh};
use crate::logistic::{Params, prepare_q4};
use crate::quant::{PrepareError, QuantParams};
use crate::util::in_place_by_chunks;

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters of an int8 TANH.
pub fn prepare_s8(input: QuantParams) -> Result<Params, PrepareError> {
    prepare_q4(input)
}

/// Int8 TANH (`reference_integer_ops::Tanh`).
pub fn tanh_s8(p: &Params, input: &[i8], output: &mut [i8]) {
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
            let output_in_q0 = tanh::<4, 5>(input_in_q4);
            rounding_divide_by_pot(output_in_q0, 31 - 7).clamp(i8::MIN as i32, i8::MAX as i32) as i8
        };
    }
}

/// [`tanh_s8`] with the output overwriting the input (`data` holds the input and receives
/// the output); byte-identical with [`tanh_s8`].
pub fn tanh_s8_in_place(p: &Params, data: &mut [i8]) {
    // Through the out-of-place kernel: see `in_place_by_chunks`.
    in_place_by_chunks::<i8, 64>(data, |input, output| tanh_s8(p, input, output));
}

/// Build-time parameters of an int16 TANH.
pub fn prepare_s16(
    input: QuantParams,
    output: QuantParams,
) -> Result<crate::logistic::Params16, PrepareError> {
    crate::logistic::prepare_q3_16(input, output, 2)
}

/// Int16 TANH (the int16 `reference_integer_ops::Tanh`).
pub fn tanh_s16(p: &crate::logistic::Params16, input: &[i16], output: &mut [i16]) {
    let (m, s) = crate::logistic::resolve16(p);
    crate::util::map(input, output, |x| crate::lstm::tanh_i16(x, m, s));
}

/// [`tanh_s16`] in place.
pub fn tanh_s16_in_place(p: &crate::logistic::Params16, data: &mut [i16]) {
    let (m, s) = crate::logistic::resolve16(p);
    crate::util::map_in_place(data, |x| crate::lstm::tanh_i16(x, m, s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tanh_close_to_real() {
        let input = QuantParams {
            scale: 0.05,
            zero_point: -2,
        };
        let p = prepare_s8(input).unwrap();
        let xs: std::vec::Vec<i8> = (-128..=127).map(|v| v as i8).collect();
        let mut out = std::vec![0i8; xs.len()];
        tanh_s8(&p, &xs, &mut out);
        for (&x, &o) in xs.iter().zip(&out) {
            let r = 0.05 * (x as f64 + 2.0);
            let expected = (r.tanh() * 128.0).clamp(-128.0, 127.0);
            assert!((o as f64 - expected).abs() <= 1.0, "{x} {o} {expected}");
        }
        assert_eq!(out[(-2 + 128) as usize], 0);
    }
}
