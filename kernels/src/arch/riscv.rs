//! The microkernels for RV32 cores with the M extension and no SIMD (`riscv32imc`,
//! `riscv32imac`: ESP32-C3/C6/H2-class). Same contract as the other forms (see [`super`]),
//! plus the blocks the drivers take under `kiln_arch = "riscv"`: `two_pixels_by4` and
//! `one_pixel_by4` as on Helium, [`four_pixels_by4`] for `gemm::pointwise` with a constant
//! input depth, [`dw_row`] (the depthwise row form) and [`dw_pair`] (its taps form).
//!
//! RV32IM multiplies in one instruction (`MUL`) but has no multiply-accumulate, no packed
//! arithmetic and (without Zbb) no sign-extending byte extraction from a register: a 32-bit
//! load of four int8 values costs seven shifts to unpack, while `LB` loads one value already
//! sign-extended. So each product is one `MUL` and one `ADD`, and what is saved is loads
//! and overhead:
//!
//! * **register blocking**: [`four_pixels_by4`] keeps the sixteen sums of four pixels by
//!   four output channels in registers, so a step of `k` is 8 loads for 16 products. It
//!   needs `k` a constant: then the four pixels and the four weight rows are one pointer
//!   each plus constant offsets (with a runtime `k` the extra pointers spill).
//!   [`two_pixels_by4`] (eight sums, two pixels by four channels, 6 loads for 8 products)
//!   takes the other convolutions (the im2col pixel pairs) and the leftover pixels. The
//!   depthwise rows ([`dw_row`]) run four pixels per block for 3x3 windows (per tap the four
//!   weights loaded once, `LH` from the int16 pairs of `pack_weights`, for the four pixels),
//!   pairs otherwise;
//! * **`asm!` for the hot loops** on RV32 (argued `unsafe`, with plain-Rust forms of the
//!   same arithmetic elsewhere, which the host tests check): LLVM's scheduler issues the
//!   sixteen `MUL`s of a step before their `ADD`s and spills (66 instructions for a
//!   16-product step instead of 43), and unrolling several steps spills too. In `asm!`,
//!   four steps of [`four_pixels_by4`] are 164 instructions for 64 products (2.56 each),
//!   four of [`two_pixels_by4`] 94 for 32 (2.94), a 3x3 tap of the four-pixel depthwise
//!   block 57 for 16 (3.56);
//! * **loads proven in bounds once** per call (the depthwise blocks' unchecked loads, the
//!   `asm!` blocks' pointers), not per tap;
//! * the requantization written out per channel, its multiplier, shift and rounding term
//!   loaded once for all pixels of the block, the clamp's bounds in registers (at opt-level
//!   "s" LLVM keeps loops over four or eight outputs rolled, with the sums in memory), and
//!   its high multiply as `MULHSU` ([`smmulr_doubled`]);
//! * no unaligned word accesses (many RV32 cores trap on them; the callers pass slices at
//!   any byte).

use super::dot;
use crate::gemm::Output;

// The `asm!` templates of the RV32 blocks, one step or tap each (`{...}` are the blocks'
// operands; the assembler evaluates the offsets' products and sums).

/// Four products of [`four_pixels_by4`]: the loaded weight `{w}` times the four pixels'
/// inputs `{x0}`..`{x3}`, into the sums of channel `$r` of the four pixels.
#[cfg(all(target_arch = "riscv32", target_feature = "m"))]
macro_rules! fp_mac4 {
    ($r:literal) => {
        concat!(
            "mul {t}, {x0}, {w}\nadd {a0",
            $r,
            "}, {a0",
            $r,
            "}, {t}\n",
            "mul {t}, {x1}, {w}\nadd {a1",
            $r,
            "}, {a1",
            $r,
            "}, {t}\n",
            "mul {t}, {x2}, {w}\nadd {a2",
            $r,
            "}, {a2",
            $r,
            "}, {t}\n",
            "mul {t}, {x3}, {w}\nadd {a3",
            $r,
            "}, {a3",
            $r,
            "}, {t}\n",
        )
    };
}

/// Input `$s` of a pass of [`four_pixels_by4`]: the four pixels' values (`{k}` bytes
/// apart), then each of the four weight rows' value and its four products.
#[cfg(all(target_arch = "riscv32", target_feature = "m"))]
macro_rules! fp_step {
    ($s:literal) => {
        concat!(
            "lb {x0}, ",
            $s,
            "({px})\n",
            "lb {x1}, {k}+",
            $s,
            "({px})\n",
            "lb {x2}, 2*{k}+",
            $s,
            "({px})\n",
            "lb {x3}, 3*{k}+",
            $s,
            "({px})\n",
            "lb {w}, ",
            $s,
            "({pw})\n",
            fp_mac4!("0"),
            "lb {w}, {k}+",
            $s,
            "({pw})\n",
            fp_mac4!("1"),
            "lb {w}, 2*{k}+",
            $s,
            "({pw})\n",
            fp_mac4!("2"),
            "lb {w}, 3*{k}+",
            $s,
            "({pw})\n",
            fp_mac4!("3"),
        )
    };
}

/// Weight row `$r` of input `$s` in a pass of [`two_pixels_by4`]: its value times both
/// pixels' inputs, into the sums of channel `$r`.
#[cfg(all(target_arch = "riscv32", target_feature = "m"))]
macro_rules! tp_row {
    ($s:literal, $r:literal) => {
        concat!(
            "lb {w}, ",
            $s,
            "({r",
            $r,
            "})\n",
            "mul {t}, {x0}, {w}\nadd {a",
            $r,
            "}, {a",
            $r,
            "}, {t}\n",
            "mul {t}, {x1}, {w}\nadd {b",
            $r,
            "}, {b",
            $r,
            "}, {t}\n",
        )
    };
}

/// Input `$s` of a pass of [`two_pixels_by4`]: both pixels' values, then the four rows.
#[cfg(all(target_arch = "riscv32", target_feature = "m"))]
macro_rules! tp_step {
    ($s:literal) => {
        concat!(
            "lb {x0}, ",
            $s,
            "({p0})\n",
            "lb {x1}, ",
            $s,
            "({p1})\n",
            tp_row!($s, "0"),
            tp_row!($s, "1"),
            tp_row!($s, "2"),
            tp_row!($s, "3"),
        )
    };
}

