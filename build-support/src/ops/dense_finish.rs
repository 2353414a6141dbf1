//! KILN_DENSE_FINISH (`OpKind::KilnDenseFinish`, `kiln_kernels::row_sum`): an int8
//! FULLY_CONNECTED's outputs from the dot products KILN_DOT_SUM accumulated strip by strip
//! (`kiln_planner::tiling`, its accumulating ends): the bias added, requantized as TFLM's
//! kernel (per tensor or per channel; the multipliers from `kiln_kernels::fully_connected`'s
//! `prepare_s8` / `prepare_per_channel_s8`, TFLM's `Prepare`). The accumulator carries the
//! layer input's quantization. Kiln makes these operators when it tiles a model; no model
//! has one, and a custom operator of that name is refused.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, PerChannel, Step, activation, unsupported};
use kiln_kernels::row_sum as k;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernel's parameters and its per-channel tables (a per-tensor layer's repeated); also
/// KILN_DEPTHWISE_FINISH's kernel (`depthwise_finish.rs`).
#[derive(Debug)]
pub(super) struct Finish(pub(super) k::DenseParams, pub(super) PerChannel);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::KilnDenseFinish(o) = cx.op.kind else {
        return Err(unsupported(
            "KILN_DENSE_FINISH is Kiln's own operator for a tiled region's end; a custom \
             operator of that name is not it",
        ));
    };
    let (acc, weights, bias, output) = (cx.input(0)?, cx.input(1)?, cx.op.input(2), cx.output()?);
    cx.need_constant(weights)?;
    let wshape = &cx.tensor(weights).shape;
    let [outputs, accum_depth] = <[usize; 2]>::try_from(wshape.as_slice())
        .map_err(|_| unsupported("KILN_DENSE_FINISH's weights must be 2-D"))?;
    if [cx.dtype(acc), cx.dtype(weights), cx.dtype(output)] != [DType::I32, DType::I8, DType::I8] {
        return Err(unsupported("unsupported types for KILN_DENSE_FINISH")
            .expected_found("INT32 sums, INT8 weights -> INT8", cx.dtype(output).name()));
    }
    cx.check_shape(acc, &[outputs])?;
    if cx.tensor(output).elements() != outputs {
        return Err(
            unsupported("KILN_DENSE_FINISH writes one batch").expected_found(
                outputs.to_string(),
                cx.tensor(output).elements().to_string(),
            ),
        );
    }
    cx.check_bias(bias, outputs, &[DType::I32])?;
    let act = activation(o.activation);
    let (iq, oq) = (cx.quant(acc)?, cx.quant(output)?);
    let layer = [1, accum_depth, outputs];
    let (p, t) = match super::fully_connected::prepare_s8(cx, layer, iq, oq, act, weights, bias)? {
        (p, Some(t)) => (p, t),
        (p, None) => (p, super::fully_connected::per_tensor(&p)),
    };
    let params = k::DenseParams {
        output_offset: p.output_offset,
        quantized_activation_min: p.quantized_activation_min,
        quantized_activation_max: p.quantized_activation_max,
    };
    Ok(cx.step(
        Finish(params, t),
        vec![Operand::Tensor(acc), Operand::Optional(bias)],
        output,
    ))
}

impl Kernel for Finish {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let mut pre = vec![call.params_as(
            quote::quote!(::kiln::kernels::row_sum::DenseParams),
            &self.0,
        )];
        pre.extend(call.per_channel(&self.1));
        call.standard("row_sum", "dense_finish_s8", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        k::dense_finish_s8(
            &self.0,
            &self.1.multiplier,
            &self.1.shift,
            io.i32(0),
            io.opt_i32(1),
            io.out_i8(),
        );
    }
}
