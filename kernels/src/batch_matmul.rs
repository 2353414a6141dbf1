//! BATCH_MATMUL: `output[b] = op(lhs[b]) x op(rhs[b])` over up to three broadcast batch dims,
//! `op` transposing where `adj_x` / `adj_y` is set; float32, int8 (int32 accumulators) and
//! int16 (int64 accumulators, zero points 0), as TFLM's `batch_matmul.cc` (which refuses
//! mixed and hybrid types and int32 outputs).
//!
//! TFLM transposes the RHS (unless `adj_y`) and the LHS (if `adj_x`) into persistent
//! buffers and runs `reference_ops::BatchMatMul` with the operands swapped; each output
//! element `(m, n)` is then `sum over k = 0..K` in increasing `k` of `rhs(k, n) * lhs(m, k)`
//! from `0` (float: `total += r * l` in `f32`, no fused multiply-add). These kernels read
//! both operands in place through their strides, so the sums are the same, in the same
//! order, with no transposed copy and no scratch memory.
//!
//! Quantized: `total += (rhs + weights_offset) * (lhs + input_offset)` with the offsets the
//! negated zero points, then `MultiplyByQuantizedMultiplier(total, m, s) + output_zero_point`
//! clamped to the type (the multiplier of `float(lhs_scale * rhs_scale) / output_scale`, as
//! `GetQuantizedConvolutionMultipler`; int16 uses the 64-bit overload).
//!
//! Batch dims broadcast like TFLM's (`broadcast_dim`, `extent`): both shapes are extended
//! to 5 dims; a batch dim of extent 1 does not advance.

use crate::fixed_point::{multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_i64};
use crate::quant::{PrepareError, QuantParams, ShiftRange, quantize_multiplier};

/// Largest operand rank.
pub const MAX_DIMS: usize = 5;

/// Constant parameters of a BATCH_MATMUL node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Output batch extents (broadcast), outermost first.
    pub batch: [usize; 3],
    /// LHS element stride of each batch dim (0 where it broadcasts).
    pub lhs_batch_stride: [usize; 3],
    /// RHS element stride of each batch dim (0 where it broadcasts).
    pub rhs_batch_stride: [usize; 3],
    /// Output rows, columns and the accumulation depth.
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// LHS element strides of `m` and `k` (`adj_x` swaps them).
    pub lhs_m_stride: usize,
    pub lhs_k_stride: usize,
    /// RHS element strides of `k` and `n` (`adj_y` swaps them).
    pub rhs_k_stride: usize,
    pub rhs_n_stride: usize,
    /// Quantized: `-lhs_zero_point`, `-rhs_zero_point`, the output zero point.
    pub input_offset: i32,
    pub weights_offset: i32,
    pub output_offset: i32,
    /// Quantized: the output multiplier and exponent.
    pub output_multiplier: i32,
    pub output_shift: i32,
    /// Elements of the LHS and RHS.
    pub lhs_size: usize,
    pub rhs_size: usize,
}

impl Params {
    /// Number of output elements.
    pub const fn output_size(&self) -> usize {
        self.batch[0] * self.batch[1] * self.batch[2] * self.m * self.n
    }
}

