//! BATCH_MATMUL: float32, int8 and int16 (zero points 0), `adj_x`/`adj_y`, broadcast batch
//! dims, constant or runtime operands (`kiln_kernels::batch_matmul`: both operands read in
//! place through their strides, so no transposed copy and no scratch).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, unsupported};
use kiln_kernels::batch_matmul as k;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels, by type.
#[derive(Debug)]
struct BatchMatMul {
    p: k::Params,
    dtype: DType,
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::BatchMatMul { adj_x, adj_y, .. } = cx.op.kind else {
        unreachable!("registered for BATCH_MATMUL")
    };
    if cx.op.inputs.len() != 2 {
        return Err(unsupported("BATCH_MATMUL needs two inputs"));
    }
    let (lhs, rhs, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let dtype = cx.dtype(lhs);
    if cx.dtype(rhs) != dtype || cx.dtype(output) != dtype {
        return Err(unsupported(
            "BATCH_MATMUL's operands and output must have one type (TFLM has no hybrid form)",
        )
        .expected_found(
            format!("{dtype}, {dtype} -> {dtype}"),
            format!("{}, {} -> {}", dtype, cx.dtype(rhs), cx.dtype(output)),
        ));
    }
    let (ls, rs) = (&cx.tensor(lhs).shape, &cx.tensor(rhs).shape);
    let shape_error = |e| {
        prepare_error(e).expected_found(
            "ranks 2..=5, broadcastable batch dims, equal accumulation depths",
            format!("lhs {ls:?}, rhs {rs:?}, adj_x {adj_x}, adj_y {adj_y}"),
        )
    };
    let (p, out, rank) = match dtype {
        DType::F32 => k::prepare_f32(ls, rs, adj_x, adj_y).map_err(shape_error)?,
        DType::I8 | DType::I16 => {
            k::prepare_f32(ls, rs, adj_x, adj_y).map_err(shape_error)?;
            let (ql, qr, qo) = (cx.quant(lhs)?, cx.quant(rhs)?, cx.quant(output)?);
            if dtype == DType::I16 {
                for (t, q) in [(lhs, ql), (rhs, qr), (output, qo)] {
                    if q.zero_point != 0 {
                        return Err(unsupported(
                            "TFLM's int16 BATCH_MATMUL needs zero points of 0",
                        )
                        .at_tensor(t.0, cx.tensor(t).name.clone())
                        .expected_found("0", q.zero_point.to_string()));
                    }
                }
            }
            k::prepare_quantized(ls, rs, adj_x, adj_y, ql, qr, qo, dtype == DType::I16)
                .map_err(prepare_error)?
        }
        other => {
            return Err(unsupported("unsupported type for BATCH_MATMUL")
                .expected_found("FLOAT32, INT8 or INT16", other.name()));
        }
    };
    cx.check_shape(output, &out[..rank])?;
    let ops = vec![Operand::Tensor(lhs), Operand::Tensor(rhs)];
    Ok(cx.step(BatchMatMul { p, dtype }, ops, output))
}

impl Kernel for BatchMatMul {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let f = match self.dtype {
            DType::I8 => "batch_matmul_s8",
            DType::I16 => "batch_matmul_s16",
            _ => "batch_matmul_f32",
        };
        let pre = [call.params("batch_matmul", &self.p)];
        call.standard("batch_matmul", f, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.p;
        match self.dtype {
            DType::I8 => k::batch_matmul_s8(p, io.i8(0), io.i8(1), io.out_i8()),
            DType::I16 => k::batch_matmul_s16(p, io.i16(0), io.i16(1), io.out_i16()),
            _ => k::batch_matmul_f32(p, io.f32(0), io.f32(1), io.out_f32()),
        }
    }
}
