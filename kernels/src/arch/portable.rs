//! The microkernels in plain Rust (no `unsafe`): the host, Cortex-M0/M0+/M3 and any target
//! without the DSP extension. Same contract as the DSP forms (see [`super`]).

use super::{DwRow, dot};

/// Two pixels times two channels (see [`super`]).
#[inline(always)]
pub(crate) fn mac_2x2(k: usize, x: &[i8], w: &[i8], acc: [i32; 4]) -> [i32; 4] {
    let (Some(x), Some(w)) = (x.get(..2 * k), w.get(..2 * k)) else {
        return acc;
    };
    let (x0, x1) = x.split_at(k);
    let (w0, w1) = w.split_at(k);
    [
        acc[0].wrapping_add(dot(x0, w0)),
        acc[1].wrapping_add(dot(x0, w1)),
        acc[2].wrapping_add(dot(x1, w0)),
        acc[3].wrapping_add(dot(x1, w1)),
    ]
}

/// [`super::widen_2_portable`] (see [`super`]).
#[inline(always)]
pub(crate) fn widen_2(k: usize, x: &[i8], out: &mut [i8]) {
    super::widen_2_portable(k, x, out);
}

/// [`super::mac_2x2_wide_portable`] (see [`super`]); the kernels' pair loops read the
/// pixels themselves (the tests check the widened lane order with it).
#[cfg(test)]
#[inline(always)]
pub(crate) fn mac_2x2_wide(k: usize, xw: &[i8], w: &[i8], acc: [i32; 4]) -> [i32; 4] {
    super::mac_2x2_wide_portable(k, xw, w, acc)
}

/// Two pixels times every pair of output channels, requantized and stored (see the DSP
/// form); the pixels from `x` (`xw` is not read). Returns the channels done.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn two_pixels_pairs<const F: bool>(
    k: usize,
    x: &[i8],
    xw: Option<&[i8]>,
    w: &[i8],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out0: &mut [i8],
    out1: &mut [i8],
) -> usize {
    let _ = xw;
    let n = bias.len() / 2 * 2;
    if k == 0
        || !k.is_multiple_of(4)
        || n == 0
        || x.len() < 2 * k
        || w.len() / k < n
        || m.len() < n
        || e.len() < n
        || out0.len() < n
        || out1.len() < n
    {
        return 0;
    }
    for o in (0..n).step_by(2) {
        let init = [bias[o], bias[o + 1], bias[o], bias[o + 1]];
        let acc = mac_2x2(k, x, &w[o * k..], init);
        let rq = |a, j: usize| crate::gemm::requantize::<F>(a, m[j], e[j], q);
        out0[o] = rq(acc[0], o);
        out0[o + 1] = rq(acc[1], o + 1);
        out1[o] = rq(acc[2], o);
        out1[o + 1] = rq(acc[3], o + 1);
    }
    n
}

/// One pixel times two channels.
#[inline(always)]
pub(crate) fn mac_1x2(k: usize, x: &[i8], w: &[i8], acc: [i32; 2]) -> [i32; 2] {
    let (Some(x), Some(w)) = (x.get(..k), w.get(..2 * k)) else {
        return acc;
    };
    let (w0, w1) = w.split_at(k);
    [
        acc[0].wrapping_add(dot(x, w0)),
        acc[1].wrapping_add(dot(x, w1)),
    ]
}

/// Two pixels times one channel.
#[inline(always)]
pub(crate) fn mac_2x1(k: usize, x: &[i8], w: &[i8], acc: [i32; 2]) -> [i32; 2] {
    let (Some(x), Some(w)) = (x.get(..2 * k), w.get(..k)) else {
        return acc;
    };
    let (x0, x1) = x.split_at(k);
    [
        acc[0].wrapping_add(dot(x0, w)),
        acc[1].wrapping_add(dot(x1, w)),
    ]
}

/// One pixel times one channel.
#[inline(always)]
pub(crate) fn mac_1x1(k: usize, x: &[i8], w: &[i8], acc: i32) -> i32 {
    let (Some(x), Some(w)) = (x.get(..k), w.get(..k)) else {
        return acc;
    };
    acc.wrapping_add(dot(x, w))
}

/// Depthwise taps, four channels at a time (see [`super`]).
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
        let mut acc = [b[0], b[1], b[2], b[3]];
        for (x, wt) in taps.iter().zip(wg.chunks_exact(2)) {
            for j in 0..4 {
                acc[j] = acc[j].wrapping_add(x[4 * g + j] as i32 * super::weight16(wt, j));
            }
        }
        store(g, acc);
    }
}

