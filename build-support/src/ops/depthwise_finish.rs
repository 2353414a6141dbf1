//! KILN_DEPTHWISE_FINISH (`OpKind::KilnDepthwiseFinish`, `kiln_kernels::row_sum`): an int8
//! DEPTHWISE_CONV_2D's outputs, one pixel whose window is its whole input image, from the
//! per-channel sums KILN_DEPTHWISE_SUM accumulated strip by strip (`kiln_planner::tiling`,
//! its accumulating ends): the bias added, requantized per channel as TFLM's kernel (the
//! multipliers from `kiln_kernels::depthwise_conv_2d::prepare_s8`, TFLM's `Prepare`). The
//! accumulator carries the layer input's quantization. Kiln makes these operators when it
//! tiles a model; no model has one, and a custom operator of that name is refused.

use crate::op::{Cx, Operand, PerChannel, Step, unsupported};
use kiln_kernels::depthwise_conv_2d as dw;
use kiln_kernels::row_sum as k;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::KilnDepthwiseFinish(o) = cx.op.kind else {
        return Err(unsupported(
            "KILN_DEPTHWISE_FINISH is Kiln's own operator for a tiled region's end; a custom \
             operator of that name is not it",
        ));
    };
    let (acc, filter, bias, output) = (cx.input(0)?, cx.input(1)?, cx.op.input(2), cx.output()?);
    cx.need_constant(filter)?;
    if [cx.dtype(acc), cx.dtype(filter), cx.dtype(output)] != [DType::I32, DType::I8, DType::I8] {
        return Err(unsupported("unsupported types for KILN_DEPTHWISE_FINISH")
            .expected_found("INT32 sums, INT8 filter -> INT8", cx.dtype(output).name()));
    }
    let fs = cx.shape4(filter)?;
    let channels = fs[3];
    cx.check_shape(acc, &[channels])?;
    cx.check_shape(output, &[1, 1, 1, channels])?;
    cx.check_bias(bias, channels, &[DType::I32])?;
    let opts = super::depthwise_conv_2d::options(&o)?;
    // The layer's image: the filter's size (the window is the whole image).
    let image = [1, fs[1], fs[2], channels];
    let scales = cx.scales(filter, channels)?;
    let (iq, oq) = (cx.quant(acc)?, cx.quant(output)?);
    let (p, t) = PerChannel::prepare(channels, |m, s| {
        dw::prepare_s8(image, fs, &opts, iq, &scales, oq, m, s)
    })?;
    if [p.output_height, p.output_width] != [1, 1] {
        return Err(unsupported(
            "KILN_DEPTHWISE_FINISH finishes a layer of one output pixel",
        ));
    }
    let params = k::DenseParams {
        output_offset: p.output_offset,
        quantized_activation_min: p.quantized_activation_min,
        quantized_activation_max: p.quantized_activation_max,
    };
    // The FULLY_CONNECTED finish's kernel, with the depthwise layer's multipliers.
    Ok(cx.step(
        super::dense_finish::Finish(params, t),
        vec![Operand::Tensor(acc), Operand::Optional(bias)],
        output,
    ))
}
