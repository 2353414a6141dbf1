//! MEAN: average over a constant set of axes (`keep_dims` only changes the output shape).
//!
//! Follows TFLM's `reduce_common.cc` (`EvalMeanHelper`):
//!
//! * float: `reference_ops::Mean` sums every reduced element into its output element in
//!   increasing input-index order starting from `0.0`, then divides by the element count
//!   converted to `f32`. TFLM sends 4-D inputs reduced over axes 1 and 2 with `keep_dims` to
//!   a special 4-D routine; that routine adds the same values in the same order and divides
//!   by the same `f32`, so one kernel serves both paths.
//! * int8/int16: `reference_ops::QuantizedMeanOrSum` (mean): the `1 / count` factor is
//!   folded into the `QuantizeMultiplier(input_scale / output_scale)` multiplier at build
//!   time (`shift = min(floor(log2(count)), 32, 31 + output_shift)`,
//!   `multiplier = (multiplier << shift) / count`), and each output is
//!   `MultiplyByQuantizedMultiplier(sum - input_zero_point * count, ...) + output_zero_point`,
//!   clamped. The pinned TFLM takes this path even when input and output quantization are
//!   identical (older TFLM releases then used a truncating integer mean instead; checked
//!   against the pinned build, which rounds).
//!
//! TFLM accumulates into an `int32` scratch buffer the size of the output; these kernels
//! finish one output element at a time instead (integer sums do not depend on order), so
//! they need no scratch memory.
//!
//! Build-time `prepare*` resolves the axes like TFLM's `ResolveAxis` (negative axes count from
//! the end, duplicates are ignored), then merges adjacent dimensions that are both kept or
//! both reduced, so every input of up to 6 dimensions becomes at most three kept and three
//! reduced groups.

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::quant::{PrepareError, QuantParams, ShiftRange, quantize_multiplier};

/// Largest input rank accepted.
pub const MAX_DIMS: usize = 6;

/// Constant parameters of a MEAN node.
///
/// The input is viewed as kept and reduced dimension groups: output element
/// `(k0, k1, k2)` (row-major over `output_dims`) averages the input elements at
/// `k0 * output_strides[0] + k1 * output_strides[1] + k2 * output_strides[2] +
/// r0 * reduced_strides[0] + r1 * reduced_strides[1] + r2 * reduced_strides[2]`, visited
/// row-major over `reduced_dims` (which is increasing input-index order).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Extents of the kept dimension groups, outermost first (unused groups are 1).
    pub output_dims: [usize; 3],
    /// Input element stride of each kept group.
    pub output_strides: [usize; 3],
    /// Extents of the reduced dimension groups, outermost first (unused groups are 1).
    pub reduced_dims: [usize; 3],
    /// Input element stride of each reduced group.
    pub reduced_strides: [usize; 3],
    /// Number of input elements averaged into each output (`num_elements_in_axis`).
    pub num_elements_in_axis: usize,
    /// Input zero point (requantizing path).
    pub input_zero_point: i32,
    /// Output zero point (requantizing path).
    pub output_zero_point: i32,
    /// Q31 multiplier of `input_scale / output_scale / num_elements_in_axis` (already
    /// divided by the count as TFLM does in `QuantizedMeanOrSum`).
    pub output_multiplier: i32,
    /// Exponent of `output_multiplier` (after subtracting TFLM's count shift).
    pub output_shift: i32,
}

impl Params {
    /// Number of output elements.
    pub const fn output_size(&self) -> usize {
        self.output_dims[0] * self.output_dims[1] * self.output_dims[2]
    }

    /// Number of input elements.
    pub const fn input_size(&self) -> usize {
        self.output_size() * self.num_elements_in_axis
    }
}

