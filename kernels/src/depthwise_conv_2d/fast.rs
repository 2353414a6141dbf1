//! The fast int8 DEPTHWISE_CONV_2D (DSP instructions on Cortex-M4/M7/M33, Helium on the
//! M55/M85, plain Rust elsewhere; see [`crate::arch`] and [`crate::gemm`]), byte-identical with
//! [`depthwise_conv_2d_s8`](super::depthwise_conv_2d_s8) for the layers [`prepare_fast_s8`]
//! accepts. Two forms, by the input depth:
//!
//! * **Depth multiplier 1**, depth a multiple of 4 (the MobileNets' 3x3 layers,
//!   [`depthwise_conv_2d_s8_fast`]): the filter is stored at build time as int16 pairs,
//!   `[C / 4][kh * kw]` entries of two words ([`pack_weights`]), so a tap's four weights are
//!   one `LDRD` (Helium: one `VLDRH.S32`; RV32: four `LH`). On the DSP, RV32 and the
//!   portable microkernels a 3x3 or `kh x 1` window runs a row of output pixels per call
//!   ([`by_rows`]: all groups of four channels and their requantization in one `asm!` block
//!   on the DSP, pairs of pixels on RV32), the rows of windows that reach outside the input
//!   on a band of `kh` input rows padded with the zero point in scratch ([`band_bytes`]);
//!   other windows take a table of each pixel's taps ([`by_taps`], taps outside the input
//!   on a row of zero points; on RV32 two pixels per call, `by_tap_pairs`). Helium runs four
//!   pixels per block (`by_blocks`). The zero point's products cancel their share of the folded bias
//!   ([`crate::gemm`]), so padded taps add 0 as the reference's skipped ones do.
//! * **Input depth 1**, any multiplier `M` (micro_speech's 10x8 layer,
//!   [`depthwise_conv_2d_s8_fast_single`]): the same sums as a CONV_2D with `M` filters of
//!   `kh * kw` taps, so it runs on [`crate::gemm::windowed`] with the filter transposed at
//!   build time to `[M][kh * kw]` (int8) and an im2col scratch.

use super::Params;
use crate::gemm;

/// Whether the input-depth-1 form applies (else the depth-multiplier-1 form).
#[inline(always)]
const fn single_input_channel(p: &Params) -> bool {
    p.input_depth == 1
}

/// The output quantization.
#[inline(always)]
const fn output_quant(p: &Params) -> gemm::Output {
    gemm::Output {
        offset: p.output_offset,
        min: p.quantized_activation_min,
        max: p.quantized_activation_max,
    }
}

/// Scratch bytes of [`depthwise_conv_2d_s8_fast`]: an im2col of two output pixels for the
/// input-depth-1 form (`2 * kh * kw`); for the row form (`by_rows`) of a layer with
/// padding, a band of `kh` input rows with the padding filled in (`band_bytes`); none
/// otherwise.
pub const fn fast_scratch_bytes(p: &Params) -> usize {
    if single_input_channel(p) {
        single_scratch_bytes(p)
    } else {
        band_bytes(p)
    }
}

/// Scratch bytes of the input-depth-1 form: the windows of two output pixels as rows of
/// `padded(kh * kw)` taps (and 4 bytes over which the last row's word copy may run, see
/// `single_rows`), then a band of the `kh` input rows one output row's windows read, each
/// padded with the zero point to its band width (plus 4 for the word reads); in all a
/// multiple of 16 bytes (the arena's alignment: no gap after it).
#[inline(always)]
pub const fn single_scratch_bytes(p: &Params) -> usize {
    let taps = gemm::padded(p.filter_height * p.filter_width);
    (2 * taps + 4 + p.filter_height * (band_width(p) + 4)).next_multiple_of(16)
}

/// Whether the row form ([`by_rows`]) takes the layer: depth multiplier 1 (not the
/// input-depth-1 form), `C % 4 == 0`, a 3x3 or `kh x 1` window.
#[inline(always)]
const fn row_form(p: &Params) -> bool {
    let (kh, kw) = (p.filter_height, p.filter_width);
    !single_input_channel(p)
        && p.input_depth == p.output_depth
        && p.input_depth > 0
        && p.input_depth.is_multiple_of(4)
        && ((kh == 3 && kw == 3) || (kw == 1 && kh > 0))
}

/// The input columns one output row's windows span, the padding included.
#[inline(always)]
const fn band_width(p: &Params) -> usize {
    (p.output_width.saturating_sub(1)) * p.stride_width
        + (p.filter_width.saturating_sub(1)) * p.dilation_width_factor
        + 1
}

/// Whether a window reaches outside the input (padding on any side).
#[inline(always)]
const fn has_padding(p: &Params) -> bool {
    let bottom = (p.output_height.saturating_sub(1)) * p.stride_height
        + (p.filter_height.saturating_sub(1)) * p.dilation_height_factor
        + 1;
    p.padding_height > 0
        || p.padding_width > 0
        || bottom > p.input_height + p.padding_height
        || band_width(p) > p.input_width + p.padding_width
}

/// Scratch bytes of the row form's band: `kh` rows of `band_width` pixels (rounded up to a
/// multiple of 16 bytes, the arena's alignment) where the layer has padding (rows of windows
/// that reach outside the input run on a copy of their input rows with the zero point filled
/// in), else none (every row runs on the input itself).
#[inline(always)]
pub const fn band_bytes(p: &Params) -> usize {
    if row_form(p) && has_padding(p) {
        (p.filter_height * band_width(p) * p.input_depth).next_multiple_of(16)
    } else {
        0
    }
}

