//! The fast int8 CONV_2D on the matrix products of [`crate::gemm`] (DSP instructions on
//! Cortex-M4/M7/M33, Helium on the M55/M85, plain Rust elsewhere), byte-identical with
//! [`conv_2d_s8`](super::conv_2d_s8) for the layers [`prepare_fast_s8`] accepts: 1x1
//! stride-1 convolutions directly, any other window through an im2col of two pixels.

use super::{Params, pointwise_in_place_supported};

/// Whether [`conv_2d_s8_fast`] computes this int8 convolution byte-identically with
/// [`conv_2d_s8`](super::conv_2d_s8), and its build-time tables: the folded bias (`bias + input_offset *
/// sum(w)`), the multipliers to use and the right shift per output channel (see
/// [`crate::gemm`] for the conditions: one group, accumulators within `2^30`, right shifts
/// of 1..=31, and [`crate::gemm::prepare_layer`] for the multipliers), and, if
/// [`fast_filter_len`] is not 0, the filter with its rows padded for the im2col
/// (`fast_filter`). `filter` is the OHWI filter, `bias` the int32 bias (or none),
/// `output_multiplier`/`output_shift` the per-channel values from [`prepare_s8`](super::prepare_s8).
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
    let k = p.filter_height * p.filter_width * p.input_depth;
    if p.filter_input_depth != p.input_depth || fast_filter.len() != fast_filter_len(p) {
        return false;
    }
    if !fast_filter.is_empty() {
        crate::gemm::pad_rows(k, filter, fast_filter);
    }
    crate::gemm::prepare_layer(
        k,
        p.input_offset,
        filter,
        bias,
        output_multiplier,
        output_shift,
        &output_quant(p),
        folded_bias,
        multiplier,
        right_shift,
    )
}

/// Length of [`conv_2d_s8_fast`]'s own filter table: 0 when it takes the model's filter
/// (a 1x1 stride-1 convolution, or a window of a multiple of 4 values), else the filter with
/// each row padded to a multiple of 4 (`output_depth * padded(kh * kw * input_depth)`).
pub const fn fast_filter_len(p: &Params) -> usize {
    let k = p.filter_height * p.filter_width * p.input_depth;
    if pointwise_in_place_supported(p) || k.is_multiple_of(4) {
        0
    } else {
        p.output_depth * crate::gemm::padded(k)
    }
}

/// [`conv_2d_s8_fast`] in place for a pointwise convolution
/// ([`pointwise_in_place_supported`](super::pointwise_in_place_supported)), with `data` and `scratch` as
/// [`conv_2d_s8_pointwise_in_place`](super::conv_2d_s8_pointwise_in_place) takes them (one output pixel at a time through a
/// scratch pixel of `output_depth` bytes): byte-identical with it.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn conv_2d_s8_fast_pointwise_in_place(
    p: &Params,
    bias: &[i32],
    output_multiplier: &[i32],
    right_shift: &[i32],
    data: &mut [i8],
    filter: &[i8],
    scratch: &mut [i8],
) {
    let ch = crate::gemm::Channels {
        bias,
        multiplier: output_multiplier,
        right_shift,
    };
    let pixels = p.batches * p.input_height * p.input_width;
    let q = output_quant(p);
    crate::gemm::pointwise_in_place(p.input_depth, pixels, data, filter, &ch, &q, scratch);
}

/// Scratch bytes of [`conv_2d_s8_fast_rows_in_place`]: the ring of output rows
/// ([`rows_in_place_scratch_elements`](super::rows_in_place_scratch_elements)), then the lean
/// im2col ([`lean_scratch_bytes`]).
pub const fn fast_rows_in_place_scratch_bytes(p: &Params) -> usize {
    super::rows_in_place_scratch_elements(p) + lean_scratch_bytes(p)
}

