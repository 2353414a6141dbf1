//! CONCATENATION of inputs of one element type, a copy (`kiln_kernels::concatenation`):
//! float32, int8, int16, int32, int64 and bool, the types the pinned wheel runs. The planner
//! may place the inputs as slices of the output instead, and the operator then emits nothing.
//!
//! Quantization: TFLM's int8 `Prepare` requires every input's scale and zero point to be the
//! output's (the wheel refuses others, so a requantizing concatenation is not something TFLM
//! runs and Kiln refuses it too); its int16 path checks nothing and copies the values
//! unchanged whatever the scales, and so does Kiln (the `concatenation_mixed_int16` cases).

use crate::op::{Call, Cx, Kernel, Operand, Step, kernel_fn, prepare_error, unsupported};
#[cfg(feature = "exec")]
use crate::op::{Io, i16s, i32s, i64s, o16, o32};
use kiln_kernels::concatenation as concat;
use kiln_planner::diag::Result;
use kiln_planner::ir::{self, DType, OpKind, TensorId};
use proc_macro2::TokenStream;
use quote::quote;

use super::movement::{Width, width};

/// The types TFLM's kernel accepts.
const TYPES: &[DType] = &[
    DType::F32,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::Bool,
];

/// The generic kernel for one element width.
#[derive(Debug)]
// The width picks the host executor\'s instance; generated code infers the type.
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct Concatenation(concat::Params, Width);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Concatenation(o) = &cx.op.kind else {
        unreachable!("registered for CONCATENATION")
    };
    let output = cx.output()?;
    if o.activation != ir::Activation::None {
        return Err(unsupported(
            "CONCATENATION with a fused activation is not supported",
        ));
    }
    let rank = cx.tensor(output).shape.len() as i32;
    let axis = if o.axis < 0 { o.axis + rank } else { o.axis };
    let axis = usize::try_from(axis)
        .ok()
        .filter(|&a| a < rank as usize)
        .ok_or_else(|| {
            unsupported("the axis is not a dimension of the output")
                .expected_found(format!("-{rank}..{rank}"), o.axis.to_string())
        })?;
    let inputs: Vec<TensorId> = cx.op.present_inputs().collect();
    let dtype = cx.dtype(output);
    if inputs.iter().any(|&t| cx.dtype(t) != dtype) {
        return Err(unsupported("all inputs must have the output's type"));
    }
    if !TYPES.contains(&dtype) {
        return Err(unsupported("unsupported type for CONCATENATION")
            .expected_found("FLOAT32, INT8, INT16, INT32, INT64 or BOOL", dtype.name()));
    }
    let total: usize = inputs.iter().map(|&t| cx.tensor(t).elements()).sum();
    if total != cx.tensor(output).elements() {
        return Err(unsupported("the inputs do not add up to the output"));
    }
    if dtype == DType::I8 {
        let qs: Vec<_> = inputs.iter().map(|&t| cx.quant(t)).collect::<Result<_>>()?;
        concat::check_quantization_s8(&qs, cx.quant(output)?).map_err(prepare_error)?;
    }
    let p = concat::prepare(&cx.tensor(output).shape, axis).map_err(prepare_error)?;
    // When every output dimension before the axis is 1, each input is a contiguous slice
    // of the output: its producer can write there and the copy is not needed.
    let slices = cx.tensor(output).shape[..axis].iter().product::<usize>() == 1;
    let offsets: Vec<usize> = inputs
        .iter()
        .scan(0, |at, &t| {
            let off = *at;
            *at += cx.tensor(t).bytes();
            Some(off)
        })
        .collect();
    let mut step = cx.step(
        Concatenation(p, width(dtype)),
        inputs.into_iter().map(Operand::Tensor).collect(),
        output,
    );
    if slices {
        step.abilities.concat_slices = Some(offsets);
    }
    Ok(step)
}

impl Kernel for Concatenation {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let p = call.params("concatenation", &self.0);
        let f = kernel_fn("concatenation", "concatenation");
        let (inputs, out) = (call.inputs(), call.output());
        Ok(quote!(#f(#p, &[#(#inputs),*], #out);))
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.0;
        match self.1 {
            Width::W1 => io.with_inputs(|b| b, |v, o| concat::concatenation(p, v, o)),
            Width::W2 => io.with_inputs(i16s, |v, o| concat::concatenation(p, v, o16(o))),
            Width::W4 => io.with_inputs(i32s, |v, o| concat::concatenation(p, v, o32(o))),
            Width::W8 => io.with_inputs(i64s, |v, o| {
                concat::concatenation(p, v, bytemuck::cast_slice_mut(o))
            }),
        }
    }
}
