//! ARG_MAX and ARG_MIN: float32 or int8 input, int32 output (`kiln_kernels::arg_min_max`).
//!
//! The axis is the second input (INT32, one element). When it is not a constant, the static
//! shapes must determine it: every axis whose removal from the input shape gives the output
//! shape must split the input the same way (else the operator is refused).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, types, unsupported};
use kiln_kernels::arg_min_max::{self as k, Params};
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, TensorId};
use proc_macro2::TokenStream;

/// The kernels: ARG_MAX or ARG_MIN, float32 or int8 input.
#[derive(Debug)]
struct Arg {
    max: bool,
    float: bool,
    p: Params,
}

pub(super) fn lower_max(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, true)
}

pub(super) fn lower_min(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, false)
}

/// The axis: the constant's value, or the one the static shapes allow.
fn axis_params(cx: &Cx<'_>, input: TensorId, axis: TensorId, output: TensorId) -> Result<Params> {
    let shape = &cx.tensor(input).shape;
    let at = |t: TensorId| {
        let tensor = cx.tensor(t);
        move |d: kiln_planner::diag::Diagnostic| d.at_tensor(t.0, tensor.name.clone())
    };
    if cx.dtype(axis) != DType::I32 || cx.tensor(axis).elements() != 1 {
        return Err(at(axis)(
            unsupported("the axis must be one INT32 value (TFLM's ARG_MAX/ARG_MIN)")
                .expected_found(
                    "INT32, 1 element",
                    format!("{}, shape {:?}", cx.dtype(axis), cx.tensor(axis).shape),
                ),
        ));
    }
    if cx.tensor(axis).data().is_some() {
        let a = cx.const_i32(axis)?[0];
        let p = k::prepare(shape, a).ok_or_else(|| {
            at(axis)(
                unsupported("the axis is out of the input's range")
                    .expected_found(format!("-{0}..{0}", shape.len()), a.to_string()),
            )
        })?;
        cx.check_elements(output, p.output_size())?;
        return Ok(p);
    }
    let out = &cx.tensor(output).shape;
    let candidates: Vec<Params> = (0..shape.len())
        .filter(|&a| {
            let mut s = shape.clone();
            s.remove(a);
            &s == out
        })
        .filter_map(|a| k::prepare(shape, a as i32))
        .collect();
    match candidates.as_slice() {
        [first, rest @ ..] if rest.iter().all(|p| p == first) => Ok(*first),
        _ => Err(at(axis)(
            unsupported("the axis is not a constant and the static shapes do not determine it")
                .expected_found(
                    "a constant axis, or shapes allowing one axis",
                    format!("input {shape:?}, output {out:?}"),
                ),
        )),
    }
}

fn lower(cx: &Cx<'_>, max: bool) -> Result<Step> {
    let (input, axis, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let float = match (cx.dtype(input), cx.dtype(output)) {
        (DType::F32, DType::I32) => true,
        (DType::I8, DType::I32) => false,
        (a, b) => {
            return Err(unsupported("unsupported types for ARG_MAX/ARG_MIN")
                .expected_found("FLOAT32 or INT8 -> INT32", types(a, b)));
        }
    };
    let p = axis_params(cx, input, axis, output)?;
    Ok(cx.step(Arg { max, float, p }, vec![Operand::Tensor(input)], output))
}

impl Kernel for Arg {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let function = match (self.max, self.float) {
            (true, true) => "arg_max_f32",
            (true, false) => "arg_max_s8",
            (false, true) => "arg_min_f32",
            (false, false) => "arg_min_s8",
        };
        let pre = [call.params("arg_min_max", &self.p)];
        call.standard("arg_min_max", function, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.p;
        match (self.max, self.float) {
            (true, true) => k::arg_max_f32(p, io.f32(0), io.out_i32()),
            (true, false) => k::arg_max_s8(p, io.i8(0), io.out_i32()),
            (false, true) => k::arg_min_f32(p, io.f32(0), io.out_i32()),
            (false, false) => k::arg_min_s8(p, io.i8(0), io.out_i32()),
        }
    }
}
