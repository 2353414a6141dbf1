//! Microkernels: the few inner loops and instructions the fast integer kernels are built
//! from, one implementation per architecture with the same contract.
//!
//! `kiln_arch` is set by `build.rs` from the target (stable Rust does not expose the Arm
//! target features to `cfg`):
//!
//! * [`dsp`](self) (`kiln_arch = "dsp"`: Cortex-M4/M7/M33): inline assembly with the DSP
//!   extension's dual 16-bit multiply-accumulate (`SMLAD`), byte widening (`SXTB16`) and
//!   saturating arithmetic. With `mve`, `riscv` and `x86` below, the crate's only `unsafe` code, each block with
//!   its argument.
//! * [`mve`](self) (`kiln_arch = "mve"`: Cortex-M55/M85): Helium's 16-lane int8
//!   multiply-accumulates (`VMLADAVA.S8`) in tail-predicated loops for the dot products,
//!   depthwise taps in int32 lanes, and functions of its own that the drivers call
//!   under `cfg(kiln_arch = "mve")`: `one_pixel_by4` (one pixel, all channels four at a
//!   time, requantized, instead of the two-pixel forms), `three_pixels_by4` (three pixels by
//!   four channels per group, which `conv_2d::fast` calls directly for its 1x1 and windowed
//!   layers), the four-pixel depthwise blocks
//!   (`dw_block4` and its forms), `requantize4` (four channels requantized at once), the
//!   im2col's `copy_bytes`/`fill_bytes` and ADD's `add_s8_tables4` (four elements per step); the single instructions are `dsp`'s. Also argued
//!   `unsafe` code.
//! * `riscv` (`kiln_arch = "riscv"`: RV32IMC/IMAC, ESP32-C3/C6-class): the products
//!   blocked four (pointwise, constant depth) or two pixels by four channels, the depthwise
//!   rows four or two pixels by four channels, the sums in registers (RV32IM has a
//!   one-instruction `MUL`, no multiply-accumulate, no SIMD); on RV32 the inner loops are
//!   `asm!` blocks and the depthwise blocks' loads are proven in bounds once per call
//!   (argued `unsafe`). The drivers call its `two_pixels_by4`/`one_pixel_by4` as they do
//!   Helium's, and its `four_pixels_by4`, `dw_row` and `dw_pair`.
//!   Its plain-Rust forms of the same arithmetic (the `asm!` blocks are for RV32 only) also
//!   run on the host: `KILN_KERNELS=riscv cargo test -p kiln-kernels` checks the drivers on
//!   them against TFLM's cases; the `asm!` blocks are checked by `.ci/firmware_riscv.sh`
//!   (every layer of every public model against TFLM, on emulated riscv32imc and imac).
//! * `portable` (everything else: the host, Cortex-M0/M0+/M3): the same functions in plain
//!   Rust. On x86-64 (the host) `x86` adds `sqrtss` for the float square root,
//!   bit-identical with the software form, and the fused multiply-add where the CPU has FMA3
//!   (detected at run time; the float `sinf`, `cosf`, `logf`, `expf` of `libm_f32` run glibc's
//!   `-fma` operations on it), each `unsafe` block argued. Host tests, Miri and the golden-case tests run these, so the drivers built on them
//!   ([`crate::gemm`]) are checked against TFLM everywhere; the DSP forms are checked on the
//!   emulated Cortex-M4 (`examples/kernel-cases`).
//!
//! A new architecture is one more module here with the same functions.
//!
//! # Contract
//!
//! Single instructions: `smmulr`, `ssat8`, and `rq_shift` (five, see each) and `rq_full`
//! (six, any accumulator; `dsp` and `portable` only); `max_s8x4` and
//! `min_s8x4` (two each: the lane-wise signed maximum and minimum of four int8 values in a
//! word, `SSUB8` + `SEL`).
//!
//! Dual 16-bit forms on words of two int16 halves (a complex value: real low, imaginary
//! high), for the int16 FFT's butterflies: `cmul_q15` (the complex product, each part rounded
//! from Q30 to Q15 as KISS FFT's `C_MUL`), `scale_q15` (both halves times a Q15 constant,
//! rounded: `C_FIXDIV`), `sadd16`/`ssub16` (halves added, subtracted, wrapping),
//! `shadd16`/`shsub16` (added, subtracted and halved: KISS FFT's `HALF_OF` of a sum) and
//! `sasx`/`ssax` (`a + i·b`, `a - i·b`); `max_s16x2`/`min_s16x2` (each half the larger, the
//! smaller); `smuad` (the sum of the halves' products: a complex value's energy);
//! `pack_halves` (the low half of one word and the high half of another: `PKHBT`); `umlal`
//! (a 32 x 32 -> 64-bit unsigned multiply-accumulate, for the uint64 sums of the Signal
//! library's filter bank). With the DSP extension (and Helium) these are its
//! `SMLSD`/`SMLADX`/`SMLABB`/`PKHTB`/`UMLAL` and dual 16-bit instructions; the plain-Rust
//! forms serve the host's tests of the butterflies.
//!
//! Widening and dual multiply-accumulate of int8 values, one instruction each with the DSP
//! extension (`dsp` only; the plain-Rust forms serve the host's tests of their callers):
//! `sxtb16::<R>(x)` (bytes 0 and 2 of a word, `R`: 1 and 3, sign-extended into int16
//! halves), `sxtab16::<R>(a, x)` (the same added to `a`'s halves, wrapping) and
//! `smlad(a, b, acc)` (`acc` plus both halves' products, wrapping).
//!
//! Float rows (`dsp` on hard-float targets, `cfg(target_abi = "eabihf")`, and `portable`):
//! `dot_f32(x, w)` (the dot product summed from `+0.0` in increasing order, each product
//! rounded before its addition: `VMLA.F32`, not fused) and `dense_f32_x4(k, x, w, bias,
//! range, out)` (four outputs of a float FULLY_CONNECTED: four such sums plus their biases,
//! clamped in TFLM's order and stored).
//!
//! `lanes_add_s8::<W>(acc, x, at, n, stride)` adds `n` taps of `4 * W` int8 channels (`W`
//! 1 or 2; tap `k` at `x[at + k * stride..]`) to sums kept in the 16-bit lanes of four
//! words, at most 256 taps per set of lanes; `lane_sums_s8(acc, taps)` reads the eight
//! channels' sums out of them (the lanes' representation is each form's own: signed sums
//! with the DSP extension's `SXTAB16`, bytes offset by 128 in plain Rust). Taps outside
//! `x` leave `acc` unchanged.
//!
//! The `mac_*` functions add dot products of `k` int8 values to their accumulators:
//! `mac_2x2(k, x, w, [a00, a01, a10, a11])` adds `x_i . w_j` where `x_0 = x[..k]`,
//! `x_1 = x[k..2k]`, `w_0 = w[..k]`, `w_1 = w[k..2k]` (two pixels times two output
//! channels); `mac_1x2` has one pixel and two channels, `mac_2x1` two pixels and one
//! channel, `mac_1x1` one of each. Sums wrap like the reference kernels' `int32_t`
//! accumulators (the callers prove at build time that they never do). If a slice is shorter
//! than the contract needs, the accumulators are returned unchanged (never the case in
//! Kiln's calls; it keeps the functions total without a panic path).

