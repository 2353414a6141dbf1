//! SOFTMAX: int8 -> int8, int8 -> int16 (with a build-time table of TFLM's `exp` of every
//! difference from the row maximum, `softmax::exp_table_s8`, except with
//! `reference_kernels`), int16 (with its exp and 1/(1+x) tables) and float32
//! (`kiln_kernels::softmax`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::softmax as sm;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels, by types.
#[derive(Debug)]
enum Softmax {
    S8(sm::Params),
    S8S16(sm::Params),
    /// Int8 input with its `exp` table (at most 1 KiB of flash, counted with the prepared
    /// constants; identical tables are emitted once); `true`: int16 output.
    S8Table(sm::Params, Vec<i32>, bool),
    S16(sm::Params, Vec<i16>, Vec<i16>),
    F32(sm::Params),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Softmax { beta } = cx.op.kind else {
        unreachable!("registered for SOFTMAX")
    };
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_same_elements(input, output)?;
    let shape = &cx.tensor(input).shape;
    let depth = *shape
        .last()
        .filter(|&&d| d > 0)
        .ok_or_else(|| unsupported("SOFTMAX needs a non-empty last dimension"))?;
    let outer = cx.tensor(input).elements() / depth;
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::I8) => Softmax::S8(
            sm::prepare_s8(outer, depth, cx.quant(input)?, cx.quant(output)?, beta)
                .map_err(prepare_error)?,
        ),
        (DType::I8, DType::I16) => Softmax::S8S16(
            sm::prepare_s8_s16(outer, depth, cx.quant(input)?, cx.quant(output)?, beta)
                .map_err(prepare_error)?,
        ),
        (DType::I16, DType::I16) => {
            let mut exp = vec![0; sm::LUT_SIZE];
            let mut recip = vec![0; sm::LUT_SIZE];
            let p = sm::prepare_s16(
                outer,
                depth,
                cx.quant(input)?,
                cx.quant(output)?,
                beta,
                &mut exp,
                &mut recip,
            )
            .map_err(prepare_error)?;
            Softmax::S16(p, exp, recip)
        }
        (DType::F32, DType::F32) => {
            Softmax::F32(sm::prepare_f32(outer, depth, beta).map_err(prepare_error)?)
        }
        (a, b) => {
            return Err(unsupported("unsupported types for SOFTMAX")
                .expected_found("INT8 -> INT8, INT8 -> INT16 or FLOAT32", types(a, b)));
        }
    };
    // The table costs at most 1 KiB and saves two fixed-point `exp`s per element (about
    // 250 instructions each on a Cortex-M4): every int8 layer takes it.
    let kernel = match kernel {
        Softmax::S8(p) | Softmax::S8S16(p) if cx.fast_kernels() => {
            let mut table = [0; 256];
            let len = sm::exp_table_s8(&p, &mut table);
            // A table of at least one entry (`exp(0)` is never 0).
            let wide = matches!(kernel, Softmax::S8S16(_));
            Softmax::S8Table(p, table[..len.max(1)].to_vec(), wide)
        }
        other => other,
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(input)], output))
}

impl Kernel for Softmax {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (function, p) = match self {
            Softmax::S8Table(p, exp, wide) => {
                let pre = [call.params("softmax", p), call.table("EXP", exp)];
                let f = if *wide {
                    "softmax_s8_s16_table"
                } else {
                    "softmax_s8_table"
                };
                return call.standard("softmax", f, &pre);
            }
            Softmax::S8(p) => ("softmax_s8", p),
            Softmax::S8S16(p) => ("softmax_s8_s16", p),
            Softmax::S16(p, ..) => ("softmax_s16", p),
            Softmax::F32(p) => ("softmax_f32", p),
        };
        let mut pre = vec![call.params("softmax", p)];
        if let Softmax::S16(_, exp, recip) = self {
            pre.push(call.table("EXP_LUT", exp));
            pre.push(call.table("ONE_OVER_ONE_PLUS_X_LUT", recip));
        }
        call.standard("softmax", function, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Softmax::S8(p) => sm::softmax_s8(p, io.i8(0), io.out_i8()),
            Softmax::S8Table(p, e, false) => sm::softmax_s8_table(p, e, io.i8(0), io.out_i8()),
            Softmax::S8Table(p, e, true) => sm::softmax_s8_s16_table(p, e, io.i8(0), io.out_i16()),
            Softmax::S8S16(p) => sm::softmax_s8_s16(p, io.i8(0), io.out_i16()),
            Softmax::S16(p, e, r) => sm::softmax_s16(p, e, r, io.i16(0), io.out_i16()),
            Softmax::F32(p) => sm::softmax_f32(p, io.f32(0), io.out_f32()),
        }
    }
}
