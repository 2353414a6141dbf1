//! STRIDED_SLICE with constant bounds, any element type (`kiln_kernels::strided_slice`).

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::{Io, Slices, SlicesMut, unary_generic};
use crate::lower::{Cx, Elem, Kernel, Operand, Step, elem, prepare_error, unsupported};
use kiln_kernels::strided_slice as ss;
use kiln_planner::diag::Result;
use kiln_planner::ir::OpKind;
use proc_macro2::TokenStream;

/// The generic kernel for one element type.
#[derive(Debug)]
// The element type picks the host executor\'s instance; generated code infers it.
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct StridedSlice(ss::Params, Elem);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::StridedSlice(o) = &cx.op.kind else {
        unreachable!("registered for STRIDED_SLICE")
    };
    let input = cx.input(0)?;
    let (begin, end, strides) = (
        cx.const_i32(cx.input(1)?)?,
        cx.const_i32(cx.input(2)?)?,
        cx.const_i32(cx.input(3)?)?,
    );
    let output = cx.output()?;
    let opts = ss::Options {
        begin_mask: o.begin_mask,
        end_mask: o.end_mask,
        ellipsis_mask: o.ellipsis_mask,
        new_axis_mask: o.new_axis_mask,
        shrink_axis_mask: o.shrink_axis_mask,
        offset: o.offset,
    };
    let shape = &cx.tensor(input).shape;
    let p = ss::prepare(shape, &begin, &end, &strides, &opts).map_err(prepare_error)?;
    let (dims, rank) = ss::output_dims(&p, shape.len(), &opts);
    cx.check_elements(output, dims[..rank].iter().product())?;
    let dtype = cx.dtype(output);
    if cx.dtype(input) != dtype {
        return Err(unsupported("STRIDED_SLICE keeps the type"));
    }
    Ok(cx.step(
        StridedSlice(p, elem(dtype)?),
        vec![Operand::Tensor(input)],
        output,
    ))
}

impl Kernel for StridedSlice {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("strided_slice", &self.0)];
        call.standard("strided_slice", "strided_slice", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let (x, p) = (io.input(0), &self.0);
        unary_generic(self.1, x, io.out(), |x, o| match (x, o) {
            (Slices::I8(x), SlicesMut::I8(o)) => ss::strided_slice(p, x, o),
            (Slices::I16(x), SlicesMut::I16(o)) => ss::strided_slice(p, x, o),
            (Slices::I32(x), SlicesMut::I32(o)) => ss::strided_slice(p, x, o),
            (Slices::F32(x), SlicesMut::F32(o)) => ss::strided_slice(p, x, o),
            _ => unreachable!("one element type"),
        })
    }
}
