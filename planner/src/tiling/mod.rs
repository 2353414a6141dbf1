//! Patch-based execution (MCUNetV2, "Memory-efficient patch-based inference for tiny deep
//! learning", NeurIPS 2021): the first operators of a network, where the images are large,
//! run one strip of rows at a time, so that only a strip of each intermediate image is ever
//! live. The rows a strip's neighbours also need (the halo of the convolutions' windows) are
//! computed again. Outputs stay byte-identical: every output row is computed from the same
//! input rows, with the same padding, in the same order, as without tiling.
//!
//! Tiling is a rewrite of the [`Graph`], so every later stage (lowering, order search,
//! aliasing, offsets, the verifier, the emitter) treats the strips as ordinary tensors:
//!
//! - The *region* is a run of the stored order (from the first operator, or after a few
//!   that are not tiled, e.g. a RESHAPE of the input): convolutions, depthwise convolutions,
//!   pooling, constant padding (PAD, PADV2 with a constant value) and row-wise elementwise
//!   operators (activations, ADD/SUB/MUL/MAXIMUM/MINIMUM of images of one shape) on NHWC
//!   images of batch 1, whose results leave the region through one tensor, the *cut*.
//! - The cut's rows are split into `patches` strips. Walking the region backwards gives, per
//!   strip, the rows of every tensor it needs (a convolution's output rows `a..b` need input
//!   rows `a*s - pad ..= (b-1)*s - pad + extent - 1`, clipped to the image).
//! - Each strip is a copy of the region's operators on strip tensors (`<name> rows a..b`);
//!   a convolution, pooling or PAD records where its strips sit in the whole images
//!   ([`RowWindow`](crate::ir::RowWindow), [`Graph::row_windows`]) so that its kernel
//!   keeps the whole image's padding and bounds (a PAD's strip pads only the rows of the
//!   whole image's padding it holds: a window of one row, stride 1, its rows before as the
//!   padding). Where an operator needs fewer rows than its input strip holds (or a strip of
//!   the region's input), a SLICE of contiguous rows takes them, which the planner makes a
//!   view. A CONCATENATION along the rows assembles the cut, which the planner makes slices
//!   of the cut (each strip written in place).
//!
//! Patches of rows and columns (2-D patches): where strips of rows are not enough (few long
//! rows: a strip is whole rows, and more strips recompute more halo rows), each strip of the
//! cut is split across into `columns` patches ([`Tiling::columns`], [`in_columns`]). Walking
//! back maps the columns as the rows (a window's stride, padding and extent across, a PAD's
//! columns; elementwise constants may vary along neither axis), so a patch needs a box of
//! rows and columns of every tensor ([`Origin::Patch`]); its window
//! ([`RowWindow`](crate::ir::RowWindow)'s columns) keeps the whole image's padding across
//! too. A patch reads a region input through a SLICE of a box (a copy: not contiguous) of a
//! view of its band's rows (so the input's bytes still die band by band), and each band of
//! patches is put together along the columns by a CONCATENATION ([`Origin::Band`]) into a
//! strip of the cut, which the assembling CONCATENATION takes as before. Not with sinks
//! (their accumulators sum whole rows), chained regions or a streamed input (which read
//! whole rows).
//!
//! Accumulating ends (*sinks*): a region may also end in an int8 AVERAGE_POOL_2D whose one
//! output pixel's window covers its whole input image (a global average pooling, as at the
//! end of keyword spotting and image classification networks), so that the image it reads
//! is never whole. The strips split that image's rows (they do not overlap: halos are for
//! the inputs only); after each strip a KILN_ROW_SUM ([`OpKind::KilnRowSum`]) adds the
//! strip's per-channel sums to an INT32 accumulator (the first one from zero; the planner
//! runs the others in place over it), and one KILN_AVERAGE_FINISH
//! ([`OpKind::KilnAverageFinish`]) divides the whole image's sums by its pixels with TFLM's
//! rounding and clamp, writing the pooling's output (the cut). Integer sums are exact in any
//! split, so the bytes are TFLM's. Likewise an int8 DEPTHWISE_CONV_2D whose one output
//! pixel's window is exactly its input image (VALID, the filter the image's size): each
//! strip adds its pixels' weighted per-channel sums (KILN_DEPTHWISE_SUM, the filter's rows of
//! the strip) and KILN_DEPTHWISE_FINISH adds the bias and requantizes per channel. [`check`] verifies that the accumulators add strips
//! covering every row once, in order, and that the finish is the model's pooling.
//!
//! Several regions: a tiled graph can be tiled again ([`candidates_through`]: a region
//! anywhere, around an operator where a plan still peaks, outside the strips before: a
//! region never holds an operator with a row window). The rewrite copies the strips of the
//! graph it rewrites as they are, row windows and all, and [`check`] verifies each rewrite
//! against the graph it rewrites, so by induction every tiling against the model.
//! [`tile_chained`] chains a region to the one before it where its input is that region's
//! cut and nothing else reads it: its strips read their rows from the strips before (a
//! SLICE of one, or a CONCATENATION gathering rows of several, [`Origin::Gather`]) and the
//! cut's assembling CONCATENATION is dropped, so the cut is never whole and a plan may
//! interleave the strips of both regions; [`check`] accepts a dropped CONCATENATION only
//! along the rows, without activation, of inputs of its output's type, whose output nothing
//! reads, and then takes each input as its rows of the output.
//!
//! Files: `rows` (which operators a region holds, how they map rows), `rewrite` (the
//! tiled graph), [`check`] (the independent check), `stream` (a streamed input: the
//! strips read their rows of the input from a row source, [`stream_input`]).
//!
//! Tensor ids of the model are kept (the region's inner tensors stay, unused); operators are
//! renumbered: the operators before the region, the SLICEs of the region's inputs, the
//! strips' operators strip by strip, the concatenation, then the rest in their stored order.
//! [`check`] verifies a tiling independently of this module.

