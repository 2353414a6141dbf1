//! The int8 matrix products behind the fast kernels of CONV_2D (1x1 directly, any other
//! window through an int8 im2col of two output pixels) and FULLY_CONNECTED, byte-identical
//! with TFLM's reference kernels, on the [`arch`](crate::arch) microkernels.
//!
//! What is done at build time (by [`prepare`], called from the operators' `prepare_fast_*`):
//!
//! * **Folded bias**: the reference sums `w * (x + input_offset)` and adds `bias`; here the
//!   sum is `w * x` and the bias is `bias + input_offset * sum(w)` per output channel. Both
//!   are the same integer (the reference's `int32_t` sum wraps, this one provably does not).
//!   An im2col fills taps outside the input with the input zero point, `x = -input_offset`,
//!   whose products cancel their share of the folded bias, so those taps add 0 as the
//!   reference's skipped taps do.
//! * **Accumulator bound**: [`prepare`] accepts a layer only if every accumulator lies in
//!   `-2^30..2^30` for every possible input (from the weights and the folded bias). Then
//!   `2 * acc` fits an `i32` and gemmlowp's `SaturatingRoundingDoublingHighMul(acc, m)`, i.e.
//!   `floor((acc * m + 2^30) / 2^31)` (its nudge and truncating division give exactly this;
//!   it never saturates since `m >= 2^30`), is one `SMMULR` of `2 * acc` and `m`.
//! * **Shifts**: every channel must shift right by 1..=23 (TFLM's `shift` in -23..=-1).
//!   gemmlowp's `RoundingDivideByPOT(y, e)` (round half away from zero) is
//!   `(y + 2^(e-1) - [y < 0]) >> e`. The addition is done saturating (`QADD`): it can only
//!   saturate upwards, when `y > 2^31 - 1 - 2^(e-1)`; then both the exact and the saturated
//!   quotient are at least `2^(31-e) - 1 >= 255` and the output clamps to the activation
//!   maximum (at most 127, after adding an output offset of at least -128) either way.
//!
//! Layers outside these conditions keep the reference kernels.
//!
//! The loops take two output pixels at a time (their `k` inputs are adjacent, `x[..k]` and
//! `x[k..2k]`: consecutive pixels of a 1x1 convolution's input, or the im2col buffer) and two
//! output channels (adjacent filter rows), so each loaded value is used twice.

use crate::arch;

/// Per-output-channel constants of a fast layer, each `n` long.
#[derive(Clone, Copy, Debug)]
pub struct Channels<'a> {
    /// Folded bias: `bias + input_offset * sum(w)`.
    pub bias: &'a [i32],
    /// Quantized multiplier (`>= 2^30`).
    pub multiplier: &'a [i32],
    /// Right shift, 1..=23.
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

/// The largest accumulator magnitude [`prepare`] accepts (exclusive): `2^30`.
pub const ACC_BOUND: i64 = 1 << 30;

/// Build-time preparation of a fast layer with `n = folded.len()` output channels of `k`
/// weights each (`filter` is `n * k` long, row `o` at `o * k`): writes the folded bias and
/// the right shifts and returns whether the fast kernels compute this layer exactly (the
/// conditions of the module documentation). `bias` is `n` long or absent (zero), `shift`
/// is TFLM's per-channel exponent.
pub fn prepare(
    k: usize,
    input_offset: i32,
    filter: &[i8],
    bias: Option<&[i32]>,
    shift: &[i32],
    folded: &mut [i32],
    right_shift: &mut [i32],
) -> bool {
    let n = folded.len();
    if k == 0
        || filter.len() != n * k
        || shift.len() != n
        || right_shift.len() != n
        || bias.is_some_and(|b| b.len() != n)
    {
        return false;
    }
    for o in 0..n {
        let row = &filter[o * k..(o + 1) * k];
        let b = bias.map_or(0, |b| b[o]) as i64;
        let sum: i64 = row.iter().map(|&w| w as i64).sum();
        let f = b + input_offset as i64 * sum;
        // Extremes of `sum w * x` over x in -128..=127.
        let (mut lo, mut hi) = (f, f);
        for &w in row {
            let (a, c) = (w as i64 * -128, w as i64 * 127);
            lo += a.min(c);
            hi += a.max(c);
        }
        if lo < -ACC_BOUND || hi >= ACC_BOUND || !(-23..=-1).contains(&shift[o]) {
            return false;
        }
        folded[o] = f as i32;
        right_shift[o] = -shift[o];
    }
    true
}

