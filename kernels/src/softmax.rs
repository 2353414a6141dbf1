//! SOFTMAX over the last dimension.
//!
//! Follows TFLM's quantized `reference_ops::Softmax<int8_t, OutputT>` (int8 input, int8 or
//! int16 output; gemmlowp fixed-point `exp` on Q5.26 differences, Q12.19 accumulation,
//! `GetReciprocal`) and the float `reference_ops::Softmax`
//! (`exp((x - max) * beta)` in `f32`, summed in order, then divided by the sum).

use crate::fixed_point::{
    exp_on_negative_values, get_reciprocal, multiply_by_quantized_multiplier_greater_than_one,
    rescale, rounding_divide_by_pot, saturating_rounding_doubling_high_mul,
};
use crate::math::expf;
use crate::quant::{PrepareError, QuantParams, calculate_input_radius, preprocess_softmax_scaling};
use crate::util::max_f32;

/// Constant parameters of a SOFTMAX node (TFLM's `SoftmaxParams` subset plus shapes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Number of rows (product of all dims but the last).
    pub outer_size: usize,
    /// Length of the softmax axis (last dim).
    pub depth: usize,
    /// Q31 multiplier of `beta * input_scale` in Q5.26 (`PreprocessSoftmaxScaling`).
    pub input_multiplier: i32,
    /// Left shift (`>= 0`) paired with `input_multiplier`.
    pub input_left_shift: i32,
    /// Differences from the row maximum below this are treated as `exp = 0`.
    pub diff_min: i32,
    /// `beta` (float kernel only).
    pub beta: f32,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// `kScaledDiffIntegerBits`: the exp input is Q5.26.
const SCALED_DIFF_INTEGER_BITS: i32 = 5;
/// `kAccumulationIntegerBits`: the sum of exps is Q12.19.
const ACCUMULATION_INTEGER_BITS: i32 = 12;

/// Build-time parameters of a float SOFTMAX.
pub fn prepare_f32(outer_size: usize, depth: usize, beta: f32) -> Result<Params, PrepareError> {
    if depth == 0 {
        return Err(PrepareError::InvalidShape);
    }
    Ok(Params {
        outer_size,
        depth,
        input_multiplier: 0,
        input_left_shift: 0,
        diff_min: 0,
        beta,
    })
}

fn prepare_quantized(
    outer_size: usize,
    depth: usize,
    input: QuantParams,
    beta: f32,
) -> Result<Params, PrepareError> {
    if depth == 0 {
        return Err(PrepareError::InvalidShape);
    }
    let (input_multiplier, input_left_shift) =
        preprocess_softmax_scaling(beta as f64, input.scale as f64, SCALED_DIFF_INTEGER_BITS)?;
    // diff_min = -1.0 * CalculateInputRadius(...), stored into an int.
    let diff_min = -calculate_input_radius(SCALED_DIFF_INTEGER_BITS, input_left_shift, 31);
    Ok(Params {
        outer_size,
        depth,
        input_multiplier,
        input_left_shift,
        diff_min,
        beta: 0.0,
    })
}

/// Build-time parameters of an int8 -> int8 SOFTMAX (`CalculateSoftmaxParams`): the output must
/// have zero point -128 and scale exactly 1/256.
pub fn prepare_s8(
    outer_size: usize,
    depth: usize,
    input: QuantParams,
    output: QuantParams,
    beta: f32,
) -> Result<Params, PrepareError> {
    if output.zero_point != -128 || output.scale != 1.0 / 256.0 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    prepare_quantized(outer_size, depth, input, beta)
}

/// Build-time parameters of an int8 -> int16 SOFTMAX (`CalculateSoftmaxParams`): the output
/// must have zero point -32768 and scale within 0.1% of 1/65536.
pub fn prepare_s8_s16(
    outer_size: usize,
    depth: usize,
    input: QuantParams,
    output: QuantParams,
    beta: f32,
) -> Result<Params, PrepareError> {
    let (a, b) = (output.scale, 1.0f32 / 65536.0);
    let delta = if a > b { a - b } else { b - a };
    if output.zero_point != -32768 || delta > 0.001f32 * 1.0 / 65536.0 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    prepare_quantized(outer_size, depth, input, beta)
}

