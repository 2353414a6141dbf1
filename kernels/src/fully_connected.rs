//! FULLY_CONNECTED: `output[b][o] = act(sum_d input[b][d] * weights[o][d] + bias[o])`.
//!
//! Follows TFLM's `reference_integer_ops::FullyConnected` (per-tensor int8, with the weights
//! offset), `reference_integer_ops::FullyConnectedPerChannel` (int8 with one multiplier/shift
//! per output channel, weights symmetric) and `reference_ops::FullyConnected` (float). TFLM
//! selects the per-channel kernel when the filter has more than one scale
//! (`fully_connected_common.cc`); use [`prepare_s8`] or [`prepare_per_channel_s8`] accordingly.
//!
//! 16x8 (int16 input/output, int8 weights) uses the same two selections with TFLM's int16
//! overloads `FullyConnected<AccumScalar>` / `FullyConnectedPerChannel<AccumScalar>`: no input
//! or output offset (the per-tensor kernel still adds `weights_offset`), and the accumulator
//! is the bias type — `int64` with `MultiplyByQuantizedMultiplier(int64_t, ...)` for an int64
//! bias or none (`*_s16`; the pinned TFLM takes the 64-bit path without a bias, checked),
//! `int32` with the double-rounding `int32_t` overload for an int32 bias (`*_s16_bias32`).
//!
//! Layouts: input `[batches, accum_depth]` (any input shape flattened that way), weights
//! `[output_depth, accum_depth]`, bias `[output_depth]`, output `[batches, output_depth]`.

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::int16::{Accumulator, check_shifts_s16};
use crate::quant::{
    Activation, PrepareError, QuantParams, ShiftRange, activation_range_f32, activation_range_i8,
    activation_range_i16, populate_per_channel_multipliers, quantize_multiplier,
};
use crate::util::{clamp_f32, clamp_i32};

/// Constant parameters of a FULLY_CONNECTED node (TFLM's `FullyConnectedParams` plus shapes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Rows of the input/output (product of all output dims but the last).
    pub batches: usize,
    /// Inner dimension: the last weights dim.
    pub accum_depth: usize,
    /// Output channels: the first weights dim / last output dim.
    pub output_depth: usize,
    /// `-input_zero_point`
    pub input_offset: i32,
    /// `-filter_zero_point` (only used by the per-tensor int8 kernel)
    pub weights_offset: i32,
    /// `output_zero_point`
    pub output_offset: i32,
    /// Per-tensor requantization multiplier (Q31).
    pub output_multiplier: i32,
    /// Per-tensor requantization exponent (`> 0` is a left shift).
    pub output_shift: i32,
    /// Lower clamp of the quantized output.
    pub quantized_activation_min: i32,
    /// Upper clamp of the quantized output.
    pub quantized_activation_max: i32,
    /// Lower clamp of the float output.
    pub float_activation_min: f32,
    /// Upper clamp of the float output.
    pub float_activation_max: f32,
}

