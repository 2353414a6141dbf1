//! SPLIT, SPLIT_V, UNPACK and PACK (`kiln_kernels::split`): one tensor cut along an axis into
//! several outputs, or several inputs stacked along a new axis. Byte copies, any element type
//! TFLM's kernels take (float32, int8, int16, int32, and int64 where TFLM has it); quantized
//! tensors are copied without requantization, as TFLM does.
//!
//! TFLM takes the axis (and SPLIT_V's sizes) from constant tensors; so does Kiln, and the
//! static output shapes must be what the options and constants say.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind, TensorId};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// Copies a tensor's `[outer, extent, inner]` runs into the outputs (SPLIT, SPLIT_V,
/// UNPACK) or the inputs' into the output (PACK): `outer` and the bytes per run of each part.
#[derive(Debug)]
struct Runs {
    outer: usize,
    chunks: Vec<usize>,
    pack: bool,
}

/// The element types TFLM's kernels of these operators accept.
fn check_type(cx: &Cx<'_>, t: TensorId, int64: bool) -> Result<DType> {
    let d = cx.dtype(t);
    match d {
        DType::F32 | DType::I8 | DType::I16 | DType::I32 => Ok(d),
        DType::I64 if int64 => Ok(d),
        other => Err(
            unsupported(format!("unsupported type for {}", cx.op.kind.name())).expected_found(
                if int64 {
                    "FLOAT32, INT8, INT16, INT32 or INT64"
                } else {
                    "FLOAT32, INT8, INT16, INT32"
                },
                other.name(),
            ),
        ),
    }
}

/// An axis in `-rank..rank`, normalised.
fn axis(cx: &Cx<'_>, axis: i32, rank: usize, what: TensorId) -> Result<usize> {
    let r = rank as i64;
    let a = i64::from(axis);
    if !(-r..r).contains(&a) {
        let t = cx.tensor(what);
        return Err(unsupported("the axis is out of range")
            .at_tensor(what.0, t.name.clone())
            .expected_found(format!("-{rank}..{rank}"), axis.to_string()));
    }
    Ok(if a < 0 { (a + r) as usize } else { a as usize })
}

/// The single value of a constant int32 scalar (or one-element) tensor.
fn scalar(cx: &Cx<'_>, t: TensorId) -> Result<i32> {
    match cx.const_i32(t)?.as_slice() {
        [v] => Ok(*v),
        other => Err(unsupported("the axis must be a single value")
            .at_tensor(t.0, cx.tensor(t).name.clone())
            .expected_found("1 element", format!("{} elements", other.len()))),
    }
}

fn same_type(cx: &Cx<'_>, t: TensorId, dtype: DType) -> Result<()> {
    if cx.dtype(t) == dtype {
        Ok(())
    } else {
        Err(unsupported("the operator keeps the type")
            .at_tensor(t.0, cx.tensor(t).name.clone())
            .expected_found(dtype.name(), cx.dtype(t).name()))
    }
}

/// `[outer, extents..]` of a cut of `shape` on `axis` into parts of `extents`, as bytes per run.
fn runs(shape: &[usize], axis: usize, extents: &[usize], esize: usize) -> (usize, Vec<usize>) {
    let outer = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    (outer, extents.iter().map(|e| e * inner * esize).collect())
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    match cx.op.kind {
        OpKind::Split { num_splits } => lower_split(cx, num_splits),
        OpKind::SplitV { num_splits } => lower_split_v(cx, num_splits),
        OpKind::Unpack { num, axis } => lower_unpack(cx, num, axis),
        OpKind::Pack { values_count, axis } => lower_pack(cx, values_count, axis),
        _ => Err(unsupported("not a SPLIT, SPLIT_V, UNPACK or PACK")),
    }
}

