//! RESIZE_BILINEAR to a constant size: int8 and float32 (`kiln_kernels::resize_bilinear`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, unsupported};
use kiln_kernels::resize_bilinear as rb;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels, by type.
#[derive(Debug)]
enum ResizeBilinear {
    S8(rb::Params),
    F32(rb::Params),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::ResizeBilinear(o) = &cx.op.kind else {
        unreachable!("registered for RESIZE_BILINEAR")
    };
    let (input, output, is, size) = super::resize_nearest_neighbor::resize_operands(cx)?;
    let dtype = cx.dtype(output);
    let opts = rb::Options {
        align_corners: o.align_corners,
        half_pixel_centers: o.half_pixel_centers,
    };
    let p = rb::prepare(is, size, &opts).map_err(prepare_error)?;
    cx.check_shape(
        output,
        &[p.batches, p.output_height, p.output_width, p.depth],
    )?;
    let kernel = match dtype {
        DType::I8 => ResizeBilinear::S8(p),
        DType::F32 => ResizeBilinear::F32(p),
        other => {
            return Err(unsupported("unsupported type for RESIZE_BILINEAR")
                .expected_found("INT8 or FLOAT32", other.name()));
        }
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(input)], output))
}

impl Kernel for ResizeBilinear {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (function, p) = match self {
            ResizeBilinear::S8(p) => ("resize_bilinear_s8", p),
            ResizeBilinear::F32(p) => ("resize_bilinear_f32", p),
        };
        let pre = [call.params("resize_bilinear", p)];
        call.standard("resize_bilinear", function, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            ResizeBilinear::S8(p) => rb::resize_bilinear_s8(p, io.i8(0), io.out_i8()),
            ResizeBilinear::F32(p) => rb::resize_bilinear_f32(p, io.f32(0), io.out_f32()),
        }
    }
}
