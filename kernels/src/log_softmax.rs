//! LOG_SOFTMAX over the last dimension, float32 and int8 (TFLM's `log_softmax.cc`).
//!
//! Int8: `reference_ops::LogSoftmaxQuantized` with the parameters of `CalculateOpData`
//! (`PreprocessLogSoftmaxScalingExp` with beta 1 and 5 integer bits, `diff_min` from
//! `CalculateInputRadius`): the exponentials of the scaled differences from the row maximum
//! summed in Q12, their log by `log_x_for_x_greater_than_or_equal_to_1` in Q5, each output
//! `(diff - log) / 2^22 + 127` clamped, or -128 below the adjusted minimum. The output
//! quantization must be TFLM's: scale 16/256, zero point 127.
//!
//! Float32
//! `reference_ops::LogSoftmax<float>`): per row the maximum (`std::max` from `lowest()`),
//! the sum of `std::exp(x - max)` in order, then `x - max - std::log(sum)`, with glibc's
//! `expf` and `logf` ([`crate::math::expf`], [`crate::libm_f32::logf`]); bit-identical,
//! NaN payloads included. On the host with FMA (x86-64, detected at run time) the same with
//! the fused `expf` and `logf` of glibc's `-fma` build on the CPU's instruction (see
//! [`crate::libm_f32`]), the rows taken in groups of 8 so that their `logf`s overlap; the
//! unit test `kernel_is_the_portable_row_loop` compares that path with the portable one.

use crate::fixed_point::{
    exp_on_negative_values, multiply_by_quantized_multiplier, one_over_one_plus_x_for_x_in_0_1,
    rescale, rounding_divide_by_pot, rounding_half_sum,
    saturating_rounding_doubling_high_mul as mul, saturating_rounding_multiply_by_pot as pot,
};
use crate::libm_f32::{logf, logf_fused, with_host_fma};
use crate::math::{expf, expf_fused};
use crate::quant::{
    PrepareError, QuantParams, calculate_input_radius, preprocess_softmax_scaling,
    quantize_multiplier_smaller_than_one_exp,
};
use crate::util::max_f32;

/// Constant parameters of a LOG_SOFTMAX node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The product of every dimension but the last.
    pub outer: usize,
    /// The last dimension (at least 1).
    pub depth: usize,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the input's shape (rank at least 1).
pub fn prepare(shape: &[usize]) -> Option<Params> {
    let (&depth, lead) = shape.split_last()?;
    (depth > 0).then(|| Params {
        outer: lead.iter().product(),
        depth,
    })
}

/// `a + b` with x86's NaN rule for the operand order TFLM's C++ has: of two NaNs, the first
/// (`a`) is the result. (LLVM may swap the operands of an addition, which changes which NaN
/// survives: a row holding a NaN and an infinity sums a NaN input and the default NaN of
/// `inf - inf`.)
#[inline]
fn add_in_order(a: f32, b: f32) -> f32 {
    if a.is_nan() { a } else { a + b }
}

/// Float32 LOG_SOFTMAX.
pub fn log_softmax_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    debug_assert_eq!(input.len(), p.outer * p.depth);
    debug_assert_eq!(output.len(), p.outer * p.depth);
    with_host_fma(
        (input, output),
        |(input, output)| log_softmax_rows(p.depth, input, output, expf, logf),
        #[inline(always)]
        |m, (input, output)| {
            log_softmax_row_groups(
                p.depth,
                input,
                output,
                #[inline(always)]
                |x| expf_fused(m, x),
                #[inline(always)]
                |x| logf_fused(m, x),
            )
        },
    );
}

/// [`log_softmax_f32`]'s rows of `depth` elements with the C library's `exp` and `log`.
#[inline(always)]
fn log_softmax_rows(
    depth: usize,
    input: &[f32],
    output: &mut [f32],
    exp: impl Fn(f32) -> f32,
    log: impl Fn(f32) -> f32,
) {
    for (row, out) in input
        .chunks_exact(depth)
        .zip(output.chunks_exact_mut(depth))
    {
        let mut max = f32::MIN;
        for &x in row {
            max = max_f32(max, x);
        }
        let mut sum = 0.0f32;
        for &x in row {
            sum = add_in_order(sum, exp(x - max));
        }
        let log_sum = log(sum);
        for (o, &x) in out.iter_mut().zip(row) {
            *o = x - max - log_sum;
        }
    }
}

