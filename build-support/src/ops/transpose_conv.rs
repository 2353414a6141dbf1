//! TRANSPOSE_CONV: int8 (with an arena scratch of int32 accumulators), 16x8 (int16
//! activations, int8 weights, an int64 or int16 bias or none, int64 accumulators) and float32
//! (`kiln_kernels::transpose_conv`). The `output_shape` input (input 0) is a constant, or a
//! runtime INT32 `[4]` tensor: then the output tensor's static shape decides (as TFLM, whose
//! Prepare takes the output tensor's dims), and the generated code checks the runtime values
//! against it under `debug_assertions` only.

#[cfg(feature = "exec")]
use crate::op::{Buffer, Io};
use crate::op::{
    Call, Cx, Kernel, Operand, PerChannel, Step, activation, kernel_fn, padding, positive,
    prepare_error, unsupported,
};
use kiln_kernels::transpose_conv as tc;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;
use quote::quote;

/// The kernels, by types.
#[derive(Debug)]
enum TransposeConv {
    S8(tc::Params, PerChannel),
    /// 16x8, int64 bias or none.
    S16(tc::Params, PerChannel),
    /// 16x8, int16 bias.
    S16Bias16(tc::Params, PerChannel),
    F32(tc::Params),
}

/// A kernel whose `output_shape` is a runtime tensor (its operand after the bias): the call,
/// preceded by a debug check that the runtime values are the static output shape.
#[derive(Debug)]
struct Dynamic(TransposeConv, [i32; 4]);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::TransposeConv(o) = &cx.op.kind else {
        unreachable!("registered for TRANSPOSE_CONV")
    };
    let (shape_t, filter, input, bias) = (cx.input(0)?, cx.input(1)?, cx.input(2)?, cx.op.input(3));
    let output = cx.output()?;
    cx.need_constant(filter)?;
    let dynamic = cx.tensor(shape_t).data().is_none();
    let out_shape: [usize; 4] = if dynamic {
        // A runtime output_shape: the output tensor's static shape decides.
        let t = cx.tensor(shape_t);
        if t.dtype != DType::I32 || t.shape != [4] {
            return Err(unsupported(
                "a runtime TRANSPOSE_CONV output_shape must be an INT32 [4] tensor",
            )
            .at_tensor(shape_t.0, t.name.clone())
            .expected_found("INT32 [4]", format!("{} {:?}", t.dtype.name(), t.shape)));
        }
        cx.shape4(output)?
    } else {
        let out_shape: [usize; 4] = cx
            .const_i32(shape_t)?
            .iter()
            .map(|&d| usize::try_from(d).map_err(|_| unsupported("negative output dimension")))
            .collect::<Result<Vec<_>>>()?
            .try_into()
            .map_err(|_| unsupported("the output shape must have 4 dimensions"))?;
        cx.check_shape(output, &out_shape)?;
        out_shape
    };
    let opts = tc::Options {
        padding: padding(o.padding),
        stride_height: positive(o.stride_h, "stride")?,
        stride_width: positive(o.stride_w, "stride")?,
        activation: activation(o.activation),
    };
    let (is, fs) = (cx.shape4(input)?, cx.shape4(filter)?);
    let kernel = match (cx.dtype(input), cx.dtype(filter), cx.dtype(output)) {
        (DType::I8, DType::I8, DType::I8) => {
            let scales = cx.scales(filter, fs[0])?;
            let q_input = cx.quant(input)?;
            let q_output = cx.quant(output)?;
            let (p, t) = PerChannel::prepare(fs[0], |m, s| {
                tc::prepare_s8(is, fs, out_shape, &opts, q_input, &scales, q_output, m, s)
            })?;
            TransposeConv::S8(p, t)
        }
        (DType::I16, DType::I8, DType::I16) => {
            let scales = cx.scales(filter, fs[0])?;
            let q_input = cx.quant(input)?;
            let q_output = cx.quant(output)?;
            let (p, t) = PerChannel::prepare(fs[0], |m, s| {
                tc::prepare_s16(is, fs, out_shape, &opts, q_input, &scales, q_output, m, s)
            })?;
            match bias.map(|b| cx.dtype(b)) {
                None | Some(DType::I64) => TransposeConv::S16(p, t),
                Some(DType::I16) => TransposeConv::S16Bias16(p, t),
                // TFLM converts an int16 bias, but reads an int32 one as int64 data.
                Some(other) => {
                    return Err(unsupported(
                        "the bias of a 16x8 TRANSPOSE_CONV must be INT64 or INT16 (TFLM reads \
                         an INT32 bias as INT64 data)",
                    )
                    .expected_found("INT64 or INT16", other.name()));
                }
            }
        }
        (DType::F32, DType::F32, DType::F32) => {
            TransposeConv::F32(tc::prepare_f32(is, fs, out_shape, &opts).map_err(prepare_error)?)
        }
        (a, w, b) => {
            return Err(
                unsupported("unsupported types for TRANSPOSE_CONV").expected_found(
                    "INT8 or FLOAT32 input, filter and output, or INT16 with an INT8 filter",
                    format!("{a}, {w} -> {b}"),
                ),
            );
        }
    };
    let bias_types: &[DType] = match kernel {
        TransposeConv::S8(..) => &[DType::I32],
        TransposeConv::S16Bias16(..) => &[DType::I16],
        TransposeConv::S16(..) => &[DType::I64],
        TransposeConv::F32(_) => &[DType::F32],
    };
    cx.check_bias(bias, fs[0], bias_types)?;
    // The int8 kernel accumulates in an int32 arena scratch (the 16x8 ones need none).
    let scratch_bytes = match &kernel {
        TransposeConv::S8(p, _) => tc::scratch_bytes(p),
        _ => 0,
    };
    let bias = match (&kernel, bias) {
        (TransposeConv::S16Bias16(..), Some(b)) => Operand::Tensor(b),
        _ => Operand::Optional(bias),
    };
    let mut inputs = vec![Operand::Tensor(input), Operand::Tensor(filter), bias];
    let mut step = if dynamic {
        let want = out_shape.map(|d| i32::try_from(d).unwrap_or(i32::MAX));
        inputs.push(Operand::Tensor(shape_t));
        cx.step(Dynamic(kernel, want), inputs, output)
    } else {
        cx.step(kernel, inputs, output)
    };
    step.scratch_bytes = scratch_bytes;
    Ok(step)
}

