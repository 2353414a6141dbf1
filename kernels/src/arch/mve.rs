//! The microkernels with Helium, the M-profile Vector Extension (Cortex-M55, M85); the single
//! instructions (`smmulr`, `ssat8`, `rq_shift`) and the pixel widening are the DSP extension's,
//! which these cores also have.
//!
//! * The dot products, `one_pixel_by4` (one pixel times all channels, four at a time,
//!   each group requantized and stored before the next: the form the `gemm` drivers take
//!   on Helium instead of the two-pixel ones), `mac_1x2` and `mac_1x1`: a tail-predicated
//!   low-overhead loop (`DLSTP.8 lr, k` ... `LETP lr`) whose body loads 16 bytes of the
//!   pixel and of each weight row (`VLDRB.U8` with post-increment) and adds their 16
//!   products to a scalar accumulator with one `VMLADAVA.S8` per row. The loop's last
//!   iteration predicates off the lanes past `k`, so any `k` runs without a scalar tail.
//!   `VMLADAVA` sums the products of int8 lanes into its 32-bit accumulator, wrapping like
//!   the reference kernels' `int32_t` sums (the callers prove at build time that they never
//!   wrap).
//!   `two_pixels_by4` and `three_pixels_by4` run two or three pixels by two channels per
//!   loop (each 16-byte load feeds two or three `VMLADAVA`s), two loops per group of four
//!   channels.
//! * The depthwise blocks, `dw_block4` (four output pixels inside the input, taps by
//!   offset), `dw_block4_windows` (any four pixels, from a table of their taps) and
//!   `dw1_block4`/`dw1_block4_windows` (input depth 1): four pixels times four channels in
//!   int32 lanes per weight load, `VLDRB.S32` widening loads of the inputs (and of the int8
//!   weights of the input-depth-1 form; the depth-multiplier-1 form's are int16 pairs,
//!   `VLDRH.S32`), `VMUL` + `VADD` (or `VMLA` by a scalar input byte), the four
//!   accumulators requantized in registers. The older
//!   per-pixel form `mac_taps4` serves layers of fewer than four output pixels.
//! * `requantize4`: four accumulators requantized and stored at once, exactly
//!   `gemm::requantize` per lane (the blocks above inline the same instructions).
//! * `copy_bytes`, `fill_bytes`: the im2col's runs, 16 bytes per tail-predicated step;
//!   `window_short` (a window of rows of at most 16 bytes with taps outside the input) and
//!   `copy_rows` for runs of at most 16 bytes: one predicated load and store per run
//!   (`VCTP.8`, `VPSTT`), no loop per run.
//! * `lanes_add16_s8`: the window sums of average pooling, 16 channels per tap in 16-bit
//!   lanes.
//! * `add_s8_tables4` (and its in-place forms): int8 ADD on the inputs' rescaling tables,
//!   four elements per tail-predicated step (`VLDRB.U32` indices, two `VLDRW` gathers, the
//!   requantization of `requantize4` with `VRMULH` for `SMMULR`).
//!
//! # Why the blocks are sound
//!
//! * Memory: every pointer is taken from a slice whose length was checked to cover the
//!   contract (`k` bytes a row, rows `k` apart), and a loop reads exactly `k` bytes from
//!   the start of each row: tail predication disables the lanes past the remaining count,
//!   and a disabled lane of a predicated load accesses no memory. The dot products only
//!   read (`readonly`); the blocks that write (the requantizing ones, the copies, and the
//!   depthwise and gemm blocks' own pointer tables and state tables, locals of the calling
//!   function) state each byte they write in their `SAFETY` comment. Every depthwise
//!   block's reads are checked: the tap offsets' largest value (`DwTaps`, whose only
//!   constructor computes it) against the input's length once per block, or, for the
//!   tables of edge blocks (`fill_windows`), the image's size once per layer (`DwWindow`,
//!   whose only constructor checks it) and each tap's row and column against it. No block touches the stack (`nostack`) and each declares every
//!   register it changes (pointers as `inout ... => _`, `lr`, the vector registers).
//! * Pointer tables: `LDM`/`STM` of four tap pointers at once, and `LDM`/`STM` of a state
//!   table of the pointers that do not fit in registers (`one_pixel_by4`,
//!   `two_pixels_by4`: all twelve usable registers hold the loop's accumulators and
//!   pointers); the tables hold only pointers derived from checked slices.
//! * Registers: a widening load or narrowing store (`VLDRB.S32`, `VLDRH.S32`, `VSTRB.32`) takes a low
//!   register (`r0`-`r7`) as its base, so those bases are fixed registers.
//! * Alignment: `VLDRB`/`VSTRB` access bytes, which need no alignment; `VLDRH` and `VLDRW`
//!   read only `i32` slices, aligned by their type.
//! * The loop count: `DLSTP` and `DLS` run their body at least once, so the blocks run only
//!   for `k > 0` (taps: `t > 0`; the group loops, at least one group of four channels).
//!   `VMLADAVA`'s accumulator must be an even register, hence the fixed registers.
//! * Requantization: the vector form of `gemm::requantize` (`VQRDMULH`, the `y >> 31`
//!   fixup, `VRSHL` by the negated shift, offset, clamp), correct under
//!   `gemm::prepare_layer`'s conditions (accumulators within `2^30`, shifts 1..=31) as
//!   argued at `requantize4`.
//! * Lanes move one at a time (`VMOV.32 Qd[i], Rt` and back), whose lane numbering is
//!   unambiguous; the two-lane `VMOV` form is avoided (QEMU 7.2 and the syntax as we read it
//!   disagree on which register goes to which lane).
//! * Flags and predication state: the loop changes no flags (`preserves_flags` is still not
//!   claimed); `LETP` leaves the loop with tail predication off (`FPSCR.LTPSIZE = 4`), as
//!   outside any loop.
#![allow(unsafe_code)]

use core::arch::asm;