impl Params {
    const fn shape(batches: usize, accum_depth: usize, output_depth: usize) -> Params {
        Params {
            batches,
            accum_depth,
            output_depth,
            input_offset: 0,
            weights_offset: 0,
            output_offset: 0,
            output_multiplier: 0,
            output_shift: 0,
            quantized_activation_min: 0,
            quantized_activation_max: 0,
            float_activation_min: 0.0,
            float_activation_max: 0.0,
        }
    }
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

fn check_shape(
    batches: usize,
    accum_depth: usize,
    output_depth: usize,
) -> Result<(), PrepareError> {
    if batches == 0 || accum_depth == 0 || output_depth == 0 {
        return Err(PrepareError::InvalidShape);
    }
    Ok(())
}

/// Build-time parameters of a float FULLY_CONNECTED (`FullyConnectedParamsFloat`).
pub fn prepare_f32(
    batches: usize,
    accum_depth: usize,
    output_depth: usize,
    activation: Activation,
) -> Result<Params, PrepareError> {
    check_shape(batches, accum_depth, output_depth)?;
    let (min, max) = activation_range_f32(activation);
    Ok(Params {
        float_activation_min: min,
        float_activation_max: max,
        ..Params::shape(batches, accum_depth, output_depth)
    })
}

/// Build-time parameters of an int8 FULLY_CONNECTED with a per-tensor filter scale
/// (`CalculateOpDataFullyConnected`, non-per-channel branch).
///
/// The multiplier is `double(float(input_scale * filter_scale)) / double(output_scale)`
/// exactly as `GetQuantizedConvolutionMultipler` computes it. When a bias tensor is present
/// its scale must be within 2% (of the output scale) of `input_scale * filter_scale`, as TFLM
/// checks.
#[allow(clippy::too_many_arguments)]
pub fn prepare_s8(
    batches: usize,
    accum_depth: usize,
    output_depth: usize,
    input: QuantParams,
    filter: QuantParams,
    bias_scale: Option<f32>,
    output: QuantParams,
    activation: Activation,
) -> Result<Params, PrepareError> {
    check_shape(batches, accum_depth, output_depth)?;
    if let Some(bias_scale) = bias_scale {
        let input_product_scale = input.scale as f64 * filter.scale as f64;
        let diff = input_product_scale - bias_scale as f64;
        let scale_diff = if diff < 0.0 { -diff } else { diff };
        if !(scale_diff / output.scale as f64 <= 0.02) {
            return Err(PrepareError::UnsupportedQuantization);
        }
    }
    let input_product_scale = (input.scale * filter.scale) as f64;
    if !(input_product_scale >= 0.0) {
        return Err(PrepareError::UnsupportedQuantization);
    }
    let real_multiplier = input_product_scale / output.scale as f64;
    let (output_multiplier, output_shift) = quantize_multiplier(real_multiplier, ShiftRange::I32)?;
    let (min, max) = activation_range_i8(activation, output.scale, output.zero_point)?;
    Ok(Params {
        input_offset: -input.zero_point,
        weights_offset: -filter.zero_point,
        output_offset: output.zero_point,
        output_multiplier,
        output_shift,
        quantized_activation_min: min,
        quantized_activation_max: max,
        ..Params::shape(batches, accum_depth, output_depth)
    })
}

/// Build-time parameters of an int8 FULLY_CONNECTED with per-channel filter scales
/// (`CalculateOpDataFullyConnected`, per-channel branch): fills one multiplier/shift per output
/// channel (`double(input_scale) * double(filter_scales[i]) / double(output_scale)`).
/// `output_multiplier`/`output_shift` must be `output_depth` long.
#[allow(clippy::too_many_arguments)]
pub fn prepare_per_channel_s8(
    batches: usize,
    accum_depth: usize,
    output_depth: usize,
    input: QuantParams,
    filter_scales: &[f32],
    output: QuantParams,
    activation: Activation,
    output_multiplier: &mut [i32],
    output_shift: &mut [i32],
) -> Result<Params, PrepareError> {
    check_shape(batches, accum_depth, output_depth)?;
    if filter_scales.len() != output_depth || output_multiplier.len() != output_depth {
        return Err(PrepareError::InvalidShape);
    }
    populate_per_channel_multipliers(
        input.scale,
        filter_scales,
        output.scale,
        output_multiplier,
        output_shift,
    )?;
    let (min, max) = activation_range_i8(activation, output.scale, output.zero_point)?;
    Ok(Params {
        input_offset: -input.zero_point,
        output_offset: output.zero_point,
        quantized_activation_min: min,
        quantized_activation_max: max,
        ..Params::shape(batches, accum_depth, output_depth)
    })
}

#[inline]
fn requantize(acc: i32, multiplier: i32, shift: i32, p: &Params) -> i8 {
    let acc =
        multiply_by_quantized_multiplier(acc, multiplier, shift).wrapping_add(p.output_offset);
    clamp_i32(acc, p.quantized_activation_min, p.quantized_activation_max) as i8
}

/// Int8 FULLY_CONNECTED with a per-tensor multiplier
/// (`reference_integer_ops::FullyConnected`):
/// `acc = sum (w + weights_offset) * (x + input_offset) + bias`, requantized with
/// `output_multiplier`/`output_shift`, offset, clamped.
pub fn fully_connected_s8(
    p: &Params,
    input: &[i8],
    weights: &[i8],
    bias: Option<&[i32]>,
    output: &mut [i8],
) {
    debug_assert_eq!(input.len(), p.batches * p.accum_depth);
    debug_assert!(weights.len() >= p.output_depth * p.accum_depth);
    debug_assert!(bias.is_none_or(|b| b.len() >= p.output_depth));
    debug_assert_eq!(output.len(), p.batches * p.output_depth);
    if p.accum_depth == 0 || p.output_depth == 0 {
        return;
    }
    for (in_row, out_row) in input
        .chunks_exact(p.accum_depth)
        .zip(output.chunks_exact_mut(p.output_depth))
    {
        for (oc, (out, w_row)) in out_row
            .iter_mut()
            .zip(weights.chunks_exact(p.accum_depth))
            .enumerate()
        {
            let mut acc: i32 = 0;
            for (&x, &w) in in_row.iter().zip(w_row) {
                acc = acc.wrapping_add(
                    (w as i32 + p.weights_offset).wrapping_mul(x as i32 + p.input_offset),
                );
            }
            if let Some(b) = bias {
                acc = acc.wrapping_add(b[oc]);
            }
            *out = requantize(acc, p.output_multiplier, p.output_shift, p);
        }
    }
}

/// Int8 FULLY_CONNECTED with per-channel multipliers
/// (`reference_integer_ops::FullyConnectedPerChannel`): `acc = sum w * (x + input_offset) +
/// bias` (no weights offset), requantized with `output_multiplier[o]`/`output_shift[o]`.
pub fn fully_connected_per_channel_s8(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i8],
    weights: &[i8],
    bias: Option<&[i32]>,
    output: &mut [i8],
) {
    debug_assert_eq!(input.len(), p.batches * p.accum_depth);
    debug_assert!(weights.len() >= p.output_depth * p.accum_depth);
    debug_assert!(bias.is_none_or(|b| b.len() >= p.output_depth));
    debug_assert!(
        output_multiplier.len() >= p.output_depth && output_shift.len() >= p.output_depth
    );
    debug_assert_eq!(output.len(), p.batches * p.output_depth);
    if p.accum_depth == 0 || p.output_depth == 0 {
        return;
    }
    for (in_row, out_row) in input
        .chunks_exact(p.accum_depth)
        .zip(output.chunks_exact_mut(p.output_depth))
    {
        let channels = out_row
            .iter_mut()
            .zip(weights.chunks_exact(p.accum_depth))
            .zip(output_multiplier.iter().zip(output_shift));
        for (oc, ((out, w_row), (&m, &s))) in channels.enumerate() {
            let mut acc: i32 = 0;
            for (&x, &w) in in_row.iter().zip(w_row) {
                acc = acc.wrapping_add((w as i32).wrapping_mul(x as i32 + p.input_offset));
            }
            if let Some(b) = bias {
                acc = acc.wrapping_add(b[oc]);
            }
            *out = requantize(acc, m, s, p);
        }
    }
}

