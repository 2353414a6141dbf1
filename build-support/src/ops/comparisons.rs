//! EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL: two inputs of one type, a
//! BOOL output, broadcasting or not (`kiln_kernels::comparisons`).
//!
//! Types as TFLM's Eval (`comparisons.cc`, checked against the pinned wheel): float32, int32,
//! int64 and int8 for all six, bool for EQUAL/NOT_EQUAL. int8 compares requantized values
//! (the parameters from `comparisons::prepare`).
//!
//! int16 GREATER is refused although TFLM's Eval has a case for it: the pinned wheel's
//! Prepare computes the requantization parameters for int8 only, so its int16 GREATER
//! compares with a zero multiplier (every requantized value 0, the output always false, from
//! parameters it never set); the source's Prepare also covers int16 (the wheel wins).

use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, unsupported};
#[cfg(feature = "exec")]
use crate::op::{Io, f32s, i8s, i32s, i64s};
use kiln_kernels::broadcast::Broadcast;
use kiln_kernels::comparisons::Params;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    Equal,
    NotEqual,
    Greater,
    GreaterEqual,
    Less,
    LessEqual,
}

impl Cmp {
    fn function(self) -> &'static str {
        match self {
            Cmp::Equal => "equal",
            Cmp::NotEqual => "not_equal",
            Cmp::Greater => "greater",
            Cmp::GreaterEqual => "greater_equal",
            Cmp::Less => "less",
            Cmp::LessEqual => "less_equal",
        }
    }

    fn op_name(self) -> &'static str {
        match self {
            Cmp::Equal => "EQUAL",
            Cmp::NotEqual => "NOT_EQUAL",
            Cmp::Greater => "GREATER",
            Cmp::GreaterEqual => "GREATER_EQUAL",
            Cmp::Less => "LESS",
            Cmp::LessEqual => "LESS_EQUAL",
        }
    }

    /// The input types TFLM's Eval of this comparison has a case for.
    fn types(self) -> &'static [DType] {
        match self {
            Cmp::Equal | Cmp::NotEqual => {
                &[DType::F32, DType::I8, DType::I32, DType::I64, DType::Bool]
            }
            _ => &[DType::F32, DType::I8, DType::I32, DType::I64],
        }
    }
}

/// One comparison kernel: which, the input type, the quantized parameters (int8/int16) and
/// the broadcast (`None`: equal shapes).
#[derive(Debug)]
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct Compare {
    cmp: Cmp,
    dtype: DType,
    params: Option<Params>,
    broadcast: Option<Broadcast>,
}

pub(super) fn lower_equal(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Cmp::Equal)
}

pub(super) fn lower_not_equal(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Cmp::NotEqual)
}

pub(super) fn lower_greater(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Cmp::Greater)
}

pub(super) fn lower_greater_equal(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Cmp::GreaterEqual)
}

pub(super) fn lower_less(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Cmp::Less)
}

pub(super) fn lower_less_equal(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Cmp::LessEqual)
}

fn lower(cx: &Cx<'_>, cmp: Cmp) -> Result<Step> {
    let (a, b, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let dtype = cx.dtype(a);
    if dtype == DType::I16 && cmp == Cmp::Greater {
        return Err(unsupported(
            "int16 GREATER is not supported: the pinned TFLM does not prepare its \
             requantization (its output does not depend on the inputs)",
        )
        .at_tensor(a.0, cx.tensor(a).name.clone()));
    }
    let names: Vec<&str> = cmp.types().iter().map(|t| t.name()).collect();
    if !cmp.types().contains(&dtype) {
        return Err(unsupported(format!(
            "{} does not support this input type",
            cmp.op_name()
        ))
        .at_tensor(a.0, cx.tensor(a).name.clone())
        .expected_found(names.join(" or "), dtype.name()));
    }
    if cx.dtype(b) != dtype || cx.dtype(output) != DType::Bool {
        return Err(
            unsupported("both inputs must have one type and the output must be BOOL")
                .expected_found(
                    format!("{dtype}, {dtype} -> BOOL"),
                    format!("{}, {} -> {}", dtype, cx.dtype(b), cx.dtype(output)),
                ),
        );
    }
    let params = match dtype {
        DType::I8 => Some(
            kiln_kernels::comparisons::prepare(cx.quant(a)?, cx.quant(b)?).map_err(|e| {
                prepare_error(e).expected_found(
                    "input scales in (0, 1)",
                    format!(
                        "scales {} and {}",
                        cx.quant(a).map_or(f32::NAN, |q| q.scale),
                        cx.quant(b).map_or(f32::NAN, |q| q.scale)
                    ),
                )
            })?,
        ),
        _ => None,
    };
    let kernel = Compare {
        cmp,
        dtype,
        params,
        broadcast: cx.broadcast(a, b, output)?,
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(a), Operand::Tensor(b)], output))
}

