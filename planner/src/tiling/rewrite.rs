//! The rewrite: a region's operators copied strip by strip (patch by patch) onto strip
//! tensors, the SLICEs of the rows (and columns) each reads, the CONCATENATIONs assembling
//! the cut (a band of rows from its patches along the columns, then the bands along the
//! rows), and the renumbering.

use super::rows::{Rows, image_height, input_rows, region};
use super::{Origin, Tiled, Tiling, check};
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::{
    Activation, ConcatenationOptions, DType, Graph, Op, OpId, OpKind, RowWindow, Tensor, TensorId,
    TensorKind,
};

/// The strips of `h` rows into `n`: `(i*h/n, (i+1)*h/n)`.
fn strips(h: usize, n: usize) -> Vec<(usize, usize)> {
    (0..n).map(|i| (i * h / n, (i + 1) * h / n)).collect()
}

/// A run of rows or columns, `a..b`.
type Span = (usize, usize);

/// Rows and columns of an image.
type Patch = (Span, Span);

/// A SLICE's source tensor and the rows and columns it takes.
type SliceKey = (TensorId, Patch);

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
    /// The gathering CONCATENATIONs made for the current strip: rows -> tensor.
    gathered: Vec<((usize, usize), TensorId)>,
}

impl Builder<'_> {
    /// A new activation tensor: rows `a..b` of `t`, and columns `c..d` (every column: a
    /// strip of rows).
    fn strip(&mut self, t: TensorId, ((a, b), (c, d)): Patch) -> TensorId {
        let src = self.source.tensor(t);
        let id = TensorId(self.graph.tensors.len());
        let mut shape = src.shape.clone();
        let every_column = (c, d) == (0, shape[2]);
        shape[1] = b - a;
        shape[2] = d - c;
        let name = if every_column {
            format!("{} rows {a}..{b}", src.name)
        } else {
            format!("{} rows {a}..{b} cols {c}..{d}", src.name)
        };
        self.graph.tensors.push(Tensor {
            id,
            name,
            shape,
            dtype: src.dtype,
            quant: src.quant.clone(),
            kind: TensorKind::Activation,
        });
        self.tensor_origin.push(if every_column {
            Origin::Rows(t, a)
        } else {
            Origin::Patch(t, a, c)
        });
        id
    }

    /// A new INT32 accumulator of `n` values: sums over rows `0..r` of image `t` (with its
    /// quantization: sums of its quantized values), `origin` what they are.
    fn sums(&mut self, t: TensorId, r: usize, n: usize, origin: Origin) -> TensorId {
        let src = self.source.tensor(t);
        let id = TensorId(self.graph.tensors.len());
        self.graph.tensors.push(Tensor {
            id,
            name: format!("{} sums of rows 0..{r}", src.name),
            shape: vec![n],
            dtype: DType::I32,
            quant: src.quant.clone(),
            kind: TensorKind::Activation,
        });
        self.tensor_origin.push(origin);
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

    /// An operator of the source outside the region, as it is (with its row window, in a
    /// graph tiled before).
    fn copy(&mut self, op: &Op) {
        let id = OpId(self.ops.len());
        if let Some(w) = self.source.row_window(op.id) {
            self.graph.row_windows.push((id, w));
        }
        self.ops.push(Op { id, ..op.clone() });
        self.op_origin.push(Origin::Op(op.id));
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

    /// Rows and columns `want` of `t`, from `from` (a tensor holding rows and columns
    /// `held` of `t`): `from` itself, or a SLICE of it.
    fn rows(&mut self, t: TensorId, from: TensorId, held: Patch, want: Patch) -> Result<TensorId> {
        if held == want {
            return Ok(from);
        }
        if let Some(&(_, s)) = self.slices.iter().find(|(k, _)| *k == (from, want)) {
            return Ok(s);
        }
        let c = self.graph.tensor(from).shape[3];
        let to_i32 = |v: usize| {
            i32::try_from(v).map_err(|_| Diagnostic::unsupported("an image too large to tile"))
        };
        let ((a, b), (x, y)) = want;
        let begin = [0, to_i32(a - held.0.0)?, to_i32(x - held.1.0)?, 0];
        let size = [1, to_i32(b - a)?, to_i32(y - x)?, to_i32(c)?];
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

    /// Rows `want` of `t` (every column), the output of a CONCATENATION along the rows of
    /// `pieces` (each with the rows of `t` it holds) that the tiled graph drops: the one
    /// piece holding them (or a SLICE of it), or a CONCATENATION ([`Origin::Gather`]) of the
    /// pieces' rows.
    fn gather(&mut self, t: TensorId, pieces: &[(TensorId, Span)], want: Span) -> Result<TensorId> {
        let every = (0, self.source.tensor(t).shape[2]);
        let mut parts = Vec::new();
        for &(piece, (p, q)) in pieces {
            let (a, z) = (want.0.max(p), want.1.min(q));
            if a < z {
                parts.push(self.rows(t, piece, ((p, q), every), ((a, z), every))?);
            }
        }
        if let [one] = parts[..] {
            return Ok(one);
        }
        if let Some(&(_, g)) = self.gathered.iter().find(|(w, _)| *w == want) {
            return Ok(g);
        }
        let out = self.strip(t, (want, every));
        self.push(
            OpKind::Concatenation(ConcatenationOptions {
                axis: 1,
                activation: Activation::None,
            }),
            parts.into_iter().map(Some).collect(),
            out,
            Origin::Gather,
        );
        self.gathered.push((want, out));
        Ok(out)
    }
}

/// The strips assembled into a tensor, each with the rows of it that it holds.
type Pieces = Vec<(TensorId, (usize, usize))>;

/// If the region's input `t` (in `graph`, tiled before) is assembled by a CONCATENATION
/// along its rows of strips (of its dtype, quantization and width, no activation) that
/// only the region's operators `j..body` read: that operator and its pieces with the rows
/// of `t` each holds. The strips of the region then read their rows from the pieces (a
/// region chained to the one before it), so that `t` is never whole.
fn assembled(graph: &Graph, t: TensorId, j: usize, body: usize) -> Option<(OpId, Pieces)> {
    if graph.outputs.contains(&t) || graph.inputs.contains(&t) {
        return None;
    }
    let readers_outside = graph
        .ops
        .iter()
        .any(|op| op.present_inputs().any(|x| x == t) && !(j..body).contains(&op.id.0));
    let c = graph.ops[..j].iter().find(|op| op.outputs.contains(&t))?;
    let OpKind::Concatenation(o) = &c.kind else {
        return None;
    };
    let whole = graph.tensor(t);
    let same = |x: &Tensor| {
        x.kind == TensorKind::Activation
            && x.dtype == whole.dtype
            && x.quant == whole.quant
            && x.shape.len() == 4
            && whole.shape.len() == 4
            && x.shape[0] == whole.shape[0]
            && x.shape[2..] == whole.shape[2..]
    };
    if readers_outside || o.axis != 1 || o.activation != Activation::None || c.outputs != [t] {
        return None;
    }
    let mut at = 0;
    let mut pieces = Vec::with_capacity(c.inputs.len());
    for x in &c.inputs {
        let x = graph.tensor((*x)?);
        if !same(x) || pieces.iter().any(|&(p, _)| p == x.id) {
            return None;
        }
        pieces.push((x.id, (at, at + x.shape[1])));
        at += x.shape[1];
    }
    (at == whole.shape[1] && image_height(graph, t).is_some()).then_some((c.id, pieces))
}

/// Every column of image `t` (NHWC).
fn every_column(graph: &Graph, t: TensorId) -> Span {
    (0, graph.tensor(t).shape[2])
}

/// The rows and columns of every tensor of the region's operators `ops` (how each maps rows:
/// `rows`, and columns: `cols`, or every column) that `patch` of tensor `split` needs, from
/// `split` backwards.
fn needs(
    graph: &Graph,
    ops: &[Op],
    rows: &[Rows],
    cols: Option<&[Rows]>,
    split: TensorId,
    patch: Patch,
) -> Vec<Option<Patch>> {
    let full = |t: TensorId| every_column(graph, t);
    let mut need: Vec<Option<Patch>> = vec![None; graph.tensors.len()];
    need[split.0] = Some(patch);
    for (i, op) in ops.iter().enumerate().rev() {
        let Some(out) = need[op.outputs[0].0] else {
            continue;
        };
        for t in op.present_inputs() {
            let Some(h) = image_height(graph, t).filter(|_| !graph.tensor(t).is_constant()) else {
                continue;
            };
            let want_rows = input_rows(rows[i], out.0, h);
            let want_cols = match cols {
                Some(cols) => input_rows(cols[i], out.1, full(t).1),
                None => full(t),
            };
            // (A PAD's strip of padding rows only reads none: refused by the rewrite.)
            if want_rows.0 >= want_rows.1 || want_cols.0 >= want_cols.1 {
                continue;
            }
            let hull = |(p, q): Span, (u, v): Span| (p.min(u), q.max(v));
            need[t.0] = Some(match need[t.0] {
                None => (want_rows, want_cols),
                Some((r, c)) => (hull(r, want_rows), hull(c, want_cols)),
            });
        }
    }
    need
}

/// Tiles `graph` (a model's main graph, as read, or one tiled before: its strips stay as
/// they are, outside the region) by `tiling`.
pub fn tile(graph: &Graph, tiling: Tiling) -> Result<Tiled> {
    rewrite(graph, tiling, false)
}

/// [`tile`], with the region chained to the region before it where its input is that
/// region's cut, assembled from strips that only this region reads: the strips read their
/// rows from the strips before (a SLICE of one, or a CONCATENATION, [`Origin::Gather`], of
/// rows of two or more) and the assembling CONCATENATION is dropped, so that the cut is never
/// whole and the planner may run the strips of both regions interleaved.
pub fn tile_chained(graph: &Graph, tiling: Tiling) -> Result<Tiled> {
    rewrite(graph, tiling, true)
}

fn rewrite(graph: &Graph, tiling: Tiling, chain: bool) -> Result<Tiled> {
    let (j, k) = (tiling.start, tiling.end);
    let refuse = |why: &str| {
        let what = match tiling.columns {
            1 => format!("{} strips of rows", tiling.patches),
            c => format!("{} by {c} patches of rows and columns", tiling.patches),
        };
        Diagnostic::unsupported(format!("operators {j}..{k} cannot run as {what}: {why}"))
    };
    let region = region(graph, j, k).ok_or_else(|| refuse("they are not a tileable region"))?;
    let (rows, cut, sink) = (&region.rows, region.cut, region.sink);
    // The tensor whose rows the strips split (a sink's image, or the cut), and the operators
    // run in strips (all but a sink).
    let split = region.split();
    let body = region.body_end(k);
    let region_ops = &graph.ops[j..body];
    let dense = region.dense.is_some();
    // A sink that is a DEPTHWISE_CONV_2D over the whole image (else an AVERAGE_POOL_2D).
    let depthwise =
        sink.is_some() && !dense && matches!(graph.ops[k - 1].kind, OpKind::DepthwiseConv2d(_));
    let h_cut = image_height(graph, split).ok_or_else(|| refuse("the cut is not an image"))?;
    if tiling.patches < 2 || tiling.patches > h_cut {
        return Err(refuse("the cut has fewer rows than strips"));
    }
    let strips = strips(h_cut, tiling.patches);
    // The columns of each patch (every column: strips of rows), and how each operator maps
    // columns.
    let w_cut = graph.tensor(split).shape[2];
    let (columns, cols) = match tiling.columns {
        0 => return Err(refuse("no columns")),
        1 => (vec![(0, w_cut)], None),
        _ if chain => return Err(refuse("a chained region runs in strips of rows")),
        n if n > w_cut => return Err(refuse("the cut has fewer columns than patches")),
        n => {
            let cols = region
                .cols(graph, j)
                .ok_or_else(|| refuse("an operator runs on strips of rows only"))?;
            (self::strips(w_cut, n), Some(cols))
        }
    };
    let cols = cols.as_deref();
    let full = |t: TensorId| every_column(graph, t);
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
        gathered: Vec::new(),
    };
    // The region's input, if it is assembled from the strips of a region before (that
    // CONCATENATION dropped, the strips read from its pieces).
    let chained = chain
        .then_some(region_ops)
        .into_iter()
        .flatten()
        .flat_map(|op| op.present_inputs())
        .filter(|&t| {
            !graph.tensor(t).is_constant() && !region_ops.iter().any(|op| op.outputs.contains(&t))
        })
        .find_map(|t| Some((t, assembled(graph, t, j, body)?)));
    for op in &graph.ops[..j] {
        if chained.as_ref().is_none_or(|(_, (c, _))| *c != op.id) {
            b.copy(op);
        }
    }
    let mut pieces = Vec::with_capacity(strips.len());
    // A sink's accumulator after the strips so far.
    let mut acc: Option<TensorId> = None;
    for &(a, z) in &strips {
        // A band's patches (its one strip of every column without columns).
        let mut band = Vec::with_capacity(columns.len());
        // The rows of the region's inputs the band's patches read, taken first as a view (a
        // SLICE of whole rows): the inputs' bytes then die band by band as strips' do.
        let band_need = needs(graph, region_ops, rows, None, split, ((a, z), full(split)));
        let mut band_views: Vec<(TensorId, TensorId)> = Vec::new();
        for &(x, y) in &columns {
            // The rows and columns of every tensor this patch needs, from the cut backwards.
            let need = needs(graph, region_ops, rows, cols, split, ((a, z), (x, y)));
            // The patch's tensors, operators forwards.
            b.slices.clear();
            b.gathered.clear();
            let mut held: Vec<Option<TensorId>> = vec![None; graph.tensors.len()];
            for (i, op) in region_ops.iter().enumerate() {
                let out_t = op.outputs[0];
                let Some(out_patch) = need[out_t.0] else {
                    continue;
                };
                let (out_rows, out_cols) = out_patch;
                if out_rows.0 >= out_rows.1 || out_cols.0 >= out_cols.1 {
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
                    let want_rows = input_rows(rows[i], out_rows, h);
                    let want_cols = match cols {
                        Some(cols) => input_rows(cols[i], out_cols, full(t).1),
                        None => full(t),
                    };
                    // (A PAD's strip of padding rows only.)
                    if want_rows.0 >= want_rows.1 || want_cols.0 >= want_cols.1 {
                        return Err(refuse("a strip reads no rows of an operator's input"));
                    }
                    let want = (want_rows, want_cols);
                    let have = need[t.0].ok_or_else(|| refuse("an input's rows are unknown"))?;
                    let from = match (held[t.0], &chained) {
                        (Some(s), _) => b.rows(t, s, have, want)?,
                        // A region input assembled from the strips before: from its pieces.
                        (None, Some((c, (_, pieces)))) if *c == t => {
                            b.gather(t, pieces, want_rows)?
                        }
                        // A region input: the whole tensor.
                        (None, _) if cols.is_none() => b.rows(t, t, ((0, h), full(t)), want)?,
                        // Patches: a box of the band's rows of it.
                        (None, _) => {
                            let band_rows = band_need[t.0]
                                .ok_or_else(|| refuse("an input's rows are unknown"))?
                                .0;
                            let view = match band_views.iter().find(|(x, _)| *x == t) {
                                Some(&(_, v)) => v,
                                None => {
                                    let whole = ((0, h), full(t));
                                    let v = b.rows(t, t, whole, (band_rows, full(t)))?;
                                    band_views.push((t, v));
                                    v
                                }
                            };
                            b.rows(t, view, (band_rows, full(t)), want)?
                        }
                    };
                    inputs.push(Some(from));
                    if let Rows::Window { .. } = rows[i] {
                        window.get_or_insert(RowWindow {
                            input_row: want_rows.0,
                            input_height: h,
                            output_row: out_rows.0,
                            output_height: image_height(graph, out_t).unwrap_or(0),
                            input_col: want_cols.0,
                            input_width: full(t).1,
                            output_col: out_cols.0,
                            output_width: full(out_t).1,
                        });
                    }
                }
                let out = b.strip(out_t, out_patch);
                held[out_t.0] = Some(out);
                if let Some(w) = window {
                    let id = OpId(b.ops.len());
                    b.graph.row_windows.push((id, w));
                }
                b.push(op.kind.clone(), inputs, out, Origin::Strip(op.id));
            }
            band.push(held[split.0].ok_or_else(|| refuse("a strip does not reach the cut"))?);
        }
        // A band of patches put together along the columns ([`Origin::Band`]).
        let piece = match band[..] {
            [one] => one,
            _ => {
                let out = b.strip(split, ((a, z), full(split)));
                b.push(
                    OpKind::Concatenation(ConcatenationOptions {
                        axis: 2,
                        activation: Activation::None,
                    }),
                    band.into_iter().map(Some).collect(),
                    out,
                    Origin::Band,
                );
                out
            }
        };
        match sink {
            // The strip's sums added to the accumulator.
            Some(image) if dense => {
                let fc = &graph.ops[k - 1];
                let outputs = graph.tensor(fc.outputs[0]).elements();
                let sums = b.sums(image, z, outputs, Origin::Dot(image, z));
                let s = &graph.tensor(image).shape;
                let kind = OpKind::KilnDotSum {
                    first: a * s[2] * s[3],
                };
                b.push(
                    kind,
                    vec![Some(piece), acc, fc.input(1)],
                    sums,
                    Origin::Accumulate,
                );
                acc = Some(sums);
            }
            // A depthwise sink: the strip's weighted per-channel sums.
            Some(image) if depthwise => {
                let dw = &graph.ops[k - 1];
                let s = &graph.tensor(image).shape;
                let sums = b.sums(image, z, s[3], Origin::Sum(image, z));
                b.push(
                    OpKind::KilnDepthwiseSum { first: a * s[2] },
                    vec![Some(piece), acc, dw.input(1)],
                    sums,
                    Origin::Accumulate,
                );
                acc = Some(sums);
            }
            Some(image) => {
                let channels = graph.tensor(image).shape[3];
                let sums = b.sums(image, z, channels, Origin::Sum(image, z));
                b.push(
                    OpKind::KilnRowSum,
                    vec![Some(piece), acc],
                    sums,
                    Origin::Accumulate,
                );
                acc = Some(sums);
            }
            None => pieces.push(piece),
        }
    }
    match (sink, acc) {
        // A layer's finish: the sums, its weights (or filter) and its bias.
        (Some(_), Some(acc)) if dense || depthwise => {
            let layer = &graph.ops[k - 1];
            let kind = match layer.kind {
                OpKind::FullyConnected(o) if dense => OpKind::KilnDenseFinish(o),
                OpKind::DepthwiseConv2d(o) if depthwise => OpKind::KilnDepthwiseFinish(o),
                _ => {
                    return Err(refuse(
                        "the sink is not its FULLY_CONNECTED or DEPTHWISE_CONV_2D",
                    ));
                }
            };
            let inputs = vec![Some(acc), layer.input(1), layer.input(2)];
            b.push(kind, inputs, cut, Origin::Finish);
        }
        (Some(image), Some(acc)) => {
            let OpKind::AveragePool2d(options) = graph.ops[k - 1].kind else {
                return Err(refuse("the sink is not an AVERAGE_POOL_2D"));
            };
            let s = &graph.tensor(image).shape;
            let kind = OpKind::KilnAverageFinish {
                options,
                height: s[1],
                width: s[2],
            };
            b.push(kind, vec![Some(acc)], cut, Origin::Finish);
        }
        (Some(_), None) => return Err(refuse("no strips")),
        (None, _) => b.push(
            OpKind::Concatenation(ConcatenationOptions {
                axis: 1,
                activation: Activation::None,
            }),
            pieces.into_iter().map(Some).collect(),
            cut,
            Origin::Assemble,
        ),
    }
    for op in &graph.ops[k..] {
        b.copy(op);
    }
    let Builder {
        graph: mut tiled_graph,
        ops,
        tensor_origin,
        op_origin,
        ..
    } = b;
    // The SLICEs of the region's input's rows first: they are views and cost nothing, and
    // the input then holds its rows for itself only until they are taken, each strip's rows
    // after that only while the strip reads them (its bytes die strip by strip). (A slice of
    // some columns is a copy: it stays before its patch.)
    let n0 = graph.tensors.len();
    let front = |i: &usize| {
        op_origin[*i] == Origin::Slice
            && ops[*i].input(0).is_some_and(|t| t.0 < n0)
            && matches!(tensor_origin[ops[*i].outputs[0].0], Origin::Rows(..))
    };
    let order: Vec<usize> = (0..j)
        .chain((j..ops.len()).filter(front))
        .chain((j..ops.len()).filter(|i| !front(i)))
        .collect();
    tiled_graph.ops = ops;
    let op_origin = renumber(&mut tiled_graph, &op_origin, &order);
    let tiled = Tiled {
        graph: tiled_graph,
        tiling,
        cut,
        sink,
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

/// Puts `graph`'s operators in `order` (old indices, each once) and renumbers them, their
/// row windows too; the operators' origins in the new order.
pub(super) fn renumber(graph: &mut Graph, op_origin: &[Origin], order: &[usize]) -> Vec<Origin> {
    let mut new_id = vec![0; graph.ops.len()];
    for (n, &i) in order.iter().enumerate() {
        new_id[i] = n;
    }
    let mut ops: Vec<Option<Op>> = std::mem::take(&mut graph.ops)
        .into_iter()
        .map(Some)
        .collect();
    graph.ops = order
        .iter()
        .enumerate()
        .map(|(n, &i)| Op {
            id: OpId(n),
            ..ops[i].take().expect("each operator once")
        })
        .collect();
    for (id, _) in &mut graph.row_windows {
        *id = OpId(new_id[id.0]);
    }
    graph.row_windows.sort_by_key(|&(id, _)| id);
    order.iter().map(|&i| op_origin[i]).collect()
}