/// The least scratch the layer runs with: none for the depth-multiplier-1 form (a plan
/// that gives it no scratch runs it by [`depthwise_conv_2d_s8_fast_lean`], one pixel at a
/// time from a table of its taps, more slowly); the input-depth-1 form's windows and band
/// ([`fast_scratch_bytes`]: it has no leaner mode, and they are small).
pub const fn lean_scratch_bytes(p: &Params) -> usize {
    if single_input_channel(p) {
        single_scratch_bytes(p)
    } else {
        0
    }
}

/// Length of the filter table [`prepare_fast_s8`] writes: `output_depth * padded(kh * kw)`
/// for the input-depth-1 form (rows padded for the im2col), the filter's length otherwise.
pub const fn fast_filter_len(p: &Params) -> usize {
    let taps = p.filter_height * p.filter_width;
    if single_input_channel(p) {
        p.output_depth * gemm::padded(taps)
    } else {
        p.output_depth * taps
    }
}

/// Whether [`depthwise_conv_2d_s8_fast`] computes this layer, and its build-time tables:
/// the filter in the fast form's layout (`fast_filter`, [`fast_filter_len`] long), the folded
/// bias, the multipliers to use and the right shifts (`output_depth` long; see
/// [`crate::gemm::prepare_layer`]). `filter` is the model's
/// `[1, kh, kw, C * M]` filter, `bias` the int32 bias (or none), `output_shift` the
/// per-channel shifts from [`prepare_s8`](super::prepare_s8). Conditions: those of
/// [`crate::gemm::prepare_layer`], and depth multiplier 1 with `C % 4 == 0` and at most 25 taps,
/// or input depth 1.
#[allow(clippy::too_many_arguments)]
pub fn prepare_fast_s8(
    p: &Params,
    filter: &[i8],
    bias: Option<&[i32]>,
    output_multiplier: &[i32],
    output_shift: &[i32],
    fast_filter: &mut [i8],
    folded_bias: &mut [i32],
    multiplier: &mut [i32],
    right_shift: &mut [i32],
) -> bool {
    let taps = p.filter_height * p.filter_width;
    let c = p.output_depth;
    if taps == 0 || filter.len() != taps * c || fast_filter.len() != fast_filter_len(p) {
        return false;
    }
    let per_tap = single_input_channel(p);
    if !per_tap && (p.input_depth != c || !c.is_multiple_of(4) || taps > crate::arch::MAX_TAPS) {
        return false;
    }
    // Rows `[C][taps]` for the accumulator bound (and, padded, the input-depth-1 layout).
    let kp = if per_tap { gemm::padded(taps) } else { taps };
    for o in 0..c {
        for t in 0..kp {
            fast_filter[o * kp + t] = if t < taps { filter[t * c + o] } else { 0 };
        }
    }
    if !gemm::prepare_layer(
        kp,
        p.input_offset,
        fast_filter,
        bias,
        output_multiplier,
        output_shift,
        &output_quant(p),
        folded_bias,
        multiplier,
        right_shift,
    ) {
        return false;
    }
    if !per_tap {
        for g in 0..c / 4 {
            for t in 0..taps {
                for j in 0..4 {
                    fast_filter[(g * taps + t) * 4 + j] = filter[t * c + 4 * g + j];
                }
            }
        }
    }
    true
}

/// Length in words of the depth-multiplier-1 form's weights table ([`pack_weights`]): two
/// per group of four channels and tap; 0 for the input-depth-1 form.
pub const fn packed_len(p: &Params) -> usize {
    if single_input_channel(p) {
        0
    } else {
        p.output_depth / 4 * p.filter_height * p.filter_width * 2
    }
}

/// The depth-multiplier-1 form's weights as the kernels read them: `fast_filter` in
/// [`prepare_fast_s8`]'s layout `[C / 4][taps][4]` (int8) widened to int16 pairs, one word
/// per two channels of a group and tap: `packed[2i] = w0 | w1 << 16`, `packed[2i + 1] = w2 |
/// w3 << 16` for the four weights of entry `i` (channels `4g..4g + 4` of tap `t`, `i = g *
/// taps + t`), so one `LDRD` gives a tap's four weights in the halves the DSP's 16-bit
/// multiply-accumulates (`SMLABB`, `SMLABT`, `SMLATB`, `SMLATT`) pair with the input's
/// `SXTB16` lanes, and Helium's `VLDRH.S32` loads them as four lanes. `packed` is
/// [`packed_len`] long (else nothing is written).
pub fn pack_weights(p: &Params, fast_filter: &[i8], packed: &mut [i32]) {
    if packed.len() != packed_len(p) || fast_filter.len() != 2 * packed.len() {
        return;
    }
    for (words, w) in packed.chunks_exact_mut(2).zip(fast_filter.chunks_exact(4)) {
        let pair = |a: i8, b: i8| (a as i16 as u16 as u32 | (b as i16 as u16 as u32) << 16) as i32;
        words[0] = pair(w[0], w[1]);
        words[1] = pair(w[2], w[3]);
    }
}

