//! The microkernels for RV32 cores with the M extension and no SIMD (`riscv32imc`,
//! `riscv32imac`: ESP32-C3/C6/H2-class), in plain Rust (no `unsafe`). Same contract as the
//! other forms (see [`super`]), plus the blocks the drivers take on Helium too
//! (`two_pixels_by4`, `one_pixel_by4`: `gemm`'s hooks under `kiln_arch = "riscv"`).
//!
//! RV32IM multiplies in one instruction (`MUL`) but has no multiply-accumulate, no packed
//! arithmetic and (without Zbb) no sign-extending byte extraction from a register: a 32-bit
//! load of four int8 values costs seven shifts to unpack, while `LB` loads one value already
//! sign-extended. So each product is one `MUL` and one `ADD`, and what is saved is loads
//! and overhead:
//!
//! * **register blocking**: [`two_pixels_by4`] keeps the eight sums of two pixels by four
//!   output channels in registers, so a step of `k` is 6 loads for 8 products (the pairs of
//!   `mac_2x2`: 4 loads for 4); more accumulators do not fit RV32's registers next to the
//!   pointers (sixteen spill: tried);
//! * **unrolling by 4** with constant offsets (`LB a, 3(p)`), so the pointer increments
//!   and the loop branch are paid once per four steps (measured: 99 instructions per 32
//!   products, for 96 of loads, `MUL` and `ADD`);
//! * the requantization written out per channel, its multiplier, shift and rounding term
//!   loaded once for both pixels, the clamp's bounds in registers (at opt-level "s" LLVM
//!   keeps loops over four or eight outputs rolled, with the sums in memory);
//! * no unaligned word accesses (many RV32 cores trap on them; the callers pass slices at
//!   any byte).
//!
//! The depthwise taps ([`mac_taps4`]) are four channels per pass; blocks of several pixels
//! sharing the weights (the Helium form's) were slower in plain Rust here (the tap tables
//! and sixteen accumulators spill).

use super::dot;
use crate::gemm::Output;

/// Adds `p[j] * r[j]` for the four `j` to `a` (written out: at opt-level "s" LLVM keeps a
/// `for j in 0..4` loop rolled).
#[inline(always)]
fn step1(a: i32, p: &[i8; 4], r: &[i8; 4]) -> i32 {
    let m = |j: usize| p[j] as i32 * r[j] as i32;
    a.wrapping_add(m(0))
        .wrapping_add(m(1))
        .wrapping_add(m(2))
        .wrapping_add(m(3))
}

/// Two pixels times two channels (see [`super`]): the four sums in one loop, each loaded
/// value used twice.
// Not called by the drivers on RV32 (they take `two_pixels_by4`); kept for the contract
// and its tests.
#[allow(dead_code)]
#[inline(always)]
pub(crate) fn mac_2x2(k: usize, x: &[i8], w: &[i8], acc: [i32; 4]) -> [i32; 4] {
    let (Some(x), Some(w)) = (x.get(..2 * k), w.get(..2 * k)) else {
        return acc;
    };
    let (x0, x1) = x.split_at(k);
    let (w0, w1) = w.split_at(k);
    let [mut a00, mut a01, mut a10, mut a11] = acc;
    let ((c0, t0), (c1, t1)) = (x0.as_chunks::<4>(), x1.as_chunks::<4>());
    let ((d0, u0), (d1, u1)) = (w0.as_chunks::<4>(), w1.as_chunks::<4>());
    for (((p, q), r), s) in c0.iter().zip(c1).zip(d0).zip(d1) {
        a00 = step1(a00, p, r);
        a01 = step1(a01, p, s);
        a10 = step1(a10, q, r);
        a11 = step1(a11, q, s);
    }
    [
        a00.wrapping_add(dot(t0, u0)),
        a01.wrapping_add(dot(t0, u1)),
        a10.wrapping_add(dot(t1, u0)),
        a11.wrapping_add(dot(t1, u1)),
    ]
}

/// [`super::widen_2_portable`] (not used on these cores: `WIDENS` is false outside the
/// tests, widening saves nothing without packed multiplies).
#[inline(always)]
pub(crate) fn widen_2(k: usize, x: &[i8], out: &mut [i8]) {
    super::widen_2_portable(k, x, out);
}

