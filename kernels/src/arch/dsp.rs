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
//! The whole-layer blocks go further: [`two_pixels_pairs`] (every channel pair of two
//! pixels: accumulation, requantization, stores) and [`dw_row`] (a row of depthwise output
//! pixels) keep their loop state in a stack frame of their own, so that the accumulation
//! keeps all twelve usable registers; [`copy_block`] moves 16 bytes per `LDM`/`STM`.
//! Requantization in them is [`rq_shift`]'s five instructions.
//!
//! # Why the blocks are sound
//!
//! * Memory: every pointer is taken from a slice whose length was checked to cover the
//!   contract (`2k` bytes for two rows, `k` for one), and a block reads `4 * (k / 4)` bytes
//!   from the start of each row (row 1 at `+k`), i.e. only bytes inside those slices. The
//!   dot products only read (`readonly`) and never touch the stack (`nostack`); the blocks
//!   that write (outputs, copies) state each byte range they write in their `SAFETY`
//!   comment, and all declare every register they change (pointers and counters as
//!   `inout ... => _`, scratch as `out`, fixed registers where an instruction needs them).
//! * Stack: the blocks with a frame (`two_pixels_pairs`, `dw_row`) are not `nostack`; they
//!   lower `sp` by a multiple of 8 (keeping the AAPCS alignment), use only that frame, and
//!   raise `sp` by the same amount before they end.
//! * Alignment: rows start at any byte; `LDR` accepts unaligned addresses on Armv7-M and
//!   Armv8-M Mainline unless the program sets `CCR.UNALIGN_TRP` (reset value 0; Kiln's
//!   documentation requires it to stay 0, as CMSIS-NN does). `LDRD`, `LDM` and `STM`
//!   (which fault on unaligned addresses) only read `i32` slices, aligned by their type,
//!   the word-aligned widened pixels (checked), or the frame; `copy_block` checks both
//!   pointers.
//! * Flags: the loop counter's `SUBS` changes the flags, which `asm!` assumes unless
//!   `preserves_flags` is given (it is not).
//! * The loops run only when their count is above 0 (a zero count would wrap the counter).
//! * The single-instruction helpers ([`smmulr`], [`ssat8`], [`rq_shift`], [`rq_full`], [`max_s8x4`],
//!   [`min_s8x4`], [`sxtb16`], [`sxtab16`], [`smlad`]) are `pure, nomem`: they only read their register operands.
#![allow(unsafe_code)]

use super::{DwRow, dot};
use core::arch::asm;

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