/// The kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Shapes (ranks 2..=5, no zero dims) and adjoint flags with TFLM's checks (broadcastable
/// batch dims, matching accumulation depths). Returns the parameters and the output shape
/// (`[batch dims of rank max(lhs, rhs) - 2..., m, n]`) as an array and its length.
pub fn prepare_f32(
    lhs: &[usize],
    rhs: &[usize],
    adj_x: bool,
    adj_y: bool,
) -> Result<(Params, [usize; MAX_DIMS], usize), PrepareError> {
    let (lr, rr) = (lhs.len(), rhs.len());
    if !(2..=MAX_DIMS).contains(&lr)
        || !(2..=MAX_DIMS).contains(&rr)
        || lhs.contains(&0)
        || rhs.contains(&0)
    {
        return Err(PrepareError::InvalidShape);
    }
    let ext = |s: &[usize]| {
        let mut e = [1usize; MAX_DIMS];
        e[MAX_DIMS - s.len()..].copy_from_slice(s);
        e
    };
    let (le, re) = (ext(lhs), ext(rhs));
    let (rows_x, cols_x) = (le[3], le[4]);
    let (rows_y, cols_y) = (re[3], re[4]);
    let (m, k) = if adj_x {
        (cols_x, rows_x)
    } else {
        (rows_x, cols_x)
    };
    let (k2, n) = if adj_y {
        (cols_y, rows_y)
    } else {
        (rows_y, cols_y)
    };
    if k != k2 {
        return Err(PrepareError::InvalidShape);
    }
    let stride = |e: &[usize; MAX_DIMS], d: usize| -> usize {
        if e[d] == 1 {
            0
        } else {
            e[d + 1..].iter().product()
        }
    };
    let mut p = Params {
        batch: [1; 3],
        lhs_batch_stride: [0; 3],
        rhs_batch_stride: [0; 3],
        m,
        n,
        k,
        lhs_m_stride: if adj_x { 1 } else { cols_x },
        lhs_k_stride: if adj_x { cols_x } else { 1 },
        rhs_k_stride: if adj_y { 1 } else { cols_y },
        rhs_n_stride: if adj_y { cols_y } else { 1 },
        input_offset: 0,
        weights_offset: 0,
        output_offset: 0,
        output_multiplier: 0,
        output_shift: 0,
        lhs_size: lhs.iter().product(),
        rhs_size: rhs.iter().product(),
    };
    for d in 0..3 {
        let (a, b) = (le[d], re[d]);
        if a != b && a != 1 && b != 1 {
            return Err(PrepareError::InvalidShape);
        }
        p.batch[d] = if a == 1 { b } else { a };
        p.lhs_batch_stride[d] = stride(&le, d);
        p.rhs_batch_stride[d] = stride(&re, d);
    }
    let rank = lr.max(rr);
    let mut out = [0usize; MAX_DIMS];
    for (i, o) in out[..rank - 2].iter_mut().enumerate() {
        *o = p.batch[3 - (rank - 2) + i];
    }
    out[rank - 2] = m;
    out[rank - 1] = n;
    Ok((p, out, rank))
}

#[allow(clippy::too_many_arguments)]
/// Quantized parameters (int8, or int16 with `wide`: the 64-bit multiplier range; TFLM
/// requires zero points of 0 there, checked by the caller).
pub fn prepare_quantized(
    lhs: &[usize],
    rhs: &[usize],
    adj_x: bool,
    adj_y: bool,
    lhs_q: QuantParams,
    rhs_q: QuantParams,
    out_q: QuantParams,
    wide: bool,
) -> Result<(Params, [usize; MAX_DIMS], usize), PrepareError> {
    let (mut p, out, rank) = prepare_f32(lhs, rhs, adj_x, adj_y)?;
    let product = (lhs_q.scale * rhs_q.scale) as f64;
    if !(product >= 0.0) {
        return Err(PrepareError::UnsupportedQuantization);
    }
    let range = if wide {
        ShiftRange::I64
    } else {
        ShiftRange::I32
    };
    let (m, s) = quantize_multiplier(product / out_q.scale as f64, range)?;
    p.input_offset = -lhs_q.zero_point;
    p.weights_offset = -rhs_q.zero_point;
    p.output_offset = out_q.zero_point;
    p.output_multiplier = m;
    p.output_shift = s;
    Ok((p, out, rank))
}

/// Calls `f(lhs_base, rhs_base, out_base)` for each batch matrix.
#[inline(always)]
fn for_each_batch(p: &Params, mut f: impl FnMut(usize, usize, usize)) {
    let mut o = 0;
    for b0 in 0..p.batch[0] {
        for b1 in 0..p.batch[1] {
            for b2 in 0..p.batch[2] {
                let l = b0 * p.lhs_batch_stride[0]
                    + b1 * p.lhs_batch_stride[1]
                    + b2 * p.lhs_batch_stride[2];
                let r = b0 * p.rhs_batch_stride[0]
                    + b1 * p.rhs_batch_stride[1]
                    + b2 * p.rhs_batch_stride[2];
                f(l, r, o);
                o += p.m * p.n;
            }
        }
    }
}

