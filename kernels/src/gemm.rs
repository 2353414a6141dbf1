//! The int8 matrix products behind the fast kernels of CONV_2D (1x1 directly, any other
//! window through an int8 im2col of two output pixels) and FULLY_CONNECTED, byte-identical
//! with TFLM's reference kernels, on the `arch` microkernels (private: `kernels/src/arch/`).
//!
//! What is done at build time (by [`prepare_layer`], called from the operators' `prepare_fast_*`):
//!
//! * **Folded bias**: the reference sums `w * (x + input_offset)` and adds `bias`; here the
//!   sum is `w * x` and the bias is `bias + input_offset * sum(w)` per output channel. Both
//!   are the same integer (the reference's `int32_t` sum wraps, this one provably does not).
//!   An im2col fills taps outside the input with the input zero point, `x = -input_offset`,
//!   whose products cancel their share of the folded bias, so those taps add 0 as the
//!   reference's skipped taps do.
//! * **Accumulator bound**: [`prepare_layer`] accepts a layer only if every accumulator lies in
//!   `-2^30..2^30` for every possible input (from the weights and the folded bias). Then
//!   `2 * acc` fits an `i32` and gemmlowp's `SaturatingRoundingDoublingHighMul(acc, m)`, i.e.
//!   `floor((acc * m + 2^30) / 2^31)` (its nudge and truncating division give exactly this;
//!   it never saturates since `m >= 2^30`), is one `SMMULR` of `2 * acc` and `m`.
//! * **Shifts**: every channel must shift right by 1..=31 (TFLM's `shift` in -31..=-1).
//!   gemmlowp's `RoundingDivideByPOT(y, e)` (round half away from zero) is
//!   `(y + 2^(e-1) - [y < 0]) >> e`, and that addition cannot overflow: `|y| <= 2^30` since
//!   `|acc| <= 2^30` and `m < 2^31`, so the sum stays below `2^30 + 2^30 = 2^31`.
//!
//! * **Dead channels** (all-zero weights) become the constant they output
//!   ([`prepare_layer`]), whatever their bias and shift.
//!
//! Layers outside these conditions keep the reference kernels.
//!
//! The loops take two output pixels at a time (their `k` inputs are adjacent, `x[..k]` and
//! `x[k..2k]`: consecutive pixels of a 1x1 convolution's input, or the im2col buffer) and two
//! output channels (adjacent filter rows), so each loaded value is used twice. With the DSP
//! microkernels a pixel pair is first widened to int16 lanes in scratch where that pays
//! ([`widen_pays`]); the loops come in two instances, for a full-range clamp (one
//! saturation) and for another, chosen once per layer. With Helium (`kiln_arch = "mve"`) a
//! 16-byte load feeds a whole dot product step, so the loops take one pixel and four output
//! channels at a time and requantize the four at once (`arch::one_pixel_by4`, which loops
//! over the channel groups itself; the same arithmetic per lane), and the im2col copies
//! its runs 16 bytes at a time (`arch::copy_bytes`, `arch::fill_bytes`). On RV32
//! (`kiln_arch = "riscv"`) the pixel pairs take `arch::two_pixels_by4` (two pixels by four
//! channels, as Helium's hook), and [`pointwise`] runs a layer whose input depth is one of
//! the common ones (a constant at the call site) four pixels at a time
//! (`arch::four_pixels_by4`, one instance per depth used).

use crate::arch;

/// Per-output-channel constants of a fast layer, each `n` long.
#[derive(Clone, Copy, Debug)]
pub struct Channels<'a> {
    /// Folded bias: `bias + input_offset * sum(w)`.
    pub bias: &'a [i32],
    /// Quantized multiplier (`>= 2^30`).
    pub multiplier: &'a [i32],
    /// Right shift, 1..=31.
    pub right_shift: &'a [i32],
}

/// Output quantization of a fast layer.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    /// Output zero point.
    pub offset: i32,
    /// Lower clamp (quantized activation minimum).
    pub min: i32,
    /// Upper clamp.
    pub max: i32,
}

/// The largest accumulator magnitude [`prepare_layer`] accepts (exclusive): `2^30`.
pub const ACC_BOUND: i64 = 1 << 30;

/// One live channel of [`prepare_layer`]: the folded bias and the right shift, if the fast kernels
/// compute it exactly.
fn channel(input_offset: i32, row: &[i8], bias: i32, shift: i32) -> Option<(i32, i32)> {
    let sum: i64 = row.iter().map(|&w| w as i64).sum();
    let f = bias as i64 + input_offset as i64 * sum;
    // Extremes of `sum w * x` over x in -128..=127.
    let (mut lo, mut hi) = (f, f);
    for &w in row {
        let (a, c) = (w as i64 * -128, w as i64 * 127);
        lo += a.min(c);
        hi += a.max(c);
    }
    (lo >= -ACC_BOUND && hi < ACC_BOUND && (-31..=-1).contains(&shift))
        .then_some((f as i32, -shift))
}

