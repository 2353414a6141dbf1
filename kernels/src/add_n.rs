//! ADD_N: the elementwise sum of two or more same-shaped tensors (no broadcasting).
//!
//! Follows TFLM's `add_n.cc` and `reference_ops::AddN`: float32 sums from `0.0` in input
//! order (`x = 0; x += in_j[i]`, so all `-0.0` inputs give `+0.0`); int8 (all inputs with one
//! quantization) rescales each input as ADD does (`(q - zp) << 20` times the multiplier of
//! `0.5`), adds them to a start value that TFLM takes as the rescaled *input offset*
//! (`-zero_point`, not 0 as its comment says; repeated here), then requantizes with
//! `2 * s_in / (2^20 * s_out)`, clamped to int8.

use crate::fixed_point::multiply_by_quantized_multiplier_smaller_than_one_exp as mul_exp;
use crate::quant::{PrepareError, QuantParams, quantize_multiplier_smaller_than_one_exp};

/// TFLM's `kAddNIntegerShift`.
pub const LEFT_SHIFT: i32 = 20;

/// Constant parameters of an int8 ADD_N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub input_offset: i32,
    pub output_offset: i32,
    pub left_shift: i32,
    pub input_multiplier: i32,
    pub input_shift: i32,
    pub output_multiplier: i32,
    pub output_shift: i32,
}

/// The kernels need no scratch memory (TFLM's scratch holds the input pointers).
pub const fn scratch_bytes() -> usize {
    0
}

/// `CalculateOpData` for int8 (inputs' common quantization `input`).
pub fn prepare_s8(input: QuantParams, output: QuantParams) -> Result<Params, PrepareError> {
    let twice_max = 2.0 * input.scale as f64;
    let real_input = input.scale as f64 / twice_max;
    let real_output = twice_max / ((1i32 << LEFT_SHIFT) as f64 * output.scale as f64);
    let (input_multiplier, input_shift) = quantize_multiplier_smaller_than_one_exp(real_input)?;
    let (output_multiplier, output_shift) = quantize_multiplier_smaller_than_one_exp(real_output)?;
    Ok(Params {
        input_offset: input.zero_point.wrapping_neg(),
        output_offset: output.zero_point,
        left_shift: LEFT_SHIFT,
        input_multiplier,
        input_shift,
        output_multiplier,
        output_shift,
    })
}

/// Float ADD_N: `output[i] = 0 + inputs[0][i] + inputs[1][i] + ...`.
///
/// One pass over the output per input (the same additions in the same order per element as
/// TFLM's loop, which runs over the inputs inside; this order lets the passes vectorize).
pub fn add_n_f32(inputs: &[&[f32]], output: &mut [f32]) {
    debug_assert!(inputs.iter().all(|x| x.len() == output.len()));
    let Some((first, rest)) = inputs.split_first() else {
        output.fill(0.0);
        return;
    };
    for (o, &a) in output.iter_mut().zip(first.iter()) {
        *o = 0.0 + a;
    }
    for input in rest {
        for (o, &a) in output.iter_mut().zip(input.iter()) {
            *o += a;
        }
    }
}

/// Int8 ADD_N.
///
/// The inputs' rescaling is a multiply by exactly `0.5` in every model ([`prepare_s8`]
/// quantizes `s / (2 s)`, which is `0.5` in `f64` for every positive finite scale:
/// multiplier `2^30`, exponent 0). Then `scale(v) = SRDHM(v << 20, 2^30) = v << 19` exactly
/// for every `v = q - zero_point` in `-255..=255` (`v << 20` fits an `i32`, the doubled
/// product `v * 2^51` is a multiple of `2^31`, so the rounding nudge never carries), and
/// since a left shift is a multiplication modulo `2^32`, TFLM's wrapping `i32` sum
/// `scale(offset) + sum_j scale(offset + q_j)` equals `(offset * (n + 1) + sum_j q_j) << 19`
/// modulo `2^32`: the inputs are summed as small integers, a block of `S8_BLOCK` outputs at
/// a time, one input after the other (contiguous, vectorizable), and each output rescaled
/// once. Any other multiplier (not produced by [`prepare_s8`]) takes TFLM's per-term form.
pub fn add_n_s8(p: &Params, inputs: &[&[i8]], output: &mut [i8]) {
    debug_assert!(inputs.iter().all(|x| x.len() == output.len()));
    let finish = |acc: i32| -> i8 {
        let raw = mul_exp(acc, p.output_multiplier, p.output_shift).wrapping_add(p.output_offset);
        raw.clamp(i8::MIN as i32, i8::MAX as i32) as i8
    };
    if p.input_multiplier == 1 << 30 && p.input_shift == 0 && p.left_shift == LEFT_SHIFT {
        // `offset * (n + 1)`, wrapping as the sum it stands for.
        let base = p
            .input_offset
            .wrapping_mul((inputs.len() as i32).wrapping_add(1));
        let mut at = 0;
        for oblk in output.chunks_mut(S8_BLOCK) {
            let mut acc = [base; S8_BLOCK];
            let acc = &mut acc[..oblk.len()];
            for input in inputs {
                let Some(x) = input.get(at..at + acc.len()) else {
                    return;
                };
                for (a, &q) in acc.iter_mut().zip(x) {
                    *a = a.wrapping_add(q as i32);
                }
            }
            for (o, &a) in oblk.iter_mut().zip(acc.iter()) {
                *o = finish(a.wrapping_mul(1 << (LEFT_SHIFT - 1)));
            }
            at += oblk.len();
        }
        return;
    }
    let scale = |v: i32| {
        mul_exp(
            v.wrapping_mul(1i32 << p.left_shift),
            p.input_multiplier,
            p.input_shift,
        )
    };
    let start = scale(p.input_offset);
    for (i, o) in output.iter_mut().enumerate() {
        let mut acc = start;
        for input in inputs {
            acc = acc.wrapping_add(scale(p.input_offset.wrapping_add(input[i] as i32)));
        }
        *o = finish(acc);
    }
}