/// The accumulation loops of [`two_pixels_pairs`] over `n = k / 4` steps, with its pinned
/// registers: `r0` the pixels, `r1` the weights (row 0; row 1 at `+ k`), `r2` = `k`, `r3` the
/// step count, `r4`/`r5`/`r8`/`r9` scratch, `r10`/`r11`/`r12`/`lr` the
/// accumulators of (pixel 0, channel 0), (0, 1), (1, 0), (1, 1). Each form has a prologue,
/// run once per block, that leaves in the frame's `[sp + 4]` and `[sp + 8]` what the loop
/// of every channel pair starts from. Widened: `r0` is [`widen_2`]'s form, 16 bytes per step of
/// 17 instructions, unrolled four times (the loop's two instructions per four steps: 17.5 per
/// step); the prologue stores the passes, `(n + 3) / 4`, and `n % 4`, which chooses the step
/// the first pass enters at (`n % 4` steps in it, or four: two instructions for 0). (Not
/// an `ADR` of the entry: the assembler resolves it for the block's place in its section, and
/// the linker may move the function by 2 modulo 4, which `ADR`'s word-aligned base is not
/// invariant to.) Narrow: `r0` the two int8 rows (`+ k` for pixel 1), both operands widened
/// in the loop (25 per step: 23 and the loop's two; not unrolled, which saves code and, for
/// the short `k` it serves, nothing else).
macro_rules! pairs_prologue_wide {
    () => {
        concat!(
            "lsrs r3, r2, #2\n",
            "and r4, r3, #3\n",
            "adds r3, r3, #3\n",
            "lsrs r3, r3, #2\n",
            "strd r3, r4, [sp, #4]\n",
        )
    };
}
macro_rules! pairs_mac_wide {
    () => {
        concat!(
            // The first pass enters `n % 4` steps before the loop's end (0: all four).
            "ldrd r3, r4, [sp, #4]\n",
            "cbz r4, 2f\n",
            "cmp r4, #2\n",
            "bhi 3f\n",
            "beq 4f\n",
            "b 5f\n",
            "2:\n",
            pairs_wide_step!(),
            "3:\n",
            pairs_wide_step!(),
            "4:\n",
            pairs_wide_step!(),
            "5:\n",
            pairs_wide_step!(),
            "subs r3, r3, #1\n",
            "bne 2b\n",
        )
    };
}
/// One step of [`pairs_mac_wide`]: four values of each pixel and channel, 16 MACs.
macro_rules! pairs_wide_step {
    () => {
        concat!(
            "ldr r5, [r1, r2]\n",
            "sxtb16 r4, r5\n",
            "sxtb16 r5, r5, ror #8\n",
            "ldrd r8, r9, [r0, #8]\n",
            "smlad lr, r8, r4, lr\n",
            "smlad lr, r9, r5, lr\n",
            "ldrd r8, r9, [r0], #16\n",
            "smlad r11, r8, r4, r11\n",
            "smlad r11, r9, r5, r11\n",
            "ldr r5, [r1], #4\n",
            "sxtb16 r4, r5\n",
            "sxtb16 r5, r5, ror #8\n",
            "smlad r10, r8, r4, r10\n",
            "smlad r10, r9, r5, r10\n",
            "ldrd r8, r9, [r0, #-8]\n",
            "smlad r12, r8, r4, r12\n",
            "smlad r12, r9, r5, r12\n",
        )
    };
}
macro_rules! pairs_mac_step {
    () => {
        concat!(
            "ldr r5, [r1]\n",
            "ldr r9, [r0, r2]\n",
            "sxtb16 r4, r5\n",
            "sxtb16 r5, r5, ror #8\n",
            "sxtb16 r8, r9\n",
            "sxtb16 r9, r9, ror #8\n",
            "smlad r12, r8, r4, r12\n",
            "smlad r12, r9, r5, r12\n",
            "ldr r5, [r1, r2]\n",
            "sxtb16 r4, r5\n",
            "sxtb16 r5, r5, ror #8\n",
            "smlad lr, r8, r4, lr\n",
            "smlad lr, r9, r5, lr\n",
            "ldr r9, [r0], #4\n",
            "sxtb16 r8, r9\n",
            "sxtb16 r9, r9, ror #8\n",
            "smlad r11, r8, r4, r11\n",
            "smlad r11, r9, r5, r11\n",
            "ldr r5, [r1], #4\n",
            "sxtb16 r4, r5\n",
            "sxtb16 r5, r5, ror #8\n",
            "smlad r10, r8, r4, r10\n",
            "smlad r10, r9, r5, r10\n",
        )
    };
}
macro_rules! pairs_prologue_narrow {
    () => {
        "lsrs r3, r2, #2\nstr r3, [sp, #4]\n"
    };
}
macro_rules! pairs_mac_narrow {
    () => {
        concat!(
            "ldr r3, [sp, #4]\n",
            "2:\n",
            pairs_mac_step!(),
            "subs r3, r3, #1\n",
            "bne 2b\n"
        )
    };
}
/// `RQ(a, m, e)`: [`rq_shift`] of accumulator register `a` in place, the offset in `r3`.
macro_rules! pairs_rq {
    ($a:literal, $m:literal, $e:literal) => {
        concat!(
            "lsls ",
            $a,
            ", ",
            $a,
            ", #1\n",
            "smmulr ",
            $a,
            ", ",
            $a,
            ", ",
            $m,
            "\n",
            "add ",
            $a,
            ", ",
            $a,
            ", ",
            $a,
            ", asr #31\n",
            "asrs ",
            $a,
            ", ",
            $a,
            ", ",
            $e,
            "\n",
            "adc ",
            $a,
            ", ",
            $a,
            ", r3\n",
        )
    };
}
/// The whole block of [`two_pixels_pairs`]: `$prologue` and `$mac` the accumulation loop's
/// (see [`pairs_mac_wide`]), `$clamp` the clamp of the four requantized values in `r10`,
/// `r11`, `r12`, `lr`.
macro_rules! pairs_block {
    ($prologue:expr, $mac:expr, $clamp:expr) => {
        concat!(
            // Frame: [sp] pixels, [sp+4] and [sp+8] the accumulation loop's (the
            // prologue's), [sp+12] bias, [sp+16] multipliers, [sp+20] shifts, [sp+24]
            // out0, [sp+28] out1, [sp+32] pairs (then the end of out1's), [sp+36] offset,
            // [sp+40] min, [sp+44] max (r1, the weights, and r2, k, stay in their
            // registers).
            "push {{r0-r5, r8-r12, lr}}\n",
            $prologue,
            // [sp+32]: the end of out1's pairs (`out1 + 2 * pairs`), which ends the loop.
            "ldr r0, [sp, #28]\n",
            "ldr r3, [sp, #32]\n",
            "add r0, r0, r3, lsl #1\n",
            "str r0, [sp, #32]\n",
            "1:\n",
            "ldr r3, [sp, #12]\n",
            "ldrd r10, r11, [r3], #8\n",
            "str r3, [sp, #12]\n",
            "mov r12, r10\n",
            "mov lr, r11\n",
            "ldr r0, [sp]\n",
            $mac,
            // Past row 1 of this pair (read at `+ k`).
            "add r1, r1, r2\n",
            "ldrd r0, r3, [sp, #16]\n",
            "ldrd r4, r5, [r0], #8\n",
            "ldrd r8, r9, [r3], #8\n",
            "strd r0, r3, [sp, #16]\n",
            "ldr r3, [sp, #36]\n",
            pairs_rq!("r10", "r4", "r8"),
            pairs_rq!("r11", "r5", "r9"),
            pairs_rq!("r12", "r4", "r8"),
            pairs_rq!("lr", "r5", "r9"),
            $clamp,
            "ldrd r0, r3, [sp, #24]\n",
            "strb r10, [r0], #1\n",
            "strb r11, [r0], #1\n",
            "strb r12, [r3], #1\n",
            "strb lr, [r3], #1\n",
            "strd r0, r3, [sp, #24]\n",
            "ldr r0, [sp, #32]\n",
            "cmp r3, r0\n",
            "bne 1b\n",
            "add sp, sp, #48\n",
        )
    };
}
macro_rules! pairs_ssat {
    () => {
        "ssat r10, #8, r10\nssat r11, #8, r11\nssat r12, #8, r12\nssat lr, #8, lr\n"
    };
}
macro_rules! pairs_clamp1 {
    ($a:literal) => {
        concat!(
            "cmp ", $a, ", r0\n", "it lt\n", "movlt ", $a, ", r0\n", "cmp ", $a, ", r3\n",
            "it gt\n", "movgt ", $a, ", r3\n",
        )
    };
}
macro_rules! pairs_clamp {
    () => {
        concat!(
            "ldrd r0, r3, [sp, #40]\n",
            pairs_clamp1!("r10"),
            pairs_clamp1!("r11"),
            pairs_clamp1!("r12"),
            pairs_clamp1!("lr"),
        )
    };
}

