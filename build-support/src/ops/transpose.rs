//! TRANSPOSE by a constant permutation, any element type (`kiln_kernels::transpose`).

use crate::op::{Call, Cx, Elem, Kernel, Operand, Step, elem, prepare_error, unsupported};
#[cfg(feature = "exec")]
use crate::op::{Io, Slices, SlicesMut, unary_generic};
use kiln_kernels::transpose;
use kiln_planner::diag::Result;
use proc_macro2::TokenStream;

/// The generic kernel for one element type.
#[derive(Debug)]
// The element type picks the host executor\'s instance; generated code infers it.
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct Transpose(transpose::Params, Elem);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, perm, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let perm = cx.const_i32(perm)?;
    let p = transpose::prepare(&cx.tensor(input).shape, &perm).map_err(prepare_error)?;
    let dtype = cx.dtype(output);
    if cx.dtype(input) != dtype {
        return Err(unsupported("TRANSPOSE keeps the type"));
    }
    cx.check_elements(output, cx.tensor(input).elements())?;
    Ok(cx.step(
        Transpose(p, elem(dtype)?),
        vec![Operand::Tensor(input)],
        output,
    ))
}

impl Kernel for Transpose {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("transpose", &self.0)];
        call.standard("transpose", "transpose", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let (x, p) = (io.input(0), &self.0);
        unary_generic(self.1, x, io.out(), |x, o| match (x, o) {
            (Slices::I8(x), SlicesMut::I8(o)) => transpose::transpose(p, x, o),
            (Slices::I16(x), SlicesMut::I16(o)) => transpose::transpose(p, x, o),
            (Slices::I32(x), SlicesMut::I32(o)) => transpose::transpose(p, x, o),
            (Slices::F32(x), SlicesMut::F32(o)) => transpose::transpose(p, x, o),
            _ => unreachable!("one element type"),
        })
    }
}
