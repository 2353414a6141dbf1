//! NEG: float32 (`kiln_kernels::neg`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, types, unsupported};
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The float32 kernel.
#[derive(Debug)]
struct NegF32;

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_same_elements(input, output)?;
    match (cx.dtype(input), cx.dtype(output)) {
        (DType::F32, DType::F32) => Ok(cx.step(NegF32, vec![Operand::Tensor(input)], output)),
        (a, b) => Err(unsupported("unsupported types for NEG")
            .expected_found("FLOAT32 -> FLOAT32", types(a, b))),
    }
}

impl Kernel for NegF32 {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        call.standard("neg", "neg_f32", &[])
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        kiln_kernels::neg::neg_f32(io.f32(0), io.out_f32())
    }
}