impl Kernel for Dynamic {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let shape = call.input(3);
        let [a, b, c, d] = self.1;
        let run = self.0.emit_call(call)?;
        Ok(quote! {
            debug_assert_eq!(
                #shape, [#a, #b, #c, #d],
                "TRANSPOSE_CONV: the runtime output_shape differs from the output tensor's shape"
            );
            #run
        })
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        debug_assert_eq!(
            io.i32(3),
            self.1,
            "TRANSPOSE_CONV: the runtime output_shape differs from the output tensor's shape"
        );
        self.0.run(io);
    }
}

impl TransposeConv {
    /// The kernel's call on operands 0-2 (input, filter, optional bias).
    fn emit_call(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (pre, function, after) = match self {
            TransposeConv::S8(p, t) => {
                let mut pre = vec![call.params("transpose_conv", p)];
                pre.extend(call.per_channel(t));
                // The int8 kernel takes its accumulators' scratch after the output.
                (pre, "transpose_conv_s8", vec![call.scratch(true)?])
            }
            TransposeConv::S16(p, t) | TransposeConv::S16Bias16(p, t) => {
                let mut pre = vec![call.params("transpose_conv", p)];
                pre.extend(call.per_channel(t));
                let f = if matches!(self, TransposeConv::S16(..)) {
                    "transpose_conv_s16"
                } else {
                    "transpose_conv_s16_bias16"
                };
                (pre, f, vec![])
            }
            TransposeConv::F32(p) => (
                vec![call.params("transpose_conv", p)],
                "transpose_conv_f32",
                vec![],
            ),
        };
        let f = kernel_fn("transpose_conv", function);
        let args = &call.inputs()[..3];
        let out = call.output();
        Ok(quote!(#f(#(#pre,)* #(#args,)* #out #(, #after)*);))
    }
}

impl Kernel for TransposeConv {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        self.emit_call(call)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            TransposeConv::S8(p, c) => {
                let mut scratch = Buffer::zeroed(tc::scratch_bytes(p));
                tc::transpose_conv_s8(
                    p,
                    &c.multiplier,
                    &c.shift,
                    io.i8(0),
                    io.i8(1),
                    io.opt_i32(2),
                    io.out_i8(),
                    scratch.bytes_mut(),
                )
            }
            TransposeConv::S16(p, c) => tc::transpose_conv_s16(
                p,
                &c.multiplier,
                &c.shift,
                io.i16(0),
                io.i8(1),
                io.opt_i64(2),
                io.out_i16(),
            ),
            TransposeConv::S16Bias16(p, c) => tc::transpose_conv_s16_bias16(
                p,
                &c.multiplier,
                &c.shift,
                io.i16(0),
                io.i8(1),
                io.i16(2),
                io.out_i16(),
            ),
            TransposeConv::F32(p) => {
                tc::transpose_conv_f32(p, io.f32(0), io.f32(1), io.opt_f32(2), io.out_f32())
            }
        }
    }
}