// With Helium, `mve` replaces the dot products (`mac_*`) and keeps the rest.
#[cfg(any(kiln_arch = "dsp", kiln_arch = "mve"))]
#[cfg_attr(kiln_arch = "mve", allow(dead_code))]
mod dsp;
#[cfg(kiln_arch = "dsp")]
pub(crate) use dsp::*;
// Helium keeps the DSP extension's dual 16-bit forms.
#[cfg(kiln_arch = "mve")]
pub(crate) use dsp::{
    cmul_q15, max_s16x2, min_s16x2, pack_halves, sadd16, sasx, scale_q15, shadd16, shsub16, smuad,
    ssax, ssub16, umlal,
};

#[cfg(kiln_arch = "mve")]
mod mve;
#[cfg(kiln_arch = "mve")]
pub(crate) use mve::*;

#[cfg(not(any(kiln_arch = "dsp", kiln_arch = "mve")))]
#[cfg_attr(kiln_arch = "riscv", allow(dead_code))]
mod portable;
#[cfg(not(any(kiln_arch = "dsp", kiln_arch = "mve", kiln_arch = "riscv")))]
pub(crate) use portable::*;

// RV32IM (ESP32-C3/C6-class): plain Rust, blocked for a one-instruction MUL; the block
// copy is the portable one.
#[cfg(kiln_arch = "riscv")]
mod riscv;
#[cfg(kiln_arch = "riscv")]
pub(crate) use portable::{copy_block, lane_sums_s8, lanes_add_s8, max_s8x4, min_s8x4, umlal};
#[cfg(kiln_arch = "riscv")]
pub(crate) use riscv::*;