use crate::ir::{Graph, OpId, OpKind, TensorId};
use rows::{image_height, region, rows_of};

/// Why operator `op` cannot run on strips of rows, in words for a budget error; `None`
/// if it can (it may still lie outside every region [`candidates`] tries).
pub fn why_not(graph: &Graph, op: OpId) -> Option<String> {
    rows::why_not(graph, graph.ops.get(op.0)?)
}

pub mod check;
mod rewrite;
mod rows;
mod stream;

pub use rewrite::{tile, tile_chained};
pub use stream::{READ_ROWS, read_rows, stream_input};

/// A tiling: the operators `start..end` of the stored order run as `patches` strips of the
/// cut's rows, each split into `columns` patches of its columns (1: strips of rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tiling {
    pub start: usize,
    pub end: usize,
    pub patches: usize,
    pub columns: usize,
}

/// What a tensor or operator of a tiled graph is in the untiled one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A tensor: rows `row..row + h` of this tensor (`h` its own height; row 0 and the whole
    /// tensor for the model's tensors).
    Rows(TensorId, usize),
    /// A tensor: rows `row..row + h` and columns `col..col + w` of this tensor (`h` and `w`
    /// its own height and width), a patch of some of its columns.
    Patch(TensorId, usize, usize),
    /// An operator of the model (outside the region), renumbered.
    Op(OpId),
    /// One strip of this region operator.
    Strip(OpId),
    /// A SLICE taking rows of a strip (or of the region's input).
    Slice,
    /// The CONCATENATION assembling the cut.
    Assemble,
    /// A CONCATENATION along the columns putting a band of rows of the cut together from
    /// its patches (which the assembling CONCATENATION then takes as one strip).
    Band,
    /// A CONCATENATION gathering a strip's rows of a region's input from the strips of the
    /// region before it, whose assembling CONCATENATION the chained graph drops.
    Gather,
    /// A tensor: the per-channel sums (INT32, one per channel) of rows `0..r` of this image
    /// tensor of the model, accumulated strip by strip where a region ends in a sink.
    Sum(TensorId, usize),
    /// A tensor: the dot products (INT32, one per output) of a FULLY_CONNECTED over the
    /// flattened rows `0..r` of this image tensor of the model (a dense sink's accumulator).
    Dot(TensorId, usize),
    /// A KILN_ROW_SUM or KILN_DOT_SUM adding a strip's sums to the accumulator.
    Accumulate,
    /// The KILN_AVERAGE_FINISH or KILN_DENSE_FINISH writing the cut (the sink's output)
    /// from the sums of the whole image.
    Finish,
}