/// Float32 BATCH_MATMUL.
pub fn batch_matmul_f32(p: &Params, lhs: &[f32], rhs: &[f32], output: &mut [f32]) {
    debug_assert_eq!(lhs.len(), p.lhs_size);
    debug_assert_eq!(rhs.len(), p.rhs_size);
    debug_assert_eq!(output.len(), p.output_size());
    for_each_batch(p, |lb, rb, ob| {
        for m in 0..p.m {
            for n in 0..p.n {
                let mut total = 0.0f32;
                for k in 0..p.k {
                    let l = lhs[lb + m * p.lhs_m_stride + k * p.lhs_k_stride];
                    let r = rhs[rb + k * p.rhs_k_stride + n * p.rhs_n_stride];
                    total += r * l;
                }
                output[ob + m * p.n + n] = total;
            }
        }
    });
}

/// Int8 BATCH_MATMUL (int32 accumulators).
pub fn batch_matmul_s8(p: &Params, lhs: &[i8], rhs: &[i8], output: &mut [i8]) {
    debug_assert_eq!(lhs.len(), p.lhs_size);
    debug_assert_eq!(rhs.len(), p.rhs_size);
    debug_assert_eq!(output.len(), p.output_size());
    for_each_batch(p, |lb, rb, ob| {
        for m in 0..p.m {
            for n in 0..p.n {
                let mut total = 0i32;
                for k in 0..p.k {
                    let l = lhs[lb + m * p.lhs_m_stride + k * p.lhs_k_stride] as i32;
                    let r = rhs[rb + k * p.rhs_k_stride + n * p.rhs_n_stride] as i32;
                    total =
                        total.wrapping_add((r + p.weights_offset).wrapping_mul(l + p.input_offset));
                }
                let v =
                    multiply_by_quantized_multiplier(total, p.output_multiplier, p.output_shift)
                        .wrapping_add(p.output_offset);
                output[ob + m * p.n + n] = v.clamp(-128, 127) as i8;
            }
        }
    });
}

