//! MEAN: int8, int16 and float32 (`kiln_kernels::mean`), over constant axes or a runtime
//! axis tensor the static shapes determine (as SUM's, [`super::reduce::runtime_axes`]).
//! Int8 runs on `mean_s8_fast` (the same bytes) where `mean::fast_s8_fits`, except with
//! `reference_kernels`.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::mean;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels, by type.
#[derive(Debug)]
enum Mean {
    S8(mean::Params),
    S8Fast(mean::Params),
    S16(mean::Params),
    F32(mean::Params),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, axis, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let axes = if cx.tensor(axis).data().is_some() {
        cx.const_i32(axis)?
    } else {
        let OpKind::Mean { keep_dims } = cx.op.kind else {
            unreachable!("registered for MEAN")
        };
        super::reduce::runtime_axes(cx, input, axis, output, keep_dims)?
    };
    let shape = &cx.tensor(input).shape;
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::I8) => {
            let p = mean::prepare_s8(shape, &axes, cx.quant(input)?, cx.quant(output)?)
                .map_err(prepare_error)?;
            if cx.fast_kernels() && mean::fast_s8_fits(&p) {
                Mean::S8Fast(p)
            } else {
                Mean::S8(p)
            }
        }
        (DType::I16, DType::I16) => Mean::S16(
            mean::prepare_s16(shape, &axes, cx.quant(input)?, cx.quant(output)?)
                .map_err(prepare_error)?,
        ),
        (DType::F32, DType::F32) => {
            Mean::F32(mean::prepare_f32(shape, &axes).map_err(prepare_error)?)
        }
        (a, b) => {
            return Err(unsupported("unsupported types for MEAN")
                .expected_found("INT8, INT16 or FLOAT32", types(a, b)));
        }
    };
    let (Mean::S8(p) | Mean::S8Fast(p) | Mean::S16(p) | Mean::F32(p)) = &kernel;
    cx.check_elements(output, p.output_size())?;
    Ok(cx.step(kernel, vec![Operand::Tensor(input)], output))
}

impl Kernel for Mean {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (function, p) = match self {
            Mean::S8(p) => ("mean_s8", p),
            Mean::S8Fast(p) => ("mean_s8_fast", p),
            Mean::S16(p) => ("mean_s16", p),
            Mean::F32(p) => ("mean_f32", p),
        };
        let pre = [call.params("mean", p)];
        call.standard("mean", function, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Mean::S8(p) => mean::mean_s8(p, io.i8(0), io.out_i8()),
            Mean::S8Fast(p) => mean::mean_s8_fast(p, io.i8(0), io.out_i8()),
            Mean::S16(p) => mean::mean_s16(p, io.i16(0), io.out_i16()),
            Mean::F32(p) => mean::mean_f32(p, io.f32(0), io.out_f32()),
        }
    }
}
