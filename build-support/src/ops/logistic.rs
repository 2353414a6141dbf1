//! LOGISTIC: int8 (`kiln_kernels::logistic`: a 256-entry table of TFLM's arithmetic made at
//! build time, one load per element, or with `reference_kernels` the arithmetic itself),
//! int16, and float32 (`kiln_kernels::activations_f32`), int8 and float32 also in place
//! over their input.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The kernels, by type.
#[derive(Debug)]
enum Logistic {
    S8(kiln_kernels::logistic::Params),
    /// Int8 through `logistic::table_s8` (256 B of flash, counted with the prepared
    /// constants; identical tables are emitted once).
    S8Table(Box<[i8; 256]>),
    S16(kiln_kernels::logistic::Params16),
    F32,
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_same_elements(input, output)?;
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::I8) => {
            let p = kiln_kernels::logistic::prepare_s8(cx.quant(input)?, cx.quant(output)?)
                .map_err(prepare_error)?;
            // The table costs 256 B of flash and saves about 400 instructions per element
            // on a Cortex-M4 (the fixed-point exp and reciprocal), and a model whose
            // LOGISTICs all use tables does not link the arithmetic's code (about as large):
            // every layer takes it, except for the reference kernels.
            if cx.fast_kernels() {
                Logistic::S8Table(Box::new(kiln_kernels::logistic::table_s8(&p)))
            } else {
                Logistic::S8(p)
            }
        }
        (DType::I16, DType::I16) => Logistic::S16(
            kiln_kernels::logistic::prepare_s16(cx.quant(input)?, cx.quant(output)?).map_err(
                |e| {
                    prepare_error(e).expected_found(
                        "zero points 0 and an output scale of 2^-15 (TFLM's int16 LOGISTIC)",
                        format!(
                            "zero points {} and {}, output scale {}",
                            cx.quant(input).map(|q| q.zero_point).unwrap_or(0),
                            cx.quant(output).map(|q| q.zero_point).unwrap_or(0),
                            cx.quant(output).map(|q| q.scale).unwrap_or(0.0),
                        ),
                    )
                },
            )?,
        ),
        (DType::F32, DType::F32) => Logistic::F32,
        (a, b) => {
            return Err(unsupported("unsupported types for LOGISTIC")
                .expected_found("INT8, INT16 or FLOAT32", types(a, b)));
        }
    };
    let step_kernel_is_s16 = matches!(kernel, Logistic::S16(_));
    let mut step = cx.step(kernel, vec![Operand::Tensor(input)], output);
    // Every kernel here has an in-place form over its input; int16's is not declared (the
    // planner's restatement, `kiln_planner::synthetic::declared`, lists int8 and float32).
    if !step_kernel_is_s16 {
        step.abilities.in_place = vec![0];
    }
    Ok(step)
}

impl Kernel for Logistic {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        match self {
            Logistic::S8(p) => {
                let pre = [call.params("logistic", p)];
                call.elementwise("logistic", "logistic_s8", &pre)
            }
            Logistic::S8Table(table) => {
                let pre = [call.table("TABLE", &table[..])];
                call.elementwise("logistic", "logistic_s8_table", &pre)
            }
            Logistic::S16(p) => {
                let pre = [call.params_as(quote::quote!(::kiln::kernels::logistic::Params16), p)];
                call.elementwise("logistic", "logistic_s16", &pre)
            }
            Logistic::F32 => call.elementwise("activations_f32", "logistic_f32", &[]),
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Logistic::S8(p) => kiln_kernels::logistic::logistic_s8(p, io.i8(0), io.out_i8()),
            Logistic::S8Table(t) => {
                kiln_kernels::logistic::logistic_s8_table(t, io.i8(0), io.out_i8())
            }
            Logistic::S16(p) => kiln_kernels::logistic::logistic_s16(p, io.i16(0), io.out_i16()),
            Logistic::F32 => kiln_kernels::activations_f32::logistic_f32(io.f32(0), io.out_f32()),
        }
    }
}