// The rest of the contract: the DSP extension's forms.
pub(crate) use super::dsp::{
    copy_block, lane_sums_s8, lanes_add_s8, max_s8x4, min_s8x4, rq_shift, smmulr, ssat8, widen_2,
};

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
/// channel `4g` and the four weights (int16 pairs) widened to int32 lanes (`VLDRB.S32`,
/// `VLDRH.S32`), multiplied and
/// added to the accumulators (`VMUL` + `VADD`: Helium has no lane-wise integer
/// multiply-accumulate), which start from the bias.
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
        // `pw` walks `2t` words per group, `depth / 2 * t <= w.len()` in all; `b` holds 4
        // `i32`s (aligned, as `VLDRW` needs); the loop runs `t > 0` times.
        unsafe {
            asm!(
                "vldrw.u32 q4, [{pb}]",
                "dls lr, {t}",
                "2:",
                "ldr r2, [{pp}], #4",
                "add r2, r2, {c}",
                "vldrb.s32 q0, [r2]",
                "vldrh.s32 q1, [r3], #8",
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

/// The taps of a depthwise window as byte offsets from its first tap (`(fy * dh * iw + fx *
/// dw) * C` for tap `fy * kw + fx`), with the largest one: what [`dw_block4`] needs to check
/// a block's reads once. Built per layer by [`DwTaps::new`] (the only constructor, so the
/// largest offset is always the table's).
pub(crate) struct DwTaps {
    off: [u32; super::MAX_TAPS],
    n: usize,
    reach: usize,
}

impl DwTaps {
    /// The taps of a `kh x kw` window with dilations `dh`, `dw` over an input `iw` pixels wide
    /// of `c` channels, or `None` if there are none, more than `MAX_TAPS` or an offset
    /// overflows.
    pub(crate) fn new(
        kh: usize,
        kw: usize,
        dh: usize,
        dw: usize,
        iw: usize,
        c: usize,
    ) -> Option<Self> {
        let n = kh.checked_mul(kw)?;
        if n == 0 || n > super::MAX_TAPS {
            return None;
        }
        let mut off = [0u32; super::MAX_TAPS];
        let mut reach = 0usize;
        for fy in 0..kh {
            for fx in 0..kw {
                let o = fy
                    .checked_mul(dh)?
                    .checked_mul(iw)?
                    .checked_add(fx.checked_mul(dw)?)?
                    .checked_mul(c)?;
                *off.get_mut(fy * kw + fx)? = u32::try_from(o).ok()?;
                reach = reach.max(o);
            }
        }
        Some(DwTaps { off, n, reach })
    }
}

/// The requantization of four pixels' accumulators `q0`-`q3` (four channels each) into
/// bytes at `r0`, `r0 + c`, `r0 + 2c`, `r0 + 3c`, as [`requantize4`] per lane, with `q4` the
/// multipliers, `q5` the right shifts negated, `r1` the output offset, `r2` the lower clamp,
/// `r3` the upper one and `r5` the pixel stride `c`; changes `q4`, `q6`, `q7` and `r0`.
macro_rules! requantize_4x4 {
    () => {
        concat!(
            "vqrdmulh.s32 q0, q0, q4\n",
            "vqrdmulh.s32 q1, q1, q4\n",
            "vqrdmulh.s32 q2, q2, q4\n",
            "vqrdmulh.s32 q3, q3, q4\n",
            // The multipliers are used: `q4` takes the upper clamp.
            "vdup.32 q6, r2\n",
            "vdup.32 q4, r3\n",
            "vshr.s32 q7, q0, #31\n",
            "vadd.i32 q0, q0, q7\n",
            "vrshl.s32 q0, q0, q5\n",
            "vadd.i32 q0, q0, r1\n",
            "vmax.s32 q0, q0, q6\n",
            "vmin.s32 q0, q0, q4\n",
            "vstrb.32 q0, [r0]\n",
            "add r0, r0, r5\n",
            "vshr.s32 q7, q1, #31\n",
            "vadd.i32 q1, q1, q7\n",
            "vrshl.s32 q1, q1, q5\n",
            "vadd.i32 q1, q1, r1\n",
            "vmax.s32 q1, q1, q6\n",
            "vmin.s32 q1, q1, q4\n",
            "vstrb.32 q1, [r0]\n",
            "add r0, r0, r5\n",
            "vshr.s32 q7, q2, #31\n",
            "vadd.i32 q2, q2, q7\n",
            "vrshl.s32 q2, q2, q5\n",
            "vadd.i32 q2, q2, r1\n",
            "vmax.s32 q2, q2, q6\n",
            "vmin.s32 q2, q2, q4\n",
            "vstrb.32 q2, [r0]\n",
            "add r0, r0, r5\n",
            "vshr.s32 q7, q3, #31\n",
            "vadd.i32 q3, q3, q7\n",
            "vrshl.s32 q3, q3, q5\n",
            "vadd.i32 q3, q3, r1\n",
            "vmax.s32 q3, q3, q6\n",
            "vmin.s32 q3, q3, q4\n",
            "vstrb.32 q3, [r0]\n",
        )
    };
}

/// The start of a four-pixel depthwise block: the bias (at `r1`) into the four accumulators
/// `q0`-`q3`, the multipliers (at `r2`) into `q4`, the right shifts (at `r3`) negated into
/// `q5`, and the tap loop's counter (`lr`) set.
macro_rules! block_start {
    () => {
        concat!(
            "vldrw.u32 q0, [r1]\n",
            "vldrw.u32 q4, [r2]\n",
            "vldrw.u32 q5, [r3]\n",
            "vmov q1, q0\n",
            "vmov q2, q0\n",
            "vmov q3, q0\n",
            "vneg.s32 q5, q5\n",
            "dls lr, lr\n",
        )
    };
}

/// The checked slices of a four-pixel depthwise block of `c` channels (`c % 4 == 0`) and `t`
/// taps: the weights (`c * t` int8 values, `W = i8`, or int16 ones in `c * t / 2` words, `W =
/// i32`), the bias, multipliers and shifts (`c` each) and the four pixels' outputs (`4c`), or
/// `None`.
#[allow(clippy::type_complexity)]
#[inline(always)]
fn block_slices<'a, W>(
    t: usize,
    c: usize,
    w: &'a [W],
    bias: &'a [i32],
    m: &'a [i32],
    e: &'a [i32],
    out: &'a mut [i8],
) -> Option<(&'a [W], &'a [i32], &'a [i32], &'a [i32], &'a mut [i8])> {
    if t == 0 || t > super::MAX_TAPS || !c.is_multiple_of(4) {
        return None;
    }
    // Weights: `c * t` int8 values, or as many int16 ones in `c * t / 2` words.
    let n = c.checked_mul(t)? / if core::mem::size_of::<W>() == 4 { 2 } else { 1 };
    Some((
        w.get(..n)?,
        bias.get(..c)?,
        m.get(..c)?,
        e.get(..c)?,
        out.get_mut(..c.checked_mul(4)?)?,
    ))
}

/// Four output pixels of a depth-multiplier-1 DEPTHWISE_CONV_2D whose windows lie wholly inside
/// the input, all `c` channels (`c % 4 == 0`), four channels per step: pixel `j`'s tap `t`
/// of channel `ch` is `image[start + j * step + taps.off[t] + ch]`; its accumulator starts
/// from `bias[ch]`, adds the tap products with the weights of entry `ch / 4 * T + t` of `w`
/// (int16 pairs, two words per entry: `depthwise_conv_2d::fast::pack_weights`) and is
/// requantized as [`requantize4`] does into `out[j * c + ch]`. Per tap one `VLDRH.S32` of
/// the four weights serves the four
/// pixels (`VLDRB.S32` of each pixel's four input bytes, `VMUL` + `VADD`: Helium has no
/// lane-wise integer multiply-accumulate), and the requantization (`m`, `e` loaded once)
/// runs on the four accumulators in registers. Nothing is written unless every slice
/// covers the block.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn dw_block4(
    image: &[i8],
    start: usize,
    step: usize,
    taps: &DwTaps,
    c: usize,
    w: &[i32],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out: &mut [i8],
) {
    let t = taps.n;
    // One past the last byte read: `start + 3 * step + reach + c`.
    let end = step
        .checked_mul(3)
        .and_then(|s| s.checked_add(start))
        .and_then(|s| s.checked_add(taps.reach))
        .and_then(|s| s.checked_add(c));
    let (Some(end), Some((w, bias, m, e, out))) = (end, block_slices(t, c, w, bias, m, e, out))
    else {
        return;
    };
    if end > image.len() {
        return;
    }
    let base = image.as_ptr().wrapping_add(start);
    // Two groups of channels or more: the taps' pointers in a table, written once for the
    // block (about 9 instructions per tap), so that a tap costs two scalar instructions per
    // group (`LDM`, `STM`) instead of five, and the groups loop inside one block.
    if c >= 8 {
        let mut table = core::mem::MaybeUninit::<[*const i8; 4 * super::MAX_TAPS]>::uninit();
        let pt = table.as_mut_ptr().cast::<*const i8>();
        let (s1, s2, s3) = (step, 2 * step, 3 * step);
        for (i, &o) in taps.off.iter().take(t).enumerate() {
            let x = base.wrapping_add(o as usize);
            // SAFETY: `4i + 3 < 4t <= 4 * MAX_TAPS`, so the four slots are inside `table`;
            // `write` does not read the uninitialised slots.
            unsafe {
                let slot = pt.add(4 * i);
                slot.write(x);
                slot.add(1).write(x.wrapping_add(s1));
                slot.add(2).write(x.wrapping_add(s2));
                slot.add(3).write(x.wrapping_add(s3));
            }
        }
        // SAFETY: `pt[..4t]` was written above: pixel `j`'s tap `i` at `start + j * step +
        // off[i]`, whose `c` bytes end at most at `start + 3 * step + reach + c = end <=
        // image.len()` (`off[i] <= reach`, `j <= 3`); the slices are those `block_slices`
        // checked.
        unsafe { dw_block4_table(pt, t, c, w, bias, m, e, q, out) };
        return;
    }
    // The constants the requantization loads in one `LDM`: offset, min, max, pixel stride.
    let consts = [q.offset, q.min, q.max, c as i32];
    let mut pw = w.as_ptr();
    for g in 0..c / 4 {
        let at = 4 * g;
        // SAFETY: see the module documentation. Reads: for tap `i < t` (`taps.off[..t]`
        // initialised by `DwTaps::new`, each at most `taps.reach`) and pixel `j < 4`, the 4
        // bytes at `start + at + j * step + off[i]` of `image`, the last of which is below
        // `start + 3 * step + reach + c = end <= image.len()` since `at + 4 <= c`; the
        // weights `pw .. pw + 2t` words, inside `w` (`c * t / 2` words, group `g` at `2tg`;
        // `VLDRH` needs halfword alignment, `&[i32]` has more); 4 `i32`s
        // (aligned) of `bias`, `m`, `e` at `at` (`at + 4 <= c`); `consts`, 4 `i32`s. Writes:
        // 4 bytes at `at + j * c` of `out` for `j < 4`, below `4c`, its length. The loop
        // runs `t > 0` times.
        unsafe {
            asm!(
                block_start!(),
                "2:",
                "ldr r0, [r5], #4",
                "add r0, r0, {img}",
                "add r1, r0, {step}",
                "add r2, r1, {step}",
                "add r3, r2, {step}",
                "vldrh.s32 q6, [r4], #8",
                "vldrb.s32 q7, [r0]",
                "vmul.i32 q7, q7, q6",
                "vadd.i32 q0, q0, q7",
                "vldrb.s32 q7, [r1]",
                "vmul.i32 q7, q7, q6",
                "vadd.i32 q1, q1, q7",
                "vldrb.s32 q7, [r2]",
                "vmul.i32 q7, q7, q6",
                "vadd.i32 q2, q2, q7",
                "vldrb.s32 q7, [r3]",
                "vmul.i32 q7, q7, q6",
                "vadd.i32 q3, q3, q7",
                "le lr, 2b",
                // offset, min, max, c.
                "ldm {qc}, {{r1, r2, r3, r5}}",
                "mov r0, {po}",
                requantize_4x4!(),
                img = in(reg) base.wrapping_add(at),
                step = in(reg) step,
                po = in(reg) out.as_mut_ptr().wrapping_add(at),
                qc = in(reg) consts.as_ptr(),
                out("r0") _,
                inout("r1") bias.as_ptr().wrapping_add(at) => _,
                inout("r2") m.as_ptr().wrapping_add(at) => _,
                inout("r3") e.as_ptr().wrapping_add(at) => _,
                inout("r4") pw,
                inout("r5") taps.off.as_ptr() => _,
                inout("lr") t => _,
                out("q0") _,
                out("q1") _,
                out("q2") _,
                out("q3") _,
                out("q4") _,
                out("q5") _,
                out("q6") _,
                out("q7") _,
                options(nostack),
            );
        }
    }
}

/// The windows of a depthwise layer over one input image of `ih x iw` pixels of `ci`
/// channels: `kh x kw` taps at dilations `dh`, `dw`; what [`dw_block4_windows`] needs to
/// write its pointer table. Its only constructor, [`DwWindow::new`], checks the image.
pub(crate) struct DwWindow {
    kh: usize,
    kw: usize,
    dh: usize,
    dw: usize,
    ih: usize,
    iw: usize,
    ci: usize,
    /// The taps' offsets from the window's first tap (built here, for these sizes).
    taps: DwTaps,
}

impl DwWindow {
    /// The windows over `image`, or `None` unless the taps are 1..=`MAX_TAPS`, the
    /// dilations at least 1 and `image` holds `ih * iw * ci` bytes (`ci >= 1`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        kh: usize,
        kw: usize,
        dh: usize,
        dw: usize,
        ih: usize,
        iw: usize,
        ci: usize,
        image: &[i8],
    ) -> Option<Self> {
        let t = kh.checked_mul(kw)?;
        let len = ih.checked_mul(iw)?.checked_mul(ci)?;
        let ok = (1..=super::MAX_TAPS).contains(&t)
            && dh >= 1
            && dw >= 1
            && ci >= 1
            && len <= image.len()
            && isize::try_from(len).is_ok();
        if !ok {
            return None;
        }
        let taps = DwTaps::new(kh, kw, dh, dw, iw, ci)?;
        Some(DwWindow {
            kh,
            kw,
            dh,
            dw,
            ih,
            iw,
            ci,
            taps,
        })
    }
}

/// Writes into `pt[..4t]` (`t = kh * kw`) the pointers of a block's taps: pixel `j`'s
/// window has its first tap at input row `origins[j].0`, column `origins[j].1` (negative in
/// the padding), and its tap `i = fy * kw + fx` goes to `pt[4i + j]`: the tap's pixel in
/// `image` if it lies inside the image, else `zero_row`. `false` (the table unusable) unless
/// `zero_row` holds `need` bytes and `need <= ci` (then every pointer has `need` readable
/// bytes).
#[inline(always)]
fn fill_windows(
    pt: &mut core::mem::MaybeUninit<[*const i8; 4 * super::MAX_TAPS]>,
    win: &DwWindow,
    image: &[i8],
    zero_row: &[i8],
    origins: &[(isize, isize); 4],
    need: usize,
) -> bool {
    if zero_row.len() < need || need > win.ci {
        return false;
    }
    let p = pt.as_mut_ptr().cast::<*const i8>();
    let zero = zero_row.as_ptr();
    let (kh, kw) = (win.kh, win.kw);
    let t = kh * kw;
    let off = win.taps.off.get(..t).unwrap_or(&[]);
    let all = (1u32 << t) - 1;
    // The last row and column a window reaches from its first tap.
    let (reach_y, reach_x) = ((kh - 1) * win.dh, (kw - 1) * win.dw);
    let mut base = [zero; 4];
    let mut outside = [0u32; 4];
    for (j, &(y0, x0)) in origins.iter().enumerate() {
        // (Wrapping: only the inside taps' pointers are kept.)
        base[j] = image.as_ptr().wrapping_offset(
            y0.wrapping_mul(win.iw as isize)
                .wrapping_add(x0)
                .wrapping_mul(win.ci as isize),
        );
        if y0 >= 0
            && x0 >= 0
            && (y0 as usize).saturating_add(reach_y) < win.ih
            && (x0 as usize).saturating_add(reach_x) < win.iw
        {
            continue;
        }
        let (fy0, fy1) = crate::gemm::inside(y0, win.dh, win.ih, kh);
        let (fx0, fx1) = crate::gemm::inside(x0, win.dw, win.iw, kw);
        // Bit `fy * kw + fx` set for the taps inside the input.
        let cols = (1u32 << fx1.max(fx0)) - (1u32 << fx0);
        let mut inside = 0u32;
        for fy in fy0..fy1 {
            inside |= cols << (fy * kw);
        }
        outside[j] = all & !inside;
    }
    // SAFETY (each `write`): `4i + j < 4t <= 4 * MAX_TAPS` (`DwWindow`), so the slot is
    // inside the table; `write` does not read it.
    // Every tap as if inside, the four pixels' pointers of a tap together, then the few
    // outside (at the edges) over them.
    for (i, &o) in off.iter().enumerate() {
        unsafe {
            let slot = p.add(4 * i);
            let o = o as usize;
            slot.write(base[0].wrapping_add(o));
            slot.add(1).write(base[1].wrapping_add(o));
            slot.add(2).write(base[2].wrapping_add(o));
            slot.add(3).write(base[3].wrapping_add(o));
        }
    }
    for (j, mut outside) in outside.into_iter().enumerate() {
        while outside != 0 {
            let i = outside.trailing_zeros() as usize;
            outside &= outside - 1;
            // (`i < t`: `outside` has bits below `t` only.)
            unsafe { p.add(4 * i + j).write(zero) };
        }
    }
    // Every pointer written: `zero_row` (`need` bytes), or an inside tap `(y, x) = (y0 + fy *
    // dh, x0 + fx * dw)` with `y < ih`, `x < iw` (a window wholly inside, or `gemm::inside`),
    // at `(y0 * iw + x0) * ci + off[i] = (y * iw + x) * ci`, whose `ci >= need` bytes end at
    // most at `ih * iw * ci <= image.len()` (`DwWindow::new`).
    true
}