/// Build-time preparation of a fast layer with `n = folded.len()` output channels of `k`
/// weights each (`filter` is `n * k` long, row `o` at `o * k`): writes the folded bias, the
/// multipliers to use and the right shifts, and returns whether the fast kernels compute this
/// layer exactly (the conditions of the module documentation). `bias` is `n` long or absent
/// (zero), `multiplier`/`shift` are TFLM's per-channel values. It also rewrites dead
/// channels: a channel whose weights
/// are all zero outputs the constant `clamp(MultiplyByQuantizedMultiplier(bias, m, shift) +
/// offset)` (the reference's accumulator is just the bias), whatever its scales; such
/// channels often carry a huge bias and shift (MobileNets trained with pruning) that the
/// fast requantization cannot apply. Their tables become `bias = 4r`, `m = 2^30`, `e = 1`
/// with `r = constant - offset` (in -255..=255), which the fast requantization maps to
/// exactly `r`: `SMMULR(8r, 2^30) = 2r`, `(2r + 1 - [r < 0]) >> 1 = r`. `multiplier` is
/// read and the multipliers to use are written to `multiplier_out`.
#[allow(clippy::too_many_arguments)]
pub fn prepare_layer(
    k: usize,
    input_offset: i32,
    filter: &[i8],
    bias: Option<&[i32]>,
    multiplier: &[i32],
    shift: &[i32],
    q: &Output,
    folded: &mut [i32],
    multiplier_out: &mut [i32],
    right_shift: &mut [i32],
) -> bool {
    let n = folded.len();
    if k == 0
        || filter.len() != n * k
        || shift.len() != n
        || multiplier.len() != n
        || multiplier_out.len() != n
        || right_shift.len() != n
        || bias.is_some_and(|b| b.len() != n)
    {
        return false;
    }
    (0..n).all(|o| {
        let row = &filter[o * k..(o + 1) * k];
        let b = bias.map_or(0, |b| b[o]);
        if row.iter().all(|&w| w == 0) {
            let v =
                crate::fixed_point::multiply_by_quantized_multiplier(b, multiplier[o], shift[o])
                    .wrapping_add(q.offset);
            let v = crate::util::clamp_i32(v, q.min, q.max);
            folded[o] = 4 * (v - q.offset);
            multiplier_out[o] = 1 << 30;
            right_shift[o] = 1;
            return true;
        }
        match channel(input_offset, row, b, shift[o]) {
            Some((f, e)) => {
                folded[o] = f;
                multiplier_out[o] = multiplier[o];
                right_shift[o] = e;
                true
            }
            None => false,
        }
    })
}

/// `clamp(MultiplyByQuantizedMultiplier(acc, m, -e) + offset)` under [`prepare_layer`]'s
/// conditions (`arch::rq_shift`, then the clamp). `FULL`: the clamp is the whole int8 range
/// (one saturation, `q.min`/`q.max` are not read), which [`Output::full`] tells.
#[inline(always)]
pub(crate) fn requantize<const FULL: bool>(acc: i32, m: i32, e: i32, q: &Output) -> i8 {
    let r = arch::rq_shift(acc, m, e, q.offset);
    if FULL {
        return arch::ssat8(r) as i8;
    }
    let r = if r < q.min { q.min } else { r };
    (if r > q.max { q.max } else { r }) as i8
}

impl Output {
    /// Whether the clamp is the whole int8 range, `-128..=127` (most layers).
    pub const fn full(&self) -> bool {
        self.min == -128 && self.max == 127
    }
}

/// Calls `$f::<true>` for a full-range [`Output`] `$q`, else `$f::<false>` (one instance
/// per clamp kind, so the saturation costs one instruction). The public entry points that
/// use it are always inlined: with a model's constant parameters only one branch is left.
macro_rules! by_clamp {
    ($q:expr, $f:ident($($arg:expr),* $(,)?)) => {
        if $q.full() {
            $f::<true>($($arg),*)
        } else {
            $f::<false>($($arg),*)
        }
    };
}
pub(crate) use by_clamp;