/// Whether `n >= 1` taps of `width` bytes, the first at `at` and each `stride` after the
/// previous, all lie in `len` bytes (without overflow).
#[inline(always)]
pub(crate) fn taps_fit(len: usize, at: usize, n: usize, stride: usize, width: usize) -> bool {
    (n - 1)
        .checked_mul(stride)
        .and_then(|span| span.checked_add(at))
        .and_then(|last| last.checked_add(width))
        .is_some_and(|end| end <= len)
}

/// `lane_sums_s8` of signed 16-bit lanes (channels 0 and 2 of a word in `acc[2k]`, low
/// half first, 1 and 3 in `acc[2k + 1]`).
#[cfg_attr(not(any(kiln_arch = "dsp", kiln_arch = "mve")), allow(dead_code))]
#[inline(always)]
pub(crate) fn lane_sums_signed(acc: [u32; 4]) -> [i32; 8] {
    let (lo, hi) = (|w: u32| w as i16 as i32, |w: u32| w as i32 >> 16);
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

/// The shape of one output row of a depth-multiplier-1 depthwise convolution for the
/// microkernels' `dw_row` (DSP and portable): the window (`kh x 3` with `kh == 3`, or
/// `kh x 1`), its steps and the row's pixels.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(kiln_arch = "mve", allow(dead_code))]
pub(crate) struct DwRow {
    /// Window height; the width is 3 (then `kh` must be 3) or 1.
    pub kh: usize,
    /// Window width: 3 or 1.
    pub kw: usize,
    /// Bytes from one tap to the next in a window row (`dilation_w * C`).
    pub col: usize,
    /// Bytes from one window row to the next (`dilation_h * row length`).
    pub row: usize,
    /// Bytes from one output pixel's window to the next (`stride_w * C`).
    pub step: usize,
    /// Output pixels of the row.
    pub pixels: usize,
    /// Channels (`C % 4 == 0`).
    pub c: usize,
}

#[cfg_attr(kiln_arch = "mve", allow(dead_code))]
impl DwRow {
    /// Whether `dw_row` may run this row from `x` at `start` (`KX1`: a `kh x 1` window, else
    /// 3x3): `c` a non-zero multiple of 4, and `x` (up to the last pixel's last tap, without
    /// overflow), the weights `w` (two words per group of four channels and tap), the
    /// channels' `bias`, `m`, `e` and `out` long enough.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fits<const KX1: bool>(
        &self,
        x: &[i8],
        start: usize,
        w: &[i32],
        bias: &[i32],
        m: &[i32],
        e: &[i32],
        out: &[i8],
    ) -> bool {
        let shape_ok = if KX1 {
            self.kw == 1 && self.kh > 0
        } else {
            self.kw == 3 && self.kh == 3
        };
        let c = self.c;
        // The last byte read: the last pixel's window's last tap's fourth byte of the last
        // group.
        let last = (self.pixels.max(1) - 1)
            .checked_mul(self.step)
            .and_then(|a| {
                (self.kh.max(1) - 1)
                    .checked_mul(self.row)
                    .and_then(|b| a.checked_add(b))
            })
            .and_then(|a| {
                (self.kw.max(1) - 1)
                    .checked_mul(self.col)
                    .and_then(|b| a.checked_add(b))
            })
            .and_then(|a| a.checked_add(start))
            .and_then(|a| a.checked_add(c));
        shape_ok
            && c != 0
            && c.is_multiple_of(4)
            && self.pixels != 0
            && last.is_some_and(|l| l <= x.len())
            && w.len() >= c / 2 * self.kh * self.kw
            && bias.len() >= c
            && m.len() >= c
            && e.len() >= c
            && out.len() >= self.pixels * c
    }
}

// The host's `sqrtss` and fused multiply-add for the float kernels (not under Miri, which
// runs the software forms).
#[cfg(all(target_arch = "x86_64", target_feature = "sse", not(miri)))]
pub(crate) mod x86;

/// Whether widened pixel pairs (`widen_2`, `mac_2x2_wide`) are faster than `mac_2x2`: with
/// the DSP instructions; not with Helium, whose `mac_2x2` reads 16 bytes a row per load; the
/// portable forms only emulate the lanes (the host tests run them to check the drivers'
/// widened paths, `gemm` skips them on the targets themselves).
pub(crate) const WIDENS: bool = cfg!(kiln_arch = "dsp") || cfg!(test) || cfg!(debug_assertions);