/// [`dw_block4`] for any four pixels (the padded edges, a block across output rows), from
/// a table of their taps ([`fill_windows`]: pixel `j`'s window starts at input row and
/// column `origins[j]`, its taps outside the input read `zero_row`, at least `c` bytes of
/// the zero point); outputs at `out[j * c + ch]`. The taps' pointers go into a table that
/// the loop reads four at a time (`LDM`) and writes back advanced to the next group's
/// channels (`STM`), so a tap costs two scalar instructions per group.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn dw_block4_windows(
    image: &[i8],
    zero_row: &[i8],
    win: &DwWindow,
    origins: &[(isize, isize); 4],
    c: usize,
    w: &[i32],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out: &mut [i8],
) {
    let t = win.kh * win.kw;
    let Some((w, bias, m, e, out)) = block_slices(t, c, w, bias, m, e, out) else {
        return;
    };
    let mut table = core::mem::MaybeUninit::<[*const i8; 4 * super::MAX_TAPS]>::uninit();
    if !fill_windows(&mut table, win, image, zero_row, origins, c) {
        return;
    }
    let pt = table.as_mut_ptr().cast::<*const i8>();
    // SAFETY: `fill_windows` wrote `pt[..4t]`, each pointer to at least `c` readable bytes;
    // the slices are those `block_slices` checked.
    unsafe { dw_block4_table(pt, t, c, w, bias, m, e, q, out) };
}

/// The loop of [`dw_block4_windows`] (and of [`dw_block4`] for wider layers) over a table of
/// the taps' pointers, which it advances by four bytes per group of channels.
///
/// # Safety
///
/// `pt[..4t]` are initialised pointers, each to `c` readable bytes, and writable (the
/// caller's own table); `0 < t <= MAX_TAPS`; `c % 4 == 0`; `w` holds `c * t / 2` words,
/// `bias`, `m`, `e` `c` values, `out` `4c` bytes (as `block_slices` returns them).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn dw_block4_table(
    pt: *mut *const i8,
    t: usize,
    c: usize,
    w: &[i32],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out: &mut [i8],
) {
    if c < 4 || t == 0 {
        return;
    }
    // Offset, min, max, pixel stride (loaded by the requantization in one `LDM`), the
    // table, the taps, the groups left.
    let mut consts = [
        q.offset as usize,
        q.min as usize,
        q.max as usize,
        c,
        pt as usize,
        t,
        c / 4,
    ];
    // SAFETY: see the module documentation and the function's contract. Per group `g <
    // c / 4` (at least one: `c` is a multiple of 4, at least 4; counted down in
    // `consts[6]`): `pt[..4t]` holds the taps' pointers (each to at least `c` readable
    // bytes; `4t <= 4 * MAX_TAPS`), each advanced by `4g` (the write-back, 4 per group and
    // tap): the block reads 4 bytes at each, `[4g, 4g + 4)` of those `c`, and writes the
    // `4t` table entries back (the other memory written: 4 bytes at `4g + j * c` of `out`,
    // below `4c`, its length, and `consts[6]`). The weights `2t` words per group lie inside
    // `w` (`c * t / 2` words, group `g` at `2tg`); `bias`, `m`, `e` have 4 aligned `i32`s
    // at `4g`. The first tap runs before the loop (from the bias), the loop the other `t -
    // 1` (none if `t == 1`).
    unsafe {
        asm!(
            "3:",
            "vldrw.u32 q5, [r8], #16",
            "ldrd r5, lr, [r12, #16]",
            "ldm r5, {{r0, r1, r2, r3}}",
            "vldrh.s32 q6, [r4], #8",
            "vldrb.s32 q7, [r0], #4",
            "vmul.i32 q7, q7, q6",
            "vadd.i32 q0, q5, q7",
            "vldrb.s32 q7, [r1], #4",
            "vmul.i32 q7, q7, q6",
            "vadd.i32 q1, q5, q7",
            "vldrb.s32 q7, [r2], #4",
            "vmul.i32 q7, q7, q6",
            "vadd.i32 q2, q5, q7",
            "vldrb.s32 q7, [r3], #4",
            "vmul.i32 q7, q7, q6",
            "vadd.i32 q3, q5, q7",
            "stm r5!, {{r0, r1, r2, r3}}",
            "subs lr, #1",
            "beq 4f",
            "dls lr, lr",
            "2:",
            "ldm r5, {{r0, r1, r2, r3}}",
            "vldrh.s32 q6, [r4], #8",
            "vldrb.s32 q7, [r0], #4",
            "vmul.i32 q7, q7, q6",
            "vadd.i32 q0, q0, q7",
            "vldrb.s32 q7, [r1], #4",
            "vmul.i32 q7, q7, q6",
            "vadd.i32 q1, q1, q7",
            "vldrb.s32 q7, [r2], #4",
            "vmul.i32 q7, q7, q6",
            "vadd.i32 q2, q2, q7",
            "vldrb.s32 q7, [r3], #4",
            "vmul.i32 q7, q7, q6",
            "vadd.i32 q3, q3, q7",
            "stm r5!, {{r0, r1, r2, r3}}",
            "le lr, 2b",
            "4:",
            "vldrw.u32 q4, [r9], #16",
            "vldrw.u32 q5, [r10], #16",
            "vneg.s32 q5, q5",
            // offset, min, max, c.
            "ldm r12, {{r1, r2, r3, r5}}",
            "mov r0, r11",
            requantize_4x4!(),
            "adds r11, #4",
            "ldr r0, [r12, #24]",
            "subs r0, #1",
            "str r0, [r12, #24]",
            "bne 3b",
            out("r0") _,
            out("r1") _,
            out("r2") _,
            out("r3") _,
            inout("r4") w.as_ptr() => _,
            out("r5") _,
            inout("r8") bias.as_ptr() => _,
            inout("r9") m.as_ptr() => _,
            inout("r10") e.as_ptr() => _,
            inout("r11") out.as_mut_ptr() => _,
            inout("r12") consts.as_mut_ptr() => _,
            out("lr") _,
            out("q0") _,
            out("q1") _,
            out("q2") _,
            out("q3") _,
            out("q4") _,
            out("q5") _,
            out("q6") _,
            out("q7") _,
            options(nostack),
        );
    }
}

/// [`dw_block4_windows`] for an input of one channel (depth multiplier `c`, `c % 4 == 0`):
/// every tap is one input byte, shared by all `c` output channels, so it is loaded as a
/// scalar (`LDRSB`) and multiplied into the four channels' lanes with one vector-by-scalar
/// multiply-accumulate (`VMLA.I32`); the pointers stay where they are from group to
/// group. `zero_row` holds at least one byte; weights, bias and outputs as
/// [`dw_block4_windows`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn dw1_block4_windows(
    image: &[i8],
    zero_row: &[i8],
    win: &DwWindow,
    origins: &[(isize, isize); 4],
    c: usize,
    w: &[i8],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out: &mut [i8],
) {
    let t = win.kh * win.kw;
    let Some((w, bias, m, e, out)) = block_slices(t, c, w, bias, m, e, out) else {
        return;
    };
    let mut table = core::mem::MaybeUninit::<[*const i8; 4 * super::MAX_TAPS]>::uninit();
    if !fill_windows(&mut table, win, image, zero_row, origins, 1) {
        return;
    }
    let pt = table.as_ptr().cast::<*const i8>();
    // SAFETY: `fill_windows` wrote `pt[..4t]`, each pointer to at least one readable byte;
    // the slices are those `block_slices` checked.
    unsafe { dw1_block4_table(pt, t, c, w, bias, m, e, q, out) };
}

/// [`dw1_block4_windows`] for four pixels of one output row whose windows lie wholly inside
/// the input: pixel `j`'s tap `i` is `image[start + j * step + taps.off[i]]` (`taps` built
/// for one channel), checked once for the block.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn dw1_block4(
    image: &[i8],
    start: usize,
    step: usize,
    taps: &DwTaps,
    c: usize,
    w: &[i8],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out: &mut [i8],
) {
    let t = taps.n;
    // One past the last byte read: `start + 3 * step + reach + 1`.
    let end = step
        .checked_mul(3)
        .and_then(|s| s.checked_add(start))
        .and_then(|s| s.checked_add(taps.reach))
        .and_then(|s| s.checked_add(1));
    let (Some(end), Some((w, bias, m, e, out))) = (end, block_slices(t, c, w, bias, m, e, out))
    else {
        return;
    };
    if end > image.len() {
        return;
    }
    let mut table = core::mem::MaybeUninit::<[*const i8; 4 * super::MAX_TAPS]>::uninit();
    let pt = table.as_mut_ptr().cast::<*const i8>();
    let base = image.as_ptr().wrapping_add(start);
    let (s1, s2, s3) = (step, 2 * step, 3 * step);
    for (i, &o) in taps.off.iter().take(t).enumerate() {
        let x = base.wrapping_add(o as usize);
        // The four pixels' pointers written one by one (a loop over them costs more).
        // SAFETY: `4i + 3 < 4t <= 4 * MAX_TAPS`, so the four slots are inside `table`;
        // `write` does not read the uninitialised slots.
        unsafe {
            let slot = pt.add(4 * i);
            slot.write(x);
            slot.add(1).write(x.wrapping_add(s1));
            slot.add(2).write(x.wrapping_add(s2));
            slot.add(3).write(x.wrapping_add(s3));
        }
    }
    // SAFETY: `pt[..4t]` was written above: pixel `j`'s tap `i` at `start + j * step +
    // off[i] < end <= image.len()` (`off[i] <= reach`, `j <= 3`), so each points to a byte
    // of `image`; the slices are those `block_slices` checked.
    unsafe { dw1_block4_table(pt, t, c, w, bias, m, e, q, out) };
}

