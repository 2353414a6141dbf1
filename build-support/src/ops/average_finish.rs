//! KILN_AVERAGE_FINISH (`OpKind::KilnAverageFinish`, `kiln_kernels::row_sum`): the output
//! of an int8 AVERAGE_POOL_2D whose one output pixel's window covers the whole image, from
//! the image's per-channel sums that KILN_ROW_SUM accumulated strip by strip
//! (`kiln_planner::tiling`, its accumulating ends). The pooling's checks are TFLM's
//! (`kiln_kernels::pooling::prepare_s8` over the whole image); the accumulator carries the
//! image's quantization. Kiln makes these operators when it tiles a model; no model has
//! one, and a custom operator of that name is refused.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::pooling as pool;
use kiln_kernels::row_sum as k;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;
use quote::quote;

/// The kernel and its parameters.
#[derive(Debug)]
struct Finish(k::Params);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::KilnAverageFinish {
        options: o,
        height,
        width,
    } = cx.op.kind
    else {
        return Err(unsupported(
            "KILN_AVERAGE_FINISH is Kiln's own operator for a tiled region's end; a custom \
             operator of that name is not it",
        ));
    };
    let (acc, output) = (cx.input(0)?, cx.output()?);
    let (a, b) = (cx.dtype(acc), cx.dtype(output));
    if (a, b) != (DType::I32, DType::I8) {
        return Err(unsupported("unsupported types for KILN_AVERAGE_FINISH")
            .expected_found("INT32 -> INT8", types(a, b)));
    }
    let depth = cx.tensor(acc).shape.iter().product::<usize>();
    cx.check_shape(acc, &[depth])?;
    let opts = super::pooling::options(&o)?;
    let p = pool::prepare_s8(
        [1, height, width, depth],
        [1, 1],
        &opts,
        pool::Kind::Average,
        cx.quant(acc)?,
        cx.quant(output)?,
    )
    .map_err(|e| match e {
        pool::PoolError::Prepare(e) => prepare_error(e),
        pool::PoolError::Window(_) => unsupported("the pooling's window is not TFLM's"),
    })?;
    // One output pixel whose window covers every row and column (TFLM's windows start at
    // `-padding` and hold `filter` cells, clipped to the image).
    let covers = |pad: i32, filter: usize, size: usize| {
        pad >= 0 && i64::from(pad) + size as i64 <= filter as i64
    };
    if p.output_height != 1
        || p.output_width != 1
        || !covers(p.padding_height, p.filter_height, height)
        || !covers(p.padding_width, p.filter_width, width)
    {
        return Err(Diagnostic::new(
            ErrorKind::InvalidPlan,
            format!(
                "op {} finishes a pooling whose window does not cover the whole image",
                cx.op.id.0
            ),
        ));
    }
    cx.check_shape(output, &[1, 1, 1, depth])?;
    let count =
        i32::try_from(height * width).map_err(|_| unsupported("an image too large to pool"))?;
    let params = k::Params {
        count,
        quantized_activation_min: p.quantized_activation_min,
        quantized_activation_max: p.quantized_activation_max,
    };
    Ok(cx.step(Finish(params), vec![Operand::Tensor(acc)], output))
}

impl Kernel for Finish {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("row_sum", &self.0)];
        let statement = call.standard("row_sum", "average_finish_s8", &pre)?;
        // `false` only for a count of zero, which the lowering rules out.
        Ok(quote!(let _ = #statement))
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        k::average_finish_s8(&self.0, io.i32(0), io.out_i8());
    }
}
