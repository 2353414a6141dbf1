//! SQUARED_DIFFERENCE: float32, int32, int8 and int16 (TFLM's types), broadcasting or not
//! (`kiln_kernels::squared_difference`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, unsupported};
use kiln_kernels::broadcast::Broadcast;
use kiln_kernels::squared_difference as sd;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The kernels, by type; `None`: the inputs have the output's shape.
#[derive(Debug)]
enum SquaredDifference {
    S8(sd::Params, Option<Broadcast>),
    S16(sd::Params, Option<Broadcast>),
    I32(Option<Broadcast>),
    F32(Option<Broadcast>),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (a, b, output, broadcast) = cx.binary_operands()?;
    if broadcast.is_some() {
        let rank = cx.tensor(a).shape.len().max(cx.tensor(b).shape.len());
        if rank > 4 {
            return Err(unsupported(
                "SQUARED_DIFFERENCE broadcasts at most 4 dimensions (TFLM's 4-D helper)",
            )
            .expected_found("rank <= 4", format!("rank {rank}")));
        }
    }
    let kernel = match cx.dtype(output) {
        DType::I8 => SquaredDifference::S8(
            sd::prepare_s8(cx.quant(a)?, cx.quant(b)?, cx.quant(output)?).map_err(prepare_error)?,
            broadcast,
        ),
        DType::I16 => {
            let (qa, qb, qo) = (cx.quant(a)?, cx.quant(b)?, cx.quant(output)?);
            if let Some((t, q)) = [(a, qa), (b, qb), (output, qo)]
                .into_iter()
                .find(|(_, q)| q.zero_point != 0)
            {
                return Err(unsupported(
                    "int16 SQUARED_DIFFERENCE needs zero points 0 (TFLM's check)",
                )
                .at_tensor(t.0, cx.tensor(t).name.clone())
                .expected_found("zero point 0", format!("zero point {}", q.zero_point)));
            }
            SquaredDifference::S16(
                sd::prepare_s16(qa, qb, qo).map_err(prepare_error)?,
                broadcast,
            )
        }
        DType::I32 => SquaredDifference::I32(broadcast),
        DType::F32 => SquaredDifference::F32(broadcast),
        other => {
            return Err(unsupported("unsupported type for SQUARED_DIFFERENCE")
                .expected_found("FLOAT32, INT32, INT8 or INT16", other.name()));
        }
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(a), Operand::Tensor(b)], output))
}

impl Kernel for SquaredDifference {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (p, bc, suffix) = match self {
            SquaredDifference::S8(p, bc) => (Some(p), bc, "s8"),
            SquaredDifference::S16(p, bc) => (Some(p), bc, "s16"),
            SquaredDifference::I32(bc) => (None, bc, "i32"),
            SquaredDifference::F32(bc) => (None, bc, "f32"),
        };
        let mut pre = Vec::new();
        if let Some(p) = p {
            pre.push(call.params("squared_difference", p));
        }
        let m = "squared_difference";
        match bc {
            None => call.standard(m, &format!("squared_difference_{suffix}"), &pre),
            Some(b) => {
                pre.push(call.broadcast(b));
                call.standard(m, &format!("squared_difference_broadcast_{suffix}"), &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use SquaredDifference as S;
        match self {
            S::S8(p, None) => sd::squared_difference_s8(p, io.i8(0), io.i8(1), io.out_i8()),
            S::S8(p, Some(b)) => {
                sd::squared_difference_broadcast_s8(p, b, io.i8(0), io.i8(1), io.out_i8())
            }
            S::S16(p, None) => sd::squared_difference_s16(p, io.i16(0), io.i16(1), io.out_i16()),
            S::S16(p, Some(b)) => {
                sd::squared_difference_broadcast_s16(p, b, io.i16(0), io.i16(1), io.out_i16())
            }
            S::I32(None) => sd::squared_difference_i32(io.i32(0), io.i32(1), io.out_i32()),
            S::I32(Some(b)) => {
                sd::squared_difference_broadcast_i32(b, io.i32(0), io.i32(1), io.out_i32())
            }
            S::F32(None) => sd::squared_difference_f32(io.f32(0), io.f32(1), io.out_f32()),
            S::F32(Some(b)) => {
                sd::squared_difference_broadcast_f32(b, io.f32(0), io.f32(1), io.out_f32())
            }
        }
    }
}