/// All `n` channels of two output pixels (`x`: their inputs, `2k`; `w`: `n * k`), from
/// the pixels widened by `arch::widen_2` where `wide` is given (`4k` bytes). One copy
/// serves every caller (code size; a call costs a few instructions per pixel pair).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn two_pixels<const F: bool>(
    k: usize,
    x: &[i8],
    wide: Option<&[i8]>,
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    out0: &mut [i8],
    out1: &mut [i8],
) {
    // Helium: both pixels four channels per step, the loop over the groups in the
    // microkernel (the widened pairs are not used); the channels past the last group of
    // four pixel by pixel.
    #[cfg(any(kiln_arch = "mve", kiln_arch = "riscv"))]
    {
        let _ = wide;
        let x1 = x.get(k..).unwrap_or(&[]);
        let (b, m, e) = (ch.bias, ch.multiplier, ch.right_shift);
        let o = arch::two_pixels_by4(k, x, x1, w, b, m, e, q, out0, out1);
        if o < out0.len() {
            one_pixel_from::<F>(k, x, w, ch, q, out0, o);
            one_pixel_from::<F>(k, x1, w, ch, q, out1, o);
        }
    }
    #[cfg(not(any(kiln_arch = "mve", kiln_arch = "riscv")))]
    two_pixels_by_pairs::<F>(k, x, wide, w, ch, q, out0, out1);
}

/// [`two_pixels`] by pairs of channels (the DSP and portable microkernels).
#[cfg(not(any(kiln_arch = "mve", kiln_arch = "riscv")))]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn two_pixels_by_pairs<const F: bool>(
    k: usize,
    x: &[i8],
    wide: Option<&[i8]>,
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    out0: &mut [i8],
    out1: &mut [i8],
) {
    let n = out0.len();
    let (Some(b), Some(m), Some(e), Some(out1)) = (
        ch.bias.get(..n),
        ch.multiplier.get(..n),
        ch.right_shift.get(..n),
        out1.get_mut(..n),
    ) else {
        return;
    };
    // All pairs of channels in one microkernel call where it takes the layer (`k % 4 == 0`,
    // which the widened pixels also need).
    let o = arch::two_pixels_pairs::<F>(k, x, wide, w, b, m, e, q, out0, out1);
    if o == 0 {
        // Not taken (`k % 4 != 0`, or one channel): pixel by pixel.
        if let Some((x0, x1)) = x.get(..2 * k).and_then(|x| x.split_at_checked(k)) {
            one_pixel::<F>(k, x0, w, ch, q, out0);
            one_pixel::<F>(k, x1, w, ch, q, out1);
        }
        return;
    }
    // An odd last channel.
    if o < n {
        let rows = w.get(o * k..).unwrap_or(&[]);
        let acc = arch::mac_2x1(k, x, rows, [b[o], b[o]]);
        out0[o] = requantize::<F>(acc[0], m[o], e[o], q);
        out1[o] = requantize::<F>(acc[1], m[o], e[o], q);
    }
}

/// All `n` channels of one output pixel (`x`: its `k` inputs).
#[inline(never)]
pub(crate) fn one_pixel<const F: bool>(
    k: usize,
    x: &[i8],
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    out: &mut [i8],
) {
    #[cfg(any(kiln_arch = "mve", kiln_arch = "riscv"))]
    one_pixel_from::<F>(k, x, w, ch, q, out, 0);
    #[cfg(not(any(kiln_arch = "mve", kiln_arch = "riscv")))]
    {
        let n = out.len();
        let (Some(b), Some(m), Some(e)) = (
            ch.bias.get(..n),
            ch.multiplier.get(..n),
            ch.right_shift.get(..n),
        ) else {
            return;
        };
        // One input (a first layer of one value, as hello_world's): one product per
        // channel, no microkernel call.
        if let (1, Some(&x0), Some(w)) = (k, x.first(), w.get(..n)) {
            for (o, (out, &w)) in out.iter_mut().zip(w).enumerate() {
                let acc = b[o].wrapping_add(x0 as i32 * w as i32);
                *out = requantize::<F>(acc, m[o], e[o], q);
            }
            return;
        }
        let mut o = 0;
        let mut rows = w;
        while o + 1 < n {
            let acc = arch::mac_1x2(k, x, rows, [b[o], b[o + 1]]);
            out[o] = requantize::<F>(acc[0], m[o], e[o], q);
            out[o + 1] = requantize::<F>(acc[1], m[o + 1], e[o + 1], q);
            rows = rows.get(2 * k..).unwrap_or(&[]);
            o += 2;
        }
        if o < n {
            let acc = arch::mac_1x1(k, x, rows, b[o]);
            out[o] = requantize::<F>(acc, m[o], e[o], q);
        }
    }
}