/// The most taps [`mac_taps4`] takes (a 5x5 window).
pub(crate) const MAX_TAPS: usize = 25;

/// The microkernels compiled into this build: `"dsp"`, `"mve"`, `"riscv"` or `"portable"`.
pub const NAME: &str = if cfg!(kiln_arch = "dsp") {
    "dsp"
} else if cfg!(kiln_arch = "mve") {
    "mve"
} else if cfg!(kiln_arch = "riscv") {
    "riscv"
} else {
    "portable"
};

/// `x . w` over the first `n` elements, in plain Rust (the tails of the `mac_*` functions
/// after their 4-byte steps, and the portable implementation).
#[inline(always)]
pub(crate) fn dot(x: &[i8], w: &[i8]) -> i32 {
    let mut acc = 0i32;
    for (&a, &b) in x.iter().zip(w) {
        acc = acc.wrapping_add(a as i32 * b as i32);
    }
    acc
}

/// Weight `j` (0..4) of a depthwise weights entry of two words of int16 pairs `[w0 | w1 <<
/// 16, w2 | w3 << 16]` (`depthwise_conv_2d::fast::pack_weights`), 0 past the slice.
#[inline(always)]
pub(crate) fn weight16(entry: &[i32], j: usize) -> i32 {
    match entry.get(j / 2) {
        Some(&w) => (w >> (16 * (j % 2))) as i16 as i32,
        None => 0,
    }
}

/// The lane order of a widened group of 4 values (`SXTB16` and `SXTB16 ..., ROR #8` of their
/// word): `[x0, x2, x1, x3]`.
#[cfg_attr(kiln_arch = "mve", allow(dead_code))]
const LANES: [usize; 4] = [0, 2, 1, 3];

/// `widen_2` in plain Rust: for each group `g` of 4 values, the 16 bytes at `16g` of `out`
/// are row 0's values `4g..4g + 4` then row 1's as little-endian int16 in [`LANES`] order.
/// `k % 4 == 0`; too short slices leave `out` unchanged.
#[cfg_attr(any(kiln_arch = "dsp", kiln_arch = "mve"), allow(dead_code))]
pub(crate) fn widen_2_portable(k: usize, x: &[i8], out: &mut [i8]) {
    let (Some((x0, x1)), Some(out)) = (
        x.get(..2 * k).and_then(|x| x.split_at_checked(k)),
        out.get_mut(..4 * k),
    ) else {
        return;
    };
    for (g, dst) in out.chunks_exact_mut(16).enumerate() {
        for (row, src) in [x0, x1].iter().enumerate() {
            for (slot, &lane) in LANES.iter().enumerate() {
                let v = src.get(4 * g + lane).copied().unwrap_or(0) as i16;
                let [lo, hi] = v.to_le_bytes();
                if let Some(d) = dst.get_mut(row * 8 + slot * 2..row * 8 + slot * 2 + 2) {
                    d.copy_from_slice(&[lo as i8, hi as i8]);
                }
            }
        }
    }
}

/// `mac_2x2_wide` in plain Rust: `mac_2x2` with the pixels read from their widened form.
#[cfg(test)]
pub(crate) fn mac_2x2_wide_portable(k: usize, xw: &[i8], w: &[i8], acc: [i32; 4]) -> [i32; 4] {
    let (Some(xw), Some((w0, w1))) = (
        xw.get(..4 * k),
        w.get(..2 * k).and_then(|w| w.split_at_checked(k)),
    ) else {
        return acc;
    };
    let mut acc = acc;
    for (g, group) in xw.chunks_exact(16).enumerate() {
        for row in 0..2 {
            for (slot, &lane) in LANES.iter().enumerate() {
                let at = row * 8 + slot * 2;
                let (Some(&lo), Some(&hi)) = (group.get(at), group.get(at + 1)) else {
                    continue;
                };
                let x = i16::from_le_bytes([lo as u8, hi as u8]) as i32;
                let i = 4 * g + lane;
                let (a, b) = (
                    w0.get(i).copied().unwrap_or(0),
                    w1.get(i).copied().unwrap_or(0),
                );
                if let Some(pair) = acc.get_mut(2 * row..2 * row + 2) {
                    pair[0] = pair[0].wrapping_add(x * a as i32);
                    pair[1] = pair[1].wrapping_add(x * b as i32);
                }
            }
        }
    }
    acc
}

