//! DEQUANTIZE: int8 and int16 -> float32 (`kiln_kernels::dequantize`; int8 from
//! `dequantize::TABLE_FROM_ELEMENTS` elements on through a build-time table of its 256
//! floats, except with `reference_kernels`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::dequantize as dq;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The kernels, by input type.
#[derive(Debug)]
enum Dequantize {
    S8F32(dq::Params),
    /// Int8 through `dequantize::table_s8_f32` (1 KiB of flash, counted with the prepared
    /// constants; identical tables are emitted once).
    S8F32Table(Box<[u32; 256]>),
    S16F32(dq::Params),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_same_elements(input, output)?;
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::F32) => {
            let p = dq::prepare_s8_f32(cx.quant(input)?).map_err(prepare_error)?;
            if cx.fast_kernels() && cx.tensor(output).elements() >= dq::TABLE_FROM_ELEMENTS {
                Dequantize::S8F32Table(Box::new(dq::table_s8_f32(&p)))
            } else {
                Dequantize::S8F32(p)
            }
        }
        (DType::I16, DType::F32) => {
            Dequantize::S16F32(dq::prepare_s16_f32(cx.quant(input)?).map_err(prepare_error)?)
        }
        (a, b) => {
            return Err(unsupported("unsupported types for DEQUANTIZE")
                .expected_found("INT8 or INT16 -> FLOAT32", types(a, b)));
        }
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(input)], output))
}

impl Kernel for Dequantize {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (p, f) = match self {
            Dequantize::S8F32Table(table) => {
                let pre = [call.table("TABLE", &table[..])];
                return call.standard("dequantize", "dequantize_s8_f32_table", &pre);
            }
            Dequantize::S8F32(p) => (p, "dequantize_s8_f32"),
            Dequantize::S16F32(p) => (p, "dequantize_s16_f32"),
        };
        let pre = [call.params("dequantize", p)];
        call.standard("dequantize", f, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Dequantize::S8F32(p) => dq::dequantize_s8_f32(p, io.i8(0), io.out_f32()),
            Dequantize::S8F32Table(t) => dq::dequantize_s8_f32_table(t, io.i8(0), io.out_f32()),
            Dequantize::S16F32(p) => dq::dequantize_s16_f32(p, io.i16(0), io.out_f32()),
        }
    }
}