/// Fast int8 DEPTHWISE_CONV_2D, depth multiplier 1, for the layers [`prepare_fast_s8`]
/// accepts with more than one input channel. `bias`, `right_shift` are its tables, `filter`
/// the weights of [`pack_weights`], `zero_row` is `input_depth` bytes of the input zero
/// point, `scratch` holds [`fast_scratch_bytes`] bytes.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn depthwise_conv_2d_s8_fast(
    p: &Params,
    bias: &[i32],
    output_multiplier: &[i32],
    right_shift: &[i32],
    zero_row: &[i8],
    filter: &[i32],
    input: &[i8],
    output: &mut [i8],
    scratch: &mut [i8],
) {
    // Always inlined: with a model's constant `p` only the form and the clamp instance the
    // layer uses are called, so the others are not linked.
    // The row form on the DSP, RV32 and portable microkernels; Helium runs its four-pixel
    // blocks, the band unused.
    if !cfg!(kiln_arch = "mve") && row_form(p) {
        // Its scratch is the band (without it the plan calls `depthwise_conv_2d_s8_fast_lean`),
        // so no run-time choice.
        #[cfg(not(kiln_arch = "mve"))]
        {
            let q = output_quant(p);
            let ch = gemm::Channels {
                bias,
                multiplier: output_multiplier,
                right_shift,
            };
            match (q.full(), p.filter_width == 1) {
                (true, true) => by_rows::<true, true>(p, &ch, &q, filter, input, output, scratch),
                (true, false) => by_rows::<true, false>(p, &ch, &q, filter, input, output, scratch),
                (false, true) => by_rows::<false, true>(p, &ch, &q, filter, input, output, scratch),
                (false, false) => {
                    by_rows::<false, false>(p, &ch, &q, filter, input, output, scratch)
                }
            }
        }
    } else {
        let _ = scratch;
        depthwise_conv_2d_s8_fast_lean(
            p,
            bias,
            output_multiplier,
            right_shift,
            zero_row,
            filter,
            input,
            output,
        );
    }
}

/// [`depthwise_conv_2d_s8_fast`] without scratch (the plan's lean scratch, where the row
/// form's band does not fit the RAM budget): every pixel from a table of its taps (Helium:
/// its four-pixel blocks), the same sums and bytes, more instructions.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn depthwise_conv_2d_s8_fast_lean(
    p: &Params,
    bias: &[i32],
    output_multiplier: &[i32],
    right_shift: &[i32],
    zero_row: &[i8],
    filter: &[i32],
    input: &[i8],
    output: &mut [i8],
) {
    let q = output_quant(p);
    let ch = gemm::Channels {
        bias,
        multiplier: output_multiplier,
        right_shift,
    };
    gemm::by_clamp!(q, taps_by(p, &ch, &q, zero_row, filter, input, output));
}

/// Fast int8 DEPTHWISE_CONV_2D for the layers [`prepare_fast_s8`] accepts with one input
/// channel (any depth multiplier): `filter` is its int8 table ([`fast_filter_len`]),
/// `zero_row` at least one byte of the input zero point, `scratch` holds
/// [`fast_scratch_bytes`] bytes.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn depthwise_conv_2d_s8_fast_single(
    p: &Params,
    bias: &[i32],
    output_multiplier: &[i32],
    right_shift: &[i32],
    zero_row: &[i8],
    filter: &[i8],
    input: &[i8],
    output: &mut [i8],
    scratch: &mut [i8],
) {
    let q = output_quant(p);
    let ch = gemm::Channels {
        bias,
        multiplier: output_multiplier,
        right_shift,
    };
    gemm::by_clamp!(
        q,
        single_by(p, &ch, &q, zero_row, filter, input, output, scratch)
    );
}

/// The input-depth-1 form (`F`: full-range clamp, see `gemm::requantize`).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn single_by<const F: bool>(
    p: &Params,
    ch: &gemm::Channels<'_>,
    q: &gemm::Output,
    zero_row: &[i8],
    filter: &[i8],
    input: &[i8],
    output: &mut [i8],
    scratch: &mut [i8],
) {
    let _ = zero_row;
    let g = gemm::Window {
        input: [p.input_height, p.input_width, 1],
        output: [p.output_height, p.output_width],
        filter: [p.filter_height, p.filter_width],
        stride: [p.stride_height, p.stride_width],
        dilation: [p.dilation_height_factor, p.dilation_width_factor],
        padding: [p.padding_height, p.padding_width],
        zero_point: (-p.input_offset) as i8,
    };
    // Helium: four pixels per block where the weights' table fits (see `by_blocks`), else
    // the im2col convolution.
    #[cfg(kiln_arch = "mve")]
    {
        if by_blocks_single::<F>(p, ch, q, zero_row, filter, input, output) {
            return;
        }
        gemm::windowed::<F>(&g, input, filter, ch, q, output, scratch);
    }
    #[cfg(not(kiln_arch = "mve"))]
    {
        let _ = g;
        single_rows::<F>(p, ch, q, filter, input, output, scratch);
    }
}

