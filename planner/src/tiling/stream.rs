//! A streamed input: a tiled graph whose input is never whole in the arena. Each strip's
//! rows of the input, which the tiling takes with a SLICE (a view of the whole input), are
//! read instead from a row source the user hands `invoke` (a camera's line buffer, a file, a
//! sensor), right before the strip's first operator: a [`READ_ROWS`] operator, without
//! inputs but its constant first row and row count, whose output is the strip's own tensor.
//! The input tensor stays in the graph (its id, name, shape and quantization describe the
//! stream) but is no graph input and no operator reads it, so the planner gives it no bytes.
//!
//! Strips overlap by their halos, so the rows a strip asks for may start before the end of
//! the rows the strip before it asked for; they never start before the start of those. A
//! strip needing no rows past those of the read before it (clipped at the image's end)
//! takes them with a SLICE of that read's rows instead: every read ends past the one before.

use super::{Origin, Tiled};
use crate::diag::{Diagnostic, Result};
use crate::ir::{Graph, Op, OpKind, TensorId};

/// The operator that reads rows of the streamed input (`OpKind::Other`; no TFLite builtin
/// has this name, and a custom operator of that name is refused when lowered). Inputs: the
/// first row and the number of rows, INT32 scalars as constant tensors of one element
/// each, and a tensor made from the rows of the read before it (none for the first: the
/// last tensor of the strip before, or that read's output), which no kernel reads: it
/// keeps the reads in the order of their rows whatever order the planner finds; output:
/// the rows, a tensor of the input's shape with that many rows.
pub const READ_ROWS: &str = "KILN_READ_ROWS";

/// The first row and the number of rows a [`READ_ROWS`] operator reads, from its constants.
pub fn read_rows(graph: &Graph, op: &Op) -> Option<(usize, usize)> {
    if !matches!(&op.kind, OpKind::Other { name } if name == READ_ROWS) || op.inputs.len() != 3 {
        return None;
    }
    let scalar = |slot: usize| {
        let t = graph.tensor(op.input(slot)?);
        let d = t.data()?;
        let v = i32::from_le_bytes(d.get(..4)?.try_into().ok()?);
        (t.elements() == 1 && d.len() == 4).then_some(usize::try_from(v).ok()?)
    };
    Some((scalar(0)?, scalar(1)?))
}

/// What the read that replaces the SLICE `next` of `g` waits for, to come after the read
/// that replaces the SLICE `prev`: the output of the last strip operator (or accumulation)
/// before the first operator reading `next`'s rows, if it is made from `prev`'s rows (the
/// strip before, whose last tensor the next strips or the cut keep anyway), else `prev`'s
/// own output (which it would keep live through the strip).
fn after_read(g: &Graph, origin: &[Origin], prev: usize, next: usize) -> TensorId {
    let own = g.ops[prev].outputs[0];
    let read = g.ops[next].outputs[0];
    let Some(first) = g
        .ops
        .iter()
        .position(|op| op.present_inputs().any(|t| t == read))
    else {
        return own;
    };
    let Some(last) = g.ops[..first].iter().rposition(|op| {
        matches!(
            origin.get(op.id.0),
            Some(Origin::Strip(_) | Origin::Accumulate)
        ) && op.outputs.len() == 1
    }) else {
        return own;
    };
    // The tensors made from `prev`'s rows, in the stored (topological) order.
    let mut from = vec![false; g.tensors.len()];
    from[own.0] = true;
    for op in &g.ops[..=last] {
        if op.present_inputs().any(|t| from[t.0]) {
            for &o in &op.outputs {
                from[o.0] = true;
            }
        }
    }
    let candidate = g.ops[last].outputs[0];
    if from[candidate.0] { candidate } else { own }
}

