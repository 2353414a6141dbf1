//! FULLY_CONNECTED: int8 (per-tensor or per-channel weights), 16x8 (int64 or int32 bias) and
//! float32 (`kiln_kernels::fully_connected`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{
    Call, Cx, Fast, Kernel, Operand, PerChannel, Step, activation, prepare_error, unsupported,
};
use kiln_kernels::fully_connected as fc;
use kiln_kernels::quant::{Activation, QuantParams};
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind, Quantization, TensorId};
use proc_macro2::TokenStream;

/// The kernels, by types and quantization.
#[derive(Debug)]
enum FullyConnected {
    S8(fc::Params),
    PerChannelS8(fc::Params, PerChannel),
    /// int8 (per-tensor or per-channel) on the fast matrix products
    /// (`fully_connected_s8_fast`), for the layers its `prepare_fast_s8` accepts: folded
    /// bias, no bias operand; a per-tensor layer's multiplier and shift repeated per channel.
    S8Fast(fc::Params, Fast),
    F32(fc::Params),
    S16(fc::Params),
    S16Bias32(fc::Params),
    PerChannelS16(fc::Params, PerChannel),
    PerChannelS16Bias32(fc::Params, PerChannel),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::FullyConnected(o) = &cx.op.kind else {
        unreachable!("registered for FULLY_CONNECTED")
    };
    let (input, weights, bias) = (cx.input(0)?, cx.input(1)?, cx.op.input(2));
    let output = cx.output()?;
    cx.need_constant(weights)?;
    let wshape = &cx.tensor(weights).shape;
    let [output_depth, accum_depth] = <[usize; 2]>::try_from(wshape.as_slice()).map_err(|_| {
        unsupported("FULLY_CONNECTED weights must be 2-D")
            .expected_found("[outputs, inputs]", format!("{wshape:?}"))
    })?;
    let elements = cx.tensor(input).elements();
    if accum_depth == 0 || !elements.is_multiple_of(accum_depth) {
        return Err(
            unsupported("the input size is not a multiple of the weights' depth")
                .expected_found(format!("a multiple of {accum_depth}"), elements.to_string()),
        );
    }
    let batches = elements / accum_depth;
    if cx.tensor(output).elements() != batches * output_depth {
        return Err(
            unsupported("the output size does not match batches x outputs").expected_found(
                (batches * output_depth).to_string(),
                cx.tensor(output).elements().to_string(),
            ),
        );
    }
    let bias_types: &[DType] = match cx.dtype(input) {
        DType::I16 => &[DType::I64, DType::I32],
        DType::F32 => &[DType::F32],
        _ => &[DType::I32],
    };
    cx.check_bias(bias, output_depth, bias_types)?;
    let act = activation(o.activation);
    let mut inputs = vec![
        Operand::Tensor(input),
        Operand::Tensor(weights),
        Operand::Optional(bias),
    ];
    let kernel = match (cx.dtype(input), cx.dtype(weights), cx.dtype(output)) {
        (DType::I16, DType::I8, DType::I16) => {
            let bias32 = match bias.map(|b| cx.dtype(b)) {
                None | Some(DType::I64) => false,
                Some(DType::I32) => true,
                Some(other) => {
                    return Err(unsupported(
                        "the bias of a 16x8 FULLY_CONNECTED must be INT64 or INT32",
                    )
                    .expected_found("INT64 or INT32", other.name()));
                }
            };
            if let (true, Some(b)) = (bias32, bias) {
                inputs[2] = Operand::Tensor(b);
            }
            let (iq, oq) = (cx.quant(input)?, cx.quant(output)?);
            match &cx.tensor(weights).quant {
                Quantization::PerChannel { scales, .. } => {
                    let (p, t) = PerChannel::prepare(output_depth, |m, s| {
                        fc::prepare_per_channel_s16(
                            batches,
                            accum_depth,
                            output_depth,
                            iq,
                            scales,
                            oq,
                            act,
                            m,
                            s,
                        )
                    })?;
                    if bias32 {
                        FullyConnected::PerChannelS16Bias32(p, t)
                    } else {
                        FullyConnected::PerChannelS16(p, t)
                    }
                }
                _ => {
                    let bias_scale = match bias {
                        Some(b) => Some(cx.quant(b)?.scale),
                        None => None,
                    };
                    let p = fc::prepare_s16(
                        batches,
                        accum_depth,
                        output_depth,
                        iq,
                        cx.quant(weights)?,
                        bias_scale,
                        oq,
                        act,
                    )
                    .map_err(prepare_error)?;
                    if bias32 {
                        FullyConnected::S16Bias32(p)
                    } else {
                        FullyConnected::S16(p)
                    }
                }
            }
        }
        (DType::I8, DType::I8, DType::I8) => {
            if let Some(b) = bias
                && cx.dtype(b) != DType::I32
            {
                return Err(unsupported("the bias must be INT32")
                    .expected_found("INT32", cx.dtype(b).name()));
            }
            let (iq, oq) = (cx.quant(input)?, cx.quant(output)?);
            let layer = [batches, accum_depth, output_depth];
            match prepare_s8(cx, layer, iq, oq, act, weights, bias)? {
                (p, Some(t)) => FullyConnected::PerChannelS8(p, t),
                (p, None) => FullyConnected::S8(p),
            }
        }
        (DType::F32, DType::F32, DType::F32) => FullyConnected::F32(
            fc::prepare_f32(batches, accum_depth, output_depth, act).map_err(prepare_error)?,
        ),
        (a, w, b) => {
            return Err(
                unsupported("unsupported types for FULLY_CONNECTED").expected_found(
                    "INT8 or FLOAT32 input, weights and output",
                    format!("{a}, {w} -> {b}"),
                ),
            );
        }
    };
    let fast = match &kernel {
        FullyConnected::S8(p) => Some((p, per_tensor(p))),
        FullyConnected::PerChannelS8(p, t) => Some((p, t.clone())),
        _ => None,
    }
    .and_then(|(p, t)| {
        let f = Fast::prepare_layer(cx, weights, bias, &t, |w, b, m, s, folded, m_out, e| {
            fc::prepare_fast_s8(p, w, b, m, s, folded, m_out, e)
        })?;
        Some(FullyConnected::S8Fast(*p, f))
    });
    if let Some(fast) = fast {
        let operands = vec![Operand::Tensor(input), Operand::Tensor(weights)];
        return Ok(cx.step(fast, operands, output));
    }
    Ok(cx.step(kernel, inputs, output))
}

