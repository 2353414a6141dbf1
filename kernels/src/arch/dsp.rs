//! The microkernels with the Arm DSP extension (Cortex-M4, M7, M33, M55): the crate's only
//! `unsafe` code.
//!
//! Each `mac_*` function runs its 4-byte steps in one `asm!` block (one block per call, so
//! LLVM's register allocator cannot spill the accumulators) and the `k % 4` tail in Rust.
//! A step loads 4 int8 values of a row with one `LDR`, widens them to two pairs of int16
//! with `SXTB16` (lanes 0 and 2) and `SXTB16 ..., ROR #8` (lanes 1 and 3), and multiplies
//! the pairs of a pixel row and a weight row into an accumulator with two `SMLAD`s: `SMLAD`
//! adds both 16x16-bit products to the accumulator in one 32-bit addition each, which
//! wraps exactly like the reference kernels' `int32_t` sums. The lane order is the same
//! for both operands, so the products pair up and their sum is the dot product.
//!
//! # Why the blocks are sound
//!
//! * Memory: every pointer is taken from a slice whose length was checked to cover the
//!   contract (`2k` bytes for two rows, `k` for one), and a block reads `4 * (k / 4)` bytes
//!   from the start of each row (row 1 at `+k`), i.e. only bytes inside those slices. The
//!   blocks only read (`readonly`), never touch the stack (`nostack`) and declare every
//!   register they change (pointers and counters as `inout ... => _`, scratch as `out`).
//! * Alignment: rows start at any byte; `LDR` (never `LDRD`/`LDM`) accepts unaligned
//!   addresses on Armv7-M and Armv8-M Mainline unless the program sets `CCR.UNALIGN_TRP`
//!   (reset value 0; Kiln's documentation requires it to stay 0, as CMSIS-NN does).
//! * Flags: the loop counter's `SUBS` changes the flags, which `asm!` assumes unless
//!   `preserves_flags` is given (it is not).
//! * The loops run only when `k / 4 > 0` (a zero count would wrap the counter).
//! * The single-instruction helpers ([`smmulr`]) are `pure, nomem`:
//!   they only read their register operands.
#![allow(unsafe_code)]

use super::dot;
use core::arch::asm;

/// Two pixels times two channels (see [`super`]).
#[inline(always)]
pub(crate) fn mac_2x2(k: usize, x: &[i8], w: &[i8], acc: [i32; 4]) -> [i32; 4] {
    let (Some(x), Some(w)) = (x.get(..2 * k), w.get(..2 * k)) else {
        return acc;
    };
    let [mut a00, mut a01, mut a10, mut a11] = acc;
    let n = k / 4;
    if n > 0 {
        // SAFETY: see the module documentation: `x` and `w` hold `2k` bytes; the block
        // reads `[0, 4n)` and `[k, k + 4n)` of each. The loop runs the step twice per
        // iteration (`n / 2` times) after one single step when `n` is odd (`n & 1`, tested
        // first with `LSRS`, which shifts bit 0 into the carry).
        unsafe {
            // One step: 4 values of each pixel and weight row, widened, 8 SMLAD.
            macro_rules! step {
                () => {
                    concat!(
                        "ldr {p1}, [{pw}]\n",
                        "ldr {q1}, [{pa}, {k}]\n",
                        "sxtb16 {p0}, {p1}\n",
                        "sxtb16 {p1}, {p1}, ror #8\n",
                        "sxtb16 {q0}, {q1}\n",
                        "sxtb16 {q1}, {q1}, ror #8\n",
                        "smlad {a10}, {q0}, {p0}, {a10}\n",
                        "smlad {a10}, {q1}, {p1}, {a10}\n",
                        "ldr {p1}, [{pw}, {k}]\n",
                        "sxtb16 {p0}, {p1}\n",
                        "sxtb16 {p1}, {p1}, ror #8\n",
                        "smlad {a11}, {q0}, {p0}, {a11}\n",
                        "smlad {a11}, {q1}, {p1}, {a11}\n",
                        "ldr {q1}, [{pa}], #4\n",
                        "sxtb16 {q0}, {q1}\n",
                        "sxtb16 {q1}, {q1}, ror #8\n",
                        "smlad {a01}, {q0}, {p0}, {a01}\n",
                        "smlad {a01}, {q1}, {p1}, {a01}\n",
                        "ldr {p1}, [{pw}], #4\n",
                        "sxtb16 {p0}, {p1}\n",
                        "sxtb16 {p1}, {p1}, ror #8\n",
                        "smlad {a00}, {q0}, {p0}, {a00}\n",
                        "smlad {a00}, {q1}, {p1}, {a00}\n",
                    )
                };
            }
            asm!(
                "lsrs {n}, {n}, #1",
                "bcc 3f",
                step!(),
                "cmp {n}, #0",
                "beq 4f",
                "3:",
                step!(),
                step!(),
                "subs {n}, {n}, #1",
                "bne 3b",
                "4:",
                pa = inout(reg) x.as_ptr() => _,
                pw = inout(reg) w.as_ptr() => _,
                k = in(reg) k,
                n = inout(reg) n => _,
                p0 = out(reg) _,
                p1 = out(reg) _,
                q0 = out(reg) _,
                q1 = out(reg) _,
                a00 = inout(reg) a00,
                a01 = inout(reg) a01,
                a10 = inout(reg) a10,
                a11 = inout(reg) a11,
                options(nostack, readonly),
            );
        }
    }
    let done = 4 * n;
    if let (true, Some((x0, x1)), Some((w0, w1))) =
        (done < k, x.split_at_checked(k), w.split_at_checked(k))
    {
        let at = |s| from(s, done);
        let (x0, x1, w0, w1) = (at(x0), at(x1), at(w0), at(w1));
        a00 = a00.wrapping_add(dot(x0, w0));
        a01 = a01.wrapping_add(dot(x0, w1));
        a10 = a10.wrapping_add(dot(x1, w0));
        a11 = a11.wrapping_add(dot(x1, w1));
    }
    [a00, a01, a10, a11]
}