/// Whether [`fully_connected_s8_fast`] computes this int8 FULLY_CONNECTED byte-identically
/// with [`fully_connected_s8`] (per-tensor) or [`fully_connected_per_channel_s8`], and its
/// build-time tables: the folded bias (`bias + input_offset * sum(w)`), the multipliers to
/// use and the right shift per output channel. The conditions are [`crate::gemm`]'s
/// ([`crate::gemm::prepare_layer`]: accumulators within `2^30`, right shifts of 1..=31, dead
/// channels as constants) and, for the per-tensor kernel, no weights offset (the products
/// are then `w * (x + input_offset)` in both kernels). `output_multiplier`/`output_shift`
/// are per channel (for a per-tensor layer, `output_depth` copies of
/// [`Params::output_multiplier`] and [`Params::output_shift`]); `weights` is `output_depth *
/// accum_depth` long, the tables `output_depth`.
#[allow(clippy::too_many_arguments)]
pub fn prepare_fast_s8(
    p: &Params,
    weights: &[i8],
    bias: Option<&[i32]>,
    output_multiplier: &[i32],
    output_shift: &[i32],
    folded_bias: &mut [i32],
    multiplier: &mut [i32],
    right_shift: &mut [i32],
) -> bool {
    let q = crate::gemm::Output {
        offset: p.output_offset,
        min: p.quantized_activation_min,
        max: p.quantized_activation_max,
    };
    p.weights_offset == 0
        && folded_bias.len() == p.output_depth
        && crate::gemm::prepare_layer(
            p.accum_depth,
            p.input_offset,
            weights,
            bias,
            output_multiplier,
            output_shift,
            &q,
            folded_bias,
            multiplier,
            right_shift,
        )
}

/// Int8 FULLY_CONNECTED on the fast matrix products of [`crate::gemm`] (DSP instructions on
/// Cortex-M4/M7/M33, Helium on the M55/M85, plain Rust elsewhere), for the layers [`prepare_fast_s8`] accepts:
/// byte-identical with [`fully_connected_s8`] / [`fully_connected_per_channel_s8`]. `bias`
/// `output_multiplier` and `right_shift` are the tables from [`prepare_fast_s8`]. The batches are the pixels of a
/// 1x1 convolution: `output[b] = requantize(W input[b] + bias)`.
#[inline(always)]
pub fn fully_connected_s8_fast(
    p: &Params,
    bias: &[i32],
    output_multiplier: &[i32],
    right_shift: &[i32],
    input: &[i8],
    weights: &[i8],
    output: &mut [i8],
) {
    let ch = crate::gemm::Channels {
        bias,
        multiplier: output_multiplier,
        right_shift,
    };
    let q = crate::gemm::Output {
        offset: p.output_offset,
        min: p.quantized_activation_min,
        max: p.quantized_activation_max,
    };
    // One batch (every model here) has no pixel pair to widen: no scratch.
    crate::gemm::pointwise(p.accum_depth, input, weights, &ch, &q, output, &mut []);
}

