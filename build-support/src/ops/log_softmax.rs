//! LOG_SOFTMAX: float32 over the last dimension (`kiln_kernels::log_softmax`).

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::Io;
use crate::lower::{Cx, Kernel, Operand, Step, types, unsupported};
use kiln_kernels::log_softmax as ls;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The float32 kernel.
#[derive(Debug)]
struct LogSoftmaxF32(ls::Params);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    if cx.op.inputs.len() != 1 {
        return Err(unsupported("LOG_SOFTMAX takes one input")
            .expected_found("1 input", format!("{} inputs", cx.op.inputs.len())));
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
    match (cx.dtype(input), cx.dtype(output)) {
        (DType::F32, DType::F32) => {}
        (a, b) => {
            return Err(unsupported("unsupported types for LOG_SOFTMAX")
                .expected_found("FLOAT32 -> FLOAT32", types(a, b)));
        }
    }
    let p = ls::prepare(shape).ok_or_else(|| {
        unsupported("LOG_SOFTMAX needs an input of rank 1 or more")
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found("rank >= 1", format!("shape {shape:?}"))
    })?;
    Ok(cx.step(LogSoftmaxF32(p), vec![Operand::Tensor(input)], output))
}

impl Kernel for LogSoftmaxF32 {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("log_softmax", &self.0)];
        call.standard("log_softmax", "log_softmax_f32", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        ls::log_softmax_f32(&self.0, io.f32(0), io.out_f32())
    }
}