/// Two pixels times every pair of output channels, requantized (see `gemm::requantize`;
/// `F`: full-range clamp) and stored: `out0[o] = rq(x_0 . w_o + bias[o])`, `out1[o] =
/// rq(x_1 . w_o + bias[o])` for `o < 2 * (n / 2)`, `n = bias.len()`, where `w_o =
/// w[o * k..][..k]` and `x_0`, `x_1` are the pixels' `k` values: `x[..k]`, `x[k..2k]`, or
/// their widened form `xw` ([`widen_2`]) if given. One `asm!` block for all the pairs: the
/// loop state lives in a stack frame of its own (12 words), so the accumulation loop of
/// the widened or the plain int8 pixels keeps its twelve registers and the requantization (five
/// instructions per value, [`rq_shift`]) and the stores need no other code. Returns the
/// channels done: 0 (nothing written) unless `k % 4 == 0`, `k > 0`, `n >= 2` and every
/// slice covers its part (`xw` word-aligned, for `LDRD`).
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
    let pairs = bias.len() / 2;
    let n = 2 * pairs;
    if k == 0
        || !k.is_multiple_of(4)
        || pairs == 0
        || w.len() / k < n
        || m.len() < n
        || e.len() < n
        || out0.len() < n
        || out1.len() < n
    {
        return 0;
    }
    let px = match xw {
        Some(xw) if xw.len() >= 4 * k && (xw.as_ptr() as usize).is_multiple_of(4) => xw.as_ptr(),
        Some(_) => return 0,
        None if x.len() >= 2 * k => x.as_ptr(),
        None => return 0,
    };
    macro_rules! run {
        ($block:expr) => {
            // SAFETY: see the module documentation. Reads: the pixels `[px, px + 4k)`
            // (widened) or `[px, px + 2k)`, each pair's accumulation reading them all from
            // the start; the weights `w[..n * k]` (pair `p` reads rows `2p` and `2p + 1`,
            // `[2pk, 2pk + 2k)`); `bias`, `m`, `e` 8 bytes per pair (`LDRD` needs 4-byte
            // alignment, which `&[i32]` has; `xw`'s was checked). Writes: two bytes per
            // pair to `out0` and `out1`, `n` bytes each in all. The frame pushed at the start
            // (12 registers, keeping the stack 8-byte aligned) is popped by `add sp` at
            // the end; every register is declared clobbered; the loops run `pairs > 0` and
            // `k / 4 > 0` times.
            unsafe {
                asm!(
                    $block,
                    inout("r0") px => _,
                    inout("r1") w.as_ptr() => _,
                    inout("r2") k => _,
                    inout("r3") bias.as_ptr() => _,
                    inout("r4") m.as_ptr() => _,
                    inout("r5") e.as_ptr() => _,
                    inout("r8") out0.as_mut_ptr() => _,
                    inout("r9") out1.as_mut_ptr() => _,
                    inout("r10") pairs => _,
                    inout("r11") q.offset => _,
                    inout("r12") q.min => _,
                    inout("lr") q.max => _,
                );
            }
        };
    }
    match (xw.is_some(), F) {
        (true, true) => run!(pairs_block!(
            pairs_prologue_wide!(),
            pairs_mac_wide!(),
            pairs_ssat!()
        )),
        (true, false) => run!(pairs_block!(
            pairs_prologue_wide!(),
            pairs_mac_wide!(),
            pairs_clamp!()
        )),
        (false, true) => run!(pairs_block!(
            pairs_prologue_narrow!(),
            pairs_mac_narrow!(),
            pairs_ssat!()
        )),
        (false, false) => run!(pairs_block!(
            pairs_prologue_narrow!(),
            pairs_mac_narrow!(),
            pairs_clamp!()
        )),
    }
    n
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
    w: &[i32],
    bias: &[i32],
    mut store: impl FnMut(usize, [i32; 4]),
) {
    let t = taps.len();
    let groups = bias.len() / 4;
    let depth = 4 * groups;
    if t == 0
        || t > super::MAX_TAPS
        || w.len() < depth / 2 * t
        || taps.iter().any(|x| x.len() < depth)
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
                    "ldrd {p0}, {p1}, [{pw}], #8\n",
                    "sxtb16 {q0}, {q1}\n",
                    "sxtb16 {q1}, {q1}, ror #8\n",
                    "smlabb {a0}, {q0}, {p0}, {a0}\n",
                    "smlatb {a2}, {q0}, {p1}, {a2}\n",
                    "smlabt {a1}, {q1}, {p0}, {a1}\n",
                    "smlatt {a3}, {q1}, {p1}, {a3}\n",
                )
            };
        }
        // SAFETY: see the module documentation: `ptrs[..t]` are initialised (above) and
        // point to slices of at least `depth` bytes, of which the block reads `[4g, 4g + 4)`;
        // `pw` walks `2t` words per group (`LDRD`: `&[i32]` is word-aligned), `depth / 2 * t
        // <= w.len()` in all; the loop runs
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

/// One tap of the depthwise row kernels: the four input bytes at `$at`, widened by `SXTB16`
/// (`r4` = channels 0 and 2, `r5` = 1 and 3), and the next four weights, int16 pairs (`r8` =
/// channels 0 and 1, `r9` = 2 and 3; `r11` post-incremented by `LDRD`), multiplied into the
/// accumulators `r0`-`r3` (channels 0-3) by the 16x16 multiply-accumulate that picks each
/// pair's halves (`SMLABB`, `SMLATB`, `SMLABT`, `SMLATT`): eight instructions per tap.
macro_rules! dw_tap {
    ($at:literal) => {
        concat!(
            "ldr r5, ",
            $at,
            "\n",
            "ldrd r8, r9, [r11], #8\n",
            "sxtb16 r4, r5\n",
            "sxtb16 r5, r5, ror #8\n",
            "smlabb r0, r4, r8, r0\n",
            "smlatb r2, r4, r9, r2\n",
            "smlabt r1, r5, r8, r1\n",
            "smlatt r3, r5, r9, r3\n",
        )
    };
}
/// The requantization of accumulator `$a` with the next multiplier (`r4` post-incremented)
/// and right shift (`r5`), the output offset in `r10`.
macro_rules! dw_rq {
    ($a:literal) => {
        concat!(
            "ldr r8, [r4], #4\n",
            "ldr r9, [r5], #4\n",
            "lsls ",
            $a,
            ", ",
            $a,
            ", #1\n",
            "smmulr ",
            $a,
            ", ",
            $a,
            ", r8\n",
            "add ",
            $a,
            ", ",
            $a,
            ", ",
            $a,
            ", asr #31\n",
            "asrs ",
            $a,
            ", ",
            $a,
            ", r9\n",
            "adc ",
            $a,
            ", ",
            $a,
            ", r10\n",
        )
    };
}
macro_rules! dw_clamp1 {
    ($a:literal) => {
        concat!(
            "cmp ", $a, ", r4\n", "it lt\n", "movlt ", $a, ", r4\n", "cmp ", $a, ", r5\n",
            "it gt\n", "movgt ", $a, ", r5\n",
        )
    };
}
macro_rules! dw_clamp {
    (true) => {
        "ssat r0, #8, r0\nssat r1, #8, r1\nssat r2, #8, r2\nssat r3, #8, r3\n"
    };
    (false) => {
        concat!(
            "ldrd r4, r5, [sp, #40]\n",
            dw_clamp1!("r0"),
            dw_clamp1!("r1"),
            dw_clamp1!("r2"),
            dw_clamp1!("r3"),
        )
    };
}
/// The block of [`dw_row`]: `$window` accumulates one group's window (the row pointer in
/// `r10`, the column step in `r12`, the row step in `lr`, the weights in `r11`), `$clamp`
/// is `true` for a full-range clamp.
macro_rules! dw_row_block {
    ($window:expr, $clamp:tt) => {
        concat!(
            // Frame: [sp] window of the pixel, [sp+4] pixel step, [sp+8] pixels left,
            // [sp+12] weights, [sp+16] bias, [sp+20] multipliers, [sp+24] shifts, [sp+28]
            // output, [sp+32] groups, [sp+36] offset, [sp+40] min, [sp+44] max, [sp+48]
            // the group's window, [sp+52] bias, [sp+56] multipliers, [sp+60] shifts (of
            // the group), [sp+64] the end of the pixel's output, [sp+68] `r12` as given
            // (the `kh x 1` window's height).
            "sub sp, sp, #72\n",
            "str r12, [sp, #68]\n",
            "str r0, [sp]\n",
            "strd r1, r2, [sp, #4]\n",
            "strd r3, r4, [sp, #12]\n",
            "strd r5, r8, [sp, #20]\n",
            "strd r9, r10, [sp, #28]\n",
            "ldm r11, {{r0, r1, r2}}\n",
            "str r0, [sp, #36]\n",
            "strd r1, r2, [sp, #40]\n",
            "1:\n",
            "ldr r0, [sp]\n",
            "str r0, [sp, #48]\n",
            "ldrd r4, r5, [sp, #16]\n",
            "strd r4, r5, [sp, #52]\n",
            "ldr r4, [sp, #24]\n",
            "str r4, [sp, #60]\n",
            "ldr r11, [sp, #12]\n",
            "ldr r4, [sp, #28]\n",
            "ldr r5, [sp, #32]\n",
            "add r4, r4, r5, lsl #2\n",
            "str r4, [sp, #64]\n",
            "2:\n",
            // The group's window and bias pointers, both advanced.
            "ldrd r10, r4, [sp, #48]\n",
            "ldm r4!, {{r0, r1, r2, r3}}\n",
            "adds r5, r10, #4\n",
            "strd r5, r4, [sp, #48]\n",
            $window,
            "ldrd r4, r5, [sp, #56]\n",
            "ldr r10, [sp, #36]\n",
            dw_rq!("r0"),
            dw_rq!("r1"),
            dw_rq!("r2"),
            dw_rq!("r3"),
            "strd r4, r5, [sp, #56]\n",
            dw_clamp!($clamp),
            "ldr r4, [sp, #28]\n",
            "strb r0, [r4], #1\n",
            "strb r1, [r4], #1\n",
            "strb r2, [r4], #1\n",
            "strb r3, [r4], #1\n",
            "str r4, [sp, #28]\n",
            "ldr r5, [sp, #64]\n",
            "cmp r4, r5\n",
            "bne 2b\n",
            "ldrd r4, r5, [sp]\n",
            "add r4, r4, r5\n",
            "str r4, [sp]\n",
            "ldr r4, [sp, #8]\n",
            "subs r4, r4, #1\n",
            "str r4, [sp, #8]\n",
            "bne 1b\n",
            "add sp, sp, #72\n",
        )
    };
}
/// A 3x3 window: three rows of three taps, unrolled (the columns by register offset).
macro_rules! dw_window_3x3 {
    () => {
        concat!(
            dw_tap!("[r10]"),
            dw_tap!("[r10, r12]"),
            dw_tap!("[r10, r12, lsl #1]"),
            "add r10, r10, lr\n",
            dw_tap!("[r10]"),
            dw_tap!("[r10, r12]"),
            dw_tap!("[r10, r12, lsl #1]"),
            "add r10, r10, lr\n",
            dw_tap!("[r10]"),
            dw_tap!("[r10, r12]"),
            dw_tap!("[r10, r12, lsl #1]"),
        )
    };
}
/// A `kh x 1` window: `kh` taps down a column (the count in `r12`, the column step unused).
macro_rules! dw_window_kx1 {
    () => {
        concat!(
            "ldr r12, [sp, #68]\n",
            "3:\n",
            dw_tap!("[r10]"),
            "add r10, r10, lr\n",
            "subs r12, r12, #1\n",
            "bne 3b\n",
        )
    };
}

