//! The independent check of a tiling (it shares no code with the rewrite in [`super`]):
//! from the untiled graph, the tiled one and the origins the rewrite claims, that every
//! tensor of the tiled graph holds the rows (and columns) of the model's tensor it claims
//! to, and that the cut is assembled from strips covering each of its rows exactly once,
//! each strip (a band of patches) from patches covering each of its columns exactly once.
//!
//! By induction over the tiled graph's operators: a strip operator reads tensors holding
//! rows and columns of its original operator's inputs, which (its window recomputed here
//! from the original operator's options, along both axes) hold every row and column its
//! output rows and columns read, starting at their first real row and column (so the
//! kernel's padding is the whole image's); a SLICE takes rows and columns it holds; the
//! model's other operators are unchanged and read only tensors the tiled graph produces as
//! the model does (or the assembled cut).

use super::{Origin, Tiled};
use crate::ir::{DType, Graph, OpKind, Padding, TensorId, TensorKind};

/// `(stride, padding before, extent)` of a windowed operator along `axis` of its NHWC
/// images (1: rows, 2: columns), recomputed (a PAD's: stride 1, its padding before, one).
fn window(
    graph: &Graph,
    kind: &OpKind,
    input: TensorId,
    filter: Option<TensorId>,
    axis: usize,
) -> Option<[usize; 3]> {
    // An option's value along the axis: of the rows (`h`) or of the columns (`w`).
    let pick = |h: i32, w: i32| if axis == 1 { h } else { w };
    let filter_size = |f: Option<TensorId>| -> Option<i32> {
        i32::try_from(*graph.tensor(f?).shape.get(axis)?).ok()
    };
    let (padding, stride, filter_h, dilation) = match kind {
        // `filter` is the paddings, `[[before, after]; 4]`: the axis' pair.
        OpKind::Pad | OpKind::PadV2 => {
            let t = graph.tensor(filter?);
            let before = match t.dtype {
                DType::I32 => {
                    let at = 8 * axis;
                    i64::from(i32::from_le_bytes(
                        t.data()?.get(at..at + 4)?.try_into().ok()?,
                    ))
                }
                DType::I64 => {
                    let at = 16 * axis;
                    i64::from_le_bytes(t.data()?.get(at..at + 8)?.try_into().ok()?)
                }
                _ => return None,
            };
            return Some([1, usize::try_from(before).ok()?, 1]);
        }
        OpKind::Conv2d(o) => (
            o.padding,
            pick(o.stride_h, o.stride_w),
            filter_size(filter)?,
            pick(o.dilation_h, o.dilation_w),
        ),
        OpKind::DepthwiseConv2d(o) => (
            o.padding,
            pick(o.stride_h, o.stride_w),
            filter_size(filter)?,
            pick(o.dilation_h, o.dilation_w),
        ),
        OpKind::AveragePool2d(o) | OpKind::MaxPool2d(o) => (
            o.padding,
            pick(o.stride_h, o.stride_w),
            pick(o.filter_h, o.filter_w),
            1,
        ),
        _ => return None,
    };
    let (s, f, d) = (
        usize::try_from(stride).ok()?,
        usize::try_from(filter_h).ok()?,
        usize::try_from(dilation).ok()?,
    );
    if s == 0 {
        return None;
    }
    let extent = f.checked_sub(1)? * d + 1;
    let h = *graph.tensor(input).shape.get(axis)?;
    let out = if padding == Padding::Same {
        h.div_ceil(s)
    } else {
        (h + s).checked_sub(extent)? / s
    };
    let needed = (out.checked_sub(1)? * s + extent).saturating_sub(h);
    Some([s, needed / 2, extent])
}

/// Whether a pooling window over an axis of `size` cells has one output position whose window
/// (from `-padding`, `filter` cells) holds every cell (TFLM's `ComputePaddingHeightWidth`).
fn whole_window(padding: Padding, size: usize, stride: i32, filter: i32) -> bool {
    let (Ok(s), Ok(f)) = (usize::try_from(stride), usize::try_from(filter)) else {
        return false;
    };
    if s == 0 || f == 0 || size == 0 {
        return false;
    }
    let out = match padding {
        Padding::Same => size.div_ceil(s),
        Padding::Valid => (size + s).saturating_sub(f) / s,
    };
    let before = (f.saturating_sub(size)) / 2;
    out == 1 && before + size <= f
}