/// [`widen_2`]: the two rows of `x` (`2k` values, `k % 4 == 0`) as int16 lane pairs in
/// `out` (`4k` bytes, word-aligned, else nothing is written), each 4 values of row 0 then
/// row 1 (see [`super`]).
#[inline(always)]
pub(crate) fn widen_2(k: usize, x: &[i8], out: &mut [i8]) {
    let (Some(x), Some(out)) = (x.get(..2 * k), out.get_mut(..4 * k)) else {
        return;
    };
    let n = k / 4;
    if n == 0 || !k.is_multiple_of(4) || !(out.as_ptr() as usize).is_multiple_of(4) {
        return;
    }
    // SAFETY: see the module documentation: `x` holds `2k` bytes, of which the block reads
    // `[0, k)` and `[k, 2k)` (row 1 at `k - 4` past the post-incremented row-0 pointer);
    // `out` holds `4k` bytes, word-aligned (checked above, as `STRD` needs), written
    // `[0, 4k)`, 16 per step.
    unsafe {
        asm!(
            "2:",
            "ldr {a}, [{px}], #4",
            "ldr {b}, [{px}, {km4}]",
            "sxtb16 {c}, {a}",
            "sxtb16 {a}, {a}, ror #8",
            "strd {c}, {a}, [{po}], #8",
            "sxtb16 {c}, {b}",
            "sxtb16 {b}, {b}, ror #8",
            "strd {c}, {b}, [{po}], #8",
            "subs {n}, {n}, #1",
            "bne 2b",
            px = inout(reg) x.as_ptr() => _,
            po = inout(reg) out.as_mut_ptr() => _,
            km4 = in(reg) k - 4,
            n = inout(reg) n => _,
            a = out(reg) _,
            b = out(reg) _,
            c = out(reg) _,
            options(nostack),
        );
    }
}

