//! Kiln's accumulating region ends (tiling "sinks"; no TFLite operator): an int8 image that
//! runs in strips of rows into a pooling over the whole image never exists whole. Each strip
//! adds its pixels' per-channel sums to an INT32 accumulator ([`row_sum_s8`]), and
//! [`average_finish_s8`] turns the accumulated sums into the pooled output exactly as TFLM's
//! `reference_integer_ops::AveragePool` does for a window covering the whole image: the
//! int32 sum of the window's values per channel, divided by the count with rounding half
//! away from zero, clamped to the activation range.
//!
//! A strip of an image flattened into an int8 FULLY_CONNECTED likewise adds its slice of
//! the dot products, `(w + weights_offset) * (x + input_offset)` over its elements, to an
//! INT32 accumulator per output ([`dot_sum_s8`]), and [`dense_finish_s8`] adds the bias and
//! requantizes as `reference_integer_ops::FullyConnected` (per tensor or per channel).
//!
//! A strip of the image of an int8 DEPTHWISE_CONV_2D whose window is that whole image adds
//! its pixels' weighted per-channel sums ([`depthwise_sum_s8`]), which [`dense_finish_s8`]
//! finishes per channel as `reference_integer_ops::DepthwiseConv` does.
//!
//! Integer addition is associative, so the sums of disjoint strips covering every row once
//! are the whole image's sums (in wrapping arithmetic too, as TFLM's kernels add).

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::util::clamp_i32;

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

/// Parameters of [`average_finish_s8`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Pixels of the whole image (its height times its width): the window's count.
    pub count: i32,
    /// Lower clamp of the quantized output.
    pub quantized_activation_min: i32,
    /// Upper clamp of the quantized output.
    pub quantized_activation_max: i32,
}

/// Per-channel sums of the first strip: `out[c] = sum of input[p * depth + c]` over the
/// pixels `p` of the strip (`depth = out.len()`; `input.len()` a multiple of it).
pub fn row_sum_s8_first(input: &[i8], out: &mut [i32]) {
    out.fill(0);
    row_sum_s8_in_place2(input, out);
}

/// The sums so far plus a strip's: `out[c] = acc[c] + sum of input[p * depth + c]`.
pub fn row_sum_s8(input: &[i8], acc: &[i32], out: &mut [i32]) {
    out.copy_from_slice(acc);
    row_sum_s8_in_place2(input, out);
}

/// [`row_sum_s8`] over its accumulator: `acc[c] += sum of input[p * depth + c]`.
pub fn row_sum_s8_in_place2(input: &[i8], acc: &mut [i32]) {
    let depth = acc.len();
    if depth == 0 {
        return;
    }
    debug_assert_eq!(input.len() % depth, 0);
    for pixel in input.chunks_exact(depth) {
        for (a, &v) in acc.iter_mut().zip(pixel) {
            *a = a.wrapping_add(i32::from(v));
        }
    }
}

/// The average over the whole image from its per-channel sums (TFLM's int8 AVERAGE_POOL_2D
/// of one output pixel whose window covers the image): `(s ± count / 2) / count`, rounding
/// half away from zero, clamped. Returns `false` (TFLM's error) for a count of zero.
pub fn average_finish_s8(p: &Params, acc: &[i32], out: &mut [i8]) -> bool {
    let count = p.count;
    if count <= 0 {
        return false;
    }
    for (o, &a) in out.iter_mut().zip(acc) {
        let avg = if a > 0 {
            (a + count / 2) / count
        } else {
            (a - count / 2) / count
        };
        *o = clamp_i32(avg, p.quantized_activation_min, p.quantized_activation_max) as i8;
    }
    true
}

/// Parameters of [`dot_sum_s8`]: where a strip sits in the flattened input of a
/// FULLY_CONNECTED, and its offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DotParams {
    /// The FULLY_CONNECTED's input elements (the weights' row length).
    pub accum_depth: usize,
    /// The strip's first element in the flattened input.
    pub first: usize,
    /// `-input zero point`.
    pub input_offset: i32,
    /// `-weights zero point` (0 for per-channel weights, as TFLM's kernel has none).
    pub weights_offset: i32,
}

