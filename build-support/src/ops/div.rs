//! DIV: float32, broadcasting or not (`kiln_kernels::div`).

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::Io;
use crate::lower::{Cx, Kernel, Operand, Step, activation, types, unsupported};
use kiln_kernels::broadcast::Broadcast;
use kiln_kernels::div;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The float32 kernel; `None`: the inputs have the output's shape.
#[derive(Debug)]
struct DivF32(div::Params, Option<Broadcast>);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Div { activation: act } = &cx.op.kind else {
        unreachable!("registered for DIV")
    };
    let (a, b, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    if [a, b, output].iter().any(|&t| cx.dtype(t) != DType::F32) {
        return Err(unsupported("DIV is supported for FLOAT32")
            .expected_found("FLOAT32", types(cx.dtype(a), cx.dtype(output))));
    }
    let bc = cx.broadcast(a, b, output)?;
    let p = div::prepare_f32(activation(*act));
    Ok(cx.step(
        DivF32(p, bc),
        vec![Operand::Tensor(a), Operand::Tensor(b)],
        output,
    ))
}

impl Kernel for DivF32 {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let mut pre = vec![call.params("div", &self.0)];
        match &self.1 {
            None => call.standard("div", "div_f32", &pre),
            Some(b) => {
                pre.push(call.broadcast(b));
                call.standard("div", "div_broadcast_f32", &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match &self.1 {
            None => div::div_f32(&self.0, io.f32(0), io.f32(1), io.out_f32()),
            Some(b) => div::div_broadcast_f32(&self.0, b, io.f32(0), io.f32(1), io.out_f32()),
        }
    }
}