/// Outputs summed together by [`add_n_s8`].
const S8_BLOCK: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn sums() {
        let mut o = [9.0f32; 2];
        add_n_f32(&[&[1.0, -0.0], &[2.0, -0.0], &[0.5, -0.0]], &mut o);
        assert_eq!(o, [3.5, 0.0]);
        assert!(o[1].is_sign_positive());
        let q = QuantParams {
            scale: 0.5,
            zero_point: 0,
        };
        let p = prepare_s8(q, q).unwrap();
        let mut o8 = [0i8; 2];
        add_n_s8(&p, &[&[1, 100], &[2, 100], &[3, -10]], &mut o8);
        assert_eq!(o8, [6, 127]);
    }

    /// TFLM's per-term form, as `add_n_s8` runs it for other multipliers.
    fn per_term(p: &Params, inputs: &[&[i8]], output: &mut [i8]) {
        let scale = |v: i32| {
            mul_exp(
                v.wrapping_mul(1 << p.left_shift),
                p.input_multiplier,
                p.input_shift,
            )
        };
        for (i, o) in output.iter_mut().enumerate() {
            let mut acc = scale(p.input_offset);
            for x in inputs {
                acc = acc.wrapping_add(scale(p.input_offset.wrapping_add(x[i] as i32)));
            }
            let raw =
                mul_exp(acc, p.output_multiplier, p.output_shift).wrapping_add(p.output_offset);
            *o = raw.clamp(-128, 127) as i8;
        }
    }

    #[test]
    fn summed_form_equals_per_term_form() {
        // Every input value against every zero point, with up to 9 inputs and blocks of
        // several lengths (a partial last block included).
        let mut seed = 7u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 24) as i8
        };
        for (scale_in, scale_out) in [(0.5f32, 0.5f32), (0.013, 0.041), (0.2, 0.0007), (1e-3, 3.0)]
        {
            for zp in [-128, -37, 0, 1, 127] {
                let q_in = QuantParams {
                    scale: scale_in,
                    zero_point: zp,
                };
                let q_out = QuantParams {
                    scale: scale_out,
                    zero_point: -zp / 2,
                };
                let p = prepare_s8(q_in, q_out).unwrap();
                assert_eq!((p.input_multiplier, p.input_shift), (1 << 30, 0));
                for (n, len) in [(2, 256), (5, 64), (9, 131), (3, 1)] {
                    let data: Vec<Vec<i8>> = (0..n)
                        .map(|j| {
                            (0..len)
                                .map(|i| {
                                    if j == 0 {
                                        (i % 256) as u8 as i8
                                    } else {
                                        next()
                                    }
                                })
                                .collect()
                        })
                        .collect();
                    let refs: Vec<&[i8]> = data.iter().map(Vec::as_slice).collect();
                    let (mut fast, mut slow) = (vec![0i8; len], vec![1i8; len]);
                    add_n_s8(&p, &refs, &mut fast);
                    per_term(&p, &refs, &mut slow);
                    assert_eq!(
                        fast, slow,
                        "scales {scale_in}/{scale_out}, zp {zp}, {n} inputs"
                    );
                }
            }
        }
    }
}
