//! STRIDED_SLICE with constant bounds (`kiln_kernels::strided_slice`): float32, int8, int16,
//! int32 and bool, the types the pinned wheel runs (it refuses int64). The lowering turns
//! the slice into contiguous runs (`strided_slice::runs`: one copy per run of whole inner
//! axes instead of one per element).

use super::movement::{Width, same_type};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error};
use kiln_kernels::strided_slice as ss;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The types TFLM's kernel accepts.
const TYPES: &[DType] = &[DType::F32, DType::I8, DType::I16, DType::I32, DType::Bool];

/// The generic kernel for one element width: the build-time runs (`ss::strided_slice_runs`),
/// or the reference kernel's element loop (`reference_kernels`).
#[derive(Debug)]
// The width picks the host executor\'s instance; generated code infers the type.
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
enum StridedSlice {
    Runs(ss::Runs, Width),
    Elements(ss::Params, Width),
}

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
    let (_, width) = same_type(cx, input, output, TYPES)?;
    let kernel = match ss::runs(&p).filter(|_| cx.fast_kernels()) {
        Some(r) => StridedSlice::Runs(r, width),
        None => StridedSlice::Elements(p, width),
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(input)], output))
}

impl Kernel for StridedSlice {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        match self {
            StridedSlice::Runs(r, _) => {
                let pre = [call.params_as(quote::quote!(::kiln::kernels::strided_slice::Runs), r)];
                call.standard("strided_slice", "strided_slice_runs", &pre)
            }
            StridedSlice::Elements(p, _) => {
                let pre = [call.params("strided_slice", p)];
                call.standard("strided_slice", "strided_slice", &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            StridedSlice::Runs(r, w) => {
                super::movement::by_width!(*w, io, |x, o| ss::strided_slice_runs(r, x, o))
            }
            StridedSlice::Elements(p, w) => {
                super::movement::by_width!(*w, io, |x, o| ss::strided_slice(p, x, o))
            }
        }
    }
}
