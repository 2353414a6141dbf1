//! The microkernels with Helium, the M-profile Vector Extension (Cortex-M55, M85); the single
//! instructions (`smmulr`, `ssat8`, `asr`) and the pixel widening are the DSP extension's,
//! which these cores also have.
//!
//! * The dot products, `mac_1x4` (one pixel, four channels: the form the `gemm` drivers take
//!   on Helium instead of the two-pixel ones), `mac_1x2` and `mac_1x1`: one `asm!` block
//!   each, a tail-predicated low-overhead loop (`DLSTP.8 lr, k` ... `LETP lr`) whose body
//!   loads 16 bytes of the pixel and of each weight row (`VLDRB.U8` with post-increment)
//!   and adds their 16 products to a scalar accumulator with one `VMLADAVA.S8` per row. The
//!   loop's last iteration predicates off the lanes past `k`, so any `k` runs without a
//!   scalar tail. `VMLADAVA` sums the products of int8 lanes into its 32-bit accumulator,
//!   wrapping like the reference kernels' `int32_t` sums (the callers prove at build time
//!   that they never wrap).
//! * The depthwise taps, `mac_taps4`: four channels in int32 lanes per tap.
//! * `requantize4`: four accumulators requantized and stored at once, exactly
//!   `gemm::requantize` per lane.
//!
//! # Why the blocks are sound
//!
//! * Memory: every pointer is taken from a slice whose length was checked to cover the
//!   contract (`k` bytes a row, rows `k` apart), and a loop reads exactly `k` bytes from
//!   the start of each row: tail predication disables the lanes past the remaining count,
//!   and a disabled lane of a predicated load accesses no memory. The blocks only read
//!   (`readonly`; `requantize4` writes its four output bytes), never touch the stack
//!   (`nostack`) and declare every register they change (pointers as `inout ... => _`,
//!   `lr`, the vector registers).
//! * Registers: a widening load or narrowing store (`VLDRB.S32`, `VSTRB.32`) takes a low
//!   register (`r0`-`r7`) as its base, so those bases are fixed registers.
//! * Alignment: `VLDRB`/`VSTRB` access bytes, which need no alignment; `VLDRW` reads only
//!   `i32` slices, aligned by their type.
//! * The loop count: `DLSTP` and `DLS` run their body at least once, so the blocks run only
//!   for `k > 0` (taps: `t > 0`). `VMLADAVA`'s accumulator must be an even register, hence the fixed registers.
//! * Lanes move one at a time (`VMOV.32 Qd[i], Rt` and back), whose lane numbering is
//!   unambiguous; the two-lane `VMOV` form is avoided (QEMU 7.2 and the syntax as we read it
//!   disagree on which register goes to which lane).
//! * Flags and predication state: the loop changes no flags (`preserves_flags` is still not
//!   claimed); `LETP` leaves the loop with tail predication off (`FPSCR.LTPSIZE = 4`), as
//!   outside any loop.
#![allow(unsafe_code)]

use core::arch::asm;

// The rest of the contract: the DSP extension's forms.
pub(crate) use super::dsp::{asr, smmulr, ssat8, widen_2};