/// The input-depth-1 form by output rows (DSP and portable microkernels): per output row,
/// the `kh` input rows its windows read are copied into a band in `scratch`, padded with the
/// zero point (its products cancel their share of the folded bias); each pair of output
/// pixels' windows is then gathered from the band into two rows of `padded(kh * kw)` taps
/// (window rows of up to 4 taps by one word each) and run by `gemm::two_pixels` (all
/// channels of both pixels: `arch::two_pixels_pairs`, requantized and stored in one block),
/// an odd last pixel by `gemm::one_pixel`. `scratch` holds [`single_scratch_bytes`].
#[cfg(not(kiln_arch = "mve"))]
#[inline(never)]
fn single_rows<const F: bool>(
    p: &Params,
    ch: &gemm::Channels<'_>,
    q: &gemm::Output,
    filter: &[i8],
    input: &[i8],
    output: &mut [i8],
    scratch: &mut [i8],
) {
    let (kh, kw) = (p.filter_height, p.filter_width);
    let (ih, iw) = (p.input_height, p.input_width);
    let (dh, dw) = (p.dilation_height_factor, p.dilation_width_factor);
    let (oh, ow, m) = (p.output_height, p.output_width, p.output_depth);
    let (sh, sw) = (p.stride_height, p.stride_width);
    let k = gemm::padded(kh * kw);
    let bw = band_width(p);
    let row_len = bw + 4;
    let zero_point = (-p.input_offset) as i8;
    let Some((col, band)) = scratch.split_at_mut_checked(2 * k + 4) else {
        return;
    };
    let Some(band) = band.get_mut(..kh * row_len) else {
        return;
    };
    let image_len = ih * iw;
    let out_len = oh * ow * m;
    let batches = input.len() / image_len.max(1);
    for b in 0..batches {
        let (Some(image), Some(out_image)) = (
            input.get(b * image_len..(b + 1) * image_len),
            output.get_mut(b * out_len..(b + 1) * out_len),
        ) else {
            return;
        };
        for oy in 0..oh {
            // The band: row `fy` holds input row `y0 + fy * dh` from column `-pw` on.
            let y0 = (oy * sh) as isize - p.padding_height as isize;
            for (fy, dst) in band.chunks_exact_mut(row_len).enumerate() {
                let iy = y0 + (fy * dh) as isize;
                let src = (iy >= 0 && (iy as usize) < ih)
                    .then(|| image.get(iy as usize * iw..(iy as usize + 1) * iw))
                    .flatten();
                let Some(src) = src else {
                    dst.fill(zero_point);
                    continue;
                };
                let left = p.padding_width.min(dst.len());
                let (pad, rest) = dst.split_at_mut(left);
                pad.fill(zero_point);
                let n = rest.len().min(src.len());
                let (body, right) = rest.split_at_mut(n);
                if let Some(src) = src.get(..n) {
                    body.copy_from_slice(src);
                }
                right.fill(zero_point);
            }
            let Some(out_row) = out_image.get_mut(oy * ow * m..(oy + 1) * ow * m) else {
                return;
            };
            let mut ox = 0;
            while ox < ow {
                let pair = ox + 1 < ow;
                for j in 0..1 + pair as usize {
                    gather(band, row_len, (ox + j) * sw, kh, kw, dw, col, j * k);
                }
                let Some(out) = out_row.get_mut(ox * m..) else {
                    return;
                };
                if pair {
                    if let Some((o0, rest)) = out.split_at_mut_checked(m)
                        && let Some(o1) = rest.get_mut(..m)
                    {
                        gemm::two_pixels::<F>(k, col, None, filter, ch, q, o0, o1);
                    }
                } else if let Some(o0) = out.get_mut(..m) {
                    gemm::one_pixel::<F>(k, col, filter, ch, q, o0);
                }
                ox += 2;
            }
        }
    }
}

/// Gathers the window at column `x` of `band` (band row `fy` is the window's row `fy`,
/// `row_len` bytes apart; taps `dw` apart in a row) into `col[at..]` in filter order, `kw`
/// taps per row. Rows of contiguous taps (`dw == 1`) go by words: a word copy may write up
/// to 3 bytes past a row's taps, which the next row takes (or the padding taps, whose
/// weights are 0, or the 4 spare bytes of `col`).
#[cfg(not(kiln_arch = "mve"))]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn gather(
    band: &[i8],
    row_len: usize,
    x: usize,
    kh: usize,
    kw: usize,
    dw: usize,
    col: &mut [i8],
    at: usize,
) {
    for fy in 0..kh {
        let src_at = fy * row_len + x;
        let dst_at = at + fy * kw;
        if dw == 1 {
            let mut i = 0;
            while i < kw {
                if let (Some(s), Some(d)) = (
                    band.get(src_at + i..src_at + i + 4),
                    col.get_mut(dst_at + i..dst_at + i + 4),
                ) {
                    d.copy_from_slice(s);
                }
                i += 4;
            }
        } else {
            for fx in 0..kw {
                if let (Some(&s), Some(d)) = (band.get(src_at + fx * dw), col.get_mut(dst_at + fx))
                {
                    *d = s;
                }
            }
        }
    }
}

/// The depth-multiplier-1 form outside [`by_rows`]: Helium's four-pixel blocks, else one
/// pixel at a time from a table of its taps ([`by_taps`]).
#[inline(never)]
fn taps_by<const F: bool>(
    p: &Params,
    ch: &gemm::Channels<'_>,
    q: &gemm::Output,
    zero_row: &[i8],
    filter: &[i32],
    input: &[i8],
    output: &mut [i8],
) {
    #[cfg(kiln_arch = "mve")]
    by_blocks::<F>(p, ch, q, zero_row, filter, &[], input, output, false);
    #[cfg(kiln_arch = "riscv")]
    by_tap_pairs::<F>(p, ch, q, zero_row, filter, input, output);
    #[cfg(not(any(kiln_arch = "mve", kiln_arch = "riscv")))]
    by_taps::<F>(p, ch, q, zero_row, filter, input, output);
}

