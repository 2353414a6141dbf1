//! SignalDelay (TFLM's Signal library; a custom operator): every innermost row of an int16
//! input delayed by `delay_length` samples across invocations (`kiln_kernels::signal_delay`).
//! TFLM's per-row circular buffers are the kernel's state, which the reader gives to the
//! operator as a variable tensor (the last `delay_length` samples of each row, planned in the
//! persistent region and zeroed by `reset()`, which is TFLM's `Reset`).
//!
//! The one option, `delay_length`, must be the only key (TFLM reads it by position). Refused
//! where TFLM is undefined: a negative `delay_length`, a scalar or empty input, and an output
//! of another shape (TFLM writes the input's size whatever the output's).

use super::signal_energy::{check_tensor, int_options};
use super::signal_framer::kernel_state;
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::signal_delay;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;
use quote::quote;

/// The int16 kernel.
#[derive(Debug)]
struct Delay(signal_delay::Params);

const NAME: &str = "SignalDelay";

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let [delay] = int_options(cx, ["delay_length"])?;
    let (input, output) = (cx.input(0)?, cx.output()?);
    check_tensor(cx, input, "input", DType::I16, None)?;
    check_tensor(cx, output, "output", DType::I16, None)?;
    let shape = cx.tensor(input).shape.clone();
    let frame = shape.last().copied().unwrap_or(0);
    let rows = cx.tensor(input).elements().checked_div(frame).unwrap_or(0);
    let p = signal_delay::prepare(delay, frame, rows).ok_or_else(|| {
        unsupported(format!(
            "{NAME} needs delay_length >= 0 and a non-empty input of rank >= 1"
        ))
        .at_tensor(input.0, cx.tensor(input).name.clone())
        .expected_found(
            "delay_length >= 0, input [.., n >= 1]",
            format!("delay_length {delay}, input {shape:?}"),
        )
    })?;
    cx.check_shape(output, &shape)?;
    let state = kernel_state(cx, 1, DType::I16, signal_delay::state_len(&p))?;
    let mut step = cx.step(Delay(p), vec![Operand::Tensor(input)], output);
    step.states = vec![state];
    Ok(step)
}

impl Kernel for Delay {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let p = call.params("signal_delay", &self.0);
        let x = call.input(0);
        let (Some(state), [out]) = (call.states().first(), call.outputs()) else {
            return Err(Diagnostic::new(
                ErrorKind::InvalidPlan,
                format!("{NAME} is lowered with a state and one output"),
            ));
        };
        Ok(quote!(::kiln::kernels::signal_delay::signal_delay(#p, #x, #state, #out);))
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let x = io.i16(0);
        let (states, out) = io.states_and_out();
        signal_delay::signal_delay(
            &self.0,
            x,
            bytemuck::cast_slice_mut(states[0].bytes_mut()),
            bytemuck::cast_slice_mut(out),
        );
    }
}