/// Channel `$j` of tap `$i` in [`dw_pixels_at`]'s pair block: the weight (`LH`, halfword
/// `4i + j` of the group's entries), times both pixels' inputs.
#[cfg(all(
    target_arch = "riscv32",
    target_feature = "m",
    target_endian = "little"
))]
macro_rules! dp_channel {
    ($i:literal, $j:literal) => {
        concat!(
            "lh {w}, 8*",
            $i,
            "+2*",
            $j,
            "({pw})\n",
            "lb {u}, ",
            $j,
            "({p})\nmul {u}, {u}, {w}\nadd {a",
            $j,
            "}, {a",
            $j,
            "}, {u}\n",
            "lb {u}, ",
            $j,
            "({r})\nmul {u}, {u}, {w}\nadd {c",
            $j,
            "}, {c",
            $j,
            "}, {u}\n",
        )
    };
}

/// Tap `$i` of [`dw_pixels_at`]'s pair block: its offset, both pixels' addresses, the
/// four channels.
#[cfg(all(
    target_arch = "riscv32",
    target_feature = "m",
    target_endian = "little"
))]
macro_rules! dp_tap {
    ($i:literal) => {
        concat!(
            "lw {o}, 4*",
            $i,
            "({tbl})\n",
            "add {p}, {xa}, {o}\n",
            "add {r}, {xb}, {o}\n",
            dp_channel!($i, "0"),
            dp_channel!($i, "1"),
            dp_channel!($i, "2"),
            dp_channel!($i, "3"),
        )
    };
}

/// The four products of one pixel (`$q`) at the address `{p}` in [`dw_quad_at`]'s block.
#[cfg(all(
    target_arch = "riscv32",
    target_feature = "m",
    target_endian = "little"
))]
macro_rules! dq_pixel {
    ($q:literal) => {
        concat!(
            "lb {u}, 0({p})\nmul {u}, {u}, {w0}\nadd {a",
            $q,
            "0}, {a",
            $q,
            "0}, {u}\n",
            "lb {u}, 1({p})\nmul {u}, {u}, {w1}\nadd {a",
            $q,
            "1}, {a",
            $q,
            "1}, {u}\n",
            "lb {u}, 2({p})\nmul {u}, {u}, {w2}\nadd {a",
            $q,
            "2}, {a",
            $q,
            "2}, {u}\n",
            "lb {u}, 3({p})\nmul {u}, {u}, {w3}\nadd {a",
            $q,
            "3}, {a",
            $q,
            "3}, {u}\n",
        )
    };
}

/// Tap `$i` of [`dw_quad_at`]'s block: its offset, the four weights (`LH`), the four
/// pixels one step (`{st}`) apart.
#[cfg(all(
    target_arch = "riscv32",
    target_feature = "m",
    target_endian = "little"
))]
macro_rules! dq_tap {
    ($i:literal) => {
        concat!(
            "lw {p}, 4*",
            $i,
            "({tbl})\n",
            "add {p}, {p}, {xa}\n",
            "lh {w0}, 8*",
            $i,
            "({pw})\n",
            "lh {w1}, 8*",
            $i,
            "+2({pw})\n",
            "lh {w2}, 8*",
            $i,
            "+4({pw})\n",
            "lh {w3}, 8*",
            $i,
            "+6({pw})\n",
            dq_pixel!("0"),
            "add {p}, {p}, {st}\n",
            dq_pixel!("1"),
            "add {p}, {p}, {st}\n",
            dq_pixel!("2"),
            "add {p}, {p}, {st}\n",
            dq_pixel!("3"),
        )
    };
}

/// `acc + x * w` (wrapping). On RV32 one `MUL` and one `ADD` in an `asm!` block, so that
/// the compiler's scheduler cannot hoist the products of a step away from their sums: with
/// sixteen accumulators it issues all sixteen `MUL`s first and spills (measured: 66
/// instructions for a 16-product step instead of 43). Elsewhere (the host tests of these
/// forms) plain Rust.
#[inline(always)]
#[allow(unsafe_code)]
fn mac(acc: i32, x: i32, w: i32) -> i32 {
    #[cfg(all(target_arch = "riscv32", target_feature = "m"))]
    {
        let r: i32;
        // SAFETY: two register-only instructions of RV32IM (`MUL`, `ADD`; the M extension
        // is in the cfg), no memory access, no stack, no flags; `t` is written before the
        // inputs are all read, hence `out` (never an input's register), `r` after (may
        // reuse one).
        unsafe {
            core::arch::asm!(
                "mul {t}, {x}, {w}",
                "add {r}, {a}, {t}",
                a = in(reg) acc,
                x = in(reg) x,
                w = in(reg) w,
                t = out(reg) _,
                r = lateout(reg) r,
                options(pure, nomem, nostack),
            );
        }
        r
    }
    #[cfg(not(all(target_arch = "riscv32", target_feature = "m")))]
    {
        acc.wrapping_add(x.wrapping_mul(w))
    }
}

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