/// [`one_pixel`] with Helium, its channels from `from` on: `from` is 0 (all, four at a
/// time by `arch::one_pixel_by4`, then the rest), or a multiple of 4 at which the
/// four-channel groups of `arch::two_pixels_by4` stopped.
#[cfg(any(kiln_arch = "mve", kiln_arch = "riscv"))]
#[inline(always)]
fn one_pixel_from<const F: bool>(
    k: usize,
    x: &[i8],
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    out: &mut [i8],
    from: usize,
) {
    let n = out.len();
    let (Some(b), Some(m), Some(e)) = (
        ch.bias.get(..n),
        ch.multiplier.get(..n),
        ch.right_shift.get(..n),
    ) else {
        return;
    };
    // Helium: four channels per step, requantized at once, the loop over them in the
    // microkernel; the rest below.
    let mut o = if from == 0 {
        arch::one_pixel_by4(k, x, w, b, m, e, q, out)
    } else {
        from
    };
    let mut rows = w.get(o * k..).unwrap_or(&[]);
    while o + 1 < n {
        let acc = arch::mac_1x2(k, x, rows, [b[o], b[o + 1]]);
        out[o] = requantize::<F>(acc[0], m[o], e[o], q);
        out[o + 1] = requantize::<F>(acc[1], m[o + 1], e[o + 1], q);
        rows = rows.get(2 * k..).unwrap_or(&[]);
        o += 2;
    }
    if o < n {
        let acc = arch::mac_1x1(k, x, rows, b[o]);
        out[o] = requantize::<F>(acc, m[o], e[o], q);
    }
}

/// Whether widening each pixel pair once (`arch::widen_2`, 10 instructions per 4 values of
/// the pair on the M4) pays for a layer of `k` inputs and `n` output channels: it saves 6
/// per 4 values and channel pair. Not below 16 inputs, where the layers are the MobileNets'
/// widest (their peak) and the scratch would raise the arena.
pub const fn widen_pays(k: usize, n: usize) -> bool {
    k.is_multiple_of(4) && k >= 16 && n >= 8
}

/// [`widen_pays`] for the im2col pair of `windowed` (`k` padded): from 8 inputs on. Its
/// scratch holds the im2col anyway, so below 16 inputs the widened form adds at most 60
/// bytes, and the first layers of one-channel images (a 3x3 window, 12 values padded) are
/// where the narrow loop costs most.
pub const fn widen_pays_windowed(k: usize, n: usize) -> bool {
    k.is_multiple_of(4) && k >= 8 && n >= 8
}

/// Whether to widen into `scratch` where it `pays` ([`widen_pays`],
/// [`widen_pays_windowed`]): with the DSP microkernels (`arch::WIDENS`; the portable ones
/// gain nothing from it), and `scratch` word-aligned (the widened pairs are read by word
/// pairs, `LDRD`; so they are in every plan with Kiln's default alignment, while `align = 1`
/// or `2` may place them otherwise).
fn widen(pays: bool, scratch: &[i8]) -> bool {
    arch::WIDENS && pays && (scratch.as_ptr() as usize).is_multiple_of(4)
}

/// Scratch bytes [`pointwise`] uses to widen a pixel pair: `4k` where [`widen_pays`].
pub const fn pointwise_scratch_bytes(k: usize, n: usize) -> usize {
    if widen_pays(k, n) { 4 * k } else { 0 }
}

/// `out[p] = requantize(W x[p] + bias)` for every pixel `p`: `input` holds the pixels'
/// `k` values each, `out` their `n` channels each (`n = ch.bias.len()`). A 1x1 stride-1
/// convolution and a fully connected layer (pixels = batches). `scratch`
/// ([`pointwise_scratch_bytes`], or empty) holds each pixel pair widened.
#[inline(always)]
pub fn pointwise(
    k: usize,
    input: &[i8],
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    out: &mut [i8],
    scratch: &mut [i8],
) {
    // RV32: the common input depths as constants (`k` is one at the always-inlined call
    // sites, so only the instances a model uses are linked), for `arch::four_pixels_by4`.
    // Code for speed: about 2.2 KB per depth used (person_detect, six depths: .text 17.8 KB
    // on main, 40.2 KB with these and the depthwise blocks).
    #[cfg(kiln_arch = "riscv")]
    {
        macro_rules! by_depth {
            ($($k:literal)*) => {
                match k {
                    $($k => {
                        return if q.full() {
                            pointwise_k::<true, $k>(input, w, ch, q, out)
                        } else {
                            pointwise_k::<false, $k>(input, w, ch, q, out)
                        };
                    })*
                    _ => {}
                }
            };
        }
        // At most 680 (`four_pixels_by4`'s offsets `3k + 3` within `LB`'s immediate).
        by_depth!(
            8 12 16 20 24 28 32 40 48 56 64 72 80 96 112 120 128 144 160 192 240 256 288 320
            384 480 512 576 672
        );
    }
    by_clamp!(q, pointwise_by(k, input, w, ch, q, out, scratch))
}

