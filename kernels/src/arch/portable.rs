//! The microkernels in plain Rust (no `unsafe`): the host, Cortex-M0/M0+/M3 and any target
//! without the DSP extension. Same contract as the DSP forms (see [`super`]).

use super::dot;

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

/// [`super::mac_2x2_wide_portable`] (see [`super`]).
#[inline(always)]
pub(crate) fn mac_2x2_wide(k: usize, xw: &[i8], w: &[i8], acc: [i32; 4]) -> [i32; 4] {
    super::mac_2x2_wide_portable(k, xw, w, acc)
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
    w: &[i8],
    bias: &[i32],
    mut store: impl FnMut(usize, [i32; 4]),
) {
    let t = taps.len();
    let depth = bias.len() / 4 * 4;
    if t == 0 || t > super::MAX_TAPS || w.len() < depth * t || taps.iter().any(|x| x.len() < depth)
    {
        return;
    }
    for ((g, b), wg) in bias.chunks_exact(4).enumerate().zip(w.chunks_exact(4 * t)) {
        let mut acc = [b[0], b[1], b[2], b[3]];
        for (x, wt) in taps.iter().zip(wg.chunks_exact(4)) {
            for j in 0..4 {
                acc[j] = acc[j].wrapping_add(x[4 * g + j] as i32 * wt[j] as i32);
            }
        }
        store(g, acc);
    }
}

/// `SSAT #8`: `x` saturated to `-128..=127`.
#[inline(always)]
pub(crate) fn ssat8(x: i32) -> i32 {
    x.clamp(-128, 127)
}

/// `ASR` by a register: `x >> e` for `e` in `0..=31`.
#[inline(always)]
pub(crate) fn asr(x: i32, e: i32) -> i32 {
    x >> (e & 31)
}

/// `SMMULR`: `(a * b + 2^31) >> 32`, the rounded high word of the 64-bit product.
#[inline(always)]
pub(crate) fn smmulr(a: i32, b: i32) -> i32 {
    ((a as i64 * b as i64 + (1i64 << 31)) >> 32) as i32
}