/// Two output pixels of a depth-multiplier-1 depthwise convolution, all `c = bias.len()`
/// channels (a non-zero multiple of 4), requantized into `out0` and `out1`: `taps0[i]` and
/// `taps1[i]` are the pixels' inputs at tap `i` (`c` bytes each), `w` the weights as
/// `depthwise_conv_2d::fast::pack_weights` lays them out (two words of int16 pairs per
/// group of four channels and tap). Per group of four channels and tap, the tap's four
/// weights are loaded once for both pixels (four `LH` from the int16 pairs, no unpacking)
/// and each input by one `LB`: 12 loads for 8 products, against 6 loads and 6 unpacking
/// instructions for 4 in [`mac_taps4`]; the group's multipliers and shifts are loaded once
/// for the eight outputs. The loads are unchecked, the slices' lengths proven once up front
/// (one check per call instead of one per tap and group). Returns `false` (nothing written)
/// if a length does not fit.
// Not inlined: in its own function the sums, pointers and the clamp's bounds stay in
// registers (inlined into the caller's pixel loop they spill).
#[allow(clippy::too_many_arguments, unsafe_code)]
#[inline(never)]
pub(crate) fn dw_pair(
    taps0: &[&[i8]],
    taps1: &[&[i8]],
    w: &[i32],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &Output,
    out0: &mut [i8],
    out1: &mut [i8],
) -> bool {
    let t = taps0.len();
    let c = bias.len();
    if t == 0
        || t > super::MAX_TAPS
        || taps1.len() != t
        || c == 0
        || !c.is_multiple_of(4)
        || w.len() < c / 2 * t
        || m.len() < c
        || e.len() < c
        || out0.len() < c
        || out1.len() < c
        || taps0.iter().chain(taps1).any(|s| s.len() < c)
    {
        return false;
    }
    // In registers for the whole call (the stores to the outputs cannot change it).
    let q = *q;
    // The weights as int16 values: halfword `4i + j` (`^ 1` on a big-endian target) is
    // weight `j` of entry `i` (`pack_weights`: word `2i` is `w0 | w1 << 16`, word `2i + 1`
    // is `w2 | w3 << 16`).
    let wh = w.as_ptr().cast::<i16>();
    const SWAP: usize = if cfg!(target_endian = "big") { 1 } else { 0 };
    // Halfword index of the current entry: entries in order, group by group, tap by tap.
    let mut wi = 0usize;
    let mut at = 0usize;
    for ((((b, mm), ee), o0), o1) in bias
        .chunks_exact(4)
        .zip(m.chunks_exact(4))
        .zip(e.chunks_exact(4))
        .zip(out0.chunks_exact_mut(4))
        .zip(out1.chunks_exact_mut(4))
    {
        let [mut a0, mut a1, mut a2, mut a3] = [b[0], b[1], b[2], b[3]];
        let [mut b0, mut b1, mut b2, mut b3] = [b[0], b[1], b[2], b[3]];
        for (s0, s1) in taps0.iter().zip(taps1) {
            // SAFETY: every tap slice holds at least `c` bytes (checked above) and
            // `at + 3 < c` (`at = 4g` for the groups `g < c / 4` of the zip over
            // `bias.chunks_exact(4)`), so the eight byte reads are inside `s0` and `s1`.
            // The entries are read in order, `t` per group, so the last halfword read is
            // `4 * (c / 4 * t - 1) + 3 < c * t <= 2 * w.len()` (checked above): inside `w`,
            // whose `i32`s are 2-aligned for the `i16` reads and have no invalid bit
            // patterns; `^ SWAP` stays within the same word.
            let (x, y, v) = unsafe {
                let (p, r) = (s0.as_ptr().add(at), s1.as_ptr().add(at));
                (
                    [*p, *p.add(1), *p.add(2), *p.add(3)],
                    [*r, *r.add(1), *r.add(2), *r.add(3)],
                    [
                        *wh.add(wi ^ SWAP) as i32,
                        *wh.add((wi + 1) ^ SWAP) as i32,
                        *wh.add((wi + 2) ^ SWAP) as i32,
                        *wh.add((wi + 3) ^ SWAP) as i32,
                    ],
                )
            };
            wi += 4;
            a0 = mac(a0, x[0] as i32, v[0]);
            b0 = mac(b0, y[0] as i32, v[0]);
            a1 = mac(a1, x[1] as i32, v[1]);
            b1 = mac(b1, y[1] as i32, v[1]);
            a2 = mac(a2, x[2] as i32, v[2]);
            b2 = mac(b2, y[2] as i32, v[2]);
            a3 = mac(a3, x[3] as i32, v[3]);
            b3 = mac(b3, y[3] as i32, v[3]);
        }
        at += 4;
        // Written out: at opt-level "s" LLVM keeps a loop over the eight rolled.
        let (h0, h1, h2, h3) = (half(ee[0]), half(ee[1]), half(ee[2]), half(ee[3]));
        o0[0] = output(a0, None, &[], mm[0], ee[0], h0, &q);
        o1[0] = output(b0, None, &[], mm[0], ee[0], h0, &q);
        o0[1] = output(a1, None, &[], mm[1], ee[1], h1, &q);
        o1[1] = output(b1, None, &[], mm[1], ee[1], h1, &q);
        o0[2] = output(a2, None, &[], mm[2], ee[2], h2, &q);
        o1[2] = output(b2, None, &[], mm[2], ee[2], h2, &q);
        o0[3] = output(a3, None, &[], mm[3], ee[3], h3, &q);
        o1[3] = output(b3, None, &[], mm[3], ee[3], h3, &q);
    }
    true
}

/// One output row of a depth-multiplier-1 depthwise convolution whose windows lie inside
/// `x` (the input itself, or a band of its rows with the padding filled in), as the DSP
/// form's `dw_row` takes it: output pixel `i` (`out[i * c..][..c]`) from the window at
/// `x[start + i * step..]`, tap `(fy, fx)` of channel `ch` at `start + i * step + fy * row +
/// fx * col + ch`, the weights of `pack_weights`. The taps' offsets are computed once per
/// row; the pixels of a 3x3 window go by fours ([`dw_quad_at`]), then (and those of other
/// windows) by pairs, an odd last one alone ([`dw_pixels_at`]). Every load is proven in bounds by
/// [`DwRow::fits`](super::DwRow::fits) once per row. Returns whether it ran (else nothing is
/// written). The clamp is always the layer's (`F` unused: two comparisons either way).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn dw_row<const F: bool, const KX1: bool>(
    r: &super::DwRow,
    x: &[i8],
    start: usize,
    w: &[i32],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &Output,
    out: &mut [i8],
) -> bool {
    let t = r.kh * r.kw;
    if t > super::MAX_TAPS || !r.fits::<KX1>(x, start, w, bias, m, e, out) {
        return false;
    }
    let mut offs = [0usize; super::MAX_TAPS];
    for fy in 0..r.kh {
        for fx in 0..r.kw {
            if let Some(o) = offs.get_mut(fy * r.kw + fx) {
                *o = fy * r.row + fx * r.col;
            }
        }
    }
    let c = r.c;
    let Some(bias) = bias.get(..c) else {
        return false;
    };
    let offs = offs.get(..t).unwrap_or(&[]);
    let mut i = 0;
    // 3x3 windows four pixels at a time (RV32: [`dw_quad_at`]).
    if t == 9 {
        while i + 3 < r.pixels {
            if let Some(o) = out.get_mut(i * c..(i + 4) * c) {
                dw_quad_at(x, start + i * r.step, r.step, offs, w, bias, m, e, q, o);
            }
            i += 4;
        }
    }
    while i + 1 < r.pixels {
        if let Some((o0, o1)) = out
            .get_mut(i * c..(i + 2) * c)
            .and_then(|o| o.split_at_mut_checked(c))
        {
            let (b0, b1) = (start + i * r.step, start + (i + 1) * r.step);
            dw_pixels_at::<true>(x, b0, b1, offs, w, bias, m, e, q, o0, o1);
        }
        i += 2;
    }
    // An odd last pixel by the one-pixel instance.
    if i < r.pixels
        && let Some(o0) = out.get_mut(i * c..(i + 1) * c)
    {
        let b0 = start + i * r.step;
        dw_pixels_at::<false>(x, b0, b0, offs, w, bias, m, e, q, o0, &mut []);
    }
    true
}