/// One output row of a depth-multiplier-1 DEPTHWISE_CONV_2D whose windows lie inside `x`
/// (see the DSP form). Returns whether it ran.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn dw_row<const F: bool, const KX1: bool>(
    r: &DwRow,
    x: &[i8],
    start: usize,
    w: &[i32],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out: &mut [i8],
) -> bool {
    let c = r.c;
    let taps = r.kh * r.kw;
    if !r.fits::<KX1>(x, start, w, bias, m, e, out) {
        return false;
    }
    for i in 0..r.pixels {
        for ch in 0..c {
            let mut acc = bias[ch];
            for fy in 0..r.kh {
                for fx in 0..r.kw {
                    let at = start + i * r.step + fy * r.row + fx * r.col + ch;
                    let t = fy * r.kw + fx;
                    let entry = w.get(2 * (ch / 4 * taps + t)..).unwrap_or(&[]);
                    acc = acc.wrapping_add(x[at] as i32 * super::weight16(entry, ch % 4));
                }
            }
            out[i * c + ch] = crate::gemm::requantize::<F>(acc, m[ch], e[ch], q);
        }
    }
    true
}

/// `dst.copy_from_slice(src)` for the runs of the data-movement kernels (see the DSP form);
/// nothing unless the lengths are equal.
#[inline(always)]
pub(crate) fn copy_block<T: Copy>(dst: &mut [T], src: &[T]) {
    if dst.len() == src.len() {
        dst.copy_from_slice(src);
    }
}

/// `SSAT #8`: `x` saturated to `-128..=127`.
#[inline(always)]
pub(crate) fn ssat8(x: i32) -> i32 {
    x.clamp(-128, 127)
}

/// The requantization of [`crate::gemm`] without its clamp: `offset + ((y + 2^(e-1) -
/// [y < 0]) >> e)` with `y = SMMULR(2 * acc, m)`, `e` in 1..=31 (see the DSP form).
#[inline(always)]
pub(crate) fn rq_shift(acc: i32, m: i32, e: i32, offset: i32) -> i32 {
    let y = smmulr(acc.wrapping_shl(1), m);
    let t = y + (y >> 31);
    (t >> (e & 31)) + ((t >> ((e - 1) & 31)) & 1) + offset
}

/// `MultiplyByQuantizedMultiplier(acc, m, -e) + offset` for any `acc`, `m != i32::MIN`,
/// `e` in 1..=31 (see the DSP form).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn rq_full(acc: i32, m: i32, e: i32, offset: i32) -> i32 {
    let y = ((acc as i64 * m as i64 + (1 << 30)) >> 31) as i32;
    let t = y.wrapping_add(y >> 31);
    (t >> (e & 31))
        .wrapping_add((t >> ((e - 1) & 31)) & 1)
        .wrapping_add(offset)
}

/// `SMMULR`: `(a * b + 2^31) >> 32`, the rounded high word of the 64-bit product.
#[inline(always)]
pub(crate) fn smmulr(a: i32, b: i32) -> i32 {
    ((a as i64 * b as i64 + (1i64 << 31)) >> 32) as i32
}

/// The int16 halves of a word (low, high).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
fn halves(x: u32) -> (i32, i32) {
    (x as u16 as i16 as i32, (x >> 16) as u16 as i16 as i32)
}

/// Two values as the int16 halves of a word (each wrapped to 16 bits).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
fn pack(lo: i32, hi: i32) -> u32 {
    (lo as u16 as u32) | ((hi as u16 as u32) << 16)
}

/// The complex product of two words of int16 halves (real low, imaginary high), each part
/// `(x + 2^14) >> 15` of its wrapping 32-bit sum (the DSP form's `SMLSD`/`SMLADX`).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn cmul_q15(f: u32, t: u32) -> u32 {
    let ((fr, fi), (tr, ti)) = (halves(f), halves(t));
    let k = 1i32 << 14;
    let re = (fr * tr).wrapping_sub(fi * ti).wrapping_add(k) >> 15;
    let im = (fr * ti).wrapping_add(fi * tr).wrapping_add(k) >> 15;
    pack(re, im)
}

