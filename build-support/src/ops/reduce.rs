//! SUM (int8, int16, float32), REDUCE_MAX and REDUCE_MIN (int8, float32) and REDUCE_ALL
//! (bool) over constant axes
//! (`kiln_kernels::reduce`, on MEAN's layout).
//!
//! A runtime (non-constant) axis tensor is accepted when the static shapes determine the
//! result: every set of at most as many axes as the axis tensor holds whose reduction (with
//! the operator's `keep_dims`) gives the output shape must reduce the same dims of extent
//! above 1 (reducing a dim of extent 1 changes nothing); that set is then used.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::{mean, reduce};
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind, TensorId};
use proc_macro2::TokenStream;

/// What the operator computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Sum,
    Max,
    Min,
    All,
}

/// The kernels, by operator and type.
#[derive(Debug)]
struct Reduce {
    which: Which,
    dtype: DType,
    p: mean::Params,
}

pub(super) fn lower_sum(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Which::Sum)
}

pub(super) fn lower_max(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Which::Max)
}

pub(super) fn lower_min(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Which::Min)
}

pub(super) fn lower_all(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Which::All)
}

fn lower(cx: &Cx<'_>, which: Which) -> Result<Step> {
    if cx.op.inputs.len() != 2 {
        return Err(
            unsupported("the operator must have two inputs (input, axis)")
                .expected_found("2 inputs", format!("{} inputs", cx.op.inputs.len())),
        );
    }
    let (input, axis, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let shape = &cx.tensor(input).shape;
    let axes = if cx.tensor(axis).data().is_some() {
        cx.const_i32(axis)?
    } else {
        let (OpKind::Sum { keep_dims }
        | OpKind::ReduceMax { keep_dims }
        | OpKind::ReduceMin { keep_dims }
        | OpKind::ReduceAll { keep_dims }) = cx.op.kind
        else {
            unreachable!("registered for SUM, REDUCE_MAX, REDUCE_MIN and REDUCE_ALL")
        };
        runtime_axes(cx, input, axis, output, keep_dims)?
    };
    let (din, dout) = (cx.dtype(input), cx.dtype(output));
    let p = match (which, din, dout) {
        (Which::All, DType::Bool, DType::Bool) => {
            reduce::prepare(shape, &axes).map_err(prepare_error)?
        }
        (Which::All, a, b) => {
            return Err(
                unsupported("unsupported types for REDUCE_ALL").expected_found("BOOL", types(a, b))
            );
        }
        (_, DType::F32, DType::F32) => reduce::prepare(shape, &axes).map_err(prepare_error)?,
        (Which::Sum, DType::I8, DType::I8) | (Which::Sum, DType::I16, DType::I16) => {
            reduce::prepare_sum_quantized(shape, &axes, cx.quant(input)?, cx.quant(output)?)
                .map_err(prepare_error)?
        }
        (Which::Max | Which::Min, DType::I8, DType::I8) => {
            let (qi, qo) = (cx.quant(input)?, cx.quant(output)?);
            if qi != qo {
                let t = cx.tensor(output);
                return Err(unsupported(
                    "TFLM's int8 REDUCE_MAX/REDUCE_MIN need equal input and output quantization",
                )
                .at_tensor(output.0, t.name.clone())
                .expected_found(
                    format!("scale {} zero point {}", qi.scale, qi.zero_point),
                    format!("scale {} zero point {}", qo.scale, qo.zero_point),
                ));
            }
            reduce::prepare(shape, &axes).map_err(prepare_error)?
        }
        (Which::Sum, a, b) => {
            return Err(unsupported("unsupported types for SUM")
                .expected_found("INT8, INT16 or FLOAT32", types(a, b)));
        }
        (_, a, b) => {
            return Err(unsupported("unsupported types for REDUCE_MAX/REDUCE_MIN")
                .expected_found("INT8 or FLOAT32", types(a, b)));
        }
    };
    cx.check_elements(output, p.output_size())?;
    let kernel = Reduce {
        which,
        dtype: din,
        p,
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(input)], output))
}