/// Four output pixels of a 3x3 [`dw_row`], the windows at `x[b0 + i * step..]` (`i < 4`),
/// tap `k` at offset `offs[k]`, all `c = bias.len()` channels into `out` (`4c` bytes, pixel
/// by pixel). On RV32 per group of four channels the nine taps are one `asm!` block: per tap
/// its offset, the four weights (`LH`) once for the four pixels, sixteen `LB`, `MUL` and
/// `ADD` (57 instructions for 16 products, the sixteen sums in registers), then the
/// sixteen outputs requantized with the channels' constants loaded once. Elsewhere (the
/// host tests) two calls of [`dw_pixels_at`], the same arithmetic. The caller
/// ([`dw_row`]) has proven the bounds; checked again here once per call.
// Not inlined (the sums and the block's registers), see `dw_pixels_at`.
#[allow(clippy::too_many_arguments, unsafe_code)]
#[inline(never)]
fn dw_quad_at(
    x: &[i8],
    b0: usize,
    step: usize,
    offs: &[usize],
    w: &[i32],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &Output,
    out: &mut [i8],
) {
    let c = bias.len();
    let Some(o9) = offs.first_chunk::<9>() else {
        return;
    };
    // The largest byte read is `b0 + 3 * step + max(offs) + c - 1`.
    let last = step
        .checked_mul(3)
        .and_then(|v| v.checked_add(b0))
        .and_then(|v| v.checked_add(o9.iter().copied().max().unwrap_or(0)))
        .and_then(|v| v.checked_add(c));
    if offs.len() != 9
        || c == 0
        || !c.is_multiple_of(4)
        || last.is_none_or(|l| l > x.len())
        || w.len() < c / 2 * 9
        || m.len() < c
        || e.len() < c
        || out.len() < 4 * c
    {
        return;
    }
    #[cfg(not(all(
        target_arch = "riscv32",
        target_feature = "m",
        target_endian = "little"
    )))]
    {
        let (o01, o23) = out.split_at_mut(2 * c);
        let ((p0, p1), (p2, p3)) = (o01.split_at_mut(c), o23.split_at_mut(c));
        dw_pixels_at::<true>(x, b0, b0 + step, offs, w, bias, m, e, q, p0, p1);
        dw_pixels_at::<true>(
            x,
            b0 + 2 * step,
            b0 + 3 * step,
            offs,
            w,
            bias,
            m,
            e,
            q,
            p2,
            p3,
        );
    }
    #[cfg(all(
        target_arch = "riscv32",
        target_feature = "m",
        target_endian = "little"
    ))]
    {
        let q = *q;
        let wh = w.as_ptr().cast::<i16>();
        let x0 = x.as_ptr().wrapping_add(b0);
        let (o01, o23) = out.split_at_mut(2 * c);
        let ((p0, p1), (p2, p3)) = (o01.split_at_mut(c), o23.split_at_mut(c));
        for (g, ((((((b, mm), ee), q0), q1), q2), q3)) in bias
            .chunks_exact(4)
            .zip(m.chunks_exact(4))
            .zip(e.chunks_exact(4))
            .zip(p0.chunks_exact_mut(4))
            .zip(p1.chunks_exact_mut(4))
            .zip(p2.chunks_exact_mut(4))
            .zip(p3.chunks_exact_mut(4))
            .enumerate()
        {
            let (at, wi) = (4 * g, 36 * g);
            // `aPC`: pixel `P`, channel `C` of the group.
            let [mut a00, mut a01, mut a02, mut a03] = [b[0], b[1], b[2], b[3]];
            let [mut a10, mut a11, mut a12, mut a13] = [b[0], b[1], b[2], b[3]];
            let [mut a20, mut a21, mut a22, mut a23] = [b[0], b[1], b[2], b[3]];
            let [mut a30, mut a31, mut a32, mut a33] = [b[0], b[1], b[2], b[3]];
            // SAFETY: reads only: for tap `k` and pixel `i`, bytes `x0 + at + o9[k] + i *
            // step + j` (`j < 4`), at most `b0 + 3 * step + max(offs) + c - 1 < x.len()`
            // (checked above; `at + 3 < c`, `g < c / 4` by the zip over
            // `bias.chunks_exact(4)`); the halfwords `36g + 4k + j` of `w` (byte `8k + 2j`
            // from `pw`), below `9c <= 2 * w.len()` (checked above; `i32`s are 2-aligned,
            // every bit pattern valid, little-endian so no swap); the nine offsets (`o9`,
            // `usize` = 4 bytes on RV32). The other operands are registers (`p`, `w*`, `u`
            // written before all inputs are read: `out`); no stack.
            unsafe {
                core::arch::asm!(
                    dq_tap!(0),
                    dq_tap!(1),
                    dq_tap!(2),
                    dq_tap!(3),
                    dq_tap!(4),
                    dq_tap!(5),
                    dq_tap!(6),
                    dq_tap!(7),
                    dq_tap!(8),
                    a00 = inout(reg) a00,
                    a01 = inout(reg) a01,
                    a02 = inout(reg) a02,
                    a03 = inout(reg) a03,
                    a10 = inout(reg) a10,
                    a11 = inout(reg) a11,
                    a12 = inout(reg) a12,
                    a13 = inout(reg) a13,
                    a20 = inout(reg) a20,
                    a21 = inout(reg) a21,
                    a22 = inout(reg) a22,
                    a23 = inout(reg) a23,
                    a30 = inout(reg) a30,
                    a31 = inout(reg) a31,
                    a32 = inout(reg) a32,
                    a33 = inout(reg) a33,
                    xa = in(reg) x0.wrapping_add(at),
                    st = in(reg) step,
                    tbl = in(reg) o9.as_ptr(),
                    pw = in(reg) wh.wrapping_add(wi),
                    p = out(reg) _,
                    w0 = out(reg) _,
                    w1 = out(reg) _,
                    w2 = out(reg) _,
                    w3 = out(reg) _,
                    u = out(reg) _,
                    options(nostack, readonly, pure),
                );
            }
            let (h0, h1, h2, h3) = (half(ee[0]), half(ee[1]), half(ee[2]), half(ee[3]));
            let rq = |a, j: usize, h| output(a, None, &[], mm[j], ee[j], h, &q);
            // Written out: at opt-level "s" LLVM keeps loops over the sixteen rolled.
            q0[0] = rq(a00, 0, h0);
            q1[0] = rq(a10, 0, h0);
            q2[0] = rq(a20, 0, h0);
            q3[0] = rq(a30, 0, h0);
            q0[1] = rq(a01, 1, h1);
            q1[1] = rq(a11, 1, h1);
            q2[1] = rq(a21, 1, h1);
            q3[1] = rq(a31, 1, h1);
            q0[2] = rq(a02, 2, h2);
            q1[2] = rq(a12, 2, h2);
            q2[2] = rq(a22, 2, h2);
            q3[2] = rq(a32, 2, h2);
            q0[3] = rq(a03, 3, h3);
            q1[3] = rq(a13, 3, h3);
            q2[3] = rq(a23, 3, h3);
            q3[3] = rq(a33, 3, h3);
        }
    }
}

