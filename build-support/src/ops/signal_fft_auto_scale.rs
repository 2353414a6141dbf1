//! SignalFftAutoScale (TFLM's Signal library; a custom operator without options): a rank-1
//! int16 frame shifted left by the free bits of its largest magnitude, and that shift as a
//! rank-0 int32 second output (`kiln_kernels::signal_fft_auto_scale`). TFLM's `Prepare`
//! checks exactly these ranks and types; its kernel scales `output.dims[0]` samples, so the
//! input must have as many.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;
use quote::quote;

/// The int16 kernel.
#[derive(Debug)]
struct AutoScale;

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    if cx.op.inputs.len() != 1 || cx.op.outputs.len() != 2 {
        return Err(unsupported(
            "SignalFftAutoScale has one input and two outputs (output, scale bits)",
        )
        .expected_found(
            "1 input, 2 outputs",
            format!(
                "{} inputs, {} outputs",
                cx.op.inputs.len(),
                cx.op.outputs.len()
            ),
        ));
    }
    let (input, output, scale) = (cx.input(0)?, cx.op.outputs[0], cx.op.outputs[1]);
    for (t, dtype, rank) in [
        (input, DType::I16, 1),
        (output, DType::I16, 1),
        (scale, DType::I32, 0),
    ] {
        let tensor = cx.tensor(t);
        if tensor.dtype != dtype {
            return Err(unsupported(
                "SignalFftAutoScale runs on an INT16 frame, with an INT32 scale",
            )
            .at_tensor(t.0, tensor.name.clone())
            .expected_found(dtype.name(), tensor.dtype.name()));
        }
        if tensor.shape.len() != rank {
            return Err(unsupported(
                "SignalFftAutoScale needs a rank-1 input and output and a rank-0 scale",
            )
            .at_tensor(t.0, tensor.name.clone())
            .expected_found(format!("rank {rank}"), format!("shape {:?}", tensor.shape)));
        }
    }
    cx.check_same_elements(output, input)?;
    let mut step = cx.step(AutoScale, vec![Operand::Tensor(input)], output);
    step.outputs = vec![output, scale];
    Ok(step)
}

impl Kernel for AutoScale {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let x = call.input(0);
        let [out, scale] = call.outputs() else {
            return Err(Diagnostic::new(
                ErrorKind::InvalidPlan,
                "SignalFftAutoScale is lowered with two outputs",
            ));
        };
        Ok(quote!(
            ::kiln::kernels::signal_fft_auto_scale::signal_fft_auto_scale(#x, #out, #scale);
        ))
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let x = io.i16(0);
        io.with_outs(|outs| {
            let (out, scale) = outs.split_at_mut(1);
            kiln_kernels::signal_fft_auto_scale::signal_fft_auto_scale(
                x,
                crate::op::o16(out[0]),
                crate::op::o32(scale[0]),
            )
        })
    }
}