/// [`one_pixel_from`] not inlined: one copy for every depth of [`pointwise_k`] (code size).
#[cfg(kiln_arch = "riscv")]
#[inline(never)]
fn channels_from<const F: bool>(
    k: usize,
    x: &[i8],
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    out: &mut [i8],
    from: usize,
) {
    one_pixel_from::<F>(k, x, w, ch, q, out, from);
}

/// [`pointwise`] on RV32 for an input depth `K` that is a constant: four pixels at a time
/// by `arch::four_pixels_by4` (the channels past its groups of four pixel by pixel), the
/// last pixels by pairs and one.
#[cfg(kiln_arch = "riscv")]
#[inline(never)]
fn pointwise_k<const F: bool, const K: usize>(
    input: &[i8],
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    out: &mut [i8],
) {
    let n = ch.bias.len();
    let pixels = input.len() / K;
    let (b, m, e) = (ch.bias, ch.multiplier, ch.right_shift);
    let mut p = 0;
    while p + 3 < pixels {
        if let (Some(x), Some(o)) = (
            input.get(p * K..(p + 4) * K),
            out.get_mut(p * n..(p + 4) * n),
        ) {
            let done = arch::four_pixels_by4::<K>(x, w, b, m, e, q, n, o);
            if done < n {
                for (xi, oi) in x.chunks_exact(K).zip(o.chunks_exact_mut(n.max(1))) {
                    channels_from::<F>(K, xi, w, ch, q, oi, done);
                }
            }
        }
        p += 4;
    }
    while p < pixels {
        if p + 1 < pixels {
            if let (Some(x), Some(o)) = (
                input.get(p * K..(p + 2) * K),
                out.get_mut(p * n..(p + 2) * n),
            ) && let Some((o0, o1)) = o.split_at_mut_checked(n)
            {
                two_pixels::<F>(K, x, None, w, ch, q, o0, o1);
            }
            p += 2;
        } else {
            if let (Some(x), Some(o)) = (input.get(p * K..), out.get_mut(p * n..)) {
                one_pixel::<F>(K, x, w, ch, q, o);
            }
            p += 1;
        }
    }
}

#[inline(never)]
pub(crate) fn pointwise_by<const F: bool>(
    k: usize,
    input: &[i8],
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    out: &mut [i8],
    scratch: &mut [i8],
) {
    let n = ch.bias.len();
    let mut wide = scratch
        .get_mut(..4 * k)
        .filter(|s| widen(widen_pays(k, n), s));
    let pixels = input.len() / k.max(1);
    // Indexed rather than zipped chunks: no out-of-line iterator code with a panic path.
    let mut p = 0;
    while p + 1 < pixels {
        if let (Some(x), Some(o)) = (
            input.get(p * k..(p + 2) * k),
            out.get_mut(p * n..(p + 2) * n),
        ) && let Some((o0, o1)) = o.split_at_mut_checked(n)
        {
            if let Some(xw) = wide.as_deref_mut() {
                arch::widen_2(k, x, xw);
            }
            two_pixels::<F>(k, x, wide.as_deref(), w, ch, q, o0, o1);
        }
        p += 2;
    }
    if p < pixels
        && let (Some(x), Some(o)) = (input.get(p * k..), out.get_mut(p * n..))
    {
        one_pixel::<F>(k, x, w, ch, q, o);
    }
}

/// [`pointwise`] in place: `data` holds the `pixels` input pixels (`k` values each) in its
/// last `pixels * k` bytes; on return its first `pixels * n` bytes are the output. One pixel
/// at a time through `scratch` (`n` bytes): the store of pixel `p` never reaches an input
/// pixel still to be read (the argument of `conv_2d::conv_2d_s8_pointwise_in_place`).
#[inline(always)]
pub fn pointwise_in_place(
    k: usize,
    pixels: usize,
    data: &mut [i8],
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    scratch: &mut [i8],
) {
    by_clamp!(q, pointwise_in_place_by(k, pixels, data, w, ch, q, scratch))
}

#[inline(never)]
pub(crate) fn pointwise_in_place_by<const F: bool>(
    k: usize,
    pixels: usize,
    data: &mut [i8],
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    scratch: &mut [i8],
) {
    let n = ch.bias.len();
    let Some(off) = data.len().checked_sub(pixels * k) else {
        return;
    };
    let Some(s) = scratch.get_mut(..n) else {
        return;
    };
    for p in 0..pixels {
        let Some(x) = data.get(off + p * k..off + (p + 1) * k) else {
            return;
        };
        one_pixel::<F>(k, x, w, ch, q, s);
        if let Some(d) = data.get_mut(p * n..(p + 1) * n) {
            d.copy_from_slice(s);
        }
    }
}