impl Kernel for Compare {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let mut name = self.cmp.function().to_string();
        let mut pre = Vec::new();
        if let Some(p) = &self.params {
            name.push_str("_quantized");
            pre.push(call.params("comparisons", p));
        }
        if let Some(b) = &self.broadcast {
            name.push_str("_broadcast");
            pre.push(call.broadcast(b));
        }
        call.standard("comparisons", &name, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use kiln_kernels::comparisons as c;
        let (x, y) = (io.input(0), io.input(1));
        let out = io.out_u8();
        macro_rules! plain {
            ($view:ident) => {{
                let (x, y, b) = ($view(x), $view(y), &self.broadcast);
                match (self.cmp, b) {
                    (Cmp::Equal, None) => c::equal(x, y, out),
                    (Cmp::Equal, Some(b)) => c::equal_broadcast(b, x, y, out),
                    (Cmp::NotEqual, None) => c::not_equal(x, y, out),
                    (Cmp::NotEqual, Some(b)) => c::not_equal_broadcast(b, x, y, out),
                    (Cmp::Greater, None) => c::greater(x, y, out),
                    (Cmp::Greater, Some(b)) => c::greater_broadcast(b, x, y, out),
                    (Cmp::GreaterEqual, None) => c::greater_equal(x, y, out),
                    (Cmp::GreaterEqual, Some(b)) => c::greater_equal_broadcast(b, x, y, out),
                    (Cmp::Less, None) => c::less(x, y, out),
                    (Cmp::Less, Some(b)) => c::less_broadcast(b, x, y, out),
                    (Cmp::LessEqual, None) => c::less_equal(x, y, out),
                    (Cmp::LessEqual, Some(b)) => c::less_equal_broadcast(b, x, y, out),
                }
            }};
        }
        macro_rules! quantized {
            ($view:ident, $p:expr) => {{
                let (p, x, y, b) = ($p, $view(x), $view(y), &self.broadcast);
                match (self.cmp, b) {
                    (Cmp::Equal, None) => c::equal_quantized(p, x, y, out),
                    (Cmp::Equal, Some(b)) => c::equal_quantized_broadcast(p, b, x, y, out),
                    (Cmp::NotEqual, None) => c::not_equal_quantized(p, x, y, out),
                    (Cmp::NotEqual, Some(b)) => c::not_equal_quantized_broadcast(p, b, x, y, out),
                    (Cmp::Greater, None) => c::greater_quantized(p, x, y, out),
                    (Cmp::Greater, Some(b)) => c::greater_quantized_broadcast(p, b, x, y, out),
                    (Cmp::GreaterEqual, None) => c::greater_equal_quantized(p, x, y, out),
                    (Cmp::GreaterEqual, Some(b)) => {
                        c::greater_equal_quantized_broadcast(p, b, x, y, out)
                    }
                    (Cmp::Less, None) => c::less_quantized(p, x, y, out),
                    (Cmp::Less, Some(b)) => c::less_quantized_broadcast(p, b, x, y, out),
                    (Cmp::LessEqual, None) => c::less_equal_quantized(p, x, y, out),
                    (Cmp::LessEqual, Some(b)) => c::less_equal_quantized_broadcast(p, b, x, y, out),
                }
            }};
        }
        fn u8s(b: &[u8]) -> &[u8] {
            b
        }
        match (self.dtype, &self.params) {
            (DType::I8, Some(p)) => quantized!(i8s, p),
            (DType::F32, _) => plain!(f32s),
            (DType::I32, _) => plain!(i32s),
            (DType::I64, _) => plain!(i64s),
            _ => plain!(u8s),
        }
    }
}