/// A tiled graph and what it was made from.
#[derive(Clone, Debug)]
pub struct Tiled {
    pub graph: Graph,
    pub tiling: Tiling,
    /// The tensor assembled from strips (or, for a region ending in a sink, the sink's
    /// output, finished from the accumulated sums).
    pub cut: TensorId,
    /// For a region ending in a sink (an AVERAGE_POOL_2D over the whole image): the image
    /// the strips' sums accumulate, which is never whole.
    pub sink: Option<TensorId>,
    /// The cut's rows of each strip (the sink image's, with a sink).
    pub strips: Vec<(usize, usize)>,
    /// Per tensor of `graph`: [`Origin::Rows`].
    pub tensor_origin: Vec<Origin>,
    /// Per operator of `graph`.
    pub op_origin: Vec<Origin>,
}

/// Multiply-accumulates of one `invoke()`: convolutions, depthwise and transposed
/// convolutions, fully connected layers and batch matrix products (pooling and elementwise
/// operators count none).
pub fn macs(graph: &Graph) -> u64 {
    let elements = |t: Option<TensorId>| t.map_or(0, |t| graph.tensor(t).elements() as u64);
    let shape = |t: Option<TensorId>| t.map_or(&[][..], |t| &graph.tensor(t).shape[..]);
    graph
        .ops
        .iter()
        .map(|op| {
            let out = elements(op.outputs.first().copied());
            let f = shape(op.input(1));
            match &op.kind {
                // filter [O, KH, KW, I/groups]
                OpKind::Conv2d(_) if f.len() == 4 => out * (f[1] * f[2] * f[3]) as u64,
                // filter [1, KH, KW, O]
                OpKind::DepthwiseConv2d(_) if f.len() == 4 => out * (f[1] * f[2]) as u64,
                // weights [O, I]
                OpKind::FullyConnected(_) if f.len() == 2 => out * f[1] as u64,
                // filter [O, KH, KW, I] over the input pixels
                OpKind::TransposeConv(_) => {
                    let w = shape(op.input(1));
                    let x = elements(op.input(2));
                    if w.len() == 4 {
                        x * (w[0] * w[1] * w[2]) as u64
                    } else {
                        0
                    }
                }
                OpKind::BatchMatMul { .. } => {
                    let x = shape(op.input(0));
                    x.last().map_or(0, |&k| out * k as u64)
                }
                _ => 0,
            }
        })
        .sum()
}

/// The numbers of strips tried.
const PATCHES: [usize; 12] = [2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48];

/// The numbers of patches across a strip [`in_columns`] tries.
const COLUMNS: [usize; 5] = [2, 3, 4, 6, 8];

/// The most patches [`in_columns`] splits a region into (strips times columns): each is a
/// copy of the region's operators, and the graph to plan grows with them.
const MAX_PATCHES: usize = 64;

/// Patches of rows and columns for the region of tiling `t` (strips of rows): its number of
/// strips and the two next fewer of `PATCHES`, each strip split into `COLUMNS` patches
/// across (at most the cut's width, at most 64 patches in all); none where an
/// operator of the region runs on strips of rows only, or the region ends in a sink. At
/// most 15 tilings.
pub fn in_columns(graph: &Graph, t: Tiling) -> Vec<Tiling> {
    let Some(r) = region(graph, t.start, t.end).filter(|r| r.cols(graph, t.start).is_some()) else {
        return Vec::new();
    };
    let width = graph.tensor(r.split()).shape.get(2).copied().unwrap_or(0);
    let fewer = PATCHES.iter().rev().filter(|&&p| p <= t.patches).take(3);
    fewer
        .flat_map(|&patches| {
            COLUMNS
                .iter()
                .filter(move |&&c| c <= width && c * patches <= MAX_PATCHES)
                .map(move |&columns| Tiling {
                    patches,
                    columns,
                    ..t
                })
        })
        .collect()
}

