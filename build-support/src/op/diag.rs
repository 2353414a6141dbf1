//! The diagnostics of lowering: `unsupported` for what the kernels do not take, and
//! `prepare_error` for a kernel's `prepare*` refusal (a multiplier out of range named with
//! its exponent and the range the kernel applies).

use kiln_kernels as k;
use kiln_planner::diag::Diagnostic;

/// A number as a person writes it: `0.5`, `1e-45`, `3.4e38`, `3.5681e42` (the shortest `f32`
/// form where `f32` holds it).
pub(crate) fn number(x: f64) -> String {
    let f = x as f32;
    if !f.is_finite() && x.is_finite() {
        format!("{x:.4e}")
    } else if x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{f:e}")
    } else {
        format!("{f}")
    }
}

pub(crate) fn unsupported(message: impl Into<String>) -> Diagnostic {
    Diagnostic::unsupported(message)
}

/// The message of a requantization multiplier out of a kernel's range; lowering
/// (`crate::lower`) adds the tensor whose scale is the most extreme and the scales of the
/// operator's tensors.
pub(crate) const SHIFT_OUT_OF_RANGE: &str =
    "a requantization multiplier is out of the range the kernel can apply";

pub(crate) fn prepare_error(e: k::quant::PrepareError) -> Diagnostic {
    use k::quant::PrepareError as P;
    if let P::ShiftOutOfRange {
        multiplier,
        shift,
        range,
    } = e
    {
        let found = match shift {
            Some(s) => format!("multiplier {} with exponent {s}", number(multiplier)),
            None => format!("multiplier {multiplier}"),
        };
        return unsupported(SHIFT_OUT_OF_RANGE).expected_found(
            format!("a power-of-two exponent in {}..={}", range.min, range.max),
            found,
        );
    }
    unsupported(match e {
        P::ShiftOutOfRange { .. } => unreachable!("handled above"),
        P::MultiplierOutOfRange => "a requantization multiplier is out of the range TFLM accepts",
        P::ActivationRangeOverflow => "the fused activation's range overflows the output type",
        P::InvalidShape => "the tensor shapes do not fit the operator",
        P::UnsupportedQuantization => {
            "the quantization parameters are not supported by TFLM's kernel"
        }
    })
}