/// Float FULLY_CONNECTED (`reference_ops::FullyConnected`): the dot product is accumulated in
/// `f32` in increasing `d` order starting from `0.0`, then `total + bias` (bias `0.0` when
/// absent) is clamped. On hard-float Cortex-M with the DSP extension, four outputs at a
/// time are `arch::dense_f32_x4`'s and the rest's dot products `arch::dot_f32`'s (`VMLA`:
/// the same roundings in the same order). Always inlined: with a layer's constant shapes
/// the drivers' set-up folds away (the group loop, `fc_f32_groups`, stays one copy).
#[inline(always)]
pub fn fully_connected_f32(
    p: &Params,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
) {
    debug_assert_eq!(input.len(), p.batches * p.accum_depth);
    debug_assert!(weights.len() >= p.output_depth * p.accum_depth);
    debug_assert!(bias.is_none_or(|b| b.len() >= p.output_depth));
    debug_assert_eq!(output.len(), p.batches * p.output_depth);
    if p.accum_depth == 0 || p.output_depth == 0 {
        return;
    }
    // The bias in groups of four and the rest (zeros without a bias: TFLM adds `0.0` too,
    // which turns a `-0.0` sum into `+0.0`).
    match bias {
        Some(b) => {
            let (b4, b_rest) = b.as_chunks::<4>();
            fc_f32_rows(p, input, weights, output, b4.iter(), b_rest.iter());
        }
        None => fc_f32_rows(
            p,
            input,
            weights,
            output,
            core::iter::repeat(&[0.0; 4]),
            core::iter::repeat(&0.0),
        ),
    }
}

/// [`fully_connected_f32`] with the bias values of each group of four output channels
/// (`b4`) and of the rest (`b1`): four channels per `dense_f32_x4`, then the rest one by
/// one.
#[inline(always)]
fn fc_f32_rows<'a>(
    p: &Params,
    input: &[f32],
    weights: &[f32],
    output: &mut [f32],
    b4: impl Iterator<Item = &'a [f32; 4]> + Clone,
    b1: impl Iterator<Item = &'a f32> + Clone,
) {
    let (k, m) = (p.accum_depth, p.output_depth);
    let range = [p.float_activation_min, p.float_activation_max];
    for batch in 0..p.batches {
        let (Some(x), Some(out_row)) = (
            input.get(batch * k..),
            output.get_mut(batch * m..).and_then(|o| o.get_mut(..m)),
        ) else {
            return;
        };
        let (out4, out_rest) = out_row.as_chunks_mut::<4>();
        let mut w = fc_f32_groups(k, x, weights, out4, b4.clone(), &range);
        for (o, &b) in out_rest.iter_mut().zip(b1.clone()) {
            *o = clamp_f32(dot_f32(k, x, w) + b, range[0], range[1]);
            w = w.get(k..).unwrap_or_default();
        }
    }
}

/// The groups of four outputs of one input row (`out4`, biases `b4`), from the first rows of
/// `w`; returns the rest of `w`. Not inlined: one copy of the group loop serves every layer
/// (opt-level 3 would unroll it, one copy of the block per group, for the short loops of
/// small layers).
#[inline(never)]
fn fc_f32_groups<'w, 'b>(
    k: usize,
    x: &[f32],
    weights: &'w [f32],
    out4: &mut [[f32; 4]],
    b4: impl Iterator<Item = &'b [f32; 4]>,
    range: &[f32; 2],
) -> &'w [f32] {
    // Each call reads the first rows of `w`, which then moves past them.
    let mut w = weights;
    for (o, b) in out4.iter_mut().zip(b4) {
        dense_f32_x4(k, x, w, b, range, o);
        w = w.get(4 * k..).unwrap_or_default();
    }
    w
}

/// Four outputs: `out[i] = clamp(dot_f32(x, w[ik..(i + 1)k]) + bias[i])`.
#[inline(always)]
fn dense_f32_x4(
    k: usize,
    x: &[f32],
    w: &[f32],
    bias: &[f32; 4],
    range: &[f32; 2],
    out: &mut [f32; 4],
) {
    #[cfg(any(
        all(kiln_arch = "dsp", target_abi = "eabihf"),
        all(test, kiln_arch = "portable")
    ))]
    crate::arch::dense_f32_x4(k, x, w, bias, range, out);
    #[cfg(not(any(
        all(kiln_arch = "dsp", target_abi = "eabihf"),
        all(test, kiln_arch = "portable")
    )))]
    if let Some(w) = w.get(..4 * k) {
        for ((o, r), b) in out.iter_mut().zip(w.chunks_exact(k.max(1))).zip(bias) {
            *o = clamp_f32(dot_f32(k, x, r) + b, range[0], range[1]);
        }
    }
}

