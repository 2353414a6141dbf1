//! AVERAGE_POOL_2D and MAX_POOL_2D: int8, int16 and float32; L2_POOL_2D: float32 (TFLM's
//! only type) (`kiln_kernels::pooling`).

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

/// Which pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Average,
    Max,
    L2,
}

/// The kernels: average, max or L2, by type.
#[derive(Debug)]
struct Pool {
    kind: Kind,
    dtype: DType,
    p: pool::Params,
}

pub(super) fn lower_average(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Kind::Average)
}

pub(super) fn lower_max(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Kind::Max)
}

pub(super) fn lower_l2(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Kind::L2)
}

fn lower(cx: &Cx<'_>, kind: Kind) -> Result<Step> {
    let (OpKind::AveragePool2d(o) | OpKind::MaxPool2d(o) | OpKind::L2Pool2d(o)) = &cx.op.kind
    else {
        unreachable!("registered for AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D")
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
    let is = cx.image_shape4(input)?;
    let dtype = cx.dtype(input);
    let mut p = match (kind, dtype, cx.dtype(output)) {
        (Kind::Average | Kind::Max, DType::I8, DType::I8) => {
            pool::prepare_s8(is, &opts, cx.quant(input)?, cx.quant(output)?)
                .map_err(prepare_error)?
        }
        (Kind::Average | Kind::Max, DType::I16, DType::I16) => {
            pool::prepare_s16(is, &opts, cx.quant(input)?, cx.quant(output)?)
                .map_err(prepare_error)?
        }
        (_, DType::F32, DType::F32) => pool::prepare_f32(is, &opts).map_err(prepare_error)?,
        (Kind::L2, a, b) => {
            return Err(unsupported("unsupported types for L2_POOL_2D")
                .expected_found("FLOAT32 (TFLM's only type)", types(a, b)));
        }
        (_, a, b) => {
            return Err(unsupported("unsupported types for pooling")
                .expected_found("INT8, INT16 or FLOAT32", types(a, b)));
        }
    };
    cx.strip_rows(
        [
            &mut p.input_height,
            &mut p.output_height,
            &mut p.padding_height,
        ],
        p.stride_height,
        p.filter_height,
    )?;
    cx.check_shape(
        output,
        &[p.batches, p.output_height, p.output_width, p.depth],
    )?;
    Ok(cx.step(
        Pool { kind, dtype, p },
        vec![Operand::Tensor(input)],
        output,
    ))
}

impl Kernel for Pool {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let function = match (self.kind, self.dtype) {
            (Kind::Average, DType::I8) => "average_pool_s8",
            (Kind::Average, DType::I16) => "average_pool_s16",
            (Kind::Average, _) => "average_pool_f32",
            (Kind::Max, DType::I8) => "max_pool_s8",
            (Kind::Max, DType::I16) => "max_pool_s16",
            (Kind::Max, _) => "max_pool_f32",
            (Kind::L2, _) => "l2_pool_f32",
        };
        let pre = [call.params("pooling", &self.p)];
        let statement = call.standard("pooling", function, &pre)?;
        // The average and L2 pools return `false` for a window without input cells, which
        // the prepare step rules out.
        Ok(if self.kind == Kind::Max {
            statement
        } else {
            quote!(let _ = #statement)
        })
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.p;
        match (self.kind, self.dtype) {
            (Kind::Average, DType::I8) => {
                pool::average_pool_s8(p, io.i8(0), io.out_i8());
            }
            (Kind::Average, DType::I16) => {
                pool::average_pool_s16(p, io.i16(0), io.out_i16());
            }
            (Kind::Average, _) => {
                pool::average_pool_f32(p, io.f32(0), io.out_f32());
            }
            (Kind::Max, DType::I8) => pool::max_pool_s8(p, io.i8(0), io.out_i8()),
            (Kind::Max, DType::I16) => pool::max_pool_s16(p, io.i16(0), io.out_i16()),
            (Kind::Max, _) => pool::max_pool_f32(p, io.f32(0), io.out_f32()),
            (Kind::L2, _) => {
                pool::l2_pool_f32(p, io.f32(0), io.out_f32());
            }
        }
    }
}