/// Int16 BATCH_MATMUL (int64 accumulators, zero points 0).
///
/// Integer sums do not depend on the order of their terms, so a tile of up to `S16_ROWS`
/// LHS rows by `S16_BLOCK` outputs is accumulated at once, `k` outermost: each RHS row
/// block (contiguous, or gathered through its stride with `adj_y`) is read once per tile and
/// multiplied by the tile's LHS values. The products are summed exactly in `i32` halves
/// (each LHS value split into its high and low byte, see the loop) and joined in the `i64`
/// totals per chunk of `S16_DEPTH` depths, so no 64-bit multiply is needed per product.
/// Nonzero zero points (which TFLM refuses for int16) take one strided `i64` dot product per
/// output.
pub fn batch_matmul_s16(p: &Params, lhs: &[i16], rhs: &[i16], output: &mut [i16]) {
    debug_assert_eq!(lhs.len(), p.lhs_size);
    debug_assert_eq!(rhs.len(), p.rhs_size);
    debug_assert_eq!(output.len(), p.output_size());
    let (input_offset, weights_offset) = (p.input_offset as i64, p.weights_offset as i64);
    let zero_offsets = p.input_offset == 0 && p.weights_offset == 0;
    let finish = |total: i64| -> i16 {
        let v = multiply_by_quantized_multiplier_i64(total, p.output_multiplier, p.output_shift)
            .wrapping_add(p.output_offset);
        v.clamp(-32768, 32767) as i16
    };
    if p.n == 0 {
        return;
    }
    for_each_batch(p, |lb, rb, ob| {
        let Some(out) = output.get_mut(ob..ob + p.m * p.n) else {
            return;
        };
        if zero_offsets {
            for (mt, otile) in out.chunks_mut(S16_ROWS * p.n).enumerate() {
                let rows = otile.len() / p.n;
                let lbase = lb + mt * S16_ROWS * p.lhs_m_stride;
                let mut n0 = 0;
                while n0 < p.n {
                    let width = (p.n - n0).min(S16_BLOCK);
                    let mut acc = [[0i64; S16_BLOCK]; S16_ROWS];
                    // Each LHS value split as `l = 256 h + u` (`h` in -128..=127, `u` in
                    // 0..=255): `|r h| <= 2^22` and `|r u| < 2^23`, so up to 256 depths of
                    // each half sum exactly in an `i32`; the halves are joined as `256 H + U`
                    // in the `i64` accumulators per chunk of [`S16_DEPTH`] depths.
                    let mut k0 = 0;
                    while k0 < p.k {
                        let depth = (p.k - k0).min(S16_DEPTH);
                        // The chunk's RHS blocks, `k` by `k`: contiguous rows copied (a
                        // whole block where the RHS goes on: lanes past `width` are never
                        // stored), strided ones (`adj_y`) gathered, all before any is read.
                        let mut tile = [[0i16; S16_BLOCK]; S16_DEPTH];
                        for (kk, row) in tile[..depth].iter_mut().enumerate() {
                            let start = rb + (k0 + kk) * p.rhs_k_stride + n0 * p.rhs_n_stride;
                            if p.rhs_n_stride == 1 {
                                if let Some(r) = rhs.get(start..).and_then(<[i16]>::first_chunk) {
                                    *row = *r;
                                } else {
                                    let Some(r) = rhs.get(start..start + width) else {
                                        return;
                                    };
                                    row[..width].copy_from_slice(r);
                                }
                            } else {
                                for (j, x) in row[..width].iter_mut().enumerate() {
                                    let Some(&r) = rhs.get(start + j * p.rhs_n_stride) else {
                                        return;
                                    };
                                    *x = r;
                                }
                            }
                        }
                        let mut hi = [[0i32; S16_BLOCK]; S16_ROWS];
                        let mut lo = [[0i32; S16_BLOCK]; S16_ROWS];
                        for (kk, r) in tile[..depth].iter().enumerate() {
                            let at = lbase + (k0 + kk) * p.lhs_k_stride;
                            for (i, (hi, lo)) in hi[..rows].iter_mut().zip(&mut lo).enumerate() {
                                let Some(&l) = lhs.get(at + i * p.lhs_m_stride) else {
                                    return;
                                };
                                let (h, u) = ((l >> 8) as i32, (l & 0xFF) as i32);
                                for ((hi, lo), &x) in hi.iter_mut().zip(lo.iter_mut()).zip(r) {
                                    *hi += x as i32 * h;
                                    *lo += x as i32 * u;
                                }
                            }
                        }
                        for ((a, hi), lo) in acc[..rows].iter_mut().zip(&hi).zip(&lo) {
                            for ((a, &h), &u) in a.iter_mut().zip(hi).zip(lo) {
                                *a = a.wrapping_add(((h as i64) << 8) + u as i64);
                            }
                        }
                        k0 += depth;
                    }
                    for (orow, a) in otile.chunks_exact_mut(p.n).zip(&acc) {
                        for (o, &a) in orow[n0..n0 + width].iter_mut().zip(a) {
                            *o = finish(a);
                        }
                    }
                    n0 += width;
                }
            }
            return;
        }
        for (m, orow) in out.chunks_exact_mut(p.n).enumerate() {
            let lbase = lb + m * p.lhs_m_stride;
            for (n, o) in orow.iter_mut().enumerate() {
                let mut total = 0i64;
                for k in 0..p.k {
                    let l = lhs[lbase + k * p.lhs_k_stride] as i64;
                    let r = rhs[rb + k * p.rhs_k_stride + n * p.rhs_n_stride] as i64;
                    total = total.wrapping_add((r + weights_offset) * (l + input_offset));
                }
                *o = finish(total);
            }
        }
    });
}