// The RISC-V forms are plain Rust: the host tests check them too (below).
#[cfg(all(test, not(kiln_arch = "riscv")))]
#[path = "riscv.rs"]
#[allow(dead_code)]
mod riscv_on_host;

#[cfg(test)]
mod tests {
    use super::*;

    /// The RISC-V forms against plain dot products on the host (on an RV32 target, or with
    /// `KILN_KERNELS=riscv`, the test below checks them as the compiled microkernels).
    #[cfg(not(kiln_arch = "riscv"))]
    #[test]
    fn riscv_forms_are_dot_products() {
        use super::portable::dw_row as portable_dw_row;
        use super::riscv_on_host as rv;
        let x: std::vec::Vec<i8> = (0..80).map(|i| (i * 53 % 256) as u8 as i8).collect();
        let w: std::vec::Vec<i8> = (0..80).map(|i| (i * 71 % 256 + 7) as u8 as i8).collect();
        for k in 0..=40 {
            let (x0, x1) = (&x[..k], &x[k..2 * k]);
            let (w0, w1) = (&w[..k], &w[k..2 * k]);
            let want = [dot(x0, w0), dot(x0, w1), dot(x1, w0), dot(x1, w1)];
            let acc = [1, -2, 3, -4];
            let got = rv::mac_2x2(k, &x, &w, acc);
            for i in 0..4 {
                assert_eq!(got[i], acc[i].wrapping_add(want[i]), "k {k} lane {i}");
            }
            assert_eq!(rv::mac_1x2(k, x0, &w, [5, 6]), [5 + want[0], 6 + want[1]]);
            assert_eq!(rv::mac_2x1(k, &x, w0, [7, 8]), [7 + want[0], 8 + want[2]]);
            assert_eq!(rv::mac_1x1(k, x0, w0, 9), 9 + want[0]);
        }
        let taps: std::vec::Vec<&[i8]> = (0..9).map(|t| &x[t * 8..t * 8 + 8]).collect();
        let bias = [1, 2, 3, 4, 5, 6, 7, 8];
        let mut got = [0i32; 8];
        // The weights as `pack_weights` lays them out: per group of 4 channels and tap, two
        // words of int16 pairs.
        let pair = |a: i8, b: i8| (a as i16 as u16 as u32 | (b as i16 as u16 as u32) << 16) as i32;
        let packed: std::vec::Vec<i32> = w[..72]
            .chunks_exact(4)
            .flat_map(|q| [pair(q[0], q[1]), pair(q[2], q[3])])
            .collect();
        rv::mac_taps4(&taps, &packed, &bias, |g, acc| {
            got[4 * g..4 * g + 4].copy_from_slice(&acc)
        });
        for c in 0..8 {
            let (g, j) = (c / 4, c % 4);
            let want: i32 = (0..9)
                .map(|t| x[t * 8 + c] as i32 * w[(g * 9 + t) * 4 + j] as i32)
                .sum();
            assert_eq!(got[c], bias[c] + want, "channel {c}");
        }
        assert_eq!(rv::mac_2x2(41, &x, &w, [1, 2, 3, 4]), [1, 2, 3, 4]);
        // The blocks with their requantization against dot products and `gemm::requantize`.
        let q = crate::gemm::Output {
            offset: -3,
            min: -100,
            max: 90,
        };
        let big: std::vec::Vec<i8> = (0..2048).map(|i| (i * 29 % 256) as u8 as i8).collect();
        for k in [1, 3, 4, 7, 8, 13, 16] {
            for n in [4, 8, 11] {
                let (x0, x1, wt) = (&x[..k], &x[k..2 * k], &big[..n * k]);
                let bias: std::vec::Vec<i32> = (0..n as i32).map(|o| 100 * o - 300).collect();
                let m: std::vec::Vec<i32> = (0..n as i32).map(|o| (1 << 30) + o * 7919).collect();
                let e: std::vec::Vec<i32> = (0..n as i32).map(|o| 1 + o % 12).collect();
                let want = |xp: &[i8], o: usize| {
                    let acc = bias[o] + dot(xp, &wt[o * k..(o + 1) * k]);
                    crate::gemm::requantize::<false>(acc, m[o], e[o], &q)
                };
                let (mut o0, mut o1) = (std::vec![0i8; n], std::vec![0i8; n]);
                let done = rv::two_pixels_by4(k, x0, x1, wt, &bias, &m, &e, &q, &mut o0, &mut o1);
                assert_eq!(done, n / 4 * 4);
                let mut o2 = std::vec![0i8; n];
                assert_eq!(
                    rv::one_pixel_by4(k, x1, wt, &bias, &m, &e, &q, &mut o2),
                    done
                );
                for o in 0..done {
                    assert_eq!(o0[o], want(x0, o), "k {k} n {n} channel {o}");
                    assert_eq!(o1[o], want(x1, o), "k {k} n {n} channel {o}");
                    assert_eq!(o2[o], want(x1, o), "k {k} n {n} channel {o}");
                }
            }
        }
        // Four pixels with a constant depth, against the same.
        for n in [4, 8, 11] {
            const K: usize = 12;
            let (xs, wt) = (&big[100..100 + 4 * K], &big[..n * K]);
            let bias: std::vec::Vec<i32> = (0..n as i32).map(|o| 100 * o - 300).collect();
            let m: std::vec::Vec<i32> = (0..n as i32).map(|o| (1 << 30) + o * 7919).collect();
            let e: std::vec::Vec<i32> = (0..n as i32).map(|o| 1 + o % 12).collect();
            let mut out = std::vec![0i8; 4 * n];
            let done = rv::four_pixels_by4::<K>(xs, wt, &bias, &m, &e, &q, n, &mut out);
            assert_eq!(done, n / 4 * 4);
            for p in 0..4 {
                for o in 0..done {
                    let acc = bias[o] + dot(&xs[p * K..(p + 1) * K], &wt[o * K..(o + 1) * K]);
                    let want = crate::gemm::requantize::<false>(acc, m[o], e[o], &q);
                    assert_eq!(out[p * n + o], want, "n {n} pixel {p} channel {o}");
                }
            }
            // Short slices: nothing done.
            assert_eq!(
                rv::four_pixels_by4::<K>(&xs[1..], wt, &bias, &m, &e, &q, n, &mut out),
                0
            );
        }
        // Depthwise pairs: 9 taps of 8 channels per pixel, against the taps' sums
        // requantized.
        {
            let taps0: std::vec::Vec<&[i8]> = (0..9).map(|t| &big[t * 8..t * 8 + 8]).collect();
            let taps1: std::vec::Vec<&[i8]> =
                (0..9).map(|t| &big[500 + t * 8..500 + t * 8 + 8]).collect();
            let bias = [1, -20, 300, -4000, 5, 60, -700, 8000];
            let m: std::vec::Vec<i32> = (0..8).map(|o| (1 << 30) + o * 104729).collect();
            let e: std::vec::Vec<i32> = (0..8).map(|o| 1 + (o * 5) % 13).collect();
            let (mut o0, mut o1) = ([0i8; 8], [0i8; 8]);
            assert!(rv::dw_pair(
                &taps0, &taps1, &packed, &bias, &m, &e, &q, &mut o0, &mut o1
            ));
            for (taps, out) in [(&taps0, &o0), (&taps1, &o1)] {
                for c in 0..8 {
                    let (g, j) = (c / 4, c % 4);
                    let acc: i32 = bias[c]
                        + (0..9)
                            .map(|t| taps[t][c] as i32 * w[(g * 9 + t) * 4 + j] as i32)
                            .sum::<i32>();
                    let want = crate::gemm::requantize::<false>(acc, m[c], e[c], &q);
                    assert_eq!(out[c], want, "channel {c}");
                }
            }
            // A short tap: nothing written.
            let mut short = taps1.clone();
            short[4] = &big[..7];
            assert!(!rv::dw_pair(
                &taps0, &short, &packed, &bias, &m, &e, &q, &mut o0, &mut o1
            ));
        }
        // Depthwise rows (3x3 and 3x1 windows, odd and even pixel counts) against the
        // portable row.
        for (kh, kw, pixels) in [(3, 3, 5), (3, 3, 4), (3, 1, 3), (3, 1, 2)] {
            let c = 8;
            let r = DwRow {
                kh,
                kw,
                col: c,
                row: 7 * c,
                step: 2 * c,
                pixels,
                c,
            };
            let packed: std::vec::Vec<i32> = (0..c / 2 * kh * kw)
                .map(|i| pair(big[2 * i + 7], big[2 * i + 1000]))
                .collect();
            let bias: std::vec::Vec<i32> = (0..c as i32).map(|o| 37 * o - 100).collect();
            let m: std::vec::Vec<i32> = (0..c as i32).map(|o| (1 << 30) + o * 7919).collect();
            let e: std::vec::Vec<i32> = (0..c as i32).map(|o| 1 + o % 9).collect();
            let (mut want, mut got) = (std::vec![0i8; pixels * c], std::vec![1i8; pixels * c]);
            let start = 3;
            let ran = if kw == 3 {
                (
                    portable_dw_row::<false, false>(
                        &r, &big, start, &packed, &bias, &m, &e, &q, &mut want,
                    ),
                    rv::dw_row::<false, false>(
                        &r, &big, start, &packed, &bias, &m, &e, &q, &mut got,
                    ),
                )
            } else {
                (
                    portable_dw_row::<false, true>(
                        &r, &big, start, &packed, &bias, &m, &e, &q, &mut want,
                    ),
                    rv::dw_row::<false, true>(
                        &r, &big, start, &packed, &bias, &m, &e, &q, &mut got,
                    ),
                )
            };
            assert_eq!(ran, (true, true), "{kh}x{kw}");
            assert_eq!(got, want, "{kh}x{kw}, {pixels} pixels");
            // Past the input: not run.
            assert!(!rv::dw_row::<false, false>(
                &DwRow { kh: 3, kw: 3, ..r },
                &big[..100],
                start,
                &packed,
                &bias,
                &m,
                &e,
                &q,
                &mut got
            ));
        }
        let vals = [
            i32::MIN,
            i32::MIN + 1,
            -(1 << 30),
            -12345,
            -1,
            0,
            1,
            999,
            i32::MAX,
        ];
        // The doubled form of the requantization's high multiply, within its conditions
        // (|acc| < 2^30, m in 0..2^31): the extremes and a sweep.
        let accs = [
            -(1 << 30) + 1,
            -(1 << 29),
            -65537,
            -2,
            -1,
            0,
            1,
            2,
            65535,
            (1 << 30) - 1,
        ];
        let ms = [
            0,
            1,
            1 << 30,
            (1 << 30) + 1,
            1_518_500_250,
            i32::MAX - 1,
            i32::MAX,
        ];
        for &acc in &accs {
            for &m in &ms {
                let want = smmulr(acc << 1, m);
                assert_eq!(rv::smmulr_doubled(acc, m), want, "({acc}, {m})");
            }
        }
        let mut v = 12345u32;
        for _ in 0..20000 {
            v = v.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let acc = (v as i32) >> 2;
            v = v.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let m = (v >> 1) as i32;
            assert_eq!(
                rv::smmulr_doubled(acc, m),
                smmulr(acc << 1, m),
                "({acc}, {m})"
            );
        }
        for &a in &vals {
            for &b in &vals {
                assert_eq!(rv::smmulr(a, b), smmulr(a, b), "smmulr({a}, {b})");
            }
        }
    }