/// Both int16 halves of `x` times `q` (0..=32767), each `(x + 2^14) >> 15`.
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn scale_q15(x: u32, q: u32) -> u32 {
    let ((lo, hi), q) = (halves(x), q as i32);
    pack((lo * q + (1 << 14)) >> 15, (hi * q + (1 << 14)) >> 15)
}

/// The low half of `lo` and the high half of `hi` in one word (`PKHBT`).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn pack_halves(lo: u32, hi: u32) -> u32 {
    (lo & 0xffff) | (hi & 0xffff_0000)
}

/// `acc + a * b` (32 x 32 -> 64-bit unsigned product), wrapping in 64 bits.
#[inline(always)]
pub(crate) fn umlal(acc: u64, a: u32, b: u32) -> u64 {
    acc.wrapping_add(u64::from(a) * u64::from(b))
}

/// `a.low * b.low + a.high * b.high` of the int16 halves, wrapping in 32 bits.
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn smuad(a: u32, b: u32) -> u32 {
    let ((al, ah), (bl, bh)) = (halves(a), halves(b));
    ((al * bl) as u32).wrapping_add((ah * bh) as u32)
}

/// Each int16 half the larger of `a`'s and `b`'s.
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn max_s16x2(a: u32, b: u32) -> u32 {
    let ((al, ah), (bl, bh)) = (halves(a), halves(b));
    pack(al.max(bl), ah.max(bh))
}

/// Each int16 half the smaller of `a`'s and `b`'s.
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn min_s16x2(a: u32, b: u32) -> u32 {
    let ((al, ah), (bl, bh)) = (halves(a), halves(b));
    pack(al.min(bl), ah.min(bh))
}

/// The halves of `a` plus those of `b` (`SADD16`).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn sadd16(a: u32, b: u32) -> u32 {
    let ((al, ah), (bl, bh)) = (halves(a), halves(b));
    pack(al + bl, ah + bh)
}

/// The halves of `a` minus those of `b` (`SSUB16`).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn ssub16(a: u32, b: u32) -> u32 {
    let ((al, ah), (bl, bh)) = (halves(a), halves(b));
    pack(al - bl, ah - bh)
}

/// The halves' sums of `a` and `b`, halved (`SHADD16`: `(a + b) >> 1`, never wrapping).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn shadd16(a: u32, b: u32) -> u32 {
    let ((al, ah), (bl, bh)) = (halves(a), halves(b));
    pack((al + bl) >> 1, (ah + bh) >> 1)
}

/// The halves' differences of `a` and `b`, halved (`SHSUB16`: `(a - b) >> 1`).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn shsub16(a: u32, b: u32) -> u32 {
    let ((al, ah), (bl, bh)) = (halves(a), halves(b));
    pack((al - bl) >> 1, (ah - bh) >> 1)
}

/// Low `a.low - b.high`, high `a.high + b.low` (`SASX`).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn sasx(a: u32, b: u32) -> u32 {
    let ((al, ah), (bl, bh)) = (halves(a), halves(b));
    pack(al - bh, ah + bl)
}

/// Low `a.low + b.high`, high `a.high - b.low` (`SSAX`).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn ssax(a: u32, b: u32) -> u32 {
    let ((al, ah), (bl, bh)) = (halves(a), halves(b));
    pack(al + bh, ah - bl)
}

/// Bytes 0 and 2 of `x` (`ROR8`: 1 and 3), sign-extended into the int16 halves (`SXTB16`).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn sxtb16<const ROR8: bool>(x: u32) -> u32 {
    let x = if ROR8 { x >> 8 } else { x };
    pack(x as i8 as i32, (x >> 16) as i8 as i32)
}

/// [`sxtb16`] of `x` added to the halves of `a`, each half wrapping (`SXTAB16`).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn sxtab16<const ROR8: bool>(a: u32, x: u32) -> u32 {
    let ((al, ah), (xl, xh)) = (halves(a), halves(sxtb16::<ROR8>(x)));
    pack(al + xl, ah + xh)
}

/// `acc + a.low * b.low + a.high * b.high` of the int16 halves, wrapping (`SMLAD`).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn smlad(a: u32, b: u32, acc: i32) -> i32 {
    let ((al, ah), (bl, bh)) = (halves(a), halves(b));
    acc.wrapping_add(al * bl).wrapping_add(ah * bh)
}

/// `x[0] * w[0] + x[1] * w[1] + ...` summed from `+0.0` in increasing order over the
/// shorter length (the DSP form's `VMLA`: each product rounded before its addition).
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn dot_f32(x: &[f32], w: &[f32]) -> f32 {
    let mut a = 0.0f32;
    for (&x, &w) in x.iter().zip(w) {
        a += x * w;
    }
    a
}