/// The first strip's slice of the dot products: `out[o] = sum over i of (weights[o *
/// accum_depth + first + i] + weights_offset) * (input[i] + input_offset)`.
pub fn dot_sum_s8_first(p: &DotParams, input: &[i8], weights: &[i8], out: &mut [i32]) {
    out.fill(0);
    dot_sum_s8_in_place2(p, input, out, weights);
}

/// The dot products so far plus a strip's slice of them (see [`dot_sum_s8_first`]).
pub fn dot_sum_s8(p: &DotParams, input: &[i8], acc: &[i32], weights: &[i8], out: &mut [i32]) {
    out.copy_from_slice(acc);
    dot_sum_s8_in_place2(p, input, out, weights);
}

/// [`dot_sum_s8`] over its accumulator.
pub fn dot_sum_s8_in_place2(p: &DotParams, input: &[i8], acc: &mut [i32], weights: &[i8]) {
    if p.accum_depth == 0 {
        return;
    }
    debug_assert!(p.first + input.len() <= p.accum_depth);
    debug_assert!(weights.len() >= acc.len() * p.accum_depth);
    for (a, row) in acc.iter_mut().zip(weights.chunks_exact(p.accum_depth)) {
        let mut sum = *a;
        for (&x, &w) in input.iter().zip(&row[p.first..]) {
            sum = sum.wrapping_add(
                (i32::from(w) + p.weights_offset).wrapping_mul(i32::from(x) + p.input_offset),
            );
        }
        *a = sum;
    }
}

/// Parameters of [`depthwise_sum_s8`]: where a strip sits in the image of a DEPTHWISE_CONV_2D
/// whose window is that whole image, and the input offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepthwiseSumParams {
    /// The image's channels (the accumulator's length).
    pub channels: usize,
    /// The strip's first pixel in the image (its first row times the image's width).
    pub first: usize,
    /// `-input zero point`.
    pub input_offset: i32,
}

/// The first strip's part of the per-channel sums: `out[c] = sum over the strip's pixels
/// `p` of filter[(first + p) * channels + c] * (input[p * channels + c] + input_offset)`
/// (TFLM's `reference_integer_ops::DepthwiseConv` accumulation for the one output pixel).
pub fn depthwise_sum_s8_first(
    p: &DepthwiseSumParams,
    input: &[i8],
    filter: &[i8],
    out: &mut [i32],
) {
    out.fill(0);
    depthwise_sum_s8_in_place2(p, input, out, filter);
}

/// The sums so far plus a strip's part of them (see [`depthwise_sum_s8_first`]).
pub fn depthwise_sum_s8(
    p: &DepthwiseSumParams,
    input: &[i8],
    acc: &[i32],
    filter: &[i8],
    out: &mut [i32],
) {
    out.copy_from_slice(acc);
    depthwise_sum_s8_in_place2(p, input, out, filter);
}

/// [`depthwise_sum_s8`] over its accumulator.
pub fn depthwise_sum_s8_in_place2(
    p: &DepthwiseSumParams,
    input: &[i8],
    acc: &mut [i32],
    filter: &[i8],
) {
    let c = p.channels;
    if c == 0 {
        return;
    }
    debug_assert_eq!(acc.len(), c);
    debug_assert!((p.first * c + input.len()) <= filter.len());
    let weights = filter.get(p.first * c..).unwrap_or_default();
    for (pixel, w) in input.chunks_exact(c).zip(weights.chunks_exact(c)) {
        for ((a, &x), &w) in acc.iter_mut().zip(pixel).zip(w) {
            *a = a.wrapping_add(i32::from(w).wrapping_mul(i32::from(x) + p.input_offset));
        }
    }
}

/// Parameters of [`dense_finish_s8`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DenseParams {
    /// The output's zero point.
    pub output_offset: i32,
    /// Lower clamp of the quantized output.
    pub quantized_activation_min: i32,
    /// Upper clamp of the quantized output.
    pub quantized_activation_max: i32,
}

