//! KILN_DOT_SUM (`OpKind::KilnDotSum`, `kiln_kernels::row_sum`): a strip's slice of an int8
//! FULLY_CONNECTED's dot products added to an INT32 accumulator, where a tiled region ends
//! in a FULLY_CONNECTED over the flattened image (`kiln_planner::tiling`, its accumulating
//! ends). Kiln makes these operators when it tiles a model; no model has one, and a custom
//! operator of that name is refused.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, types, unsupported};
use kiln_kernels::row_sum as k;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind, Quantization};
use proc_macro2::TokenStream;

/// The kernels: the first strip (no accumulator yet), or the sums so far plus a strip
/// (in place over the accumulator where the plan says so).
#[derive(Debug)]
enum DotSum {
    First(k::DotParams),
    Add(k::DotParams),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::KilnDotSum { first } = cx.op.kind else {
        return Err(unsupported(
            "KILN_DOT_SUM is Kiln's own operator for a tiled region's end; a custom operator \
             of that name is not it",
        ));
    };
    let (strip, weights, output) = (cx.input(0)?, cx.input(2)?, cx.output()?);
    cx.need_constant(weights)?;
    let types_ok = [cx.dtype(strip), cx.dtype(weights), cx.dtype(output)]
        == [DType::I8, DType::I8, DType::I32];
    if !types_ok {
        return Err(
            unsupported("unsupported types for KILN_DOT_SUM").expected_found(
                "INT8 strip and weights -> INT32",
                types(cx.dtype(strip), cx.dtype(output)),
            ),
        );
    }
    let wshape = &cx.tensor(weights).shape;
    let [outputs, accum_depth] = <[usize; 2]>::try_from(wshape.as_slice())
        .map_err(|_| unsupported("KILN_DOT_SUM's weights must be 2-D"))?;
    let elements = cx.tensor(strip).elements();
    if first
        .checked_add(elements)
        .is_none_or(|end| end > accum_depth)
    {
        return Err(
            unsupported("KILN_DOT_SUM's strip lies outside the layer's input").expected_found(
                format!("at most {accum_depth} elements"),
                format!("{first} + {elements}"),
            ),
        );
    }
    cx.check_shape(output, &[outputs])?;
    let weights_offset = match &cx.tensor(weights).quant {
        Quantization::PerChannel { .. } => 0,
        _ => -cx.quant(weights)?.zero_point,
    };
    let p = k::DotParams {
        accum_depth,
        first,
        input_offset: -cx.quant(strip)?.zero_point,
        weights_offset,
    };
    match cx.op.input(1) {
        None => Ok(cx.step(
            DotSum::First(p),
            vec![Operand::Tensor(strip), Operand::Tensor(weights)],
            output,
        )),
        Some(acc) => {
            if cx.dtype(acc) != DType::I32 {
                return Err(unsupported("KILN_DOT_SUM's accumulator is INT32")
                    .expected_found("INT32", cx.dtype(acc).name()));
            }
            cx.check_shape(acc, &[outputs])?;
            let mut step = cx.step(
                DotSum::Add(p),
                vec![
                    Operand::Tensor(strip),
                    Operand::Tensor(acc),
                    Operand::Tensor(weights),
                ],
                output,
            );
            step.abilities.in_place = vec![1];
            Ok(step)
        }
    }
}

impl Kernel for DotSum {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (DotSum::First(p) | DotSum::Add(p)) = self;
        let pre = [call.params_as(quote::quote!(::kiln::kernels::row_sum::DotParams), p)];
        match self {
            DotSum::First(_) => call.standard("row_sum", "dot_sum_s8_first", &pre),
            DotSum::Add(_) => call.elementwise("row_sum", "dot_sum_s8", &pre),
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            DotSum::First(p) => k::dot_sum_s8_first(p, io.i8(0), io.i8(1), io.out_i32()),
            DotSum::Add(p) => k::dot_sum_s8(p, io.i8(0), io.i32(1), io.i8(2), io.out_i32()),
        }
    }
}
