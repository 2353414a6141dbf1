//! REVERSE_V2 along constant axes (`kiln_kernels::reverse`): every type TFLM's kernel has
//! (int8, uint8, int16, int32, int64, float32, bool). TFLM wants the axes INT32, at most 8,
//! contiguous once sorted, on at most 6 dimensions; Kiln also wants them constant and
//! distinct (a repeated axis is not contiguous for TFLM either) and at least one.

use super::movement::{Width, same_type};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error};
use kiln_kernels::reverse as rv;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The types TFLM's kernel accepts.
const TYPES: &[DType] = &[
    DType::F32,
    DType::I8,
    DType::U8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::Bool,
];

/// The generic kernel with the width of its elements.
#[derive(Debug)]
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct Reverse(rv::Params, Width);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, axes, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let (_, width) = same_type(cx, input, output, TYPES)?;
    let values = cx.const_i32(axes)?;
    let shape = &cx.tensor(input).shape;
    let p = rv::prepare(shape, &values).map_err(|e| {
        prepare_error(e)
            .at_tensor(axes.0, cx.tensor(axes).name.clone())
            .expected_found(
                format!(
                    "1 to 8 distinct contiguous axes of a tensor of rank at most {}",
                    rv::MAX_DIMS
                ),
                format!("axes {values:?} of shape {shape:?}"),
            )
    })?;
    cx.check_shape(output, shape)?;
    Ok(cx.step(Reverse(p, width), vec![Operand::Tensor(input)], output))
}

impl Kernel for Reverse {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("reverse", &self.0)];
        call.standard("reverse", "reverse", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.0;
        super::movement::by_width!(self.1, io, |x, o| rv::reverse(p, x, o))
    }
}