/// [`super::mac_2x2_wide_portable`] (see [`widen_2`]).
// Not called by the drivers (they take `two_pixels_by4`; the DSP and portable pair loops
// read the pixels themselves); the tests check the widened lane order with it.
#[cfg(test)]
#[inline(always)]
pub(crate) fn mac_2x2_wide(k: usize, xw: &[i8], w: &[i8], acc: [i32; 4]) -> [i32; 4] {
    super::mac_2x2_wide_portable(k, xw, w, acc)
}

/// One pixel times two channels: both sums in one loop, each pixel value loaded once.
#[inline(always)]
pub(crate) fn mac_1x2(k: usize, x: &[i8], w: &[i8], acc: [i32; 2]) -> [i32; 2] {
    let (Some(x), Some(w)) = (x.get(..k), w.get(..2 * k)) else {
        return acc;
    };
    let (w0, w1) = w.split_at(k);
    let [mut a0, mut a1] = acc;
    let (c, t) = x.as_chunks::<4>();
    let ((d0, u0), (d1, u1)) = (w0.as_chunks::<4>(), w1.as_chunks::<4>());
    for ((p, r), s) in c.iter().zip(d0).zip(d1) {
        a0 = step1(a0, p, r);
        a1 = step1(a1, p, s);
    }
    [a0.wrapping_add(dot(t, u0)), a1.wrapping_add(dot(t, u1))]
}

/// Two pixels times one channel: both sums in one loop, each weight loaded once.
// Not called by the drivers on RV32 (they take `two_pixels_by4`); kept for the contract
// and its tests.
#[allow(dead_code)]
#[inline(always)]
pub(crate) fn mac_2x1(k: usize, x: &[i8], w: &[i8], acc: [i32; 2]) -> [i32; 2] {
    let (Some(x), Some(w)) = (x.get(..2 * k), w.get(..k)) else {
        return acc;
    };
    let (x0, x1) = x.split_at(k);
    let [mut a0, mut a1] = acc;
    let ((c0, t0), (c1, t1)) = (x0.as_chunks::<4>(), x1.as_chunks::<4>());
    let (d, u) = w.as_chunks::<4>();
    for ((p, q), r) in c0.iter().zip(c1).zip(d) {
        a0 = step1(a0, p, r);
        a1 = step1(a1, q, r);
    }
    [a0.wrapping_add(dot(t0, u)), a1.wrapping_add(dot(t1, u))]
}

/// One pixel times one channel.
#[inline(always)]
pub(crate) fn mac_1x1(k: usize, x: &[i8], w: &[i8], acc: i32) -> i32 {
    let (Some(x), Some(w)) = (x.get(..k), w.get(..k)) else {
        return acc;
    };
    let ((c, t), (d, u)) = (x.as_chunks::<4>(), w.as_chunks::<4>());
    let mut a = acc;
    for (p, r) in c.iter().zip(d) {
        a = step1(a, p, r);
    }
    a.wrapping_add(dot(t, u))
}

/// Depthwise taps, four channels at a time (see [`super`]): the four accumulators in
/// registers, each tap's four inputs and its two words of int16 weight pairs
/// (`depthwise_conv_2d::fast::pack_weights`) loaded once.
#[inline(always)]
pub(crate) fn mac_taps4(
    taps: &[&[i8]],
    w: &[i32],
    bias: &[i32],
    mut store: impl FnMut(usize, [i32; 4]),
) {
    let t = taps.len();
    let depth = bias.len() / 4 * 4;
    if t == 0
        || t > super::MAX_TAPS
        || w.len() < depth / 2 * t
        || taps.iter().any(|x| x.len() < depth)
    {
        return;
    }
    for ((g, b), wg) in bias.chunks_exact(4).enumerate().zip(w.chunks_exact(2 * t)) {
        let [mut a0, mut a1, mut a2, mut a3] = [b[0], b[1], b[2], b[3]];
        let at = 4 * g;
        for (x, wt) in taps.iter().zip(wg.chunks_exact(2)) {
            if let Some(x) = x.get(at..at + 4) {
                let (lo, hi) = (wt[0], wt[1]);
                a0 = a0.wrapping_add(x[0] as i32 * lo as i16 as i32);
                a1 = a1.wrapping_add(x[1] as i32 * (lo >> 16));
                a2 = a2.wrapping_add(x[2] as i32 * hi as i16 as i32);
                a3 = a3.wrapping_add(x[3] as i32 * (hi >> 16));
            }
        }
        store(g, [a0, a1, a2, a3]);
    }
}

