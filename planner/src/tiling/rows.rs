//! Which operators a region may hold and how each maps the rows of its output to the rows
//! of its inputs; which runs of operators form a region (one tensor leaving it).

use crate::ir::{DType, Graph, Op, OpKind, Padding, TensorId, TensorKind};

/// The region's operators, as far as rows are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rows {
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
pub(super) fn image_height(graph: &Graph, t: TensorId) -> Option<usize> {
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

/// The elementwise operators that run on strips of rows (activations, QUANTIZE and
/// DEQUANTIZE of activations, which TFLM quantizes per tensor, and binary operators of
/// images of one shape or with constants broadcast along the rows).
fn row_wise(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Relu
            | OpKind::Relu6
            | OpKind::Logistic
            | OpKind::Tanh
            | OpKind::HardSwish
            | OpKind::LeakyRelu { .. }
            | OpKind::Quantize
            | OpKind::Dequantize
            | OpKind::Add(_)
            | OpKind::Sub(_)
            | OpKind::Mul { .. }
            | OpKind::Maximum
            | OpKind::Minimum
    )
}

/// How `op` maps rows, if it can run on strips of rows: the image inputs must be images of
/// batch 1 (of the output's shape for elementwise operators; constants must not vary along
/// the rows).
pub(super) fn rows_of(graph: &Graph, op: &Op) -> Option<Rows> {
    along(graph, op, 1)
}

/// How `op` maps columns, if it can run on patches of rows and columns (as [`rows_of`] the
/// rows): a window's stride, padding and extent across, a PAD's columns, elementwise
/// constants that vary along neither rows nor columns.
pub(super) fn cols_of(graph: &Graph, op: &Op) -> Option<Rows> {
    rows_of(graph, op)?;
    along(graph, op, 2)
}