/// `tiled` with its input streamed: the model's one input must be read only by the SLICEs
/// of the strips (the tiled region starts at the first operator that reads it, and no
/// operator outside the region reads it). Each SLICE becomes a [`READ_ROWS`] right before
/// the first operator of its strip that reads its rows; the input is no longer a graph
/// input. Refused (unsupported) otherwise, saying which operator reads the input whole.
pub fn stream_input(tiled: &Tiled) -> Result<Tiled> {
    let g = &tiled.graph;
    let [input] = g.inputs[..] else {
        return Err(Diagnostic::unsupported(format!(
            "a streamed input needs a model with one input; this one has {}",
            g.inputs.len()
        )));
    };
    if tiled.tiling.columns > 1 {
        return Err(Diagnostic::unsupported(
            "a streamed input is read in strips of whole rows; this tiling runs in patches of \
             rows and columns",
        ));
    }
    let mut graph = g.clone();
    let mut op_origin = tiled.op_origin.clone();
    let mut tensor_origin = tiled.tensor_origin.clone();
    let mut next_buffer = graph
        .tensors
        .iter()
        .filter_map(|t| match t.kind {
            crate::ir::TensorKind::Constant { buffer, .. } => Some(buffer + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut reads = Vec::new();
    // Each read: its operator, first row and rows.
    let mut read_rows_so_far: Vec<(usize, usize, usize)> = Vec::new();
    // The SLICEs of a read's rows (a strip needing no rows past the read before).
    let mut views = Vec::new();
    for (i, op) in g.ops.iter().enumerate() {
        if !op.present_inputs().any(|t| t == input) {
            continue;
        }
        let is_slice = matches!(&op.kind, OpKind::Other { name } if name == "SLICE")
            && tiled.op_origin[i] == Origin::Slice
            && op.input(0) == Some(input)
            && op.inputs.len() == 3;
        let out = op.outputs[0];
        let rows = match tensor_origin.get(out.0) {
            Some(&Origin::Rows(t, first)) if is_slice && t == input => {
                Some((first, graph.tensor(out).shape[1]))
            }
            _ => None,
        };
        let Some((first, count)) = rows else {
            return Err(Diagnostic::unsupported(format!(
                "a streamed input is read in strips of rows by the first operators, but op \
                 {i} ({}) reads the input `{}` whole",
                op.kind.name(),
                g.tensor(input).name
            )));
        };
        let mut constant = |what: &str, v: &[usize]| -> Result<TensorId> {
            let data = v
                .iter()
                .map(|&v| i32::try_from(v).map(i32::to_le_bytes))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|_| Diagnostic::unsupported("an input too large to stream"))?
                .concat();
            let id = TensorId(graph.tensors.len());
            graph.tensors.push(crate::ir::Tensor {
                id,
                name: format!("{} {what}", graph.tensor(out).name),
                shape: vec![v.len()],
                dtype: crate::ir::DType::I32,
                quant: crate::ir::Quantization::None,
                kind: crate::ir::TensorKind::Constant {
                    buffer: next_buffer,
                    offset: 0,
                    data,
                },
            });
            next_buffer += 1;
            tensor_origin.push(Origin::Rows(id, 0));
            Ok(id)
        };
        // Rows the read before already holds (a strip clipped at the image's end, in many
        // strips): a SLICE of that read, which a source would not be asked for again.
        let (w, c) = {
            let s = &g.tensor(out).shape;
            (
                s.get(2).copied().unwrap_or(0),
                s.get(3).copied().unwrap_or(0),
            )
        };
        if let Some(&(r, pf, pn)) = read_rows_so_far.last()
            && first >= pf
            && first + count <= pf + pn
        {
            let begin = constant("begin", &[0, first - pf, 0, 0])?;
            let size = constant("size", &[1, count, w, c])?;
            let from = g.ops[r].outputs[0];
            graph.ops[i].inputs = vec![Some(from), Some(begin), Some(size)];
            views.push(i);
            continue;
        }
        let (f, n) = (
            constant("first row", &[first])?,
            constant("rows", &[count])?,
        );
        graph.ops[i].kind = OpKind::Other {
            name: READ_ROWS.to_string(),
        };
        // After the read before it (a tensor made from its rows, read by no kernel, orders
        // them): a source gets its requests in the order of the rows.
        let after = reads
            .last()
            .map(|&r: &usize| after_read(g, &tiled.op_origin, r, i));
        graph.ops[i].inputs = vec![Some(f), Some(n), after];
        op_origin[i] = Origin::Slice;
        reads.push(i);
        read_rows_so_far.push((i, first, count));
    }
    if reads.is_empty() {
        return Err(Diagnostic::unsupported(format!(
            "a streamed input needs the operators that read it to run in strips of rows; no \
             operator reads the input `{}` in strips",
            g.tensor(input).name
        )));
    }
    graph.inputs.clear();
    // Each read (and SLICE of a read) right before the first operator that reads its rows.
    let moved: Vec<usize> = reads.iter().chain(&views).copied().collect();
    let mut order: Vec<usize> = Vec::with_capacity(graph.ops.len());
    let mut placed = vec![false; graph.ops.len()];
    for (i, op) in graph.ops.iter().enumerate() {
        if moved.contains(&i) {
            continue;
        }
        for &r in &moved {
            let out = graph.ops[r].outputs[0];
            if !placed[r] && op.present_inputs().any(|t| t == out) {
                // A SLICE's read first.
                for &q in &reads {
                    let read = graph.ops[q].outputs[0];
                    if !placed[q] && graph.ops[r].present_inputs().any(|t| t == read) {
                        placed[q] = true;
                        order.push(q);
                    }
                }
                placed[r] = true;
                order.push(r);
            }
        }
        order.push(i);
    }
    // (A read no operator uses: none is made, but keep the graph whole.)
    order.extend(reads.iter().filter(|&&r| !placed[r]));
    order.extend(views.iter().filter(|&&r| !placed[r]));
    let op_origin = super::rewrite::renumber(&mut graph, &op_origin, &order);
    Ok(Tiled {
        graph,
        tiling: tiled.tiling,
        cut: tiled.cut,
        sink: tiled.sink,
        strips: tiled.strips.clone(),
        tensor_origin,
        op_origin,
    })
}