/// The shared quantized softmax; `output_bits`/`output_min`/`output_max` describe `O`.
#[inline(always)]
fn softmax_quantized<O>(
    p: &Params,
    input: &[i8],
    output: &mut [O],
    output_bits: i32,
    output_min: i32,
    output_max: i32,
    store: impl Fn(i32) -> O,
) {
    debug_assert_eq!(input.len(), p.outer_size * p.depth);
    debug_assert_eq!(output.len(), p.outer_size * p.depth);
    if p.depth == 0 {
        return;
    }
    let scaled_exp = |diff: i32| {
        let input_diff_rescaled = multiply_by_quantized_multiplier_greater_than_one(
            diff,
            p.input_multiplier,
            p.input_left_shift,
        );
        exp_on_negative_values::<SCALED_DIFF_INTEGER_BITS>(input_diff_rescaled)
    };
    for (in_row, out_row) in input
        .chunks_exact(p.depth)
        .zip(output.chunks_exact_mut(p.depth))
    {
        let max_in_row = in_row.iter().fold(i8::MIN, |m, &x| m.max(x)) as i32;

        let mut sum_of_exps: i32 = 0; // Q12.19
        for &x in in_row {
            let input_diff = x as i32 - max_in_row;
            if input_diff >= p.diff_min {
                sum_of_exps = sum_of_exps.wrapping_add(rescale(
                    scaled_exp(input_diff),
                    0,
                    ACCUMULATION_INTEGER_BITS,
                ));
            }
        }

        let (shifted_scale, num_bits_over_unit) =
            get_reciprocal(sum_of_exps, ACCUMULATION_INTEGER_BITS);
        // TFLM CHECKs 0 <= exponent <= 31 (it aborts otherwise, e.g. for int8 output and 512+
        // equal maxima); clamping keeps this kernel panic-free.
        let exponent = (num_bits_over_unit + 31 - output_bits).clamp(0, 31);

        for (o, &x) in out_row.iter_mut().zip(in_row) {
            let input_diff = x as i32 - max_in_row;
            *o = if input_diff >= p.diff_min {
                let exp_in_0 = scaled_exp(input_diff);
                let unsat_output = rounding_divide_by_pot(
                    saturating_rounding_doubling_high_mul(shifted_scale, exp_in_0),
                    exponent,
                );
                let shifted_output = unsat_output.wrapping_add(output_min);
                store(shifted_output.clamp(output_min, output_max))
            } else {
                store(output_min)
            };
        }
    }
}

/// Int8 -> int8 SOFTMAX (`reference_ops::Softmax<int8_t, int8_t>`).
pub fn softmax_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    softmax_quantized(p, input, output, 8, i8::MIN as i32, i8::MAX as i32, |v| {
        v as i8
    });
}

/// Int8 -> int16 SOFTMAX (`reference_ops::Softmax<int8_t, int16_t>`).
pub fn softmax_s8_s16(p: &Params, input: &[i8], output: &mut [i16]) {
    softmax_quantized(
        p,
        input,
        output,
        16,
        i16::MIN as i32,
        i16::MAX as i32,
        |v| v as i16,
    );
}

