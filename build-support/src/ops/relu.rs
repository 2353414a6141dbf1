//! RELU and RELU6: int8 and float32, also in place over their input (`kiln_kernels::relu`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::relu;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The kernels, by type (`six`: RELU6).
#[derive(Debug)]
enum Relu {
    S8 { six: bool, p: relu::Params },
    F32 { six: bool },
}

pub(super) fn lower_relu(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, false)
}

pub(super) fn lower_relu6(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, true)
}

fn lower(cx: &Cx<'_>, six: bool) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_same_elements(input, output)?;
    let kernel = match (cx.dtype(input), cx.dtype(output), six) {
        (DType::I8, DType::I8, false) => Relu::S8 {
            six,
            p: relu::prepare_relu_s8(cx.quant(input)?, cx.quant(output)?).map_err(prepare_error)?,
        },
        (DType::I8, DType::I8, true) => Relu::S8 {
            six,
            p: relu::prepare_relu6_s8(cx.quant(input)?).map_err(prepare_error)?,
        },
        (DType::F32, DType::F32, _) => Relu::F32 { six },
        (a, b, _) => {
            return Err(unsupported("unsupported types for RELU")
                .expected_found("INT8 -> INT8 or FLOAT32", types(a, b)));
        }
    };
    let mut step = cx.step(kernel, vec![Operand::Tensor(input)], output);
    // Every kernel here has an in-place form over its input.
    step.abilities.in_place = vec![0];
    Ok(step)
}

impl Kernel for Relu {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        match self {
            Relu::S8 { six, p } => {
                let pre = [call.params("relu", p)];
                call.elementwise("relu", if *six { "relu6_s8" } else { "relu_s8" }, &pre)
            }
            Relu::F32 { six } => {
                call.elementwise("relu", if *six { "relu6_f32" } else { "relu_f32" }, &[])
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Relu::S8 { six: false, p } => relu::relu_s8(p, io.i8(0), io.out_i8()),
            Relu::S8 { six: true, p } => relu::relu6_s8(p, io.i8(0), io.out_i8()),
            Relu::F32 { six: false } => relu::relu_f32(io.f32(0), io.out_f32()),
            Relu::F32 { six: true } => relu::relu6_f32(io.f32(0), io.out_f32()),
        }
    }
}