/// Two output pixels of [`dw_row`] (`TWO`; else one, `b0`, into `out0`, `out1` unused):
/// windows at `x[b0..]` and `x[b1..]`, tap `i` at offset `offs[i]`, all `c = bias.len()`
/// channels, into `out0` and `out1`. Per group of four channels and tap, the four weights
/// loaded once (`LH`) for both pixels and eight `LB`, the eight sums in registers (RV32, a
/// 3x3 pair: the nine taps as one `asm!` block, 31 instructions per tap). The caller
/// ([`dw_row`]) has proven the bounds; checked again here once per call.
// Not inlined: in its own function the sums, pointers and the clamp's bounds stay in
// registers.
#[allow(clippy::too_many_arguments, unsafe_code)]
#[inline(never)]
fn dw_pixels_at<const TWO: bool>(
    x: &[i8],
    b0: usize,
    b1: usize,
    offs: &[usize],
    w: &[i32],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &Output,
    out0: &mut [i8],
    out1: &mut [i8],
) {
    let (t, c) = (offs.len(), bias.len());
    let Some(reach) = offs.iter().max() else {
        return;
    };
    // The largest byte read is `max(b0, b1) + max(offs) + c - 1`.
    let last = b0
        .max(b1)
        .checked_add(*reach)
        .and_then(|v| v.checked_add(c));
    if c == 0
        || !c.is_multiple_of(4)
        || last.is_none_or(|l| l > x.len())
        || w.len() < c / 2 * t
        || m.len() < c
        || e.len() < c
        || out0.len() < c
        || (TWO && out1.len() < c)
    {
        return;
    }
    let q = *q;
    let wh = w.as_ptr().cast::<i16>();
    const SWAP: usize = if cfg!(target_endian = "big") { 1 } else { 0 };
    let mut wi = 0usize;
    let (x0, x1) = (x.as_ptr().wrapping_add(b0), x.as_ptr().wrapping_add(b1));
    for (g, (((b, mm), ee), p0)) in bias
        .chunks_exact(4)
        .zip(m.chunks_exact(4))
        .zip(e.chunks_exact(4))
        .zip(out0.chunks_exact_mut(4))
        .enumerate()
    {
        let at = 4 * g;
        let [mut a0, mut a1, mut a2, mut a3] = [b[0], b[1], b[2], b[3]];
        let [mut c0, mut c1, mut c2, mut c3] = [b[0], b[1], b[2], b[3]];
        // The taps' products (`o`: the tap's offset).
        macro_rules! tap {
            ($o:expr) => {{
                let o: usize = $o;
                // SAFETY: `b + o + at + 3 <= max(b0, b1) + max(offs) + c - 1 < x.len()` for
                // both windows (`at + 3 < c`: `g < c / 4` by the zip over `bias.chunks_exact(4)`),
                // checked above, so the eight byte reads are inside `x` (and `x0`/`x1`, built
                // with `wrapping_add`, point inside it). The weights: the last halfword read is
                // `4 * (c / 4 * t - 1) + 3 < c * t <= 2 * w.len()` (checked above), the `i32`s
                // 2-aligned for the `i16` reads, every bit pattern valid; `^ SWAP` stays within
                // the word.
                let (u, v) = unsafe {
                    let p = x0.add(o + at);
                    (
                        [*p, *p.add(1), *p.add(2), *p.add(3)],
                        [
                            *wh.add(wi ^ SWAP) as i32,
                            *wh.add((wi + 1) ^ SWAP) as i32,
                            *wh.add((wi + 2) ^ SWAP) as i32,
                            *wh.add((wi + 3) ^ SWAP) as i32,
                        ],
                    )
                };
                wi += 4;
                a0 = mac(a0, u[0] as i32, v[0]);
                a1 = mac(a1, u[1] as i32, v[1]);
                a2 = mac(a2, u[2] as i32, v[2]);
                a3 = mac(a3, u[3] as i32, v[3]);
                if TWO {
                    // SAFETY: as above, for the second window.
                    let y = unsafe {
                        let r = x1.add(o + at);
                        [*r, *r.add(1), *r.add(2), *r.add(3)]
                    };
                    c0 = mac(c0, y[0] as i32, v[0]);
                    c1 = mac(c1, y[1] as i32, v[1]);
                    c2 = mac(c2, y[2] as i32, v[2]);
                    c3 = mac(c3, y[3] as i32, v[3]);
                }
            }};
        }
        // Whether the `asm!` block below ran the taps (not on other targets).
        #[cfg_attr(
            not(all(
                target_arch = "riscv32",
                target_feature = "m",
                target_endian = "little"
            )),
            allow(unused_mut)
        )]
        let mut done = false;
        // RV32, two pixels of a 3x3 window: the nine taps in one `asm!` block (per tap its
        // offset, two addresses, four `LH`, eight `LB`, eight `MUL` and `ADD`: 31
        // instructions for 8 products, the sums in registers).
        #[cfg(all(
            target_arch = "riscv32",
            target_feature = "m",
            target_endian = "little"
        ))]
        if TWO
            && t == 9
            && let Some(o9) = offs.first_chunk::<9>()
        {
            // SAFETY: reads only, the same bytes as `tap!` below reads (its argument): for
            // tap `i`, `x0 + o9[i] + at + j` and `x1 + o9[i] + at + j` (`j < 4`), the
            // halfwords `wi + 4i + j` of `w` (byte `8i + 2j` from `pw`; little-endian, so no
            // swap), and the nine offsets themselves (`o9`, `usize` = 4 bytes on RV32). The
            // other operands are registers (`o`, `p`, `r`, `w`, `u` written before all
            // inputs are read: `out`); no stack.
            unsafe {
                core::arch::asm!(
                    dp_tap!(0),
                    dp_tap!(1),
                    dp_tap!(2),
                    dp_tap!(3),
                    dp_tap!(4),
                    dp_tap!(5),
                    dp_tap!(6),
                    dp_tap!(7),
                    dp_tap!(8),
                    a0 = inout(reg) a0,
                    a1 = inout(reg) a1,
                    a2 = inout(reg) a2,
                    a3 = inout(reg) a3,
                    c0 = inout(reg) c0,
                    c1 = inout(reg) c1,
                    c2 = inout(reg) c2,
                    c3 = inout(reg) c3,
                    xa = in(reg) x0.wrapping_add(at),
                    xb = in(reg) x1.wrapping_add(at),
                    tbl = in(reg) o9.as_ptr(),
                    pw = in(reg) wh.wrapping_add(wi),
                    o = out(reg) _,
                    p = out(reg) _,
                    r = out(reg) _,
                    w = out(reg) _,
                    u = out(reg) _,
                    options(nostack, readonly, pure),
                );
            }
            wi += 36;
            done = true;
        }
        // Elsewhere, a 3x3 window unrolled (the loop's increments and branch are a fifth of
        // a tap).
        if done {
        } else if let Some(o9) = offs.first_chunk::<9>()
            && t == 9
        {
            tap!(o9[0]);
            tap!(o9[1]);
            tap!(o9[2]);
            tap!(o9[3]);
            tap!(o9[4]);
            tap!(o9[5]);
            tap!(o9[6]);
            tap!(o9[7]);
            tap!(o9[8]);
        } else {
            for &o in offs {
                tap!(o);
            }
        }
        // Written out: at opt-level "s" LLVM keeps a loop over the eight rolled.
        let (h0, h1, h2, h3) = (half(ee[0]), half(ee[1]), half(ee[2]), half(ee[3]));
        p0[0] = output(a0, None, &[], mm[0], ee[0], h0, &q);
        p0[1] = output(a1, None, &[], mm[1], ee[1], h1, &q);
        p0[2] = output(a2, None, &[], mm[2], ee[2], h2, &q);
        p0[3] = output(a3, None, &[], mm[3], ee[3], h3, &q);
        if TWO && let Some(p1) = out1.get_mut(at..at + 4) {
            p1[0] = output(c0, None, &[], mm[0], ee[0], h0, &q);
            p1[1] = output(c1, None, &[], mm[1], ee[1], h1, &q);
            p1[2] = output(c2, None, &[], mm[2], ee[2], h2, &q);
            p1[3] = output(c3, None, &[], mm[3], ee[3], h3, &q);
        }
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
    let y = smmulr_doubled(acc, m);
    let r = asr(y + half + (y >> 31), e) + q.offset;
    let r = if r < q.min { q.min } else { r };
    (if r > q.max { q.max } else { r }) as i8
}

