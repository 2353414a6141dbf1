//! SignalOverlapAdd (TFLM's Signal library; a custom operator), int16 and float32: frames
//! `[.., n_frames, frame_size]` in, `[.., n_frames * frame_step]` out, each frame added into
//! a per-row buffer whose first `frame_step` samples are output and shifted out
//! (`kiln_kernels::signal_overlap_add`). TFLM's buffers are the kernel's state, which the
//! reader gives to the operator as a variable tensor of the input's type (planned in the
//! persistent region and zeroed by `reset()`, which is TFLM's `Reset`).
//!
//! TFLM reads `T` and `frame_step` by position in the flexbuffer's sorted keys, so exactly
//! those keys are accepted, and `T` must name the tensors' type. Refused where TFLM is
//! undefined: `frame_step` outside `1..=frame_size` (a larger one moves a negative number of
//! bytes), an input of rank < 2 or empty, an output of another shape (TFLM writes
//! `n_frames * frame_step` values per row whatever the output's size).

use super::signal_energy::{check_tensor, int_options};
use super::signal_framer::kernel_state;
use super::signal_rfft::tensor_type;
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::signal_overlap_add;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The int16 or float32 kernel.
#[derive(Debug)]
struct OverlapAdd(signal_overlap_add::Params, DType);

const NAME: &str = "SignalOverlapAdd";

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let [ty, frame_step] = int_options(cx, ["T", "frame_step"])?;
    let (input, output) = (cx.input(0)?, cx.output()?);
    let dtype = cx.dtype(input);
    if !matches!(dtype, DType::I16 | DType::F32) {
        return Err(
            unsupported(format!("{NAME} runs on INT16 or FLOAT32 tensors"))
                .at_tensor(input.0, cx.tensor(input).name.clone())
                .expected_found("INT16 or FLOAT32", dtype.name()),
        );
    }
    check_tensor(cx, output, "output", dtype, None)?;
    if ty != tensor_type(dtype) {
        return Err(
            unsupported(format!("{NAME}'s `T` option must name the tensors' type")).expected_found(
                format!("T {} ({dtype})", tensor_type(dtype)),
                format!("T {ty}"),
            ),
        );
    }
    let shape = cx.tensor(input).shape.clone();
    let (frame_size, n_frames) = match shape.as_slice() {
        [.., f, s] => (*s, *f),
        _ => {
            return Err(unsupported(format!("{NAME}'s input must be of rank >= 2"))
                .at_tensor(input.0, cx.tensor(input).name.clone())
                .expected_found("[.., n_frames, frame_size]", format!("{shape:?}")));
        }
    };
    let rows = shape[..shape.len() - 2].iter().product::<usize>();
    let p =
        signal_overlap_add::prepare(frame_step, frame_size, n_frames, rows).ok_or_else(|| {
            unsupported(format!(
                "{NAME} needs frame_step in 1..=frame_size and a non-empty input"
            ))
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found(
                format!("1 <= frame_step <= {frame_size}"),
                format!("frame_step {frame_step}, input {shape:?}"),
            )
        })?;
    let mut want = shape[..shape.len() - 2].to_vec();
    want.push(n_frames * p.frame_step);
    cx.check_shape(output, &want)?;
    let state = kernel_state(cx, 1, dtype, signal_overlap_add::state_len(&p))?;
    let mut step = cx.step(OverlapAdd(p, dtype), vec![Operand::Tensor(input)], output);
    step.states = vec![state];
    Ok(step)
}

impl Kernel for OverlapAdd {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let p = call.params("signal_overlap_add", &self.0);
        let x = call.input(0);
        let (Some(state), [out]) = (call.states().first(), call.outputs()) else {
            return Err(Diagnostic::new(
                ErrorKind::InvalidPlan,
                format!("{NAME} is lowered with a state and one output"),
            ));
        };
        let f = match self.1 {
            DType::F32 => format_ident!("signal_overlap_add_f32"),
            _ => format_ident!("signal_overlap_add_s16"),
        };
        Ok(quote!(::kiln::kernels::signal_overlap_add::#f(#p, #x, #state, #out);))
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let x = io.input(0);
        let (states, out) = io.states_and_out();
        let state = states[0].bytes_mut();
        match self.1 {
            DType::F32 => signal_overlap_add::signal_overlap_add_f32(
                &self.0,
                bytemuck::cast_slice(x),
                bytemuck::cast_slice_mut(state),
                bytemuck::cast_slice_mut(out),
            ),
            _ => signal_overlap_add::signal_overlap_add_s16(
                &self.0,
                bytemuck::cast_slice(x),
                bytemuck::cast_slice_mut(state),
                bytemuck::cast_slice_mut(out),
            ),
        }
    }
}