/// Checks `tiled` against `source`; the error says what is wrong.
pub fn check(source: &Graph, tiled: &Tiled) -> Result<(), String> {
    let g = &tiled.graph;
    crate::validate::validate(g).map_err(|e| e.to_string())?;
    let n0 = source.tensors.len();
    if tiled.tensor_origin.len() != g.tensors.len() || tiled.op_origin.len() != g.ops.len() {
        return Err("the origins do not match the graph".into());
    }
    if g.tensors[..n0] != source.tensors[..]
        || g.inputs != source.inputs
        || g.outputs != source.outputs
    {
        return Err("the model's tensors, inputs or outputs changed".into());
    }
    // Rows and columns of which tensor each tensor holds (`(tensor, first row, rows, first
    // column, columns)`; the model's: all of their own); an accumulator holds none
    // (`NO_ROWS`) but the sums of rows `0..r` of an image (`sums`).
    const NO_ROWS: TensorId = TensorId(usize::MAX);
    let mut rows: Vec<(TensorId, usize, usize, usize, usize)> = Vec::with_capacity(g.tensors.len());
    // A dense sink's accumulators: dot products over the flattened rows `0..r` (`dots`).
    let mut sums: Vec<Option<(TensorId, usize)>> = vec![None; g.tensors.len()];
    let mut dots: Vec<Option<(TensorId, usize)>> = vec![None; g.tensors.len()];
    for (t, o) in g.tensors.iter().zip(&tiled.tensor_origin) {
        let dim = |i: usize| t.shape.get(i).copied().unwrap_or(0);
        let whole = (t.id, 0, dim(1), 0, dim(2));
        let (accumulator, dot) = match *o {
            Origin::Sum(m, r) => (Some((m, r)), false),
            Origin::Dot(m, r) => (Some((m, r)), true),
            _ => (None, false),
        };
        if let (Some((m, r)), false) = (accumulator, t.id.0 < n0 || t.is_constant()) {
            let Some(image) = source.tensors.get(m.0) else {
                return Err(format!("tensor {} claims a tensor the model lacks", t.id.0));
            };
            let s = &image.shape;
            if s.len() != 4
                || s[0] != 1
                || image.dtype != DType::I8
                || image.kind != TensorKind::Activation
                || r == 0
                || r > s[1]
                || (!dot && t.shape != [s[3]])
                || t.shape.len() != 1
                || t.dtype != DType::I32
                || t.quant != image.quant
                || t.kind != TensorKind::Activation
            {
                return Err(format!(
                    "tensor {} is not the sums of rows 0..{r} of tensor {}",
                    t.id.0, m.0
                ));
            }
            if dot {
                dots[t.id.0] = Some((m, r));
            } else {
                sums[t.id.0] = Some((m, r));
            }
            rows.push((NO_ROWS, 0, 0, 0, 0));
            continue;
        }
        if t.id.0 < n0 || t.is_constant() {
            if *o != Origin::Rows(t.id, 0) {
                return Err(format!(
                    "tensor {} is the model's but has another origin",
                    t.id.0
                ));
            }
            rows.push(whole);
            continue;
        }
        let (m, r, c) = match *o {
            Origin::Rows(m, r) => (m, r, None),
            Origin::Patch(m, r, c) => (m, r, Some(c)),
            _ => return Err(format!("tensor {} has no rows", t.id.0)),
        };
        let Some(model) = source.tensors.get(m.0) else {
            return Err(format!("tensor {} claims a tensor the model lacks", t.id.0));
        };
        let (s, ms) = (&t.shape, &model.shape);
        let same_but_rows = s.len() == 4
            && ms.len() == 4
            && s[0] == ms[0]
            && s[3] == ms[3]
            && s[1] > 0
            && r + s[1] <= ms[1]
            && match c {
                // Every column.
                None => s[2] == ms[2],
                Some(c) => s[2] > 0 && c + s[2] <= ms[2],
            };
        if !same_but_rows
            || t.dtype != model.dtype
            || t.quant != model.quant
            || t.kind != TensorKind::Activation
        {
            return Err(format!(
                "tensor {} is not rows {r}.. of tensor {}",
                t.id.0, m.0
            ));
        }
        rows.push((m, r, s[1], c.unwrap_or(0), s[2]));
    }
    // The model's operators the tiled graph drops: only a CONCATENATION along the rows
    // (no activation, its inputs of its output's type and width) whose output nothing
    // reads any more (a region chained to the strips of the one before it: its strips
    // read their rows from the CONCATENATION's inputs). Each input then holds its rows of
    // the output.
    let mut kept = vec![false; source.ops.len()];
    for o in &tiled.op_origin {
        if let Origin::Op(m) | Origin::Strip(m) = *o
            && let Some(k) = kept.get_mut(m.0)
        {
            *k = true;
        }
    }
    let mut dropped = vec![false; source.ops.len()];
    for (c, _) in kept.iter().enumerate().filter(|(_, k)| !**k) {
        let c = &source.ops[c];
        let bad = |why: &str| Err(format!("the model's op {} is dropped: {why}", c.id.0));
        // (Another operator missing is refused below.)
        let (OpKind::Concatenation(o), [y]) = (&c.kind, &c.outputs[..]) else {
            continue;
        };
        let out = source.tensor(*y);
        if o.axis != 1
            || o.activation != crate::ir::Activation::None
            || out.shape.len() != 4
            || out.kind != TensorKind::Activation
            || g.outputs.contains(y)
            || g.ops.iter().any(|op| op.present_inputs().any(|t| t == *y))
        {
            return bad("it is not a concatenation of rows whose output nothing reads");
        }
        let mut at = 0;
        for x in &c.inputs {
            let Some(x) = x.map(|x| source.tensor(x)) else {
                return bad("an input is missing");
            };
            let s = &x.shape;
            if s.len() != 4
                || s[0] != out.shape[0]
                || s[2..] != out.shape[2..]
                || x.dtype != out.dtype
                || x.quant != out.quant
                || x.kind != TensorKind::Activation
                || rows[x.id.0] != (x.id, 0, s[1], 0, s[2])
            {
                return bad("an input is not rows of its output");
            }
            rows[x.id.0] = (*y, at, s[1], 0, s[2]);
            at += s[1];
        }
        if at != out.shape[1] {
            return bad("its inputs do not cover its output's rows");
        }
        dropped[c.id.0] = true;
    }
    let mut producer = vec![None; g.tensors.len()];
    for op in &g.ops {
        for &t in &op.outputs {
            producer[t.0] = Some(op.id);
        }
    }
    let mut source_producer = vec![None; n0];
    for op in &source.ops {
        for &t in &op.outputs {
            source_producer[t.0] = Some(op.id);
        }
    }
    // A dense sink's operators in the model: the FULLY_CONNECTED writing the cut and the
    // RESHAPE flattening the image into its input, unless the layer reads the image itself.
    let dense = source_producer
        .get(tiled.cut.0)
        .copied()
        .flatten()
        .map(|p| source.op(p))
        .filter(|fc| matches!(fc.kind, OpKind::FullyConnected(_)))
        .and_then(|fc| {
            let y = fc.input(0)?;
            if tiled.sink == Some(y) {
                return Some((fc, None));
            }
            let reshape = source.op(source_producer.get(y.0).copied().flatten()?);
            (reshape.kind == OpKind::Reshape && reshape.outputs == [y])
                .then_some((fc, Some(reshape)))
        });
    // A depthwise sink's operator in the model: the DEPTHWISE_CONV_2D writing the cut from
    // the sink's image.
    let depthwise = source_producer
        .get(tiled.cut.0)
        .copied()
        .flatten()
        .map(|p| source.op(p))
        .filter(|dw| {
            matches!(dw.kind, OpKind::DepthwiseConv2d(_))
                && tiled.sink.is_some()
                && dw.input(0) == tiled.sink
        });
    let mut seen = vec![0usize; source.ops.len()];
    let mut assembled = 0;
    for (op, origin) in g.ops.iter().zip(&tiled.op_origin) {
        let bad = |why: &str| Err(format!("op {} ({}): {why}", op.id.0, op.kind.name()));
        let window_of = g.row_window(op.id);
        match *origin {
            Origin::Op(m) => {
                let Some(model) = source.ops.get(m.0) else {
                    return bad("claims an operator the model lacks");
                };
                seen[m.0] += 1;
                if op.kind != model.kind
                    || op.inputs != model.inputs
                    || op.outputs != model.outputs
                    || window_of != source.row_window(m)
                {
                    return bad("differs from the model's operator");
                }
                // It reads what the model's operator reads: the model's tensors, produced
                // by their own operators (or the cut, assembled).
                for t in op.present_inputs() {
                    let Some(p) = producer[t.0] else { continue };
                    let by = tiled.op_origin[p.0];
                    let ok = match by {
                        Origin::Op(q) => Some(q) == source_producer[t.0],
                        Origin::Assemble | Origin::Finish => t == tiled.cut,
                        _ => false,
                    };
                    if !ok {
                        return bad("reads a tensor the model's operator does not produce");
                    }
                }
            }
            Origin::Strip(m) => {
                let Some(model) = source.ops.get(m.0) else {
                    return bad("claims an operator the model lacks");
                };
                seen[m.0] += 1;
                if op.kind != model.kind
                    || source.row_window(m).is_some()
                    || op.inputs.len() != model.inputs.len()
                    || op.outputs.len() != 1
                    || model.outputs.len() != 1
                {
                    return bad("is not a strip of its operator");
                }
                let (mo, a, h, oc, ow) = rows[op.outputs[0].0];
                if mo != model.outputs[0] || op.outputs[0].0 < n0 {
                    return bad("writes rows of another tensor");
                }
                let mut image_rows = Vec::new();
                for (slot, (t, mt)) in op.inputs.iter().zip(&model.inputs).enumerate() {
                    match (t, mt) {
                        (None, None) => {}
                        (Some(t), Some(mt)) if source.tensor(*mt).is_constant() => {
                            if t != mt {
                                return bad("reads another constant");
                            }
                        }
                        (Some(t), Some(mt)) => {
                            let (m_in, r, hi, c, wi) = rows[t.0];
                            if m_in != *mt {
                                return bad("reads rows of another tensor");
                            }
                            image_rows.push((slot, (r, hi), (c, wi)));
                        }
                        _ => return bad("its operands differ"),
                    }
                }
                let x = model.inputs[0].unwrap_or(TensorId(0));
                let along = |axis| window(source, &model.kind, x, model.input(1), axis);
                match (along(1), along(2)) {
                    (Some(by_rows), Some(by_cols)) => {
                        let [(0, (r, hi), (c, wi))] = image_rows[..] else {
                            return bad("a window over more than its image input");
                        };
                        let (xs, ys) = (
                            &source.tensor(x).shape,
                            &source.tensor(model.outputs[0]).shape,
                        );
                        let (
                            Some(&[_, full_in, full_in_w, _]),
                            Some(&[_, full_out, full_out_w, _]),
                        ) = (xs.get(..4), ys.get(..4))
                        else {
                            return bad("a window over no image");
                        };
                        // The input positions `first..end` output positions `at..at + n`
                        // read along an axis of `full` positions.
                        let reads =
                            |[s, pad, extent]: [usize; 3], at: usize, n: usize, full: usize| {
                                let first = (at * s).saturating_sub(pad);
                                let end = ((at + n - 1) * s + extent).saturating_sub(pad).min(full);
                                (first, end)
                            };
                        let (first, end) = reads(by_rows, a, h, full_in);
                        let (first_c, end_c) = reads(by_cols, oc, ow, full_in_w);
                        let want = crate::ir::RowWindow {
                            input_row: r,
                            input_height: full_in,
                            output_row: a,
                            output_height: full_out,
                            input_col: c,
                            input_width: full_in_w,
                            output_col: oc,
                            output_width: full_out_w,
                        };
                        // A PAD copies all of its patch: exactly those rows and columns.
                        let pad = matches!(model.kind, OpKind::Pad | OpKind::PadV2);
                        if r != first
                            || r + hi < end
                            || (pad && r + hi != end)
                            || c != first_c
                            || c + wi < end_c
                            || (pad && c + wi != end_c)
                            || window_of != Some(want)
                        {
                            return bad("its strip does not hold the rows its output rows read");
                        }
                    }
                    _ => {
                        if window_of.is_some()
                            || image_rows.is_empty()
                            || image_rows
                                .iter()
                                .any(|&(_, rh, cw)| rh != (a, h) || cw != (oc, ow))
                        {
                            return bad("an elementwise strip reads other rows than it writes");
                        }
                    }
                }
            }
            Origin::Slice => {
                let ints = |t: Option<TensorId>| -> Option<Vec<i32>> {
                    let d = g.tensor(t?).data()?;
                    Some(
                        d.chunks_exact(4)
                            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                            .collect(),
                    )
                };
                let (Some(x), [y]) = (op.input(0), &op.outputs[..]) else {
                    return bad("a slice without its operands");
                };
                let ((mx, rx, hx, cx, wx), (my, ry, hy, cy, wy)) = (rows[x.0], rows[y.0]);
                if mx == NO_ROWS || my == NO_ROWS {
                    return bad("a slice of sums");
                }
                let w = &g.tensor(*y).shape;
                let begin = ints(op.input(1));
                let size = ints(op.input(2));
                let expect_begin = ry
                    .checked_sub(rx)
                    .zip(cy.checked_sub(cx))
                    .map(|(d, e)| vec![0, d as i32, e as i32, 0]);
                let expect_size = vec![1, hy as i32, wy as i32, w[3] as i32];
                if op.kind.name() != "SLICE"
                    || mx != my
                    || ry + hy > rx + hx
                    || cy + wy > cx + wx
                    || begin != expect_begin
                    || size != Some(expect_size)
                {
                    return bad("a slice that does not take the rows it claims");
                }
            }
            Origin::Assemble => {
                assembled += 1;
                let OpKind::Concatenation(o) = &op.kind else {
                    return bad("the cut is not assembled by a concatenation");
                };
                if o.axis != 1 || op.outputs != [tiled.cut] {
                    return bad("the cut is not assembled along its rows");
                }
                let mut at = 0;
                let width = source.tensor(tiled.cut).shape.get(2).copied();
                for t in op.present_inputs() {
                    let (m, r, h, c, w) = rows[t.0];
                    if m != tiled.cut || r != at || c != 0 || Some(w) != width {
                        return bad("the strips do not cover the cut's rows once, in order");
                    }
                    at += h;
                }
                if at != source.tensor(tiled.cut).shape[1] {
                    return bad("the strips do not cover the cut");
                }
            }
            Origin::Gather => {
                let (OpKind::Concatenation(o), [y]) = (&op.kind, &op.outputs[..]) else {
                    return bad("a gathering that is not a concatenation");
                };
                let (m, mut at, h, c, w) = rows[y.0];
                let end = at + h;
                if o.axis != 1 || o.activation != crate::ir::Activation::None || y.0 < n0 {
                    return bad("a gathering that is not a concatenation of rows");
                }
                for t in op.present_inputs() {
                    let (mt, r, ht, ct, wt) = rows[t.0];
                    if mt != m || mt == NO_ROWS || r != at || (ct, wt) != (c, w) {
                        return bad("a gathering whose inputs do not hold its rows, in order");
                    }
                    at += ht;
                }
                if at != end || op.inputs.len() < 2 {
                    return bad("a gathering whose inputs do not cover its rows");
                }
            }
            Origin::Band => {
                let (OpKind::Concatenation(o), [y]) = (&op.kind, &op.outputs[..]) else {
                    return bad("a band that is not a concatenation");
                };
                let (m, r, h, c, w) = rows[y.0];
                let width = source.tensor(tiled.cut).shape.get(2).copied();
                if o.axis != 2
                    || o.activation != crate::ir::Activation::None
                    || y.0 < n0
                    || m != tiled.cut
                    || c != 0
                    || Some(w) != width
                    || op.inputs.len() < 2
                {
                    return bad("a band that is not a concatenation of the cut's columns");
                }
                let mut at = 0;
                for t in &op.inputs {
                    let Some(t) = t else {
                        return bad("a band without an input");
                    };
                    let (mt, rt, ht, ct, wt) = rows[t.0];
                    if mt != m || (rt, ht) != (r, h) || ct != at {
                        return bad("a band whose patches do not cover its columns once, in order");
                    }
                    at += wt;
                }
                if at != w {
                    return bad("a band whose patches do not cover its columns");
                }
            }
            Origin::Accumulate => {
                let [out] = &op.outputs[..] else {
                    return bad("an accumulation with other than one output");
                };
                // Per-channel sums (KILN_ROW_SUM) or a dense sink's dot products
                // (KILN_DOT_SUM: the model layer's weights, from the strip's first element).
                let (acc, first) = match (&op.kind, &op.inputs[..], dense) {
                    // (Plain sums only into a pooling: a depthwise sink's are weighted.)
                    (OpKind::KilnRowSum, [_, _], _) if depthwise.is_none() => (&sums, None),
                    // (The first pixel, as the element of a one-channel image.)
                    (OpKind::KilnDepthwiseSum { first }, [_, _, f], _)
                        if depthwise.is_some_and(|dw| *f == dw.input(1))
                            && g.tensor(*out).shape == [source.tensor(tiled.cut).elements()] =>
                    {
                        let c = source.tensor(tiled.cut).elements();
                        (&sums, Some(first * c))
                    }
                    (OpKind::KilnDotSum { first }, [_, _, w], Some((fc, _)))
                        if *w == fc.input(1)
                            && g.tensor(*out).shape
                                == [source.tensor(fc.outputs[0]).elements()] =>
                    {
                        (&dots, Some(*first))
                    }
                    _ => {
                        return bad(
                            "an accumulation that is not a KILN_ROW_SUM, KILN_DOT_SUM or \
                             KILN_DEPTHWISE_SUM",
                        );
                    }
                };
                let (Some((m, end)), [Some(strip), prev, ..]) = (acc[out.0], &op.inputs[..]) else {
                    return bad("an accumulation without its strip or its sums");
                };
                let (ms, r, h, c, w) = rows[strip.0];
                // The sums so far end where the strip starts (none: it starts at row 0).
                let start = match prev {
                    None => Some(0),
                    Some(p) => acc[p.0].filter(|&(mp, _)| mp == m).map(|(_, e)| e),
                };
                let s = &source.tensor(m).shape;
                if ms != m
                    || start != Some(r)
                    || r + h != end
                    || c != 0
                    || Some(w) != s.get(2).copied()
                    || first.is_some_and(|f| f != r * s[2] * s[3])
                {
                    return bad("its strip does not follow the sums it adds to");
                }
            }
            Origin::Finish if matches!(op.kind, OpKind::KilnDenseFinish(_)) => {
                assembled += 1;
                let OpKind::KilnDenseFinish(options) = op.kind else {
                    unreachable!("matched")
                };
                let Some((fc, reshape)) = dense else {
                    return bad("finishes a tensor no FULLY_CONNECTED of the model writes");
                };
                seen[fc.id.0] += 1;
                if let Some(r) = reshape {
                    seen[r.id.0] += 1;
                }
                let x = match reshape {
                    Some(r) => r.input(0),
                    None => fc.input(0),
                };
                let (OpKind::FullyConnected(o), Some(x), Some(y), Some(w)) =
                    (&fc.kind, x, fc.input(0), fc.input(1))
                else {
                    return bad("the model's layer lacks its operands");
                };
                let (image, flat, weights) = (source.tensor(x), source.tensor(y), source.tensor(w));
                let s = &image.shape;
                let elements = image.elements();
                let acc = op.input(0);
                if *o != options
                    || op.outputs != [tiled.cut]
                    || fc.outputs != [tiled.cut]
                    || op.inputs.len() != 3
                    || op.input(1) != Some(w)
                    || op.input(2) != fc.input(2)
                    || fc.inputs.len() > 3
                    || tiled.sink != Some(x)
                    || s.len() != 4
                    || s[0] != 1
                    || acc.and_then(|a| dots[a.0]) != Some((x, s[1]))
                    || flat.elements() != elements
                    || flat.dtype != image.dtype
                    || flat.quant != image.quant
                    || weights.shape.len() != 2
                    || weights.shape[1] != elements
                    || !weights.is_constant()
                    || source.tensor(tiled.cut).elements() != weights.shape[0]
                {
                    return bad(
                        "does not finish the model's layer over the whole image's dot products",
                    );
                }
            }
            Origin::Finish if matches!(op.kind, OpKind::KilnDepthwiseFinish(_)) => {
                assembled += 1;
                let OpKind::KilnDepthwiseFinish(options) = op.kind else {
                    unreachable!("matched")
                };
                let Some(dw) = depthwise else {
                    return bad("finishes a tensor no DEPTHWISE_CONV_2D of the model writes");
                };
                seen[dw.id.0] += 1;
                let (OpKind::DepthwiseConv2d(o), Some(x), Some(f)) =
                    (&dw.kind, dw.input(0), dw.input(1))
                else {
                    return bad("the model's layer lacks its operands");
                };
                let (image, filter) = (source.tensor(x), source.tensor(f));
                let s = &image.shape;
                let acc = op.input(0);
                if *o != options
                    || op.outputs != [tiled.cut]
                    || dw.outputs != [tiled.cut]
                    || op.inputs.len() != 3
                    || op.input(1) != Some(f)
                    || op.input(2) != dw.input(2)
                    || dw.inputs.len() > 3
                    || tiled.sink != Some(x)
                    || s.len() != 4
                    || s[0] != 1
                    || acc.and_then(|a| sums[a.0]) != Some((x, s[1]))
                    || filter.shape != [1, s[1], s[2], s[3]]
                    || !filter.is_constant()
                    || source.tensor(tiled.cut).shape != [1, 1, 1, s[3]]
                    || o.padding != crate::ir::Padding::Valid
                    || o.depth_multiplier != 1
                    || o.dilation_h != 1
                    || o.dilation_w != 1
                    || source.row_window(dw.id).is_some()
                {
                    return bad(
                        "does not finish the model's depthwise layer over the whole image's sums",
                    );
                }
            }
            Origin::Finish => {
                assembled += 1;
                let OpKind::KilnAverageFinish {
                    options,
                    height,
                    width,
                } = op.kind
                else {
                    return bad("the sums are not finished by KILN_AVERAGE_FINISH");
                };
                let Some(model) = source_producer
                    .get(tiled.cut.0)
                    .copied()
                    .flatten()
                    .map(|p| source.op(p))
                else {
                    return bad("finishes a tensor no operator of the model writes");
                };
                seen[model.id.0] += 1;
                let (OpKind::AveragePool2d(o), Some(x), [acc]) = (
                    &model.kind,
                    model.input(0),
                    &op.present_inputs().collect::<Vec<_>>()[..],
                ) else {
                    return bad("the model's operator is not an AVERAGE_POOL_2D");
                };
                let image = source.tensor(x);
                let s = &image.shape;
                let out = source.tensor(tiled.cut);
                if *o != options
                    || op.outputs != [tiled.cut]
                    || model.outputs != [tiled.cut]
                    || model.inputs.len() != 1
                    || tiled.sink != Some(x)
                    || sums[acc.0] != Some((x, s[1]))
                    || [height, width] != [s[1], s[2]]
                    || out.dtype != DType::I8
                    || out.shape != [1, 1, 1, s[3]]
                    || source.row_window(model.id).is_some()
                    || !whole_window(o.padding, s[1], o.stride_h, o.filter_h)
                    || !whole_window(o.padding, s[2], o.stride_w, o.filter_w)
                {
                    return bad("does not finish the model's pooling over the whole image's sums");
                }
            }
            Origin::Rows(..) | Origin::Patch(..) | Origin::Sum(..) | Origin::Dot(..) => {
                return bad("an operator with a tensor's origin");
            }
        }
    }
    if assembled != 1 {
        return Err(format!("the cut is assembled {assembled} times"));
    }
    if tiled.sink.is_some() != tiled.op_origin.contains(&Origin::Finish) {
        return Err("a sink without its finish, or a finish without a sink".into());
    }
    if let Some(m) = (0..seen.len()).position(|m| seen[m] == 0 && !dropped[m]) {
        return Err(format!("the model's op {m} is missing"));
    }
    // Every strip tensor is written by exactly one operator (validate: at most once).
    for (t, p) in producer.iter().enumerate().skip(n0) {
        if p.is_none() && !g.tensors[t].is_constant() {
            return Err(format!("tensor {t} is never written"));
        }
    }
    Ok(())
}