/// Reference kernels need no scratch memory (see the module docs).
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Shapes of a MEAN of `input_shape` (at most [`MAX_DIMS`] dims, none zero) over the values
/// of the constant int32 `axis` tensor. Axes out of `-rank..rank` are rejected like TFLM's
/// `ResolveAxis`. Quantization fields are zero.
pub fn prepare_f32(input_shape: &[usize], axis: &[i32]) -> Result<Params, PrepareError> {
    let rank = input_shape.len();
    if rank > MAX_DIMS || input_shape.contains(&0) {
        return Err(PrepareError::InvalidShape);
    }
    let mut reduced = [false; MAX_DIMS];
    // ResolveAxis ignores the axes of a scalar input.
    let axis = if rank == 0 { &[][..] } else { axis };
    for &a in axis {
        let current = if a < 0 { a + rank as i32 } else { a };
        if current < 0 || current >= rank as i32 {
            return Err(PrepareError::InvalidShape);
        }
        reduced[current as usize] = true;
    }
    // Row-major strides.
    let mut strides = [0usize; MAX_DIMS];
    let mut acc = 1;
    for i in (0..rank).rev() {
        strides[i] = acc;
        acc *= input_shape[i];
    }
    // Merge adjacent dims of the same kind: (extent, stride) groups, outermost first.
    let mut kept = [(1usize, 0usize); MAX_DIMS];
    let mut red = [(1usize, 0usize); MAX_DIMS];
    let (mut nk, mut nr) = (0usize, 0usize);
    let mut prev_reduced: Option<bool> = None;
    for i in 0..rank {
        let (extent, stride) = (input_shape[i], strides[i]);
        let (groups, n) = if reduced[i] {
            (&mut red, &mut nr)
        } else {
            (&mut kept, &mut nk)
        };
        if prev_reduced == Some(reduced[i]) {
            // Contiguous with the previous (outer) dim of the same kind.
            let (pe, _) = groups[*n - 1];
            groups[*n - 1] = (pe * extent, stride);
        } else {
            groups[*n] = (extent, stride);
            *n += 1;
        }
        prev_reduced = Some(reduced[i]);
    }
    debug_assert!(nk <= 3 && nr <= 3);
    let mut p = Params {
        output_dims: [1; 3],
        output_strides: [0; 3],
        reduced_dims: [1; 3],
        reduced_strides: [0; 3],
        num_elements_in_axis: 1,
        input_zero_point: 0,
        output_zero_point: 0,
        output_multiplier: 0,
        output_shift: 0,
    };
    for (k, &(e, s)) in kept[..nk].iter().enumerate() {
        p.output_dims[3 - nk + k] = e;
        p.output_strides[3 - nk + k] = s;
    }
    for (k, &(e, s)) in red[..nr].iter().enumerate() {
        p.reduced_dims[3 - nr + k] = e;
        p.reduced_strides[3 - nr + k] = s;
        p.num_elements_in_axis *= e;
    }
    Ok(p)
}

/// The quantized part shared by [`prepare_s8`] and [`prepare_s16`].
fn prepare_quantized(
    input_shape: &[usize],
    axis: &[i32],
    input: QuantParams,
    output: QuantParams,
) -> Result<Params, PrepareError> {
    let mut p = prepare_f32(input_shape, axis)?;
    p.input_zero_point = input.zero_point;
    p.output_zero_point = output.zero_point;
    // PrepareMeanOrSumHelper: QuantizeMultiplier(double(input_scale) / double(output_scale)).
    // The folding below keeps the final shift in the same range (count_shift <= 31 + shift).
    let (multiplier, shift) =
        quantize_multiplier(input.scale as f64 / output.scale as f64, ShiftRange::I32)?;
    // QuantizedMeanOrSum (mean): fold 1 / num_elements_in_axis into the multiplier.
    let n = p.num_elements_in_axis as u64;
    let mut count_shift = 63 - n.leading_zeros() as i32;
    count_shift = count_shift.min(32);
    count_shift = count_shift.min(31 + shift);
    if count_shift < 0 {
        return Err(PrepareError::MultiplierOutOfRange);
    }
    p.output_multiplier = (((multiplier as i64) << count_shift) / n as i64) as i32;
    p.output_shift = shift - count_shift;
    Ok(p)
}

/// Build-time parameters of an int8 MEAN (`PrepareMeanOrSumHelper` + the multiplier
/// adjustment of `QuantizedMeanOrSum`). Shapes as [`prepare_f32`].
pub fn prepare_s8(
    input_shape: &[usize],
    axis: &[i32],
    input: QuantParams,
    output: QuantParams,
) -> Result<Params, PrepareError> {
    prepare_quantized(input_shape, axis, input, output)
}

/// Build-time parameters of an int16 MEAN (same computation as [`prepare_s8`]).
pub fn prepare_s16(
    input_shape: &[usize],
    axis: &[i32],
    input: QuantParams,
    output: QuantParams,
) -> Result<Params, PrepareError> {
    prepare_quantized(input_shape, axis, input, output)
}