/// `sum(x[d] * w[d])` over `d < k` from `0.0` in increasing `d` (`0.0` if a slice is
/// shorter than `k`, never the case).
#[inline(always)]
fn dot_f32(k: usize, x: &[f32], w: &[f32]) -> f32 {
    let (Some(x), Some(w)) = (x.get(..k), w.get(..k)) else {
        return 0.0;
    };
    #[cfg(any(
        all(kiln_arch = "dsp", target_abi = "eabihf"),
        all(test, kiln_arch = "portable")
    ))]
    {
        crate::arch::dot_f32(x, w)
    }
    #[cfg(not(any(
        all(kiln_arch = "dsp", target_abi = "eabihf"),
        all(test, kiln_arch = "portable")
    )))]
    {
        let mut total = 0.0f32;
        for (&x, &w) in x.iter().zip(w) {
            total += x * w;
        }
        total
    }
}

/// Build-time parameters of a 16x8 FULLY_CONNECTED (int16 input/output, int8 weights) with a
/// per-tensor filter scale: as [`prepare_s8`] (same multiplier and bias-scale check), with the
/// activation range of an int16 output. Fails with [`PrepareError::MultiplierOutOfRange`] for a
/// multiplier of 128 or more (exponent >= 8), outside the domain of TFLM's 64-bit
/// `MultiplyByQuantizedMultiplier`.
#[allow(clippy::too_many_arguments)]
pub fn prepare_s16(
    batches: usize,
    accum_depth: usize,
    output_depth: usize,
    input: QuantParams,
    filter: QuantParams,
    bias_scale: Option<f32>,
    output: QuantParams,
    activation: Activation,
) -> Result<Params, PrepareError> {
    let mut p = prepare_s8(
        batches,
        accum_depth,
        output_depth,
        input,
        filter,
        bias_scale,
        output,
        Activation::None,
    )?;
    check_shifts_s16(&[p.output_multiplier], &[p.output_shift])?;
    (p.quantized_activation_min, p.quantized_activation_max) =
        activation_range_i16(activation, output.scale, output.zero_point)?;
    Ok(p)
}

/// Build-time parameters of a 16x8 FULLY_CONNECTED with per-channel filter scales: as
/// [`prepare_per_channel_s8`], with the activation range of an int16 output (multipliers of 128
/// or more are rejected as in [`prepare_s16`]).
#[allow(clippy::too_many_arguments)]
pub fn prepare_per_channel_s16(
    batches: usize,
    accum_depth: usize,
    output_depth: usize,
    input: QuantParams,
    filter_scales: &[f32],
    output: QuantParams,
    activation: Activation,
    output_multiplier: &mut [i32],
    output_shift: &mut [i32],
) -> Result<Params, PrepareError> {
    let mut p = prepare_per_channel_s8(
        batches,
        accum_depth,
        output_depth,
        input,
        filter_scales,
        output,
        Activation::None,
        output_multiplier,
        output_shift,
    )?;
    check_shifts_s16(output_multiplier, output_shift)?;
    (p.quantized_activation_min, p.quantized_activation_max) =
        activation_range_i16(activation, output.scale, output.zero_point)?;
    Ok(p)
}

/// The 16x8 FULLY_CONNECTED loops (`reference_integer_ops::FullyConnected<AccumScalar>` and
/// `FullyConnectedPerChannel<AccumScalar>` for `int16_t`): `acc = sum (w + weights_offset) *
/// x + bias` in `A` (no input/output offsets), requantized with `A`'s
/// `MultiplyByQuantizedMultiplier` and `quant(out_c)` = (multiplier, shift), clamped.
#[inline(always)]
fn fully_connected_s16_impl<A: Accumulator>(
    p: &Params,
    weights_offset: i32,
    quant: impl Fn(usize) -> (i32, i32),
    input: &[i16],
    weights: &[i8],
    bias: Option<&[A]>,
    output: &mut [i16],
) {
    debug_assert_eq!(input.len(), p.batches * p.accum_depth);
    debug_assert!(weights.len() >= p.output_depth * p.accum_depth);
    debug_assert!(bias.is_none_or(|b| b.len() >= p.output_depth));
    debug_assert_eq!(output.len(), p.batches * p.output_depth);
    if p.accum_depth == 0 || p.output_depth == 0 {
        return;
    }
    for (in_row, out_row) in input
        .chunks_exact(p.accum_depth)
        .zip(output.chunks_exact_mut(p.output_depth))
    {
        for (oc, (out, w_row)) in out_row
            .iter_mut()
            .zip(weights.chunks_exact(p.accum_depth))
            .enumerate()
        {
            let mut acc = A::ZERO;
            for (&x, &w) in in_row.iter().zip(w_row) {
                acc = acc.mac((w as i32).wrapping_add(weights_offset), x as i32);
            }
            if let Some(b) = bias {
                acc = acc.add(b[oc]);
            }
            let (m, s) = quant(oc);
            let scaled = acc.requantize(m, s);
            *out = clamp_i32(
                scaled,
                p.quantized_activation_min,
                p.quantized_activation_max,
            ) as i16;
        }
    }
}