/// The row length of `windowed`'s im2col and weights: `k` rounded up to a multiple of 4,
/// so the microkernels' 4-byte steps leave no tail.
pub const fn padded(k: usize) -> usize {
    k.div_ceil(4) * 4
}

/// `filter`'s `n` rows of `k` weights, each padded with zeros to [`padded`]`(k)` (`out` is
/// `n * padded(k)` long): the weights `windowed` takes.
pub fn pad_rows(k: usize, filter: &[i8], out: &mut [i8]) {
    let kp = padded(k);
    for (row, dst) in filter
        .chunks_exact(k.max(1))
        .zip(out.chunks_exact_mut(kp.max(1)))
    {
        dst[..k].copy_from_slice(row);
        dst[k..].fill(0);
    }
}

/// Scratch bytes of `windowed` for `k = kh * kw * depth` and `n` output channels: the
/// im2col, `2 * padded(k)`, and its widened form, `4 * padded(k)`, where
/// [`widen_pays_windowed`].
pub const fn windowed_scratch_bytes(k: usize, n: usize) -> usize {
    let k = padded(k);
    2 * k + if widen_pays_windowed(k, n) { 4 * k } else { 0 }
}

/// The window of a convolution, for `windowed`.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Input height, width, depth.
    pub input: [usize; 3],
    /// Output height, width.
    pub output: [usize; 2],
    /// Filter height, width.
    pub filter: [usize; 2],
    /// Strides (height, width).
    pub stride: [usize; 2],
    /// Dilations (height, width).
    pub dilation: [usize; 2],
    /// Padding before the input (height, width).
    pub padding: [usize; 2],
    /// The input zero point (`-input_offset`), written for taps outside the input.
    pub zero_point: i8,
}

/// The `k = kh * kw * depth` inputs of output pixel `(oy, ox)` in filter order (`[fy][fx][c]`,
/// as an OHWI filter row), taps outside the input set to the zero point.
#[inline(never)]
fn im2col(g: &Window, image: &[i8], oy: usize, ox: usize, col: &mut [i8]) {
    let [ih, iw, c] = g.input;
    let [kh, kw] = g.filter;
    let row_len = (kw * c).max(1);
    let y0 = (oy * g.stride[0]) as isize - g.padding[0] as isize;
    let x0 = (ox * g.stride[1]) as isize - g.padding[1] as isize;
    let (fx0, fx1) = inside(x0, g.dilation[1], iw, kw);
    let dw = g.dilation[1];
    // A window wholly inside the input, without dilation: `kh` runs of `kw * c` bytes.
    if dw == 1 && g.dilation[0] == 1 && fx0 == 0 && fx1 == kw && y0 >= 0 && y0 as usize + kh <= ih {
        let start = (y0 as usize * iw + x0 as usize) * c;
        // Helium: the `kh` runs in one block.
        #[cfg(kiln_arch = "mve")]
        if let Some(src) = image.get(start..) {
            arch::copy_rows(col, src, kh, row_len, iw * c);
            return;
        }
        for fy in 0..kh {
            if let (Some(dst), Some(src)) = (
                col.get_mut(fy * row_len..(fy + 1) * row_len),
                image.get(start + fy * iw * c..),
            ) {
                copy(dst, src);
            }
        }
        return;
    }
    for fy in 0..kh {
        let Some(dst) = col.get_mut(fy * row_len..(fy + 1) * row_len) else {
            return;
        };
        let iy = y0 + (fy * g.dilation[0]) as isize;
        let row = (iy >= 0 && (iy as usize) < ih)
            .then(|| image.get(iy as usize * iw * c..))
            .flatten();
        let (Some(src_row), true) = (row, fx0 < fx1) else {
            fill(dst, g.zero_point);
            continue;
        };
        let Some((before, rest)) = dst.split_at_mut_checked(fx0 * c) else {
            return;
        };
        fill(before, g.zero_point);
        let ix0 = (x0 + (fx0 * dw) as isize) as usize;
        let Some((mid, after)) = rest.split_at_mut_checked((fx1 - fx0) * c) else {
            return;
        };
        if dw == 1 {
            copy(mid, src_row.get(ix0 * c..).unwrap_or(&[]));
        } else {
            for (i, d) in mid.chunks_mut(c.max(1)).enumerate() {
                copy(d, src_row.get((ix0 + i * dw) * c..).unwrap_or(&[]));
            }
        }
        fill(after, g.zero_point);
    }
}

/// `dst.fill(v)`, without the call for the short or empty runs of an im2col row.
#[inline(always)]
fn fill(dst: &mut [i8], v: i8) {
    // Helium: 16 bytes per store, no call.
    #[cfg(kiln_arch = "mve")]
    if cfg!(kiln_arch = "mve") {
        arch::fill_bytes(dst, v);
        return;
    }
    if dst.len() > 16 {
        dst.fill(v);
    } else {
        for d in dst {
            *d = v;
        }
    }
}

