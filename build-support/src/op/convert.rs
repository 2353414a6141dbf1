//! Conversions from the planner's IR to the kernels' parameter types (activations, padding,
//! element types), with the checks they need.

use super::diag::unsupported;
use super::operand::Elem;
use kiln_kernels as k;
use kiln_planner::diag::Result;
use kiln_planner::ir::{self, DType};

pub(crate) fn activation(a: ir::Activation) -> k::quant::Activation {
    match a {
        ir::Activation::None => k::quant::Activation::None,
        ir::Activation::Relu => k::quant::Activation::Relu,
        ir::Activation::ReluN1To1 => k::quant::Activation::ReluN1To1,
        ir::Activation::Relu6 => k::quant::Activation::Relu6,
        ir::Activation::Tanh => k::quant::Activation::Tanh,
        ir::Activation::SignBit => k::quant::Activation::SignBit,
    }
}

pub(crate) fn padding(p: ir::Padding) -> k::quant::Padding {
    match p {
        ir::Padding::Same => k::quant::Padding::Same,
        ir::Padding::Valid => k::quant::Padding::Valid,
    }
}

pub(crate) fn positive(s: i32, what: &str) -> Result<usize> {
    usize::try_from(s).ok().filter(|&s| s > 0).ok_or_else(|| {
        unsupported(format!("the {what} must be positive")).expected_found(">= 1", s.to_string())
    })
}

/// Bytes as `i8` (same size and alignment, so a plain reinterpretation).
pub(crate) fn bytemuck_i8(bytes: &[u8]) -> &[i8] {
    bytemuck::cast_slice(bytes)
}

pub(crate) fn elem(dtype: DType) -> Result<Elem> {
    Ok(match dtype {
        DType::I8 => Elem::I8,
        DType::I16 => Elem::I16,
        DType::I32 => Elem::I32,
        DType::F32 => Elem::F32,
        other => {
            return Err(unsupported(format!(
                "{other} tensors are not supported here"
            )));
        }
    })
}

pub(crate) fn types(a: DType, b: DType) -> String {
    format!("{a} -> {b}")
}
