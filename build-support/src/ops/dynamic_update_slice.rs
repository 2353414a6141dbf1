//! DYNAMIC_UPDATE_SLICE with runtime start indices (`kiln_kernels::dynamic_update_slice`):
//! float32, int8, int16 and int32, the types the pinned wheel's kernel has (its int16 is not
//! in the TFLM source Kiln read, which has float32, int8 and int32: the wheel wins); start
//! indices INT32 or INT64, one per dimension, clamped at run time as TFLM does. int8 and int16
//! are plain moves (no requantization: TFLM ignores the quantization).

use super::movement::{Width, same_type};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, unsupported};
use kiln_kernels::dynamic_update_slice as dus;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The types TFLM's kernel accepts.
const TYPES: &[DType] = &[DType::F32, DType::I8, DType::I16, DType::I32];

/// The generic kernel: element width, and whether the indices are int64.
#[derive(Debug)]
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct DynamicUpdateSlice(dus::Params, Width, bool);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (operand, update, start, output) = (cx.input(0)?, cx.input(1)?, cx.input(2)?, cx.output()?);
    let (_, w) = same_type(cx, operand, output, TYPES)?;
    same_type(cx, update, output, TYPES)?;
    let st = cx.tensor(start);
    let wide = match st.dtype {
        DType::I32 => false,
        DType::I64 => true,
        other => {
            return Err(unsupported("the start indices must be INT32 or INT64")
                .at_tensor(start.0, st.name.clone())
                .expected_found("INT32 or INT64", other.name()));
        }
    };
    let shape = &cx.tensor(operand).shape;
    if st.shape.as_slice() != [shape.len()] {
        return Err(
            unsupported("the start indices must be 1-D, one per operand dimension")
                .at_tensor(start.0, st.name.clone())
                .expected_found(format!("[{}]", shape.len()), format!("{:?}", st.shape)),
        );
    }
    let ushape = &cx.tensor(update).shape;
    let p = dus::prepare(shape, ushape).map_err(|e| {
        prepare_error(e)
            .at_tensor(update.0, cx.tensor(update).name.clone())
            .expected_found(
                format!(
                    "the operand's rank (at most {}) and no larger dimension",
                    dus::MAX_DIMS
                ),
                format!("update {ushape:?} of operand {shape:?}"),
            )
    })?;
    cx.check_shape(output, &shape.clone())?;
    Ok(cx.step(
        DynamicUpdateSlice(p, w, wide),
        vec![
            Operand::Tensor(operand),
            Operand::Tensor(update),
            Operand::Tensor(start),
        ],
        output,
    ))
}

impl Kernel for DynamicUpdateSlice {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("dynamic_update_slice", &self.0)];
        call.standard("dynamic_update_slice", "dynamic_update_slice", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.0;
        macro_rules! go {
            ($view:ident, $out:ident) => {
                if self.2 {
                    let (a, b, s) = (io.$view(0), io.$view(1), io.i64(2));
                    dus::dynamic_update_slice(p, a, b, s, io.$out())
                } else {
                    let (a, b, s) = (io.$view(0), io.$view(1), io.i32(2));
                    dus::dynamic_update_slice(p, a, b, s, io.$out())
                }
            };
        }
        match self.1 {
            Width::W1 => go!(u8, out_u8),
            Width::W2 => go!(i16, out_i16),
            Width::W4 => go!(i32, out_i32),
            Width::W8 => go!(i64, out_i64),
        }
    }
}