/// 16x8 FULLY_CONNECTED, per-tensor multiplier, int64 bias (the converter's default) or none
/// (`reference_integer_ops::FullyConnected<int64_t>`: `acc = sum (w + weights_offset) * x +
/// bias` in `i64`, `MultiplyByQuantizedMultiplier(int64_t, ...)`).
pub fn fully_connected_s16(
    p: &Params,
    input: &[i16],
    weights: &[i8],
    bias: Option<&[i64]>,
    output: &mut [i16],
) {
    let quant = |_| (p.output_multiplier, p.output_shift);
    fully_connected_s16_impl::<i64>(p, p.weights_offset, quant, input, weights, bias, output);
}

/// 16x8 FULLY_CONNECTED, per-tensor multiplier, int32 bias
/// (`reference_integer_ops::FullyConnected<int32_t>`: 32-bit accumulator, double-rounding
/// `MultiplyByQuantizedMultiplier(int32_t, ...)`; TFLM takes this path only for an int32 bias
/// tensor).
pub fn fully_connected_s16_bias32(
    p: &Params,
    input: &[i16],
    weights: &[i8],
    bias: &[i32],
    output: &mut [i16],
) {
    let quant = |_| (p.output_multiplier, p.output_shift);
    fully_connected_s16_impl::<i32>(
        p,
        p.weights_offset,
        quant,
        input,
        weights,
        Some(bias),
        output,
    );
}

/// 16x8 FULLY_CONNECTED, per-channel multipliers, int64 bias or none
/// (`reference_integer_ops::FullyConnectedPerChannel<int64_t>`: no weights offset).
pub fn fully_connected_per_channel_s16(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i16],
    weights: &[i8],
    bias: Option<&[i64]>,
    output: &mut [i16],
) {
    debug_assert!(
        output_multiplier.len() >= p.output_depth && output_shift.len() >= p.output_depth
    );
    let quant = |oc: usize| (output_multiplier[oc], output_shift[oc]);
    fully_connected_s16_impl::<i64>(p, 0, quant, input, weights, bias, output);
}