/// The depth-multiplier-1 form on RV32: the output pixels two at a time in raster order
/// (a pair may span two rows), each from a table of its taps (taps outside the input read
/// `zero_row`), all channels of the pair by [`dw_pair`](crate::arch::dw_pair) (each tap's
/// weights loaded once for both pixels); an odd last pixel as [`by_taps`] runs one. A table
/// whose window lies inside the input, as did the one it held before in the same row, is
/// moved along the row instead of being rebuilt.
#[cfg(kiln_arch = "riscv")]
#[inline(never)]
fn by_tap_pairs<const F: bool>(
    p: &Params,
    ch: &gemm::Channels<'_>,
    q: &gemm::Output,
    zero_row: &[i8],
    filter: &[i32],
    input: &[i8],
    output: &mut [i8],
) {
    let c = p.input_depth;
    let (kh, kw) = (p.filter_height, p.filter_width);
    let (ih, iw) = (p.input_height, p.input_width);
    let (oh, ow) = (p.output_height, p.output_width);
    let image_len = ih * iw * c;
    let pixels = oh * ow;
    let out_len = pixels * c;
    let (Some(bias), Some(m), Some(e)) = (
        ch.bias.get(..c),
        ch.multiplier.get(..c),
        ch.right_shift.get(..c),
    ) else {
        return;
    };
    let mut t0: [&[i8]; crate::arch::MAX_TAPS] = [zero_row; crate::arch::MAX_TAPS];
    let mut t1 = t0;
    let (Some(taps0), Some(taps1)) = (t0.get_mut(..kh * kw), t1.get_mut(..kh * kw)) else {
        return;
    };
    let batches = input.len() / image_len.max(1);
    for b in 0..batches {
        let (Some(image), Some(out_image)) = (
            input.get(b * image_len..(b + 1) * image_len),
            output.get_mut(b * out_len..(b + 1) * out_len),
        ) else {
            return;
        };
        let (mut last0, mut last1) = (None, None);
        let mut i = 0;
        while i + 1 < pixels {
            fill_taps(p, i, taps0, &mut last0, image, zero_row);
            fill_taps(p, i + 1, taps1, &mut last1, image, zero_row);
            if let Some((o0, o1)) = out_image
                .get_mut(i * c..(i + 2) * c)
                .and_then(|o| o.split_at_mut_checked(c))
            {
                crate::arch::dw_pair(taps0, taps1, filter, bias, m, e, q, o0, o1);
            }
            i += 2;
        }
        if i < pixels {
            fill_taps(p, i, taps0, &mut last0, image, zero_row);
            let Some(out) = out_image.get_mut(i * c..(i + 1) * c) else {
                return;
            };
            crate::arch::mac_taps4(taps0, filter, bias, |g, [a0, a1, a2, a3]| {
                let at = 4 * g;
                if let (Some(o), Some(m), Some(e)) = (
                    out.get_mut(at..at + 4),
                    m.get(at..at + 4),
                    e.get(at..at + 4),
                ) {
                    let rq = |a, j: usize| gemm::requantize::<F>(a, m[j], e[j], q);
                    o[0] = rq(a0, 0);
                    o[1] = rq(a1, 1);
                    o[2] = rq(a2, 2);
                    o[3] = rq(a3, 3);
                }
            });
        }
    }
}

/// The depth-multiplier-1 form with Helium: the output pixels four at a time in raster
/// order (the last block overlaps the one before it when the pixels are not a multiple of
/// 4: it writes the same bytes again), all channels of a block per call. A block of one output row whose windows lie
/// inside the input takes its taps as offsets ([`dw_block4`](crate::arch::dw_block4)); any
/// other block (the padded edges, a block across rows) takes a table of its taps' pointers
/// written from its windows' origins, the taps outside the input reading the zero point
/// row ([`dw_block4_windows`](crate::arch::dw_block4_windows)). Images of fewer than four
/// output pixels run [`by_taps`].
///
/// `packed`: the depth-multiplier-1 form's weights ([`pack_weights`]). `single`: the
/// input-depth-1 form (depth multiplier `output_depth`) instead, with `filter` in the
/// depth-multiplier-1 layout `[M / 4][kh * kw][4]` as int8 ([`by_blocks_single`]), run by
/// [`dw1_block4`](crate::arch::dw1_block4) and
/// [`dw1_block4_windows`](crate::arch::dw1_block4_windows).
#[cfg(kiln_arch = "mve")]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn by_blocks<const F: bool>(
    p: &Params,
    ch: &gemm::Channels<'_>,
    q: &gemm::Output,
    zero_row: &[i8],
    packed: &[i32],
    filter: &[i8],
    input: &[i8],
    output: &mut [i8],
    single: bool,
) {
    // Input channels per pixel (`ci`) and output channels (`c`).
    let (ci, c) = (p.input_depth, p.output_depth);
    let (kh, kw) = (p.filter_height, p.filter_width);
    let (ih, iw) = (p.input_height, p.input_width);
    let (dh, dw) = (p.dilation_height_factor, p.dilation_width_factor);
    let (oh, ow) = (p.output_height, p.output_width);
    let pixels = oh * ow;
    let block_taps = crate::arch::DwTaps::new(kh, kw, dh, dw, iw, ci);
    let Some(dt) = block_taps.filter(|_| pixels >= 4 && (single || ci == c)) else {
        if !single {
            by_taps::<F>(p, ch, q, zero_row, packed, input, output);
        }
        return;
    };
    let image_len = ih * iw * ci;
    let out_len = pixels * c;
    // The last input position a window starting at 0 reaches.
    let (reach_y, reach_x) = ((kh - 1) * dh, (kw - 1) * dw);
    let step = p.stride_width * ci;
    // Blocks in raster order over the image (per row, the overlapping last blocks of
    // narrow rows would cost more than the blocks across rows).
    let (rows, width) = (1, pixels);
    let batches = input.len() / image_len.max(1);
    for b in 0..batches {
        let (Some(image), Some(out_image)) = (
            input.get(b * image_len..(b + 1) * image_len),
            output.get_mut(b * out_len..(b + 1) * out_len),
        ) else {
            return;
        };
        let Some(win) = crate::arch::DwWindow::new(kh, kw, dh, dw, ih, iw, ci, image) else {
            return;
        };
        for r in 0..rows {
            let mut i = 0;
            while i < width {
                let first = r * width + if i + 4 <= width { i } else { width - 4 };
                i += 4;
                let Some(out) = out_image.get_mut(first * c..(first + 4) * c) else {
                    return;
                };
                let (oy, ox) = (first / ow, first % ow);
                let y0 = (oy * p.stride_height) as isize - p.padding_height as isize;
                let x0 = (ox * p.stride_width) as isize - p.padding_width as isize;
                if ox + 3 < ow
                    && y0 >= 0
                    && y0 as usize + reach_y < ih
                    && x0 >= 0
                    && x0 as usize + 3 * p.stride_width + reach_x < iw
                {
                    let start = (y0 as usize * iw + x0 as usize) * ci;
                    if single {
                        crate::arch::dw1_block4(
                            image,
                            start,
                            step,
                            &dt,
                            c,
                            filter,
                            ch.bias,
                            ch.multiplier,
                            ch.right_shift,
                            q,
                            out,
                        );
                    } else {
                        crate::arch::dw_block4(
                            image,
                            start,
                            step,
                            &dt,
                            c,
                            packed,
                            ch.bias,
                            ch.multiplier,
                            ch.right_shift,
                            q,
                            out,
                        );
                    }
                    continue;
                }
                // Any other block: its windows' origins, the taps from a table.
                let origin = |j: usize| {
                    let (oy, ox) = ((first + j) / ow, (first + j) % ow);
                    (
                        (oy * p.stride_height) as isize - p.padding_height as isize,
                        (ox * p.stride_width) as isize - p.padding_width as isize,
                    )
                };
                let origins = [origin(0), origin(1), origin(2), origin(3)];
                if single {
                    crate::arch::dw1_block4_windows(
                        image,
                        zero_row,
                        &win,
                        &origins,
                        c,
                        filter,
                        ch.bias,
                        ch.multiplier,
                        ch.right_shift,
                        q,
                        out,
                    );
                } else {
                    crate::arch::dw_block4_windows(
                        image,
                        zero_row,
                        &win,
                        &origins,
                        c,
                        packed,
                        ch.bias,
                        ch.multiplier,
                        ch.right_shift,
                        q,
                        out,
                    );
                }
            }
        }
    }
}

