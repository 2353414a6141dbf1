//! [`declared`]: what Kiln's operator modules declare to the planner (scratch bytes and
//! aliasing abilities), restated from the graph alone for graphs the build side cannot
//! lower, with its helpers (constant operands, axes, concatenation offsets).

use crate::ir::{DType, Graph, OpKind};

/// What Kiln's operator modules (`kiln-build`) declare to the planner for the operators of
/// `graph`, restated from the graph alone, for graphs the build side cannot lower: these
/// synthetic graphs and the hand-made ones of tests and benchmarks (tensors without
/// quantization, operators without weights). `kiln-build`'s tests check that it equals what
/// the operator modules declare on every model Kiln compiles.
pub fn declared(graph: &Graph) -> crate::kernels::Declared {
    use crate::kernels::{Abilities, ConvInPlace, ConvInPlaceKind, Declared};
    let ops = graph
        .ops
        .iter()
        .map(|op| {
            let out = op.outputs.first().map(|&o| graph.tensor(o));
            let input = |slot: usize| op.input(slot).map(|t| graph.tensor(t));
            let mut a = Abilities::default();
            let dtype_in = |types: &[DType]| out.is_some_and(|o| types.contains(&o.dtype));
            // The int8 convolutions' fast kernels (`kiln_kernels::gemm`): a pixel pair
            // widened to int16 (4 bytes per value, rows padded to a multiple of 4) for a
            // CONV_2D of one group that is 1x1 with stride 1; an im2col of two output pixels
            // and its widened form (6 bytes per value) for the other CONV_2Ds of one group
            // and a DEPTHWISE_CONV_2D with one input channel.
            // (`kiln_kernels::gemm::widen_pays`: the widened form only for 16 inputs or more,
            // a multiple of 4, and 8 output channels or more; `widen_pays_windowed`: the
            // im2col's from 8 inputs on.)
            let padded = |k: usize| k.div_ceil(4) * 4;
            let wide_from = |from: usize, k: usize, n: usize| {
                if k.is_multiple_of(4) && k >= from && n >= 8 {
                    4 * k
                } else {
                    0
                }
            };
            let wide = |k: usize, n: usize| wide_from(16, k, n);
            let im2col = |k: usize, n: usize| 2 * padded(k) + wide_from(8, padded(k), n);
            let int8 = out.is_some_and(|o| o.dtype == DType::I8)
                && input(0).is_some_and(|x| x.dtype == DType::I8 && x.shape.len() == 4)
                && input(1).is_some_and(|f| f.dtype == DType::I8 && f.shape.len() == 4);
            let scratch = match (&op.kind, out, input(0), input(1)) {
                (OpKind::TransposeConv(_), Some(o), ..) if o.dtype == DType::I8 => o.elements() * 4,
                (OpKind::Conv2d(o), _, Some(x), Some(f)) if int8 && f.shape[3] == x.shape[3] => {
                    let k = f.shape[1] * f.shape[2] * f.shape[3];
                    if f.shape[1] == 1 && f.shape[2] == 1 && o.stride_h == 1 && o.stride_w == 1 {
                        wide(k, f.shape[0])
                    } else {
                        im2col(k, f.shape[0])
                    }
                }
                // One input channel: the windows of two output pixels (and 4 spare bytes)
                // and a band of `kh` input rows, to 16 bytes
                // (`depthwise_conv_2d::fast::single_scratch_bytes`).
                (OpKind::DepthwiseConv2d(o), Some(y), Some(x), Some(f))
                    if int8 && x.shape[3] == 1 && y.shape.len() == 4 =>
                {
                    let (kh, kw) = (f.shape[1], f.shape[2]);
                    let (sw, dw) = (o.stride_w.max(1) as usize, o.dilation_w.max(1) as usize);
                    let bw = y.shape[2].saturating_sub(1) * sw + kw.saturating_sub(1) * dw + 1;
                    (2 * padded(kh * kw) + 4 + kh * (bw + 4)).next_multiple_of(16)
                }
                // Depth multiplier 1, channels a multiple of 4, a 3x3 or `kh x 1` window,
                // with padding: `kh` input rows, padded, as the row form's band, to 16 bytes
                // (`kiln_kernels::depthwise_conv_2d::fast::band_bytes`).
                (OpKind::DepthwiseConv2d(o), Some(y), Some(x), Some(f))
                    if int8
                        && o.depth_multiplier == 1
                        && x.shape[3] == y.shape[3]
                        && x.shape[3] > 1
                        && x.shape[3].is_multiple_of(4)
                        && y.shape.len() == 4
                        && ((f.shape[1] == 3 && f.shape[2] == 3) || f.shape[2] == 1) =>
                {
                    let (kh, kw) = (f.shape[1], f.shape[2]);
                    let [sh, sw, dh, dw] = [o.stride_h, o.stride_w, o.dilation_h, o.dilation_w]
                        .map(|v| v.max(1) as usize);
                    // The extent one row (column) of output windows spans, and the padding
                    // before the input (TFLM's `ComputePaddingHeightWidth`: half the excess).
                    let span = |n: usize, s: usize, k: usize, d: usize| {
                        n.saturating_sub(1) * s + k.saturating_sub(1) * d + 1
                    };
                    let (bh, bw) = (span(y.shape[1], sh, kh, dh), span(y.shape[2], sw, kw, dw));
                    let (ih, iw) = (x.shape[1], x.shape[2]);
                    let (ph, pw) = (bh.saturating_sub(ih) / 2, bw.saturating_sub(iw) / 2);
                    if ph > 0 || pw > 0 || bh > ih + ph || bw > iw + pw {
                        (kh * bw * x.shape[3]).next_multiple_of(16)
                    } else {
                        0
                    }
                }
                // TFLM's SignalRfft and SignalIrfft (`kiln_kernels::signal_rfft`): the
                // zero-padded frame, or the inverse FFT's input: `fft_length` samples of the
                // input's type.
                (OpKind::Custom { name, options }, _, Some(x), _)
                    if name == "SignalRfft" || name == "SignalIrfft" =>
                {
                    let n = options
                        .as_ref()
                        .and_then(|o| o.int("fft_length"))
                        .and_then(|n| usize::try_from(n).ok())
                        .unwrap_or(0);
                    n * x.dtype.size()
                }
                _ => 0,
            };
            match &op.kind {
                OpKind::Reshape | OpKind::Squeeze { .. } | OpKind::ExpandDims => a.view = true,
                // A CAST that keeps every bit: a type to itself (BOOL excepted: any nonzero
                // byte becomes 1), int32 <-> uint32.
                OpKind::Cast => {
                    let (from, to) = (input(0).map(|x| x.dtype), out.map(|o| o.dtype));
                    a.view = match (from, to) {
                        (Some(DType::I32), Some(DType::U32))
                        | (Some(DType::U32), Some(DType::I32)) => true,
                        (Some(x), Some(y)) => {
                            x == y
                                && matches!(
                                    x,
                                    DType::I8 | DType::I16 | DType::I32 | DType::U32 | DType::F32
                                )
                        }
                        _ => false,
                    };
                }
                OpKind::Add(_) | OpKind::Mul { .. } => {
                    let types: &[DType] = if matches!(op.kind, OpKind::Add(_)) {
                        &[DType::I8, DType::I16, DType::I32, DType::F32]
                    } else {
                        &[DType::I8, DType::F32]
                    };
                    let same =
                        matches!((input(0), input(1)), (Some(x), Some(y)) if x.shape == y.shape);
                    if op.inputs.len() == 2 && same && dtype_in(types) {
                        a.in_place = vec![0, 1];
                    }
                }
                // A tiling's sinks add a strip's sums to the accumulator (input 1; absent
                // for the first strip) in place.
                OpKind::KilnRowSum
                | OpKind::KilnDotSum { .. }
                | OpKind::KilnDepthwiseSum { .. }
                    if op.input(1).is_some() =>
                {
                    a.in_place = vec![1]
                }
                OpKind::Relu
                | OpKind::Relu6
                | OpKind::Logistic
                | OpKind::Tanh
                | OpKind::HardSwish
                    if dtype_in(&[DType::I8, DType::F32]) =>
                {
                    a.in_place = vec![0]
                }
                OpKind::LeakyRelu { .. } if dtype_in(&[DType::I8, DType::I16, DType::F32]) => {
                    a.in_place = vec![0]
                }
                OpKind::Quantize
                    if dtype_in(&[DType::I8, DType::I16])
                        && input(0).map(|t| t.dtype) == out.map(|o| o.dtype) =>
                {
                    a.in_place = vec![0]
                }
                // Narrowing requantizations write their output over their input's start.
                OpKind::Quantize
                    if matches!(
                        (input(0).map(|t| t.dtype), out.map(|o| o.dtype)),
                        (Some(DType::F32), Some(DType::I8 | DType::I16))
                            | (Some(DType::I16), Some(DType::I8))
                            | (Some(DType::I32), Some(DType::I8 | DType::I16))
                            | (Some(DType::U8), Some(DType::I8))
                            | (Some(DType::I8), Some(DType::U8))
                    ) =>
                {
                    a.narrowing_in_place = out.map(|o| crate::kernels::Narrowing {
                        units: o.elements(),
                        scratch_bytes: 0,
                    })
                }
                // The int8 sequence LSTM writes each row's hidden state over its input row
                // (through a scratch row) where the state is no wider than the input rows
                // and there are several.
                OpKind::UnidirectionalSequenceLstm(_)
                    if dtype_in(&[DType::I8]) && input(0).is_some_and(|x| x.dtype == DType::I8) =>
                {
                    if let (Some(o), Some(x)) = (out, input(0))
                        && let (Some(&state), Some(&width)) = (o.shape.last(), x.shape.last())
                        && state > 0
                        && state <= width
                        && o.elements() / state > 1
                    {
                        a.narrowing_in_place = Some(crate::kernels::Narrowing {
                            units: o.elements() / state,
                            scratch_bytes: state,
                        });
                    }
                }
                // SignalEnergy: each uint32 energy over its bin's two int16, where the output
                // has a word per input bin.
                OpKind::Custom { name, .. } if name == "SignalEnergy" => {
                    if let (Some(x), Some(o)) = (input(0), out)
                        && x.dtype == DType::I16
                        && o.dtype == DType::U32
                        && x.elements() == 2 * o.elements()
                        && o.elements() > 0
                    {
                        a.narrowing_in_place = Some(crate::kernels::Narrowing {
                            units: o.elements(),
                            scratch_bytes: 0,
                        });
                    }
                }
                OpKind::Concatenation(o) if o.activation == crate::ir::Activation::None => {
                    if let Some(y) = out {
                        let rank = y.shape.len() as i64;
                        let axis = if o.axis < 0 {
                            o.axis as i64 + rank
                        } else {
                            o.axis as i64
                        };
                        if (0..rank).contains(&axis)
                            && y.shape[..axis as usize].iter().product::<usize>() == 1
                        {
                            let mut at = 0;
                            let mut offsets = Vec::new();
                            for t in op.inputs.iter().flatten() {
                                offsets.push(at);
                                at += graph.tensor(*t).bytes();
                            }
                            a.concat_slices = Some(offsets);
                        }
                    }
                }
                OpKind::Other { name }
                    if matches!(
                        name.as_str(),
                        "ABS"
                            | "SQUARE"
                            | "SQRT"
                            | "RSQRT"
                            | "SIN"
                            | "COS"
                            | "LOG"
                            | "CEIL"
                            | "FLOOR"
                            | "ROUND"
                            | "EXP"
                            | "ELU"
                    ) && dtype_in(&[DType::F32, DType::I8, DType::I16]) =>
                {
                    // The unary elementwise kernels (`kiln_kernels::elementwise`).
                    a.in_place = vec![0]
                }
                OpKind::Other { name } if name == "SLICE" => {
                    // A box of the input that is contiguous there: a view at its offset.
                    let ints = |slot: usize| constant_ints(graph, op.input(slot));
                    if let (Some(x), Some(b), Some(sz)) = (input(0), ints(1), ints(2))
                        && b.len() == x.shape.len()
                        && sz.len() == x.shape.len()
                    {
                        let boxes: Option<Vec<(usize, usize)>> = (0..b.len())
                            .map(|i| {
                                let d = x.shape[i] as i64;
                                let e = if sz[i] < 0 { d - b[i] } else { sz[i] };
                                (b[i] >= 0 && e >= 0 && b[i] + e <= d)
                                    .then_some((b[i] as usize, e as usize))
                            })
                            .collect();
                        if let Some(boxes) = boxes {
                            let last_partial = (0..boxes.len())
                                .rev()
                                .find(|&i| boxes[i] != (0, x.shape[i]));
                            let contiguous = last_partial
                                .is_none_or(|k| boxes[..k].iter().all(|&(_, e)| e == 1));
                            if contiguous {
                                let mut at = 0;
                                let mut stride = x.dtype.size();
                                for i in (0..boxes.len()).rev() {
                                    at += boxes[i].0 * stride;
                                    stride *= x.shape[i];
                                }
                                a.split_slices = Some((0, vec![at]));
                            }
                        }
                    }
                }
                OpKind::Split { .. } | OpKind::SplitV { .. } | OpKind::Unpack { .. } => {
                    // Cut on an outer axis: the outputs are consecutive slices of the data.
                    let (slot, axis) = match op.kind {
                        OpKind::Split { .. } => (1, constant_i32(graph, op.input(0))),
                        OpKind::SplitV { .. } => (0, constant_i32(graph, op.input(2))),
                        OpKind::Unpack { axis, .. } => (0, Some(axis)),
                        _ => unreachable!("matched above"),
                    };
                    if let (Some(x), Some(axis)) = (input(slot), axis)
                        && outer_axis(&x.shape, axis)
                    {
                        a.split_slices = Some((slot, consecutive(graph, &op.outputs)));
                    }
                }
                &OpKind::Pack { axis, .. } => {
                    // Stacked on an outer axis: the inputs are consecutive slices.
                    if let Some(y) = out
                        && outer_axis(&y.shape, axis)
                    {
                        let inputs: Vec<_> = op.inputs.iter().flatten().copied().collect();
                        a.concat_slices = Some(consecutive(graph, &inputs));
                    }
                }
                OpKind::DepthwiseConv2d(o) => {
                    if let (Some(x), Some(c)) = (input(0), out)
                        && x.shape.len() == 4
                        && c.shape.len() == 4
                        && o.depth_multiplier == 1
                        && x.shape[0] == c.shape[0]
                        && x.shape[3] == c.shape[3]
                        && x.dtype == c.dtype
                        && matches!(x.dtype, DType::I8 | DType::I16 | DType::F32)
                        && c.elements() <= x.elements()
                    {
                        let channels = c.shape[3].max(1);
                        a.conv_in_place = Some(ConvInPlace {
                            kind: ConvInPlaceKind::ChannelPlanes,
                            scratch_bytes: c.elements() / channels * c.dtype.size(),
                        });
                    }
                }
                OpKind::Conv2d(o) => {
                    if let (Some(x), Some(f), Some(c)) = (input(0), input(1), out)
                        && x.shape.len() == 4
                        && c.shape.len() == 4
                        && f.shape.len() == 4
                        && x.dtype == c.dtype
                        && matches!(x.dtype, DType::I8 | DType::F32)
                    {
                        let pointwise = o.stride_h == 1
                            && o.stride_w == 1
                            && f.shape[1] == 1
                            && f.shape[2] == 1
                            && f.shape[3] == x.shape[3]
                            && x.shape[..3] == c.shape[..3];
                        a.conv_in_place = if pointwise {
                            Some(ConvInPlace {
                                kind: ConvInPlaceKind::Pixels,
                                scratch_bytes: c.shape[3] * c.dtype.size(),
                            })
                        } else {
                            // A row at a time: a ring of `padding + 1` output rows.
                            rows_padding(graph, op, o, x, f, c).map(|padding| ConvInPlace {
                                kind: ConvInPlaceKind::Rows,
                                scratch_bytes: (padding + 1)
                                    * c.shape[2]
                                    * c.shape[3]
                                    * c.dtype.size(),
                            })
                        };
                    }
                }
                _ => {}
            }
            Some((scratch, a))
        })
        .collect();
    Declared { ops }
}

