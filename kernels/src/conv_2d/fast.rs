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
    crate::gemm::windowed::<F>(&g, input, filter, ch, q, output, scratch);
}