/// The most weights of the input-depth-1 form [`by_blocks_single`] takes (its table on the
/// stack).
#[cfg(kiln_arch = "mve")]
const SINGLE_MAX_WEIGHTS: usize = 256;

/// The input-depth-1 form with Helium, if it applies (depth multiplier a multiple of 4, at
/// most [`SINGLE_MAX_WEIGHTS`] weights, at least four output pixels; else `false` and
/// nothing is written): the build-time filter `[M][padded(kh * kw)]` (the im2col form's)
/// is rearranged on the stack into `[M / 4][kh * kw][4]` and [`by_blocks`] runs on it.
#[cfg(kiln_arch = "mve")]
#[inline(never)]
fn by_blocks_single<const F: bool>(
    p: &Params,
    ch: &gemm::Channels<'_>,
    q: &gemm::Output,
    zero_row: &[i8],
    filter: &[i8],
    input: &[i8],
    output: &mut [i8],
) -> bool {
    let m = p.output_depth;
    let taps = p.filter_height * p.filter_width;
    let kp = gemm::padded(taps);
    if !m.is_multiple_of(4)
        || taps > crate::arch::MAX_TAPS
        || m * taps > SINGLE_MAX_WEIGHTS
        || p.output_height * p.output_width < 4
        || filter.len() < m * kp
    {
        return false;
    }
    let mut w = [0i8; SINGLE_MAX_WEIGHTS];
    for o in 0..m {
        for t in 0..taps {
            if let (Some(d), Some(&v)) = (
                w.get_mut(((o / 4) * taps + t) * 4 + o % 4),
                filter.get(o * kp + t),
            ) {
                *d = v;
            }
        }
    }
    by_blocks::<F>(p, ch, q, zero_row, &[], &w, input, output, true);
    true
}