/// The axes a runtime axis tensor must hold, from the static shapes (see the module docs;
/// MEAN uses it too).
pub(super) fn runtime_axes(
    cx: &Cx<'_>,
    input: TensorId,
    axis: TensorId,
    output: TensorId,
    keep_dims: bool,
) -> Result<Vec<i32>> {
    let t = cx.tensor(axis);
    if t.dtype != DType::I32 {
        return Err(unsupported("the axis must be INT32")
            .at_tensor(axis.0, t.name.clone())
            .expected_found("INT32", t.dtype.name()));
    }
    let (shape, out) = (&cx.tensor(input).shape, &cx.tensor(output).shape);
    let rank = shape.len();
    if rank > mean::MAX_DIMS {
        return Err(prepare_error(
            kiln_kernels::quant::PrepareError::InvalidShape,
        ));
    }
    let n = t.elements();
    let nontrivial: u32 = (0..rank).filter(|&i| shape[i] > 1).map(|i| 1 << i).sum();
    let mut found: Option<u32> = None;
    let mut ambiguous = false;
    for mask in 0u32..(1 << rank) {
        if mask.count_ones() as usize > n {
            continue;
        }
        let reduced = |i: usize| mask & (1 << i) != 0;
        let shape_out: Vec<usize> = (0..rank)
            .filter_map(|i| match (reduced(i), keep_dims) {
                (true, true) => Some(1),
                (true, false) => None,
                (false, _) => Some(shape[i]),
            })
            .collect();
        if &shape_out != out {
            continue;
        }
        match found {
            None => found = Some(mask & nontrivial),
            Some(f) if f != mask & nontrivial => ambiguous = true,
            Some(_) => {}
        }
    }
    match found {
        Some(mask) if !ambiguous => {
            Ok((0..rank as i32).filter(|&i| mask & (1 << i) != 0).collect())
        }
        _ => Err(unsupported(
            "the axis is not a constant and the static shapes do not determine the reduced dims",
        )
        .at_tensor(axis.0, t.name.clone())
        .expected_found(
            "a constant axis, or shapes allowing one set of reduced dims",
            format!("input {shape:?}, output {out:?}, keep_dims {keep_dims}"),
        )),
    }
}

impl Reduce {
    fn function(&self) -> &'static str {
        match (self.which, self.dtype) {
            (Which::Sum, DType::I8) => "sum_s8",
            (Which::Sum, DType::I16) => "sum_s16",
            (Which::Sum, _) => "sum_f32",
            (Which::Max, DType::I8) => "reduce_max_s8",
            (Which::Max, _) => "reduce_max_f32",
            (Which::Min, DType::I8) => "reduce_min_s8",
            (Which::Min, _) => "reduce_min_f32",
            (Which::All, _) => "reduce_all_bool",
        }
    }
}

impl Kernel for Reduce {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("mean", &self.p)];
        call.standard("reduce", self.function(), &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.p;
        match (self.which, self.dtype) {
            (Which::Sum, DType::I8) => reduce::sum_s8(p, io.i8(0), io.out_i8()),
            (Which::Sum, DType::I16) => reduce::sum_s16(p, io.i16(0), io.out_i16()),
            (Which::Sum, _) => reduce::sum_f32(p, io.f32(0), io.out_f32()),
            (Which::Max, DType::I8) => reduce::reduce_max_s8(p, io.i8(0), io.out_i8()),
            (Which::Max, _) => reduce::reduce_max_f32(p, io.f32(0), io.out_f32()),
            (Which::Min, DType::I8) => reduce::reduce_min_s8(p, io.i8(0), io.out_i8()),
            (Which::Min, _) => reduce::reduce_min_f32(p, io.f32(0), io.out_f32()),
            (Which::All, _) => reduce::reduce_all_bool(p, io.u8(0), io.out_u8()),
        }
    }
}