/// One pixel times four channels (Helium only: the drivers in `gemm` take this form with
/// [`requantize4`]): `w` holds the four weight rows, `4k` bytes.
#[inline(always)]
pub(crate) fn mac_1x4(k: usize, x: &[i8], w: &[i8], acc: [i32; 4]) -> [i32; 4] {
    let (Some(x), Some(w)) = (x.get(..k), w.get(..4 * k)) else {
        return acc;
    };
    let [mut a0, mut a1, mut a2, mut a3] = acc;
    if k > 0 {
        // SAFETY: see the module documentation: `x` holds `k` bytes, `w` `4k`; the loop reads
        // `[0, k)` of `x` and `[jk, (j + 1)k)` of `w` for `j` in 0..4 (rows 1 to 3 start at
        // `w + jk`, computed in the block, the last in `k`'s register once `DLSTP` has read it).
        unsafe {
            asm!(
                "add {w1}, {w0}, {k}",
                "add {w2}, {w1}, {k}",
                "dlstp.8 lr, {k}",
                "add {k}, {w2}, {k}",
                "2:",
                "vldrb.u8 q0, [{x0}], #16",
                "vldrb.u8 q1, [{w0}], #16",
                "vldrb.u8 q2, [{w1}], #16",
                "vldrb.u8 q3, [{w2}], #16",
                "vldrb.u8 q4, [{k}], #16",
                "vmladava.s8 r0, q0, q1",
                "vmladava.s8 r2, q0, q2",
                "vmladava.s8 r4, q0, q3",
                "vmladava.s8 r8, q0, q4",
                "letp lr, 2b",
                k = inout(reg) k => _,
                x0 = inout(reg) x.as_ptr() => _,
                w0 = inout(reg) w.as_ptr() => _,
                w1 = out(reg) _,
                w2 = out(reg) _,
                inout("r0") a0,
                inout("r2") a1,
                inout("r4") a2,
                inout("r8") a3,
                out("lr") _,
                out("q0") _,
                out("q1") _,
                out("q2") _,
                out("q3") _,
                out("q4") _,
                options(nostack, readonly),
            );
        }
    }
    [a0, a1, a2, a3]
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

/// Depthwise taps, four channels at a time (see [`super`]): per tap, the four input bytes at
/// channel `4g` and the four weights widened to int32 lanes (`VLDRB.S32`), multiplied and
/// added to the accumulators (`VMUL` + `VADD`: Helium has no lane-wise integer
/// multiply-accumulate), which start from the bias.
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
    // The taps' data pointers (as in the DSP form: uninitialised beyond the `t` written).
    let mut ptrs = core::mem::MaybeUninit::<[*const i8; super::MAX_TAPS]>::uninit();
    let base = ptrs.as_mut_ptr().cast::<*const i8>();
    for (i, x) in taps.iter().enumerate() {
        // SAFETY: `i < t <= MAX_TAPS`, so `base + i` is inside `ptrs`; `write` does not read
        // the uninitialised slot.
        unsafe { base.add(i).write(x.as_ptr()) };
    }
    let mut pw = w.as_ptr();
    for (g, b) in bias.chunks_exact(4).enumerate() {
        let (a0, a1, a2, a3): (i32, i32, i32, i32);
        // SAFETY: see the module documentation: `ptrs[..t]` are initialised (above) and
        // point to slices of at least `depth` bytes, of which the block reads `[4g, 4g + 4)`;
        // `pw` walks `4t` bytes per group, `depth * t <= w.len()` in all; `b` holds 4
        // `i32`s (aligned, as `VLDRW` needs); the loop runs `t > 0` times.
        unsafe {
            asm!(
                "vldrw.u32 q4, [{pb}]",
                "dls lr, {t}",
                "2:",
                "ldr r2, [{pp}], #4",
                "add r2, r2, {c}",
                "vldrb.s32 q0, [r2]",
                "vldrb.s32 q1, [r3], #4",
                "vmul.i32 q0, q0, q1",
                "vadd.i32 q4, q4, q0",
                "le lr, 2b",
                "vmov.32 {a0}, q4[0]",
                "vmov.32 {a1}, q4[1]",
                "vmov.32 {a2}, q4[2]",
                "vmov.32 {a3}, q4[3]",
                pb = in(reg) b.as_ptr(),
                t = in(reg) t,
                pp = inout(reg) base.cast_const() => _,
                c = in(reg) 4 * g,
                out("r2") _,
                inout("r3") pw,
                a0 = lateout(reg) a0,
                a1 = lateout(reg) a1,
                a2 = lateout(reg) a2,
                a3 = lateout(reg) a3,
                out("lr") _,
                out("q0") _,
                out("q1") _,
                out("q4") _,
                options(nostack, readonly),
            );
        }
        store(g, [a0, a1, a2, a3]);
    }
}

/// Four channels requantized at once, exactly `gemm::requantize` per lane:
/// `clamp(((y + (y >> 31)) rounding>> e) + offset, min, max)` with
/// `y = SQRDMULH(acc, m)` (`VQRDMULH`, which is `SMMULR(2 * acc, m)`: under `gemm`'s
/// conditions nothing saturates) and the rounding shift `VRSHL` by `-e` (adds `2^(e-1)`
/// before the arithmetic shift: with the `y >> 31` fixup, gemmlowp's round half away from
/// zero), stored as four bytes (`VSTRB.32`: the low byte of each lane, in range after the
/// clamp). `m` and `e` hold at least 4 values, `out` at least 4 bytes (else nothing is
/// written).
#[inline(always)]
pub(crate) fn requantize4(
    acc: [i32; 4],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out: &mut [i8],
) {
    let (Some(m), Some(e), Some(out)) = (m.get(..4), e.get(..4), out.get_mut(..4)) else {
        return;
    };
    let [a0, a1, a2, a3] = acc;
    // SAFETY: see the module documentation: `m` and `e` are 4 `i32`s each (aligned, as
    // `VLDRW` needs), `out` 4 bytes, the only memory written.
    unsafe {
        asm!(
            "vmov.32 q4[0], {a0}",
            "vmov.32 q4[1], {a1}",
            "vmov.32 q4[2], {a2}",
            "vmov.32 q4[3], {a3}",
            "vldrw.u32 q2, [{pm}]",
            "vldrw.u32 q3, [{pe}]",
            "vqrdmulh.s32 q4, q4, q2",
            "vneg.s32 q3, q3",
            "vshr.s32 q5, q4, #31",
            "vadd.i32 q4, q4, q5",
            "vrshl.s32 q4, q4, q3",
            "vadd.i32 q4, q4, {off}",
            "vdup.32 q5, {min}",
            "vmax.s32 q4, q4, q5",
            "vdup.32 q5, {max}",
            "vmin.s32 q4, q4, q5",
            "vstrb.32 q4, [r1]",
            a0 = in(reg) a0,
            a1 = in(reg) a1,
            a2 = in(reg) a2,
            a3 = in(reg) a3,
            pm = in(reg) m.as_ptr(),
            pe = in(reg) e.as_ptr(),
            in("r1") out.as_mut_ptr(),
            off = in(reg) q.offset,
            min = in(reg) q.min,
            max = in(reg) q.max,
            out("q2") _,
            out("q3") _,
            out("q4") _,
            out("q5") _,
            options(nostack),
        );
    }
}
