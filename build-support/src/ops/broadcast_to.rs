//! BROADCAST_TO (`kiln_kernels::broadcast_to`): every type TFLM's kernel moves (it copies
//! bytes of any type but strings: int8, uint8, int16, int32, int64, float32, bool), up to 5
//! dimensions. The shape input is INT32 or INT64; TFLM checks it against the output's shape.
//! A constant shape must equal the output's; a runtime one (TFLM reads it in `Prepare`, where
//! its values are not there yet) is taken to be the output's static shape, which then decides
//! the result, once its length is the output's rank.

use super::movement::{Width, same_type};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, unsupported};
use kiln_kernels::broadcast_to as bt;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, TensorId};
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
struct BroadcastTo(bt::Params, Width);

/// A constant integer vector of an INT32 or INT64 tensor (`None` if it is not constant).
pub(super) fn const_ints(cx: &Cx<'_>, t: TensorId, what: &str) -> Result<Option<Vec<i64>>> {
    let tensor = cx.tensor(t);
    if !matches!(tensor.dtype, DType::I32 | DType::I64) {
        return Err(unsupported(format!("the {what} must be INT32 or INT64"))
            .at_tensor(t.0, tensor.name.clone())
            .expected_found("INT32 or INT64", tensor.dtype.name()));
    }
    let Some(data) = tensor.data() else {
        return Ok(None);
    };
    Ok(Some(match tensor.dtype {
        DType::I32 => data
            .chunks_exact(4)
            .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        _ => data
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
    }))
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, shape, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let (_, width) = same_type(cx, input, output, TYPES)?;
    let out_shape = cx.tensor(output).shape.clone();
    let st = cx.tensor(shape);
    if st.shape.len() != 1 || st.shape[0] != out_shape.len() {
        return Err(
            unsupported("the shape input must be 1-D with one entry per output dimension")
                .at_tensor(shape.0, st.name.clone())
                .expected_found(format!("[{}]", out_shape.len()), format!("{:?}", st.shape)),
        );
    }
    if let Some(values) = const_ints(cx, shape, "shape")? {
        let want: Vec<i64> = out_shape.iter().map(|&d| d as i64).collect();
        if values != want {
            return Err(
                unsupported("the shape input differs from the output's shape")
                    .at_tensor(shape.0, st.name.clone())
                    .expected_found(format!("{want:?}"), format!("{values:?}")),
            );
        }
    }
    let in_shape = &cx.tensor(input).shape;
    let p = bt::prepare(in_shape, &out_shape).map_err(|e| {
        prepare_error(e)
            .at_tensor(output.0, cx.tensor(output).name.clone())
            .expected_found(
                format!(
                    "a shape of at most {} dimensions broadcastable from {in_shape:?}",
                    bt::MAX_DIMS
                ),
                format!("{out_shape:?}"),
            )
    })?;
    Ok(cx.step(BroadcastTo(p, width), vec![Operand::Tensor(input)], output))
}

impl Kernel for BroadcastTo {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("broadcast_to", &self.0)];
        call.standard("broadcast_to", "broadcast_to", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.0;
        super::movement::by_width!(self.1, io, |x, o| bt::broadcast_to(p, x, o))
    }
}