/// [`log_softmax_rows`] in groups of [`GROUP`] rows: the maxima and sums of the group's
/// rows, then their logarithms, then the outputs. The same operations on each row (so the
/// same bits), but the group's `log`s, which wait for whole rows of `exp`s, are independent
/// of each other and overlap in the pipeline (the host's fused path, where rows are short).
#[inline(always)]
fn log_softmax_row_groups(
    depth: usize,
    input: &[f32],
    output: &mut [f32],
    exp: impl Fn(f32) -> f32,
    log: impl Fn(f32) -> f32,
) {
    for (rows, outs) in input
        .chunks(GROUP * depth)
        .zip(output.chunks_mut(GROUP * depth))
    {
        let mut maxes = [f32::MIN; GROUP];
        let mut logs = [0.0f32; GROUP];
        for ((row, max), log_sum) in rows.chunks_exact(depth).zip(&mut maxes).zip(&mut logs) {
            for &x in row {
                *max = max_f32(*max, x);
            }
            let mut sum = 0.0f32;
            for &x in row {
                sum = add_in_order(sum, exp(x - *max));
            }
            *log_sum = sum;
        }
        for log_sum in &mut logs {
            *log_sum = log(*log_sum);
        }
        for (((row, out), &max), &log_sum) in rows
            .chunks_exact(depth)
            .zip(outs.chunks_exact_mut(depth))
            .zip(&maxes)
            .zip(&logs)
        {
            for (o, &x) in out.iter_mut().zip(row) {
                *o = x - max - log_sum;
            }
        }
    }
}

/// The rows [`log_softmax_row_groups`] takes at a time.
const GROUP: usize = 8;

/// Constant parameters of an int8 LOG_SOFTMAX node (`LogSoftmaxOpData`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamsS8 {
    pub outer: usize,
    pub depth: usize,
    pub input_multiplier: i32,
    pub input_left_shift: i32,
    pub reverse_scaling_divisor: i32,
    /// The left shift of `reverse_scaling_divisor` (TFLM stores its negation).
    pub reverse_scaling_left_shift: i32,
    pub diff_min: i32,
}

/// Build-time parameters of an int8 LOG_SOFTMAX: the output must have scale 16/256 and zero
/// point 127 (else [`PrepareError::UnsupportedQuantization`]).
pub fn prepare_s8(
    shape: &[usize],
    input: QuantParams,
    output: QuantParams,
) -> Result<ParamsS8, PrepareError> {
    if output.scale != 16.0 / 256.0 || output.zero_point != 127 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    let p = prepare(shape).ok_or(PrepareError::InvalidShape)?;
    let (input_multiplier, input_left_shift) =
        preprocess_softmax_scaling(1.0, input.scale as f64, 5)?;
    let real_reverse_scaling_divisor =
        (1i64 << (31 - input_left_shift)) as f64 / input_multiplier as f64;
    let (reverse_scaling_divisor, reverse_scaling_left_shift) =
        quantize_multiplier_smaller_than_one_exp(real_reverse_scaling_divisor)?;
    Ok(ParamsS8 {
        outer: p.outer,
        depth: p.depth,
        input_multiplier,
        input_left_shift,
        reverse_scaling_divisor,
        reverse_scaling_left_shift,
        diff_min: -calculate_input_radius(5, input_left_shift, 31),
    })
}

/// `log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>` (TFLite's `common.h`): `log(x)` of a
/// Q12.19 `x >= 1`, in Q5.26.
fn log_q12_to_q5(input: i32) -> i32 {
    const INPUT_BITS: i32 = 12;
    const ACCUM_BITS: i32 = 6; // OutputIntegerBits + 1
    const LOG_2: i32 = 1_488_522_236;
    const SQRT_SQRT_HALF: i32 = 1_805_811_301;
    const SQRT_HALF: i32 = 1_518_500_250;
    const ONE_QUARTER: i32 = 536_870_912;
    const ALPHA_N: i32 = 117_049_297;
    const ALPHA_D: i32 = 127_690_142;
    const ALPHA_I: i32 = 1_057_819_769;
    const ALPHA_F: i32 = 638_450_708;
    let shifted_quarter = rescale(ONE_QUARTER, 0, ACCUM_BITS);
    let z_a = input;
    let z_a_headroom_plus_1 = (z_a as u32).leading_zeros() as i32;
    let r_a_tmp = pot(z_a, z_a_headroom_plus_1 - 1);
    let r_a_raw = pot(mul(r_a_tmp, SQRT_HALF), 1);
    let z_a_pow_2_adj =
        pot(INPUT_BITS - z_a_headroom_plus_1, 31 - ACCUM_BITS).saturating_add(shifted_quarter);
    let z_b = mul(z_a, SQRT_HALF);
    let z_b_headroom = (z_b as u32).leading_zeros() as i32 - 1;
    let r_b_raw = pot(z_a, z_b_headroom);
    let z_b_pow_2_adj =
        pot(INPUT_BITS - z_b_headroom, 31 - ACCUM_BITS).saturating_sub(shifted_quarter);
    let r = r_a_raw.min(r_b_raw);
    let z_pow_2_adj = z_a_pow_2_adj.max(z_b_pow_2_adj);
    let p = rounding_half_sum(r, SQRT_SQRT_HALF);
    let mut q = r.wrapping_sub(SQRT_SQRT_HALF);
    q = q.wrapping_add(q);
    let common_sq = mul(q, q);
    let num = mul(q, r).wrapping_add(mul(mul(q, common_sq), ALPHA_N));
    let denom_minus_one_0 = mul(
        p,
        ALPHA_I
            .wrapping_add(q)
            .wrapping_add(mul(ALPHA_D, common_sq)),
    )
    .wrapping_add(mul(ALPHA_F, q));
    let recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one_0);
    let num_scaled = rescale(num, 0, ACCUM_BITS);
    rescale(
        mul(z_pow_2_adj, LOG_2).wrapping_add(mul(num_scaled, recip_denom)),
        ACCUM_BITS,
        5,
    )
}