/// The loop of [`dw1_block4_windows`] and [`dw1_block4`] over a table of the taps' pointers.
///
/// # Safety
///
/// `pt[..4t]` are initialised pointers, each to a readable byte; `0 < t <= MAX_TAPS`;
/// `c % 4 == 0`; `w` holds `c * t` bytes, `bias`, `m`, `e` `c` values, `out` `4c` bytes
/// (as `block_slices` returns them).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn dw1_block4_table(
    pt: *const *const i8,
    t: usize,
    c: usize,
    w: &[i8],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out: &mut [i8],
) {
    let consts = [q.offset, q.min, q.max, c as i32];
    let mut pw = w.as_ptr();
    for g in 0..c / 4 {
        let at = 4 * g;
        // SAFETY: see the module documentation and the function's contract: the block reads
        // `pt[..4t]` and the one byte at each; the weights `pw .. pw + 4t`, inside `w`
        // (`c * t` bytes, group `g` at `4tg`); 4 aligned `i32`s of `bias`, `m`, `e` at `at`
        // (`at + 4 <= c`); `consts`, 4 `i32`s. Writes: 4 bytes at `at + j * c` of `out`
        // for `j < 4`, below `4c`, its length. The loop runs `t > 0` times.
        unsafe {
            asm!(
                block_start!(),
                "2:",
                "ldm r5!, {{r0, r1, r2, r3}}",
                "vldrb.s32 q6, [r4], #4",
                "ldrsb r0, [r0]",
                "ldrsb r1, [r1]",
                "ldrsb r2, [r2]",
                "ldrsb r3, [r3]",
                "vmla.i32 q0, q6, r0",
                "vmla.i32 q1, q6, r1",
                "vmla.i32 q2, q6, r2",
                "vmla.i32 q3, q6, r3",
                "le lr, 2b",
                "ldm {qc}, {{r1, r2, r3, r5}}",
                "mov r0, {po}",
                requantize_4x4!(),
                po = in(reg) out.as_mut_ptr().wrapping_add(at),
                qc = in(reg) consts.as_ptr(),
                out("r0") _,
                inout("r1") bias.as_ptr().wrapping_add(at) => _,
                inout("r2") m.as_ptr().wrapping_add(at) => _,
                inout("r3") e.as_ptr().wrapping_add(at) => _,
                inout("r4") pw,
                inout("r5") pt => _,
                inout("lr") t => _,
                out("q0") _,
                out("q1") _,
                out("q2") _,
                out("q3") _,
                out("q4") _,
                out("q5") _,
                out("q6") _,
                out("q7") _,
                options(nostack),
            );
        }
    }
}

/// Adds `n` taps of 16 int8 channels to the sums in `acc`'s 16-bit lanes (wrapping): tap
/// `k` is `x[at + k * stride..][..16]`. Per tap two widening loads (`VLDRB.S16`, eight
/// channels each) and two `VADD.I16`, the sums kept in two vector registers. Nothing is
/// added unless every tap lies inside `x`. A lane holds the sum of at most 256 int8 values
/// exactly (`256 * -128 = -32768`); the callers add at most that many.
#[inline(always)]
pub(crate) fn lanes_add16_s8(acc: &mut [i16; 16], x: &[i8], at: usize, n: usize, stride: usize) {
    let end = n
        .checked_sub(1)
        .and_then(|k| k.checked_mul(stride))
        .and_then(|o| o.checked_add(at))
        .and_then(|o| o.checked_add(16));
    if n == 0 || end.is_none_or(|end| end > x.len()) {
        return;
    }
    // SAFETY: see the module documentation: the loop reads 16 bytes at `at + k * stride`
    // for `k < n` (`n > 0`), which end at most at `end <= x.len()`; it reads and writes the
    // 32 bytes of `acc` (`VLDRH`/`VSTRH` of its 16 aligned `i16`s).
    unsafe {
        asm!(
            "vldrh.u16 q0, [{a}]",
            "vldrh.u16 q1, [{a}, #16]",
            "dls lr, {n}",
            "2:",
            "vldrb.s16 q2, [r0]",
            "vldrb.s16 q3, [r0, #8]",
            "add r0, {stride}",
            "vadd.i16 q0, q0, q2",
            "vadd.i16 q1, q1, q3",
            "le lr, 2b",
            "vstrh.16 q0, [{a}]",
            "vstrh.16 q1, [{a}, #16]",
            a = in(reg) acc.as_mut_ptr(),
            n = in(reg) n,
            stride = in(reg) stride,
            inout("r0") x.as_ptr().wrapping_add(at) => _,
            out("lr") _,
            out("q0") _,
            out("q1") _,
            out("q2") _,
            out("q3") _,
            options(nostack),
        );
    }
}

/// The constants of [`add_tables4`]: the output's multiplier, right shift (1..=31), zero
/// point and clamp (`add::FastParams`' output side), and the inputs' build-time tables of
/// `2 * s(x)` indexed by the byte `x as u8` (`add::fast_tables_s8`).
pub(crate) struct AddTables<'a> {
    pub(crate) t1: &'a [i32; 256],
    pub(crate) t2: &'a [i32; 256],
    pub(crate) multiplier: i32,
    pub(crate) shift: i32,
    pub(crate) zero_point: i32,
    pub(crate) min: i32,
    pub(crate) max: i32,
}

/// Where [`add_tables4`] reads and writes: two inputs and an output of `n` bytes, the output
/// possibly one of the inputs (in place). Only the safe constructors below make one.
struct AddOperands {
    a: *const i8,
    b: *const i8,
    out: *mut i8,
    n: usize,
}

impl AddOperands {
    fn new(a: &[i8], b: &[i8], out: &mut [i8]) -> Self {
        let n = a.len().min(b.len()).min(out.len());
        let (a, b, out) = (a.as_ptr(), b.as_ptr(), out.as_mut_ptr());
        AddOperands { a, b, out, n }
    }

    fn in_place1(a_out: &mut [i8], b: &[i8]) -> Self {
        let n = a_out.len().min(b.len());
        let out = a_out.as_mut_ptr();
        AddOperands {
            a: out,
            b: b.as_ptr(),
            out,
            n,
        }
    }

    fn in_place2(a: &[i8], b_out: &mut [i8]) -> Self {
        let n = a.len().min(b_out.len());
        let out = b_out.as_mut_ptr();
        AddOperands {
            a: a.as_ptr(),
            b: out,
            out,
            n,
        }
    }
}

/// Int8 ADD on the inputs' rescaling tables, four elements per step in int32 lanes:
/// `out[i] = clamp(rshift(VRMULH(t1[a[i]] + t2[b[i]], multiplier)) + zero_point)`, exactly
/// `add::add_s8_fast_tables`' element function. The bytes are widened as unsigned
/// (`VLDRB.U32`), so they are the tables' indices; the two lookups are gathers
/// (`VLDRW.U32 q, [t, q, UXTW #2]`); `VRMULH` is `SMMULR` per lane; the rounding shift is
/// the `y >> 31` fixup and `VRSHL` by the negated shift (as [`requantize4`]); the zero point
/// is added after the shift, which equals `add::FastParams::output_round`'s form
/// (`2^(e-1) + zo * 2^e` before it) exactly.
#[inline(always)]
fn add_tables4(k: &AddTables<'_>, o: AddOperands) {
    if o.n == 0 || !(1..=31).contains(&k.shift) {
        return;
    }
    // SAFETY: see the module documentation: `o` comes from slices of at least `o.n` bytes
    // each (its constructors), the loop reads `[0, n)` of `a` and `b` and writes `[0, n)` of
    // `out` (tail predication disables the lanes past `n`); in place, each step loads its
    // four bytes of both inputs before it stores the four output bytes over one of them.
    // The gathers read `t1[i]`, `t2[i]` for bytes `i < 256`, inside the tables. `n > 0`.
    unsafe {
        asm!(
            "vdup.32 q4, {m}",
            "vdup.32 q5, {min}",
            "vdup.32 q6, {max}",
            "dlstp.32 lr, {n}",
            "2:",
            "vldrb.u32 q0, [r0], #4",
            "vldrb.u32 q1, [r1], #4",
            "vldrw.u32 q2, [{t1}, q0, uxtw #2]",
            "vldrw.u32 q3, [{t2}, q1, uxtw #2]",
            "vadd.i32 q2, q2, q3",
            "vrmulh.s32 q2, q2, q4",
            "vshr.s32 q3, q2, #31",
            "vadd.i32 q2, q2, q3",
            "vrshl.s32 q2, {ne}",
            "vadd.i32 q2, q2, {zo}",
            "vmax.s32 q2, q2, q5",
            "vmin.s32 q2, q2, q6",
            "vstrb.32 q2, [r2], #4",
            "letp lr, 2b",
            m = in(reg) k.multiplier,
            min = in(reg) k.min,
            max = in(reg) k.max,
            n = in(reg) o.n,
            t1 = in(reg) k.t1.as_ptr(),
            t2 = in(reg) k.t2.as_ptr(),
            ne = in(reg) -k.shift,
            zo = in(reg) k.zero_point,
            inout("r0") o.a => _,
            inout("r1") o.b => _,
            inout("r2") o.out => _,
            out("lr") _,
            out("q0") _,
            out("q1") _,
            out("q2") _,
            out("q3") _,
            out("q4") _,
            out("q5") _,
            out("q6") _,
            options(nostack),
        );
    }
}

/// [`add_tables4`] of `a` and `b` into `out` (the shortest length).
#[inline(always)]
pub(crate) fn add_s8_tables4(k: &AddTables<'_>, a: &[i8], b: &[i8], out: &mut [i8]) {
    add_tables4(k, AddOperands::new(a, b, out));
}

/// [`add_tables4`] with the output over input 1.
#[inline(always)]
pub(crate) fn add_s8_tables4_in_place1(k: &AddTables<'_>, a_out: &mut [i8], b: &[i8]) {
    add_tables4(k, AddOperands::in_place1(a_out, b));
}

/// [`add_tables4`] with the output over input 2.
#[inline(always)]
pub(crate) fn add_s8_tables4_in_place2(k: &AddTables<'_>, a: &[i8], b_out: &mut [i8]) {
    add_tables4(k, AddOperands::in_place2(a, b_out));
}

/// Copies the first `min(dst.len(), src.len())` bytes of `src` into `dst`: a
/// tail-predicated loop of 16-byte loads and stores (`VLDRB.U8`, `VSTRB.8`), for the short
/// runs of an im2col row, where a `memcpy` call costs more than the copy.
#[inline(always)]
pub(crate) fn copy_bytes(dst: &mut [i8], src: &[i8]) {
    let n = dst.len().min(src.len());
    if n == 0 {
        return;
    }
    // SAFETY: see the module documentation: the loop reads `[0, n)` of `src` and writes
    // `[0, n)` of `dst` (tail predication disables the lanes past `n`; a disabled lane
    // accesses no memory), both at least `n` long; `n > 0`.
    unsafe {
        asm!(
            "dlstp.8 lr, {n}",
            "2:",
            "vldrb.u8 q0, [{s}], #16",
            "vstrb.8 q0, [{d}], #16",
            "letp lr, 2b",
            n = in(reg) n,
            s = inout(reg) src.as_ptr() => _,
            d = inout(reg) dst.as_mut_ptr() => _,
            out("lr") _,
            out("q0") _,
            options(nostack),
        );
    }
}

