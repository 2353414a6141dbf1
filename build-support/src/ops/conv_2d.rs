//! CONV_2D: int8, 16x8 (int64 or int32 bias) and float32 (`kiln_kernels::conv_2d`); int8 and
//! float convolutions also run in place over their dying input: 1x1 stride-1 ones one output
//! pixel at a time through a scratch pixel, the others whose output rows are no longer than
//! their input rows a row at a time through a ring of `padding + 1` output rows.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{
    Call, Cx, Fast, Kernel, Operand, PerChannel, Step, activation, padding, positive,
    prepare_error, unsupported,
};
use kiln_kernels::conv_2d as conv;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use kiln_planner::kernels::{ConvInPlace, ConvInPlaceKind};
use proc_macro2::TokenStream;

/// The kernels, by types.
#[derive(Debug)]
enum Conv2d {
    S8(conv::Params, PerChannel),
    /// int8 on the fast matrix products (`conv_2d_s8_fast`), for the layers its
    /// `prepare_fast_s8` accepts: folded bias, no bias operand, an im2col scratch.
    S8Fast(conv::Params, Fast, Option<Vec<i8>>),
    F32(conv::Params),
    S16(conv::Params, PerChannel),
    S16Bias32(conv::Params, PerChannel),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Conv2d(o) = &cx.op.kind else {
        unreachable!("registered for CONV_2D")
    };
    let (input, filter, bias) = (cx.input(0)?, cx.input(1)?, cx.op.input(2));
    let output = cx.output()?;
    cx.need_constant(filter)?;
    let opts = conv::Options {
        padding: padding(o.padding),
        stride_height: positive(o.stride_h, "stride")?,
        stride_width: positive(o.stride_w, "stride")?,
        dilation_height_factor: positive(o.dilation_h, "dilation")?,
        dilation_width_factor: positive(o.dilation_w, "dilation")?,
        activation: activation(o.activation),
    };
    let (is, fs) = (cx.image_shape4(input)?, cx.shape4(filter)?);
    let mut kernel = match (cx.dtype(input), cx.dtype(filter), cx.dtype(output)) {
        (DType::I8, DType::I8, DType::I8) => {
            let scales = cx.scales(filter, fs[0])?;
            let q_input = cx.quant(input)?;
            let q_output = cx.quant(output)?;
            let (p, t) = PerChannel::prepare(fs[0], |m, s| {
                conv::prepare_s8(is, fs, &opts, q_input, &scales, q_output, m, s)
            })?;
            Conv2d::S8(p, t)
        }
        (DType::I16, DType::I8, DType::I16) => {
            let scales = cx.scales(filter, fs[0])?;
            let q_input = cx.quant(input)?;
            let q_output = cx.quant(output)?;
            let (p, t) = PerChannel::prepare(fs[0], |m, s| {
                conv::prepare_s16(is, fs, &opts, q_input, &scales, q_output, m, s)
            })?;
            match bias.map(|b| cx.dtype(b)) {
                None | Some(DType::I64) => Conv2d::S16(p, t),
                Some(DType::I32) => Conv2d::S16Bias32(p, t),
                Some(other) => {
                    return Err(
                        unsupported("the bias of a 16x8 CONV_2D must be INT64 or INT32")
                            .expected_found("INT64 or INT32", other.name()),
                    );
                }
            }
        }
        (DType::F32, DType::F32, DType::F32) => {
            Conv2d::F32(conv::prepare_f32(is, fs, &opts).map_err(prepare_error)?)
        }
        (a, w, b) => {
            return Err(unsupported("unsupported types for CONV_2D").expected_found(
                "INT8 or FLOAT32 input, filter and output",
                format!("{a}, {w} -> {b}"),
            ));
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
        Conv2d::S8(..) | Conv2d::S8Fast(..) | Conv2d::S16Bias32(..) => &[DType::I32],
        Conv2d::S16(..) => &[DType::I64],
        Conv2d::F32(_) => &[DType::F32],
    };
    cx.check_bias(bias, p.output_depth, bias_types)?;
    let mut fast_step = None;
    if let Conv2d::S8(p, t) = &kernel {
        let mut own = vec![0i8; conv::fast_filter_len(p)];
        let fast = Fast::prepare_layer(cx, filter, bias, t, |w, b, m, s, folded, m_out, e| {
            conv::prepare_fast_s8(p, w, b, m, s, &mut own, folded, m_out, e)
        });
        if let Some(fast) = fast {
            let p = *p;
            // The model's filter, or the kernel's own padded copy of it instead.
            let (own, inputs) = if own.is_empty() {
                (None, vec![Operand::Tensor(input), Operand::Tensor(filter)])
            } else {
                (Some(own), vec![Operand::Tensor(input)])
            };
            let mut step = cx.step(Conv2d::S8Fast(p, fast, own), inputs, output);
            step.scratch_bytes = conv::fast_scratch_bytes(&p);
            step.lean_scratch_bytes = Some(conv::lean_scratch_bytes(&p));
            // In place a pixel at a time as the reference kernel (the same scratch), or a row
            // at a time on the lean im2col: slower than the fast kernel, so planned only
            // where a budget needs it.
            step.slow_in_place = true;
            step.abilities.conv_in_place = in_place_form(&p, 1);
            fast_step = Some(step);
        }
    }
    let bias = match (&kernel, bias) {
        (Conv2d::S16Bias32(..), Some(b)) => Operand::Tensor(b),
        _ => Operand::Optional(bias),
    };
    // An int8 convolution declares the fast kernel's im2col scratch whichever kernel runs
    // it, so that what a layer needs does not depend on its weights (the planner's tests
    // restate it from the graph, `kiln_planner::synthetic::declared`); the reference kernel
    // leaves it unused.
    let scratch = match &kernel {
        Conv2d::S8(p, _) => conv::s8_scratch_bytes(p),
        _ => 0,
    };
    // In place: int8 and float (the reference kernel leaves the scratch above unused).
    let in_place = matches!(kernel, Conv2d::S8(..) | Conv2d::F32(_))
        .then(|| in_place_form(p, cx.tensor(output).dtype.size()))
        .flatten();
    let mut step = cx.step(
        kernel,
        vec![Operand::Tensor(input), Operand::Tensor(filter), bias],
        output,
    );
    step.abilities.conv_in_place = in_place;
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

/// The form in place over the input of a convolution of `p` with `size`-byte activations: a
/// pointwise one a pixel at a time through a scratch pixel, another whose output rows are no
/// longer than its input rows a row at a time through a ring of rows (before the ordinary
/// scratch, where the fast kernel keeps its im2col).
fn in_place_form(p: &conv::Params, size: usize) -> Option<ConvInPlace> {
    if conv::pointwise_in_place_supported(p) {
        Some(ConvInPlace {
            kind: ConvInPlaceKind::Pixels,
            scratch_bytes: p.output_depth * size,
        })
    } else {
        conv::rows_in_place_supported(p).then(|| ConvInPlace {
            kind: ConvInPlaceKind::Rows,
            scratch_bytes: conv::rows_in_place_scratch_elements(p) * size,
        })
    }
}

impl Conv2d {
    fn params(&self) -> &conv::Params {
        match self {
            Conv2d::S8(p, _)
            | Conv2d::S8Fast(p, ..)
            | Conv2d::F32(p)
            | Conv2d::S16(p, _)
            | Conv2d::S16Bias32(p, _) => p,
        }
    }

    fn params_mut(&mut self) -> &mut conv::Params {
        match self {
            Conv2d::S8(p, _)
            | Conv2d::S8Fast(p, ..)
            | Conv2d::F32(p)
            | Conv2d::S16(p, _)
            | Conv2d::S16Bias32(p, _) => p,
        }
    }
}

impl Kernel for Conv2d {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if let Conv2d::S8Fast(p, f, own) = self {
            let params = call.params("conv_2d", p);
            let [bias, multiplier, shift] = call.fast(f);
            // Over its dying input, one pixel at a time through the scratch pixel.
            if call.in_place() == Some(0) && conv::pointwise_in_place_supported(p) && own.is_none()
            {
                let pre = [params, bias, multiplier, shift];
                let f = "conv_2d_s8_fast_pointwise_in_place";
                return call.over_input_with_scratch("conv_2d", f, &pre);
            }
            let filter = match own {
                Some(w) => call.table("FILTER", w),
                None => call.input(1),
            };
            let (input, out) = (call.input(0), call.output());
            let f = |name| crate::op::kernel_fn("conv_2d", name);
            return match call.in_place() {
                None => {
                    // The plan's scratch: the declared one, the lean one, or none.
                    let scratch = call
                        .scratch(false)
                        .unwrap_or_else(|_| quote::quote!(&mut []));
                    let f = f("conv_2d_s8_fast");
                    Ok(quote::quote!(
                        #f(#params, #bias, #multiplier, #shift, #filter, #input, #out, #scratch);
                    ))
                }
                // Over its dying input a row at a time, through the ring of rows (the start of
                // the scratch, which the plan must give; the im2col follows it); `out` holds
                // both.
                Some(0) if conv::rows_in_place_supported(p) => {
                    let (f, scratch) = (f("conv_2d_s8_fast_rows_in_place"), call.scratch(false)?);
                    Ok(quote::quote!(
                        #f(#params, #bias, #multiplier, #shift, #filter, #out, #scratch);
                    ))
                }
                Some(_) => Err(call.no_in_place_form()),
            };
        }
        let (function, tables) = match self {
            Conv2d::S8Fast(..) => unreachable!("emitted above"),
            Conv2d::S8(_, t) => ("conv_2d_s8", Some(t)),
            Conv2d::F32(_) => ("conv_2d_f32", None),
            Conv2d::S16(_, t) => ("conv_2d_s16", Some(t)),
            Conv2d::S16Bias32(_, t) => ("conv_2d_s16_bias32", Some(t)),
        };
        let mut pre = vec![call.params("conv_2d", self.params())];
        if let Some(t) = tables {
            pre.extend(call.per_channel(t));
        }
        match call.in_place() {
            // The declared im2col scratch is the fast kernel's; this one leaves it unused.
            None if let Ok(scratch) = call.scratch(true) => {
                let run = call.standard("conv_2d", function, &pre)?;
                Ok(quote::quote!(let _ = #scratch; #run))
            }
            None => call.standard("conv_2d", function, &pre),
            // A pointwise convolution over its dying input, one pixel at a time through
            // the scratch pixel.
            Some(0)
                if matches!(self, Conv2d::S8(..) | Conv2d::F32(_))
                    && conv::pointwise_in_place_supported(self.params()) =>
            {
                let f = format!("{function}_pointwise_in_place");
                call.over_input_with_scratch("conv_2d", &f, &pre)
            }
            // Another convolution over its dying input, a row at a time through the ring of
            // rows (the declared im2col scratch after it is left unused).
            Some(0)
                if matches!(self, Conv2d::S8(..) | Conv2d::F32(_))
                    && conv::rows_in_place_supported(self.params()) =>
            {
                let f = format!("{function}_rows_in_place");
                call.over_input_with_scratch("conv_2d", &f, &pre)
            }
            Some(_) => Err(call.no_in_place_form()),
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Conv2d::S8Fast(p, f, own) => {
                let mut scratch = vec![0i8; conv::fast_scratch_bytes(p)];
                let filter = match own {
                    Some(w) => w.clone(),
                    None => io.i8(1).to_vec(),
                };
                conv::conv_2d_s8_fast(
                    p,
                    &f.bias,
                    &f.multiplier,
                    &f.right_shift,
                    &filter,
                    io.i8(0),
                    io.out_i8(),
                    &mut scratch,
                )
            }
            Conv2d::S8(p, c) => conv::conv_2d_s8(
                p,
                &c.multiplier,
                &c.shift,
                io.i8(0),
                io.i8(1),
                io.opt_i32(2),
                io.out_i8(),
            ),
            Conv2d::F32(p) => {
                conv::conv_2d_f32(p, io.f32(0), io.f32(1), io.opt_f32(2), io.out_f32())
            }
            Conv2d::S16(p, c) => conv::conv_2d_s16(
                p,
                &c.multiplier,
                &c.shift,
                io.i16(0),
                io.i8(1),
                io.opt_i64(2),
                io.out_i16(),
            ),
            Conv2d::S16Bias32(p, c) => conv::conv_2d_s16_bias32(
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
