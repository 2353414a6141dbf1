//! SignalFramer (TFLM's Signal library; a custom operator): int16 rows of `n * frame_step`
//! new samples in, `n` frames of `frame_size` samples per row and a bool "every frame
//! produced" out (`kiln_kernels::signal_framer`). TFLM's per-row circular buffers are the
//! kernel's state, which the reader gives to the operator as a variable tensor (int16
//! histories and a count, planned in the persistent region and zeroed by `reset()`, which is
//! TFLM's `Reset`), so they carry over between invocations.
//!
//! TFLM reads the options `frame_size`, `frame_step`, `prefill` by position in the
//! flexbuffer's sorted keys, so exactly those keys are accepted. Refused where TFLM is
//! undefined or crashes: `frame_step < 1`, `frame_size < 1`, `prefill` with `frame_size <
//! frame_step`, an innermost input dimension that is no positive multiple of `frame_step`,
//! and outputs of other than `[.., n, frame_size]` (TFLM writes that many values whatever the
//! output's size). Frames TFLM leaves unwritten (before the stream holds enough samples;
//! their bytes are whatever its arena held) are zeros here.

use super::signal_energy::{check_tensor, options};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::signal_framer;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{DType, TensorId};
use proc_macro2::TokenStream;
use quote::quote;

/// The int16 kernel.
#[derive(Debug)]
struct Framer(signal_framer::Params);

const NAME: &str = "SignalFramer";

/// The kernel state the reader added as the operator's last input (`inputs` model inputs
/// before it), checked against the kernel's size for the prepared parameters.
pub(super) fn kernel_state(
    cx: &Cx<'_>,
    inputs: usize,
    dtype: DType,
    len: usize,
) -> Result<TensorId> {
    let name = cx.op.kind.name();
    let state = (cx.op.inputs.len() == inputs + 1)
        .then(|| cx.op.inputs[inputs])
        .flatten()
        .filter(|&t| cx.graph.is_kernel_state(t));
    let Some(state) = state else {
        return Err(
            unsupported(format!("{name} has {inputs} input(s)")).expected_found(
                format!("{inputs} input(s)"),
                format!("{} inputs", cx.op.inputs.len()),
            ),
        );
    };
    let t = cx.tensor(state);
    if t.dtype != dtype || t.elements() != len {
        return Err(Diagnostic::new(
            ErrorKind::InvalidPlan,
            format!(
                "{name}'s kernel state is {} {:?}, its kernel needs {dtype} [{len}]",
                t.dtype, t.shape
            ),
        ));
    }
    cx.variable(inputs)
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let [frame_size, frame_step, prefill] =
        options(cx, ["frame_size", "frame_step", "prefill"], &["prefill"])?;
    if cx.op.outputs.len() != 2 {
        return Err(
            unsupported(format!("{NAME} has two outputs (frames, output_valid)"))
                .expected_found("2 outputs", format!("{} outputs", cx.op.outputs.len())),
        );
    }
    let input = cx.input(0)?;
    let (output, valid) = (cx.op.outputs[0], cx.op.outputs[1]);
    check_tensor(cx, input, "input", DType::I16, None)?;
    check_tensor(cx, output, "output", DType::I16, None)?;
    check_tensor(cx, valid, "output_valid", DType::Bool, Some(0))?;
    let shape = &cx.tensor(input).shape;
    let Some(&innermost) = shape.last() else {
        return Err(unsupported(format!("{NAME}'s input must be of rank >= 1"))
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found("rank >= 1", "a scalar"));
    };
    let rows = cx
        .tensor(input)
        .elements()
        .checked_div(innermost)
        .unwrap_or(0);
    let p = signal_framer::prepare(frame_size, frame_step, prefill != 0, innermost, rows)
        .ok_or_else(|| {
            unsupported(format!(
                "{NAME} needs frame_size >= 1, frame_step >= 1, frame_size >= frame_step with prefill, \
                 and an innermost input dimension that is a positive multiple of frame_step"
            ))
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found(
                "frame_size >= 1, frame_step >= 1 dividing the innermost dimension",
                format!(
                    "frame_size {frame_size}, frame_step {frame_step}, prefill {}, input {shape:?}",
                    prefill != 0
                ),
            )
        })?;
    let mut want = shape[..shape.len() - 1].to_vec();
    want.extend([p.n_frames, p.frame_size]);
    cx.check_shape(output, &want)?;
    let state = kernel_state(cx, 1, DType::I16, signal_framer::state_len(&p))?;
    let mut step = cx.step(Framer(p), vec![Operand::Tensor(input)], output);
    step.outputs = vec![output, valid];
    step.states = vec![state];
    Ok(step)
}

/// `module::function(params, input, state, out, valid)` for a kernel with one input, one
/// state and two outputs.
pub(super) fn emit_stateful2(
    call: &mut Call<'_, '_>,
    module: &str,
    function: &str,
    p: &impl std::fmt::Debug,
) -> Result<TokenStream> {
    if call.in_place().is_some() {
        return Err(call.no_in_place_form());
    }
    let params = call.params(module, p);
    let x = call.input(0);
    let (Some(state), [out, valid]) = (call.states().first(), call.outputs()) else {
        return Err(Diagnostic::new(
            ErrorKind::InvalidPlan,
            format!("{module} is lowered with a state and two outputs"),
        ));
    };
    let (m, f) = (
        proc_macro2::Ident::new(module, proc_macro2::Span::call_site()),
        proc_macro2::Ident::new(function, proc_macro2::Span::call_site()),
    );
    Ok(quote!(::kiln::kernels::#m::#f(#params, #x, #state, #out, #valid);))
}

impl Kernel for Framer {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        emit_stateful2(call, "signal_framer", "signal_framer", &self.0)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let x = io.i16(0);
        let (states, out, more) = io.states_and_outs();
        signal_framer::signal_framer(
            &self.0,
            x,
            bytemuck::cast_slice_mut(states[0].bytes_mut()),
            bytemuck::cast_slice_mut(out),
            more[0].bytes_mut(),
        );
    }
}
