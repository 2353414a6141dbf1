//! AVERAGE_POOL_2D and MAX_POOL_2D: int8 and float32 (`kiln_kernels::pooling`).

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::Io;
use crate::lower::{
    Cx, Kernel, Operand, Step, activation, padding, positive, prepare_error, types, unsupported,
};
use kiln_kernels::pooling as pool;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;
use quote::quote;

/// The kernels: average or max, by type.
#[derive(Debug)]
struct Pool {
    max: bool,
    float: bool,
    p: pool::Params,
}

pub(super) fn lower_average(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, false)
}

pub(super) fn lower_max(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, true)
}

fn lower(cx: &Cx<'_>, max: bool) -> Result<Step> {
    let (OpKind::AveragePool2d(o) | OpKind::MaxPool2d(o)) = &cx.op.kind else {
        unreachable!("registered for AVERAGE_POOL_2D and MAX_POOL_2D")
    };
    let (input, output) = (cx.input(0)?, cx.output()?);
    let opts = pool::Options {
        padding: padding(o.padding),
        stride_height: positive(o.stride_h, "stride")?,
        stride_width: positive(o.stride_w, "stride")?,
        filter_height: positive(o.filter_h, "filter height")?,
        filter_width: positive(o.filter_w, "filter width")?,
        activation: activation(o.activation),
    };
    let is = cx.shape4(input)?;
    let (p, float) = match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::I8) => (
            pool::prepare_s8(is, &opts, cx.quant(input)?, cx.quant(output)?)
                .map_err(prepare_error)?,
            false,
        ),
        (DType::F32, DType::F32) => (pool::prepare_f32(is, &opts).map_err(prepare_error)?, true),
        (a, b) => {
            return Err(unsupported("unsupported types for pooling")
                .expected_found("INT8 or FLOAT32", types(a, b)));
        }
    };
    cx.check_shape(
        output,
        &[p.batches, p.output_height, p.output_width, p.depth],
    )?;
    Ok(cx.step(Pool { max, float, p }, vec![Operand::Tensor(input)], output))
}

impl Kernel for Pool {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let function = match (self.max, self.float) {
            (false, false) => "average_pool_s8",
            (false, true) => "average_pool_f32",
            (true, false) => "max_pool_s8",
            (true, true) => "max_pool_f32",
        };
        let pre = [call.params("pooling", &self.p)];
        let statement = call.standard("pooling", function, &pre)?;
        // The average pools return `false` for a window without input cells, which the
        // prepare step rules out.
        Ok(if self.max {
            statement
        } else {
            quote!(let _ = #statement)
        })
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.p;
        match (self.max, self.float) {
            (false, false) => {
                pool::average_pool_s8(p, io.i8(0), io.out_i8());
            }
            (false, true) => {
                pool::average_pool_f32(p, io.f32(0), io.out_f32());
            }
            (true, false) => pool::max_pool_s8(p, io.i8(0), io.out_i8()),
            (true, true) => pool::max_pool_f32(p, io.f32(0), io.out_f32()),
        }
    }
}