    /// `rq_full` equals TFLM's `MultiplyByQuantizedMultiplier` plus the offset for every
    /// accumulator (edges included), multiplier but `i32::MIN` (products at the doubling
    /// multiply's ties included) and right shift 1..=31.
    #[cfg(not(kiln_arch = "riscv"))]
    #[test]
    fn rq_full_is_the_reference_requantization() {
        use crate::fixed_point::multiply_by_quantized_multiplier;
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let edges = [
            i32::MIN,
            i32::MIN + 1,
            -(1 << 30) - 1,
            -1,
            0,
            1,
            (1 << 30) + 1,
            i32::MAX,
        ];
        for i in 0..300_000u32 {
            let (r, s) = (next(), next());
            let acc = match i % 4 {
                0 => edges[(r >> 8) as usize % edges.len()],
                1 => (s as i32) >> (r % 31),
                _ => s as i32,
            };
            let m = match i % 5 {
                0 => edges[(s >> 16) as usize % edges.len()].max(i32::MIN + 1),
                1 => (r >> 33) as i32 - (1 << 30),
                // Products at exact halves of the doubling multiply's rounding.
                2 => [1 << 30, 3 << 28, -(1 << 30)][(r >> 40) as usize % 3],
                _ => (1 << 30) + ((r >> 34) as i32),
            };
            let e = 1 + ((r >> 20) % 31) as i32;
            let offset = (s >> 40) as i32 % 256 - 128;
            let want = multiply_by_quantized_multiplier(acc, m, -e).wrapping_add(offset);
            assert_eq!(
                rq_full(acc, m, e, offset),
                want,
                "rq_full({acc}, {m}, {e}, {offset})"
            );
        }
    }