/// Int8 LOG_SOFTMAX (`reference_ops::LogSoftmaxQuantized<int8_t>`).
pub fn log_softmax_s8(p: &ParamsS8, input: &[i8], output: &mut [i8]) {
    debug_assert_eq!(input.len(), p.outer * p.depth);
    debug_assert_eq!(output.len(), p.outer * p.depth);
    let scaled =
        |diff: i32| multiply_by_quantized_multiplier(diff, p.input_multiplier, p.input_left_shift);
    for (row, out) in input
        .chunks_exact(p.depth)
        .zip(output.chunks_exact_mut(p.depth))
    {
        let max = row.iter().fold(i8::MIN, |m, &x| m.max(x)) as i32;
        let mut sum_q12 = 0i32;
        for &x in row {
            let diff = x as i32 - max;
            if diff >= p.diff_min {
                sum_q12 =
                    sum_q12.wrapping_add(rescale(exp_on_negative_values::<5>(scaled(diff)), 0, 12));
            }
        }
        let log_sum_q5 = log_q12_to_q5(sum_q12);
        let shifted = log_sum_q5.wrapping_add(i32::MIN);
        let adjusted_diff_min = (p.diff_min - 1).max(multiply_by_quantized_multiplier(
            shifted,
            p.reverse_scaling_divisor,
            p.reverse_scaling_left_shift,
        ));
        for (o, &x) in out.iter_mut().zip(row) {
            let diff = x as i32 - max;
            *o = if diff > adjusted_diff_min {
                let v = rounding_divide_by_pot(scaled(diff).wrapping_sub(log_sum_q5), 31 - 5 - 4)
                    .wrapping_add(127);
                v.clamp(-128, 127) as i8
            } else {
                i8::MIN
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sum_to_one_in_exp() {
        let p = prepare(&[2, 3]).unwrap();
        let x = [1.0f32, 2.0, 3.0, -5.0, 0.0, 5.0];
        let mut y = [0.0f32; 6];
        log_softmax_f32(&p, &x, &mut y);
        for r in y.chunks(3) {
            let s: f32 = r.iter().map(|v| v.exp()).sum();
            assert!((s - 1.0).abs() < 1e-6);
        }
        assert!(prepare(&[]).is_none() && prepare(&[2, 0]).is_none());
    }

    /// The kernel (the host's fused path where it has FMA, grouped rows) against the
    /// portable row loop with the portable `expf` and `logf`, bit for bit: every depth up to
    /// 20 and row counts around the group size, with infinities and NaNs in some rows.
    #[test]
    fn kernel_is_the_portable_row_loop() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for depth in 1..=20 {
            for outer in [1, 3, 7, 8, 9, 17] {
                let n = depth * outer;
                let x: std::vec::Vec<f32> = (0..n)
                    .map(|i| match next() % 97 {
                        0 if i % 5 == 0 => f32::INFINITY,
                        1 if i % 7 == 0 => f32::NEG_INFINITY,
                        2 if i % 3 == 0 => f32::from_bits(0x7fc0_1234),
                        _ => (next() % 20_000) as f32 / 100.0 - 100.0,
                    })
                    .collect();
                let p = prepare(&[outer, depth]).unwrap();
                let mut got = std::vec![0.0f32; n];
                log_softmax_f32(&p, &x, &mut got);
                let mut want = std::vec![0.0f32; n];
                log_softmax_rows(depth, &x, &mut want, expf, logf);
                for i in 0..n {
                    assert_eq!(
                        got[i].to_bits(),
                        want[i].to_bits(),
                        "depth {depth} outer {outer} at {i}"
                    );
                }
            }
        }
    }
}