/// The padding rows above a CONV_2D's input (as `kiln-build` gives its kernel, within the
/// strip of rows it runs on where the graph was tiled), if its kernels run in place a row
/// at a time (`kiln_kernels::conv_2d::rows_in_place_supported`): output rows no longer than
/// input rows, an output no larger than the input, each output row's window starting above
/// the input's end.
fn rows_padding(
    graph: &Graph,
    op: &crate::ir::Op,
    o: &crate::ir::Conv2dOptions,
    x: &crate::ir::Tensor,
    f: &crate::ir::Tensor,
    c: &crate::ir::Tensor,
) -> Option<usize> {
    let [s, d] = [o.stride_h, o.dilation_h].map(|v| usize::try_from(v).unwrap_or(0));
    let extent = f.shape[1].checked_sub(1)?.checked_mul(d)?.checked_add(1)?;
    let (h_in, h_out) = (x.shape[1], c.shape[1]);
    // TFLM's `ComputePaddingHeightWidth` over the whole image: half the excess for SAME.
    let (whole_in, whole_out, strip) = match graph.row_window(op.id) {
        Some(w) => (w.input_height, w.output_height, Some(w)),
        None => (h_in, h_out, None),
    };
    let whole = match o.padding {
        crate::ir::Padding::Same => {
            (whole_out
                .checked_sub(1)?
                .checked_mul(s)?
                .checked_add(extent)?)
            .saturating_sub(whole_in)
                / 2
        }
        _ => 0,
    };
    let padding = match strip {
        Some(w) => (whole + w.input_row).checked_sub(w.output_row.checked_mul(s)?)?,
        None => whole,
    };
    let (in_row, out_row) = (x.shape[2] * x.shape[3], c.shape[2] * c.shape[3]);
    let fits = out_row > 0
        && out_row <= in_row
        && h_in > 0
        && h_out > 0
        && c.elements() <= x.elements()
        && x.shape[0] == c.shape[0]
        && (h_out - 1).saturating_mul(s) < h_in.saturating_add(padding);
    fits.then_some(padding)
}