/// One output of channel `j`: its sum `s` plus the products of the pixel's tail `t` (its
/// last `k % 4` inputs, if any) with the channel's tail `u`, requantized with the channel's
/// `m`, `e` and `half` (`gemm::requantize` with the clamp of `q`, the rounding term
/// [`half`]`(e)` computed once per channel by the callers).
#[inline(always)]
fn output(s: i32, t: Option<&[i8]>, u: &[i8], m: i32, e: i32, half: i32, q: &Output) -> i8 {
    let acc = match t {
        Some(t) => s.wrapping_add(dot(t, u)),
        None => s,
    };
    let y = smmulr(acc.wrapping_shl(1), m);
    let r = asr(y + half + (y >> 31), e) + q.offset;
    let r = if r < q.min { q.min } else { r };
    (if r > q.max { q.max } else { r }) as i8
}

/// `2^(e-1)`, the rounding term of a right shift by `e` in 1..=31 (without a branch).
#[inline(always)]
fn half(e: i32) -> i32 {
    asr(1 << 30, 31 - e)
}

/// The requantization of [`crate::gemm`] without its clamp: `offset + ((y + 2^(e-1) -
/// [y < 0]) >> e)` with `y = SMMULR(2 * acc, m)`, `e` in 1..=31.
#[inline(always)]
pub(crate) fn rq_shift(acc: i32, m: i32, e: i32, offset: i32) -> i32 {
    let y = smmulr(acc.wrapping_shl(1), m);
    asr(y + half(e) + (y >> 31), e) + offset
}

/// The first `n4` channels (`n4 = 4 * (min(out.len(), bias.len(), m.len(), e.len()) / 4)`)
/// of one pixel `x` (`k` bytes): `out[o] = requantize(x . w[ok..(o + 1)k] + bias[o])`, four
/// channels per pass over `x` (16 products per four steps of `k` from 4 + 16 loads).
/// Returns `n4` (0 if a slice is short or `k == 0`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn one_pixel_by4(
    k: usize,
    x: &[i8],
    w: &[i8],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &Output,
    out: &mut [i8],
) -> usize {
    let n4 = out.len().min(bias.len()).min(m.len()).min(e.len()) / 4 * 4;
    let (Some(x), Some(w)) = (x.get(..k), w.get(..n4.saturating_mul(k))) else {
        return 0;
    };
    if k == 0 || n4 == 0 || w.len() != n4 * k {
        return 0;
    }
    // In registers for the whole call (the stores to `out` cannot change it).
    let q = *q;
    let (c, t) = x.as_chunks::<4>();
    for ((((rows, b), mm), ee), o) in w
        .chunks_exact(4 * k)
        .zip(bias.chunks_exact(4))
        .zip(m.chunks_exact(4))
        .zip(e.chunks_exact(4))
        .zip(out.chunks_exact_mut(4))
    {
        let (r01, r23) = rows.split_at(2 * k);
        let ((r0, r1), (r2, r3)) = (r01.split_at(k), r23.split_at(k));
        let ((d0, u0), (d1, u1)) = (r0.as_chunks::<4>(), r1.as_chunks::<4>());
        let ((d2, u2), (d3, u3)) = (r2.as_chunks::<4>(), r3.as_chunks::<4>());
        let [mut a0, mut a1, mut a2, mut a3] = [b[0], b[1], b[2], b[3]];
        for ((((p, s0), s1), s2), s3) in c.iter().zip(d0).zip(d1).zip(d2).zip(d3) {
            a0 = step1(a0, p, s0);
            a1 = step1(a1, p, s1);
            a2 = step1(a2, p, s2);
            a3 = step1(a3, p, s3);
        }
        let t = (!t.is_empty()).then_some(t);
        // Written out: at opt-level "s" LLVM keeps a loop over the four rolled.
        let (h0, h1, h2, h3) = (half(ee[0]), half(ee[1]), half(ee[2]), half(ee[3]));
        o[0] = output(a0, t, u0, mm[0], ee[0], h0, &q);
        o[1] = output(a1, t, u1, mm[1], ee[1], h1, &q);
        o[2] = output(a2, t, u2, mm[2], ee[2], h2, &q);
        o[3] = output(a3, t, u3, mm[3], ee[3], h3, &q);
    }
    n4
}

