//! SOFTMAX over the last dimension.
//!
//! Follows TFLM's quantized `reference_ops::Softmax<int8_t, OutputT>` (int8 input, int8 or
//! int16 output; gemmlowp fixed-point `exp` on Q5.26 differences, Q12.19 accumulation,
//! `GetReciprocal`), the int16 `reference_ops::SoftmaxInt16` (16x8 models: exp and
//! `1 / (1 + x)` lookup tables with linear interpolation, built at build time exactly as TFLM's
//! `Prepare` builds them) and the float `reference_ops::Softmax`
//! (`exp((x - max) * beta)` in `f32`, summed in order, then divided by the sum).

use crate::fixed_point::{
    exp_on_negative_values, get_reciprocal, multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_greater_than_one, rescale, rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
};
use crate::math::expf;
use crate::quant::{
    PrepareError, QuantParams, ShiftRange, calculate_input_radius, preprocess_softmax_scaling,
    quantize_multiplier, round_f32,
};
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

/// `exp` of `diff = x - max` (`-255..=0`) as TFLM's quantized softmax computes it: the
/// difference rescaled to Q5.26, then `exp_on_negative_values` (Q0.31).
#[inline(always)]
fn scaled_exp(p: &Params, diff: i32) -> i32 {
    let input_diff_rescaled = multiply_by_quantized_multiplier_greater_than_one(
        diff,
        p.input_multiplier,
        p.input_left_shift,
    );
    exp_on_negative_values::<SCALED_DIFF_INTEGER_BITS>(input_diff_rescaled)
}