/// `smmulr(2 * acc, m)` for `|acc| < 2^30` and `m` in `0..2^31` (the conditions of
/// [`crate::gemm`]) in four instructions instead of five: `z = MULHSU(2 * acc, 2 * m)` (the
/// multiplier doubled as an unsigned word, once per channel) is `floor(acc * m / 2^30)`, and
/// `smmulr(2 * acc, m) = floor((acc * m + 2^30) / 2^31) = floor((z + 1) / 2)` (adding the
/// dropped fraction of `acc * m / 2^30`, below 1, cannot carry past an even integer). `z + 1`
/// does not overflow: `|acc * m| < 2^61 - 2^30`, so `|z| <= 2^31 - 2`.
#[inline(always)]
pub(crate) fn smmulr_doubled(acc: i32, m: i32) -> i32 {
    let z = ((acc.wrapping_shl(1) as i64 * ((m as u32) << 1) as i64) >> 32) as i32;
    z.wrapping_add(1) >> 1
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
#[allow(clippy::too_many_arguments, unsafe_code)]
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
        // RV32: each pass of four inputs as one `asm!` block (8 + 16 `LB`, 32 `MUL` and
        // `ADD`, six pointer increments: 94 instructions for 32 products; compiled, LLVM
        // spills or reorders: 99).
        #[cfg(all(target_arch = "riscv32", target_feature = "m"))]
        {
            let n = c0
                .len()
                .min(c1.len())
                .min(d0.len())
                .min(d1.len())
                .min(d2.len())
                .min(d3.len());
            let (mut p0, mut p1) = (c0.as_ptr().cast::<i8>(), c1.as_ptr().cast::<i8>());
            let (mut r0, mut r1) = (d0.as_ptr().cast::<i8>(), d1.as_ptr().cast::<i8>());
            let (mut r2, mut r3) = (d2.as_ptr().cast::<i8>(), d3.as_ptr().cast::<i8>());
            for _ in 0..n {
                // SAFETY: reads only: pass `i < n` reads bytes `4i..4i + 4` of each of
                // `c0`, `c1`, `d0`..`d3` (each at least `n` chunks of 4 bytes: `n` is their
                // least length), through pointers that start at them and advance 4 bytes per
                // pass. Registers otherwise (`x0`, `x1`, `w`, `t` written before all inputs
                // are read: `out`); no stack.
                unsafe {
                    core::arch::asm!(
                        tp_step!(0),
                        tp_step!(1),
                        tp_step!(2),
                        tp_step!(3),
                        "addi {p0}, {p0}, 4",
                        "addi {p1}, {p1}, 4",
                        "addi {r0}, {r0}, 4",
                        "addi {r1}, {r1}, 4",
                        "addi {r2}, {r2}, 4",
                        "addi {r3}, {r3}, 4",
                        a0 = inout(reg) a0,
                        a1 = inout(reg) a1,
                        a2 = inout(reg) a2,
                        a3 = inout(reg) a3,
                        b0 = inout(reg) b0,
                        b1 = inout(reg) b1,
                        b2 = inout(reg) b2,
                        b3 = inout(reg) b3,
                        p0 = inout(reg) p0,
                        p1 = inout(reg) p1,
                        r0 = inout(reg) r0,
                        r1 = inout(reg) r1,
                        r2 = inout(reg) r2,
                        r3 = inout(reg) r3,
                        x0 = out(reg) _,
                        x1 = out(reg) _,
                        w = out(reg) _,
                        t = out(reg) _,
                        options(nostack, readonly, pure),
                    );
                }
            }
        }
        #[cfg(not(all(target_arch = "riscv32", target_feature = "m")))]
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
        // The last `k % 4` inputs (none for the im2col rows, padded to a multiple of 4),
        // added before the requantization so that it has no branch per output.
        if !t0.is_empty() {
            a0 = a0.wrapping_add(dot(t0, u0));
            b0 = b0.wrapping_add(dot(t1, u0));
            a1 = a1.wrapping_add(dot(t0, u1));
            b1 = b1.wrapping_add(dot(t1, u1));
            a2 = a2.wrapping_add(dot(t0, u2));
            b2 = b2.wrapping_add(dot(t1, u2));
            a3 = a3.wrapping_add(dot(t0, u3));
            b3 = b3.wrapping_add(dot(t1, u3));
        }
        // Written out: at opt-level "s" LLVM keeps a loop over the eight rolled.
        let (h0, h1, h2, h3) = (half(ee[0]), half(ee[1]), half(ee[2]), half(ee[3]));
        o0[0] = output(a0, None, &[], mm[0], ee[0], h0, &q);
        o1[0] = output(b0, None, &[], mm[0], ee[0], h0, &q);
        o0[1] = output(a1, None, &[], mm[1], ee[1], h1, &q);
        o1[1] = output(b1, None, &[], mm[1], ee[1], h1, &q);
        o0[2] = output(a2, None, &[], mm[2], ee[2], h2, &q);
        o1[2] = output(b2, None, &[], mm[2], ee[2], h2, &q);
        o0[3] = output(a3, None, &[], mm[3], ee[3], h3, &q);
        o1[3] = output(b3, None, &[], mm[3], ee[3], h3, &q);
    }
    n4
}