/// The outputs, which must be `n` (the options' count).
fn outputs(cx: &Cx<'_>, n: i32) -> Result<Vec<TensorId>> {
    let outs = cx.op.outputs.clone();
    if usize::try_from(n).ok() != Some(outs.len()) || outs.is_empty() {
        return Err(
            unsupported("the number of outputs differs from the operator's options")
                .expected_found(format!("{n} outputs"), format!("{}", outs.len())),
        );
    }
    Ok(outs)
}

/// A cut of `input` on `axis` into parts of `extents`, each output of the input's shape with
/// its extent there (`squeeze`: UNPACK, the axis removed).
fn cut(
    cx: &Cx<'_>,
    input: TensorId,
    axis: usize,
    extents: &[usize],
    outs: Vec<TensorId>,
    squeeze: bool,
) -> Result<Step> {
    let dtype = check_type(cx, input, false)?;
    let shape = cx.tensor(input).shape.clone();
    for (&o, &e) in outs.iter().zip(extents) {
        same_type(cx, o, dtype)?;
        let mut want = shape.clone();
        if squeeze {
            want.remove(axis);
        } else {
            want[axis] = e;
        }
        cx.check_shape(o, &want)?;
    }
    let (outer, chunks) = runs(&shape, axis, extents, dtype.size());
    // Cut on an outer axis (nothing but ones before it), each output is a contiguous slice
    // of the input: the planner may place them there and the copy is not needed.
    let slices = (outer == 1).then(|| offsets(&chunks));
    let slot = cx.op.inputs.iter().position(|&t| t == Some(input));
    let mut step = cx.step(
        Runs {
            outer,
            chunks,
            pack: false,
        },
        vec![Operand::Tensor(input)],
        outs[0],
    );
    step.outputs = outs;
    step.abilities.split_slices = slices.zip(slot).map(|(o, s)| (s, o));
    Ok(step)
}

/// The byte offset of each run when they follow one another.
fn offsets(chunks: &[usize]) -> Vec<usize> {
    chunks
        .iter()
        .scan(0, |at, &c| {
            let off = *at;
            *at += c;
            Some(off)
        })
        .collect()
}

fn lower_split(cx: &Cx<'_>, num_splits: i32) -> Result<Step> {
    let (axis_t, input) = (cx.input(0)?, cx.input(1)?);
    let outs = outputs(cx, num_splits)?;
    let shape = &cx.tensor(input).shape;
    let a = axis(cx, scalar(cx, axis_t)?, shape.len(), axis_t)?;
    let n = outs.len();
    if !shape[a].is_multiple_of(n) {
        return Err(unsupported("SPLIT needs the axis to divide evenly")
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found(
                format!("a multiple of {n} on axis {a}"),
                format!("shape {shape:?}"),
            ));
    }
    let extents = vec![shape[a] / n; n];
    cut(cx, input, a, &extents, outs, false)
}

fn lower_split_v(cx: &Cx<'_>, num_splits: i32) -> Result<Step> {
    let (input, sizes_t, axis_t) = (cx.input(0)?, cx.input(1)?, cx.input(2)?);
    let outs = outputs(cx, num_splits)?;
    let shape = &cx.tensor(input).shape;
    let a = axis(cx, scalar(cx, axis_t)?, shape.len(), axis_t)?;
    let sizes = cx.const_i32(sizes_t)?;
    let bad = |why: &str| {
        unsupported(format!("SPLIT_V's size_splits {why}"))
            .at_tensor(sizes_t.0, cx.tensor(sizes_t).name.clone())
            .expected_found(
                format!(
                    "{} sizes summing to {} (one may be -1)",
                    outs.len(),
                    shape[a]
                ),
                format!("{sizes:?}"),
            )
    };
    if sizes.len() != outs.len() {
        return Err(bad("has the wrong count"));
    }
    // One size may be -1: the rest of the axis (TFLM's split_v Prepare).
    let known: i64 = sizes
        .iter()
        .filter(|&&s| s != -1)
        .map(|&s| i64::from(s))
        .sum();
    let unknown = sizes.iter().filter(|&&s| s == -1).count();
    if sizes.iter().any(|&s| s < -1) || unknown > 1 {
        return Err(bad("are invalid"));
    }
    let rest = shape[a] as i64 - known;
    if (unknown == 0 && rest != 0) || rest < 0 {
        return Err(bad("do not add up"));
    }
    let extents: Vec<usize> = sizes
        .iter()
        .map(|&s| if s == -1 { rest as usize } else { s as usize })
        .collect();
    cut(cx, input, a, &extents, outs, false)
}

