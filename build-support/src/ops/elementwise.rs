//! The unary elementwise operators of `kiln_kernels::elementwise`: ABS, SQUARE, SQRT, RSQRT,
//! SIN, COS, LOG (TFLM's `elementwise.cc`), CEIL, FLOOR, ROUND, EXP and ELU, float32; ABS
//! int8 and int16 (quantized with zero points 0, or without quantization), RSQRT int8 and
//! ELU int8 (its lookup table built at build time). Every kernel has an in-place form, and
//! the planner may run it over its dying input.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::elementwise as ew;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, Quantization};
use proc_macro2::TokenStream;
use quote::quote;

/// Every kernel here has an in-place form (`<function>_in_place`, which `Call::elementwise`
/// emits when the plan overwrites the input).
fn in_place(mut step: Step) -> Step {
    step.abilities.in_place = vec![0];
    step
}

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

/// The quantized kernels.
#[derive(Debug)]
enum Quantized {
    AbsS8(ew::AbsParams),
    AbsS16(ew::AbsParams),
    AbsS16Raw,
    EluS8(Box<[i8; 256]>),
    RsqrtS8(ew::RsqrtParams),
}

/// ABS: float32, int8, int16 (quantized with zero points 0, or without quantization).
pub(super) fn lower_abs(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::I8) => Quantized::AbsS8(
            ew::prepare_abs(cx.quant(input)?, cx.quant(output)?, false).map_err(prepare_error)?,
        ),
        (DType::I16, DType::I16) if cx.tensor(input).quant == Quantization::None => {
            Quantized::AbsS16Raw
        }
        (DType::I16, DType::I16) => {
            let (qi, qo) = (cx.quant(input)?, cx.quant(output)?);
            for (t, q) in [(input, qi), (output, qo)] {
                if q.zero_point != 0 {
                    return Err(
                        unsupported("TFLM's quantized int16 ABS needs zero points 0")
                            .at_tensor(t.0, cx.tensor(t).name.clone())
                            .expected_found("zero point 0", format!("zero point {}", q.zero_point)),
                    );
                }
            }
            Quantized::AbsS16(ew::prepare_abs(qi, qo, true).map_err(prepare_error)?)
        }
        _ => {
            return lower_float(
                cx,
                "ABS",
                Float {
                    function: "abs_f32",
                    #[cfg(feature = "exec")]
                    run: ew::abs_f32,
                },
            );
        }
    };
    lower_quantized(cx, kernel)
}

/// One input, one output of as many elements (no in-place declaration, see [`lower_float`]).
fn lower_quantized(cx: &Cx<'_>, kernel: Quantized) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    if cx.op.inputs.len() != 1 {
        return Err(unsupported("the operator takes one input")
            .expected_found("1 input", format!("{} inputs", cx.op.inputs.len())));
    }
    cx.check_same_elements(input, output)?;
    Ok(in_place(cx.step(
        kernel,
        vec![Operand::Tensor(input)],
        output,
    )))
}

impl Kernel for Quantized {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let abs_params = quote!(::kiln::kernels::elementwise::AbsParams);
        match self {
            Quantized::AbsS8(p) => {
                let pre = [call.params_as(abs_params, p)];
                call.elementwise("elementwise", "abs_s8", &pre)
            }
            Quantized::AbsS16(p) => {
                let pre = [call.params_as(abs_params, p)];
                call.elementwise("elementwise", "abs_s16", &pre)
            }
            Quantized::AbsS16Raw => call.elementwise("elementwise", "abs_s16_raw", &[]),
            Quantized::RsqrtS8(p) => {
                let pre = [call.params_as(quote!(::kiln::kernels::elementwise::RsqrtParams), p)];
                call.elementwise("elementwise", "rsqrt_s8", &pre)
            }
            Quantized::EluS8(table) => {
                let pre = [call.table("TABLE", &table[..])];
                call.elementwise("elementwise", "elu_s8", &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Quantized::AbsS8(p) => ew::abs_s8(p, io.i8(0), io.out_i8()),
            Quantized::AbsS16(p) => ew::abs_s16(p, io.i16(0), io.out_i16()),
            Quantized::AbsS16Raw => ew::abs_s16_raw(io.i16(0), io.out_i16()),
            Quantized::EluS8(table) => ew::elu_s8(table, io.i8(0), io.out_i8()),
            Quantized::RsqrtS8(p) => ew::rsqrt_s8(p, io.i8(0), io.out_i8()),
        }
    }
}

/// RSQRT: float32 and int8 (TFLM fails `Invoke` on an int8 input below the input zero
/// point; Kiln's kernel computes its arithmetic for it, see `kiln_kernels::elementwise`).
pub(super) fn lower_rsqrt(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    if (cx.dtype(input), cx.dtype(output)) == (DType::I8, DType::I8) {
        let p = ew::prepare_rsqrt_s8(cx.quant(input)?, cx.quant(output)?).map_err(prepare_error)?;
        return lower_quantized(cx, Quantized::RsqrtS8(p));
    }
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

/// ELU: float32 and int8 (TFLM's table).
pub(super) fn lower_elu(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    if (cx.dtype(input), cx.dtype(output)) == (DType::I8, DType::I8) {
        let table = ew::prepare_elu_s8(cx.quant(input)?, cx.quant(output)?);
        return lower_quantized(cx, Quantized::EluS8(Box::new(table)));
    }
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
        // No in-place declaration: the planner's restatement of the abilities
        // (`kiln_planner::synthetic::declared`, which `tests/declared_abilities.rs` holds the
        // modules to) has none for these operators yet; the kernels have their in-place forms.
        (DType::F32, DType::F32) => Ok(in_place(cx.step(
            kernel,
            vec![Operand::Tensor(input)],
            output,
        ))),
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