/// An im2col window of short rows with taps outside the input: `dst[..len]` set to `v`
/// (tail-predicated 16-byte stores), then `rows` runs of `mid <= 16` bytes copied over it,
/// run `r` from `src[at + r * stride..]` to `dst[to + r * step..]`, each one predicated load
/// and store (`VCTP.8 mid` set once). Nothing is written unless `dst` holds `len` bytes and
/// every run lies inside `src` and `dst[..len]`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn window_short(
    dst: &mut [i8],
    len: usize,
    v: i8,
    src: &[i8],
    at: usize,
    stride: usize,
    to: usize,
    step: usize,
    rows: usize,
    mid: usize,
) {
    let last = |start: usize, gap: usize| {
        rows.checked_sub(1)
            .and_then(|r| r.checked_mul(gap))
            .and_then(|o| o.checked_add(start))
            .and_then(|o| o.checked_add(mid))
    };
    if len == 0 || len > dst.len() {
        return;
    }
    let runs = rows > 0 && mid > 0;
    if runs
        && (mid > 16
            || last(at, stride).is_none_or(|e| e > src.len())
            || last(to, step).is_none_or(|e| e > len))
    {
        return;
    }
    // SAFETY: see the module documentation: the fill writes `[0, len)` of `dst` (tail
    // predication, `len > 0`); run `r < rows` reads `[at + r * stride, + mid)` of `src`
    // and writes `[to + r * step, + mid)` of `dst`, inside `src` and `dst[..len]` as
    // checked above (`VCTP.8 mid` enables the first `mid <= 16` lanes; a disabled lane
    // accesses no memory); no runs unless `rows > 0` and `mid > 0`.
    unsafe {
        asm!(
            "vdup.8 q0, {v}",
            "dlstp.8 lr, {len}",
            "2:",
            "vstrb.8 q0, [{f}], #16",
            "letp lr, 2b",
            "cmp {rows}, #0",
            "beq 4f",
            "vctp.8 {mid}",
            "3:",
            "vpstt",
            "vldrbt.u8 q0, [{s}]",
            "vstrbt.8 q0, [{d}]",
            "add {s}, {stride}",
            "add {d}, {step}",
            "subs {rows}, #1",
            "bne 3b",
            "4:",
            v = in(reg) v as i32,
            len = in(reg) len,
            f = inout(reg) dst.as_mut_ptr() => _,
            rows = inout(reg) if runs { rows } else { 0 } => _,
            mid = in(reg) mid,
            s = inout(reg) src.as_ptr().wrapping_add(at) => _,
            d = inout(reg) dst.as_mut_ptr().wrapping_add(to) => _,
            stride = in(reg) stride,
            step = in(reg) step,
            out("lr") _,
            out("q0") _,
            options(nostack),
        );
    }
}

/// Sets every byte of `dst` to `v`: a tail-predicated loop of 16-byte stores (`VSTRB.8` of
/// `VDUP.8 v`).
#[inline(always)]
pub(crate) fn fill_bytes(dst: &mut [i8], v: i8) {
    let n = dst.len();
    if n == 0 {
        return;
    }
    // SAFETY: see the module documentation: the loop writes `[0, n)` of `dst` (tail
    // predication disables the lanes past `n`), `n > 0`.
    unsafe {
        asm!(
            "vdup.8 q0, {v}",
            "dlstp.8 lr, {n}",
            "2:",
            "vstrb.8 q0, [{d}], #16",
            "letp lr, 2b",
            n = in(reg) n,
            v = in(reg) v as i32,
            d = inout(reg) dst.as_mut_ptr() => _,
            out("lr") _,
            out("q0") _,
            options(nostack),
        );
    }
}

/// One pixel times `4g` channels, requantized and stored, the loop over the channel groups
/// in the block: the first `4g` of `out` (`g = min(out.len(), bias.len(), ...) / 4`)
/// become `requantize(x . w_o + bias[o])` for the rows `w_o = w[ok..(o + 1)k]`, as
/// a four-row dot product then [`requantize4`] per group, without leaving the registers between the
/// groups (the pointers that do not fit live in a small state table, loaded and stored by
/// one `LDM`/`STM` per group). Returns the channels done, `4g` (0 if a slice is short or
/// `k == 0`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn one_pixel_by4(
    k: usize,
    x: &[i8],
    w: &[i8],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out: &mut [i8],
) -> usize {
    let n4 = out.len().min(bias.len()).min(m.len()).min(e.len()) / 4 * 4;
    let (Some(x), Some(w)) = (x.get(..k), w.get(..n4.saturating_mul(k))) else {
        return 0;
    };
    if k == 0 || n4 == 0 || w.len() != n4 * k {
        return 0;
    }
    // x, the group's weights, bias, multipliers, shifts, output; the output's end.
    let mut state: [usize; 7] = [
        x.as_ptr() as usize,
        w.as_ptr() as usize,
        bias.as_ptr() as usize,
        m.as_ptr() as usize,
        e.as_ptr() as usize,
        out.as_mut_ptr() as usize,
        out.as_mut_ptr().wrapping_add(n4) as usize,
    ];
    // SAFETY: see the module documentation. Per group `j < n4 / 4` (the loop ends when the
    // output pointer reaches `out + n4`, after at least one group since `n4 >= 4`) the block
    // reads `x[..k]` (`k > 0`, `x` is `k` long), the four rows `w[(4j + i)k..(4j + i + 1)k]`
    // (inside `w`, `n4 * k` long), 4 aligned `i32`s at `4j` of `bias`, `m`, `e` (each at
    // least `n4` long), and writes the 4 bytes at `4j` of `out` (`n4 <= out.len()`) and
    // the state table (`state`, 7 words, the block's own).
    unsafe {
        asm!(
            "vdup.32 q5, r0",
            "vdup.32 q6, r2",
            "vdup.32 q7, r4",
            "3:",
            "ldm r12, {{r1, r3, r5}}",
            "ldrd r0, r2, [r5]",
            "ldrd r4, r8, [r5, #8]",
            "add r5, r3, r11",
            "add r9, r5, r11",
            "add r10, r9, r11",
            "dlstp.8 lr, r11",
            "2:",
            "vldrb.u8 q0, [r1], #16",
            "vldrb.u8 q1, [r3], #16",
            "vldrb.u8 q2, [r5], #16",
            "vldrb.u8 q3, [r9], #16",
            "vldrb.u8 q4, [r10], #16",
            "vmladava.s8 r0, q0, q1",
            "vmladava.s8 r2, q0, q2",
            "vmladava.s8 r4, q0, q3",
            "vmladava.s8 r8, q0, q4",
            "letp lr, 2b",
            "vmov.32 q0[0], r0",
            "vmov.32 q0[1], r2",
            "vmov.32 q0[2], r4",
            "vmov.32 q0[3], r8",
            "ldm r12, {{r0, r1, r2, r3, r4, r5}}",
            "add.w r1, r1, r11, lsl #2",
            "adds r2, #16",
            "vldrw.u32 q1, [r3], #16",
            "vldrw.u32 q2, [r4], #16",
            "vqrdmulh.s32 q0, q0, q1",
            "vneg.s32 q2, q2",
            "vshr.s32 q3, q0, #31",
            "vadd.i32 q0, q0, q3",
            "vrshl.s32 q0, q0, q2",
            "vadd.i32 q0, q0, q5",
            "vmax.s32 q0, q0, q6",
            "vmin.s32 q0, q0, q7",
            "vstrb.32 q0, [r5], #4",
            "stm r12, {{r0, r1, r2, r3, r4, r5}}",
            "ldr r0, [r12, #24]",
            "cmp r5, r0",
            "bne 3b",
            inout("r0") q.offset => _,
            out("r1") _,
            inout("r2") q.min => _,
            out("r3") _,
            inout("r4") q.max => _,
            out("r5") _,
            out("r8") _,
            out("r9") _,
            out("r10") _,
            in("r11") k,
            in("r12") state.as_mut_ptr(),
            out("lr") _,
            out("q0") _,
            out("q1") _,
            out("q2") _,
            out("q3") _,
            out("q4") _,
            out("q5") _,
            out("q6") _,
            out("q7") _,
            options(nostack),
        );
    }
    n4
}

/// Copies `rows` runs of `len` bytes, run `r` from `src[r * stride..]` to
/// `dst[r * len..]` (an im2col window inside the input: `kh` rows of `kw * c` bytes), in
/// one block of tail-predicated 16-byte loops. Nothing is copied unless `src` and `dst`
/// hold them all.
#[inline(always)]
pub(crate) fn copy_rows(dst: &mut [i8], src: &[i8], rows: usize, len: usize, stride: usize) {
    let src_end = rows
        .checked_sub(1)
        .and_then(|r| r.checked_mul(stride))
        .and_then(|s| s.checked_add(len));
    let dst_end = rows.checked_mul(len);
    let (Some(src_end), Some(dst_end)) = (src_end, dst_end) else {
        return;
    };
    if len == 0 || src_end > src.len() || dst_end > dst.len() {
        return;
    }
    // SAFETY: for row `r < rows` (`rows > 0`) the loop reads `[r * stride, r * stride +
    // len)` of `src`, the last ending at `src_end <= src.len()`, and writes `[r * len, (r +
    // 1) * len)` of `dst`, below `dst_end <= dst.len()`; `len > 0`.
    unsafe { copy_rows_raw(dst.as_mut_ptr(), src.as_ptr(), rows, len, stride) };
}

/// Three windows of an im2col at once: window `i < 3` is `rows` runs of `len` bytes, run
/// `r` from `src[i * step + r * stride..]`, copied to `dst[i * k + r * len..]`, as three
/// [`copy_rows`] with the bounds checked once. Nothing is copied unless `src` and `dst`
/// hold them all and a window's runs fit in its `k` bytes.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn copy_windows3(
    dst: &mut [i8],
    k: usize,
    src: &[i8],
    step: usize,
    rows: usize,
    len: usize,
    stride: usize,
) {
    let src_end = rows
        .checked_sub(1)
        .and_then(|r| r.checked_mul(stride))
        .and_then(|s| s.checked_add(len))
        .and_then(|s| s.checked_add(step.checked_mul(2)?));
    let run = rows.checked_mul(len);
    let (Some(src_end), Some(run)) = (src_end, run) else {
        return;
    };
    let dst_end = k.checked_mul(2).and_then(|d| d.checked_add(run));
    if len == 0 || run > k || src_end > src.len() || dst_end.is_none_or(|d| d > dst.len()) {
        return;
    }
    for i in 0..3 {
        // SAFETY: window `i <= 2` reads rows `r < rows` (`rows > 0`) at `[i * step + r *
        // stride, i * step + r * stride + len)` of `src`, the last ending at most at
        // `src_end <= src.len()`, and writes `[i * k + r * len, i * k + (r + 1) * len)` of
        // `dst`, below `2k + rows * len = dst_end <= dst.len()` (`rows * len <= k`);
        // `len > 0`.
        unsafe {
            copy_rows_raw(
                dst.as_mut_ptr().wrapping_add(i * k),
                src.as_ptr().wrapping_add(i * step),
                rows,
                len,
                stride,
            )
        };
    }
}

