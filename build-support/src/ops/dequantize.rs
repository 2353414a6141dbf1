//! DEQUANTIZE: int8 -> float32 (`kiln_kernels::dequantize`).

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::Io;
use crate::lower::{Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::dequantize as dq;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The int8 -> float32 kernel.
#[derive(Debug)]
struct DequantizeS8F32(dq::Params);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_same_elements(input, output)?;
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::F32) => {
            DequantizeS8F32(dq::prepare_s8_f32(cx.quant(input)?).map_err(prepare_error)?)
        }
        (a, b) => {
            return Err(unsupported("unsupported types for DEQUANTIZE")
                .expected_found("INT8 -> FLOAT32", types(a, b)));
        }
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(input)], output))
}

impl Kernel for DequantizeS8F32 {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("dequantize", &self.0)];
        call.standard("dequantize", "dequantize_s8_f32", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        dq::dequantize_s8_f32(&self.0, io.i8(0), io.out_f32())
    }
}