    /// The `mac_*` functions against a plain dot product, for every `k` up to 40 (all tails).
    #[test]
    fn mac_functions_are_dot_products() {
        let x: std::vec::Vec<i8> = (0..80).map(|i| (i * 37 % 256) as u8 as i8).collect();
        let w: std::vec::Vec<i8> = (0..80).map(|i| (i * 91 % 256 + 128) as u8 as i8).collect();
        for k in 0..=40 {
            let (x0, x1) = (&x[..k], &x[k..2 * k]);
            let (w0, w1) = (&w[..k], &w[k..2 * k]);
            let want = [dot(x0, w0), dot(x0, w1), dot(x1, w0), dot(x1, w1)];
            let acc = [1, -2, 3, -4];
            let got = mac_2x2(k, &x, &w, acc);
            for i in 0..4 {
                assert_eq!(got[i], acc[i].wrapping_add(want[i]), "k {k} lane {i}");
            }
            // Widened pixels (k a multiple of 4).
            if k % 4 == 0 {
                let mut wide = std::vec![0i8; 4 * k];
                widen_2(k, &x, &mut wide);
                let got = mac_2x2_wide(k, &wide, &w, acc);
                for i in 0..4 {
                    assert_eq!(got[i], acc[i].wrapping_add(want[i]), "wide: k {k} lane {i}");
                }
            }
            assert_eq!(mac_1x2(k, x0, &w, [5, 6]), [5 + want[0], 6 + want[1]]);
            assert_eq!(mac_2x1(k, &x, w0, [7, 8]), [7 + want[0], 8 + want[2]]);
            assert_eq!(mac_1x1(k, x0, w0, 9), 9 + want[0]);
        }
        // Depthwise taps: 3 taps, 8 channels.
        let taps: std::vec::Vec<&[i8]> = (0..3).map(|t| &x[t * 8..t * 8 + 8]).collect();
        let bias = [1, 2, 3, 4, 5, 6, 7, 8];
        let mut got = [0i32; 8];
        // The weights as int16 pairs, entry `g * 3 + t` for channels `4g..4g + 4` of tap `t`.
        let packed: std::vec::Vec<i32> = w[..24]
            .chunks_exact(2)
            .map(|p| (p[0] as i16 as u16 as u32 | (p[1] as i16 as u16 as u32) << 16) as i32)
            .collect();
        mac_taps4(&taps, &packed, &bias, |g, acc| {
            got[4 * g..4 * g + 4].copy_from_slice(&acc)
        });
        for c in 0..8 {
            let (g, j) = (c / 4, c % 4);
            let want: i32 = (0..3)
                .map(|t| x[t * 8 + c] as i32 * w[(g * 3 + t) * 4 + j] as i32)
                .sum();
            assert_eq!(got[c], bias[c] + want, "channel {c}");
            assert_eq!(
                weight16(&packed[2 * (g * 3 + 1)..], j),
                w[(g * 3 + 1) * 4 + j] as i32
            );
        }
        // Too short: unchanged.
        assert_eq!(mac_2x2(41, &x, &w, [1, 2, 3, 4]), [1, 2, 3, 4]);
    }

    #[test]
    fn scalar_helpers_match_their_definitions() {
        let vals = [
            i32::MIN,
            i32::MIN + 1,
            -(1 << 30),
            -12345,
            -1,
            0,
            1,
            999,
            (1 << 30) - 1,
            i32::MAX - 1,
            i32::MAX,
        ];
        for &a in &vals {
            for &b in &vals {
                let want = ((a as i64 * b as i64 + (1i64 << 31)) >> 32) as i32;
                assert_eq!(smmulr(a, b), want, "smmulr({a}, {b})");
            }
            assert_eq!(ssat8(a), a.clamp(-128, 127), "ssat8({a})");
            // The requantization core, within its conditions (|acc| < 2^30).
            let acc = a >> 1;
            for (m, off) in [(1 << 30, 0), (i32::MAX, -128), (1_500_000_000, 127)] {
                for e in 1..32 {
                    let y = smmulr(acc << 1, m) as i64;
                    let want = ((y + (1i64 << (e - 1)) - (y < 0) as i64) >> e) as i32 + off;
                    assert_eq!(rq_shift(acc, m, e, off), want, "rq_shift({acc}, {m}, {e})");
                }
            }
        }
    }
}
