//! TRANSPOSE_CONV: int8 (with an arena scratch of int32 accumulators) and float32
//! (`kiln_kernels::transpose_conv`).

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::{Buffer, Io};
use crate::lower::{
    Cx, Kernel, Operand, PerChannel, Step, activation, padding, positive, prepare_error,
    unsupported,
};
use kiln_kernels::transpose_conv as tc;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels, by types.
#[derive(Debug)]
enum TransposeConv {
    S8(tc::Params, PerChannel),
    F32(tc::Params),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::TransposeConv(o) = &cx.op.kind else {
        unreachable!("registered for TRANSPOSE_CONV")
    };
    let (shape_t, filter, input, bias) = (cx.input(0)?, cx.input(1)?, cx.input(2)?, cx.op.input(3));
    let output = cx.output()?;
    cx.need_constant(filter)?;
    let out_shape: [usize; 4] = cx
        .const_i32(shape_t)?
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| unsupported("negative output dimension")))
        .collect::<Result<Vec<_>>>()?
        .try_into()
        .map_err(|_| unsupported("the output shape must have 4 dimensions"))?;
    cx.check_shape(output, &out_shape)?;
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
        (DType::F32, DType::F32, DType::F32) => {
            TransposeConv::F32(tc::prepare_f32(is, fs, out_shape, &opts).map_err(prepare_error)?)
        }
        (a, w, b) => {
            return Err(
                unsupported("unsupported types for TRANSPOSE_CONV").expected_found(
                    "INT8 or FLOAT32 input, filter and output",
                    format!("{a}, {w} -> {b}"),
                ),
            );
        }
    };
    let bias_types: &[DType] = match kernel {
        TransposeConv::S8(..) => &[DType::I32],
        TransposeConv::F32(_) => &[DType::F32],
    };
    cx.check_bias(bias, fs[0], bias_types)?;
    // The int8 kernel accumulates in an int32 arena scratch.
    let scratch_bytes = match &kernel {
        TransposeConv::S8(p, _) => tc::scratch_bytes(p),
        TransposeConv::F32(_) => 0,
    };
    let mut step = cx.step(
        kernel,
        vec![
            Operand::Tensor(input),
            Operand::Tensor(filter),
            Operand::Optional(bias),
        ],
        output,
    );
    step.scratch_bytes = scratch_bytes;
    Ok(step)
}

impl Kernel for TransposeConv {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        match self {
            TransposeConv::S8(p, t) => {
                let mut pre = vec![call.params("transpose_conv", p)];
                pre.extend(call.per_channel(t));
                // The int8 kernel takes its accumulators' scratch after the output.
                let scratch = call.scratch(true)?;
                call.standard_with("transpose_conv", "transpose_conv_s8", &pre, &[scratch])
            }
            TransposeConv::F32(p) => {
                let pre = [call.params("transpose_conv", p)];
                call.standard("transpose_conv", "transpose_conv_f32", &pre)
            }
        }
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
            TransposeConv::F32(p) => {
                tc::transpose_conv_f32(p, io.f32(0), io.f32(1), io.opt_f32(2), io.out_f32())
            }
        }
    }
}
