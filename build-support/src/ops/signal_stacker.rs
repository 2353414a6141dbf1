//! SignalStacker (TFLM's Signal library; a custom operator): a rank-1 int16 frame of
//! `num_channels` values in, the frames `stacker_left_context` before to
//! `stacker_right_context` after stacked into one rank-1 output every `stacker_step` frames,
//! and a bool "output produced" (`kiln_kernels::signal_stacker`). TFLM's circular buffer is
//! the kernel's state, which the reader gives to the operator as a variable tensor (an int16
//! history and a count, planned in the persistent region and zeroed by `reset()`, which is
//! TFLM's `Reset`).
//!
//! TFLM reads the four options by position in the flexbuffer's sorted keys, so exactly those
//! keys are accepted. Refused where TFLM is undefined: `num_channels < 1`, negative contexts,
//! `stacker_step` outside `1..=left + right + 1`, an input of other than `num_channels`
//! values or an output of other than `num_channels * (left + right + 1)` (TFLM reads and
//! writes that many whatever the tensors' sizes). When no stacked output is produced TFLM
//! leaves the output unwritten (whatever its arena held: garbage or the previous stack); it is
//! zeros here.

use super::signal_energy::{check_tensor, int_options};
use super::signal_framer::{emit_stateful2, kernel_state};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::signal_stacker;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The int16 kernel.
#[derive(Debug)]
struct Stacker(signal_stacker::Params);

const NAME: &str = "SignalStacker";

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let [nc, left, right, step_frames] = int_options(
        cx,
        [
            "num_channels",
            "stacker_left_context",
            "stacker_right_context",
            "stacker_step",
        ],
    )?;
    let p = signal_stacker::prepare(nc, left, right, step_frames).ok_or_else(|| {
        unsupported(format!(
            "{NAME} needs num_channels >= 1, contexts >= 0 and stacker_step in 1..=left + right + 1"
        ))
        .expected_found(
            "num_channels >= 1, left, right >= 0, 1 <= stacker_step <= left + right + 1",
            format!(
                "num_channels {nc}, stacker_left_context {left}, stacker_right_context {right}, stacker_step {step_frames}"
            ),
        )
    })?;
    if cx.op.outputs.len() != 2 {
        return Err(
            unsupported(format!("{NAME} has two outputs (stacked, output_valid)"))
                .expected_found("2 outputs", format!("{} outputs", cx.op.outputs.len())),
        );
    }
    let input = cx.input(0)?;
    let (output, valid) = (cx.op.outputs[0], cx.op.outputs[1]);
    check_tensor(cx, input, "input", DType::I16, Some(1))?;
    check_tensor(cx, output, "output", DType::I16, Some(1))?;
    check_tensor(cx, valid, "output_valid", DType::Bool, Some(0))?;
    cx.check_shape(input, &[p.num_channels])?;
    cx.check_shape(output, &[signal_stacker::output_len(&p)])?;
    let state = kernel_state(cx, 1, DType::I16, signal_stacker::state_len(&p))?;
    let mut step = cx.step(Stacker(p), vec![Operand::Tensor(input)], output);
    step.outputs = vec![output, valid];
    step.states = vec![state];
    Ok(step)
}

impl Kernel for Stacker {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        emit_stateful2(call, "signal_stacker", "signal_stacker", &self.0)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let x = io.i16(0);
        let (states, out, more) = io.states_and_outs();
        signal_stacker::signal_stacker(
            &self.0,
            x,
            bytemuck::cast_slice_mut(states[0].bytes_mut()),
            bytemuck::cast_slice_mut(out),
            more[0].bytes_mut(),
        );
    }
}