/// Four outputs of a float FULLY_CONNECTED (see the DSP form): `out[i] =
/// clamp(dot_f32(x[..k], w[ik..(i + 1)k]) + bias[i])`, nothing written if a slice is too
/// short.
#[inline(always)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn dense_f32_x4(
    k: usize,
    x: &[f32],
    w: &[f32],
    bias: &[f32; 4],
    range: &[f32; 2],
    out: &mut [f32; 4],
) {
    if let (Some(x), Some(w), true) = (x.get(..k), w.get(..4 * k), k > 0) {
        for ((o, r), b) in out.iter_mut().zip(w.chunks_exact(k)).zip(bias) {
            *o = crate::util::clamp_f32(dot_f32(x, r) + b, range[0], range[1]);
        }
    } else if k == 0 {
        for (o, b) in out.iter_mut().zip(bias) {
            *o = crate::util::clamp_f32(0.0 + b, range[0], range[1]);
        }
    }
}

/// Each of the four signed bytes (little-endian lanes) the larger of `a`'s and `b`'s.
#[inline(always)]
pub(crate) fn max_s8x4(a: u32, b: u32) -> u32 {
    let (a, b) = (a.to_le_bytes(), b.to_le_bytes());
    u32::from_le_bytes(core::array::from_fn(|i| (a[i] as i8).max(b[i] as i8) as u8))
}

/// Each of the four signed bytes the smaller of `a`'s and `b`'s.
#[inline(always)]
pub(crate) fn min_s8x4(a: u32, b: u32) -> u32 {
    let (a, b) = (a.to_le_bytes(), b.to_le_bytes());
    u32::from_le_bytes(core::array::from_fn(|i| (a[i] as i8).min(b[i] as i8) as u8))
}

/// Adds `n` taps of `4 * W` int8 channels (`W` 1 or 2) to the lane sums `acc` (see the DSP
/// form): here each byte goes in offset by 128 (`w ^ 0x8080_8080`, then `0..=255`) into
/// unsigned 16-bit lanes of `acc` (channels 0 and 2 in `acc[2k]`, 1 and 3 in
/// `acc[2k + 1]`), which at most 256 taps never carry out of; [`lane_sums_s8`] takes the
/// offset off. If the taps do not all lie in `x`, `acc` is returned unchanged.
#[inline(always)]
pub(crate) fn lanes_add_s8<const W: usize>(
    acc: [u32; 4],
    x: &[i8],
    at: usize,
    n: usize,
    stride: usize,
) -> [u32; 4] {
    const LOW: u32 = 0x00ff_00ff;
    if n == 0 || !super::taps_fit(x.len(), at, n, stride, 4 * W) {
        return acc;
    }
    let word = |b: &[i8]| {
        u32::from_le_bytes([b[0] as u8, b[1] as u8, b[2] as u8, b[3] as u8]) ^ 0x8080_8080
    };
    let [mut e0, mut o0, mut e1, mut o1] = acc;
    let mut p = at;
    for _ in 0..n {
        let Some(b) = x.get(p..p + 4 * W) else {
            break;
        };
        let w = word(&b[..4]);
        e0 = e0.wrapping_add(w & LOW);
        o0 = o0.wrapping_add((w >> 8) & LOW);
        if W == 2 {
            let w = word(&b[4..]);
            e1 = e1.wrapping_add(w & LOW);
            o1 = o1.wrapping_add((w >> 8) & LOW);
        }
        p += stride;
    }
    [e0, o0, e1, o1]
}

/// The eight channels' sums from [`lanes_add_s8`]'s lanes after `taps` taps (each lane
/// less `128 * taps`).
#[inline(always)]
pub(crate) fn lane_sums_s8(acc: [u32; 4], taps: usize) -> [i32; 8] {
    let offset = (taps as i32).wrapping_mul(128);
    let (lo, hi) = (
        |w: u32| ((w & 0xffff) as i32).wrapping_sub(offset),
        |w: u32| ((w >> 16) as i32).wrapping_sub(offset),
    );
    let [e0, o0, e1, o1] = acc;
    [
        lo(e0),
        lo(o0),
        hi(e0),
        hi(o0),
        lo(e1),
        lo(o1),
        hi(e1),
        hi(o1),
    ]
}