/// Calls `f(base)` for each output element in order, `base` being the input offset of its
/// first reduced element, and stores the result.
#[inline(always)]
pub(crate) fn for_each_output<O>(p: &Params, output: &mut [O], mut f: impl FnMut(usize) -> O) {
    let [d0, d1, d2] = p.output_dims;
    let [s0, s1, s2] = p.output_strides;
    let mut out = output.iter_mut();
    for k0 in 0..d0 {
        for k1 in 0..d1 {
            let row = k0 * s0 + k1 * s1;
            for k2 in 0..d2 {
                let Some(o) = out.next() else { return };
                *o = f(row + k2 * s2);
            }
        }
    }
}

/// Folds `add` over the reduced elements of the output element at `base`, in increasing
/// input-index order.
#[inline(always)]
pub(crate) fn reduce<T: Copy, A>(
    p: &Params,
    input: &[T],
    base: usize,
    init: A,
    add: impl Fn(A, T) -> A,
) -> A {
    let [d0, d1, d2] = p.reduced_dims;
    let [s0, s1, s2] = p.reduced_strides;
    let mut acc = init;
    for r0 in 0..d0 {
        for r1 in 0..d1 {
            let row = base + r0 * s0 + r1 * s1;
            if s2 == 1 || d2 == 1 {
                for &x in &input[row..row + d2] {
                    acc = add(acc, x);
                }
            } else {
                for r2 in 0..d2 {
                    acc = add(acc, input[row + r2 * s2]);
                }
            }
        }
    }
    acc
}

/// The integer MEAN shared by int8 and int16 (`lo..=hi` is the output type's range); SUM
/// (`crate::reduce`) runs it with a multiplier not divided by the count.
#[inline(always)]
pub(crate) fn mean_quantized<T: Copy + Into<i32>>(
    p: &Params,
    input: &[T],
    output: &mut [T],
    lo: i32,
    hi: i32,
    store: impl Fn(i32) -> T,
) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(output.len(), p.output_size());
    // temp_sum - input_zero_point * num_elements_in_axis, computed in int64, cast to int32.
    let zp_times_n = (p.input_zero_point as i64).wrapping_mul(p.num_elements_in_axis as i64);
    for_each_output(p, output, |base| {
        let sum = reduce(p, input, base, 0i32, |a, x| a.wrapping_add(x.into()));
        let shifted_sum = (sum as i64).wrapping_sub(zp_times_n) as i32;
        let v = multiply_by_quantized_multiplier(shifted_sum, p.output_multiplier, p.output_shift)
            .wrapping_add(p.output_zero_point);
        store(v.clamp(lo, hi))
    });
}

/// Int8 MEAN (`reference_ops::QuantizedMeanOrSum<int8_t, int32_t>`).
pub fn mean_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    mean_quantized(p, input, output, i8::MIN as i32, i8::MAX as i32, |v| {
        v as i8
    });
}

/// Whether [`mean_s8_fast`] serves this MEAN: the innermost kept group is contiguous
/// (`output_strides[2] == 1`) and holds at least four elements.
pub fn fast_s8_fits(p: &Params) -> bool {
    p.output_strides[2] == 1 && p.output_dims[2] >= 4
}

/// Int8 MEAN, the same bytes as [`mean_s8`] with fewer instructions where
/// [`fast_s8_fits`] (as for a mean over the rows and columns of an NHWC image): the
/// reduced elements of four (or eight) neighbouring outputs are summed at once, one 32-bit
/// load per reduced position, in the 16-bit lanes of `arch::lanes_add_s8` (as the average
/// pool's, added into 32-bit sums every `LANE_TAPS` positions), then each
/// output is requantized as in [`mean_s8`]. The last `output_dims[2] % 4` outputs of a row
/// (and every output where the layer does not fit) are summed one element at a time.
pub fn mean_s8_fast(p: &Params, input: &[i8], output: &mut [i8]) {
    debug_assert_eq!(output.len(), p.output_size());
    if !fast_s8_fits(p) {
        return mean_s8(p, input, output);
    }
    let n = p.num_elements_in_axis;
    let zp_times_n = (p.input_zero_point as i64).wrapping_mul(n as i64);
    let requantize = |sum: i32| {
        let shifted_sum = (sum as i64).wrapping_sub(zp_times_n) as i32;
        let v = multiply_by_quantized_multiplier(shifted_sum, p.output_multiplier, p.output_shift)
            .wrapping_add(p.output_zero_point);
        v.clamp(i8::MIN as i32, i8::MAX as i32) as i8
    };
    let [d0, d1, d2] = p.output_dims;
    let [s0, s1, _] = p.output_strides;
    let mut out = output.chunks_exact_mut(d2);
    for k0 in 0..d0 {
        for k1 in 0..d1 {
            let Some(out_row) = out.next() else { return };
            let base = k0 * s0 + k1 * s1;
            let mut c = 0;
            while c + 8 <= d2 {
                let s = sums_s8::<2>(p, input, base + c);
                for (o, &v) in out_row[c..c + 8].iter_mut().zip(&s) {
                    *o = requantize(v);
                }
                c += 8;
            }
            if c + 4 <= d2 {
                let s = sums_s8::<1>(p, input, base + c);
                for (o, &v) in out_row[c..c + 4].iter_mut().zip(&s) {
                    *o = requantize(v);
                }
                c += 4;
            }
            while c < d2 {
                let sum = reduce(p, input, base + c, 0i32, |a, x: i8| {
                    a.wrapping_add(x as i32)
                });
                out_row[c] = requantize(sum);
                c += 1;
            }
        }
    }
}