/// The shared quantized softmax; `output_bits`/`output_min`/`output_max` describe `O`.
/// `exp(diff)` is `scaled_exp` where `diff >= diff_min`, else `None` (the element counts
/// for nothing and its output is `output_min`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn softmax_quantized<O>(
    p: &Params,
    input: &[i8],
    output: &mut [O],
    output_bits: i32,
    output_min: i32,
    output_max: i32,
    store: impl Fn(i32) -> O,
    exp: impl Fn(i32) -> Option<i32>,
) {
    debug_assert_eq!(input.len(), p.outer_size * p.depth);
    debug_assert_eq!(output.len(), p.outer_size * p.depth);
    if p.depth == 0 {
        return;
    }
    for (in_row, out_row) in input
        .chunks_exact(p.depth)
        .zip(output.chunks_exact_mut(p.depth))
    {
        let max_in_row = in_row.iter().fold(i8::MIN, |m, &x| m.max(x)) as i32;

        let mut sum_of_exps: i32 = 0; // Q12.19
        for &x in in_row {
            if let Some(e) = exp(x as i32 - max_in_row) {
                sum_of_exps = sum_of_exps.wrapping_add(rescale(e, 0, ACCUMULATION_INTEGER_BITS));
            }
        }

        let (shifted_scale, num_bits_over_unit) =
            get_reciprocal(sum_of_exps, ACCUMULATION_INTEGER_BITS);
        // TFLM CHECKs 0 <= exponent <= 31 (it aborts otherwise, e.g. for int8 output and 512+
        // equal maxima); clamping keeps this kernel panic-free.
        let exponent = (num_bits_over_unit + 31 - output_bits).clamp(0, 31);

        for (o, &x) in out_row.iter_mut().zip(in_row) {
            *o = if let Some(exp_in_0) = exp(x as i32 - max_in_row) {
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

/// TFLM's `exp` of a difference: `scaled_exp` from `diff_min` on.
#[inline(always)]
fn exp_arithmetic(p: &Params) -> impl Fn(i32) -> Option<i32> + '_ {
    move |diff| (diff >= p.diff_min).then(|| scaled_exp(p, diff))
}

/// [`exp_table_s8`]'s lookup: `table[-diff]`, 0 past its end.
#[inline(always)]
fn exp_lookup(table: &[i32]) -> impl Fn(i32) -> Option<i32> + '_ {
    move |diff| {
        Some(
            table
                .get(diff.unsigned_abs() as usize)
                .copied()
                .unwrap_or(0),
        )
    }
}

/// Int8 -> int8 SOFTMAX (`reference_ops::Softmax<int8_t, int8_t>`).
pub fn softmax_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    let store = |v: i32| v as i8;
    softmax_quantized(p, input, output, 8, -128, 127, store, exp_arithmetic(p));
}

/// Int8 -> int16 SOFTMAX (`reference_ops::Softmax<int8_t, int16_t>`).
pub fn softmax_s8_s16(p: &Params, input: &[i8], output: &mut [i16]) {
    let store = |v: i32| v as i16;
    let (lo, hi) = (i16::MIN as i32, i16::MAX as i32);
    softmax_quantized(p, input, output, 16, lo, hi, store, exp_arithmetic(p));
}

/// The int8 softmax's `exp` of every difference `x - max` a row can hold (`-255..=0`),
/// at `table[-diff]`, made at build time by TFLM's arithmetic (`scaled_exp`), 0 below
/// `diff_min`. Returns how many entries matter: the ones after are 0, and the kernels
/// read 0 past the end of a shorter table.
///
/// The kernels then give the same bytes by construction: an `exp` of 0 adds nothing to the
/// row's sum (`rescale(0) = 0`) and gives the output `output_min` (the doubling high
/// multiply and the rounding shift of 0 are 0), which is what TFLM writes below `diff_min`.
pub fn exp_table_s8(p: &Params, table: &mut [i32; 256]) -> usize {
    let exp = exp_arithmetic(p);
    let mut len = 0;
    for (d, e) in table.iter_mut().enumerate() {
        *e = exp(-(d as i32)).unwrap_or(0);
        if *e != 0 {
            len = d + 1;
        }
    }
    len
}

/// [`softmax_s8`] with its `exp` from the build-time [`exp_table_s8`] (one load per
/// element and pass instead of the fixed-point `exp`): the same bytes.
pub fn softmax_s8_table(p: &Params, exp: &[i32], input: &[i8], output: &mut [i8]) {
    let store = |v: i32| v as i8;
    softmax_quantized(p, input, output, 8, -128, 127, store, exp_lookup(exp));
}

/// [`softmax_s8_s16`] with its `exp` from the build-time [`exp_table_s8`]: the same values.
pub fn softmax_s8_s16_table(p: &Params, exp: &[i32], input: &[i8], output: &mut [i16]) {
    let store = |v: i32| v as i16;
    let (lo, hi) = (i16::MIN as i32, i16::MAX as i32);
    softmax_quantized(p, input, output, 16, lo, hi, store, exp_lookup(exp));
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

/// Entries of each int16 SOFTMAX lookup table (`kInt16LUTArraySize`: 512 segments plus the
/// end point used for interpolation).
pub const LUT_SIZE: usize = 513;

/// TFLM's `LUTPopulate<int16_t, float>`: samples `transform` at 512 steps over the input
/// range and stores int16 values with a bias that halves the midpoint interpolation error,
/// plus the end point. All arithmetic in `f32`, in TFLM's order.
fn lut_populate_s16(
    input_scale: f32,
    input_zero_point: i32,
    output_scale: f32,
    output_zero_point: i32,
    transform: impl Fn(f32) -> f32,
    lut: &mut [i16],
) {
    let input_min = input_scale * (i16::MIN as i32 - input_zero_point) as f32;
    let input_max = input_scale * (i16::MAX as i32 - input_zero_point) as f32;
    let output_min = output_scale * (i16::MIN as i32 - output_zero_point) as f32;
    let output_max = output_scale * (i16::MAX as i32 - output_zero_point) as f32;
    let nb_steps = 512;
    let step = (input_max - input_min) / nb_steps as f32;
    let half_step = step / 2.0;
    let output_scaling_inv = 65536.0f32 / (output_max - output_min);
    let table_min = i16::MIN as f32;
    let table_max = i16::MAX as f32;
    // static_cast<int16_t>(std::min(std::max(v, table_min), table_max))
    let clamp = |v: f32| {
        let v = if v < table_min { table_min } else { v };
        (if table_max < v { table_max } else { v }) as i16
    };
    for (i, entry) in lut[..nb_steps].iter_mut().enumerate() {
        let fi = i as f32;
        let val = transform(input_min + fi * step);
        let val_midpoint = transform(input_min + fi * step + half_step);
        let val_next = transform(input_min + (i + 1) as f32 * step);
        let sample_val = round_f32(val * output_scaling_inv);
        let midpoint_interp_val =
            round_f32((val_next * output_scaling_inv + round_f32(val * output_scaling_inv)) / 2.0);
        let midpoint_val = round_f32(val_midpoint * output_scaling_inv);
        let midpoint_err = midpoint_interp_val - midpoint_val;
        let bias = round_f32(midpoint_err / 2.0);
        *entry = clamp(sample_val - bias);
    }
    lut[nb_steps] = clamp(round_f32(transform(input_max) * output_scaling_inv));
}

/// TFLM's (deprecated) `gen_lut<float, int16_t, int16_t>`: derives a symmetric int16
/// quantization of `[input_min, input_max]` and `[output_min, output_max]` and calls
/// [`lut_populate_s16`].
fn gen_lut_s16(
    transform: impl Fn(f32) -> f32,
    input_min: f32,
    input_max: f32,
    output_min: f32,
    output_max: f32,
    lut: &mut [i16],
) {
    // static_cast<int32_t>(float(INT16_MIN) - min / scale)
    let zero_point = |min: f32, scale: f32| (i16::MIN as f32 - min / scale) as i32;
    let scale = (i16::MAX as i32 - i16::MIN as i32) as f32;
    let input_scale = (input_max - input_min) / scale;
    let output_scale = (output_max - output_min) / scale;
    let input_zero_point = zero_point(input_min, input_scale);
    let output_zero_point = zero_point(output_min, output_scale);
    lut_populate_s16(
        input_scale,
        input_zero_point,
        output_scale,
        output_zero_point,
        transform,
        lut,
    );
}

/// Build-time parameters of an int16 -> int16 SOFTMAX (`CalculateSoftmaxParams`): input and
/// output zero points must be 0 and the output scale within 0.1% of 1/32768. The input
/// multiplier is `QuantizeMultiplier(input_scale * beta / (10 / 65535))` (the exp table
/// covers `[-10, 0]`), and the two lookup tables TFLM builds in `Prepare` are written to
/// `exp_lut` (`exp` on `[-10, 0]`) and `one_over_one_plus_x_lut` (`1 / (1 + x)` on
/// `[0, 1]`), each [`LUT_SIZE`] long.
#[allow(clippy::too_many_arguments)]
pub fn prepare_s16(
    outer_size: usize,
    depth: usize,
    input: QuantParams,
    output: QuantParams,
    beta: f32,
    exp_lut: &mut [i16],
    one_over_one_plus_x_lut: &mut [i16],
) -> Result<Params, PrepareError> {
    if depth == 0 || exp_lut.len() != LUT_SIZE || one_over_one_plus_x_lut.len() != LUT_SIZE {
        return Err(PrepareError::InvalidShape);
    }
    let (a, b) = (output.scale, 1.0f32 / 32768.0);
    let delta = if a > b { a - b } else { b - a };
    if input.zero_point != 0 || output.zero_point != 0 || delta > 0.001f32 * 1.0 / 32768.0 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    gen_lut_s16(expf, -10.0, 0.0, -1.0, 1.0, exp_lut);
    gen_lut_s16(
        |x| 1.0 / (1.0 + x),
        0.0,
        1.0,
        -1.0,
        1.0,
        one_over_one_plus_x_lut,
    );
    let input_scale_beta_rescale = input.scale as f64 * beta as f64 / (10.0 / 65535.0);
    let (input_multiplier, input_left_shift) =
        quantize_multiplier(input_scale_beta_rescale, ShiftRange::I32)?;
    Ok(Params {
        outer_size,
        depth,
        input_multiplier,
        input_left_shift,
        diff_min: 0,
        beta: 0.0,
    })
}

/// `tflite::LUTLookup(int16_t, const int16_t*)`: the table entry selected by the top 9 bits,
/// linearly interpolated with the low 7 bits.
#[inline]
fn lut_lookup_s16(value: i16, lut: &[i16]) -> i16 {
    let index = (256 + (value >> 7) as i32) as usize;
    let offset = (value & 0x7f) as i32;
    let base = lut[index];
    let slope = lut[index + 1].wrapping_sub(base) as i32;
    let delta = (slope * offset + 64) >> 7;
    (base as i32 + delta) as i16
}

/// Int16 -> int16 SOFTMAX (`reference_ops::SoftmaxInt16`): per row, `exp(x - max)` from
/// `exp_lut` (the difference rescaled by the input multiplier into `[-65535, 0]`), their
/// `i32` sum, its reciprocal from `one_over_one_plus_x_lut`, and each exp times the
/// reciprocal with a rounding shift, clamped to `[0, 32767]`. The tables are those written
/// by [`prepare_s16`].
pub fn softmax_s16(
    p: &Params,
    exp_lut: &[i16],
    one_over_one_plus_x_lut: &[i16],
    input: &[i16],
    output: &mut [i16],
) {
    debug_assert_eq!(input.len(), p.outer_size * p.depth);
    debug_assert_eq!(output.len(), p.outer_size * p.depth);
    debug_assert!(exp_lut.len() == LUT_SIZE && one_over_one_plus_x_lut.len() == LUT_SIZE);
    if p.depth == 0 {
        return;
    }
    for (in_row, out_row) in input
        .chunks_exact(p.depth)
        .zip(output.chunks_exact_mut(p.depth))
    {
        let max_in_row = in_row.iter().fold(i16::MIN, |m, &x| m.max(x));
        // The exps are cached in the output row, as TFLM does.
        let mut sum_of_exps: i32 = 0; // Q16.15
        for (o, &x) in out_row.iter_mut().zip(in_row) {
            let input_diff = x as i32 - max_in_row as i32;
            let scaled_diff = multiply_by_quantized_multiplier(
                input_diff,
                p.input_multiplier,
                p.input_left_shift,
            );
            let sym_scaled_diff = scaled_diff.wrapping_add(32767);
            let sat = sym_scaled_diff.clamp(-32768, 32767) as i16;
            *o = lut_lookup_s16(sat, exp_lut);
            sum_of_exps = sum_of_exps.wrapping_add(*o as i32);
        }
        let headroom_plus_one = (sum_of_exps as u32).leading_zeros() as i32;
        // A row always contains exp(0), so the sum is positive and headroom_plus_one <= 17.
        let shifted_sum =
            (((sum_of_exps as i64) << (headroom_plus_one - 1).max(0)) + (1 << 13)) >> 14;
        let sym_shifted_sum = (shifted_sum as i32).wrapping_add(-((1 << 15) + (1 << 16)));
        let sat = sym_shifted_sum.clamp(-32768, 32767) as i16;
        let reciprocal_scale_q015 = lut_lookup_s16(sat, one_over_one_plus_x_lut) as i64;
        let right_shift = (31 - headroom_plus_one).max(1);
        let round = 1i64 << (right_shift - 1);
        for o in out_row.iter_mut() {
            let result = (((*o as i64) * reciprocal_scale_q015 + round) >> right_shift) as i32;
            *o = result.clamp(0, 32767) as i16;
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

    /// The table kernels against the arithmetic ones, int8 and int16 outputs: input scales
    /// from fine (every difference reaches the exp) to coarse (`diff_min` cuts most), rows
    /// of one to 300 elements (ties at the maximum, the full -255..=0 range of differences).
    #[test]
    fn table_kernels_match_arithmetic() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for scale in [0.003f32, 0.02, 0.1, 0.5, 2.0] {
            for beta in [1.0f32, 0.3] {
                for depth in [1usize, 2, 3, 10, 300] {
                    let input = QuantParams {
                        scale,
                        zero_point: 7,
                    };
                    let p = prepare_s8(4, depth, input, OUT8, beta).unwrap();
                    let mut table = [0; 256];
                    let len = exp_table_s8(&p, &mut table);
                    let table = &table[..len.max(1)];
                    let x: std::vec::Vec<i8> = (0..4 * depth)
                        .map(|i| match next() % 5 {
                            0 => i8::MAX,
                            1 if i % 2 == 0 => i8::MIN,
                            _ => next() as i8,
                        })
                        .collect();
                    let (mut want, mut got) = (std::vec![0i8; x.len()], std::vec![1i8; x.len()]);
                    softmax_s8(&p, &x, &mut want);
                    softmax_s8_table(&p, table, &x, &mut got);
                    assert_eq!(got, want, "{scale} {beta} {depth}");
                    let p = prepare_s8_s16(4, depth, input, OUT16, beta).unwrap();
                    let (mut want, mut got) = (std::vec![0i16; x.len()], std::vec![1i16; x.len()]);
                    softmax_s8_s16(&p, &x, &mut want);
                    softmax_s8_s16_table(&p, table, &x, &mut got);
                    assert_eq!(got, want, "{scale} {beta} {depth}");
                }
            }
        }
    }
}