/// Float SOFTMAX (`reference_ops::Softmax`): per row, `max` (from `f32::MIN`), then
/// `e = exp((x - max) * beta)` stored and summed in order from `0.0`, then `e / sum`.
pub fn softmax_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    debug_assert_eq!(input.len(), p.outer_size * p.depth);
    debug_assert_eq!(output.len(), p.outer_size * p.depth);
    if p.depth == 0 {
        return;
    }
    for (in_row, out_row) in input
        .chunks_exact(p.depth)
        .zip(output.chunks_exact_mut(p.depth))
    {
        let max = in_row.iter().fold(f32::MIN, |m, &x| max_f32(m, x));
        let mut sum = 0.0f32;
        for (o, &x) in out_row.iter_mut().zip(in_row) {
            let e = expf((x - max) * p.beta);
            *o = e;
            sum += e;
        }
        for o in out_row.iter_mut() {
            *o /= sum;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT8: QuantParams = QuantParams {
        scale: 1.0 / 256.0,
        zero_point: -128,
    };
    const OUT16: QuantParams = QuantParams {
        scale: 1.0 / 65536.0,
        zero_point: -32768,
    };

    #[test]
    fn int8_uniform_and_peaked() {
        let input_q = QuantParams {
            scale: 0.1,
            zero_point: 0,
        };
        let p = prepare_s8(2, 4, input_q, OUT8, 1.0).unwrap();
        let mut out = [0i8; 8];
        softmax_s8(&p, &[5, 5, 5, 5, 127, -128, -128, -128], &mut out);
        // Uniform row: 0.25 -> 64 - 128 = -64.
        assert_eq!(&out[..4], &[-64, -64, -64, -64]);
        // One dominant entry (diff 25.5 -> exp(-25.5) ~ 0): ~1.0 saturates to 127.
        assert_eq!(&out[4..], &[127, -128, -128, -128]);
    }

    #[test]
    fn int8_close_to_real_softmax() {
        let input_q = QuantParams {
            scale: 0.0625,
            zero_point: -10,
        };
        let p = prepare_s8(1, 5, input_q, OUT8, 1.0).unwrap();
        let input = [-10i8, 0, 10, 20, 30];
        let mut out = [0i8; 5];
        softmax_s8(&p, &input, &mut out);
        let reals: std::vec::Vec<f64> = input.iter().map(|&x| (x as f64 + 10.0) * 0.0625).collect();
        let m = reals.iter().cloned().fold(f64::MIN, f64::max);
        let sum: f64 = reals.iter().map(|r| (r - m).exp()).sum();
        for (o, r) in out.iter().zip(&reals) {
            let expected = (r - m).exp() / sum * 256.0 - 128.0;
            assert!((*o as f64 - expected).abs() <= 1.0, "{o} {expected}");
        }
        let p16 = prepare_s8_s16(1, 5, input_q, OUT16, 1.0).unwrap();
        let mut out16 = [0i16; 5];
        softmax_s8_s16(&p16, &input, &mut out16);
        for (o, r) in out16.iter().zip(&reals) {
            let expected = (r - m).exp() / sum * 65536.0 - 32768.0;
            assert!((*o as f64 - expected).abs() <= 2.0, "{o} {expected}");
        }
    }

    #[test]
    fn diff_min_from_prepare() {
        let p = prepare_s8(
            1,
            1,
            QuantParams {
                scale: 1.0 / 16.0,
                zero_point: 0,
            },
            OUT8,
            1.0,
        )
        .unwrap();
        assert_eq!(
            (p.input_multiplier, p.input_left_shift, p.diff_min),
            (1 << 30, 23, -248)
        );
        assert!(
            prepare_s8(
                1,
                1,
                QuantParams {
                    scale: 0.1,
                    zero_point: 0
                },
                OUT16,
                1.0
            )
            .is_err()
        );
        assert!(
            prepare_s8_s16(
                1,
                1,
                QuantParams {
                    scale: 0.1,
                    zero_point: 0
                },
                OUT8,
                1.0
            )
            .is_err()
        );
    }

    #[test]
    fn float_softmax() {
        let p = prepare_f32(1, 3, 1.0).unwrap();
        let mut out = [0f32; 3];
        softmax_f32(&p, &[1.0, 2.0, 3.0], &mut out);
        let e = [(-2.0f32).exp(), (-1.0f32).exp(), 1.0];
        let s = e[0] + e[1] + e[2];
        for (o, v) in out.iter().zip(e) {
            assert!((o - v / s).abs() < 1e-7);
        }
        let p = prepare_f32(1, 2, 0.5).unwrap();
        softmax_f32(&p, &[4.0, 4.0], &mut out[..2]);
        assert_eq!(&out[..2], &[0.5, 0.5]);
    }
}
