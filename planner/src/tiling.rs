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
//!   ([`RowWindow`], [`Graph::row_windows`]) so that its kernel keeps the whole image's
//!   padding and bounds (a PAD's strip pads only the rows of the whole image's padding it
//!   holds: a window of one row, stride 1, its rows before as the padding). Where an
//!   operator needs fewer rows than its input strip holds (or a strip of the region's
//!   input), a SLICE of contiguous rows takes them, which the planner makes a view. A
//!   CONCATENATION along the rows assembles the cut, which the planner makes slices of the
//!   cut (each strip written in place).
//!
//! Tensor ids of the model are kept (the region's inner tensors stay, unused); operators are
//! renumbered: the operators before the region, the SLICEs of the region's inputs, the
//! strips' operators strip by strip, the concatenation, then the rest in their stored order.
//! [`check`] verifies a tiling independently of this module.

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::{
    Activation, ConcatenationOptions, DType, Graph, Op, OpId, OpKind, Padding, RowWindow, Tensor,
    TensorId, TensorKind,
};

pub mod check;

/// A tiling: the operators `start..end` of the stored order run as `patches` strips of the
/// cut's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tiling {
    pub start: usize,
    pub end: usize,
    pub patches: usize,
}

/// What a tensor or operator of a tiled graph is in the untiled one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A tensor: rows `row..row + h` of this tensor (`h` its own height; row 0 and the whole
    /// tensor for the model's tensors).
    Rows(TensorId, usize),
    /// An operator of the model (outside the region), renumbered.
    Op(OpId),
    /// One strip of this region operator.
    Strip(OpId),
    /// A SLICE taking rows of a strip (or of the region's input).
    Slice,
    /// The CONCATENATION assembling the cut.
    Assemble,
}

/// A tiled graph and what it was made from.
#[derive(Clone, Debug)]
pub struct Tiled {
    pub graph: Graph,
    pub tiling: Tiling,
    /// The tensor assembled from strips.
    pub cut: TensorId,
    /// The cut's rows of each strip.
    pub strips: Vec<(usize, usize)>,
    /// Per tensor of `graph`: [`Origin::Rows`].
    pub tensor_origin: Vec<Origin>,
    /// Per operator of `graph`.
    pub op_origin: Vec<Origin>,
}

/// The region's operators, as far as rows are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rows {
    /// Output rows `a..b` read input 0's rows `a*stride - pad .. (b-1)*stride - pad + extent`.
    Window {
        stride: usize,
        pad: usize,
        extent: usize,
    },
    /// Output rows `a..b` read rows `a..b` of every image input.
    Same,
}

/// Whether `t` is an NHWC image of batch 1: its height.
fn image_height(graph: &Graph, t: TensorId) -> Option<usize> {
    let s = &graph.tensor(t).shape;
    (s.len() == 4 && s[0] == 1 && s[1] > 0).then(|| s[1])
}

/// TFLM's output height and padding rows before the image (`ComputePaddingHeightWidth`).
fn out_and_pad(padding: Padding, input: usize, stride: usize, extent: usize) -> (usize, usize) {
    let out = match padding {
        Padding::Same => input.div_ceil(stride),
        Padding::Valid => (input + stride).saturating_sub(extent) / stride,
    };
    let total = (out.saturating_sub(1) * stride + extent).saturating_sub(input);
    (out, total / 2)
}

/// A PAD's paddings `[[before, after]; rank]` from its constant (INT32 or INT64).
fn paddings(graph: &Graph, op: &Op) -> Option<Vec<[usize; 2]>> {
    let t = graph.tensor(op.input(1)?);
    let data = t.data()?;
    let values: Vec<i64> = match t.dtype {
        DType::I32 => data
            .chunks_exact(4)
            .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        DType::I64 => data
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect(),
        _ => return None,
    };
    values
        .chunks_exact(2)
        .map(|c| Some([usize::try_from(c[0]).ok()?, usize::try_from(c[1]).ok()?]))
        .collect()
}