/// The loop of [`copy_rows`] and [`copy_windows3`].
///
/// # Safety
///
/// `rows > 0`, `len > 0`; for `r < rows`, `src + r * stride` has `len` readable bytes and
/// `dst + r * len` `len` writable ones (not overlapping them).
#[inline(always)]
unsafe fn copy_rows_raw(dst: *mut i8, src: *const i8, rows: usize, len: usize, stride: usize) {
    // Runs of whole 16-byte steps: the loop leaves the pointers at the run's end, so the
    // next run's are one addition away.
    if len.is_multiple_of(16) {
        // SAFETY: as below; each run is `len / 16` whole steps (`len > 0`), after which `s`
        // and `d` are `len` past the run's start: adding `stride - len` (modulo `2^32`, so
        // `s + stride` in all) gives the next source run, and the destination runs are
        // contiguous. Run `r` reads `len` bytes at `src + r * stride` and writes `len` at
        // `dst + r * len`, as the contract allows.
        unsafe {
            asm!(
                "3:",
                "dlstp.8 lr, {len}",
                "2:",
                "vldrb.u8 q0, [{s}], #16",
                "vstrb.8 q0, [{d}], #16",
                "letp lr, 2b",
                "add {s}, {s}, {gap}",
                "subs {rows}, #1",
                "bne 3b",
                s = inout(reg) src => _,
                d = inout(reg) dst => _,
                len = in(reg) len,
                gap = in(reg) stride.wrapping_sub(len),
                rows = inout(reg) rows => _,
                out("lr") _,
                out("q0") _,
                options(nostack),
            );
        }
        return;
    }
    // Runs of at most 16 bytes (the windows of a few channels, e.g. an audio model's
    // first convolution over one channel): one predicated load and store per run, the
    // predicate (`VCTP.8 len`) set once.
    if len <= 16 {
        // SAFETY: as below: run `r < rows` (`rows > 0`) reads the `len` bytes at `src + r *
        // stride` and writes the `len` at `dst + r * len` (`VCTP.8 len` enables the first
        // `len` lanes only; a disabled lane accesses no memory; `VPSTT` predicates the load
        // and the store).
        unsafe {
            asm!(
                "vctp.8 {len}",
                "2:",
                "vpstt",
                "vldrbt.u8 q0, [{s}]",
                "vstrbt.8 q0, [{d}]",
                "add {s}, {stride}",
                "add {d}, {len}",
                "subs {rows}, #1",
                "bne 2b",
                s = inout(reg) src => _,
                d = inout(reg) dst => _,
                len = in(reg) len,
                stride = in(reg) stride,
                rows = inout(reg) rows => _,
                out("q0") _,
                options(nostack),
            );
        }
        return;
    }
    // SAFETY: see the module documentation and the function's contract (tail predication
    // disables the lanes past `len`: a disabled lane accesses no memory).
    unsafe {
        asm!(
            "3:",
            "mov {sw}, {s}",
            "mov {dw}, {d}",
            "dlstp.8 lr, {len}",
            "2:",
            "vldrb.u8 q0, [{sw}], #16",
            "vstrb.8 q0, [{dw}], #16",
            "letp lr, 2b",
            "add {s}, {s}, {stride}",
            "add {d}, {d}, {len}",
            "subs {rows}, #1",
            "bne 3b",
            s = inout(reg) src => _,
            d = inout(reg) dst => _,
            sw = out(reg) _,
            dw = out(reg) _,
            len = in(reg) len,
            stride = in(reg) stride,
            rows = inout(reg) rows => _,
            out("lr") _,
            out("q0") _,
            options(nostack),
        );
    }
}

/// [`one_pixel_by4`] for two pixels at once (`x0`, `x1`, `k` bytes each, into `out0`,
/// `out1`): per group of four channels two loops of two pixels by two channels (each
/// weight and pixel load feeds two `VMLADAVA`s: 9 instructions per 16 bytes of four dot
/// products, against 10 for one pixel by four channels), then both pixels requantized
/// with the group's multipliers and shifts loaded once. Returns the channels done, `4g` (0 if a
/// slice is short or `k == 0`).
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
    q: &crate::gemm::Output,
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
    // x0, x1, the group's weights, out0, out1, multipliers, shifts; out0's end. The
    // bias pointer lives in `r10` (the loops leave it alone).
    let mut state: [usize; 8] = [
        x0.as_ptr() as usize,
        x1.as_ptr() as usize,
        w.as_ptr() as usize,
        out0.as_mut_ptr() as usize,
        out1.as_mut_ptr() as usize,
        m.as_ptr() as usize,
        e.as_ptr() as usize,
        out0.as_mut_ptr().wrapping_add(n4) as usize,
    ];
    // SAFETY: see the module documentation. Per group `j < n4 / 4` (the loop ends when the
    // first output pointer reaches `out0 + n4`, after at least one group since `n4 >= 4`)
    // the block reads `x0[..k]` and `x1[..k]` (`k > 0`, both `k` long), the four rows
    // `w[(4j + i)k..(4j + i + 1)k]` (inside `w`, `n4 * k` long: the first pair of loops
    // reads rows `4j`, `4j + 1` from the group's start, the second rows `4j + 2`, `4j + 3`
    // from `2k` after it), 4 aligned `i32`s at `4j` of `bias`, `m`, `e` (each at least `n4`
    // long), and writes the 4 bytes at `4j` of `out0` and of `out1` (both at least `n4`
    // long) and the state table (`state`, 8 words, the block's own).
    unsafe {
        asm!(
            "vdup.32 q5, r0",
            "vdup.32 q6, r2",
            "vdup.32 q7, r4",
            "3:",
            // Channels 0 and 1 of the group, both pixels: rows `w`, `w + k`; the
            // accumulators (pixel 0: r0, r2; pixel 1: r4, r8) from the bias.
            "ldm r12, {{r1, r3, r5}}",
            "ldrd r0, r2, [r10]",
            "ldrd r4, r8, [r10]",
            "add r9, r5, r11",
            "dlstp.8 lr, r11",
            "2:",
            "vldrb.u8 q0, [r1], #16",
            "vldrb.u8 q1, [r3], #16",
            "vldrb.u8 q2, [r5], #16",
            "vmladava.s8 r0, q0, q2",
            "vmladava.s8 r4, q1, q2",
            "vldrb.u8 q2, [r9], #16",
            "vmladava.s8 r2, q0, q2",
            "vmladava.s8 r8, q1, q2",
            "letp lr, 2b",
            "vmov.32 q3[0], r0",
            "vmov.32 q3[1], r2",
            "vmov.32 q4[0], r4",
            "vmov.32 q4[1], r8",
            // Channels 2 and 3: rows `w + 2k`, `w + 3k`.
            "ldm r12, {{r1, r3, r5}}",
            "ldrd r0, r2, [r10, #8]",
            "ldrd r4, r8, [r10, #8]",
            "add.w r5, r5, r11, lsl #1",
            "add r9, r5, r11",
            "dlstp.8 lr, r11",
            "2:",
            "vldrb.u8 q0, [r1], #16",
            "vldrb.u8 q1, [r3], #16",
            "vldrb.u8 q2, [r5], #16",
            "vmladava.s8 r0, q0, q2",
            "vmladava.s8 r4, q1, q2",
            "vldrb.u8 q2, [r9], #16",
            "vmladava.s8 r2, q0, q2",
            "vmladava.s8 r8, q1, q2",
            "letp lr, 2b",
            "vmov.32 q3[2], r0",
            "vmov.32 q3[3], r2",
            "vmov.32 q4[2], r4",
            "vmov.32 q4[3], r8",
            // weights, out0, out1, m, e, end.
            "add r0, r12, #8",
            "ldm r0, {{r1, r2, r3, r4, r5, r8}}",
            "add.w r1, r1, r11, lsl #2",
            "adds r10, #16",
            "vldrw.u32 q1, [r4], #16",
            "vldrw.u32 q0, [r5], #16",
            "vneg.s32 q0, q0",
            "vqrdmulh.s32 q3, q3, q1",
            "vqrdmulh.s32 q4, q4, q1",
            "vshr.s32 q2, q3, #31",
            "vadd.i32 q3, q3, q2",
            "vshr.s32 q2, q4, #31",
            "vadd.i32 q4, q4, q2",
            "vrshl.s32 q3, q3, q0",
            "vrshl.s32 q4, q4, q0",
            "vadd.i32 q3, q3, q5",
            "vadd.i32 q4, q4, q5",
            "vmax.s32 q3, q3, q6",
            "vmax.s32 q4, q4, q6",
            "vmin.s32 q3, q3, q7",
            "vmin.s32 q4, q4, q7",
            "vstrb.32 q3, [r2], #4",
            "vstrb.32 q4, [r3], #4",
            "stm r0, {{r1, r2, r3, r4, r5}}",
            "cmp r2, r8",
            "bne 3b",
            inout("r0") q.offset => _,
            out("r1") _,
            inout("r2") q.min => _,
            out("r3") _,
            inout("r4") q.max => _,
            out("r5") _,
            out("r8") _,
            out("r9") _,
            inout("r10") bias.as_ptr() => _,
            in("r11") k,
            in("r12") state.as_mut_ptr(),
            out("lr") _,
            out("q0") _,
            out("q1") _,
            out("q2") _,
            out("q3") _,
            out("q4") _,
            out("q5") _,
            out("q6") _,
            out("q7") _,
            options(nostack),
        );
    }
    n4
}

/// The group loop of [`three_pixels_by4`] and [`pixels_by3`] from its label `3:` to the
/// write-back of a group's multipliers, shifts and output pointers: see
/// [`three_pixels_by4`]. On its end `r12` holds the state table, `r3` the first output
/// pointer and `r8` its end.
macro_rules! three_by4_group {
    () => {
        concat!(
            "3:\n",
            // Channels 0 and 1 of the group: rows `w` (r1), `w + k` (r11); accumulators
            // pixel 0: r0, r2; pixel 1: r4, r8; pixel 2: r10, r12, from the bias; pixels
            // at r3, r5, r9.
            "vmov s28, r12\n",
            "ldm r12, {{r0, r1, r3, r5, r9, lr}}\n",
            "add.w r11, r1, lr\n",
            "ldrd r4, r8, [r0]\n",
            "ldrd r10, r12, [r0]\n",
            "ldrd r0, r2, [r0]\n",
            "dlstp.8 lr, lr\n",
            "2:\n",
            "vldrb.u8 q0, [r3], #16\n",
            "vldrb.u8 q1, [r5], #16\n",
            "vldrb.u8 q2, [r9], #16\n",
            "vldrb.u8 q3, [r1], #16\n",
            "vmladava.s8 r0, q0, q3\n",
            "vmladava.s8 r4, q1, q3\n",
            "vmladava.s8 r10, q2, q3\n",
            "vldrb.u8 q3, [r11], #16\n",
            "vmladava.s8 r2, q0, q3\n",
            "vmladava.s8 r8, q1, q3\n",
            "vmladava.s8 r12, q2, q3\n",
            "letp lr, 2b\n",
            "vmov lr, s28\n",
            "strd r0, r2, [lr, #64]\n",
            "strd r4, r8, [lr, #80]\n",
            "strd r10, r12, [lr, #96]\n",
            // Channels 2 and 3: rows `w + 2k`, `w + 3k`.
            "ldm lr, {{r0, r1, r3, r5, r9, lr}}\n",
            "add.w r1, r1, lr, lsl #1\n",
            "add.w r11, r1, lr\n",
            "ldrd r4, r8, [r0, #8]\n",
            "ldrd r10, r12, [r0, #8]\n",
            "ldrd r0, r2, [r0, #8]\n",
            "dlstp.8 lr, lr\n",
            "2:\n",
            "vldrb.u8 q0, [r3], #16\n",
            "vldrb.u8 q1, [r5], #16\n",
            "vldrb.u8 q2, [r9], #16\n",
            "vldrb.u8 q3, [r1], #16\n",
            "vmladava.s8 r0, q0, q3\n",
            "vmladava.s8 r4, q1, q3\n",
            "vmladava.s8 r10, q2, q3\n",
            "vldrb.u8 q3, [r11], #16\n",
            "vmladava.s8 r2, q0, q3\n",
            "vmladava.s8 r8, q1, q3\n",
            "vmladava.s8 r12, q2, q3\n",
            "letp lr, 2b\n",
            "vmov lr, s28\n",
            "strd r0, r2, [lr, #72]\n",
            "strd r4, r8, [lr, #88]\n",
            "strd r10, r12, [lr, #104]\n",
            // The requantization, the state table at `r12`.
            "mov r12, lr\n",
            "vldrw.u32 q5, [r12, #64]\n",
            "vldrw.u32 q6, [r12, #80]\n",
            "vldrw.u32 q7, [r12, #96]\n",
            // The next group's bias and weights (`4k` on).
            "ldrd r0, r1, [r12]\n",
            "ldr r2, [r12, #20]\n",
            "adds r0, #16\n",
            "add.w r1, r1, r2, lsl #2\n",
            "strd r0, r1, [r12]\n",
            // Multipliers, shifts, out0, out1, out2, end, offset, min.
            "add r0, r12, #24\n",
            "ldm r0, {{r1, r2, r3, r4, r5, r8, r9, r10}}\n",
            "vldrw.u32 q0, [r1], #16\n",
            "vldrw.u32 q1, [r2], #16\n",
            "vneg.s32 q1, q1\n",
            "vdup.32 q3, r10\n",
            "vqrdmulh.s32 q5, q5, q0\n",
            "vqrdmulh.s32 q6, q6, q0\n",
            "vqrdmulh.s32 q7, q7, q0\n",
            "vshr.s32 q2, q5, #31\n",
            "vadd.i32 q5, q5, q2\n",
            "vshr.s32 q2, q6, #31\n",
            "vadd.i32 q6, q6, q2\n",
            "vshr.s32 q2, q7, #31\n",
            "vadd.i32 q7, q7, q2\n",
            "vrshl.s32 q5, q5, q1\n",
            "vrshl.s32 q6, q6, q1\n",
            "vrshl.s32 q7, q7, q1\n",
            "vadd.i32 q5, q5, r9\n",
            "vadd.i32 q6, q6, r9\n",
            "vadd.i32 q7, q7, r9\n",
            "vmax.s32 q5, q5, q3\n",
            "vmax.s32 q6, q6, q3\n",
            "vmax.s32 q7, q7, q3\n",
            "vmin.s32 q5, q5, q4\n",
            "vmin.s32 q6, q6, q4\n",
            "vmin.s32 q7, q7, q4\n",
            "vstrb.32 q5, [r3], #4\n",
            "vstrb.32 q6, [r4], #4\n",
            "vstrb.32 q7, [r5], #4\n",
            "stm r0, {{r1, r2, r3, r4, r5}}\n",
        )
    };
}