/// [`one_pixel_by4`] for two pixels (`x0`, `x1`, `k` bytes each, into `out0`, `out1`): per
/// group of four channels eight sums in one pass (32 products per four steps of `k` from
/// 8 + 16 loads), the group's multipliers and shifts loaded once for both pixels. Returns
/// the channels done (0 if a slice is short or `k == 0`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn two_pixels_by4(
    k: usize,
    x0: &[i8],
    x1: &[i8],
    w: &[i8],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &Output,
    out0: &mut [i8],
    out1: &mut [i8],
) -> usize {
    let n4 = out0
        .len()
        .min(out1.len())
        .min(bias.len())
        .min(m.len())
        .min(e.len())
        / 4
        * 4;
    let (Some(x0), Some(x1), Some(w)) = (x0.get(..k), x1.get(..k), w.get(..n4.saturating_mul(k)))
    else {
        return 0;
    };
    if k == 0 || n4 == 0 || w.len() != n4 * k {
        return 0;
    }
    // In registers for the whole call (the stores to the outputs cannot change it).
    let q = *q;
    let ((c0, t0), (c1, t1)) = (x0.as_chunks::<4>(), x1.as_chunks::<4>());
    for (((((rows, b), mm), ee), o0), o1) in w
        .chunks_exact(4 * k)
        .zip(bias.chunks_exact(4))
        .zip(m.chunks_exact(4))
        .zip(e.chunks_exact(4))
        .zip(out0.chunks_exact_mut(4))
        .zip(out1.chunks_exact_mut(4))
    {
        let (r01, r23) = rows.split_at(2 * k);
        let ((r0, r1), (r2, r3)) = (r01.split_at(k), r23.split_at(k));
        let ((d0, u0), (d1, u1)) = (r0.as_chunks::<4>(), r1.as_chunks::<4>());
        let ((d2, u2), (d3, u3)) = (r2.as_chunks::<4>(), r3.as_chunks::<4>());
        let [mut a0, mut a1, mut a2, mut a3] = [b[0], b[1], b[2], b[3]];
        let [mut b0, mut b1, mut b2, mut b3] = [b[0], b[1], b[2], b[3]];
        for (((((p, p1), s0), s1), s2), s3) in c0.iter().zip(c1).zip(d0).zip(d1).zip(d2).zip(d3) {
            a0 = step1(a0, p, s0);
            b0 = step1(b0, p1, s0);
            a1 = step1(a1, p, s1);
            b1 = step1(b1, p1, s1);
            a2 = step1(a2, p, s2);
            b2 = step1(b2, p1, s2);
            a3 = step1(a3, p, s3);
            b3 = step1(b3, p1, s3);
        }
        let (t0, t1) = if t0.is_empty() {
            (None, None)
        } else {
            (Some(t0), Some(t1))
        };
        // Written out: at opt-level "s" LLVM keeps a loop over the eight rolled.
        let (h0, h1, h2, h3) = (half(ee[0]), half(ee[1]), half(ee[2]), half(ee[3]));
        o0[0] = output(a0, t0, u0, mm[0], ee[0], h0, &q);
        o1[0] = output(b0, t1, u0, mm[0], ee[0], h0, &q);
        o0[1] = output(a1, t0, u1, mm[1], ee[1], h1, &q);
        o1[1] = output(b1, t1, u1, mm[1], ee[1], h1, &q);
        o0[2] = output(a2, t0, u2, mm[2], ee[2], h2, &q);
        o1[2] = output(b2, t1, u2, mm[2], ee[2], h2, &q);
        o0[3] = output(a3, t0, u3, mm[3], ee[3], h3, &q);
        o1[3] = output(b3, t1, u3, mm[3], ee[3], h3, &q);
    }
    n4
}

/// `SSAT #8`: `x` saturated to `-128..=127`.
#[inline(always)]
pub(crate) fn ssat8(x: i32) -> i32 {
    x.clamp(-128, 127)
}

/// `x >> e` for `e` in `0..=31` (`SRA` takes the shift amount's low five bits).
#[inline(always)]
pub(crate) fn asr(x: i32, e: i32) -> i32 {
    x >> (e & 31)
}

/// `(a * b + 2^31) >> 32`, the rounded high word of the 64-bit product: `MULH` plus the
/// carry of adding `2^31` to the low word (`MUL`), which is the low word's top bit.
#[inline(always)]
pub(crate) fn smmulr(a: i32, b: i32) -> i32 {
    let high = ((a as i64 * b as i64) >> 32) as i32;
    let low = a.wrapping_mul(b) as u32;
    high.wrapping_add((low >> 31) as i32)
}