/// A FULLY_CONNECTED's int8 outputs from its accumulated dot products: `acc[o] + bias[o]`,
/// multiplied by `multiplier[o]` / `shift[o]` (a per-tensor layer's repeated), plus the
/// output offset, clamped (`reference_integer_ops::FullyConnected` and
/// `FullyConnectedPerChannel` after their sums); likewise a whole-image DEPTHWISE_CONV_2D's
/// from its per-channel sums (`reference_integer_ops::DepthwiseConv` after its sum).
pub fn dense_finish_s8(
    p: &DenseParams,
    multiplier: &[i32],
    shift: &[i32],
    acc: &[i32],
    bias: Option<&[i32]>,
    out: &mut [i8],
) {
    for (o, (y, &a)) in out.iter_mut().zip(acc).enumerate() {
        let a = match bias {
            Some(b) => a.wrapping_add(b[o]),
            None => a,
        };
        let v = multiply_by_quantized_multiplier(a, multiplier[o], shift[o])
            .wrapping_add(p.output_offset);
        *y = clamp_i32(v, p.quantized_activation_min, p.quantized_activation_max) as i8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_sum_to_the_whole_images_average() {
        // A 4x3 image of 2 channels, as one pool and as strips of rows 0..1, 1..3, 3..4.
        let image: [i8; 24] = core::array::from_fn(|i| (i as i8).wrapping_mul(37).wrapping_sub(50));
        let (w, d) = (3, 2);
        let mut acc = [0i32; 2];
        row_sum_s8_first(&image[..w * d], &mut acc);
        let mut next = [0i32; 2];
        row_sum_s8(&image[w * d..3 * w * d], &acc, &mut next);
        row_sum_s8_in_place2(&image[3 * w * d..], &mut next);
        let p = Params {
            count: 12,
            quantized_activation_min: -128,
            quantized_activation_max: 127,
        };
        let mut out = [0i8; 2];
        assert!(average_finish_s8(&p, &next, &mut out));
        for (c, &o) in out.iter().enumerate() {
            let s: i32 = image.iter().skip(c).step_by(d).map(|&v| i32::from(v)).sum();
            let want = if s > 0 { (s + 6) / 12 } else { (s - 6) / 12 };
            assert_eq!(i32::from(o), want);
        }
    }

    #[test]
    fn depthwise_strips_sum_to_the_whole_images_weighted_sums() {
        // A 5x2 image of 3 channels and its filter, as strips of rows 0..2, 2..3, 3..5.
        let (w, c) = (2, 3);
        let image: [i8; 30] = core::array::from_fn(|i| (i as i8).wrapping_mul(53).wrapping_add(7));
        let filter: [i8; 30] =
            core::array::from_fn(|i| (i as i8).wrapping_mul(-29).wrapping_sub(3));
        let at = |row: usize| DepthwiseSumParams {
            channels: c,
            first: row * w,
            input_offset: 11,
        };
        let mut acc = [0i32; 3];
        depthwise_sum_s8_first(&at(0), &image[..2 * w * c], &filter, &mut acc);
        let mut next = [0i32; 3];
        depthwise_sum_s8(
            &at(2),
            &image[2 * w * c..3 * w * c],
            &acc,
            &filter,
            &mut next,
        );
        depthwise_sum_s8_in_place2(&at(3), &image[3 * w * c..], &mut next, &filter);
        for (ch, &got) in next.iter().enumerate() {
            let want: i32 = (0..10)
                .map(|p| i32::from(filter[p * c + ch]) * (i32::from(image[p * c + ch]) + 11))
                .sum();
            assert_eq!(got, want, "channel {ch}");
        }
    }

    #[test]
    fn rounds_half_away_from_zero_and_clamps() {
        let p = Params {
            count: 4,
            quantized_activation_min: -3,
            quantized_activation_max: 127,
        };
        let mut out = [0i8; 4];
        assert!(average_finish_s8(&p, &[6, -6, -100, 5], &mut out));
        assert_eq!(out, [2, -2, -3, 1]);
        let zero = Params { count: 0, ..p };
        assert!(!average_finish_s8(&zero, &[1, 2, 3, 4], &mut out));
    }
}