/// The sums of the reduced elements of the `4 * W` outputs from input offset `base`, in
/// output order (through `arch::lanes_add_s8`'s lanes, added into 32 bits every
/// `LANE_TAPS` positions).
#[inline(always)]
fn sums_s8<const W: usize>(p: &Params, input: &[i8], base: usize) -> [i32; 8] {
    use crate::arch::{lane_sums_s8, lanes_add_s8};
    use crate::pooling::LANE_TAPS;
    let [d0, d1, d2] = p.reduced_dims;
    let [t0, t1, t2] = p.reduced_strides;
    let mut total = [0i32; 8];
    let mut lanes = [0u32; 4];
    let mut pending = 0;
    for r0 in 0..d0 {
        for r1 in 0..d1 {
            let row = base + r0 * t0 + r1 * t1;
            let mut r2 = 0;
            while r2 < d2 {
                let n = (d2 - r2).min(LANE_TAPS);
                if pending + n > LANE_TAPS {
                    for (t, v) in total.iter_mut().zip(lane_sums_s8(lanes, pending)) {
                        *t = t.wrapping_add(v);
                    }
                    (lanes, pending) = ([0; 4], 0);
                }
                lanes = lanes_add_s8::<W>(lanes, input, row + r2 * t2, n, t2);
                pending += n;
                r2 += n;
            }
        }
    }
    for (t, v) in total.iter_mut().zip(lane_sums_s8(lanes, pending)) {
        *t = t.wrapping_add(v);
    }
    total
}

/// Int16 MEAN (`reference_ops::QuantizedMeanOrSum<int16_t, int32_t>`).
pub fn mean_s16(p: &Params, input: &[i16], output: &mut [i16]) {
    mean_quantized(p, input, output, i16::MIN as i32, i16::MAX as i32, |v| {
        v as i16
    });
}