/// One output row of a depth-multiplier-1 DEPTHWISE_CONV_2D whose windows lie inside `x`
/// (the input itself, or a band of its rows with the padding filled in): output pixel `i`
/// (`out[i * c..][..c]`) from the window at `x[start + i * step..]`: tap `(fy, fx)` of channel
/// `ch` at `start + i * step + fy * row + fx * col + ch`, with the weights of entry
/// `ch / 4 * T + t` of `w` (`T = kh * kw` taps, `t = fy * kw + fx`; two words of int16 pairs
/// per entry, `depthwise_conv_2d::fast::pack_weights`), requantized as `gemm::requantize`
/// (`F`: full-range clamp). One `asm!` block for the row: per pixel and group of four
/// channels the window's taps (unrolled for 3x3; a loop for `kh x 1`, see [`dw_tap`]: eight
/// instructions per four MACs),
/// the four values requantized ([`rq_shift`]'s five instructions each) and stored; the loop
/// state in a stack frame of its own. Returns whether it ran (else nothing is written):
/// every slice must cover the row, `c % 4 == 0`, and the window 3x3 or `kh x 1`.
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
    let groups = c / 4;
    // (`col` at most 2^29: the taps' offsets are formed in 32-bit registers.)
    if !r.fits::<KX1>(x, start, w, bias, m, e, out) || r.col > (1 << 29) {
        return false;
    }
    let params = [q.offset, q.min, q.max];
    macro_rules! run {
        ($block:expr) => {
            // SAFETY: see the module documentation. Reads: pixel `i`'s window taps at
            // `x[start + i * step + fy * row + fx * col..]`, four bytes per group, all below
            // `last <= x.len()` (checked above without overflow; `2 * col` fits the `LSL #1`
            // of the 3x3 form); `w[..c / 2 * taps]` per pixel (`2 * taps` words per group,
            // word-aligned for `LDRD`: `&[i32]`), `bias`,
            // `m`, `e` `c` values per pixel (bias by `LDM`: `&[i32]` is word-aligned), and
            // `params` (3 words). Writes: `c` bytes per pixel to `out`, `pixels * c` in all.
            // The frame (72 bytes, keeping the stack 8-byte aligned) is released by the final
            // `add sp`; every register is declared clobbered; the loops run `pixels > 0`,
            // `groups > 0` and (`kh x 1`) `kh > 0` times.
            unsafe {
                asm!(
                    $block,
                    inout("r0") x.as_ptr().wrapping_add(start) => _,
                    inout("r1") r.step => _,
                    inout("r2") r.pixels => _,
                    inout("r3") w.as_ptr() => _,
                    inout("r4") bias.as_ptr() => _,
                    inout("r5") m.as_ptr() => _,
                    inout("r8") e.as_ptr() => _,
                    inout("r9") out.as_mut_ptr() => _,
                    inout("r10") groups => _,
                    inout("r11") params.as_ptr() => _,
                    // The column step (3x3), or the window height (`kh x 1`: its tap count).
                    inout("r12") if KX1 { r.kh } else { r.col } => _,
                    inout("lr") r.row => _,
                );
            }
        };
    }
    match (KX1, F) {
        (false, true) => run!(dw_row_block!(dw_window_3x3!(), true)),
        (false, false) => run!(dw_row_block!(dw_window_3x3!(), false)),
        (true, true) => run!(dw_row_block!(dw_window_kx1!(), true)),
        (true, false) => run!(dw_row_block!(dw_window_kx1!(), false)),
    }
    true
}

