//! SignalWindow (TFLM's Signal library; a custom operator): int16 input of rank >= 1 times a
//! constant rank-1 int16 window, every run of `window.len()` samples, shifted right by the
//! `shift` option (`kiln_kernels::signal_window`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::signal_window;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The int16 kernel.
#[derive(Debug)]
struct Window(signal_window::Params);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    if cx.op.inputs.len() != 2 {
        return Err(unsupported("SignalWindow has two inputs (input, window)")
            .expected_found("2 inputs", format!("{} inputs", cx.op.inputs.len())));
    }
    let (input, window, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    for t in [input, window, output] {
        let tensor = cx.tensor(t);
        if tensor.dtype != DType::I16 {
            return Err(unsupported("SignalWindow runs on INT16 tensors")
                .at_tensor(t.0, tensor.name.clone())
                .expected_found("INT16", tensor.dtype.name()));
        }
    }
    let (shape, w) = (&cx.tensor(input).shape, cx.tensor(window));
    if w.shape.len() != 1 || shape.is_empty() || cx.tensor(output).shape.len() != shape.len() {
        return Err(unsupported(
            "SignalWindow needs an input of rank >= 1, a rank-1 window and an output of the input's rank",
        )
        .expected_found(
            "input [.., n], window [n]",
            format!("input {shape:?}, window {:?}", w.shape),
        ));
    }
    if w.data().is_none() {
        return Err(
            unsupported("the window must be a constant").at_tensor(window.0, w.name.clone())
        );
    }
    let n = w.shape[0];
    let elements = cx.tensor(input).elements();
    if n == 0 || !elements.is_multiple_of(n) {
        return Err(
            unsupported("the input's size must be a multiple of the window's length")
                .at_tensor(window.0, w.name.clone())
                .expected_found(
                    format!("a divisor of {elements}"),
                    format!("window length {n}"),
                ),
        );
    }
    cx.check_same_elements(input, output)?;
    let OpKind::Custom { options, .. } = &cx.op.kind else {
        return Err(unsupported("SignalWindow must be a custom operator"));
    };
    let shift = options.as_ref().and_then(|o| o.int("shift"));
    let p = shift.and_then(signal_window::prepare).ok_or_else(|| {
        unsupported("SignalWindow needs an integer `shift` option in 0..=31").expected_found(
            "shift in 0..=31",
            match shift {
                Some(s) => format!("shift {s}"),
                None => "no integer `shift` in the custom options".into(),
            },
        )
    })?;
    Ok(cx.step(
        Window(p),
        vec![Operand::Tensor(input), Operand::Tensor(window)],
        output,
    ))
}

impl Kernel for Window {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("signal_window", &self.0)];
        call.standard("signal_window", "signal_window", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        signal_window::signal_window(&self.0, io.i16(0), io.i16(1), io.out_i16())
    }
}