/// How far a region [`candidates_through`] tries reaches before and after the operator it
/// holds, in operators.
pub const AROUND: usize = 8;

/// The tilings of regions anywhere in `graph` holding operator `op` (where a plan's peak
/// sits; in a graph tiled before, outside its strips): starting at most [`AROUND`]
/// operators before it and ending at most [`AROUND`] after it, each with every number of
/// strips of `PATCHES` up to the cut's height. At most `(AROUND + 1)^2` regions whatever
/// the graph's size.
pub fn candidates_through(graph: &Graph, op: usize) -> Vec<Tiling> {
    let n = graph.ops.len();
    let mut out = Vec::new();
    if op >= n || rows_of(graph, &graph.ops[op]).is_none() {
        return out;
    }
    for start in op.saturating_sub(AROUND)..=op {
        for end in op + 1..=n.min(op + 1 + AROUND) {
            let Some(r) = region(graph, start, end) else {
                continue;
            };
            let Some(h) = image_height(graph, r.split()) else {
                continue;
            };
            out.extend(PATCHES.iter().filter(|&&p| p <= h).map(|&patches| Tiling {
                start,
                end,
                patches,
                columns: 1,
            }));
        }
    }
    out
}

/// The longest region tried, in operators: the large images are at a network's start, and
/// the candidates stay linear in the graph's size.
pub const MAX_REGION_OPS: usize = 64;

/// The tilings worth trying: regions starting where a run of tileable operators starts
/// among the first [`MAX_REGION_OPS`] operators (after, e.g., a RESHAPE of the input), or
/// right after a QUANTIZE or DEQUANTIZE that starts one,
/// of at most [`MAX_REGION_OPS`] operators; for each, a number of strips from 2 up to the
/// cut's height (at most 48), each at least one row.
pub fn candidates(graph: &Graph) -> Vec<Tiling> {
    let n = graph.ops.len();
    let tileable: Vec<bool> = graph.ops[..n.min(2 * MAX_REGION_OPS)]
        .iter()
        .map(|op| rows_of(graph, op).is_some())
        .collect();
    let mut out = Vec::new();
    // A run's first operator, or the one after a QUANTIZE or DEQUANTIZE that starts a run:
    // left out of the region, that conversion runs whole, narrowing in place over its input
    // (blazeface's float input), which the strips could not.
    let conversion = |i: usize| matches!(graph.ops[i].kind, OpKind::Quantize | OpKind::Dequantize);
    let run_start = |i: usize| tileable[i] && (i == 0 || !tileable[i - 1]);
    for start in 0..n.min(MAX_REGION_OPS) {
        let after_conversion = start > 0 && run_start(start - 1) && conversion(start - 1);
        if !tileable[start] || !(run_start(start) || after_conversion) {
            continue;
        }
        for end in start + 1..=n.min(start + MAX_REGION_OPS) {
            if !tileable.get(end - 1).copied().unwrap_or(false) {
                // A dense sink (a FULLY_CONNECTED, after a RESHAPE or not) right after the
                // run.
                for e in [end, end + 1].into_iter().filter(|&e| e <= n) {
                    if let Some(r) = region(graph, start, e).filter(|r| r.dense.is_some()) {
                        let h = image_height(graph, r.split()).unwrap_or(0);
                        out.extend(PATCHES.iter().filter(|&&p| p <= h).map(|&patches| Tiling {
                            start,
                            end: e,
                            patches,
                            columns: 1,
                        }));
                    }
                }
                break;
            }
            let Some(r) = region(graph, start, end) else {
                continue;
            };
            let Some(h) = image_height(graph, r.split()) else {
                continue;
            };
            out.extend(PATCHES.iter().filter(|&&p| p <= h).map(|&patches| Tiling {
                start,
                end,
                patches,
                columns: 1,
            }));
        }
    }
    out
}