/// `dst.copy_from_slice(src)` for the runs of the data-movement kernels (slices, splits,
/// concatenations): where both start word-aligned, 16 bytes per `LDM`/`STM` pair and the
/// rest by words and bytes, in one `asm!` block (about a quarter of an instruction per byte
/// instead of `memcpy`'s one per word); otherwise `copy_from_slice`. Nothing is copied
/// unless the lengths are equal. Not inlined: one copy per element type serves every call
/// (code size; a call costs a few instructions per run).
#[inline(never)]
pub(crate) fn copy_block<T: Copy>(dst: &mut [T], src: &[T]) {
    if dst.len() != src.len() {
        return;
    }
    let bytes = core::mem::size_of_val(src);
    let (d, s) = (dst.as_mut_ptr().cast::<u8>(), src.as_ptr().cast::<u8>());
    if bytes < 16 || !(d as usize).is_multiple_of(4) || !(s as usize).is_multiple_of(4) {
        dst.copy_from_slice(src);
        return;
    }
    // SAFETY: see the module documentation: `src` and `dst` hold `bytes` bytes each (equal
    // lengths of one type), both word-aligned (checked above, as `LDM`/`STM` need); the
    // block reads `[s, s + bytes)` and writes `[d, d + bytes)`: `bytes / 16` blocks of 16,
    // then `bytes % 16 / 4` words, then `bytes % 4` bytes (`bytes >= 16`, so the first loop
    // runs at least once). `dst` is a unique borrow, so the ranges do not overlap. Copying
    // the bytes of `T: Copy` is what `copy_from_slice` does.
    unsafe {
        asm!(
            "2:",
            "ldm {s}!, {{r2, r3, r4, r5}}",
            "stm {d}!, {{r2, r3, r4, r5}}",
            "subs {n}, {n}, #1",
            "bne 2b",
            "ands {r}, {r}, #15",
            "beq 4f",
            "3:",
            "cmp {r}, #4",
            "blo 5f",
            "ldr r2, [{s}], #4",
            "str r2, [{d}], #4",
            "subs {r}, {r}, #4",
            "b 3b",
            "5:",
            "cmp {r}, #0",
            "beq 4f",
            "ldrb r2, [{s}], #1",
            "strb r2, [{d}], #1",
            "subs {r}, {r}, #1",
            "b 5b",
            "4:",
            s = inout(reg) s => _,
            d = inout(reg) d => _,
            n = inout(reg) bytes / 16 => _,
            r = inout(reg) bytes => _,
            out("r2") _,
            out("r3") _,
            out("r4") _,
            out("r5") _,
            options(nostack),
        );
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

/// The requantization of [`crate::gemm`] without its clamp: `offset + ((y + 2^(e-1) -
/// [y < 0]) >> e)` with `y = SMMULR(2 * acc, m)`, `e` in 1..=31, in five instructions: `ASRS` by
/// `e` leaves bit `e - 1` of its operand in the carry, and adding that bit to the floor of
/// the shift is the same as adding `2^(e-1)` before it (`floor((t + 2^(e-1)) / 2^e)` equals
/// `floor(t / 2^e) + bit_(e-1)(t)`), so `ADC` adds the rounding bit and the offset at once.
#[inline(always)]
pub(crate) fn rq_shift(acc: i32, m: i32, e: i32, offset: i32) -> i32 {
    let r: i32;
    // SAFETY: register-only instructions (see the module documentation); `ASRS` and `ADC`
    // write and read the flags, which the block does not declare preserved.
    unsafe {
        asm!(
            "lsls {r}, {a}, #1",
            "smmulr {r}, {r}, {m}",
            "add {r}, {r}, {r}, asr #31",
            "asrs {r}, {r}, {e}",
            "adc {r}, {r}, {o}",
            r = out(reg) r,
            a = in(reg) acc,
            m = in(reg) m,
            e = in(reg) e,
            o = in(reg) offset,
            options(pure, nomem, nostack),
        );
    }
    r
}

/// `MultiplyByQuantizedMultiplier(acc, m, -e) + offset` (TFLM's double rounding, the sum
/// wrapping) for any `acc`, `m != i32::MIN`, `e` in 1..=31, in six instructions, where
/// [`rq_shift`] needs `|acc| <= 2^30` (a bias can take a sum past that). The doubling high
/// multiply is `floor((acc * m + 2^30) / 2^31)` (equal to gemmlowp's for every product but
/// `MIN * MIN`): `SMULL`, then `LSRS #31` leaves bit 31 of the low word in the register and
/// bit 30 (the rounding bit) in the carry, and `ADC` with the high word shifted left by one
/// adds both. The rounding right shift is [`rq_shift`]'s.
#[inline(always)]
pub(crate) fn rq_full(acc: i32, m: i32, e: i32, offset: i32) -> i32 {
    let r: i32;
    // SAFETY: register-only instructions (see the module documentation); `LSRS`, `ASRS` and
    // the `ADC`s write and read the flags, which the block does not declare preserved. `lo`
    // and `hi` are written before `e` and `offset` are read, so they are not `lateout`.
    unsafe {
        asm!(
            "smull {lo}, {hi}, {a}, {m}",
            "lsrs {lo}, {lo}, #31",
            "adc {lo}, {lo}, {hi}, lsl #1",
            "add {lo}, {lo}, {lo}, asr #31",
            "asrs {lo}, {lo}, {e}",
            "adc {lo}, {lo}, {o}",
            lo = out(reg) r,
            hi = out(reg) _,
            a = in(reg) acc,
            m = in(reg) m,
            e = in(reg) e,
            o = in(reg) offset,
            options(pure, nomem, nostack),
        );
    }
    r
}

/// `x[0] * w[0] + x[1] * w[1] + ...` summed from `+0.0` in increasing order over the
/// shorter length, each product rounded before its addition: `VMLA.F32` is the chained (not
/// fused) multiply-accumulate, the same two roundings as Rust's `acc += x * w` (and the same
/// operand order of the addition, which decides which NaN propagates). Four values of each
/// row per `VLDMIA` and four `VMLA`s (two instructions per product where LLVM gives five:
/// `VLDR`, `VLDR`, `VMUL`, `VADD` and address arithmetic), then the last `n % 4` one at a
/// time, all in one block (a float FULLY_CONNECTED row costs about ten instructions beside
/// its products). Hard-float targets only: the block uses `s0`-`s8` (declared clobbered),
/// the sum passes in and out through a core register (stable Rust's `sreg` operands need
/// the `vfp2` feature, which single-precision cores lack).
#[cfg(target_abi = "eabihf")]
#[inline(always)]
pub(crate) fn dot_f32(x: &[f32], w: &[f32]) -> f32 {
    let n = x.len().min(w.len());
    let a: u32;
    // SAFETY: the first loop runs `n / 4` times and reads 16 bytes of each row per step, the
    // second `n % 4` times and 4 bytes per step, each only if its count is above 0: `4n`
    // bytes from the start of each slice, both at least `n` values long. `VLDMIA` needs
    // word alignment, which `f32` slices have. Pointers and counters are `inout ... => _`,
    // `s0`-`s8` declared clobbered; `CMP` and `SUBS` set the flags.
    unsafe {
        asm!(
            "vmov s8, {a}",
            "cmp {n4}, #0",
            "beq 3f",
            "2:",
            "vldmia {x}!, {{s0-s3}}",
            "vldmia {w}!, {{s4-s7}}",
            "vmla.f32 s8, s0, s4",
            "vmla.f32 s8, s1, s5",
            "vmla.f32 s8, s2, s6",
            "vmla.f32 s8, s3, s7",
            "subs {n4}, {n4}, #1",
            "bne 2b",
            "3:",
            "cmp {n1}, #0",
            "beq 5f",
            "4:",
            "vldmia {x}!, {{s0}}",
            "vldmia {w}!, {{s4}}",
            "vmla.f32 s8, s0, s4",
            "subs {n1}, {n1}, #1",
            "bne 4b",
            "5:",
            "vmov {a}, s8",
            x = inout(reg) x.as_ptr() => _,
            w = inout(reg) w.as_ptr() => _,
            n4 = inout(reg) n / 4 => _,
            n1 = inout(reg) n % 4 => _,
            a = inout(reg) 0u32 => a,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s4") _, out("s5") _, out("s6") _, out("s7") _, out("s8") _,
            options(nostack, readonly),
        );
    }
    f32::from_bits(a)
}

/// Four outputs of a float FULLY_CONNECTED: `out[i] = clamp(dot_f32(x[..k], w[ik..(i +
/// 1)k]) + bias[i])` with `clamp(v) = min(max(v, lo), hi)` in TFLM's order (`v < lo ? lo :
/// v`, then `hi < v ? hi : v`: NaN passes), `[lo, hi] = range`. Each sum in its own
/// register in [`dot_f32`]'s order; `x` loaded once for the four rows, four values of each
/// row per `VLDMIA` (23 instructions per 16 products); the bias, the clamp (`VCMP`, `VMRS`,
/// a conditional `VMOV`, as LLVM compiles the comparisons) and the store in the same block,
/// so a small layer pays one block's set-up per four outputs. Nothing is written if `x` is
/// shorter than `k` or `w` than `4k` (never in Kiln's calls).
#[cfg(target_abi = "eabihf")]
#[inline(always)]
pub(crate) fn dense_f32_x4(
    k: usize,
    x: &[f32],
    w: &[f32],
    bias: &[f32; 4],
    range: &[f32; 2],
    out: &mut [f32; 4],
) {
    if x.len() < k || w.len() / 4 < k {
        return;
    }
    // SAFETY: as [`dot_f32`]: each loop runs only if its count is above 0; the first reads
    // 16 bytes of `x` and of each row per step (`k / 4` steps), the second 4 bytes (`k % 4`
    // steps): `4k` bytes from the start of `x` and of each row (row `i` at `w + 4ik` bytes),
    // all inside the slices (checked above). The block also reads the 16 bytes of `bias` and
    // the 8 of `range` and writes the 16 bytes of `out`, and nothing else. `VLDMIA`/`VSTMIA`
    // need word alignment, which `f32` data has. Pointers and counters are `inout ... => _`
    // or `out`; `s0`-`s15` declared clobbered; `CMP`, `SUBS` and `VMRS APSR_nzcv` set the
    // flags.
    unsafe {
        asm!(
            "vldmia {b}, {{s12-s15}}",
            "movs {w3}, #0",
            "vmov s8, {w3}",
            "vmov s9, {w3}",
            "vmov s10, {w3}",
            "vmov s11, {w3}",
            "lsls {k}, {k}, #2",
            "add {w1}, {w0}, {k}",
            "add {w2}, {w1}, {k}",
            "add {w3}, {w2}, {k}",
            "lsrs {b}, {k}, #4",
            "beq 3f",
            "2:",
            "vldmia {x}!, {{s0-s3}}",
            "vldmia {w0}!, {{s4-s7}}",
            "vmla.f32 s8, s0, s4",
            "vmla.f32 s8, s1, s5",
            "vmla.f32 s8, s2, s6",
            "vmla.f32 s8, s3, s7",
            "vldmia {w1}!, {{s4-s7}}",
            "vmla.f32 s9, s0, s4",
            "vmla.f32 s9, s1, s5",
            "vmla.f32 s9, s2, s6",
            "vmla.f32 s9, s3, s7",
            "vldmia {w2}!, {{s4-s7}}",
            "vmla.f32 s10, s0, s4",
            "vmla.f32 s10, s1, s5",
            "vmla.f32 s10, s2, s6",
            "vmla.f32 s10, s3, s7",
            "vldmia {w3}!, {{s4-s7}}",
            "vmla.f32 s11, s0, s4",
            "vmla.f32 s11, s1, s5",
            "vmla.f32 s11, s2, s6",
            "vmla.f32 s11, s3, s7",
            "subs {b}, {b}, #1",
            "bne 2b",
            "3:",
            "ands {k}, {k}, #12",
            "beq 5f",
            "4:",
            "vldmia {x}!, {{s0}}",
            "vldmia {w0}!, {{s4}}",
            "vldmia {w1}!, {{s5}}",
            "vldmia {w2}!, {{s6}}",
            "vldmia {w3}!, {{s7}}",
            "vmla.f32 s8, s0, s4",
            "vmla.f32 s9, s0, s5",
            "vmla.f32 s10, s0, s6",
            "vmla.f32 s11, s0, s7",
            "subs {k}, {k}, #4",
            "bne 4b",
            "5:",
            "vldmia {r}, {{s0-s1}}",
            "vadd.f32 s8, s8, s12",
            "vadd.f32 s9, s9, s13",
            "vadd.f32 s10, s10, s14",
            "vadd.f32 s11, s11, s15",
            "vcmp.f32 s8, s0",
            "vmrs APSR_nzcv, fpscr",
            "it mi",
            "vmovmi.f32 s8, s0",
            "vcmp.f32 s1, s8",
            "vmrs APSR_nzcv, fpscr",
            "it mi",
            "vmovmi.f32 s8, s1",
            "vcmp.f32 s9, s0",
            "vmrs APSR_nzcv, fpscr",
            "it mi",
            "vmovmi.f32 s9, s0",
            "vcmp.f32 s1, s9",
            "vmrs APSR_nzcv, fpscr",
            "it mi",
            "vmovmi.f32 s9, s1",
            "vcmp.f32 s10, s0",
            "vmrs APSR_nzcv, fpscr",
            "it mi",
            "vmovmi.f32 s10, s0",
            "vcmp.f32 s1, s10",
            "vmrs APSR_nzcv, fpscr",
            "it mi",
            "vmovmi.f32 s10, s1",
            "vcmp.f32 s11, s0",
            "vmrs APSR_nzcv, fpscr",
            "it mi",
            "vmovmi.f32 s11, s0",
            "vcmp.f32 s1, s11",
            "vmrs APSR_nzcv, fpscr",
            "it mi",
            "vmovmi.f32 s11, s1",
            "vstmia {o}, {{s8-s11}}",
            x = inout(reg) x.as_ptr() => _,
            w0 = inout(reg) w.as_ptr() => _,
            k = inout(reg) k => _,
            b = inout(reg) bias.as_ptr() => _,
            r = in(reg) range.as_ptr(),
            o = in(reg) out.as_mut_ptr(),
            w1 = out(reg) _,
            w2 = out(reg) _,
            w3 = out(reg) _,
            out("s0") _, out("s1") _, out("s2") _, out("s3") _,
            out("s4") _, out("s5") _, out("s6") _, out("s7") _,
            out("s8") _, out("s9") _, out("s10") _, out("s11") _,
            out("s12") _, out("s13") _, out("s14") _, out("s15") _,
            options(nostack),
        );
    }
}

/// Two int16 halves of a word as a complex value: real part low, imaginary part high.
/// `cmul_q15(f, t)`: the complex product with each part rounded from Q30 to Q15
/// (`(x + 2^14) >> 15` of the 32-bit sum, wrapping like the C's `int` arithmetic), as
/// KISS FFT's fixed-point `C_MUL`. `SMLSD` and `SMLADX` form both parts with the rounding
/// constant in one instruction each; `PKHTB` packs their bits 15..30.
#[inline(always)]
pub(crate) fn cmul_q15(f: u32, t: u32) -> u32 {
    let r: u32;
    // SAFETY: four register-only instructions (see the module documentation); `SMLSD` and
    // `SMLADX` may set the sticky Q flag, so the block does not declare the flags preserved.
    unsafe {
        asm!(
            "smlsd {lo}, {f}, {t}, {k}",
            "smladx {hi}, {f}, {t}, {k}",
            "lsl {hi}, {hi}, #1",
            "pkhtb {r}, {hi}, {lo}, asr #15",
            r = lateout(reg) r, lo = out(reg) _, hi = out(reg) _,
            f = in(reg) f, t = in(reg) t, k = in(reg) 1u32 << 14,
            options(pure, nomem, nostack),
        );
    }
    r
}

/// Both int16 halves of `x` times `q` (0..=32767), each rounded from Q30 to Q15 as
/// [`cmul_q15`]: KISS FFT's `C_FIXDIV` (`q = 32767 / radix`).
#[inline(always)]
pub(crate) fn scale_q15(x: u32, q: u32) -> u32 {
    let r: u32;
    // SAFETY: four register-only instructions, as in `cmul_q15`.
    unsafe {
        asm!(
            "smlabb {lo}, {x}, {q}, {k}",
            "smlatb {hi}, {x}, {q}, {k}",
            "lsl {hi}, {hi}, #1",
            "pkhtb {r}, {hi}, {lo}, asr #15",
            r = lateout(reg) r, lo = out(reg) _, hi = out(reg) _,
            x = in(reg) x, q = in(reg) q, k = in(reg) 1u32 << 14,
            options(pure, nomem, nostack),
        );
    }
    r
}

/// `SSUB16` then `SEL`: each int16 half the larger of `a`'s and `b`'s. The result takes
/// `a`'s register (a running maximum stays in one register, no moves in a loop).
#[inline(always)]
pub(crate) fn max_s16x2(mut a: u32, b: u32) -> u32 {
    // SAFETY: two register-only instructions, as in `max_s8x4`.
    unsafe {
        asm!("ssub16 {t}, {a}, {b}", "sel {a}, {a}, {b}", a = inout(reg) a, b = in(reg) b,
            t = out(reg) _, options(pure, nomem, nostack));
    }
    a
}

/// `SSUB16` then `SEL`: each int16 half the smaller of `a`'s and `b`'s, in `a`'s register
/// (as [`max_s16x2`]).
#[inline(always)]
pub(crate) fn min_s16x2(mut a: u32, b: u32) -> u32 {
    // SAFETY: two register-only instructions, as in `max_s8x4`.
    unsafe {
        asm!("ssub16 {t}, {a}, {b}", "sel {a}, {b}, {a}", a = inout(reg) a, b = in(reg) b,
            t = out(reg) _, options(pure, nomem, nostack));
    }
    a
}

/// One dual 16-bit instruction on int16 halves (each half wrapping): `SADD16` (`a + b`),
/// `SSUB16` (`a - b`), `SASX` (low `a - b.high`, high `a + b.low`: `a + i·b` on complex
/// values), `SSAX` (low `a + b.high`, high `a - b.low`: `a - i·b`), or the halving
/// `SHADD16`/`SHSUB16` (`(a + b) >> 1`, `(a - b) >> 1` of the 17-bit sums: never wrap).
macro_rules! dual16 {
    ($($name:ident => $insn:literal),* $(,)?) => {$(
        #[doc = concat!("`", $insn, "` on the int16 halves of two words.")]
        #[inline(always)]
        pub(crate) fn $name(a: u32, b: u32) -> u32 {
            let r: u32;
            // SAFETY: one register-only instruction (see the module documentation); the
            // non-halving ones set the GE flags, so the block does not declare the flags
            // preserved.
            unsafe {
                asm!(concat!($insn, " {r}, {a}, {b}"), r = lateout(reg) r, a = in(reg) a,
                    b = in(reg) b, options(pure, nomem, nostack));
            }
            r
        }
    )*};
}
dual16!(sadd16 => "sadd16", ssub16 => "ssub16", sasx => "sasx", ssax => "ssax",
    shadd16 => "shadd16", shsub16 => "shsub16");

/// `SMUAD`: `a.low * b.low + a.high * b.high` of the int16 halves, the sum wrapping in 32
/// bits (`2 · 32768²` gives `2^31` as a `u32`).
#[inline(always)]
pub(crate) fn smuad(a: u32, b: u32) -> u32 {
    let r: u32;
    // SAFETY: one register-only instruction (see the module documentation); it may set the
    // sticky Q flag, so the block does not declare the flags preserved.
    unsafe {
        asm!("smuad {r}, {a}, {b}", r = lateout(reg) r, a = in(reg) a, b = in(reg) b,
            options(pure, nomem, nostack));
    }
    r
}

/// `PKHBT`: the low half of `lo` and the high half of `hi` in one word.
#[inline(always)]
pub(crate) fn pack_halves(lo: u32, hi: u32) -> u32 {
    let r: u32;
    // SAFETY: one register-only instruction (see the module documentation) that sets no
    // flags.
    unsafe {
        asm!("pkhbt {r}, {lo}, {hi}", r = lateout(reg) r, lo = in(reg) lo, hi = in(reg) hi,
            options(pure, nomem, nostack, preserves_flags));
    }
    r
}

/// `UMLAL`: `acc + a * b` (32 x 32 -> 64-bit unsigned product), wrapping in 64 bits. One
/// instruction: the compiler, left to itself, splits the sum into `UMULL` + `ADDS` + `ADC`
/// once opt-level 3 unrolls a loop of them.
#[inline(always)]
pub(crate) fn umlal(acc: u64, a: u32, b: u32) -> u64 {
    let (mut lo, mut hi) = (acc as u32, (acc >> 32) as u32);
    // SAFETY: one register-only instruction (see the module documentation) that sets no
    // flags.
    unsafe {
        asm!("umlal {lo}, {hi}, {a}, {b}", lo = inout(reg) lo, hi = inout(reg) hi,
            a = in(reg) a, b = in(reg) b, options(pure, nomem, nostack, preserves_flags));
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// `SXTB16` (`ROR8` false: bytes 0 and 2 of `x`) or `SXTB16 ..., ROR #8` (`ROR8` true:
/// bytes 1 and 3), each sign-extended into an int16 half (low, high). One instruction for
/// the widening of four int8 values in two of these, which plain Rust gives as `SXTB`,
/// `SBFX` and `PKHBT` (three); the single-row dot products of SVDF use them where a
/// `mac_*` block's set-up costs more than its rows are long.
#[inline(always)]
pub(crate) fn sxtb16<const ROR8: bool>(x: u32) -> u32 {
    let r: u32;
    // SAFETY: one register-only instruction (see the module documentation).
    unsafe {
        if ROR8 {
            asm!("sxtb16 {r}, {x}, ror #8", r = lateout(reg) r, x = in(reg) x,
                options(pure, nomem, nostack, preserves_flags));
        } else {
            asm!("sxtb16 {r}, {x}", r = lateout(reg) r, x = in(reg) x,
                options(pure, nomem, nostack, preserves_flags));
        }
    }
    r
}

/// `SXTAB16` (`ROR8`: with `ROR #8`): [`sxtb16`] of `x` added to the int16 halves of `a`,
/// each half wrapping. With `a` two copies of a zero point's negation, the widening and the
/// offset of four int8 values cost two instructions (CMSIS-NN's fully connected form).
#[inline(always)]
pub(crate) fn sxtab16<const ROR8: bool>(a: u32, x: u32) -> u32 {
    let r: u32;
    // SAFETY: one register-only instruction (see the module documentation).
    unsafe {
        if ROR8 {
            asm!("sxtab16 {r}, {a}, {x}, ror #8", r = lateout(reg) r, a = in(reg) a,
                x = in(reg) x, options(pure, nomem, nostack, preserves_flags));
        } else {
            asm!("sxtab16 {r}, {a}, {x}", r = lateout(reg) r, a = in(reg) a, x = in(reg) x,
                options(pure, nomem, nostack, preserves_flags));
        }
    }
    r
}

/// `SMLAD`: `acc + a.low * b.low + a.high * b.high` of the int16 halves, each addition
/// wrapping in 32 bits (as the reference kernels' `int32_t` sums).
#[inline(always)]
pub(crate) fn smlad(a: u32, b: u32, acc: i32) -> i32 {
    let r: i32;
    // SAFETY: one register-only instruction (see the module documentation); it may set the
    // sticky Q flag, so the block does not declare the flags preserved.
    unsafe {
        asm!("smlad {r}, {a}, {b}, {c}", r = lateout(reg) r, a = in(reg) a, b = in(reg) b,
            c = in(reg) acc, options(pure, nomem, nostack));
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

/// `SSUB8` then `SEL`: the four signed bytes of `a` and `b` compared lane by lane, each
/// lane of the result the larger (`max(a_i, b_i)` for `i` in 0..4).
#[inline(always)]
pub(crate) fn max_s8x4(a: u32, b: u32) -> u32 {
    let r: u32;
    // SAFETY: two register-only instructions (see the module documentation). `SSUB8` sets
    // the GE flags (`a_i - b_i >= 0`), which `SEL` reads in the same block; the block does
    // not declare the flags preserved.
    unsafe {
        asm!("ssub8 {r}, {a}, {b}", "sel {r}, {a}, {b}", r = out(reg) r, a = in(reg) a,
            b = in(reg) b, options(pure, nomem, nostack));
    }
    r
}

/// `SSUB8` then `SEL` with the operands of `SEL` swapped: each lane the smaller of `a`'s
/// and `b`'s signed bytes.
#[inline(always)]
pub(crate) fn min_s8x4(a: u32, b: u32) -> u32 {
    let r: u32;
    // SAFETY: as [`max_s8x4`].
    unsafe {
        asm!("ssub8 {r}, {a}, {b}", "sel {r}, {b}, {a}", r = out(reg) r, a = in(reg) a,
            b = in(reg) b, options(pure, nomem, nostack));
    }
    r
}

/// Adds `n` taps of `4 * W` int8 channels (`W` 1 or 2) to the lane sums `acc`: tap `k` is
/// `x[at + k * stride..][..4 * W]`. Each word of four channels goes in with one `LDR` and
/// two `SXTAB16` (channels 0 and 2 into `acc[2k]`, 1 and 3 into `acc[2k + 1]`, each a
/// signed 16-bit lane added modulo 2^16; [`lane_sums_s8`] reads them). The caller keeps a
/// set of lanes to at most 256 taps, so no lane leaves -32768..=32512. If the taps do not
/// all lie in `x` (never the case in Kiln's calls), `acc` is returned unchanged.
#[inline(always)]
pub(crate) fn lanes_add_s8<const W: usize>(
    acc: [u32; 4],
    x: &[i8],
    at: usize,
    n: usize,
    stride: usize,
) -> [u32; 4] {
    if n == 0 || !super::taps_fit(x.len(), at, n, stride, 4 * W) {
        return acc;
    }
    let [mut e0, mut o0, mut e1, mut o1] = acc;
    let p = x[at..].as_ptr();
    // SAFETY: the loop runs `n > 0` times; step `k` reads `4 * W` bytes at `p + k * stride`,
    // all inside `x` (`taps_fit`); `LDR` takes unaligned addresses (module docs). Pointer
    // and counter are `inout ... => _`, the words scratch; `SUBS` sets the flags.
    unsafe {
        if W == 2 {
            asm!(
                "2:",
                "ldr {w0}, [{p}]",
                "ldr {w1}, [{p}, #4]",
                "add {p}, {p}, {s}",
                "sxtab16 {e0}, {e0}, {w0}",
                "sxtab16 {o0}, {o0}, {w0}, ror #8",
                "sxtab16 {e1}, {e1}, {w1}",
                "sxtab16 {o1}, {o1}, {w1}, ror #8",
                "subs {n}, {n}, #1",
                "bne 2b",
                p = inout(reg) p => _,
                n = inout(reg) n => _,
                s = in(reg) stride,
                w0 = out(reg) _,
                w1 = out(reg) _,
                e0 = inout(reg) e0,
                o0 = inout(reg) o0,
                e1 = inout(reg) e1,
                o1 = inout(reg) o1,
                options(readonly, nostack),
            );
        } else {
            asm!(
                "2:",
                "ldr {w0}, [{p}]",
                "add {p}, {p}, {s}",
                "sxtab16 {e0}, {e0}, {w0}",
                "sxtab16 {o0}, {o0}, {w0}, ror #8",
                "subs {n}, {n}, #1",
                "bne 2b",
                p = inout(reg) p => _,
                n = inout(reg) n => _,
                s = in(reg) stride,
                w0 = out(reg) _,
                e0 = inout(reg) e0,
                o0 = inout(reg) o0,
                options(readonly, nostack),
            );
        }
    }
    [e0, o0, e1, o1]
}

/// The eight channels' sums from [`lanes_add_s8`]'s lanes (`taps` is not needed here:
/// the lanes hold the sums themselves).
#[inline(always)]
pub(crate) fn lane_sums_s8(acc: [u32; 4], _taps: usize) -> [i32; 8] {
    super::lane_sums_signed(acc)
}
