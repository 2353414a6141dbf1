//! TANH: int8 (`kiln_kernels::tanh`, with LOGISTIC's parameters) and float32
//! (`kiln_kernels::activations_f32`), both also in place over their input.

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::Io;
use crate::lower::{Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The kernels, by type.
#[derive(Debug)]
enum Tanh {
    S8(kiln_kernels::logistic::Params),
    F32,
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_same_elements(input, output)?;
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::I8) => {
            Tanh::S8(kiln_kernels::tanh::prepare_s8(cx.quant(input)?).map_err(prepare_error)?)
        }
        (DType::F32, DType::F32) => Tanh::F32,
        (a, b) => {
            return Err(unsupported("unsupported types for TANH")
                .expected_found("INT8 -> INT8", types(a, b)));
        }
    };
    let mut step = cx.step(kernel, vec![Operand::Tensor(input)], output);
    // Every kernel here has an in-place form over its input.
    step.abilities.in_place = vec![0];
    Ok(step)
}

impl Kernel for Tanh {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        match self {
            Tanh::S8(p) => {
                let pre = [call.params("logistic", p)];
                call.elementwise("tanh", "tanh_s8", &pre)
            }
            Tanh::F32 => call.elementwise("activations_f32", "tanh_f32", &[]),
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Tanh::S8(p) => kiln_kernels::tanh::tanh_s8(p, io.i8(0), io.out_i8()),
            Tanh::F32 => kiln_kernels::activations_f32::tanh_f32(io.f32(0), io.out_f32()),
        }
    }
}
