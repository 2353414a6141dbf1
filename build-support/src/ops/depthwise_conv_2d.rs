//! DEPTHWISE_CONV_2D: int8, 16x8 (int64 bias) and float32
//! (`kiln_kernels::depthwise_conv_2d`); with depth multiplier 1 each also runs in place over
//! its dying input, one output channel plane at a time through a scratch plane.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{
    Call, Cx, Fast, Kernel, Operand, PerChannel, Step, activation, padding, positive,
    prepare_error, unsupported,
};
use kiln_kernels::depthwise_conv_2d as dw;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, DepthwiseConv2dOptions, OpKind};
use kiln_planner::kernels::{ConvInPlace, ConvInPlaceKind};
use proc_macro2::TokenStream;

/// The kernels, by types.
#[derive(Debug)]
enum DepthwiseConv2d {
    S8(dw::Params, PerChannel),
    /// int8 on the fast kernel (`depthwise_conv_2d_s8_fast`) for the layers its
    /// `prepare_fast_s8` accepts: the filter in its layout, folded bias, no bias operand.
    S8Fast(dw::Params, Fast, Vec<i8>),
    S16(dw::Params, PerChannel),
    F32(dw::Params),
}

/// The kernels' options from the operator's (strides, dilations and the depth multiplier
/// positive).
pub(super) fn options(o: &DepthwiseConv2dOptions) -> Result<dw::Options> {
    Ok(dw::Options {
        padding: padding(o.padding),
        stride_height: positive(o.stride_h, "stride")?,
        stride_width: positive(o.stride_w, "stride")?,
        dilation_height_factor: positive(o.dilation_h, "dilation")?,
        dilation_width_factor: positive(o.dilation_w, "dilation")?,
        depth_multiplier: positive(o.depth_multiplier, "depth multiplier")?,
        activation: activation(o.activation),
    })
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::DepthwiseConv2d(o) = &cx.op.kind else {
        unreachable!("registered for DEPTHWISE_CONV_2D")
    };
    let (input, filter, bias) = (cx.input(0)?, cx.input(1)?, cx.op.input(2));
    let output = cx.output()?;
    cx.need_constant(filter)?;
    let opts = options(o)?;
    let (is, fs) = (cx.image_shape4(input)?, cx.shape4(filter)?);
    let mut kernel = match (cx.dtype(input), cx.dtype(filter), cx.dtype(output)) {
        (DType::I8, DType::I8, DType::I8) => {
            let channels = fs[3];
            let scales = cx.scales(filter, channels)?;
            let q_input = cx.quant(input)?;
            let q_output = cx.quant(output)?;
            let (p, t) = PerChannel::prepare(channels, |m, s| {
                dw::prepare_s8(is, fs, &opts, q_input, &scales, q_output, m, s)
            })?;
            DepthwiseConv2d::S8(p, t)
        }
        (DType::I16, DType::I8, DType::I16) => {
            if bias.map(|b| cx.dtype(b)) != Some(DType::I64) {
                return Err(unsupported("a 16x8 DEPTHWISE_CONV_2D needs an INT64 bias")
                    .expected_found("INT64 bias", format!("{:?}", bias.map(|b| cx.dtype(b)))));
            }
            let channels = fs[3];
            let scales = cx.scales(filter, channels)?;
            let q_input = cx.quant(input)?;
            let q_output = cx.quant(output)?;
            let (p, t) = PerChannel::prepare(channels, |m, s| {
                dw::prepare_s16(is, fs, &opts, q_input, &scales, q_output, m, s)
            })?;
            DepthwiseConv2d::S16(p, t)
        }
        (DType::F32, DType::F32, DType::F32) => {
            DepthwiseConv2d::F32(dw::prepare_f32(is, fs, &opts).map_err(prepare_error)?)
        }
        (a, w, b) => {
            return Err(
                unsupported("unsupported types for DEPTHWISE_CONV_2D").expected_found(
                    "INT8 or FLOAT32 input, filter and output",
                    format!("{a}, {w} -> {b}"),
                ),
            );
        }
    };
    let p = kernel.params_mut();
    let extent = [
        (p.filter_height - 1) * p.dilation_height_factor + 1,
        (p.filter_width - 1) * p.dilation_width_factor + 1,
    ];
    cx.strip_window(
        [
            &mut p.input_height,
            &mut p.output_height,
            &mut p.padding_height,
        ],
        [
            &mut p.input_width,
            &mut p.output_width,
            &mut p.padding_width,
        ],
        [p.stride_height, p.stride_width],
        extent,
    )?;
    let p = kernel.params();
    cx.check_shape(
        output,
        &[p.batches, p.output_height, p.output_width, p.output_depth],
    )?;
    let bias_types: &[DType] = match kernel {
        DepthwiseConv2d::S8(..) | DepthwiseConv2d::S8Fast(..) => &[DType::I32],
        DepthwiseConv2d::S16(..) => &[DType::I64],
        DepthwiseConv2d::F32(_) => &[DType::F32],
    };
    cx.check_bias(bias, p.output_depth, bias_types)?;
    // With depth multiplier 1, one output channel plane at a time over the input.
    let plane = dw::in_place_supported(p).then(|| ConvInPlace {
        kind: ConvInPlaceKind::ChannelPlanes,
        scratch_bytes: cx.tensor(output).elements() / p.output_depth.max(1)
            * cx.tensor(output).dtype.size(),
    });
    let mut fast_step = None;
    if let DepthwiseConv2d::S8(p, t) = &kernel
        && let Some(mut step) = fast(cx, p, t, input, filter, bias, output)
    {
        // In place one channel plane at a time, much slower than the fast kernel.
        step.abilities.conv_in_place = plane;
        step.slow_in_place = true;
        fast_step = Some(step);
    }
    // An int8 layer declares the fast kernel's scratch whichever kernel runs it (see
    // CONV_2D); the reference kernel leaves it unused.
    let scratch = match &kernel {
        DepthwiseConv2d::S8(p, _) => dw::fast_scratch_bytes(p),
        _ => 0,
    };
    let bias = match (&kernel, bias) {
        (DepthwiseConv2d::S16(..), Some(b)) => Operand::Tensor(b),
        _ => Operand::Optional(bias),
    };
    let mut step = cx.step(
        kernel,
        vec![Operand::Tensor(input), Operand::Tensor(filter), bias],
        output,
    );
    step.abilities.conv_in_place = plane;
    step.scratch_bytes = scratch;
    if scratch > 0 {
        step.lean_scratch_bytes = Some(0);
    }
    // The fast kernel, with the reference one as its form without scratch.
    Ok(match fast_step {
        Some(fast) => fast.or_without_scratch(step),
        None => step,
    })
}

