//! Shared by the data-movement operators whose kernels are generic over the element type
//! (SPACE_TO_DEPTH, DEPTH_TO_SPACE, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, MIRROR_PAD,
//! REVERSE_V2, ...): the type check, and the host executor's instance chosen by element
//! width (moving elements does not depend on what they mean, so `u8` runs int8 and bool,
//! `i32` runs int32 and float32 bit for bit; generated code uses each tensor's own type).

use crate::op::{Cx, unsupported};
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, TensorId};

/// The width of the elements a generic kernel moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// Only the host executor reads it; generated code infers the type.
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
pub(super) enum Width {
    W1,
    W2,
    W4,
    W8,
}

/// Checks that `input` and `output` have one type, one of `accepted` (the types TFLM's
/// kernel has), and returns that type and its width.
pub(super) fn same_type(
    cx: &Cx<'_>,
    input: TensorId,
    output: TensorId,
    accepted: &[DType],
) -> Result<(DType, Width)> {
    let (a, b) = (cx.dtype(input), cx.dtype(output));
    let names = || {
        accepted
            .iter()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if a != b || !accepted.contains(&a) {
        let t = cx.tensor(if accepted.contains(&a) { output } else { input });
        let tid = if accepted.contains(&a) { output } else { input };
        return Err(unsupported(format!(
            "unsupported types for {}: input and output must have one of TFLM's types",
            cx.op.kind.name()
        ))
        .at_tensor(tid.0, t.name.clone())
        .expected_found(names(), format!("{a} -> {b}")));
    }
    Ok((a, width(a)))
}

/// The width of a type's elements.
pub(super) fn width(t: DType) -> Width {
    match t.size() {
        1 => Width::W1,
        2 => Width::W2,
        4 => Width::W4,
        _ => Width::W8,
    }
}

/// Runs `$body` with `$x` (input 0) and `$o` (the output) viewed as elements of width `$w`.
#[cfg(feature = "exec")]
macro_rules! by_width {
    ($w:expr, $io:expr, |$x:ident, $o:ident| $body:expr) => {{
        use crate::ops::movement::Width;
        match $w {
            Width::W1 => {
                let $x = $io.u8(0);
                let $o = $io.out_u8();
                $body
            }
            Width::W2 => {
                let $x = $io.i16(0);
                let $o = $io.out_i16();
                $body
            }
            Width::W4 => {
                let $x = $io.i32(0);
                let $o = $io.out_i32();
                $body
            }
            Width::W8 => {
                let $x = $io.i64(0);
                let $o = $io.out_i64();
                $body
            }
        }
    }};
}
#[cfg(feature = "exec")]
pub(super) use by_width;