/// 16x8 FULLY_CONNECTED, per-channel multipliers, int32 bias
/// (`reference_integer_ops::FullyConnectedPerChannel<int32_t>`).
pub fn fully_connected_per_channel_s16_bias32(
    p: &Params,
    output_multiplier: &[i32],
    output_shift: &[i32],
    input: &[i16],
    weights: &[i8],
    bias: &[i32],
    output: &mut [i16],
) {
    debug_assert!(
        output_multiplier.len() >= p.output_depth && output_shift.len() >= p.output_depth
    );
    let quant = |oc: usize| (output_multiplier[oc], output_shift[oc]);
    fully_connected_s16_impl::<i32>(p, 0, quant, input, weights, Some(bias), output);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn q(scale: f32, zero_point: i32) -> QuantParams {
        QuantParams { scale, zero_point }
    }

    #[test]
    fn int8_identity_like() {
        // input scale 0.5 zp -1, filter scale 1.0, output scale 0.5 zp 2 -> multiplier 1.0.
        let p = prepare_s8(
            2,
            3,
            2,
            q(0.5, -1),
            q(1.0, 0),
            None,
            q(0.5, 2),
            Activation::None,
        )
        .unwrap();
        assert_eq!((p.output_multiplier, p.output_shift), (1 << 30, 1));
        let input = [1i8, 2, 3, -1, -2, -3];
        let weights = [1i8, 0, 0, 0, 1, 1];
        let bias = [10i32, -10];
        let mut out = [0i8; 4];
        fully_connected_s8(&p, &input, &weights, Some(&bias), &mut out);
        // row0: (1+1)*1 + 10 = 12 -> +2 = 14; (2+1)+(3+1) - 10 = -3 -> -1
        // row1: (-1+1) + 10 = 10 -> 12; (-2+1)+(-3+1) - 10 = -13 -> -11
        assert_eq!(out, [14, -1, 12, -11]);
        fully_connected_s8(&p, &input, &weights, None, &mut out);
        assert_eq!(out, [4, 9, 2, -1]);
    }

    #[test]
    fn int8_weights_offset_rounding_and_clamp() {
        let mut p = prepare_s8(
            1,
            2,
            2,
            q(1.0, 0),
            q(1.0, 3),
            None,
            q(4.0, 0),
            Activation::Relu,
        )
        .unwrap();
        assert_eq!(p.weights_offset, -3);
        // multiplier 0.25: (2*2 + 5*2)=... check rounding: acc 6 -> 1.5 -> 2 (double rounding to nearest)
        let input = [1i8, 1];
        let weights = [6i8, 6, 0, 0]; // (6-3)*1 + (6-3)*1 = 6 ; (0-3)*2 = -6 -> relu
        let mut out = [0i8; 2];
        fully_connected_s8(&p, &input, &weights, None, &mut out);
        assert_eq!(out, [2, 0]);
        p.quantized_activation_min = -128;
        fully_connected_s8(&p, &input, &weights, None, &mut out);
        // -6 * 0.25 = -1.5 -> -2 (ties away from zero in RoundingDivideByPOT)
        assert_eq!(out, [2, -2]);
        // saturation at the top
        let big = [127i8, 127];
        let w = [127i8, 127, 0, 0];
        let p = prepare_s8(
            1,
            2,
            2,
            q(1.0, 0),
            q(1.0, 0),
            None,
            q(1.0, 0),
            Activation::None,
        )
        .unwrap();
        fully_connected_s8(&p, &big, &w, None, &mut out);
        assert_eq!(out, [127, 0]);
    }

    #[test]
    fn int8_per_channel() {
        let mut m = [0; 2];
        let mut s = [0; 2];
        let p = prepare_per_channel_s8(
            1,
            2,
            2,
            q(1.0, 1),
            &[1.0, 0.5],
            q(1.0, 0),
            Activation::None,
            &mut m,
            &mut s,
        )
        .unwrap();
        assert_eq!(p.input_offset, -1);
        let input = [3i8, 5];
        let weights = [1i8, 1, 2, 2];
        let mut out = [0i8; 2];
        fully_connected_per_channel_s8(&p, &m, &s, &input, &weights, Some(&[1, 1]), &mut out);
        // ch0: 2 + 4 + 1 = 7 ; ch1: (4 + 8 + 1) * 0.5 = 6.5 -> 7
        assert_eq!(out, [7, 7]);
    }

    /// The fast kernel equals the reference kernels (per-tensor and per-channel) on random
    /// layers: batches 1-5 (odd ones take the one-pixel path), odd and even output depths,
    /// depths with every `k % 4` tail, zero points at the extremes, with and without bias.
    #[test]
    fn fast_matches_reference() {
        use std::vec::Vec;
        let mut seed = 0x2545_f491_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let mut accepted = 0;
        for case in 0..300 {
            let batches = 1 + (next() % 5) as usize;
            let accum_depth = 1 + (next() % 40) as usize;
            let output_depth = 1 + (next() % 9) as usize;
            let zp = |r: u32| [-128, 127, 0, -5][(r % 4) as usize];
            let iq = q(0.01 + (next() % 100) as f32 * 0.003, zp(next()));
            let oq = q(0.05 + (next() % 100) as f32 * 0.01, zp(next()));
            let act = [Activation::None, Activation::Relu, Activation::Relu6][case % 3];
            let input: Vec<i8> = (0..batches * accum_depth).map(|_| next() as i8).collect();
            let weights: Vec<i8> = (0..output_depth * accum_depth)
                .map(|_| next() as i8)
                .collect();
            let bias: Vec<i32> = (0..output_depth)
                .map(|_| (next() % 20001) as i32 - 10000)
                .collect();
            let bias = (case % 4 != 0).then_some(bias.as_slice());
            let per_channel = case % 2 == 1;
            let (p, m, s) = if per_channel {
                let scales: Vec<f32> = (0..output_depth)
                    .map(|_| 0.001 + (next() % 100) as f32 * 0.0002)
                    .collect();
                let (mut m, mut s) = (vec![0; output_depth], vec![0; output_depth]);
                let p = prepare_per_channel_s8(
                    batches,
                    accum_depth,
                    output_depth,
                    iq,
                    &scales,
                    oq,
                    act,
                    &mut m,
                    &mut s,
                )
                .unwrap();
                (p, m, s)
            } else {
                let wq = q(0.001 + (next() % 100) as f32 * 0.0002, 0);
                let p =
                    prepare_s8(batches, accum_depth, output_depth, iq, wq, None, oq, act).unwrap();
                let (m, s) = (
                    vec![p.output_multiplier; output_depth],
                    vec![p.output_shift; output_depth],
                );
                (p, m, s)
            };
            let mut want = vec![0i8; batches * output_depth];
            if per_channel {
                fully_connected_per_channel_s8(&p, &m, &s, &input, &weights, bias, &mut want);
            } else {
                fully_connected_s8(&p, &input, &weights, bias, &mut want);
            }
            let (mut folded, mut mult, mut right) = (
                vec![0; output_depth],
                vec![0; output_depth],
                vec![0; output_depth],
            );
            if !prepare_fast_s8(
                &p,
                &weights,
                bias,
                &m,
                &s,
                &mut folded,
                &mut mult,
                &mut right,
            ) {
                continue;
            }
            accepted += 1;
            let mut got = vec![0i8; batches * output_depth];
            fully_connected_s8_fast(&p, &folded, &mult, &right, &input, &weights, &mut got);
            assert_eq!(got, want, "case {case}: {p:?}");
        }
        assert!(accepted > 250, "{accepted}");
        // A weights offset keeps the reference kernel.
        let p = prepare_s8(
            1,
            2,
            1,
            q(1.0, 0),
            q(1.0, 3),
            None,
            q(4.0, 0),
            Activation::None,
        )
        .unwrap();
        let (mut f, mut m, mut r) = ([0], [0], [0]);
        let mult = [p.output_multiplier];
        assert!(!prepare_fast_s8(
            &p,
            &[1, 2],
            None,
            &mult,
            &[-2],
            &mut f,
            &mut m,
            &mut r
        ));
    }

    /// The float kernel (on the host with the DSP drivers' grouping: four outputs per
    /// `dense_f32_x4`, the rest one by one) against TFLM's loop transcribed, bit for bit:
    /// every depth up to 19 (every tail), output counts with and without a remainder of
    /// four, several batches, with and without a bias, each activation, and special values
    /// (NaN, infinities, -0.0, large products) in the inputs, weights and biases.
    #[test]
    fn float_matches_tflm_loop_bit_for_bit() {
        let mut seed = 0x853C_49E6_748F_EA9Bu64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        let specials = [
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            f32::MAX,
            1e30,
            -1e-30,
        ];
        let value = |next: &mut dyn FnMut() -> u32| {
            let r = next();
            if r.is_multiple_of(23) {
                specials[(r / 23) as usize % specials.len()]
            } else {
                (r % 20_001) as f32 / 1000.0 - 10.0
            }
        };
        let activations = [
            Activation::None,
            Activation::Relu,
            Activation::Relu6,
            Activation::ReluN1To1,
        ];
        for case in 0..600 {
            let batches = 1 + case % 3;
            let depth = 1 + (case / 3) % 19;
            let outputs = 1 + next() as usize % 13;
            let p = prepare_f32(batches, depth, outputs, activations[case % 4]).unwrap();
            let input: Vec<f32> = (0..batches * depth).map(|_| value(&mut next)).collect();
            let weights: Vec<f32> = (0..outputs * depth).map(|_| value(&mut next)).collect();
            let bias: Vec<f32> = (0..outputs).map(|_| value(&mut next)).collect();
            let bias = (case % 5 != 0).then_some(&bias[..]);
            let mut got = vec![0.0f32; batches * outputs];
            fully_connected_f32(&p, &input, &weights, bias, &mut got);
            for b in 0..batches {
                for o in 0..outputs {
                    let mut total = 0.0f32;
                    for d in 0..depth {
                        total += input[b * depth + d] * weights[o * depth + d];
                    }
                    let want = clamp_f32(
                        total + bias.map_or(0.0, |v| v[o]),
                        p.float_activation_min,
                        p.float_activation_max,
                    );
                    let g = got[b * outputs + o];
                    assert_eq!(
                        g.to_bits(),
                        want.to_bits(),
                        "case {case}: batch {b} output {o}: {g} != {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn float_with_bias_and_relu6() {
        let p = prepare_f32(1, 3, 2, Activation::Relu6).unwrap();
        let input = [1.0f32, 2.0, 3.0];
        let weights = [1.0f32, 1.0, 1.0, -1.0, 0.0, 0.0];
        let mut out = [0.0f32; 2];
        fully_connected_f32(&p, &input, &weights, Some(&[0.5, 0.25]), &mut out);
        assert_eq!(out, [6.0, 0.0]);
        let p = prepare_f32(1, 3, 2, Activation::None).unwrap();
        fully_connected_f32(&p, &input, &weights, None, &mut out);
        assert_eq!(out, [6.0, -1.0]);
    }

    #[test]
    fn bias_scale_check() {
        assert!(
            prepare_s8(
                1,
                1,
                1,
                q(0.5, 0),
                q(0.5, 0),
                Some(0.25),
                q(1.0, 0),
                Activation::None
            )
            .is_ok()
        );
        assert_eq!(
            prepare_s8(
                1,
                1,
                1,
                q(0.5, 0),
                q(0.5, 0),
                Some(0.5),
                q(1.0, 0),
                Activation::None
            ),
            Err(PrepareError::UnsupportedQuantization)
        );
        assert_eq!(
            prepare_f32(1, 0, 1, Activation::None),
            Err(PrepareError::InvalidShape)
        );
    }
}