/// [`conv_2d_s8_fast`] in place by rows ([`rows_in_place_supported`](super::rows_in_place_supported)),
/// with `data` as [`conv_2d_s8_rows_in_place`](super::conv_2d_s8_rows_in_place) takes it and
/// `scratch` of [`fast_rows_in_place_scratch_bytes`] (the ring, then the im2col of the rows;
/// more im2col is used as [`conv_2d_s8_fast`] uses it): byte-identical with it.
#[allow(clippy::too_many_arguments)]
pub fn conv_2d_s8_fast_rows_in_place(
    p: &Params,
    bias: &[i32],
    output_multiplier: &[i32],
    right_shift: &[i32],
    filter: &[i8],
    data: &mut [i8],
    scratch: &mut [i8],
) {
    let (ring, im2col) = scratch.split_at_mut(super::rows_in_place_scratch_elements(p));
    super::rows_in_place(p, data, ring, |q, input, out| {
        conv_2d_s8_fast(
            q,
            bias,
            output_multiplier,
            right_shift,
            filter,
            input,
            out,
            im2col,
        )
    });
}

/// The output quantization of a fast layer.
#[inline(always)]
const fn output_quant(p: &Params) -> crate::gemm::Output {
    crate::gemm::Output {
        offset: p.output_offset,
        min: p.quantized_activation_min,
        max: p.quantized_activation_max,
    }
}

/// Scratch bytes of [`conv_2d_s8_fast`]: a pixel pair widened for a 1x1 stride-1
/// convolution without padding ([`crate::gemm::pointwise_scratch_bytes`]), otherwise an
/// im2col of two output pixels and its widened form
/// ([`crate::gemm::windowed_scratch_bytes`]).
pub const fn fast_scratch_bytes(p: &Params) -> usize {
    let k = p.filter_height * p.filter_width * p.input_depth;
    if pointwise_in_place_supported(p) {
        crate::gemm::pointwise_scratch_bytes(k, p.output_depth)
    } else {
        crate::gemm::windowed_scratch_bytes(k, p.output_depth)
    }
}

/// The least scratch [`conv_2d_s8_fast`] runs with (more slowly, without widening its
/// pixels): the int8 im2col of a windowed convolution, none for a pointwise one.
pub const fn lean_scratch_bytes(p: &Params) -> usize {
    if pointwise_in_place_supported(p) {
        0
    } else {
        2 * crate::gemm::padded(p.filter_height * p.filter_width * p.input_depth)
    }
}

/// The scratch bytes an int8 CONV_2D declares whichever kernel runs it: the fast kernel's
/// ([`fast_scratch_bytes`]) for one group, none for a grouped convolution (which only the
/// reference kernel runs).
pub const fn s8_scratch_bytes(p: &Params) -> usize {
    if p.filter_input_depth == p.input_depth {
        fast_scratch_bytes(p)
    } else {
        0
    }
}

/// Int8 CONV_2D on the fast matrix products of [`crate::gemm`] (DSP instructions on
/// Cortex-M4/M7/M33, Helium on the M55/M85, plain Rust elsewhere), for the layers [`prepare_fast_s8`] accepts:
/// byte-identical with [`conv_2d_s8`](super::conv_2d_s8). `bias`, `output_multiplier` and `right_shift` are
/// the tables from [`prepare_fast_s8`], `filter` its filter table if [`fast_filter_len`] is
/// not 0, else the model's; `scratch` holds [`fast_scratch_bytes`] bytes (or at least
/// [`lean_scratch_bytes`], then it runs without widened pixels).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn conv_2d_s8_fast(
    p: &Params,
    bias: &[i32],
    output_multiplier: &[i32],
    right_shift: &[i32],
    filter: &[i8],
    input: &[i8],
    output: &mut [i8],
    scratch: &mut [i8],
) {
    // Always inlined: with a model's constant `p` only the form and the clamp instance the
    // layer uses are called, so the others are not linked.
    let ch = crate::gemm::Channels {
        bias,
        multiplier: output_multiplier,
        right_shift,
    };
    let q = output_quant(p);
    if pointwise_in_place_supported(p) {
        // Helium: three pixels per block where the channels come in groups of four.
        #[cfg(kiln_arch = "mve")]
        if ch.bias.len().is_multiple_of(4) {
            let k = p.input_depth;
            crate::gemm::by_clamp!(q, pointwise_by3(k, input, filter, &ch, &q, output));
            return;
        }
        crate::gemm::pointwise(p.input_depth, input, filter, &ch, &q, output, scratch);
    } else {
        crate::gemm::by_clamp!(q, windowed_by(p, &ch, &q, filter, input, output, scratch));
    }
}