/// An int8 layer's parameters (`[batches, accum_depth, output_depth]`) as TFLM's `Prepare`
/// computes them: with per-channel tables for per-channel weights, `None` for per-tensor
/// ones (FULLY_CONNECTED and a tiled region's KILN_DENSE_FINISH).
#[allow(clippy::too_many_arguments)]
pub(super) fn prepare_s8(
    cx: &Cx<'_>,
    [batches, accum_depth, output_depth]: [usize; 3],
    iq: QuantParams,
    oq: QuantParams,
    act: Activation,
    weights: TensorId,
    bias: Option<TensorId>,
) -> Result<(fc::Params, Option<PerChannel>)> {
    if let Quantization::PerChannel { scales, .. } = &cx.tensor(weights).quant {
        let (p, t) = PerChannel::prepare(output_depth, |m, s| {
            fc::prepare_per_channel_s8(
                batches,
                accum_depth,
                output_depth,
                iq,
                scales,
                oq,
                act,
                m,
                s,
            )
        })?;
        return Ok((p, Some(t)));
    }
    let bias_scale = bias.map(|b| cx.quant(b).map(|q| q.scale)).transpose()?;
    let p = fc::prepare_s8(
        batches,
        accum_depth,
        output_depth,
        iq,
        cx.quant(weights)?,
        bias_scale,
        oq,
        act,
    )
    .map_err(prepare_error)?;
    Ok((p, None))
}

/// A per-tensor layer's multiplier and shift as per-channel tables.
pub(super) fn per_tensor(p: &fc::Params) -> PerChannel {
    PerChannel {
        multiplier: vec![p.output_multiplier; p.output_depth],
        shift: vec![p.output_shift; p.output_depth],
    }
}

impl Kernel for FullyConnected {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        use FullyConnected::*;
        if let S8Fast(p, f) = self {
            let mut pre = vec![call.params("fully_connected", p)];
            pre.extend(call.fast(f));
            return call.standard("fully_connected", "fully_connected_s8_fast", &pre);
        }
        let (function, p, tables) = match self {
            S8Fast(..) => unreachable!("emitted above"),
            S8(p) => ("fully_connected_s8", p, None),
            PerChannelS8(p, t) => ("fully_connected_per_channel_s8", p, Some(t)),
            F32(p) => ("fully_connected_f32", p, None),
            S16(p) => ("fully_connected_s16", p, None),
            S16Bias32(p) => ("fully_connected_s16_bias32", p, None),
            PerChannelS16(p, t) => ("fully_connected_per_channel_s16", p, Some(t)),
            PerChannelS16Bias32(p, t) => ("fully_connected_per_channel_s16_bias32", p, Some(t)),
        };
        let mut pre = vec![call.params("fully_connected", p)];
        if let Some(t) = tables {
            pre.extend(call.per_channel(t));
        }
        call.standard("fully_connected", function, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use FullyConnected::*;
        match self {
            S8(p) => fc::fully_connected_s8(p, io.i8(0), io.i8(1), io.opt_i32(2), io.out_i8()),
            S8Fast(p, f) => fc::fully_connected_s8_fast(
                p,
                &f.bias,
                &f.multiplier,
                &f.right_shift,
                io.i8(0),
                io.i8(1),
                io.out_i8(),
            ),
            PerChannelS8(p, c) => fc::fully_connected_per_channel_s8(
                p,
                &c.multiplier,
                &c.shift,
                io.i8(0),
                io.i8(1),
                io.opt_i32(2),
                io.out_i8(),
            ),
            F32(p) => fc::fully_connected_f32(p, io.f32(0), io.f32(1), io.opt_f32(2), io.out_f32()),
            S16(p) => fc::fully_connected_s16(p, io.i16(0), io.i8(1), io.opt_i64(2), io.out_i16()),
            S16Bias32(p) => {
                fc::fully_connected_s16_bias32(p, io.i16(0), io.i8(1), io.i32(2), io.out_i16())
            }
            PerChannelS16(p, c) => fc::fully_connected_per_channel_s16(
                p,
                &c.multiplier,
                &c.shift,
                io.i16(0),
                io.i8(1),
                io.opt_i64(2),
                io.out_i16(),
            ),
            PerChannelS16Bias32(p, c) => fc::fully_connected_per_channel_s16_bias32(
                p,
                &c.multiplier,
                &c.shift,
                io.i16(0),
                io.i8(1),
                io.i32(2),
                io.out_i16(),
            ),
        }
    }
}