/// [`three_by4_group`] for eight channels per group: four loops of three pixels by two
/// channels (the accumulators into the state table's bytes 64..160), then the two halves
/// requantized with the group's bookkeeping (bias, weights, the pointers' write-back, the
/// loop test) done once.
macro_rules! three_by8_group {
    () => {
        concat!(
            "3:\n",
            // Channels 0 and 1 of the group (rows `w`, `w + k`), as `three_by4_group`.
            "vmov s28, r12\n",
            "ldm r12, {{r0, r1, r3, r5, r9, lr}}\n",
            "add.w r11, r1, lr\n",
            "ldrd r4, r8, [r0]\n",
            "ldrd r10, r12, [r0]\n",
            "ldrd r0, r2, [r0]\n",
            "dlstp.8 lr, lr\n",
            "2:\n",
            "vldrb.u8 q0, [r3], #16\n",
            "vldrb.u8 q1, [r5], #16\n",
            "vldrb.u8 q2, [r9], #16\n",
            "vldrb.u8 q3, [r1], #16\n",
            "vmladava.s8 r0, q0, q3\n",
            "vmladava.s8 r4, q1, q3\n",
            "vmladava.s8 r10, q2, q3\n",
            "vldrb.u8 q3, [r11], #16\n",
            "vmladava.s8 r2, q0, q3\n",
            "vmladava.s8 r8, q1, q3\n",
            "vmladava.s8 r12, q2, q3\n",
            "letp lr, 2b\n",
            "vmov lr, s28\n",
            "strd r0, r2, [lr, #64]\n",
            "strd r4, r8, [lr, #80]\n",
            "strd r10, r12, [lr, #96]\n",
            // Channels 2 and 3: rows `w + 2k`, `w + 3k`.
            "ldm lr, {{r0, r1, r3, r5, r9, lr}}\n",
            "add.w r1, r1, lr, lsl #1\n",
            "add.w r11, r1, lr\n",
            "ldrd r4, r8, [r0, #8]\n",
            "ldrd r10, r12, [r0, #8]\n",
            "ldrd r0, r2, [r0, #8]\n",
            "dlstp.8 lr, lr\n",
            "2:\n",
            "vldrb.u8 q0, [r3], #16\n",
            "vldrb.u8 q1, [r5], #16\n",
            "vldrb.u8 q2, [r9], #16\n",
            "vldrb.u8 q3, [r1], #16\n",
            "vmladava.s8 r0, q0, q3\n",
            "vmladava.s8 r4, q1, q3\n",
            "vmladava.s8 r10, q2, q3\n",
            "vldrb.u8 q3, [r11], #16\n",
            "vmladava.s8 r2, q0, q3\n",
            "vmladava.s8 r8, q1, q3\n",
            "vmladava.s8 r12, q2, q3\n",
            "letp lr, 2b\n",
            "vmov lr, s28\n",
            "strd r0, r2, [lr, #72]\n",
            "strd r4, r8, [lr, #88]\n",
            "strd r10, r12, [lr, #104]\n",
            // Channels 4 and 5: rows `w + 4k`, `w + 5k`.
            "ldm lr, {{r0, r1, r3, r5, r9, lr}}\n",
            "add.w r1, r1, lr, lsl #2\n",
            "add.w r11, r1, lr\n",
            "ldrd r4, r8, [r0, #16]\n",
            "ldrd r10, r12, [r0, #16]\n",
            "ldrd r0, r2, [r0, #16]\n",
            "dlstp.8 lr, lr\n",
            "2:\n",
            "vldrb.u8 q0, [r3], #16\n",
            "vldrb.u8 q1, [r5], #16\n",
            "vldrb.u8 q2, [r9], #16\n",
            "vldrb.u8 q3, [r1], #16\n",
            "vmladava.s8 r0, q0, q3\n",
            "vmladava.s8 r4, q1, q3\n",
            "vmladava.s8 r10, q2, q3\n",
            "vldrb.u8 q3, [r11], #16\n",
            "vmladava.s8 r2, q0, q3\n",
            "vmladava.s8 r8, q1, q3\n",
            "vmladava.s8 r12, q2, q3\n",
            "letp lr, 2b\n",
            "vmov lr, s28\n",
            "strd r0, r2, [lr, #112]\n",
            "strd r4, r8, [lr, #128]\n",
            "strd r10, r12, [lr, #144]\n",
            // Channels 6 and 7: rows `w + 6k`, `w + 7k`.
            "ldm lr, {{r0, r1, r3, r5, r9, lr}}\n",
            "add.w r11, lr, lr, lsl #1\n",
            "add.w r1, r1, r11, lsl #1\n",
            "add.w r11, r1, lr\n",
            "ldrd r4, r8, [r0, #24]\n",
            "ldrd r10, r12, [r0, #24]\n",
            "ldrd r0, r2, [r0, #24]\n",
            "dlstp.8 lr, lr\n",
            "2:\n",
            "vldrb.u8 q0, [r3], #16\n",
            "vldrb.u8 q1, [r5], #16\n",
            "vldrb.u8 q2, [r9], #16\n",
            "vldrb.u8 q3, [r1], #16\n",
            "vmladava.s8 r0, q0, q3\n",
            "vmladava.s8 r4, q1, q3\n",
            "vmladava.s8 r10, q2, q3\n",
            "vldrb.u8 q3, [r11], #16\n",
            "vmladava.s8 r2, q0, q3\n",
            "vmladava.s8 r8, q1, q3\n",
            "vmladava.s8 r12, q2, q3\n",
            "letp lr, 2b\n",
            "vmov lr, s28\n",
            "strd r0, r2, [lr, #120]\n",
            "strd r4, r8, [lr, #136]\n",
            "strd r10, r12, [lr, #152]\n",
            // The requantization, the state table at `r12`; the next group's bias and weights
            // (`8k` on).
            "mov r12, lr\n",
            "ldrd r0, r1, [r12]\n",
            "ldr r2, [r12, #20]\n",
            "adds r0, #32\n",
            "add.w r1, r1, r2, lsl #3\n",
            "strd r0, r1, [r12]\n",
            // Multipliers, shifts, out0, out1, out2, end, offset, min.
            "add r0, r12, #24\n",
            "ldm r0, {{r1, r2, r3, r4, r5, r8, r9, r10}}\n",
            "vdup.32 q3, r10\n",
            // Channels 0..4 of the three pixels, then 4..8.
            "vldrw.u32 q5, [r12, #64]\n",
            "vldrw.u32 q6, [r12, #80]\n",
            "vldrw.u32 q7, [r12, #96]\n",
            "vldrw.u32 q0, [r1], #16\n",
            "vldrw.u32 q1, [r2], #16\n",
            "vneg.s32 q1, q1\n",
            "vqrdmulh.s32 q5, q5, q0\n",
            "vqrdmulh.s32 q6, q6, q0\n",
            "vqrdmulh.s32 q7, q7, q0\n",
            "vshr.s32 q2, q5, #31\n",
            "vadd.i32 q5, q5, q2\n",
            "vshr.s32 q2, q6, #31\n",
            "vadd.i32 q6, q6, q2\n",
            "vshr.s32 q2, q7, #31\n",
            "vadd.i32 q7, q7, q2\n",
            "vrshl.s32 q5, q5, q1\n",
            "vrshl.s32 q6, q6, q1\n",
            "vrshl.s32 q7, q7, q1\n",
            "vadd.i32 q5, q5, r9\n",
            "vadd.i32 q6, q6, r9\n",
            "vadd.i32 q7, q7, r9\n",
            "vmax.s32 q5, q5, q3\n",
            "vmax.s32 q6, q6, q3\n",
            "vmax.s32 q7, q7, q3\n",
            "vmin.s32 q5, q5, q4\n",
            "vmin.s32 q6, q6, q4\n",
            "vmin.s32 q7, q7, q4\n",
            "vstrb.32 q5, [r3], #4\n",
            "vstrb.32 q6, [r4], #4\n",
            "vstrb.32 q7, [r5], #4\n",
            "vldrw.u32 q5, [r12, #112]\n",
            "vldrw.u32 q6, [r12, #128]\n",
            "vldrw.u32 q7, [r12, #144]\n",
            "vldrw.u32 q0, [r1], #16\n",
            "vldrw.u32 q1, [r2], #16\n",
            "vneg.s32 q1, q1\n",
            "vqrdmulh.s32 q5, q5, q0\n",
            "vqrdmulh.s32 q6, q6, q0\n",
            "vqrdmulh.s32 q7, q7, q0\n",
            "vshr.s32 q2, q5, #31\n",
            "vadd.i32 q5, q5, q2\n",
            "vshr.s32 q2, q6, #31\n",
            "vadd.i32 q6, q6, q2\n",
            "vshr.s32 q2, q7, #31\n",
            "vadd.i32 q7, q7, q2\n",
            "vrshl.s32 q5, q5, q1\n",
            "vrshl.s32 q6, q6, q1\n",
            "vrshl.s32 q7, q7, q1\n",
            "vadd.i32 q5, q5, r9\n",
            "vadd.i32 q6, q6, r9\n",
            "vadd.i32 q7, q7, r9\n",
            "vmax.s32 q5, q5, q3\n",
            "vmax.s32 q6, q6, q3\n",
            "vmax.s32 q7, q7, q3\n",
            "vmin.s32 q5, q5, q4\n",
            "vmin.s32 q6, q6, q4\n",
            "vmin.s32 q7, q7, q4\n",
            "vstrb.32 q5, [r3], #4\n",
            "vstrb.32 q6, [r4], #4\n",
            "vstrb.32 q7, [r5], #4\n",
            "stm r0, {{r1, r2, r3, r4, r5}}\n",
        )
    };
}