/// Two pixels times two channels from widened pixels (see [`super`]): `xw` from
/// [`widen_2`] (`4k` bytes, word-aligned, else `acc` is returned unchanged), `w` two rows of
/// `k` int8 weights, `k % 4 == 0`.
/// One step: 4 weight bytes of each row widened (`SXTB16`), the pixels' pairs loaded as
/// they are (`LDRD`), 8 `SMLAD`: 19 instructions per 16 MACs instead of 25.
#[inline(always)]
pub(crate) fn mac_2x2_wide(k: usize, xw: &[i8], w: &[i8], acc: [i32; 4]) -> [i32; 4] {
    let (Some(xw), Some(w)) = (xw.get(..4 * k), w.get(..2 * k)) else {
        return acc;
    };
    let n = k / 4;
    if n == 0 || !k.is_multiple_of(4) || !(xw.as_ptr() as usize).is_multiple_of(4) {
        return acc;
    }
    let [mut a00, mut a01, mut a10, mut a11] = acc;
    // SAFETY: see the module documentation: `xw` holds `4k` bytes, word-aligned (checked
    // above, as `LDRD` needs), read `[0, 4k)`, 16 per step; `w` holds `2k` bytes, read
    // `[0, k)` and `[k, 2k)`.
    unsafe {
        asm!(
            "2:",
            "ldr {p1}, [{pw}, {k}]",
            "sxtb16 {p0}, {p1}",
            "sxtb16 {p1}, {p1}, ror #8",
            "ldrd {q0}, {q1}, [{pa}, #8]",
            "smlad {a11}, {q0}, {p0}, {a11}",
            "smlad {a11}, {q1}, {p1}, {a11}",
            "ldrd {q0}, {q1}, [{pa}], #16",
            "smlad {a01}, {q0}, {p0}, {a01}",
            "smlad {a01}, {q1}, {p1}, {a01}",
            "ldr {p1}, [{pw}], #4",
            "sxtb16 {p0}, {p1}",
            "sxtb16 {p1}, {p1}, ror #8",
            "smlad {a00}, {q0}, {p0}, {a00}",
            "smlad {a00}, {q1}, {p1}, {a00}",
            "ldrd {q0}, {q1}, [{pa}, #-8]",
            "smlad {a10}, {q0}, {p0}, {a10}",
            "smlad {a10}, {q1}, {p1}, {a10}",
            "subs {n}, {n}, #1",
            "bne 2b",
            pa = inout(reg) xw.as_ptr() => _,
            pw = inout(reg) w.as_ptr() => _,
            k = in(reg) k,
            n = inout(reg) n => _,
            p0 = out(reg) _,
            p1 = out(reg) _,
            q0 = out(reg) _,
            q1 = out(reg) _,
            a00 = inout(reg) a00,
            a01 = inout(reg) a01,
            a10 = inout(reg) a10,
            a11 = inout(reg) a11,
            options(nostack, readonly),
        );
    }
    [a00, a01, a10, a11]
}

/// One pixel times two channels.
#[inline(always)]
pub(crate) fn mac_1x2(k: usize, x: &[i8], w: &[i8], acc: [i32; 2]) -> [i32; 2] {
    let (Some(x), Some(w)) = (x.get(..k), w.get(..2 * k)) else {
        return acc;
    };
    let [mut a0, mut a1] = acc;
    let n = k / 4;
    if n > 0 {
        // SAFETY: see the module documentation: `x` holds `k` bytes, `w` `2k`; the block
        // reads `[0, 4n)` of `x` and `[0, 4n)`, `[k, k + 4n)` of `w`.
        unsafe {
            asm!(
                "2:",
                "ldr {q1}, [{pa}], #4",
                "sxtb16 {q0}, {q1}",
                "sxtb16 {q1}, {q1}, ror #8",
                "ldr {p1}, [{pw}, {k}]",
                "sxtb16 {p0}, {p1}",
                "sxtb16 {p1}, {p1}, ror #8",
                "smlad {a1}, {q0}, {p0}, {a1}",
                "smlad {a1}, {q1}, {p1}, {a1}",
                "ldr {p1}, [{pw}], #4",
                "sxtb16 {p0}, {p1}",
                "sxtb16 {p1}, {p1}, ror #8",
                "smlad {a0}, {q0}, {p0}, {a0}",
                "smlad {a0}, {q1}, {p1}, {a0}",
                "subs {n}, {n}, #1",
                "bne 2b",
                pa = inout(reg) x.as_ptr() => _,
                pw = inout(reg) w.as_ptr() => _,
                k = in(reg) k,
                n = inout(reg) n => _,
                p0 = out(reg) _,
                p1 = out(reg) _,
                q0 = out(reg) _,
                q1 = out(reg) _,
                a0 = inout(reg) a0,
                a1 = inout(reg) a1,
                options(nostack, readonly),
            );
        }
    }
    let done = 4 * n;
    if let (true, Some((w0, w1))) = (done < k, w.split_at_checked(k)) {
        let at = |s| from(s, done);
        a0 = a0.wrapping_add(dot(at(x), at(w0)));
        a1 = a1.wrapping_add(dot(at(x), at(w1)));
    }
    [a0, a1]
}

