//! KILN_ROW_SUM (`OpKind::KilnRowSum`, `kiln_kernels::row_sum`): a strip's per-channel sums
//! added to an INT32 accumulator, where a tiled region ends in a pooling over the whole
//! image (`kiln_planner::tiling`, its accumulating ends). Kiln makes these operators when it
//! tiles a model; no model has one, and a custom operator of that name is refused.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, types, unsupported};
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels: the first strip (no accumulator yet), or the sums so far plus a strip
/// (in place over the accumulator where the plan says so).
#[derive(Debug)]
enum RowSum {
    First,
    Add,
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    if cx.op.kind != OpKind::KilnRowSum {
        return Err(unsupported(
            "KILN_ROW_SUM is Kiln's own operator for a tiled region's end; a custom operator \
             of that name is not it",
        ));
    }
    let (image, output) = (cx.input(0)?, cx.output()?);
    let shape = cx.shape4(image)?;
    let depth = shape[3];
    if shape[0] != 1 || cx.dtype(image) != DType::I8 || cx.dtype(output) != DType::I32 {
        return Err(
            unsupported("KILN_ROW_SUM sums an int8 NHWC image of batch 1 into INT32")
                .expected_found(
                    "INT8 [1, H, W, C] -> INT32 [C]",
                    types(cx.dtype(image), cx.dtype(output)),
                ),
        );
    }
    cx.check_shape(output, &[depth])?;
    match cx.op.input(1) {
        None => Ok(cx.step(RowSum::First, vec![Operand::Tensor(image)], output)),
        Some(acc) => {
            if cx.dtype(acc) != DType::I32 {
                return Err(unsupported("KILN_ROW_SUM's accumulator is INT32")
                    .expected_found("INT32", cx.dtype(acc).name()));
            }
            cx.check_shape(acc, &[depth])?;
            let mut step = cx.step(
                RowSum::Add,
                vec![Operand::Tensor(image), Operand::Tensor(acc)],
                output,
            );
            step.abilities.in_place = vec![1];
            Ok(step)
        }
    }
}

impl Kernel for RowSum {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        match self {
            RowSum::First => call.standard("row_sum", "row_sum_s8_first", &[]),
            RowSum::Add => call.elementwise("row_sum", "row_sum_s8", &[]),
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use kiln_kernels::row_sum as k;
        match self {
            RowSum::First => k::row_sum_s8_first(io.i8(0), io.out_i32()),
            RowSum::Add => k::row_sum_s8(io.i8(0), io.i32(1), io.out_i32()),
        }
    }
}