/// How `op` maps rows, if it can run on strips of rows: the image inputs must be images of
/// batch 1 (of the output's shape for elementwise operators; constants must not vary along
/// the rows).
fn rows_of(graph: &Graph, op: &Op) -> Option<Rows> {
    let out = *op.outputs.first()?;
    if op.outputs.len() != 1 || graph.tensor(out).kind != TensorKind::Activation {
        return None;
    }
    let h_out = image_height(graph, out)?;
    let window = |padding, stride: i32, filter: i32, dilation: i32| {
        let x = op.input(0)?;
        let (stride, filter) = (usize::try_from(stride).ok()?, usize::try_from(filter).ok()?);
        let dilation = usize::try_from(dilation).ok()?;
        if stride == 0 || filter == 0 || dilation == 0 || graph.tensor(x).is_constant() {
            return None;
        }
        let extent = (filter - 1) * dilation + 1;
        // TFLM narrows paddings to 16 bits (`PaddingValues`): windows taller than that are
        // not placed by the formula the strips follow.
        if extent > i16::MAX as usize {
            return None;
        }
        let (h, pad) = out_and_pad(padding, image_height(graph, x)?, stride, extent);
        // Other inputs (filter, bias) must be constants.
        let rest_constant = op.inputs[1..]
            .iter()
            .flatten()
            .all(|&t| graph.tensor(t).is_constant());
        (h == h_out && rest_constant).then_some(Rows::Window {
            stride,
            pad,
            extent,
        })
    };
    let filter_h = |slot: usize| {
        let f = &graph.tensor(op.input(slot)?).shape;
        (f.len() == 4).then(|| i32::try_from(f[1]).ok()).flatten()
    };
    match &op.kind {
        OpKind::Conv2d(o) => window(o.padding, o.stride_h, filter_h(1)?, o.dilation_h),
        OpKind::DepthwiseConv2d(o) => window(o.padding, o.stride_h, filter_h(1)?, o.dilation_h),
        OpKind::AveragePool2d(o) | OpKind::MaxPool2d(o) => {
            window(o.padding, o.stride_h, o.filter_h, 1)
        }
        // Output row `y` is input row `y - before` (rows outside the input are padding): a
        // window of one row, stride 1, `before` rows of padding. Not the batch; the value
        // (PADV2's) a constant, the same for every strip.
        OpKind::Pad | OpKind::PadV2 => {
            let x = op.input(0)?;
            let h_in = image_height(graph, x)?;
            let p = paddings(graph, op)?;
            let constant_rest = op.inputs[1..]
                .iter()
                .flatten()
                .all(|&t| graph.tensor(t).is_constant());
            (p.len() == 4
                && p[0] == [0, 0]
                && h_in.checked_add(p[1][0])?.checked_add(p[1][1])? == h_out
                && !graph.tensor(x).is_constant()
                && constant_rest)
                .then_some(Rows::Window {
                    stride: 1,
                    pad: p[1][0],
                    extent: 1,
                })
        }
        OpKind::Relu
        | OpKind::Relu6
        | OpKind::Logistic
        | OpKind::Tanh
        | OpKind::HardSwish
        | OpKind::LeakyRelu { .. }
        | OpKind::Add(_)
        | OpKind::Sub(_)
        | OpKind::Mul { .. }
        | OpKind::Maximum
        | OpKind::Minimum => {
            let shape = &graph.tensor(out).shape;
            let ok = !op.inputs.is_empty()
                && op.inputs.iter().all(|t| {
                    t.is_some_and(|t| {
                        let tensor = graph.tensor(t);
                        if tensor.is_constant() {
                            // Broadcast along the rows: the same for every strip.
                            tensor.shape.len() < 3
                                || (tensor.shape.len() == 4 && tensor.shape[1] == 1)
                        } else {
                            tensor.kind == TensorKind::Activation && tensor.shape == *shape
                        }
                    })
                })
                && op
                    .inputs
                    .iter()
                    .flatten()
                    .any(|&t| !graph.tensor(t).is_constant());
            ok.then_some(Rows::Same)
        }
        _ => None,
    }
}

/// The input rows output rows `a..b` of an operator read from an input `h` rows high.
fn input_rows(rows: Rows, (a, b): (usize, usize), h: usize) -> (usize, usize) {
    match rows {
        Rows::Same => (a, b),
        Rows::Window {
            stride,
            pad,
            extent,
        } => (
            (a * stride).saturating_sub(pad).min(h),
            ((b - 1) * stride + extent).saturating_sub(pad).min(h),
        ),
    }
}