/// `clamp(MultiplyByQuantizedMultiplier(acc, m, -e) + offset)` under [`prepare`]'s
/// conditions; `half = 2^(e-1)`.
#[inline(always)]
pub(crate) fn requantize(acc: i32, m: i32, e: i32, half: i32, q: &Output) -> i8 {
    let y = arch::smmulr(acc << 1, m);
    let t = arch::qadd(y, half + (y >> 31));
    let r = (t >> e) + q.offset;
    let r = if r < q.min { q.min } else { r };
    (if r > q.max { q.max } else { r }) as i8
}

/// All `n` channels of two output pixels (`x`: their inputs, `2k`; `w`: `n * k`). One
/// copy serves every caller (code size; a call costs a few instructions per pixel pair).
#[inline(never)]
fn two_pixels(
    k: usize,
    x: &[i8],
    w: &[i8],
    ch: &Channels<'_>,
    q: &Output,
    out0: &mut [i8],
    out1: &mut [i8],
) {
    let rows = w.chunks_exact((2 * k).max(1));
    let w_tail = rows.remainder();
    let mut o0 = out0.chunks_exact_mut(2);
    let mut o1 = out1.chunks_exact_mut(2);
    let mut b = ch.bias.chunks_exact(2);
    let mut m = ch.multiplier.chunks_exact(2);
    let mut e = ch.right_shift.chunks_exact(2);
    for (w2, (((o0, o1), b), (m, e))) in
        rows.zip((&mut o0).zip(&mut o1).zip(&mut b).zip((&mut m).zip(&mut e)))
    {
        let acc = arch::mac_2x2(k, x, w2, [b[0], b[1], b[0], b[1]]);
        let (h0, h1) = (1 << (e[0] - 1), 1 << (e[1] - 1));
        o0[0] = requantize(acc[0], m[0], e[0], h0, q);
        o0[1] = requantize(acc[1], m[1], e[1], h1, q);
        o1[0] = requantize(acc[2], m[0], e[0], h0, q);
        o1[1] = requantize(acc[3], m[1], e[1], h1, q);
    }
    // An odd last channel.
    if let ([o0], [o1], [b], [m], [e]) = (
        o0.into_remainder(),
        o1.into_remainder(),
        b.remainder(),
        m.remainder(),
        e.remainder(),
    ) {
        let acc = arch::mac_2x1(k, x, w_tail, [*b, *b]);
        let h = 1 << (e - 1);
        *o0 = requantize(acc[0], *m, *e, h, q);
        *o1 = requantize(acc[1], *m, *e, h, q);
    }
}

/// All `n` channels of one output pixel (`x`: its `k` inputs).
#[inline(never)]
fn one_pixel(k: usize, x: &[i8], w: &[i8], ch: &Channels<'_>, q: &Output, out: &mut [i8]) {
    let rows = w.chunks_exact((2 * k).max(1));
    let w_tail = rows.remainder();
    let mut o = out.chunks_exact_mut(2);
    let mut b = ch.bias.chunks_exact(2);
    let mut m = ch.multiplier.chunks_exact(2);
    let mut e = ch.right_shift.chunks_exact(2);
    for (w2, ((o, b), (m, e))) in rows.zip((&mut o).zip(&mut b).zip((&mut m).zip(&mut e))) {
        let acc = arch::mac_1x2(k, x, w2, [b[0], b[1]]);
        o[0] = requantize(acc[0], m[0], e[0], 1 << (e[0] - 1), q);
        o[1] = requantize(acc[1], m[1], e[1], 1 << (e[1] - 1), q);
    }
    if let ([o], [b], [m], [e]) = (
        o.into_remainder(),
        b.remainder(),
        m.remainder(),
        e.remainder(),
    ) {
        let acc = arch::mac_1x1(k, x, w_tail, *b);
        *o = requantize(acc, *m, *e, 1 << (e - 1), q);
    }
}

