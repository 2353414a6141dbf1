//! SUB: int8 and float32, broadcasting or not (`kiln_kernels::sub`).

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::Io;
use crate::lower::{Cx, Kernel, Operand, Step, activation, prepare_error, unsupported};
use kiln_kernels::broadcast::Broadcast;
use kiln_kernels::sub;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels, by type; `None`: the inputs have the output's shape.
#[derive(Debug)]
enum Sub {
    S8(sub::Params, Option<Broadcast>),
    F32(sub::Params, Option<Broadcast>),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Sub(o) = &cx.op.kind else {
        unreachable!("registered for SUB")
    };
    let (a, b, output, broadcast) = cx.binary_operands()?;
    let act = activation(o.activation);
    let kernel = match cx.dtype(output) {
        DType::I8 => Sub::S8(
            sub::prepare_s8(cx.quant(a)?, cx.quant(b)?, cx.quant(output)?, act)
                .map_err(prepare_error)?,
            broadcast,
        ),
        DType::F32 => Sub::F32(sub::prepare_f32(act), broadcast),
        other => {
            return Err(unsupported("unsupported type for this operator")
                .expected_found("INT8 or FLOAT32 (ADD also INT16)", other.name()));
        }
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(a), Operand::Tensor(b)], output))
}

impl Kernel for Sub {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (p, bc, suffix) = match self {
            Sub::S8(p, bc) => (p, bc, "s8"),
            Sub::F32(p, bc) => (p, bc, "f32"),
        };
        let mut pre = vec![call.params("sub", p)];
        match bc {
            None => call.standard("sub", &format!("sub_{suffix}"), &pre),
            Some(b) => {
                pre.push(call.broadcast(b));
                call.standard("sub", &format!("sub_broadcast_{suffix}"), &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Sub::S8(p, None) => sub::sub_s8(p, io.i8(0), io.i8(1), io.out_i8()),
            Sub::S8(p, Some(b)) => sub::sub_broadcast_s8(p, b, io.i8(0), io.i8(1), io.out_i8()),
            Sub::F32(p, None) => sub::sub_f32(p, io.f32(0), io.f32(1), io.out_f32()),
            Sub::F32(p, Some(b)) => {
                sub::sub_broadcast_f32(p, b, io.f32(0), io.f32(1), io.out_f32())
            }
        }
    }
}
