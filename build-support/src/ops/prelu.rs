//! PRELU: float32, int8 (int8 alpha) and int16 (int8 alpha), alpha broadcast against the
//! input over at most 4 dimensions (`kiln_kernels::prelu`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, unsupported};
use kiln_kernels::broadcast::Broadcast;
use kiln_kernels::prelu;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The kernels, by type; `None`: alpha has the input's shape.
#[derive(Debug)]
enum Prelu {
    S8(prelu::Params, Option<Broadcast>),
    S16(prelu::Params, Option<Broadcast>),
    F32(Option<Broadcast>),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, alpha, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    for t in [input, alpha, output] {
        let rank = cx.tensor(t).shape.len();
        if rank > 4 {
            return Err(
                unsupported("PRELU handles at most 4 dimensions (TFLM's 4-D broadcast)")
                    .at_tensor(t.0, cx.tensor(t).name.clone())
                    .expected_found("rank <= 4", format!("rank {rank}")),
            );
        }
    }
    let (ti, ta, to) = (cx.dtype(input), cx.dtype(alpha), cx.dtype(output));
    let broadcast = cx.broadcast(input, alpha, output)?;
    let quantized = || -> Result<prelu::Params> {
        prelu::prepare(cx.quant(input)?, cx.quant(alpha)?, cx.quant(output)?).map_err(prepare_error)
    };
    let kernel = match (ti, ta, to) {
        (DType::F32, DType::F32, DType::F32) => Prelu::F32(broadcast),
        (DType::I8, DType::I8, DType::I8) => Prelu::S8(quantized()?, broadcast),
        (DType::I16, DType::I8, DType::I16) => Prelu::S16(quantized()?, broadcast),
        _ => {
            return Err(unsupported("unsupported types for PRELU").expected_found(
                "FLOAT32, FLOAT32 -> FLOAT32; INT8, INT8 -> INT8; INT16, INT8 -> INT16",
                format!("{ti}, {ta} -> {to}"),
            ));
        }
    };
    Ok(cx.step(
        kernel,
        vec![Operand::Tensor(input), Operand::Tensor(alpha)],
        output,
    ))
}

impl Kernel for Prelu {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (p, bc, suffix) = match self {
            Prelu::S8(p, bc) => (Some(p), bc, "s8"),
            Prelu::S16(p, bc) => (Some(p), bc, "s16"),
            Prelu::F32(bc) => (None, bc, "f32"),
        };
        let mut pre = Vec::new();
        if let Some(p) = p {
            pre.push(call.params("prelu", p));
        }
        match bc {
            None => call.standard("prelu", &format!("prelu_{suffix}"), &pre),
            Some(b) => {
                pre.push(call.broadcast(b));
                call.standard("prelu", &format!("prelu_broadcast_{suffix}"), &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Prelu::S8(p, None) => prelu::prelu_s8(p, io.i8(0), io.i8(1), io.out_i8()),
            Prelu::S8(p, Some(b)) => {
                prelu::prelu_broadcast_s8(p, b, io.i8(0), io.i8(1), io.out_i8())
            }
            Prelu::S16(p, None) => prelu::prelu_s16(p, io.i16(0), io.i8(1), io.out_i16()),
            Prelu::S16(p, Some(b)) => {
                prelu::prelu_broadcast_s16(p, b, io.i16(0), io.i8(1), io.out_i16())
            }
            Prelu::F32(None) => prelu::prelu_f32(io.f32(0), io.f32(1), io.out_f32()),
            Prelu::F32(Some(b)) => {
                prelu::prelu_broadcast_f32(b, io.f32(0), io.f32(1), io.out_f32())
            }
        }
    }
}