/// How `op` maps positions along `axis` of its NHWC output (1: rows, 2: columns).
fn along(graph: &Graph, op: &Op, axis: usize) -> Option<Rows> {
    let out = *op.outputs.first()?;
    if op.outputs.len() != 1 || graph.tensor(out).kind != TensorKind::Activation {
        return None;
    }
    let size = |t: TensorId| {
        let s = &graph.tensor(t).shape;
        (s.len() == 4 && s[0] == 1 && s[axis] > 0).then(|| s[axis])
    };
    let n_out = size(out)?;
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
        let (n, pad) = out_and_pad(padding, size(x)?, stride, extent);
        // Other inputs (filter, bias) must be constants.
        let rest_constant = op.inputs[1..]
            .iter()
            .flatten()
            .all(|&t| graph.tensor(t).is_constant());
        (n == n_out && rest_constant).then_some(Rows::Window {
            stride,
            pad,
            extent,
        })
    };
    let filter = |slot: usize| {
        let f = &graph.tensor(op.input(slot)?).shape;
        (f.len() == 4)
            .then(|| i32::try_from(f[axis]).ok())
            .flatten()
    };
    // An option's value along the axis: of the rows (`h`) or of the columns (`w`).
    let pick = |h: i32, w: i32| if axis == 1 { h } else { w };
    let rows = axis == 1;
    match &op.kind {
        OpKind::Conv2d(o) => window(
            o.padding,
            pick(o.stride_h, o.stride_w),
            filter(1)?,
            pick(o.dilation_h, o.dilation_w),
        ),
        OpKind::DepthwiseConv2d(o) => window(
            o.padding,
            pick(o.stride_h, o.stride_w),
            filter(1)?,
            pick(o.dilation_h, o.dilation_w),
        ),
        OpKind::AveragePool2d(o) | OpKind::MaxPool2d(o) => window(
            o.padding,
            pick(o.stride_h, o.stride_w),
            pick(o.filter_h, o.filter_w),
            1,
        ),
        // Output row `y` is input row `y - before` (rows outside the input are padding): a
        // window of one row, stride 1, `before` rows of padding. Not the batch; the value
        // (PADV2's) a constant, the same for every strip. Columns alike.
        OpKind::Pad | OpKind::PadV2 => {
            let x = op.input(0)?;
            let n_in = size(x)?;
            let p = paddings(graph, op)?;
            let constant_rest = op.inputs[1..]
                .iter()
                .flatten()
                .all(|&t| graph.tensor(t).is_constant());
            (p.len() == 4
                && p[0] == [0, 0]
                && n_in.checked_add(p[axis][0])?.checked_add(p[axis][1])? == n_out
                && !graph.tensor(x).is_constant()
                && constant_rest)
                .then_some(Rows::Window {
                    stride: 1,
                    pad: p[axis][0],
                    extent: 1,
                })
        }
        kind if row_wise(kind) => {
            let shape = &graph.tensor(out).shape;
            let ok = !op.inputs.is_empty()
                && op.inputs.iter().all(|t| {
                    t.is_some_and(|t| {
                        let tensor = graph.tensor(t);
                        let s = &tensor.shape;
                        if tensor.is_constant() {
                            // Broadcast along the rows (and the columns): the same for
                            // every strip (patch).
                            let rows_ok = s.len() < 3 || (s.len() == 4 && s[1] == 1);
                            let cols_ok = rows || s.len() < 2 || (s.len() == 4 && s[2] == 1);
                            rows_ok && cols_ok
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
pub(super) fn input_rows(rows: Rows, (a, b): (usize, usize), h: usize) -> (usize, usize) {
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

/// If `op` can end a region accumulating its strips (a *sink*): an int8 AVERAGE_POOL_2D
/// whose one output pixel's window covers the whole input image (NHWC, batch 1, an
/// activation), which its strips' per-channel sums compute exactly; or a
/// [`depthwise_sink`]. The image it reads.
pub(super) fn sink(graph: &Graph, op: &Op) -> Option<TensorId> {
    if let Some(x) = depthwise_sink(graph, op) {
        return Some(x);
    }
    let OpKind::AveragePool2d(o) = &op.kind else {
        return None;
    };
    let (x, &[out]) = (op.input(0)?, &op.outputs[..]) else {
        return None;
    };
    let (xt, ot) = (graph.tensor(x), graph.tensor(out));
    let (s, so) = (&xt.shape, &ot.shape);
    if xt.dtype != DType::I8
        || ot.dtype != DType::I8
        || xt.kind != TensorKind::Activation
        || ot.kind != TensorKind::Activation
        || s.len() != 4
        || s[0] != 1
        || so.len() != 4
        || so[..3] != [1, 1, 1]
        || so[3] != s[3]
        || op.inputs.len() != 1
    {
        return None;
    }
    // One output pixel; its window, `-pad..extent - pad`, holds every row and column.
    let covers = |padding, size: usize, stride: i32, filter: i32| {
        let (stride, extent) = (usize::try_from(stride).ok()?, usize::try_from(filter).ok()?);
        if stride == 0 || extent == 0 || extent > i16::MAX as usize {
            return None;
        }
        let (out, pad) = out_and_pad(padding, size, stride, extent);
        (out == 1 && pad + size <= extent).then_some(())
    };
    covers(o.padding, s[1], o.stride_h, o.filter_h)?;
    covers(o.padding, s[2], o.stride_w, o.filter_w)?;
    Some(x)
}

/// If `op` can end a region accumulating its strips as a *depthwise sink*: an int8
/// DEPTHWISE_CONV_2D whose one output pixel's window is exactly its input image (VALID, the
/// filter the image's size, no dilation, depth multiplier 1; NHWC, batch 1, an activation),
/// with a constant int8 filter `[1, H, W, C]` and an INT32 constant bias or none, which its
/// strips' per-channel weighted sums compute exactly. The image it reads.
pub(super) fn depthwise_sink(graph: &Graph, op: &Op) -> Option<TensorId> {
    let OpKind::DepthwiseConv2d(o) = &op.kind else {
        return None;
    };
    let (x, f, &[out]) = (op.input(0)?, op.input(1)?, &op.outputs[..]) else {
        return None;
    };
    let (xt, ft, ot) = (graph.tensor(x), graph.tensor(f), graph.tensor(out));
    let (s, sf) = (&xt.shape, &ft.shape);
    let bias_ok = op
        .input(2)
        .is_none_or(|b| graph.tensor(b).is_constant() && graph.tensor(b).dtype == DType::I32);
    let ok = xt.dtype == DType::I8
        && ot.dtype == DType::I8
        && ft.dtype == DType::I8
        && xt.kind == TensorKind::Activation
        && ot.kind == TensorKind::Activation
        && ft.is_constant()
        && bias_ok
        && op.inputs.len() <= 3
        && s.len() == 4
        && s[0] == 1
        && sf.len() == 4
        && sf[..] == [1, s[1], s[2], s[3]]
        && ot.shape == [1, 1, 1, s[3]]
        && o.padding == crate::ir::Padding::Valid
        && o.depth_multiplier == 1
        && o.dilation_h == 1
        && o.dilation_w == 1
        && o.stride_h >= 1
        && o.stride_w >= 1;
    ok.then_some(x)
}

/// If `fc` (after `reshape`, if given) can end a region accumulating its strips (a *dense
/// sink*): an int8 FULLY_CONNECTED of one batch, constant weights `[outputs, H*W*C]` and an
/// INT32 constant bias or none, over an int8 NHWC image of batch 1 (an activation), or over
/// a RESHAPE flattening it that only the layer reads. The image.
pub(super) fn dense_sink(graph: &Graph, reshape: Option<&Op>, fc: &Op) -> Option<TensorId> {
    let OpKind::FullyConnected(_) = fc.kind else {
        return None;
    };
    if fc.outputs.len() != 1 {
        return None;
    }
    let (x, y) = match reshape {
        Some(r) if r.kind == OpKind::Reshape && r.outputs.len() == 1 => (r.input(0)?, r.outputs[0]),
        Some(_) => return None,
        None => (fc.input(0)?, fc.input(0)?),
    };
    let (xt, yt) = (graph.tensor(x), graph.tensor(y));
    let w = graph.tensor(fc.input(1)?);
    let out = graph.tensor(fc.outputs[0]);
    let s = &xt.shape;
    let bias_ok = fc
        .input(2)
        .is_none_or(|b| graph.tensor(b).is_constant() && graph.tensor(b).dtype == DType::I32);
    let ok = fc.input(0) == Some(y)
        && fc.inputs.len() <= 3
        && s.len() == 4
        && s[0] == 1
        && xt.dtype == DType::I8
        && xt.kind == TensorKind::Activation
        && yt.dtype == DType::I8
        && yt.quant == xt.quant
        && yt.elements() == xt.elements()
        && w.is_constant()
        && w.dtype == DType::I8
        && w.shape.len() == 2
        && w.shape[1] == xt.elements()
        && out.dtype == DType::I8
        && out.kind == TensorKind::Activation
        && out.elements() == w.shape[0]
        && bias_ok
        // The flattened image is read by the layer only.
        && (reshape.is_none()
            || (!graph.outputs.contains(&y)
                && graph
                    .ops
                    .iter()
                    .filter(|op| op.present_inputs().any(|t| t == y))
                    .count()
                    == 1));
    ok.then_some(x)
}

/// A tileable region: how each operator maps rows, the tensor leaving it (the *cut*), and
/// for a region ending in a sink, the image the sink sums (whose rows are split into
/// strips, instead of the cut's) and whether the sink is a dense one, of how many
/// operators (a FULLY_CONNECTED, after a RESHAPE or not) rather than a pooling.
pub(super) struct Region {
    pub rows: Vec<Rows>,
    pub cut: TensorId,
    pub sink: Option<TensorId>,
    pub dense: Option<usize>,
}

impl Region {
    /// The tensor whose rows the strips split: the sink's image, or the cut.
    pub fn split(&self) -> TensorId {
        self.sink.unwrap_or(self.cut)
    }

    /// How each of the region's operators `j..` maps columns, if the region can run in
    /// patches of rows and columns: it ends in the cut (not in a sink, which sums whole rows)
    /// and every operator maps columns ([`cols_of`]).
    pub fn cols(&self, graph: &Graph, j: usize) -> Option<Vec<Rows>> {
        if self.sink.is_some() {
            return None;
        }
        let ops = graph.ops.get(j..j + self.rows.len())?;
        ops.iter().map(|op| cols_of(graph, op)).collect()
    }

    /// The end of the operators run in strips (all but the sink's).
    pub fn body_end(&self, k: usize) -> usize {
        match (self.sink, self.dense) {
            (None, _) => k,
            (Some(_), None) => k - 1,
            (Some(_), Some(n)) => k - n,
        }
    }
}

/// The region of operators `j..k`, if they can be tiled: how each maps rows, and the cut;
/// if its last operator is a [`sink`] writing the cut (after at least one operator writing
/// the image it sums), that image; if its last one or two are a [`dense_sink`] (after at
/// least one operator, whose image is the only tensor leaving them), that image, the cut the
/// layer's output.
pub(super) fn region(graph: &Graph, j: usize, k: usize) -> Option<Region> {
    if let Some((rows, cut)) = region_rows(graph, j, k) {
        let last = &graph.ops[k - 1];
        let sink = sink(graph, last).filter(|&x| {
            last.outputs == [cut] && graph.ops[j..k - 1].iter().any(|op| op.outputs.contains(&x))
        });
        return Some(Region {
            rows,
            cut,
            sink,
            dense: None,
        });
    }
    if k < j + 2 || k > graph.ops.len() {
        return None;
    }
    let fc = &graph.ops[k - 1];
    for n in [1, 2] {
        if k < j + n + 1 {
            break;
        }
        let reshape = (n == 2).then(|| &graph.ops[k - 2]);
        let Some(x) = dense_sink(graph, reshape, fc) else {
            continue;
        };
        let Some((rows, image)) = region_rows(graph, j, k - n) else {
            continue;
        };
        // The image leaves the strips for the sink only.
        let read_after = graph.ops[k - n + 1..]
            .iter()
            .any(|op| op.present_inputs().any(|t| t == x));
        if image == x && !read_after && !graph.outputs.contains(&x) {
            return Some(Region {
                rows,
                cut: fc.outputs[0],
                sink: Some(x),
                dense: Some(n),
            });
        }
    }
    None
}

fn region_rows(graph: &Graph, j: usize, k: usize) -> Option<(Vec<Rows>, TensorId)> {
    if j >= k || k > graph.ops.len() {
        return None;
    }
    // Not over the strips of an earlier tiling (a graph tiled again): a strip's window
    // places it in the whole image, which its own shapes do not say.
    if graph.ops[j..k]
        .iter()
        .any(|op| graph.row_window(op.id).is_some())
    {
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

/// Why `op` cannot run on strips of rows ([`rows_of`] declines it), in words for a budget
/// error; `None` if it can.
pub(super) fn why_not(graph: &Graph, op: &Op) -> Option<String> {
    if rows_of(graph, op).is_some() {
        return None;
    }
    let Some(&out) = op.outputs.first() else {
        return Some("it has no output".into());
    };
    let shape = &graph.tensor(out).shape;
    Some(if op.outputs.len() != 1 {
        format!("it has {} outputs", op.outputs.len())
    } else if graph.tensor(out).kind != TensorKind::Activation {
        "its output is not an activation (state or a constant)".into()
    } else if image_height(graph, out).is_none() {
        format!("its output, of shape {shape:?}, is not an NHWC image of batch 1")
    } else if !(row_wise(&op.kind)
        || matches!(
            op.kind,
            OpKind::Conv2d(_)
                | OpKind::DepthwiseConv2d(_)
                | OpKind::AveragePool2d(_)
                | OpKind::MaxPool2d(_)
                | OpKind::Pad
                | OpKind::PadV2
        ))
    {
        format!(
            "{} does not run on strips of rows (convolutions, pooling, constant padding and \
             row-wise elementwise operators do)",
            op.kind.name()
        )
    } else {
        "its inputs do not allow strips (an image input that is a constant or of another \
         shape, a filter or padding that is not a constant, padding of the batch, or a window \
         taller than 32,767 rows)"
            .into()
    })
}