/// The region of operators `j..k`, if they can be tiled: how each maps rows, and the cut.
fn region(graph: &Graph, j: usize, k: usize) -> Option<(Vec<Rows>, TensorId)> {
    if j >= k || k > graph.ops.len() {
        return None;
    }
    let rows: Vec<Rows> = graph.ops[j..k]
        .iter()
        .map(|op| rows_of(graph, op))
        .collect::<Option<_>>()?;
    let mut produced = vec![false; graph.tensors.len()];
    for op in &graph.ops[j..k] {
        for &t in &op.outputs {
            produced[t.0] = true;
        }
    }
    // The region's image inputs come from before it (graph inputs or earlier operators'
    // outputs, as the stored order is topological), never from state.
    for op in &graph.ops[j..k] {
        for t in op.present_inputs() {
            let tensor = graph.tensor(t);
            if !tensor.is_constant() && !produced[t.0] && tensor.kind != TensorKind::Activation {
                return None;
            }
        }
    }
    let mut leaving: Vec<TensorId> = graph.ops[k..]
        .iter()
        .flat_map(|op| op.present_inputs())
        .chain(graph.outputs.iter().copied())
        .filter(|t| produced[t.0])
        .collect();
    leaving.sort();
    leaving.dedup();
    match leaving[..] {
        [cut] => Some((rows, cut)),
        _ => None,
    }
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

/// The longest region tried, in operators: the large images are at a network's start, and
/// the candidates stay linear in the graph's size.
pub const MAX_REGION_OPS: usize = 64;

/// The tilings worth trying: regions starting where a run of tileable operators starts
/// among the first [`MAX_REGION_OPS`] operators (after, e.g., a RESHAPE of the input),
/// of at most [`MAX_REGION_OPS`] operators; for each, a number of strips from 2 up to the
/// cut's height (at most 48), each at least one row.
pub fn candidates(graph: &Graph) -> Vec<Tiling> {
    const PATCHES: [usize; 12] = [2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48];
    let n = graph.ops.len();
    let tileable: Vec<bool> = graph.ops[..n.min(2 * MAX_REGION_OPS)]
        .iter()
        .map(|op| rows_of(graph, op).is_some())
        .collect();
    let mut out = Vec::new();
    for start in 0..n.min(MAX_REGION_OPS) {
        if !tileable[start] || (start > 0 && tileable[start - 1]) {
            continue;
        }
        for end in start + 1..=n.min(start + MAX_REGION_OPS) {
            if !tileable.get(end - 1).copied().unwrap_or(false) {
                break;
            }
            let Some((_, cut)) = region(graph, start, end) else {
                continue;
            };
            let Some(h) = image_height(graph, cut) else {
                continue;
            };
            out.extend(PATCHES.iter().filter(|&&p| p <= h).map(|&patches| Tiling {
                start,
                end,
                patches,
            }));
        }
    }
    out
}

/// The strips of `h` rows into `n`: `(i*h/n, (i+1)*h/n)`.
fn strips(h: usize, n: usize) -> Vec<(usize, usize)> {
    (0..n).map(|i| (i * h / n, (i + 1) * h / n)).collect()
}

/// A SLICE's source tensor and the rows it takes.
type SliceKey = (TensorId, (usize, usize));

/// Builds the tiled graph.
struct Builder<'g> {
    source: &'g Graph,
    graph: Graph,
    ops: Vec<Op>,
    tensor_origin: Vec<Origin>,
    op_origin: Vec<Origin>,
    next_buffer: usize,
    /// The SLICEs made for the current strip: (source tensor, rows) -> slice.
    slices: Vec<(SliceKey, TensorId)>,
}