/// Copies the first `dst.len()` bytes of `src` (as many as it has) into `dst` (`memcpy`,
/// with no panic path).
#[inline(always)]
fn copy(dst: &mut [i8], src: &[i8]) {
    // Helium: 16 bytes per load and store, no call.
    #[cfg(kiln_arch = "mve")]
    if cfg!(kiln_arch = "mve") {
        arch::copy_bytes(dst, src);
        return;
    }
    let n = dst.len().min(src.len());
    if let ([d0, d1, d2], [s0, s1, s2, ..]) = (&mut *dst, src) {
        // Three bytes (a row of a 3x3 one-channel window): moved one by one, not by a
        // `memcpy` call, which costs more than they do.
        (*d0, *d1, *d2) = (*s0, *s1, *s2);
    } else if n <= 16 {
        // A few bytes (the 1-4 channels of a first layer): no `memcpy` call.
        for (d, s) in dst.iter_mut().zip(src) {
            *d = *s;
        }
    } else if let (Some(d), Some(s)) = (dst.get_mut(..n), src.get(..n)) {
        // Longer runs (a window row of many channels): 16 bytes per load and store pair
        // where both are word-aligned (the DSP's `LDM`/`STM`), else `memcpy`.
        arch::copy_block(d, s);
    }
}

/// The taps `start..end` of a filter of `n` taps at `dilation` whose positions `origin +
/// dilation * t` lie in `0..size` (as `util::tap_range`, in unsigned arithmetic, which has
/// no overflow or division panic path).
#[inline(always)]
pub(crate) fn inside(origin: isize, dilation: usize, size: usize, n: usize) -> (usize, usize) {
    if dilation <= 1 {
        // No division for the common case.
        let start = if origin >= 0 {
            0
        } else {
            origin.unsigned_abs()
        };
        let end = if origin >= size as isize {
            0
        } else {
            (size as isize - origin) as usize
        };
        return (start.min(n), end.min(n));
    }
    let d = dilation;
    let start = if origin >= 0 {
        0
    } else {
        origin.unsigned_abs().div_ceil(d)
    };
    let end = if origin >= size as isize {
        0
    } else {
        (size as isize - origin) as usize
    }
    .div_ceil(d);
    (start.min(n), end.min(n))
}

