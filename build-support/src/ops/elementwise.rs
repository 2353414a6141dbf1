//! The unary elementwise operators of `kiln_kernels::elementwise`: ABS, SQUARE, SQRT, RSQRT,
//! SIN, COS, LOG (TFLM's `elementwise.cc`), CEIL, FLOOR, ROUND, EXP and ELU, float32, each
//! also in place over its input.

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::Io;
use crate::lower::{Cx, Kernel, Operand, Step, types, unsupported};
#[cfg(feature = "exec")]
use kiln_kernels::elementwise as ew;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// A float32 kernel: its function's name in `kiln_kernels::elementwise` (the in-place form
/// is `<name>_in_place`) and the function, for host execution.
#[derive(Debug)]
struct Float {
    function: &'static str,
    #[cfg(feature = "exec")]
    run: fn(&[f32], &mut [f32]),
}

macro_rules! float_lowerings {
    ($($lower:ident, $op:literal => $function:ident;)*) => {$(
        pub(super) fn $lower(cx: &Cx<'_>) -> Result<Step> {
            lower_float(cx, $op, Float {
                function: stringify!($function),
                #[cfg(feature = "exec")]
                run: ew::$function,
            })
        }
    )*};
}

float_lowerings! {
    lower_ceil, "CEIL" => ceil_f32;
    lower_cos, "COS" => cos_f32;
    lower_exp, "EXP" => exp_f32;
    lower_floor, "FLOOR" => floor_f32;
    lower_log, "LOG" => log_f32;
    lower_round, "ROUND" => round_f32;
    lower_sin, "SIN" => sin_f32;
    lower_sqrt, "SQRT" => sqrt_f32;
    lower_square, "SQUARE" => square_f32;
}

/// ABS: float32.
pub(super) fn lower_abs(cx: &Cx<'_>) -> Result<Step> {
    lower_float(
        cx,
        "ABS",
        Float {
            function: "abs_f32",
            #[cfg(feature = "exec")]
            run: ew::abs_f32,
        },
    )
}

/// RSQRT: float32.
pub(super) fn lower_rsqrt(cx: &Cx<'_>) -> Result<Step> {
    lower_float(
        cx,
        "RSQRT",
        Float {
            function: "rsqrt_f32",
            #[cfg(feature = "exec")]
            run: ew::rsqrt_f32,
        },
    )
}

/// ELU: float32.
pub(super) fn lower_elu(cx: &Cx<'_>) -> Result<Step> {
    lower_float(
        cx,
        "ELU",
        Float {
            function: "elu_f32",
            #[cfg(feature = "exec")]
            run: ew::elu_f32,
        },
    )
}

/// One input, one output of as many elements, both float32 (TFLM: equal types, float32).
fn lower_float(cx: &Cx<'_>, op: &str, kernel: Float) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    if cx.op.inputs.len() != 1 {
        return Err(unsupported(format!("{op} takes one input"))
            .expected_found("1 input", format!("{} inputs", cx.op.inputs.len())));
    }
    cx.check_same_elements(input, output)?;
    match (cx.dtype(input), cx.dtype(output)) {
        (DType::F32, DType::F32) => {
            let mut step = cx.step(kernel, vec![Operand::Tensor(input)], output);
            step.abilities.in_place = vec![0];
            Ok(step)
        }
        (a, b) => Err(unsupported(format!("unsupported types for {op}"))
            .expected_found("FLOAT32 -> FLOAT32", types(a, b))),
    }
}

impl Kernel for Float {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        call.elementwise("elementwise", self.function, &[])
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        (self.run)(io.f32(0), io.out_f32())
    }
}