/// The single value of a constant int32 tensor (an axis), if it is one.
fn constant_i32(graph: &Graph, t: Option<crate::ir::TensorId>) -> Option<i32> {
    let id = t?;
    match (graph.tensor(id).dtype, constant_ints(graph, t)?.as_slice()) {
        (DType::I32, &[v]) => i32::try_from(v).ok(),
        _ => None,
    }
}

/// A constant INT32 or INT64 vector's values (SLICE's begin and size).
fn constant_ints(graph: &Graph, t: Option<crate::ir::TensorId>) -> Option<Vec<i64>> {
    let t = graph.tensor(t?);
    let data = t.data()?;
    match t.dtype {
        DType::I32 => Some(
            data.chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64)
                .collect(),
        ),
        DType::I64 => Some(
            data.chunks_exact(8)
                .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                .collect(),
        ),
        _ => None,
    }
}

/// Whether `axis` (negative: from the end) is an axis of `shape` with only ones before it,
/// so that cutting or stacking there keeps each part contiguous.
fn outer_axis(shape: &[usize], axis: i32) -> bool {
    let rank = shape.len() as i64;
    let axis = if axis < 0 {
        i64::from(axis) + rank
    } else {
        i64::from(axis)
    };
    (0..rank).contains(&axis) && shape[..axis as usize].iter().product::<usize>() == 1
}

/// The byte offsets of `tensors` placed one after another.
fn consecutive(graph: &Graph, tensors: &[crate::ir::TensorId]) -> Vec<usize> {
    let mut at = 0;
    tensors
        .iter()
        .map(|&t| {
            let off = at;
            at += graph.tensor(t).bytes();
            off
        })
        .collect()
}
