//! MIRROR_PAD (REFLECT and SYMMETRIC) with constant INT32 or INT64 paddings
//! (`kiln_kernels::mirror_pad`): int8 and float32, the types TFLM's kernel has (it fails
//! at `Eval` on any other). int8 is a plain move (TFLM does not requantize).

use super::movement::{Width, same_type};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, unsupported};
use kiln_kernels::mirror_pad as mp;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The types TFLM's kernel accepts.
const TYPES: &[DType] = &[DType::F32, DType::I8];

/// The generic kernel with the width of its elements.
#[derive(Debug)]
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct MirrorPad(mp::Params, Width);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::MirrorPad { symmetric } = cx.op.kind else {
        unreachable!("registered for MIRROR_PAD")
    };
    let (input, paddings, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let (_, width) = same_type(cx, input, output, TYPES)?;
    let values: Vec<i64> = match cx.dtype(paddings) {
        DType::I32 => cx.const_i32(paddings)?.into_iter().map(i64::from).collect(),
        DType::I64 => cx
            .need_constant(paddings)?
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
        other => {
            return Err(unsupported("MIRROR_PAD's paddings must be INT32 or INT64")
                .at_tensor(paddings.0, cx.tensor(paddings).name.clone())
                .expected_found("INT32 or INT64", other.name()));
        }
    };
    let shape = &cx.tensor(input).shape;
    let pshape = &cx.tensor(paddings).shape;
    if pshape.as_slice() != [shape.len(), 2] {
        return Err(unsupported("the paddings must be [rank, 2]")
            .at_tensor(paddings.0, cx.tensor(paddings).name.clone())
            .expected_found(format!("[{}, 2]", shape.len()), format!("{pshape:?}")));
    }
    let pairs: Vec<[i64; 2]> = values.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
    let p = mp::prepare(shape, &pairs, symmetric).map_err(|e| {
        let limit = if symmetric { "dim" } else { "dim - 1" };
        prepare_error(e)
            .at_tensor(paddings.0, cx.tensor(paddings).name.clone())
            .expected_found(
                format!("rank 1..={} and paddings in 0..={limit}", mp::MAX_DIMS),
                format!("shape {shape:?}, paddings {pairs:?}"),
            )
    })?;
    cx.check_shape(output, &p.output_dims[mp::MAX_DIMS - shape.len()..])?;
    Ok(cx.step(MirrorPad(p, width), vec![Operand::Tensor(input)], output))
}

impl Kernel for MirrorPad {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("mirror_pad", &self.0)];
        call.standard("mirror_pad", "mirror_pad", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.0;
        super::movement::by_width!(self.1, io, |x, o| mp::mirror_pad(p, x, o))
    }
}
