//! L2_NORMALIZATION: float32 and int8 over the last dimension
//! (`kiln_kernels::l2_normalization`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, types, unsupported};
use kiln_kernels::l2_normalization as l2;
use kiln_planner::diag::Result;
use kiln_planner::ir::{Activation, DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels, by type.
#[derive(Debug)]
enum L2Normalization {
    S8(l2::Params),
    F32(l2::Params),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    if cx.op.inputs.len() != 1 {
        return Err(unsupported("L2_NORMALIZATION takes one input")
            .expected_found("1 input", format!("{} inputs", cx.op.inputs.len())));
    }
    if let OpKind::L2Normalization { activation } = &cx.op.kind
        && *activation != Activation::None
    {
        return Err(
            unsupported("TFLM's L2_NORMALIZATION supports no fused activation")
                .expected_found("NONE", format!("{activation:?}")),
        );
    }
    let shape = &cx.tensor(input).shape;
    if cx.tensor(output).shape != *shape {
        return Err(unsupported("the output shape must equal the input shape")
            .at_tensor(output.0, cx.tensor(output).name.clone())
            .expected_found(
                format!("{shape:?}"),
                format!("{:?}", cx.tensor(output).shape),
            ));
    }
    let params = |zero_point| {
        l2::prepare(shape, zero_point).ok_or_else(|| {
            unsupported("L2_NORMALIZATION needs an input of rank 1 to 4")
                .at_tensor(input.0, cx.tensor(input).name.clone())
                .expected_found("rank 1 to 4", format!("shape {shape:?}"))
        })
    };
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::I8) => L2Normalization::S8(params(cx.quant(input)?.zero_point)?),
        (DType::F32, DType::F32) => L2Normalization::F32(params(0)?),
        (a, b) => {
            return Err(unsupported("unsupported types for L2_NORMALIZATION")
                .expected_found("INT8 -> INT8 or FLOAT32 -> FLOAT32", types(a, b)));
        }
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(input)], output))
}

impl Kernel for L2Normalization {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (p, f) = match self {
            L2Normalization::S8(p) => (p, "l2_normalization_s8"),
            L2Normalization::F32(p) => (p, "l2_normalization_f32"),
        };
        let pre = [call.params("l2_normalization", p)];
        call.standard("l2_normalization", f, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            L2Normalization::S8(p) => l2::l2_normalization_s8(p, io.i8(0), io.out_i8()),
            L2Normalization::F32(p) => l2::l2_normalization_f32(p, io.f32(0), io.out_f32()),
        }
    }
}