/// The fast int8 step, if `prepare_fast_s8` accepts the layer (constant filter and bias).
fn fast(
    cx: &Cx<'_>,
    p: &dw::Params,
    t: &PerChannel,
    input: kiln_planner::ir::TensorId,
    filter: kiln_planner::ir::TensorId,
    bias: Option<kiln_planner::ir::TensorId>,
    output: kiln_planner::ir::TensorId,
) -> Option<Step> {
    cx.tensor(filter).data()?;
    let mut layout = vec![0i8; dw::fast_filter_len(p)];
    let f = Fast::prepare_layer(cx, filter, bias, t, |w, b, m, s, folded, m_out, e| {
        dw::prepare_fast_s8(p, w, b, m, s, &mut layout, folded, m_out, e)
    })?;
    let mut step = cx.step(
        DepthwiseConv2d::S8Fast(*p, f, layout),
        vec![Operand::Tensor(input)],
        output,
    );
    step.scratch_bytes = dw::fast_scratch_bytes(p);
    step.lean_scratch_bytes = Some(dw::lean_scratch_bytes(p));
    Some(step)
}

/// The depth-multiplier-1 form's weights as int16 pairs (`dw::pack_weights`) from the fast
/// layout, or nothing for the input-depth-1 form (which reads `layout` itself).
fn packed(p: &dw::Params, layout: &[i8]) -> Vec<i32> {
    let mut packed = vec![0; dw::packed_len(p)];
    dw::pack_weights(p, layout, &mut packed);
    packed
}

/// The weights the in-place kernel reads (int16 pairs, `dw::pack_weights`'s entries): the
/// depth-multiplier-1 form's, or, for a layer of one input and one output channel (the
/// input-depth-1 form in place), its taps as channel 0 of each entry.
fn packed_in_place(p: &dw::Params, layout: &[i8]) -> Vec<i32> {
    if dw::packed_len(p) > 0 {
        return packed(p, layout);
    }
    let taps = p.filter_height * p.filter_width;
    layout
        .iter()
        .take(taps)
        .flat_map(|&w| [w as i16 as u16 as i32, 0])
        .collect()
}

impl DepthwiseConv2d {
    fn params(&self) -> &dw::Params {
        match self {
            DepthwiseConv2d::S8(p, _)
            | DepthwiseConv2d::S8Fast(p, ..)
            | DepthwiseConv2d::S16(p, _)
            | DepthwiseConv2d::F32(p) => p,
        }
    }

    fn params_mut(&mut self) -> &mut dw::Params {
        match self {
            DepthwiseConv2d::S8(p, _)
            | DepthwiseConv2d::S8Fast(p, ..)
            | DepthwiseConv2d::S16(p, _)
            | DepthwiseConv2d::F32(p) => p,
        }
    }
}