/// Outputs of one LHS row accumulated together by [`batch_matmul_s16`].
const S16_BLOCK: usize = 8;
/// LHS rows accumulated together by [`batch_matmul_s16`].
const S16_ROWS: usize = 4;
/// Depths of RHS blocks read, and summed in `i32` halves, at once by [`batch_matmul_s16`]
/// (at most 256: `256 * 2^23 <= 2^31`).
const S16_DEPTH: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplies_with_adjoints_and_broadcasting() {
        // [2,2,3] x [3,2] (rhs broadcast over the batch).
        let (p, out, rank) = prepare_f32(&[2, 2, 3], &[3, 2], false, false).unwrap();
        assert_eq!(&out[..rank], &[2, 2, 2]);
        let a: [f32; 12] = core::array::from_fn(|i| i as f32);
        let b = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let mut y = [0.0f32; 8];
        batch_matmul_f32(&p, &a, &b, &mut y);
        assert_eq!(y, [2.0, 3.0, 8.0, 9.0, 14.0, 15.0, 20.0, 21.0]);
        // The same with both operands stored transposed.
        let at = [0.0, 3.0, 1.0, 4.0, 2.0, 5.0, 6.0, 9.0, 7.0, 10.0, 8.0, 11.0];
        let bt = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0];
        let (p, _, _) = prepare_f32(&[2, 3, 2], &[2, 3], true, true).unwrap();
        let mut z = [0.0f32; 8];
        batch_matmul_f32(&p, &at, &bt, &mut z);
        assert_eq!(y, z);
        assert!(prepare_f32(&[2, 3], &[2, 3], false, false).is_err());
        assert!(prepare_f32(&[2, 2, 3], &[3, 3, 2], false, false).is_err());
    }

    /// The int16 tiles against a plain `i64` triple loop, with and without adjoints, for
    /// shapes with partial row, column and depth chunks, extreme values included.
    #[test]
    fn int16_tiles_equal_a_plain_loop() {
        use crate::fixed_point::multiply_by_quantized_multiplier_i64 as mbqm;
        use std::vec::Vec;
        let q = |scale| QuantParams {
            scale,
            zero_point: 0,
        };
        let mut seed = 3u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            match seed >> 29 {
                0 => i16::MIN,
                1 => i16::MAX,
                _ => (seed >> 16) as i16,
            }
        };
        for (b, m, k, n) in [
            (1, 1, 1, 1),
            (2, 3, 6, 6),
            (1, 9, 5, 17),
            (3, 4, 40, 8),
            (1, 5, 3, 9),
            (1, 3, 600, 5),
        ] {
            let lhs: Vec<i16> = (0..b * m * k).map(|_| next()).collect();
            let rhs: Vec<i16> = (0..k * n).map(|_| next()).collect();
            for (adj_x, adj_y) in [(false, false), (false, true), (true, false), (true, true)] {
                let ls = if adj_x { [b, k, m] } else { [b, m, k] };
                let rs = if adj_y { [n, k] } else { [k, n] };
                // Element (i, j) of op(x) for a row-major [rows, cols] matrix.
                let at = |x: &[i16], adj: bool, cols: usize, i: usize, j: usize| {
                    x[if adj { j * cols + i } else { i * cols + j }] as i64
                };
                for out_scale in [1.0e5f32, 3.0e6, 1.0e8] {
                    let (p, _, _) = prepare_quantized(
                        &ls,
                        &rs,
                        adj_x,
                        adj_y,
                        q(1.0),
                        q(1.0),
                        q(out_scale),
                        true,
                    )
                    .unwrap();
                    let mut want = std::vec![0i16; b * m * n];
                    for bi in 0..b {
                        let l = &lhs[bi * m * k..(bi + 1) * m * k];
                        for i in 0..m {
                            for j in 0..n {
                                let t: i64 = (0..k)
                                    .map(|kk| {
                                        at(l, adj_x, ls[2], i, kk) * at(&rhs, adj_y, rs[1], kk, j)
                                    })
                                    .sum();
                                want[(bi * m + i) * n + j] =
                                    mbqm(t, p.output_multiplier, p.output_shift)
                                        .clamp(-32768, 32767)
                                        as i16;
                            }
                        }
                    }
                    let mut y = std::vec![1i16; b * m * n];
                    batch_matmul_s16(&p, &lhs, &rhs, &mut y);
                    assert_eq!(y, want, "{b}x{m}x{k} by {k}x{n}, adjoints {adj_x} {adj_y}");
                    assert!(y.iter().any(|&v| v != 0 && v != i16::MIN && v != i16::MAX));
                }
            }
        }
    }
}