fn lower_unpack(cx: &Cx<'_>, num: i32, axis_opt: i32) -> Result<Step> {
    let input = cx.input(0)?;
    let outs = outputs(cx, num)?;
    let shape = &cx.tensor(input).shape;
    let a = axis(cx, axis_opt, shape.len(), input)?;
    if shape[a] != outs.len() {
        return Err(unsupported("UNPACK's count differs from the axis' extent")
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found(
                format!("{} on axis {a}", outs.len()),
                format!("shape {shape:?}"),
            ));
    }
    let extents = vec![1; outs.len()];
    cut(cx, input, a, &extents, outs, true)
}

fn lower_pack(cx: &Cx<'_>, values_count: i32, axis_opt: i32) -> Result<Step> {
    let output = cx.output()?;
    let inputs: Vec<TensorId> = (0..cx.op.inputs.len())
        .map(|i| cx.input(i))
        .collect::<Result<_>>()?;
    if usize::try_from(values_count).ok() != Some(inputs.len()) || inputs.is_empty() {
        return Err(
            unsupported("PACK's values_count differs from its number of inputs")
                .expected_found(format!("{values_count} inputs"), inputs.len().to_string()),
        );
    }
    let dtype = check_type(cx, output, true)?;
    let shape = cx.tensor(inputs[0]).shape.clone();
    let out_shape = cx.tensor(output).shape.clone();
    let a = axis(cx, axis_opt, shape.len() + 1, output)?;
    for &i in &inputs {
        same_type(cx, i, dtype)?;
        cx.check_shape(i, &shape)?;
    }
    let mut want = shape.clone();
    want.insert(a, inputs.len());
    cx.check_shape(output, &want)?;
    let (outer, chunks) = runs(&out_shape, a, &vec![1; inputs.len()], dtype.size());
    // Stacked on an outer axis (nothing but ones before it), each input is a contiguous
    // slice of the output: its producer can write there and the copy is not needed (the
    // planner decides, as for CONCATENATION).
    let offsets = (outer == 1).then(|| offsets(&chunks));
    let mut step = cx.step(
        Runs {
            outer,
            chunks,
            pack: true,
        },
        inputs.into_iter().map(Operand::Tensor).collect(),
        output,
    );
    step.abilities.concat_slices = offsets;
    Ok(step)
}

impl Kernel for Runs {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let outer = Literal::usize_unsuffixed(self.outer);
        let chunks = self.chunks.iter().map(|&c| Literal::usize_unsuffixed(c));
        if self.pack {
            let ins: Vec<TokenStream> = (0..self.chunks.len()).map(|i| call.raw_input(i)).collect();
            let out = call.raw_outputs()[0].clone();
            Ok(quote!(::kiln::kernels::split::pack(#outer, &[#(#chunks),*], &[#(#ins),*], #out);))
        } else {
            let x = call.raw_input(0);
            let outs = call.raw_outputs();
            Ok(
                quote!(::kiln::kernels::split::split(#outer, &[#(#chunks),*], #x, &mut [#(#outs),*]);),
            )
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use kiln_kernels::split;
        if self.pack {
            io.with_inputs(
                |b| b,
                |ins, out| split::pack(self.outer, &self.chunks, ins, out),
            );
        } else {
            let x = io.input(0);
            io.with_outs(|outs| split::split(self.outer, &self.chunks, x, outs));
        }
    }
}
