//! The verifier's rules for an operator planned in place ([`OpMode::InPlace`]), by the kind
//! of in-place form its kernel declares ([`Abilities`]): a convolution over its own input,
//! an elementwise kernel, a narrowing one. Each says which inputs, shapes, types and places
//! of the output the form allows; that no write clobbers data read later is checked for
//! every operator alike by [`super::check_aliasing`].
//!
//! [`OpMode::InPlace`]: crate::alias::OpMode::InPlace

use crate::ir::{Graph, Op, TensorId};
use crate::kernels::{Abilities, ConvInPlaceKind};

/// Every arena tensor's bytes, `[start, end)`, if it has some.
pub(super) type Place<'a> = &'a dyn Fn(Option<TensorId>) -> Option<(usize, usize)>;

/// Checks operator `op` (one output) planned in place over its input `input`, which its
/// kernels declare as `declared`; `Err` says the rule it breaks.
pub(super) fn check(
    graph: &Graph,
    op: &Op,
    input: usize,
    declared: &Abilities,
    place: Place<'_>,
) -> Result<(), &'static str> {
    let (Some(a), Some(&c)) = (op.input(input), op.outputs.first()) else {
        return Err("it has no such input or no output");
    };
    if op.outputs.len() != 1 {
        return Err("it has more than one output");
    }
    let (ta, tc) = (&graph.tensors[a.0], &graph.tensors[c.0]);
    if let Some(conv) = declared.conv_in_place.filter(|_| input == 0) {
        // A convolution over its own input: rank-4 tensors of one type, the output at the
        // start of the input's bytes (or, for a wider pointwise one, ending where they end).
        let fits = ta.shape.len() == 4 && tc.shape.len() == 4 && ta.dtype == tc.dtype;
        let shapes = match conv.kind {
            ConvInPlaceKind::ChannelPlanes => {
                ta.shape[0] == tc.shape[0] && ta.shape[3] == tc.shape[3] && tc.bytes() <= ta.bytes()
            }
            ConvInPlaceKind::Pixels => ta.shape[..3] == tc.shape[..3],
            // Output row `r` of batch `b` then ends no further than input row `r` of batch
            // `b` does (rows no longer, batches no larger): over input rows the kernel no
            // longer reads when it stores it.
            ConvInPlaceKind::Rows => {
                let row = |t: &crate::ir::Tensor| t.shape[2].saturating_mul(t.shape[3]);
                ta.shape[0] == tc.shape[0] && row(tc) <= row(ta) && tc.elements() <= ta.elements()
            }
        };
        if !fits || !shapes {
            return Err("its input and output do not have the shapes its in-place form needs");
        }
        let placed = match (place(Some(a)), place(Some(c))) {
            (Some((s0, e0)), Some((s1, e1))) => match conv.kind {
                ConvInPlaceKind::ChannelPlanes | ConvInPlaceKind::Rows => s0 == s1,
                ConvInPlaceKind::Pixels => {
                    (tc.bytes() <= ta.bytes() && s0 == s1) || (tc.bytes() > ta.bytes() && e0 == e1)
                }
            },
            _ => false,
        };
        if !placed {
            return Err("its output does not start at its input's bytes (or end at their end)");
        }
        return Ok(());
    }
    let same_shape = |x: TensorId, y: TensorId| {
        graph.tensors[x.0].shape == graph.tensors[y.0].shape
            && graph.tensors[x.0].dtype == graph.tensors[y.0].dtype
    };
    if declared.in_place.contains(&input) {
        // Elementwise: inputs and output of one shape and type, the output exactly the
        // overwritten input's bytes.
        if op
            .present_inputs()
            .any(|i| !same_shape(i, c) && !graph.tensors[i.0].is_constant())
            || !same_shape(a, c)
        {
            return Err("its inputs and output differ in shape or type");
        }
        if place(Some(a)).is_none() || place(Some(a)) != place(Some(c)) {
            return Err("its output is not the overwritten input's bytes");
        }
    } else if let (Some(n), 0) = (declared.narrowing_in_place, input) {
        // Narrowing, front to back in `units` runs of bytes: output unit `i` (`ec` bytes at
        // `s1 + i * ec`) is written after input unit `i` (`ea` bytes at `s0 + i * ea`) is
        // read, so it may cover only bytes of input units up to `i`: `s1 + (i + 1) * ec <=
        // s0 + (i + 1) * ea` for every `i`, that is `s1 <= s0 + (ea - ec)` (the tightest at
        // `i = 0`). The output then ends within the input's bytes. Bytes before `s0` are not
        // the input's: writing them is checked as any write.
        let Some((ea, ec)) = n.unit_bytes(ta.bytes(), tc.bytes()) else {
            return Err(
                "its output and input do not split into its units, or the output's are wider",
            );
        };
        let (Some((s0, _)), Some((s1, _))) = (place(Some(a)), place(Some(c))) else {
            return Err("its input or output has no arena bytes");
        };
        if s1 > s0 + (ea - ec) {
            return Err(
                "its output starts too far into its input (past the difference of their unit sizes)",
            );
        }
    } else {
        return Err("its kernel declares no in-place form over that input");
    }
    // No other input may share the overwritten bytes.
    let (s0, e0) = place(Some(a)).expect("checked");
    for (j, i) in op.inputs.iter().enumerate() {
        if j != input
            && let Some((s1, e1)) = place(*i)
            && s1 < e0
            && s0 < e1
        {
            return Err("another of its inputs shares the overwritten bytes");
        }
    }
    Ok(())
}
