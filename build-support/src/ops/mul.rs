//! MUL: int8, int16, int32 and float32 (TFLM's types), broadcasting or not; without broadcasting it runs in place over
//! either input (`kiln_kernels::mul`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, activation, prepare_error, unsupported};
use kiln_kernels::broadcast::Broadcast;
use kiln_kernels::mul;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels, by type; `None`: the inputs have the output's shape.
#[derive(Debug)]
enum Mul {
    S8(mul::Params, Option<Broadcast>),
    S16(mul::Params, Option<Broadcast>),
    I32(mul::Params, Option<Broadcast>),
    F32(mul::Params, Option<Broadcast>),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Mul { activation: act } = &cx.op.kind else {
        unreachable!("registered for MUL")
    };
    let (a, b, output, broadcast) = cx.binary_operands()?;
    let act = activation(*act);
    let kernel = match cx.dtype(output) {
        DType::I8 => Mul::S8(
            mul::prepare_s8(cx.quant(a)?, cx.quant(b)?, cx.quant(output)?, act)
                .map_err(prepare_error)?,
            broadcast,
        ),
        DType::I16 => {
            let (qa, qb, qo) = (cx.quant(a)?, cx.quant(b)?, cx.quant(output)?);
            if let Some((t, q)) = [(a, qa), (b, qb), (output, qo)]
                .into_iter()
                .find(|(_, q)| q.zero_point != 0)
            {
                return Err(unsupported("int16 MUL needs zero points 0 (TFLM's check)")
                    .at_tensor(t.0, cx.tensor(t).name.clone())
                    .expected_found("zero point 0", format!("zero point {}", q.zero_point)));
            }
            Mul::S16(
                mul::prepare_s16(qa, qb, qo, act).map_err(prepare_error)?,
                broadcast,
            )
        }
        DType::I32 => Mul::I32(mul::prepare_i32(act), broadcast),
        DType::F32 => Mul::F32(mul::prepare_f32(act), broadcast),
        other => {
            return Err(unsupported("unsupported type for this operator")
                .expected_found("INT8, INT16, INT32 or FLOAT32", other.name()));
        }
    };
    // Without broadcasting, the int8 and float kernels have in-place forms over either input
    // (the int16/int32 ones are not declared: the planner's restatement of the declarations,
    // `kiln_planner::synthetic`, lists MUL in place for int8 and float32 only).
    let in_place = broadcast.is_none() && matches!(cx.dtype(output), DType::I8 | DType::F32);
    let mut step = cx.step(kernel, vec![Operand::Tensor(a), Operand::Tensor(b)], output);
    if in_place {
        step.abilities.in_place = vec![0, 1];
    }
    Ok(step)
}

impl Kernel for Mul {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (p, bc, suffix) = match self {
            Mul::S8(p, bc) => (p, bc, "s8"),
            Mul::S16(p, bc) => (p, bc, "s16"),
            Mul::I32(p, bc) => (p, bc, "i32"),
            Mul::F32(p, bc) => (p, bc, "f32"),
        };
        let mut pre = vec![call.params("mul", p)];
        match bc {
            None => call.elementwise("mul", &format!("mul_{suffix}"), &pre),
            Some(b) => {
                pre.push(call.broadcast(b));
                call.standard("mul", &format!("mul_broadcast_{suffix}"), &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Mul::S8(p, None) => mul::mul_s8(p, io.i8(0), io.i8(1), io.out_i8()),
            Mul::S8(p, Some(b)) => mul::mul_broadcast_s8(p, b, io.i8(0), io.i8(1), io.out_i8()),
            Mul::S16(p, None) => mul::mul_s16(p, io.i16(0), io.i16(1), io.out_i16()),
            Mul::S16(p, Some(b)) => {
                mul::mul_broadcast_s16(p, b, io.i16(0), io.i16(1), io.out_i16())
            }
            Mul::I32(p, None) => mul::mul_i32(p, io.i32(0), io.i32(1), io.out_i32()),
            Mul::I32(p, Some(b)) => {
                mul::mul_broadcast_i32(p, b, io.i32(0), io.i32(1), io.out_i32())
            }
            Mul::F32(p, None) => mul::mul_f32(p, io.f32(0), io.f32(1), io.out_f32()),
            Mul::F32(p, Some(b)) => {
                mul::mul_broadcast_f32(p, b, io.f32(0), io.f32(1), io.out_f32())
            }
        }
    }
}
