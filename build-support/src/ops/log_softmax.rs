//! LOG_SOFTMAX: float32 and int8 over the last dimension (`kiln_kernels::log_softmax`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::log_softmax as ls;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The kernels, by type.
#[derive(Debug)]
enum LogSoftmax {
    F32(ls::Params),
    S8(ls::ParamsS8),
}

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
    let p = ls::prepare(shape).ok_or_else(|| {
        unsupported("LOG_SOFTMAX needs an input of rank 1 or more")
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found("rank >= 1", format!("shape {shape:?}"))
    })?;
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::F32, DType::F32) => LogSoftmax::F32(p),
        (DType::I8, DType::I8) => {
            let (qi, qo) = (cx.quant(input)?, cx.quant(output)?);
            if qo.scale != 16.0 / 256.0 || qo.zero_point != 127 {
                return Err(unsupported(
                    "TFLM's int8 LOG_SOFTMAX needs the output scale 16/256 and zero point 127",
                )
                .at_tensor(output.0, cx.tensor(output).name.clone())
                .expected_found(
                    "scale 0.0625, zero point 127",
                    format!("scale {}, zero point {}", qo.scale, qo.zero_point),
                ));
            }
            LogSoftmax::S8(ls::prepare_s8(shape, qi, qo).map_err(prepare_error)?)
        }
        (a, b) => {
            return Err(unsupported("unsupported types for LOG_SOFTMAX")
                .expected_found("FLOAT32 or INT8", types(a, b)));
        }
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(input)], output))
}

impl Kernel for LogSoftmax {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        match self {
            LogSoftmax::F32(p) => {
                let pre = [call.params("log_softmax", p)];
                call.standard("log_softmax", "log_softmax_f32", &pre)
            }
            LogSoftmax::S8(p) => {
                let pre =
                    [call.params_as(quote::quote!(::kiln::kernels::log_softmax::ParamsS8), p)];
                call.standard("log_softmax", "log_softmax_s8", &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            LogSoftmax::F32(p) => ls::log_softmax_f32(p, io.f32(0), io.out_f32()),
            LogSoftmax::S8(p) => ls::log_softmax_s8(p, io.i8(0), io.out_i8()),
        }
    }
}