/// Two pixels times one channel.
#[inline(always)]
pub(crate) fn mac_2x1(k: usize, x: &[i8], w: &[i8], acc: [i32; 2]) -> [i32; 2] {
    let (Some(x), Some(w)) = (x.get(..2 * k), w.get(..k)) else {
        return acc;
    };
    let [mut a0, mut a1] = acc;
    let n = k / 4;
    if n > 0 {
        // SAFETY: see the module documentation: `x` holds `2k` bytes, `w` `k`; the block
        // reads `[0, 4n)`, `[k, k + 4n)` of `x` and `[0, 4n)` of `w`.
        unsafe {
            asm!(
                "2:",
                "ldr {p1}, [{pw}], #4",
                "sxtb16 {p0}, {p1}",
                "sxtb16 {p1}, {p1}, ror #8",
                "ldr {q1}, [{pa}, {k}]",
                "sxtb16 {q0}, {q1}",
                "sxtb16 {q1}, {q1}, ror #8",
                "smlad {a1}, {q0}, {p0}, {a1}",
                "smlad {a1}, {q1}, {p1}, {a1}",
                "ldr {q1}, [{pa}], #4",
                "sxtb16 {q0}, {q1}",
                "sxtb16 {q1}, {q1}, ror #8",
                "smlad {a0}, {q0}, {p0}, {a0}",
                "smlad {a0}, {q1}, {p1}, {a0}",
                "subs {n}, {n}, #1",
                "bne 2b",
                pa = inout(reg) x.as_ptr() => _,
                pw = inout(reg) w.as_ptr() => _,
                k = in(reg) k,
                n = inout(reg) n => _,
                p0 = out(reg) _,
                p1 = out(reg) _,
                q0 = out(reg) _,
                q1 = out(reg) _,
                a0 = inout(reg) a0,
                a1 = inout(reg) a1,
                options(nostack, readonly),
            );
        }
    }
    let done = 4 * n;
    if let (true, Some((x0, x1))) = (done < k, x.split_at_checked(k)) {
        let at = |s| from(s, done);
        a0 = a0.wrapping_add(dot(at(x0), at(w)));
        a1 = a1.wrapping_add(dot(at(x1), at(w)));
    }
    [a0, a1]
}

