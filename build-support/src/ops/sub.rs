//! SUB: int8, int16, int32 and float32 (TFLM's types), broadcasting or not
//! (`kiln_kernels::sub`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, activation, prepare_error, unsupported};
use kiln_kernels::broadcast::Broadcast;
use kiln_kernels::sub;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind, Quantization};
use proc_macro2::TokenStream;

/// The kernels, by type; `None`: the inputs have the output's shape.
#[derive(Debug)]
enum Sub {
    S8(sub::Params, Option<Broadcast>),
    S16(sub::Params, Option<Broadcast>),
    I32(sub::Params, Option<Broadcast>),
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
        DType::I16 => Sub::S16(
            sub::prepare_s16(cx.quant(a)?, cx.quant(b)?, cx.quant(output)?, act)
                .map_err(prepare_error)?,
            broadcast,
        ),
        DType::I32 => {
            // TFLM: "Only support INT32 unquantized SUB for now."
            for t in [a, b, output] {
                if cx.tensor(t).quant != Quantization::None {
                    return Err(unsupported("an int32 SUB must not be quantized")
                        .at_tensor(t.0, cx.tensor(t).name.clone()));
                }
            }
            Sub::I32(sub::prepare_i32(act), broadcast)
        }
        DType::F32 => Sub::F32(sub::prepare_f32(act), broadcast),
        other => {
            return Err(unsupported("unsupported type for this operator")
                .expected_found("INT8, INT16, INT32 or FLOAT32", other.name()));
        }
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(a), Operand::Tensor(b)], output))
}

impl Kernel for Sub {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (p, bc, suffix) = match self {
            Sub::S8(p, bc) => (p, bc, "s8"),
            Sub::S16(p, bc) => (p, bc, "s16"),
            Sub::I32(p, bc) => (p, bc, "i32"),
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
            Sub::S16(p, None) => sub::sub_s16(p, io.i16(0), io.i16(1), io.out_i16()),
            Sub::S16(p, Some(b)) => {
                sub::sub_broadcast_s16(p, b, io.i16(0), io.i16(1), io.out_i16())
            }
            Sub::I32(p, None) => sub::sub_i32(p, io.i32(0), io.i32(1), io.out_i32()),
            Sub::I32(p, Some(b)) => {
                sub::sub_broadcast_i32(p, b, io.i32(0), io.i32(1), io.out_i32())
            }
            Sub::F32(p, None) => sub::sub_f32(p, io.f32(0), io.f32(1), io.out_f32()),
            Sub::F32(p, Some(b)) => {
                sub::sub_broadcast_f32(p, b, io.f32(0), io.f32(1), io.out_f32())
            }
        }
    }
}
