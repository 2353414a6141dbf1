//! SPACE_TO_DEPTH and DEPTH_TO_SPACE (`kiln_kernels::space_to_depth`): int8 and float32,
//! the types TFLM's kernels have (both refuse others in `Prepare`). int8 is a plain move:
//! TFLM does not requantize, so the output's quantization is not read.

use super::movement::{Width, same_type};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, unsupported};
use kiln_kernels::space_to_depth as s2d;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The types TFLM's two kernels accept.
const TYPES: &[DType] = &[DType::F32, DType::I8];

/// Which of the two moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    DepthToSpace,
    SpaceToDepth,
}

/// The generic kernel with the width of its elements.
#[derive(Debug)]
// The width picks the host executor's instance; generated code infers the type.
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct Move(s2d::Params, Direction, Width);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (block, dir) = match cx.op.kind {
        OpKind::DepthToSpace { block_size } => (block_size, Direction::DepthToSpace),
        OpKind::SpaceToDepth { block_size } => (block_size, Direction::SpaceToDepth),
        _ => unreachable!("registered for DEPTH_TO_SPACE and SPACE_TO_DEPTH"),
    };
    let (input, output) = (cx.input(0)?, cx.output()?);
    let (_, width) = same_type(cx, input, output, TYPES)?;
    let shape = &cx.tensor(input).shape;
    if shape.len() != 4 {
        return Err(unsupported("the input must be 4-D (NHWC)")
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found("rank 4", format!("shape {shape:?}")));
    }
    if block < 1 {
        return Err(unsupported("the block size must be positive")
            .expected_found(">= 1", block.to_string()));
    }
    let prepared = match dir {
        Direction::DepthToSpace => s2d::prepare_depth_to_space(shape, block),
        Direction::SpaceToDepth => s2d::prepare_space_to_depth(shape, block),
    };
    let (p, out) = prepared.map_err(|e| {
        let what = match dir {
            Direction::DepthToSpace => "the depth must be a multiple of the block size squared",
            Direction::SpaceToDepth => "the height and width must be multiples of the block size",
        };
        prepare_error(e)
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found(what, format!("shape {shape:?}, block size {block}"))
    })?;
    cx.check_shape(output, &out)?;
    Ok(cx.step(Move(p, dir, width), vec![Operand::Tensor(input)], output))
}

impl Kernel for Move {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("space_to_depth", &self.0)];
        let f = match self.1 {
            Direction::DepthToSpace => "depth_to_space",
            Direction::SpaceToDepth => "space_to_depth",
        };
        call.standard("space_to_depth", f, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.0;
        match self.1 {
            Direction::DepthToSpace => {
                super::movement::by_width!(self.2, io, |x, o| s2d::depth_to_space(p, x, o))
            }
            Direction::SpaceToDepth => {
                super::movement::by_width!(self.2, io, |x, o| s2d::space_to_depth(p, x, o))
            }
        }
    }
}