impl Builder<'_> {
    /// A new activation tensor: rows `a..b` of `t`.
    fn strip(&mut self, t: TensorId, (a, b): (usize, usize)) -> TensorId {
        let src = self.source.tensor(t);
        let id = TensorId(self.graph.tensors.len());
        let mut shape = src.shape.clone();
        shape[1] = b - a;
        self.graph.tensors.push(Tensor {
            id,
            name: format!("{} rows {a}..{b}", src.name),
            shape,
            dtype: src.dtype,
            quant: src.quant.clone(),
            kind: TensorKind::Activation,
        });
        self.tensor_origin.push(Origin::Rows(t, a));
        id
    }

    /// A constant INT32 vector (SLICE's begin and size).
    fn constant(&mut self, name: String, values: &[i32]) -> TensorId {
        let id = TensorId(self.graph.tensors.len());
        let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.graph.tensors.push(Tensor {
            id,
            name,
            shape: vec![values.len()],
            dtype: DType::I32,
            quant: crate::ir::Quantization::None,
            kind: TensorKind::Constant {
                buffer: self.next_buffer,
                offset: 0,
                data,
            },
        });
        self.next_buffer += 1;
        self.tensor_origin.push(Origin::Rows(id, 0));
        id
    }

    fn push(&mut self, kind: OpKind, inputs: Vec<Option<TensorId>>, output: TensorId, o: Origin) {
        let id = OpId(self.ops.len());
        self.ops.push(Op {
            id,
            kind,
            inputs,
            outputs: vec![output],
            intermediates: Vec::new(),
        });
        self.op_origin.push(o);
    }

    /// Rows `want` of `t`, from `from` (a tensor holding rows `held` of `t`): `from` itself,
    /// or a SLICE of it.
    fn rows(
        &mut self,
        t: TensorId,
        from: TensorId,
        held: (usize, usize),
        want: (usize, usize),
    ) -> Result<TensorId> {
        if held == want {
            return Ok(from);
        }
        if let Some(&(_, s)) = self.slices.iter().find(|(k, _)| *k == (from, want)) {
            return Ok(s);
        }
        let shape = &self.graph.tensor(from).shape;
        let (w, c) = (shape[2], shape[3]);
        let to_i32 = |v: usize| {
            i32::try_from(v).map_err(|_| Diagnostic::unsupported("an image too large to tile"))
        };
        let begin = [0, to_i32(want.0 - held.0)?, 0, 0];
        let size = [1, to_i32(want.1 - want.0)?, to_i32(w)?, to_i32(c)?];
        let out = self.strip(t, want);
        let name = &self.graph.tensor(out).name;
        let (b, s) = (format!("{name} begin"), format!("{name} size"));
        let (b, s) = (self.constant(b, &begin), self.constant(s, &size));
        self.push(
            OpKind::Other {
                name: "SLICE".to_string(),
            },
            vec![Some(from), Some(b), Some(s)],
            out,
            Origin::Slice,
        );
        self.slices.push(((from, want), out));
        Ok(out)
    }
}