/// A convolution of any window through an im2col of two output pixels into `scratch`
/// ([`windowed_scratch_bytes`]: the im2col, `2k` bytes, `k` = [`padded`]`(kh * kw *
/// depth)`, then the pair widened, `4k`), then the pair kernel as a 1x1
/// convolution over it. `w` has `n` rows of `k` weights, zero after the window's
/// `kh * kw * depth` (so the im2col leaves those bytes as they are: they are multiplied by
/// zero). `F`: a full-range clamp (see `requantize`). `input` is `batches` images, `out` their output pixels with `n` channels each.
#[inline(never)]
pub(crate) fn windowed<const F: bool>(
    g: &Window,
    input: &[i8],
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    out: &mut [i8],
    scratch: &mut [i8],
) {
    let [ih, iw, c] = g.input;
    let [oh, ow] = g.output;
    let k_taps = g.filter[0] * g.filter[1] * c;
    let k = padded(g.filter[0] * g.filter[1] * c);
    let n = ch.bias.len();
    let Some((col, rest)) = scratch.split_at_mut_checked(2 * k) else {
        return;
    };
    let mut wide = rest
        .get_mut(..4 * k)
        .filter(|s| widen(widen_pays_windowed(k, n), s));
    // The windows inside the input are copied directly (see below).
    let (kh, kw, plain) = (g.filter[0], g.filter[1], g.dilation == [1, 1] && k_taps > 0);
    let image_len = ih * iw * c;
    let out_len = oh * ow * n;
    let batches = input.len() / image_len.max(1);
    for b in 0..batches {
        let (Some(image), Some(out_image)) = (
            input.get(b * image_len..(b + 1) * image_len),
            out.get_mut(b * out_len..(b + 1) * out_len),
        ) else {
            return;
        };
        let mut pending: Option<usize> = None;
        for oy in 0..oh {
            for ox in 0..ow {
                let at = (oy * ow + ox) * n;
                let Some((col0, col1)) = col.split_at_mut_checked(k) else {
                    return;
                };
                let half = if pending.is_none() { col0 } else { col1 };
                if let Some(half) = half.get_mut(..k_taps) {
                    // A window inside the input (no dilation) is `kh` runs of `kw * c`
                    // bytes, copied without `im2col`'s set-up (Helium: in one block).
                    let (y0, x0) = (oy * g.stride[0], ox * g.stride[1]);
                    if plain
                        && y0 >= g.padding[0]
                        && x0 >= g.padding[1]
                        && y0 - g.padding[0] + kh <= ih
                        && x0 - g.padding[1] + kw <= iw
                        && let Some(src) =
                            image.get(((y0 - g.padding[0]) * iw + x0 - g.padding[1]) * c..)
                    {
                        #[cfg(kiln_arch = "mve")]
                        arch::copy_rows(half, src, kh, kw * c, iw * c);
                        #[cfg(not(kiln_arch = "mve"))]
                        for (fy, dst) in half.chunks_exact_mut(kw * c).enumerate() {
                            copy(dst, src.get(fy * iw * c..).unwrap_or(&[]));
                        }
                    } else {
                        im2col(g, image, oy, ox, half);
                    }
                }
                match pending.take() {
                    None => pending = Some(at),
                    Some(first) => {
                        if let Some(o) = out_image.get_mut(first..at + n)
                            && let Some((o0, o1)) = o.split_at_mut_checked(n)
                        {
                            if let Some(xw) = wide.as_deref_mut() {
                                arch::widen_2(k, col, xw);
                            }
                            two_pixels::<F>(k, col, wide.as_deref(), w, ch, q, o0, o1);
                        }
                    }
                }
            }
        }
        if let Some(first) = pending
            && let Some(o) = out_image.get_mut(first..)
        {
            one_pixel::<F>(k, col, w, ch, q, o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed_point::multiply_by_quantized_multiplier;
    use crate::util::clamp_i32;

    /// A small deterministic generator (xorshift).
    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    fn reference(acc: i32, m: i32, shift: i32, q: &Output) -> i8 {
        clamp_i32(
            multiply_by_quantized_multiplier(acc, m, shift).wrapping_add(q.offset),
            q.min,
            q.max,
        ) as i8
    }

    /// The fast requantization equals TFLM's wherever `prepare` allows it: accumulators in
    /// `-2^30..2^30` (edges included), right shifts 1..=31, any multiplier, offset, clamp.
    #[test]
    fn requantize_matches_the_reference_within_its_conditions() {
        let mut seed = 0x9E37_79B9_7F4A_7C15;
        let edges = [
            -(1 << 30),
            -(1 << 30) + 1,
            -1,
            0,
            1,
            (1 << 30) - 2,
            (1 << 30) - 1,
        ];
        for i in 0..400_000u64 {
            let r = rng(&mut seed);
            let m = (1 << 30) + (r >> 34) as i32 % (1 << 30);
            let e = 1 + (r % 31) as i32;
            let acc = if i % 8 == 0 {
                edges[(r >> 8) as usize % edges.len()]
            } else {
                ((rng(&mut seed) % (1 << 31)) as i64 - (1 << 30)) as i32 >> ((r >> 40) % 20)
            };
            let offset = (r >> 48) as i32 % 256 - 128;
            let (lo, hi) = if r & 1 == 0 {
                (-128, 127)
            } else {
                (offset.max(-128), 127)
            };
            let q = Output {
                offset,
                min: lo,
                max: hi,
            };
            assert_eq!(
                requantize::<false>(acc, m, e, &q),
                reference(acc, m, -e, &q),
                "acc {acc} m {m} e {e} offset {offset}"
            );
        }
    }

    /// Dead channels (all-zero weights) get tables that give the reference's constant, for
    /// any bias, multiplier and shift; live channels keep theirs.
    #[test]
    fn dead_channels_become_their_constant() {
        let mut seed = 12345;
        for _ in 0..20_000 {
            let r = rng(&mut seed);
            let bias = rng(&mut seed) as i32;
            let m = (1 << 30) + (r >> 34) as i32 % (1 << 30);
            let shift = (r % 62) as i32 - 31;
            let offset = (r >> 48) as i32 % 256 - 128;
            let q = Output {
                offset,
                min: -128,
                max: (offset + 100).min(127),
            };
            let filter = [0i8, 0, 0, 0, 1, -2, 3, -4];
            let (mut folded, mut mult, mut right) = ([0; 2], [0; 2], [0; 2]);
            let ok = prepare_layer(
                4,
                offset / 2,
                &filter,
                Some(&[bias, 100]),
                &[m, m],
                &[shift, -5],
                &q,
                &mut folded,
                &mut mult,
                &mut right,
            );
            assert!(ok);
            let got = requantize::<false>(folded[0], mult[0], right[0], &q);
            assert_eq!(
                got,
                reference(bias, m, shift, &q),
                "bias {bias} m {m} shift {shift}"
            );
            assert_eq!((mult[1], right[1]), (m, 5));
        }
    }
}