/// [`two_pixels_by4`] for three pixels at once (`x0`, `x1`, `x2`, `k` bytes each, into
/// `out0`, `out1`, `out2`): per group of four channels two loops of three pixels by two
/// channels (six `VMLADAVA`s per five 16-byte loads: 12 instructions per 16 bytes of six dot
/// products, against 9 for four with two pixels), then the three pixels requantized with
/// the group's multipliers and shifts loaded once. Returns the channels done, `4g` (0 if a
/// slice is short or `k == 0`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn three_pixels_by4(
    k: usize,
    x: [&[i8]; 3],
    w: &[i8],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out: [&mut [i8]; 3],
) -> usize {
    let [x0, x1, x2] = x;
    let [out0, out1, out2] = out;
    let n4 = out0
        .len()
        .min(out1.len())
        .min(out2.len())
        .min(bias.len())
        .min(m.len())
        .min(e.len())
        / 4
        * 4;
    let (Some(x0), Some(x1), Some(x2), Some(w)) = (
        x0.get(..k),
        x1.get(..k),
        x2.get(..k),
        w.get(..n4.saturating_mul(k)),
    ) else {
        return 0;
    };
    if k == 0 || n4 == 0 || w.len() != n4 * k {
        return 0;
    }
    // The group's bias and weights, x0, x1, x2, k, the multipliers, shifts, out0, out1,
    // out2, out0's end, the output offset, min; then (from word 16) the three pixels'
    // accumulators, four words each.
    // (Uninitialised past the 14 written here: the block writes each group's accumulators
    // before it reads them.)
    let mut state = core::mem::MaybeUninit::<[usize; 40]>::uninit();
    let base = state.as_mut_ptr().cast::<usize>();
    // Written one by one (an array copied in a loop costs three instructions a word).
    // SAFETY: each `base + i` has `i < 14 <= 40`, inside `state`; `write` does not read the
    // uninitialised slots.
    unsafe {
        base.add(0).write(bias.as_ptr() as usize);
        base.add(1).write(w.as_ptr() as usize);
        base.add(2).write(x0.as_ptr() as usize);
        base.add(3).write(x1.as_ptr() as usize);
        base.add(4).write(x2.as_ptr() as usize);
        base.add(5).write(k);
        base.add(6).write(m.as_ptr() as usize);
        base.add(7).write(e.as_ptr() as usize);
        base.add(8).write(out0.as_mut_ptr() as usize);
        base.add(9).write(out1.as_mut_ptr() as usize);
        base.add(10).write(out2.as_mut_ptr() as usize);
        base.add(11)
            .write(out0.as_mut_ptr().wrapping_add(n4) as usize);
        base.add(12).write(q.offset as usize);
        base.add(13).write(q.min as usize);
    }
    // SAFETY: see the module documentation. Per group `j < n4 / 4` (the loop ends when the
    // first output pointer reaches `out0 + n4`, after at least one group since `n4 >= 4`)
    // the block reads `x0[..k]`, `x1[..k]` and `x2[..k]` (`k > 0`, each `k` long), the four
    // rows `w[(4j + i)k..(4j + i + 1)k]` (inside `w`, `n4 * k` long: the first loop reads
    // rows `4j`, `4j + 1` from the group's start, the second rows `4j + 2`, `4j + 3` from
    // `2k` after it), 4 aligned `i32`s at `4j` of `bias`, `m`, `e` (each at least `n4`
    // long), and writes the 4 bytes at `4j` of `out0`, `out1` and `out2` (each at least
    // `n4` long) and the state table (`state`, 40 words, the block's own; the loops'
    // accumulators at bytes 64..112, read back as three aligned vectors). With eight
    // channels per group (`n4 % 8 == 0`: whole groups of eight up to `n4`) the same per
    // pair of such groups, the second half's rows from `4k` after the group's start and
    // its accumulators at bytes 112..160, still inside the table. The state
    // table's address, which no register can hold through the loops (all twelve hold
    // their accumulators and pointers), waits in `s28` (lane 0 of `q7`, which the loops
    // leave alone). `LDM` into its own base register (`lr`, no write-back) takes the
    // loaded value.
    // Eight channels per group where they come in eights (the bookkeeping once per
    // eight), else four.
    macro_rules! run {
        ($group:ident) => {
            unsafe {
                asm!(
                    "vdup.32 q4, r0",
                    $group!(),
                    "cmp r3, r8",
                    "bne 3b",
                    inout("r0") q.max => _,
                    out("r1") _,
                    out("r2") _,
                    out("r3") _,
                    out("r4") _,
                    out("r5") _,
                    out("r8") _,
                    out("r9") _,
                    out("r10") _,
                    out("r11") _,
                    inout("r12") base => _,
                    out("lr") _,
                    out("q0") _,
                    out("q1") _,
                    out("q2") _,
                    out("q3") _,
                    out("q4") _,
                    out("q5") _,
                    out("q6") _,
                    out("q7") _,
                    options(nostack),
                );
            }
        };
    }
    if n4.is_multiple_of(8) {
        run!(three_by8_group);
    } else {
        run!(three_by4_group);
    }
    n4
}

/// [`three_pixels_by4`] over `t` triples of consecutive pixels in one block (a 1x1
/// convolution's pixels, `k` bytes each in `x`, their `n` channels each in `out`; `n` a
/// multiple of 4, the whole of `bias`, `m` and `e`'s first `n`): triple `i` is pixels
/// `3i..3i + 3`. Between triples the block resets the group pointers and steps the pixel
/// and output pointers itself, so a triple costs about 25 instructions of set-up instead
/// of a call's. Returns the pixels done, `3t` (0, nothing written, if a slice is short,
/// `k == 0`, `n == 0` or `n % 4 != 0`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn pixels_by3(
    k: usize,
    t: usize,
    n: usize,
    x: &[i8],
    w: &[i8],
    bias: &[i32],
    m: &[i32],
    e: &[i32],
    q: &crate::gemm::Output,
    out: &mut [i8],
) -> usize {
    let (Some(xs), Some(os)) = (t.checked_mul(3 * k), t.checked_mul(3 * n)) else {
        return 0;
    };
    let (Some(x), Some(w), Some(bias), Some(m), Some(e), Some(out)) = (
        x.get(..xs),
        w.get(..n.saturating_mul(k)),
        bias.get(..n),
        m.get(..n),
        e.get(..n),
        out.get_mut(..os),
    ) else {
        return 0;
    };
    if k == 0 || n == 0 || t == 0 || !n.is_multiple_of(4) || w.len() != n * k {
        return 0;
    }
    let o = out.as_mut_ptr();
    // Words 0..14 as `three_pixels_by4`'s table for the first triple; 14: the triples
    // left; 15: the weights' start; 16..40: the accumulators; 40..46: the bias', the
    // multipliers' and the shifts' starts, `3k`, `2n`, `3n`. (Uninitialised words are
    // written by the block before it reads them.)
    let mut state = core::mem::MaybeUninit::<[usize; 46]>::uninit();
    let base = state.as_mut_ptr().cast::<usize>();
    // SAFETY: each `base + i` below has `i < 46`, inside `state`; `write` does not read the
    // uninitialised slots.
    unsafe {
        base.add(0).write(bias.as_ptr() as usize);
        base.add(1).write(w.as_ptr() as usize);
        base.add(2).write(x.as_ptr() as usize);
        base.add(3).write(x.as_ptr().wrapping_add(k) as usize);
        base.add(4).write(x.as_ptr().wrapping_add(2 * k) as usize);
        base.add(5).write(k);
        base.add(6).write(m.as_ptr() as usize);
        base.add(7).write(e.as_ptr() as usize);
        base.add(8).write(o as usize);
        base.add(9).write(o.wrapping_add(n) as usize);
        base.add(10).write(o.wrapping_add(2 * n) as usize);
        base.add(11).write(o.wrapping_add(n) as usize);
        base.add(12).write(q.offset as usize);
        base.add(13).write(q.min as usize);
        base.add(14).write(t);
        base.add(15).write(w.as_ptr() as usize);
        base.add(40).write(bias.as_ptr() as usize);
        base.add(41).write(m.as_ptr() as usize);
        base.add(42).write(e.as_ptr() as usize);
        base.add(43).write(3 * k);
        base.add(44).write(2 * n);
        base.add(45).write(3 * n);
    }
    // SAFETY: see the module documentation and `three_pixels_by4`: for triple `i < t` the
    // group loop reads pixels `x[(3i + p)k..(3i + p + 1)k]` (`p < 3`, inside `x`, `3tk`
    // long), all `n` rows of `w` (`n * k` long) and `bias`, `m`, `e` (`n` each) four
    // channels per group, and writes the `n` bytes of each of the triple's outputs
    // `out[(3i + p)n..(3i + p + 1)n]` (inside `out`, `3tn` long), the loop ending when the
    // first output pointer reaches its end (`n > 0`, a multiple of 4: at least one group).
    // Between triples (`subs`/`beq` on the count, `t > 0`) the block writes the next
    // triple's pointers into its own table: the pixels `3k` on, the outputs `2n` on from
    // where the groups left them (`n` on from their start), the end `3n` on.
    // Eight channels per group where they come in eights (the bookkeeping once per
    // eight), else four.
    macro_rules! run {
        ($group:ident) => {
            unsafe {
                asm!(
                    "vdup.32 q4, r0",
                    $group!(),
                    "cmp r3, r8",
                    "bne 3b",
                    // The next triple, if any.
                    "ldr r1, [r12, #56]",
                    "subs r1, #1",
                    "beq 9f",
                    "str r1, [r12, #56]",
                    "ldr r0, [r12, #160]",
                    "ldr r1, [r12, #60]",
                    "ldrd r2, r3, [r12, #8]",
                    "ldr r4, [r12, #16]",
                    "ldr r5, [r12, #172]",
                    "add r2, r2, r5",
                    "add r3, r3, r5",
                    "add r4, r4, r5",
                    "stm r12, {{r0, r1, r2, r3, r4}}",
                    "ldrd r0, r1, [r12, #164]",
                    "ldrd r2, r3, [r12, #32]",
                    "ldrd r4, r5, [r12, #40]",
                    "ldrd r8, r9, [r12, #176]",
                    "add r2, r2, r8",
                    "add r3, r3, r8",
                    "add r4, r4, r8",
                    "add r5, r5, r9",
                    "add r10, r12, #24",
                    "stm r10, {{r0, r1, r2, r3, r4, r5}}",
                    "b 3b",
                    "9:",
                    inout("r0") q.max => _,
                    out("r1") _,
                    out("r2") _,
                    out("r3") _,
                    out("r4") _,
                    out("r5") _,
                    out("r8") _,
                    out("r9") _,
                    out("r10") _,
                    out("r11") _,
                    inout("r12") base => _,
                    out("lr") _,
                    out("q0") _,
                    out("q1") _,
                    out("q2") _,
                    out("q3") _,
                    out("q4") _,
                    out("q5") _,
                    out("q6") _,
                    out("q7") _,
                    options(nostack),
                );
            }
        };
    }
    if n.is_multiple_of(8) {
        run!(three_by8_group);
    } else {
        run!(three_by4_group);
    }
    3 * t
}