/// [`conv_2d_s8_fast`] of a windowed layer, for a full-range clamp (`F`) or another.
#[inline(never)]
fn windowed_by<const F: bool>(
    p: &Params,
    ch: &crate::gemm::Channels<'_>,
    q: &crate::gemm::Output,
    filter: &[i8],
    input: &[i8],
    output: &mut [i8],
    scratch: &mut [i8],
) {
    let g = crate::gemm::Window {
        input: [p.input_height, p.input_width, p.input_depth],
        output: [p.output_height, p.output_width],
        filter: [p.filter_height, p.filter_width],
        stride: [p.stride_height, p.stride_width],
        dilation: [p.dilation_height_factor, p.dilation_width_factor],
        padding: [p.padding_height, p.padding_width],
        zero_point: (-p.input_offset) as i8,
    };
    // Helium: three pixels per block where the scratch holds their im2col and the channels
    // come in groups of four.
    #[cfg(kiln_arch = "mve")]
    if windowed_by3::<F>(&g, ch, q, filter, input, output, scratch) {
        return;
    }
    crate::gemm::windowed::<F>(&g, input, filter, ch, q, output, scratch);
}

/// A 1x1 stride-1 convolution with Helium, `n` (`ch.bias.len()`) a multiple of 4: the
/// pixels three at a time by `arch::three_pixels_by4` (three pixels by four channels per
/// group), the last one or two by `gemm`'s pair and single-pixel forms.
#[cfg(kiln_arch = "mve")]
#[inline(never)]
fn pointwise_by3<const F: bool>(
    k: usize,
    input: &[i8],
    w: &[i8],
    ch: &crate::gemm::Channels<'_>,
    q: &crate::gemm::Output,
    out: &mut [i8],
) {
    let n = ch.bias.len();
    let pixels = input.len() / k.max(1);
    // All triples in one block.
    let mut p = crate::arch::pixels_by3(
        k,
        pixels / 3,
        n,
        input,
        w,
        ch.bias,
        ch.multiplier,
        ch.right_shift,
        q,
        out,
    );
    while p + 3 <= pixels {
        let (Some(x), Some(o)) = (
            input.get(p * k..(p + 3) * k),
            out.get_mut(p * n..(p + 3) * n),
        ) else {
            return;
        };
        let (x0, x12) = x.split_at(k.min(x.len()));
        let (x1, x2) = x12.split_at(k.min(x12.len()));
        let (o0, o12) = o.split_at_mut(n.min(o.len()));
        let (o1, o2) = o12.split_at_mut(n.min(o12.len()));
        crate::arch::three_pixels_by4(
            k,
            [x0, x1, x2],
            w,
            ch.bias,
            ch.multiplier,
            ch.right_shift,
            q,
            [o0, o1, o2],
        );
        p += 3;
    }
    by3_rest::<F>(
        k,
        input.get(p * k..).unwrap_or(&[]),
        w,
        ch,
        q,
        out.get_mut(p * n..).unwrap_or(&mut []),
    );
}

/// The last one or two pixels (`x`: their `k` values each, `out` their `n` channels each) of
/// the three-pixel forms, by `gemm`'s pair and single-pixel forms.
#[cfg(kiln_arch = "mve")]
#[inline(always)]
fn by3_rest<const F: bool>(
    k: usize,
    x: &[i8],
    w: &[i8],
    ch: &crate::gemm::Channels<'_>,
    q: &crate::gemm::Output,
    out: &mut [i8],
) {
    let n = ch.bias.len();
    if x.len() >= 2 * k
        && let Some((o0, o1)) = out.get_mut(..2 * n).and_then(|o| o.split_at_mut_checked(n))
    {
        crate::gemm::two_pixels::<F>(k, x, None, w, ch, q, o0, o1);
    } else if x.len() >= k && out.len() >= n {
        crate::gemm::one_pixel::<F>(k, x, w, ch, q, out);
    }
}

