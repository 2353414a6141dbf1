//! LEAKY_RELU: int8, int16 and float32, also in place over its input
//! (`kiln_kernels::leaky_relu`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::leaky_relu as lr;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels, by type.
#[derive(Debug)]
enum LeakyRelu {
    S8(lr::Params),
    S16(lr::Params),
    F32(lr::Params),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::LeakyRelu { alpha } = cx.op.kind else {
        unreachable!("registered for LEAKY_RELU")
    };
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_same_elements(input, output)?;
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::I8) => LeakyRelu::S8(
            lr::prepare_s8(cx.quant(input)?, cx.quant(output)?, alpha).map_err(prepare_error)?,
        ),
        (DType::I16, DType::I16) => LeakyRelu::S16(
            lr::prepare_s16(cx.quant(input)?, cx.quant(output)?, alpha).map_err(prepare_error)?,
        ),
        (DType::F32, DType::F32) => LeakyRelu::F32(lr::prepare_f32(alpha)),
        (a, b) => {
            return Err(unsupported("unsupported types for LEAKY_RELU")
                .expected_found("INT8, INT16 or FLOAT32", types(a, b)));
        }
    };
    let mut step = cx.step(kernel, vec![Operand::Tensor(input)], output);
    // Every kernel here has an in-place form over its input.
    step.abilities.in_place = vec![0];
    Ok(step)
}

impl Kernel for LeakyRelu {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (function, p) = match self {
            LeakyRelu::S8(p) => ("leaky_relu_s8", p),
            LeakyRelu::S16(p) => ("leaky_relu_s16", p),
            LeakyRelu::F32(p) => ("leaky_relu_f32", p),
        };
        let pre = [call.params("leaky_relu", p)];
        call.elementwise("leaky_relu", function, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            LeakyRelu::S8(p) => lr::leaky_relu_s8(p, io.i8(0), io.out_i8()),
            LeakyRelu::S16(p) => lr::leaky_relu_s16(p, io.i16(0), io.out_i16()),
            LeakyRelu::F32(p) => lr::leaky_relu_f32(p, io.f32(0), io.out_f32()),
        }
    }
}