/// [`one_pixel_by4`] for four pixels with `K` inputs each, a constant (`x`: the four
/// pixels, `4K` bytes; `out`: their `n` outputs each, `4n` bytes): per group of four
/// channels sixteen sums in one pass (64 products per four steps of `k` from 16 + 16 `LB`,
/// every load used four times), the group's multipliers and shifts loaded once for the
/// sixteen outputs. With `K` a constant (`3K + 3` within `LB`'s 12-bit offset) the four
/// pixels and the four weight rows are each one pointer plus constant offsets, so a step
/// costs only the loads, `MUL`s and `ADD`s (with a runtime `k` the twelve extra pointers
/// or their address arithmetic spill RV32's registers). Returns the channels done (a
/// multiple of 4; 0 if a slice is short or `K` is not a multiple of 4 up to 680).
#[allow(clippy::too_many_arguments, unsafe_code)]
#[inline(always)]
pub(crate) fn four_pixels_by4<const K: usize>(
    x: &[i8],
    w: &[i8],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &Output,
    n: usize,
    out: &mut [i8],
) -> usize {
    let n4 = n.min(bias.len()).min(m.len()).min(e.len()) / 4 * 4;
    let (Some(x), Some(w)) = (x.get(..4 * K), w.get(..n4.saturating_mul(K))) else {
        return 0;
    };
    if K == 0 || !K.is_multiple_of(4) || 3 * K + 3 > 2047 || n4 == 0 || w.len() != n4 * K {
        return 0;
    }
    let Some(out) = out.get_mut(..4 * n) else {
        return 0;
    };
    let (o01, o23) = out.split_at_mut(2 * n);
    let ((o0, o1), (o2, o3)) = (o01.split_at_mut(n), o23.split_at_mut(n));
    // In registers for the whole call (the stores to the outputs cannot change it).
    let q = *q;
    for (((((((rows, b), mm), ee), p0), p1), p2), p3) in w
        .chunks_exact(4 * K)
        .zip(bias.chunks_exact(4))
        .zip(m.chunks_exact(4))
        .zip(e.chunks_exact(4))
        .zip(o0.chunks_exact_mut(4))
        .zip(o1.chunks_exact_mut(4))
        .zip(o2.chunks_exact_mut(4))
        .zip(o3.chunks_exact_mut(4))
    {
        // `aPC`: pixel `P`, channel `C` of the group.
        let [mut a00, mut a01, mut a02, mut a03] = [b[0], b[1], b[2], b[3]];
        let [mut a10, mut a11, mut a12, mut a13] = [b[0], b[1], b[2], b[3]];
        let [mut a20, mut a21, mut a22, mut a23] = [b[0], b[1], b[2], b[3]];
        let [mut a30, mut a31, mut a32, mut a33] = [b[0], b[1], b[2], b[3]];
        // RV32: four inputs per pass in one `asm!` block (the sixteen sums, the two pointers
        // and six temporaries: 24 registers), the loads at constant offsets from the two
        // pointers: 32 `LB`, 64 `MUL`, 64 `ADD` and two pointer increments per 64 products.
        #[cfg(all(target_arch = "riscv32", target_feature = "m"))]
        {
            let (mut px, mut pw) = (x.as_ptr(), rows.as_ptr());
            let mut i = 0;
            while i + 4 <= K {
                // SAFETY: reads only: bytes `px + s + jK` and `pw + s + jK` for `s`, `j` in
                // 0..4, with `px = x + i`, `pw = rows + i` and `i + 3 < K` (`i` a multiple of
                // 4 below `K`, `K % 4 == 0`): below `x + 4K` and `rows + 4K`, the lengths of
                // `x` and `rows` (checked above, `chunks_exact(4 * K)`); the offsets
                // `3K + 3 <= 2047` fit `LB`'s immediate (checked above). Registers only
                // otherwise (`x*`, `w`, `t` written before all inputs are read: `out`), no
                // stack.
                unsafe {
                    core::arch::asm!(
                        fp_step!(0),
                        fp_step!(1),
                        fp_step!(2),
                        fp_step!(3),
                        "addi {px}, {px}, 4",
                        "addi {pw}, {pw}, 4",
                        a00 = inout(reg) a00,
                        a01 = inout(reg) a01,
                        a02 = inout(reg) a02,
                        a03 = inout(reg) a03,
                        a10 = inout(reg) a10,
                        a11 = inout(reg) a11,
                        a12 = inout(reg) a12,
                        a13 = inout(reg) a13,
                        a20 = inout(reg) a20,
                        a21 = inout(reg) a21,
                        a22 = inout(reg) a22,
                        a23 = inout(reg) a23,
                        a30 = inout(reg) a30,
                        a31 = inout(reg) a31,
                        a32 = inout(reg) a32,
                        a33 = inout(reg) a33,
                        px = inout(reg) px,
                        pw = inout(reg) pw,
                        x0 = out(reg) _,
                        x1 = out(reg) _,
                        x2 = out(reg) _,
                        x3 = out(reg) _,
                        w = out(reg) _,
                        t = out(reg) _,
                        k = const K,
                        options(nostack, readonly, pure),
                    );
                }
                i += 4;
            }
        }
        #[cfg(not(all(target_arch = "riscv32", target_feature = "m")))]
        {
            let mut i = 0;
            // One input per pass: unrolled (measured with two and four), the scheduler hoists
            // the loads of the later steps and spills.
            while i < K {
                // Written out (at opt-level "s" LLVM keeps loops over the four rolled): input
                // `i` of the four pixels times the four channels' weights, each weight loaded
                // once and used four times.
                macro_rules! step {
                    ($t:expr) => {{
                        let j = i + $t;
                        let (x0, x1, x2, x3) = (
                            x[j] as i32,
                            x[K + j] as i32,
                            x[2 * K + j] as i32,
                            x[3 * K + j] as i32,
                        );
                        let v = rows[j] as i32;
                        a00 = mac(a00, x0, v);
                        a10 = mac(a10, x1, v);
                        a20 = mac(a20, x2, v);
                        a30 = mac(a30, x3, v);
                        let v = rows[K + j] as i32;
                        a01 = mac(a01, x0, v);
                        a11 = mac(a11, x1, v);
                        a21 = mac(a21, x2, v);
                        a31 = mac(a31, x3, v);
                        let v = rows[2 * K + j] as i32;
                        a02 = mac(a02, x0, v);
                        a12 = mac(a12, x1, v);
                        a22 = mac(a22, x2, v);
                        a32 = mac(a32, x3, v);
                        let v = rows[3 * K + j] as i32;
                        a03 = mac(a03, x0, v);
                        a13 = mac(a13, x1, v);
                        a23 = mac(a23, x2, v);
                        a33 = mac(a33, x3, v);
                    }};
                }
                step!(0);
                i += 1;
            }
        }
        // Written out: at opt-level "s" LLVM keeps a loop over the sixteen rolled.
        let (h0, h1, h2, h3) = (half(ee[0]), half(ee[1]), half(ee[2]), half(ee[3]));
        p0[0] = output(a00, None, &[], mm[0], ee[0], h0, &q);
        p1[0] = output(a10, None, &[], mm[0], ee[0], h0, &q);
        p2[0] = output(a20, None, &[], mm[0], ee[0], h0, &q);
        p3[0] = output(a30, None, &[], mm[0], ee[0], h0, &q);
        p0[1] = output(a01, None, &[], mm[1], ee[1], h1, &q);
        p1[1] = output(a11, None, &[], mm[1], ee[1], h1, &q);
        p2[1] = output(a21, None, &[], mm[1], ee[1], h1, &q);
        p3[1] = output(a31, None, &[], mm[1], ee[1], h1, &q);
        p0[2] = output(a02, None, &[], mm[2], ee[2], h2, &q);
        p1[2] = output(a12, None, &[], mm[2], ee[2], h2, &q);
        p2[2] = output(a22, None, &[], mm[2], ee[2], h2, &q);
        p3[2] = output(a32, None, &[], mm[2], ee[2], h2, &q);
        p0[3] = output(a03, None, &[], mm[3], ee[3], h3, &q);
        p1[3] = output(a13, None, &[], mm[3], ee[3], h3, &q);
        p2[3] = output(a23, None, &[], mm[3], ee[3], h3, &q);
        p3[3] = output(a33, None, &[], mm[3], ee[3], h3, &q);
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