/// The depth-multiplier-1 form by output rows ([`crate::arch`]'s `dw_row`: one call per row
/// of output pixels, all their channels), for the layers [`row_form`] takes, with `scratch`
/// holding [`band_bytes`]: a row whose windows lie inside the input runs on the input
/// itself; any other (padding) on a band of its `kh` input rows in `scratch`, each padded
/// with the zero point to [`band_width`] pixels (the zero point's products cancel their
/// share of the folded bias, see [`crate::gemm`]).
/// `KX1`: the `kh x 1` window (else 3x3), as [`crate::arch`]'s `dw_row` takes it.
#[cfg(not(kiln_arch = "mve"))]
#[inline(never)]
fn by_rows<const F: bool, const KX1: bool>(
    p: &Params,
    ch: &gemm::Channels<'_>,
    q: &gemm::Output,
    filter: &[i32],
    input: &[i8],
    output: &mut [i8],
    scratch: &mut [i8],
) {
    let c = p.input_depth;
    let (kh, kw) = (p.filter_height, p.filter_width);
    let (ih, iw) = (p.input_height, p.input_width);
    let (dh, dw) = (p.dilation_height_factor, p.dilation_width_factor);
    let (oh, ow) = (p.output_height, p.output_width);
    let bw = band_width(p);
    let padded_w = p.padding_width > 0 || bw > iw;
    let zero_point = (-p.input_offset) as i8;
    let image_len = ih * iw * c;
    let out_len = oh * ow * c;
    let batches = input.len() / image_len.max(1);
    let Some(band) = scratch.get_mut(..band_bytes(p)) else {
        return;
    };
    // The band's padding columns hold the zero point for the whole call: only the rows'
    // bodies (input pixels, or the zero point for rows outside the input) are written per
    // output row below.
    band.fill(zero_point);
    let left = (p.padding_width * c).min(bw * c);
    let body = (bw * c - left).min(iw * c);
    for b in 0..batches {
        let (Some(image), Some(out_image)) = (
            input.get(b * image_len..(b + 1) * image_len),
            output.get_mut(b * out_len..(b + 1) * out_len),
        ) else {
            return;
        };
        for oy in 0..oh {
            let Some(out) = out_image.get_mut(oy * ow * c..(oy + 1) * ow * c) else {
                return;
            };
            let y0 = (oy * p.stride_height) as isize - p.padding_height as isize;
            let inside = y0 >= 0 && y0 as usize + (kh - 1) * dh < ih;
            // The input itself (window rows `dh` input rows apart), or the band (rows in order).
            let (x, start, row) = if inside && !padded_w {
                (image, y0 as usize * iw * c, dh * iw * c)
            } else {
                // The band: row `fy` holds input row `y0 + fy * dh` from column `-pw` on
                // (its padding columns filled above).
                for (fy, dst) in band.chunks_exact_mut(bw * c).enumerate() {
                    let iy = y0 + (fy * dh) as isize;
                    let src = (iy >= 0 && (iy as usize) < ih)
                        .then(|| image.get(iy as usize * iw * c..)?.get(..body))
                        .flatten();
                    let Some(dst) = dst.get_mut(left..left + body) else {
                        return;
                    };
                    match src {
                        Some(src) => dst.copy_from_slice(src),
                        None => dst.fill(zero_point),
                    }
                }
                (&*band, 0, bw * c)
            };
            let r = crate::arch::DwRow {
                kh,
                kw,
                col: dw * c,
                row,
                step: p.stride_width * c,
                pixels: ow,
                c,
            };
            crate::arch::dw_row::<F, KX1>(
                &r,
                x,
                start,
                filter,
                ch.bias,
                ch.multiplier,
                ch.right_shift,
                q,
                out,
            );
        }
    }
}

/// Fills `taps` with output pixel `i`'s window of `image` (raster order; taps outside the
/// input read `zero_row`). `last`: the pixel the table holds if its window lay inside the
/// input; a window inside the input in the same row then only moves the table along.
#[cfg(kiln_arch = "riscv")]
#[inline(always)]
fn fill_taps<'a>(
    p: &Params,
    i: usize,
    taps: &mut [&'a [i8]],
    last: &mut Option<(usize, usize)>,
    image: &'a [i8],
    zero_row: &'a [i8],
) {
    let c = p.input_depth;
    let (kh, kw) = (p.filter_height, p.filter_width);
    let (ih, iw) = (p.input_height, p.input_width);
    let (dh, dw) = (p.dilation_height_factor, p.dilation_width_factor);
    let ow = p.output_width.max(1);
    let (oy, ox) = (i / ow, i % ow);
    let y0 = (oy * p.stride_height) as isize - p.padding_height as isize;
    let x0 = (ox * p.stride_width) as isize - p.padding_width as isize;
    let inside = y0 >= 0
        && y0 as usize + kh.saturating_sub(1) * dh < ih
        && x0 >= 0
        && x0 as usize + kw.saturating_sub(1) * dw < iw;
    if inside
        && let Some((ly, lx)) = *last
        && ly == oy
        && lx < ox
    {
        // Each tap moves `ox - lx` strides to the right: its slice runs to the end of the
        // image, so this only advances its start.
        let d = (ox - lx) * p.stride_width * c;
        for tap in taps.iter_mut() {
            *tap = tap.get(d..).unwrap_or(zero_row);
        }
    } else {
        for fy in 0..kh {
            let iy = y0 + (fy * dh) as isize;
            for fx in 0..kw {
                let ix = x0 + (fx * dw) as isize;
                let valid = iy >= 0 && ix >= 0 && (iy as usize) < ih && (ix as usize) < iw;
                let tap = if valid {
                    image
                        .get((iy as usize * iw + ix as usize) * c..)
                        .unwrap_or(zero_row)
                } else {
                    zero_row
                };
                if let Some(slot) = taps.get_mut(fy * kw + fx) {
                    *slot = tap;
                }
            }
        }
    }
    *last = inside.then_some((oy, ox));
}