/// One pixel times one channel.
#[inline(always)]
pub(crate) fn mac_1x1(k: usize, x: &[i8], w: &[i8], acc: i32) -> i32 {
    let (Some(x), Some(w)) = (x.get(..k), w.get(..k)) else {
        return acc;
    };
    let mut a = acc;
    let n = k / 4;
    if n > 0 {
        // SAFETY: see the module documentation: `x` and `w` hold `k` bytes; the block reads
        // `[0, 4n)` of each.
        unsafe {
            asm!(
                "2:",
                "ldr {p1}, [{pw}], #4",
                "sxtb16 {p0}, {p1}",
                "sxtb16 {p1}, {p1}, ror #8",
                "ldr {q1}, [{pa}], #4",
                "sxtb16 {q0}, {q1}",
                "sxtb16 {q1}, {q1}, ror #8",
                "smlad {a}, {q0}, {p0}, {a}",
                "smlad {a}, {q1}, {p1}, {a}",
                "subs {n}, {n}, #1",
                "bne 2b",
                pa = inout(reg) x.as_ptr() => _,
                pw = inout(reg) w.as_ptr() => _,
                n = inout(reg) n => _,
                p0 = out(reg) _,
                p1 = out(reg) _,
                q0 = out(reg) _,
                q1 = out(reg) _,
                a = inout(reg) a,
                options(nostack, readonly),
            );
        }
    }
    let done = 4 * n;
    if let (Some(x), Some(w)) = (x.get(done..), w.get(done..)) {
        a = a.wrapping_add(dot(x, w));
    }
    a
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
    let groups = bias.len() / 4;
    let depth = 4 * groups;
    if t == 0 || t > super::MAX_TAPS || w.len() < depth * t || taps.iter().any(|x| x.len() < depth)
    {
        return;
    }
    // The taps' data pointers. Left uninitialised beyond the `t` written here (zeroing all
    // `MAX_TAPS` per output pixel cost more than the taps of a small layer); the block reads
    // only the first `t`.
    let mut ptrs = core::mem::MaybeUninit::<[*const i8; super::MAX_TAPS]>::uninit();
    let base = ptrs.as_mut_ptr().cast::<*const i8>();
    for (i, x) in taps.iter().enumerate() {
        // SAFETY: `i < t <= MAX_TAPS`, so `base + i` is inside `ptrs`; `write` does not read
        // the uninitialised slot.
        unsafe { base.add(i).write(x.as_ptr()) };
    }
    let mut pw = w.as_ptr();
    // Three taps per iteration when their count allows (a 3x3 window: no loop overhead on
    // two of three taps).
    let by_three = t.is_multiple_of(3);
    for (g, b) in bias.chunks_exact(4).enumerate() {
        let [mut a0, mut a1, mut a2, mut a3] = [b[0], b[1], b[2], b[3]];
        // One tap: its pointer, 4 input bytes at channel `4g`, 4 weights; widened, and the
        // four products added to their channels' accumulators.
        macro_rules! tap {
            () => {
                concat!(
                    "ldr {p1}, [{pp}], #4\n",
                    "ldr {q1}, [{p1}, {c}]\n",
                    "ldr {p1}, [{pw}], #4\n",
                    "sxtb16 {q0}, {q1}\n",
                    "sxtb16 {q1}, {q1}, ror #8\n",
                    "sxtb16 {p0}, {p1}\n",
                    "sxtb16 {p1}, {p1}, ror #8\n",
                    "smlabb {a0}, {q0}, {p0}, {a0}\n",
                    "smlatt {a2}, {q0}, {p0}, {a2}\n",
                    "smlabb {a1}, {q1}, {p1}, {a1}\n",
                    "smlatt {a3}, {q1}, {p1}, {a3}\n",
                )
            };
        }
        // SAFETY: see the module documentation: `ptrs[..t]` are initialised (above) and
        // point to slices of at least `depth` bytes, of which the block reads `[4g, 4g + 4)`;
        // `pw` walks `4t` bytes per group, `depth * t <= w.len()` in all; the loop runs
        // `t / 3` times of three taps or `t` times of one (`t > 0`).
        unsafe {
            if by_three {
                asm!(
                    "2:",
                    tap!(),
                    tap!(),
                    tap!(),
                    "subs {n}, {n}, #1",
                    "bne 2b",
                    pp = inout(reg) base.cast_const() => _,
                    pw = inout(reg) pw,
                    c = in(reg) 4 * g,
                    n = inout(reg) t / 3 => _,
                    p0 = out(reg) _,
                    p1 = out(reg) _,
                    q0 = out(reg) _,
                    q1 = out(reg) _,
                    a0 = inout(reg) a0,
                    a1 = inout(reg) a1,
                    a2 = inout(reg) a2,
                    a3 = inout(reg) a3,
                    options(nostack, readonly),
                );
            } else {
                asm!(
                    "2:",
                    tap!(),
                    "subs {n}, {n}, #1",
                    "bne 2b",
                    pp = inout(reg) base.cast_const() => _,
                    pw = inout(reg) pw,
                    c = in(reg) 4 * g,
                    n = inout(reg) t => _,
                    p0 = out(reg) _,
                    p1 = out(reg) _,
                    q0 = out(reg) _,
                    q1 = out(reg) _,
                    a0 = inout(reg) a0,
                    a1 = inout(reg) a1,
                    a2 = inout(reg) a2,
                    a3 = inout(reg) a3,
                    options(nostack, readonly),
                );
            }
        }
        store(g, [a0, a1, a2, a3]);
    }
}

/// `s[at..]`, empty if `at` is past the end (no panic path).
#[inline(always)]
fn from(s: &[i8], at: usize) -> &[i8] {
    s.get(at..).unwrap_or(&[])
}

/// `SSAT #8`: `x` saturated to `-128..=127`.
#[inline(always)]
pub(crate) fn ssat8(x: i32) -> i32 {
    let r: i32;
    // SAFETY: one register-only instruction (see the module documentation). It may set the
    // sticky Q flag, which no Rust code reads.
    unsafe {
        asm!("ssat {r}, #8, {x}", r = lateout(reg) r, x = in(reg) x,
            options(pure, nomem, nostack));
    }
    r
}

/// `ASR` by a register: `x >> e` for `e` in `0..=31` (without the `e & 31` a Rust shift
/// by a variable costs).
#[inline(always)]
pub(crate) fn asr(x: i32, e: i32) -> i32 {
    let r: i32;
    // SAFETY: one register-only instruction (see the module documentation).
    unsafe {
        asm!("asr {r}, {x}, {e}", r = lateout(reg) r, x = in(reg) x, e = in(reg) e,
            options(pure, nomem, nostack, preserves_flags));
    }
    r
}

/// `SMMULR`: `(a * b + 2^31) >> 32`, the rounded high word of the 64-bit product.
#[inline(always)]
pub(crate) fn smmulr(a: i32, b: i32) -> i32 {
    let r: i32;
    // SAFETY: one register-only instruction (see the module documentation).
    unsafe {
        asm!("smmulr {r}, {a}, {b}", r = lateout(reg) r, a = in(reg) a, b = in(reg) b,
            options(pure, nomem, nostack, preserves_flags));
    }
    r
}