impl Kernel for DepthwiseConv2d {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if let DepthwiseConv2d::S8Fast(p, f, layout) = self {
            let mut pre = vec![call.params("depthwise_conv_2d", p)];
            pre.extend(call.fast(f));
            let zero_point = (-p.input_offset) as i8;
            pre.push(call.table("ZERO_ROW", &vec![zero_point; p.input_depth]));
            match call.in_place() {
                None => {}
                // Over its dying input, one channel plane at a time (the weights as int16
                // pairs, also those of a one-channel layer).
                Some(0) if dw::in_place_supported(p) => {
                    pre.push(call.table("FILTER", &packed_in_place(p, layout)));
                    let f = "depthwise_conv_2d_s8_fast_in_place";
                    return call.over_input_with_scratch("depthwise_conv_2d", f, &pre);
                }
                Some(_) => return Err(call.no_in_place_form()),
            }
            // The depth-multiplier-1 form reads its weights as int16 pairs, the
            // input-depth-1 form as its int8 im2col rows.
            let packed = packed(p, layout);
            let function = if packed.is_empty() {
                pre.push(call.table("FILTER", layout));
                "depthwise_conv_2d_s8_fast_single"
            } else {
                pre.push(call.table("FILTER", &packed));
                "depthwise_conv_2d_s8_fast"
            };
            // The plan's scratch: the declared one, the lean one, or none. The row form
            // without its band (the lean plan) runs pixel by pixel.
            let scratch = call.scratch(false).ok();
            if scratch.is_none() && !packed.is_empty() && dw::band_bytes(p) > 0 {
                let f = "depthwise_conv_2d_s8_fast_lean";
                return call.standard("depthwise_conv_2d", f, &pre);
            }
            let scratch = scratch.unwrap_or_else(|| quote::quote!(&mut []));
            return call.standard_with("depthwise_conv_2d", function, &pre, &[scratch]);
        }
        let (function, tables) = match self {
            DepthwiseConv2d::S8Fast(..) => unreachable!("emitted above"),
            DepthwiseConv2d::S8(_, t) => ("depthwise_conv_2d_s8", Some(t)),
            DepthwiseConv2d::S16(_, t) => ("depthwise_conv_2d_s16", Some(t)),
            DepthwiseConv2d::F32(_) => ("depthwise_conv_2d_f32", None),
        };
        let mut pre = vec![call.params("depthwise_conv_2d", self.params())];
        if let Some(t) = tables {
            pre.extend(call.per_channel(t));
        }
        match call.in_place() {
            // The declared scratch is the fast kernel's; this one leaves it unused.
            None if let Ok(scratch) = call.scratch(true) => {
                let run = call.standard("depthwise_conv_2d", function, &pre)?;
                Ok(quote::quote!(let _ = #scratch; #run))
            }
            None => call.standard("depthwise_conv_2d", function, &pre),
            // Over its dying input, one output channel plane at a time through the scratch
            // plane.
            Some(0) if dw::in_place_supported(self.params()) => {
                let f = format!("{function}_in_place");
                call.over_input_with_scratch("depthwise_conv_2d", &f, &pre)
            }
            Some(_) => Err(call.no_in_place_form()),
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            DepthwiseConv2d::S8Fast(p, f, layout) => {
                let mut scratch = vec![0i8; dw::fast_scratch_bytes(p)];
                let zero_row = vec![(-p.input_offset) as i8; p.input_depth];
                let (b, m, e) = (&f.bias, &f.multiplier, &f.right_shift);
                let packed = packed(p, layout);
                if packed.is_empty() {
                    dw::depthwise_conv_2d_s8_fast_single(
                        p,
                        b,
                        m,
                        e,
                        &zero_row,
                        layout,
                        io.i8(0),
                        io.out_i8(),
                        &mut scratch,
                    )
                } else {
                    dw::depthwise_conv_2d_s8_fast(
                        p,
                        b,
                        m,
                        e,
                        &zero_row,
                        &packed,
                        io.i8(0),
                        io.out_i8(),
                        &mut scratch,
                    )
                }
            }
            DepthwiseConv2d::S8(p, c) => dw::depthwise_conv_2d_s8(
                p,
                &c.multiplier,
                &c.shift,
                io.i8(0),
                io.i8(1),
                io.opt_i32(2),
                io.out_i8(),
            ),
            DepthwiseConv2d::S16(p, c) => dw::depthwise_conv_2d_s16(
                p,
                &c.multiplier,
                &c.shift,
                io.i16(0),
                io.i8(1),
                io.i64(2),
                io.out_i16(),
            ),
            DepthwiseConv2d::F32(p) => {
                dw::depthwise_conv_2d_f32(p, io.f32(0), io.f32(1), io.opt_f32(2), io.out_f32())
            }
        }
    }
}
