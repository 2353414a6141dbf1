//! KILN_DEPTHWISE_SUM (`OpKind::KilnDepthwiseSum`, `kiln_kernels::row_sum`): a strip's part
//! of an int8 DEPTHWISE_CONV_2D's per-channel sums added to an INT32 accumulator, where a
//! tiled region ends in a depthwise layer whose window is its whole input image
//! (`kiln_planner::tiling`, its accumulating ends). Kiln makes these operators when it tiles
//! a model; no model has one, and a custom operator of that name is refused.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, types, unsupported};
use kiln_kernels::row_sum as k;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels: the first strip (no accumulator yet), or the sums so far plus a strip
/// (in place over the accumulator where the plan says so).
#[derive(Debug)]
enum DepthwiseSum {
    First(k::DepthwiseSumParams),
    Add(k::DepthwiseSumParams),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::KilnDepthwiseSum { first } = cx.op.kind else {
        return Err(unsupported(
            "KILN_DEPTHWISE_SUM is Kiln's own operator for a tiled region's end; a custom \
             operator of that name is not it",
        ));
    };
    let (strip, filter, output) = (cx.input(0)?, cx.input(2)?, cx.output()?);
    cx.need_constant(filter)?;
    let types_ok =
        [cx.dtype(strip), cx.dtype(filter), cx.dtype(output)] == [DType::I8, DType::I8, DType::I32];
    if !types_ok {
        return Err(
            unsupported("unsupported types for KILN_DEPTHWISE_SUM").expected_found(
                "INT8 strip and filter -> INT32",
                types(cx.dtype(strip), cx.dtype(output)),
            ),
        );
    }
    let fs = cx.shape4(filter)?;
    let channels = fs[3];
    let pixels = fs[1] * fs[2];
    let strip_shape = cx.image_shape4(strip)?;
    let strip_pixels = strip_shape[1] * strip_shape[2];
    if strip_shape[3] != channels
        || first
            .checked_add(strip_pixels)
            .is_none_or(|end| end > pixels)
    {
        return Err(
            unsupported("KILN_DEPTHWISE_SUM's strip lies outside the layer's image")
                .expected_found(
                    format!("at most {pixels} pixels of {channels} channels"),
                    format!("{first} + {strip_pixels} of {}", strip_shape[3]),
                ),
        );
    }
    cx.check_shape(output, &[channels])?;
    let p = k::DepthwiseSumParams {
        channels,
        first,
        input_offset: -cx.quant(strip)?.zero_point,
    };
    match cx.op.input(1) {
        None => Ok(cx.step(
            DepthwiseSum::First(p),
            vec![Operand::Tensor(strip), Operand::Tensor(filter)],
            output,
        )),
        Some(acc) => {
            if cx.dtype(acc) != DType::I32 {
                return Err(unsupported("KILN_DEPTHWISE_SUM's accumulator is INT32")
                    .expected_found("INT32", cx.dtype(acc).name()));
            }
            cx.check_shape(acc, &[channels])?;
            let mut step = cx.step(
                DepthwiseSum::Add(p),
                vec![
                    Operand::Tensor(strip),
                    Operand::Tensor(acc),
                    Operand::Tensor(filter),
                ],
                output,
            );
            step.abilities.in_place = vec![1];
            Ok(step)
        }
    }
}

impl Kernel for DepthwiseSum {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (DepthwiseSum::First(p) | DepthwiseSum::Add(p)) = self;
        let pre = [call.params_as(
            quote::quote!(::kiln::kernels::row_sum::DepthwiseSumParams),
            p,
        )];
        match self {
            DepthwiseSum::First(_) => call.standard("row_sum", "depthwise_sum_s8_first", &pre),
            DepthwiseSum::Add(_) => call.elementwise("row_sum", "depthwise_sum_s8", &pre),
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            DepthwiseSum::First(p) => {
                k::depthwise_sum_s8_first(p, io.i8(0), io.i8(1), io.out_i32())
            }
            DepthwiseSum::Add(p) => {
                k::depthwise_sum_s8(p, io.i8(0), io.i32(1), io.i8(2), io.out_i32())
            }
        }
    }
}