/// Float MEAN (`reference_ops::Mean<float, float>`): `sum` from `0.0` over the reduced
/// elements in input order, then `sum / (float)num_elements_in_axis`.
pub fn mean_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(output.len(), p.output_size());
    let count = p.num_elements_in_axis as f32;
    for_each_output(p, output, |base| {
        reduce(p, input, base, 0.0f32, |a, x| x + a) / count
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn q(scale: f32, zero_point: i32) -> QuantParams {
        QuantParams { scale, zero_point }
    }

    /// Naive reference: per output element, visit the whole input in order.
    fn naive_groups(shape: &[usize], axis: &[i32]) -> Vec<Vec<usize>> {
        let rank = shape.len();
        let red: Vec<bool> = (0..rank)
            .map(|i| {
                axis.iter()
                    .any(|&a| (if a < 0 { a + rank as i32 } else { a }) as usize == i)
            })
            .collect();
        let total: usize = shape.iter().product();
        let mut groups: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
        for flat in 0..total {
            let mut idx = vec![0; rank];
            let mut r = flat;
            for i in (0..rank).rev() {
                idx[i] = r % shape[i];
                r /= shape[i];
            }
            let key: Vec<usize> = (0..rank).filter(|&i| !red[i]).map(|i| idx[i]).collect();
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(flat),
                None => groups.push((key, vec![flat])),
            }
        }
        groups.sort_by(|a, b| a.0.cmp(&b.0));
        groups.into_iter().map(|(_, v)| v).collect()
    }

    #[test]
    fn layout_matches_naive_grouping() {
        let cases: &[(&[usize], &[i32])] = &[
            (&[2, 3, 4, 5], &[1, 2]),
            (&[2, 3, 4, 5], &[-1]),
            (&[2, 3, 4, 5], &[0, 2]),
            (&[2, 3, 4, 5], &[3, 1, 1]),
            (&[2, 3, 4, 5, 2, 3], &[0, 2, 4]),
            (&[2, 3, 4, 5, 2, 3], &[1, 3, 5]),
            (&[4], &[0]),
            (&[4, 3], &[]),
            (&[1, 3, 1, 2], &[0, 1, 2, 3]),
        ];
        for &(shape, axis) in cases {
            let p = prepare_f32(shape, axis).unwrap();
            let n: usize = shape.iter().product();
            let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let groups = naive_groups(shape, axis);
            assert_eq!(p.output_size(), groups.len());
            // Collect visited indices with a recording reducer.
            let mut visited = Vec::new();
            let mut out = vec![0.0f32; p.output_size()];
            for_each_output(&p, &mut out, |base| {
                let v = reduce(&p, &input, base, Vec::new(), |mut a: Vec<usize>, x| {
                    a.push(x as usize);
                    a
                });
                visited.push(v);
                0.0
            });
            assert_eq!(visited, groups, "{shape:?} {axis:?}");
        }
        assert_eq!(prepare_f32(&[], &[0]).unwrap().output_size(), 1);
        assert!(prepare_f32(&[2, 3], &[2]).is_err());
        assert!(prepare_f32(&[2, 3], &[-3]).is_err());
        assert!(prepare_f32(&[2, 0], &[1]).is_err());
    }

    #[test]
    fn float_and_integer_means() {
        let p = prepare_f32(&[1, 2, 2, 1], &[1, 2]).unwrap();
        let mut out = [0.0f32];
        mean_f32(&p, &[1.0, 2.0, 3.0, 5.0], &mut out);
        assert_eq!(out, [2.75]);

        // Same quantization still requantizes with rounding: (1 + 2 + 2) / 3 -> 2 and
        // (-2 - 3 - 3) / 3 -> -3 (relative to the zero point 1).
        let p = prepare_s8(&[2, 3], &[1], q(0.5, 1), q(0.5, 1)).unwrap();
        let mut out = [0i8; 2];
        mean_s8(&p, &[2, 3, 3, -1, -2, -2], &mut out);
        assert_eq!(out, [3, -2]);

        // Requantizing: output scale twice the input's, zero points differ.
        let p = prepare_s8(&[4], &[0], q(0.5, 0), q(1.0, 3)).unwrap();
        let mut out = [0i8];
        mean_s8(&p, &[10, 20, 30, 40], &mut out);
        // mean 25 * 0.5 = 12.5 -> 13 (round half up), + 3
        assert_eq!(out, [16]);
    }

    /// The fast int8 MEAN against [`mean_s8`]: means over the image axes of NHWC tensors
    /// (every block width: 1 to 21 channels, more than 256 reduced positions so the lanes
    /// flush), over inner axes, and layers it does not fit (then the same kernel).
    #[test]
    fn fast_int8_mean_matches_reference() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let cases: &[(&[usize], &[i32])] = &[
            (&[1, 3, 4, 1], &[1, 2]),
            (&[2, 3, 4, 5], &[1, 2]),
            (&[1, 30, 20, 8], &[1, 2]),
            (&[2, 17, 19, 21], &[1, 2]),
            (&[2, 40, 13], &[1]),
            (&[3, 4, 6, 5], &[0, 2]),
            (&[2, 3, 4, 5], &[-1]),
        ];
        for &(shape, axis) in cases {
            for (qi, qo) in [(q(0.5, -128), q(0.5, -128)), (q(0.02, 5), q(0.07, -9))] {
                let p = prepare_s8(shape, axis, qi, qo).unwrap();
                let n: usize = shape.iter().product();
                // Mostly 127 so that a lane holding more than 256 positions would overflow.
                let input: Vec<i8> = (0..n)
                    .map(|_| match next() % 4 {
                        0 => next() as i8,
                        _ => i8::MAX,
                    })
                    .collect();
                let (mut want, mut got) = (vec![0i8; p.output_size()], vec![1i8; p.output_size()]);
                mean_s8(&p, &input, &mut want);
                mean_s8_fast(&p, &input, &mut got);
                assert_eq!(got, want, "{shape:?} {axis:?}");
            }
        }
    }
}