/// `out[p] = requantize(W x[p] + bias)` for every pixel `p`: `input` holds the pixels'
/// `k` values each, `out` their `n` channels each (`n = ch.bias.len()`). A 1x1 stride-1
/// convolution and a fully connected layer (pixels = batches).
#[inline(never)]
pub fn pointwise(k: usize, input: &[i8], w: &[i8], ch: &Channels<'_>, q: &Output, out: &mut [i8]) {
    let n = ch.bias.len();
    let mut xs = input.chunks_exact((2 * k).max(1));
    let mut os = out.chunks_exact_mut((2 * n).max(1));
    for (x, o) in (&mut xs).zip(&mut os) {
        if let Some((o0, o1)) = o.split_at_mut_checked(n) {
            two_pixels(k, x, w, ch, q, o0, o1);
        }
    }
    let x = xs.remainder();
    let o = os.into_remainder();
    if !x.is_empty() {
        one_pixel(k, x, w, ch, q, o);
    }
}

/// The window of a convolution, for [`windowed`].
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
    let row_len = kw * c;
    let y0 = (oy * g.stride[0]) as isize - g.padding[0] as isize;
    let x0 = (ox * g.stride[1]) as isize - g.padding[1] as isize;
    let (fx0, fx1) = crate::util::tap_range(x0, g.dilation[1], iw, kw);
    for (fy, dst) in col.chunks_exact_mut(row_len.max(1)).take(kh).enumerate() {
        let iy = y0 + (fy * g.dilation[0]) as isize;
        if iy < 0 || iy >= ih as isize || fx0 >= fx1 {
            dst.fill(g.zero_point);
            continue;
        }
        let src_row = &image[(iy as usize * iw * c).min(image.len())..];
        dst[..fx0 * c].fill(g.zero_point);
        let ix0 = (x0 + (fx0 * g.dilation[1]) as isize) as usize;
        if g.dilation[1] == 1 {
            let n = (fx1 - fx0) * c;
            if let (Some(d), Some(s)) = (
                dst.get_mut(fx0 * c..fx0 * c + n),
                src_row.get(ix0 * c..ix0 * c + n),
            ) {
                d.copy_from_slice(s);
            }
        } else {
            for fx in fx0..fx1 {
                let ix = ix0 + (fx - fx0) * g.dilation[1];
                if let (Some(d), Some(s)) = (
                    dst.get_mut(fx * c..fx * c + c),
                    src_row.get(ix * c..ix * c + c),
                ) {
                    d.copy_from_slice(s);
                }
            }
        }
        if let Some(d) = dst.get_mut(fx1 * c..) {
            d.fill(g.zero_point);
        }
    }
}

/// A convolution of any window through an im2col of two output pixels into `scratch`
/// (`2k` bytes, `k = kh * kw * depth`), then [`two_pixels`] as a 1x1 convolution over it.
/// `input` is `batches` images, `out` their output pixels with `n` channels each.
#[inline(never)]
pub fn windowed(
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
    let k = g.filter[0] * g.filter[1] * c;
    let n = ch.bias.len();
    let Some(col) = scratch.get_mut(..2 * k) else {
        return;
    };
    let image_len = (ih * iw * c).max(1);
    let out_image = (oh * ow * n).max(1);
    for (image, out_image) in input
        .chunks_exact(image_len)
        .zip(out.chunks_exact_mut(out_image))
    {
        let mut pending: Option<&mut [i8]> = None;
        let mut px = out_image.chunks_exact_mut(n.max(1));
        for oy in 0..oh {
            for ox in 0..ow {
                let Some(o) = px.next() else { return };
                let (col0, col1) = col.split_at_mut(k);
                match pending.take() {
                    None => {
                        im2col(g, image, oy, ox, col0);
                        pending = Some(o);
                    }
                    Some(first) => {
                        im2col(g, image, oy, ox, col1);
                        two_pixels(k, col, w, ch, q, first, o);
                    }
                }
            }
        }
        if let Some(first) = pending {
            one_pixel(k, col, w, ch, q, first);
        }
    }
}