/// The window of output pixel `(oy, ox)` into `col` (its `kh * kw * depth` values in filter
/// order, taps outside the input set to the zero point), as `gemm::windowed`'s im2col does,
/// with Helium's copies: a window inside the input (no dilation) as `kh` runs of `kw *
/// depth` bytes in one block, any other row by row.
#[cfg(kiln_arch = "mve")]
#[inline(always)]
fn im2col_mve(g: &crate::gemm::Window, image: &[i8], oy: usize, ox: usize, col: &mut [i8]) {
    let [ih, iw, c] = g.input;
    let [kh, kw] = g.filter;
    let [dh, dw] = g.dilation;
    let row_len = kw * c;
    let y0 = (oy * g.stride[0]) as isize - g.padding[0] as isize;
    let x0 = (ox * g.stride[1]) as isize - g.padding[1] as isize;
    // The taps `fx0..fx1` of a window row inside the input.
    let (fx0, fx1) = crate::gemm::inside(x0, dw, iw, kw);
    if dh == 1
        && dw == 1
        && fx0 == 0
        && fx1 == kw
        && y0 >= 0
        && y0 as usize + kh <= ih
        && let Some(src) = image.get((y0 as usize * iw + x0 as usize) * c..)
    {
        crate::arch::copy_rows(col, src, kh, row_len, iw * c);
        return;
    }
    // Rows of at most 16 bytes (a few channels), no dilation: the window filled with the
    // zero point, then the inside runs copied over it, one predicated load and store each.
    if row_len <= 16 && dw == 1 && dh == 1 {
        let (fy0, fy1) = crate::gemm::inside(y0, 1, ih, kh);
        let mid = (fx1.max(fx0) - fx0) * c;
        let rows = if mid > 0 { fy1.saturating_sub(fy0) } else { 0 };
        // The first inside run (`y0 + fy0`, `x0 + fx0` are inside when there is one).
        let at = if rows > 0 {
            ((y0 + fy0 as isize) as usize * iw + (x0 + fx0 as isize) as usize) * c
        } else {
            0
        };
        crate::arch::window_short(
            col,
            kh * row_len,
            g.zero_point,
            image,
            at,
            iw * c,
            fy0 * row_len + fx0 * c,
            row_len,
            rows,
            mid,
        );
        return;
    }
    for fy in 0..kh {
        let Some(dst) = col.get_mut(fy * row_len..(fy + 1) * row_len) else {
            return;
        };
        let iy = y0 + (fy * dh) as isize;
        let row = (iy >= 0 && (iy as usize) < ih)
            .then(|| image.get(iy as usize * iw * c..))
            .flatten();
        let (Some(src_row), true) = (row, fx0 < fx1) else {
            crate::arch::fill_bytes(dst, g.zero_point);
            continue;
        };
        let Some((before, rest)) = dst.split_at_mut_checked(fx0 * c) else {
            return;
        };
        crate::arch::fill_bytes(before, g.zero_point);
        let Some((mid, after)) = rest.split_at_mut_checked((fx1 - fx0) * c) else {
            return;
        };
        let ix0 = (x0 + (fx0 * dw) as isize) as usize;
        if dw == 1 {
            crate::arch::copy_bytes(mid, src_row.get(ix0 * c..).unwrap_or(&[]));
        } else {
            for (i, d) in mid.chunks_mut(c.max(1)).enumerate() {
                crate::arch::copy_bytes(d, src_row.get((ix0 + i * dw) * c..).unwrap_or(&[]));
            }
        }
        crate::arch::fill_bytes(after, g.zero_point);
    }
}

