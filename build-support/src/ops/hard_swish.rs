//! HARD_SWISH: int8 and float32, also in place over its input (`kiln_kernels::hard_swish`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::hard_swish as hs;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The kernels, by type.
#[derive(Debug)]
enum HardSwish {
    S8(hs::Params),
    F32,
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_same_elements(input, output)?;
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::I8) => HardSwish::S8(
            hs::prepare_s8(cx.quant(input)?, cx.quant(output)?).map_err(prepare_error)?,
        ),
        (DType::F32, DType::F32) => HardSwish::F32,
        (a, b) => {
            return Err(unsupported("unsupported types for HARD_SWISH")
                .expected_found("INT8 or FLOAT32", types(a, b)));
        }
    };
    let mut step = cx.step(kernel, vec![Operand::Tensor(input)], output);
    // Every kernel here has an in-place form over its input.
    step.abilities.in_place = vec![0];
    Ok(step)
}

impl Kernel for HardSwish {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        match self {
            HardSwish::S8(p) => {
                let pre = [call.params("hard_swish", p)];
                call.elementwise("hard_swish", "hard_swish_s8", &pre)
            }
            HardSwish::F32 => call.elementwise("hard_swish", "hard_swish_f32", &[]),
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            HardSwish::S8(p) => hs::hard_swish_s8(p, io.i8(0), io.out_i8()),
            HardSwish::F32 => hs::hard_swish_f32(io.f32(0), io.out_f32()),
        }
    }
}