/// Tiles `graph` (a model's main graph, as read) by `tiling`.
pub fn tile(graph: &Graph, tiling: Tiling) -> Result<Tiled> {
    let (j, k) = (tiling.start, tiling.end);
    let refuse = |why: &str| {
        Diagnostic::unsupported(format!(
            "operators {j}..{k} cannot run as {} strips of rows: {why}",
            tiling.patches
        ))
    };
    let (rows, cut) =
        region(graph, j, k).ok_or_else(|| refuse("they are not a tileable region"))?;
    let h_cut = image_height(graph, cut).ok_or_else(|| refuse("the cut is not an image"))?;
    if tiling.patches < 2 || tiling.patches > h_cut {
        return Err(refuse("the cut has fewer rows than strips"));
    }
    let strips = strips(h_cut, tiling.patches);
    let next_buffer = graph
        .tensors
        .iter()
        .filter_map(|t| match t.kind {
            TensorKind::Constant { buffer, .. } => Some(buffer + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut b = Builder {
        source: graph,
        graph: Graph {
            ops: Vec::new(),
            row_windows: Vec::new(),
            ..graph.clone()
        },
        ops: Vec::new(),
        tensor_origin: graph
            .tensors
            .iter()
            .map(|t| Origin::Rows(t.id, 0))
            .collect(),
        op_origin: Vec::new(),
        next_buffer,
        slices: Vec::new(),
    };
    for op in &graph.ops[..j] {
        let id = OpId(b.ops.len());
        b.ops.push(Op { id, ..op.clone() });
        b.op_origin.push(Origin::Op(op.id));
    }
    let mut pieces = Vec::with_capacity(strips.len());
    for &(a, z) in &strips {
        // The rows of every tensor this strip needs, from the cut backwards.
        let mut need: Vec<Option<(usize, usize)>> = vec![None; graph.tensors.len()];
        need[cut.0] = Some((a, z));
        for (op, &r) in graph.ops[j..k].iter().zip(&rows).rev() {
            let Some(out) = need[op.outputs[0].0] else {
                continue;
            };
            for t in op.present_inputs() {
                let Some(h) = image_height(graph, t).filter(|_| !graph.tensor(t).is_constant())
                else {
                    continue;
                };
                let want = input_rows(r, out, h);
                // (A PAD's strip of padding rows only reads none: refused below.)
                if want.0 >= want.1 {
                    continue;
                }
                need[t.0] = Some(match need[t.0] {
                    None => want,
                    Some((p, q)) => (p.min(want.0), q.max(want.1)),
                });
            }
        }
        // The strip's tensors, operators forwards.
        b.slices.clear();
        let mut held: Vec<Option<TensorId>> = vec![None; graph.tensors.len()];
        for (op, &r) in graph.ops[j..k].iter().zip(&rows) {
            let out_t = op.outputs[0];
            let Some(out_rows) = need[out_t.0] else {
                continue;
            };
            if out_rows.0 >= out_rows.1 {
                return Err(refuse("a strip needs no rows of an operator's output"));
            }
            let mut inputs = Vec::with_capacity(op.inputs.len());
            let mut window = None;
            for t in &op.inputs {
                let Some(t) = *t else {
                    inputs.push(None);
                    continue;
                };
                if graph.tensor(t).is_constant() {
                    inputs.push(Some(t));
                    continue;
                }
                let h = image_height(graph, t).ok_or_else(|| refuse("an input is no image"))?;
                let want = input_rows(r, out_rows, h);
                // (A PAD's strip of padding rows only.)
                if want.0 >= want.1 {
                    return Err(refuse("a strip reads no rows of an operator's input"));
                }
                let have = need[t.0].ok_or_else(|| refuse("an input's rows are unknown"))?;
                let (from, held_rows) = match held[t.0] {
                    Some(s) => (s, have),
                    // A region input: the whole tensor.
                    None => (t, (0, h)),
                };
                inputs.push(Some(b.rows(t, from, held_rows, want)?));
                if let Rows::Window { .. } = r {
                    window.get_or_insert(RowWindow {
                        input_row: want.0,
                        input_height: h,
                        output_row: out_rows.0,
                        output_height: image_height(graph, out_t).unwrap_or(0),
                    });
                }
            }
            let out = b.strip(out_t, out_rows);
            held[out_t.0] = Some(out);
            if let Some(w) = window {
                let id = OpId(b.ops.len());
                b.graph.row_windows.push((id, w));
            }
            b.push(op.kind.clone(), inputs, out, Origin::Strip(op.id));
        }
        pieces.push(held[cut.0].ok_or_else(|| refuse("a strip does not reach the cut"))?);
    }
    b.push(
        OpKind::Concatenation(ConcatenationOptions {
            axis: 1,
            activation: Activation::None,
        }),
        pieces.into_iter().map(Some).collect(),
        cut,
        Origin::Assemble,
    );
    for op in &graph.ops[k..] {
        let id = OpId(b.ops.len());
        b.ops.push(Op { id, ..op.clone() });
        b.op_origin.push(Origin::Op(op.id));
    }
    let Builder {
        graph: mut tiled_graph,
        ops,
        tensor_origin,
        op_origin,
        ..
    } = b;
    // The SLICEs of the region's input first: they are views and cost nothing, and the
    // input then holds its rows for itself only until they are taken, each strip's rows
    // after that only while the strip reads them (its bytes die strip by strip).
    let n0 = graph.tensors.len();
    let front =
        |i: &usize| op_origin[*i] == Origin::Slice && ops[*i].input(0).is_some_and(|t| t.0 < n0);
    let order: Vec<usize> = (0..j)
        .chain((j..ops.len()).filter(front))
        .chain((j..ops.len()).filter(|i| !front(i)))
        .collect();
    let mut new_id = vec![0; ops.len()];
    for (n, &i) in order.iter().enumerate() {
        new_id[i] = n;
    }
    let op_origin: Vec<Origin> = order.iter().map(|&i| op_origin[i]).collect();
    let mut ops: Vec<Option<Op>> = ops.into_iter().map(Some).collect();
    tiled_graph.ops = order
        .iter()
        .enumerate()
        .map(|(n, &i)| Op {
            id: OpId(n),
            ..ops[i].take().expect("each operator once")
        })
        .collect();
    for (id, _) in &mut tiled_graph.row_windows {
        *id = OpId(new_id[id.0]);
    }
    tiled_graph.row_windows.sort_by_key(|&(id, _)| id);
    let tiled = Tiled {
        graph: tiled_graph,
        tiling,
        cut,
        strips,
        tensor_origin,
        op_origin,
    };
    check::check(graph, &tiled).map_err(|e| {
        Diagnostic::new(
            ErrorKind::InvalidPlan,
            format!("the tiling is wrong (a Kiln bug): {e}"),
        )
    })?;
    Ok(tiled)
}