/// A windowed convolution with Helium, three output pixels at a time: their windows
/// gathered (`im2col_mve`) into `scratch`'s first `3k` bytes (`k` = `padded(kh * kw *
/// depth)`; the bytes past the window in each are never written and meet zero weights),
/// then `arch::three_pixels_by4`; the last one or two pixels of each image by `gemm`'s pair
/// and single-pixel forms. `false` (nothing written) where it does not apply: `scratch`
/// shorter than `3k` (the lean plans) or channels not in groups of four.
#[cfg(kiln_arch = "mve")]
#[inline(always)]
fn windowed_by3<const F: bool>(
    g: &crate::gemm::Window,
    ch: &crate::gemm::Channels<'_>,
    q: &crate::gemm::Output,
    w: &[i8],
    input: &[i8],
    output: &mut [i8],
    scratch: &mut [i8],
) -> bool {
    let [ih, iw, c] = g.input;
    let [oh, ow] = g.output;
    let k_taps = g.filter[0] * g.filter[1] * c;
    let k = crate::gemm::padded(k_taps);
    let n = ch.bias.len();
    let Some(col) = scratch.get_mut(..3 * k) else {
        return false;
    };
    if k_taps == 0 || n == 0 || !n.is_multiple_of(4) {
        return false;
    }
    let [kh, kw] = g.filter;
    let ([sh, sw], [ph, pw]) = (g.stride, g.padding);
    let plain = g.dilation == [1, 1];
    // The output columns whose windows lie inside the input's width (without dilation):
    // `ox * sw >= pw` and `ox * sw - pw + kw <= iw`.
    let ox_in = pw.div_ceil(sw.max(1))..if iw + pw >= kw {
        ((iw + pw - kw) / sw.max(1) + 1).min(ow)
    } else {
        0
    };
    let image_len = ih * iw * c;
    let out_len = oh * ow * n;
    let batches = input.len() / image_len.max(1);
    for b in 0..batches {
        let (Some(image), Some(out_image)) = (
            input.get(b * image_len..(b + 1) * image_len),
            output.get_mut(b * out_len..(b + 1) * out_len),
        ) else {
            return true;
        };
        // Pixels gathered so far, and the first one's output position.
        let mut filled = 0;
        let mut first = 0;
        let mut at = 0;
        for oy in 0..oh {
            let y0 = (oy * sh) as isize - ph as isize;
            // A row of windows inside the input's height (no dilation): its pixels in
            // `ox_in` are copied as `kh` runs directly, without `im2col_mve`'s set-up.
            let row_in = plain && y0 >= 0 && y0 as usize + kh <= ih;
            let row_start = if row_in { y0 as usize * iw * c } else { 0 };
            let mut ox = 0;
            while ox < ow {
                if row_in && filled == 0 && ox >= ox_in.start && ox + 3 <= ox_in.end {
                    // Three windows inside the input from a block's start: copied at once.
                    let src = image.get(row_start + (ox * sw - pw) * c..).unwrap_or(&[]);
                    crate::arch::copy_windows3(col, k, src, sw * c, kh, kw * c, iw * c);
                    first = at;
                    filled = 3;
                    at += 3 * n;
                    ox += 3;
                } else {
                    if let Some(slot) = col.get_mut(filled * k..filled * k + k_taps) {
                        if row_in && ox_in.contains(&ox) {
                            let src = image.get(row_start + (ox * sw - pw) * c..).unwrap_or(&[]);
                            crate::arch::copy_rows(slot, src, kh, kw * c, iw * c);
                        } else {
                            im2col_mve(g, image, oy, ox, slot);
                        }
                    }
                    if filled == 0 {
                        first = at;
                    }
                    filled += 1;
                    at += n;
                    ox += 1;
                }
                if filled == 3 {
                    filled = 0;
                    let Some((o0, o12)) = out_image
                        .get_mut(first..first + 3 * n)
                        .and_then(|o| o.split_at_mut_checked(n))
                    else {
                        return true;
                    };
                    let (Some((o1, o2)), Some((x0, x12))) =
                        (o12.split_at_mut_checked(n), col.split_at_checked(k))
                    else {
                        return true;
                    };
                    let Some((x1, x2)) = x12.split_at_checked(k) else {
                        return true;
                    };
                    crate::arch::three_pixels_by4(
                        k,
                        [x0, x1, x2],
                        w,
                        ch.bias,
                        ch.multiplier,
                        ch.right_shift,
                        q,
                        [o0, o1, o2],
                    );
                }
            }
        }
        if filled > 0 {
            let x = col.get(..filled * k).unwrap_or(&[]);
            by3_rest::<F>(
                k,
                x,
                w,
                ch,
                q,
                out_image.get_mut(first..).unwrap_or(&mut []),
            );
        }
    }
    true
}
