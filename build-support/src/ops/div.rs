//! DIV: float32, int8 and int32 (TFLM's types), broadcasting or not (`kiln_kernels::div`). int8 models whose
//! quantizations make TFLM's data-dependent shift leave `0..=31` are refused (see the
//! kernel module).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, activation, prepare_error, types, unsupported};
use kiln_kernels::broadcast::Broadcast;
use kiln_kernels::div;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind, Quantization};
use proc_macro2::TokenStream;

/// The float32 kernel; `None`: the inputs have the output's shape.
#[derive(Debug)]
struct DivF32(div::Params, Option<Broadcast>);

/// The int8 kernel; `None`: the inputs have the output's shape.
#[derive(Debug)]
struct DivS8(div::ParamsS8, Option<Broadcast>);

/// The int32 kernel (the activation range in the parameters).
#[derive(Debug)]
struct DivI32(div::ParamsS8, Option<Broadcast>);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Div { activation: act } = &cx.op.kind else {
        unreachable!("registered for DIV")
    };
    let (a, b, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    if [a, b, output].iter().all(|&t| cx.dtype(t) == DType::I8) {
        let bc = cx.broadcast(a, b, output)?;
        let p = div::prepare_s8(
            cx.quant(a)?,
            cx.quant(b)?,
            cx.quant(output)?,
            activation(*act),
        )
        .map_err(prepare_error)?;
        return Ok(cx.step(
            DivS8(p, bc),
            vec![Operand::Tensor(a), Operand::Tensor(b)],
            output,
        ));
    }
    if [a, b, output].iter().all(|&t| cx.dtype(t) == DType::I32) {
        // TFLM: "Only support int32 unquantized DIV for now."
        for t in [a, b] {
            if cx.tensor(t).quant != Quantization::None {
                return Err(unsupported("an int32 DIV's inputs must not be quantized")
                    .at_tensor(t.0, cx.tensor(t).name.clone()));
            }
        }
        let bc = cx.broadcast(a, b, output)?;
        let rank = cx.tensor(a).shape.len().max(cx.tensor(b).shape.len());
        if bc.is_some() && rank > 5 {
            return Err(unsupported(
                "int32 DIV broadcasts at most 5 dimensions (TFLM's 5-D helper)",
            )
            .expected_found("rank <= 5", format!("rank {rank}")));
        }
        return Ok(cx.step(
            DivI32(div::prepare_i32(activation(*act)), bc),
            vec![Operand::Tensor(a), Operand::Tensor(b)],
            output,
        ));
    }
    if [a, b, output].iter().any(|&t| cx.dtype(t) != DType::F32) {
        return Err(
            unsupported("DIV is supported for FLOAT32, INT8 and INT32").expected_found(
                "FLOAT32, INT8 or INT32",
                types(cx.dtype(a), cx.dtype(output)),
            ),
        );
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

impl Kernel for DivS8 {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let mut pre = vec![call.params_as(quote::quote!(::kiln::kernels::div::ParamsS8), &self.0)];
        match &self.1 {
            None => call.standard("div", "div_s8", &pre),
            Some(b) => {
                pre.push(call.broadcast(b));
                call.standard("div", "div_broadcast_s8", &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match &self.1 {
            None => div::div_s8(&self.0, io.i8(0), io.i8(1), io.out_i8()),
            Some(b) => div::div_broadcast_s8(&self.0, b, io.i8(0), io.i8(1), io.out_i8()),
        }
    }
}

impl Kernel for DivI32 {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let mut pre = vec![call.params_as(quote::quote!(::kiln::kernels::div::ParamsS8), &self.0)];
        match &self.1 {
            None => call.standard("div", "div_i32", &pre),
            Some(b) => {
                pre.push(call.broadcast(b));
                call.standard("div", "div_broadcast_i32", &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match &self.1 {
            None => div::div_i32(&self.0, io.i32(0), io.i32(1), io.out_i32()),
            Some(b) => div::div_broadcast_i32(&self.0, b, io.i32(0), io.i32(1), io.out_i32()),
        }
    }
}
