//! The microkernels with Helium, the M-profile Vector Extension (Cortex-M55, M85): the dot
//! products of the `mac_*` functions on 16 int8 lanes at a time; everything else (the single
//! instructions, the depthwise taps) is the DSP extension's, which these cores also have.
//!
//! Each `mac_*` function is one `asm!` block: a tail-predicated low-overhead loop
//! (`DLSTP.8 lr, k` ... `LETP lr`) whose body loads 16 bytes of each row (`VLDRB.U8` with
//! post-increment) and adds the 16 products of a pixel row and a weight row to a scalar
//! accumulator with one `VMLADAVA.S8` each. The loop's last iteration predicates off the
//! lanes past `k`, so any `k` runs without a scalar tail. `VMLADAVA` sums the products of
//! int8 lanes into its 32-bit accumulator, wrapping like the reference kernels' `int32_t`
//! sums (the callers prove at build time that they never wrap).
//!
//! # Why the blocks are sound
//!
//! * Memory: every pointer is taken from a slice whose length was checked to cover the
//!   contract (`2k` bytes for two rows, `k` for one; row 1 starts at `+k`), and a loop reads
//!   exactly `k` bytes from the start of each row: tail predication disables the lanes past
//!   the remaining count, and a disabled lane of a predicated load accesses no memory. The
//!   blocks only read (`readonly`), never touch the stack (`nostack`) and declare every
//!   register they change (pointers as `inout ... => _`, `lr`, the vector registers).
//! * Alignment: `VLDRB` loads bytes, which need no alignment.
//! * The loop count: `DLSTP` runs its body at least once, so the blocks run only for
//!   `k > 0`. `VMLADAVA`'s accumulator must be an even register, hence the fixed registers.
//! * Flags and predication state: the loop changes no flags (`preserves_flags` is still not
//!   claimed); `LETP` leaves the loop with tail predication off (`FPSCR.LTPSIZE = 4`), as
//!   outside any loop.
#![allow(unsafe_code)]

use core::arch::asm;

// The rest of the contract: the DSP extension's forms.
pub(crate) use super::dsp::{asr, mac_2x2_wide, mac_taps4, smmulr, ssat8, widen_2};

/// Two pixels times two channels (see [`super`]).
#[inline(always)]
pub(crate) fn mac_2x2(k: usize, x: &[i8], w: &[i8], acc: [i32; 4]) -> [i32; 4] {
    let (Some(x), Some(w)) = (x.get(..2 * k), w.get(..2 * k)) else {
        return acc;
    };
    let [mut a00, mut a01, mut a10, mut a11] = acc;
    if k > 0 {
        // SAFETY: see the module documentation: `x` and `w` hold `2k` bytes; the loop reads
        // `[0, k)` and `[k, 2k)` of each.
        unsafe {
            asm!(
                "dlstp.8 lr, {k}",
                "2:",
                "vldrb.u8 q0, [{x0}], #16",
                "vldrb.u8 q1, [{x1}], #16",
                "vldrb.u8 q2, [{w0}], #16",
                "vldrb.u8 q3, [{w1}], #16",
                "vmladava.s8 r0, q0, q2",
                "vmladava.s8 r2, q0, q3",
                "vmladava.s8 r4, q1, q2",
                "vmladava.s8 r8, q1, q3",
                "letp lr, 2b",
                k = in(reg) k,
                x0 = inout(reg) x.as_ptr() => _,
                x1 = inout(reg) x.as_ptr().add(k) => _,
                w0 = inout(reg) w.as_ptr() => _,
                w1 = inout(reg) w.as_ptr().add(k) => _,
                inout("r0") a00,
                inout("r2") a01,
                inout("r4") a10,
                inout("r8") a11,
                out("lr") _,
                out("q0") _,
                out("q1") _,
                out("q2") _,
                out("q3") _,
                options(nostack, readonly),
            );
        }
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
    if k > 0 {
        // SAFETY: see the module documentation: `x` holds `k` bytes, `w` `2k`; the loop
        // reads `[0, k)` of `x` and `[0, k)`, `[k, 2k)` of `w`.
        unsafe {
            asm!(
                "dlstp.8 lr, {k}",
                "2:",
                "vldrb.u8 q0, [{x0}], #16",
                "vldrb.u8 q2, [{w0}], #16",
                "vldrb.u8 q3, [{w1}], #16",
                "vmladava.s8 r0, q0, q2",
                "vmladava.s8 r2, q0, q3",
                "letp lr, 2b",
                k = in(reg) k,
                x0 = inout(reg) x.as_ptr() => _,
                w0 = inout(reg) w.as_ptr() => _,
                w1 = inout(reg) w.as_ptr().add(k) => _,
                inout("r0") a0,
                inout("r2") a1,
                out("lr") _,
                out("q0") _,
                out("q2") _,
                out("q3") _,
                options(nostack, readonly),
            );
        }
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
    if k > 0 {
        // SAFETY: see the module documentation: `x` holds `2k` bytes, `w` `k`; the loop
        // reads `[0, k)`, `[k, 2k)` of `x` and `[0, k)` of `w`.
        unsafe {
            asm!(
                "dlstp.8 lr, {k}",
                "2:",
                "vldrb.u8 q0, [{x0}], #16",
                "vldrb.u8 q1, [{x1}], #16",
                "vldrb.u8 q2, [{w0}], #16",
                "vmladava.s8 r0, q0, q2",
                "vmladava.s8 r2, q1, q2",
                "letp lr, 2b",
                k = in(reg) k,
                x0 = inout(reg) x.as_ptr() => _,
                x1 = inout(reg) x.as_ptr().add(k) => _,
                w0 = inout(reg) w.as_ptr() => _,
                inout("r0") a0,
                inout("r2") a1,
                out("lr") _,
                out("q0") _,
                out("q1") _,
                out("q2") _,
                options(nostack, readonly),
            );
        }
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
    if k > 0 {
        // SAFETY: see the module documentation: `x` and `w` hold `k` bytes; the loop reads
        // `[0, k)` of each.
        unsafe {
            asm!(
                "dlstp.8 lr, {k}",
                "2:",
                "vldrb.u8 q0, [{x0}], #16",
                "vldrb.u8 q2, [{w0}], #16",
                "vmladava.s8 r0, q0, q2",
                "letp lr, 2b",
                k = in(reg) k,
                x0 = inout(reg) x.as_ptr() => _,
                w0 = inout(reg) w.as_ptr() => _,
                inout("r0") a,
                out("lr") _,
                out("q0") _,
                out("q2") _,
                options(nostack, readonly),
            );
        }
    }
    a
}
