//! RESIZE_NEAREST_NEIGHBOR to a constant size, any element type
//! (`kiln_kernels::resize_nearest_neighbor`).

use crate::op::{Call, Cx, Elem, Kernel, Operand, Step, elem, prepare_error, unsupported};
#[cfg(feature = "exec")]
use crate::op::{Io, Slices, SlicesMut, unary_generic};
use kiln_kernels::resize_nearest_neighbor as rnn;
use kiln_planner::diag::Result;
use kiln_planner::ir::{OpKind, TensorId};
use proc_macro2::TokenStream;

/// The generic kernel for one element type.
#[derive(Debug)]
// The element type picks the host executor\'s instance; generated code infers it.
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct ResizeNearestNeighbor(rnn::Params, Elem);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::ResizeNearestNeighbor(o) = &cx.op.kind else {
        unreachable!("registered for RESIZE_NEAREST_NEIGHBOR")
    };
    let (input, output, is, size) = resize_operands(cx)?;
    let dtype = cx.dtype(output);
    let opts = rnn::Options {
        align_corners: o.align_corners,
        half_pixel_centers: o.half_pixel_centers,
    };
    let p = rnn::prepare(is, size, &opts).map_err(prepare_error)?;
    cx.check_shape(
        output,
        &[p.batches, p.output_height, p.output_width, p.depth],
    )?;
    Ok(cx.step(
        ResizeNearestNeighbor(p, elem(dtype)?),
        vec![Operand::Tensor(input)],
        output,
    ))
}

/// The operands both resizes share: the input, the output (of the input's type), the input's
/// shape and the constant output size.
pub(super) fn resize_operands(cx: &Cx<'_>) -> Result<(TensorId, TensorId, [usize; 4], [i32; 2])> {
    let (input, size, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let size: [i32; 2] = cx
        .const_i32(size)?
        .try_into()
        .map_err(|_| unsupported("the size input must hold 2 values"))?;
    let is = cx.shape4(input)?;
    if cx.dtype(input) != cx.dtype(output) {
        return Err(unsupported("resizing keeps the type"));
    }
    Ok((input, output, is, size))
}

impl Kernel for ResizeNearestNeighbor {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("resize_nearest_neighbor", &self.0)];
        call.standard("resize_nearest_neighbor", "resize_nearest_neighbor", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let (x, p) = (io.input(0), &self.0);
        unary_generic(self.1, x, io.out(), |x, o| match (x, o) {
            (Slices::I8(x), SlicesMut::I8(o)) => rnn::resize_nearest_neighbor(p, x, o),
            (Slices::I16(x), SlicesMut::I16(o)) => rnn::resize_nearest_neighbor(p, x, o),
            (Slices::I32(x), SlicesMut::I32(o)) => rnn::resize_nearest_neighbor(p, x, o),
            (Slices::F32(x), SlicesMut::F32(o)) => rnn::resize_nearest_neighbor(p, x, o),
            _ => unreachable!("one element type"),
        })
    }
}
