//! SVDF: int8 with int8 or int16 state and time weights, and float32, with its state kept
//! between invocations (`kiln_kernels::svdf`).

use crate::op::{
    Call, Cx, Kernel, Operand, Step, activation, positive, prepare_error, unsupported,
};
#[cfg(feature = "exec")]
use crate::op::{Io, o8, o16, of};
use kiln_kernels::svdf;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels, by types.
#[derive(Debug)]
enum Svdf {
    /// int8 state and time weights: TFLM's loops (the reference kernel).
    S8(svdf::Params),
    /// int8 state and time weights, on the target's fast form where it has one.
    S8Fast(svdf::Params),
    /// int16 state and time weights.
    S8S16(svdf::Params),
    F32(svdf::Params),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Svdf(o) = &cx.op.kind else {
        unreachable!("registered for SVDF")
    };
    let (input, wf, wt, bias) = (cx.input(0)?, cx.input(1)?, cx.input(2)?, cx.op.input(3));
    let state = cx.variable(4)?;
    let output = cx.output()?;
    cx.need_constant(wf)?;
    cx.need_constant(wt)?;
    let [batches, input_size] = cx.dims::<2>(input)?;
    let [num_filters, wf_in] = cx.dims::<2>(wf)?;
    let [wt_filters, memory_size] = cx.dims::<2>(wt)?;
    if wf_in != input_size || wt_filters != num_filters {
        return Err(unsupported("SVDF weight shapes do not match the input"));
    }
    let rank = positive(o.rank, "rank")?;
    let kernel = match (cx.dtype(input), cx.dtype(wt), cx.dtype(state)) {
        (DType::I8, wt_type @ (DType::I8 | DType::I16), s) if s == wt_type => {
            let p = svdf::prepare_s8(
                batches,
                input_size,
                num_filters,
                rank,
                memory_size,
                cx.quant(input)?,
                cx.quant(wf)?.scale,
                cx.quant(wt)?.scale,
                bias.map(|b| cx.quant(b).map(|q| q.scale)).transpose()?,
                cx.quant(state)?,
                cx.quant(output)?,
            )
            .map_err(prepare_error)?;
            if wt_type == DType::I8 && cx.fast_kernels() {
                Svdf::S8Fast(p)
            } else if wt_type == DType::I8 {
                Svdf::S8(p)
            } else {
                Svdf::S8S16(p)
            }
        }
        (DType::F32, DType::F32, DType::F32) => Svdf::F32(
            svdf::prepare_f32(
                batches,
                input_size,
                num_filters,
                rank,
                memory_size,
                activation(o.activation),
            )
            .map_err(prepare_error)?,
        ),
        (a, w, st) => {
            return Err(unsupported("unsupported types for SVDF").expected_found(
                "INT8 input with INT8 or INT16 time weights and state, or FLOAT32",
                format!("input {a}, time weights {w}, state {st}"),
            ));
        }
    };
    let p = match &kernel {
        Svdf::S8(p) | Svdf::S8Fast(p) | Svdf::S8S16(p) | Svdf::F32(p) => p,
    };
    cx.check_elements(state, p.state_len())?;
    cx.check_elements(output, p.batches * p.num_units)?;
    let bias_type = if matches!(kernel, Svdf::F32(_)) {
        DType::F32
    } else {
        DType::I32
    };
    cx.check_bias(bias, p.num_units, &[bias_type])?;
    let mut step = cx.step(
        kernel,
        vec![
            Operand::Tensor(input),
            Operand::Tensor(wf),
            Operand::Tensor(wt),
            Operand::Optional(bias),
        ],
        output,
    );
    step.states = vec![state];
    Ok(step)
}

impl Kernel for Svdf {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (function, p) = match self {
            Svdf::S8(p) => ("svdf_s8", p),
            Svdf::S8Fast(p) => ("svdf_s8_fast", p),
            Svdf::S8S16(p) => ("svdf_s8_s16", p),
            Svdf::F32(p) => ("svdf_f32", p),
        };
        let pre = [call.params("svdf", p)];
        call.standard("svdf", function, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let (x, wf, wt) = (io.input(0), io.input(1), io.input(2));
        let bias = io.opt(3);
        let (states, out) = io.states_and_out();
        let state = states[0].bytes_mut();
        use crate::op::{f32s, i8s, i16s, i32s};
        match self {
            Svdf::S8(p) | Svdf::S8Fast(p) => (if matches!(self, Svdf::S8Fast(_)) {
                svdf::svdf_s8_fast
            } else {
                svdf::svdf_s8
            })(
                p,
                i8s(x),
                i8s(wf),
                i8s(wt),
                bias.map(i32s),
                o8(state),
                o8(out),
            ),
            Svdf::S8S16(p) => svdf::svdf_s8_s16(
                p,
                i8s(x),
                i8s(wf),
                i16s(wt),
                bias.map(i32s),
                o16(state),
                o8(out),
            ),
            Svdf::F32(p) => svdf::svdf_f32(
                p,
                f32s(x),
                f32s(wf),
                f32s(wt),
                bias.map(f32s),
                of(state),
                of(out),
            ),
        }
    }
}