/// The depth-multiplier-1 form (`F`: full-range clamp, see `gemm::requantize`).
// RV32 runs `by_tap_pairs` instead.
#[cfg_attr(kiln_arch = "riscv", allow(dead_code))]
#[inline(never)]
fn by_taps<const F: bool>(
    p: &Params,
    ch: &gemm::Channels<'_>,
    q: &gemm::Output,
    zero_row: &[i8],
    filter: &[i32],
    input: &[i8],
    output: &mut [i8],
) {
    let c = p.input_depth;
    let (kh, kw) = (p.filter_height, p.filter_width);
    let (ih, iw) = (p.input_height, p.input_width);
    let image_len = ih * iw * c;
    let out_len = p.output_height * p.output_width * c;
    let mut taps: [&[i8]; crate::arch::MAX_TAPS] = [zero_row; crate::arch::MAX_TAPS];
    let Some(taps) = taps.get_mut(..kh * kw) else {
        return;
    };
    let batches = input.len() / image_len.max(1);
    // Indexed rather than zipped chunks: no out-of-line iterator code with a panic path.
    for b in 0..batches {
        let (Some(image), Some(out_image)) = (
            input.get(b * image_len..(b + 1) * image_len),
            output.get_mut(b * out_len..(b + 1) * out_len),
        ) else {
            return;
        };
        let mut px = out_image.chunks_exact_mut(c.max(1));
        let (dh, dw) = (p.dilation_height_factor, p.dilation_width_factor);
        // The last input position a window starting at 0 reaches.
        let (reach_y, reach_x) = ((kh - 1) * dh, (kw - 1) * dw);
        let step = p.stride_width * c;
        for oy in 0..p.output_height {
            let y0 = (oy * p.stride_height) as isize - p.padding_height as isize;
            let rows_inside = y0 >= 0 && y0 as usize + reach_y < ih;
            // Whether `taps` holds the previous pixel's window, wholly inside the input.
            let mut previous_inside = false;
            for ox in 0..p.output_width {
                let x0 = (ox * p.stride_width) as isize - p.padding_width as isize;
                let Some(out) = px.next() else { return };
                let inside = rows_inside && x0 >= 0 && x0 as usize + reach_x < iw;
                if inside && previous_inside {
                    // Each tap moves one stride to the right: its slice runs to the end of
                    // the image, so this only advances its start.
                    for tap in taps.iter_mut() {
                        *tap = tap.get(step..).unwrap_or(zero_row);
                    }
                } else {
                    for fy in 0..kh {
                        let iy = y0 + (fy * dh) as isize;
                        for fx in 0..kw {
                            let ix = x0 + (fx * dw) as isize;
                            let valid =
                                iy >= 0 && ix >= 0 && (iy as usize) < ih && (ix as usize) < iw;
                            let tap = if valid {
                                let at = (iy as usize * iw + ix as usize) * c;
                                image.get(at..).unwrap_or(zero_row)
                            } else {
                                zero_row
                            };
                            if let Some(slot) = taps.get_mut(fy * kw + fx) {
                                *slot = tap;
                            }
                        }
                    }
                }
                previous_inside = inside;
                crate::arch::mac_taps4(taps, filter, ch.bias, |g, [a0, a1, a2, a3]| {
                    let at = 4 * g;
                    // Helium: the four lanes at once.
                    #[cfg(kiln_arch = "mve")]
                    if let (Some(o), Some(m), Some(e)) = (
                        out.get_mut(at..),
                        ch.multiplier.get(at..),
                        ch.right_shift.get(at..),
                    ) {
                        crate::arch::requantize4([a0, a1, a2, a3], m, e, q, o);
                        return;
                    }
                    if let (Some(o), Some(m), Some(e)) = (
                        out.get_mut(at..at + 4),
                        ch.multiplier.get(at..at + 4),
                        ch.right_shift.get(at..at + 4),
                    ) {
                        let rq = |a, j: usize| gemm::requantize::<F>(a, m[j], e[j], q);
                        o[0] = rq(a0, 0);
                        o[1] = rq(a1, 1);
                        o[2] = rq(a2, 2);
                        o[3] = rq(a3, 3);
                    }
                });
            }
        }
    }
}

/// [`depthwise_conv_2d_s8_fast`] in place (depth multiplier 1, [`in_place_supported`](super::in_place_supported)),
/// with `data` and `scratch` as [`depthwise_conv_2d_s8_in_place`](super::depthwise_conv_2d_s8_in_place)
/// takes them (one channel plane at a time): the same tables, the same sums (taps outside
/// the input read the zero point), byte-identical with it. Scalar: it is chosen only where
/// it lowers the arena.
#[allow(clippy::too_many_arguments)]
pub fn depthwise_conv_2d_s8_fast_in_place(
    p: &Params,
    bias: &[i32],
    output_multiplier: &[i32],
    right_shift: &[i32],
    zero_row: &[i8],
    filter: &[i32],
    data: &mut [i8],
    scratch: &mut [i8],
) {
    let _ = zero_row;
    let q = output_quant(p);
    let (kh, kw) = (p.filter_height, p.filter_width);
    let taps = kh * kw;
    let zero_point = (-p.input_offset) as i8;
    super::in_place(p, data, scratch, |in_b, y0, _, x0, _, c| {
        let (g, j) = (c / 4, c % 4);
        let mut acc = bias.get(c).copied().unwrap_or(0);
        for fy in 0..kh {
            let iy = y0 + (fy * p.dilation_height_factor) as isize;
            for fx in 0..kw {
                let ix = x0 + (fx * p.dilation_width_factor) as isize;
                let inside = iy >= 0
                    && ix >= 0
                    && (iy as usize) < p.input_height
                    && (ix as usize) < p.input_width;
                let x = if inside {
                    let at = (iy as usize * p.input_width + ix as usize) * p.input_depth + c;
                    in_b.get(at).copied().unwrap_or(zero_point)
                } else {
                    zero_point
                };
                let at = 2 * (g * taps + fy * kw + fx);
                let w = crate::arch::weight16(filter.get(at..).unwrap_or(&[]), j);
                acc = acc.wrapping_add(x as i32 * w);
            }
        }
        match (output_multiplier.get(c), right_shift.get(c)) {
            (Some(&m), Some(&e)) => gemm::requantize::<false>(acc, m, e, &q),
            _ => 0,
        }
    });
}
