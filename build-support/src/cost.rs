//! The speed side of the budget choice: an estimate of the instructions one `invoke()` of a
//! plan executes on a Cortex-M4, from the work of each step (its MACs, or the elements it
//! reads and writes, and one call) at the instructions per unit of work fitted to Kiln's
//! firmware (`kiln_planner::report::rates`), times how much slower the kernel form the plan
//! gives a convolution runs than its fast form ([`FORMS`]). [`crate::tile`] and
//! [`crate::choose`] take, among the plans that meet a RAM budget (untiled or tiled), the one
//! with the fewest estimated instructions.
//!
//! Only the differences between plans of one model matter here: the same operators, run in
//! faster or slower forms, some in strips (whose halos are computed again and whose calls
//! add up). So the estimate counts what differs (the forms, the MACs computed again, the
//! calls) and leaves out what a plan cannot change.

use crate::lower::Step;
use kiln_planner::Plan;
use kiln_planner::alias::OpMode;
use kiln_planner::ir::{Graph, OpKind, TensorKind};
use kiln_planner::kernels::ConvInPlaceKind;
use kiln_planner::report::{op_macs, rates};

/// The form a convolution's kernel runs in, in a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// The fast kernel with its declared scratch.
    Fast,
    /// The fast kernel with its lean scratch (without widened pixels).
    Lean,
    /// The fast kernel's in-place form: one pixel (pointwise) or one channel plane
    /// (depthwise) at a time.
    SlowInPlace,
    /// The reference kernel that replaces a fast one in the plan without scratch.
    Reference,
}

/// How many times a form's instructions per MAC exceed the fast form's, for convolutions
/// and for depthwise convolutions: `(form, conv, depthwise)`.
///
/// Measured on the emulated Cortex-M4 at opt-level 3 with `tools/kernel_forms.py`
/// (instructions per MAC of each kernel function, against the fast kernel's on the same
/// model without a budget): person_detect at 36,864 and 24,576 bytes, vww at 36,864 bytes
/// (the same factors within 3 %), kws_dscnn at 8,490 bytes (its smallest untiled plan, on
/// the reference kernels in place).
const FORMS: [(Form, f64, f64); 4] = [
    (Form::Fast, 1.0, 1.0),
    // person_detect: conv_2d_s8_fast 1.84 per MAC against 1.42 (vww 2.00 against 1.57),
    // depthwise_conv_2d_s8_fast_lean 6.61 against 4.00 (vww 6.63 against 4.00).
    (Form::Lean, 1.30, 1.65),
    // person_detect: conv_2d_s8_fast_pointwise_in_place 4.23 against 1.42,
    // depthwise_conv_2d_s8_fast_in_place 20.90 against 4.00.
    (Form::SlowInPlace, 2.98, 5.2),
    // kws_dscnn: conv_2d_s8_pointwise_in_place 5.22 against 1.39 (the reference kernels'
    // 1x1 convolutions out of place, in the reference-kernel builds of
    // tools/firmware_bench.py: 7.46 against 1.42), depthwise_conv_2d_s8_in_place 40.68
    // against 3.84.
    (Form::Reference, 5.3, 10.6),
];

/// The factor of `form` for a convolution (`depthwise` false) or a depthwise convolution.
fn factor(form: Form, depthwise: bool) -> f64 {
    FORMS
        .iter()
        .find(|(f, ..)| *f == form)
        .map_or(1.0, |&(_, c, d)| if depthwise { d } else { c })
}

/// Estimated Cortex-M4 instructions of one `invoke()` of `plan`, a plan of `graph` made from
/// `steps` (the graph's steps as lowered, `steps[i].op == OpId(i)`) with the fast kernels'
/// lean scratch (`lean`) and with their reference kernels in place of them (`reference`:
/// the plan without scratch).
pub(crate) fn estimate(
    graph: &Graph,
    steps: &[Step],
    plan: &Plan,
    lean: bool,
    reference: bool,
) -> f64 {
    let [conv, depthwise, other_macs, elements, _, call] = rates::M4;
    steps
        .iter()
        .map(|s| {
            let mode = plan.mode(s.op);
            if matches!(
                mode,
                OpMode::View | OpMode::ConcatSlices | OpMode::SplitSlices
            ) {
                return 0.0;
            }
            let op = graph.op(s.op);
            let macs = op_macs(graph, op) as f64;
            let dw = matches!(op.kind, OpKind::DepthwiseConv2d(_));
            let base = match op.kind {
                OpKind::Conv2d(_) => macs * conv,
                OpKind::DepthwiseConv2d(_) => macs * depthwise,
                _ if macs > 0.0 => macs * other_macs,
                _ => activation_elements(graph, op) * elements,
            };
            let form = if reference && s.without_scratch.is_some() {
                Form::Reference
            } else if s.slow_in_place && matches!(mode, OpMode::InPlace { .. }) {
                // A windowed convolution in place runs row by row on the lean im2col: as
                // fast as the lean form (ic_resnet8 at 22,528 bytes, opt-level 3:
                // conv_2d_s8_fast_rows_in_place 1.824 per MAC, conv_2d_s8_fast on the lean
                // scratch 1.790, against 1.359 without a budget).
                match s.abilities.conv_in_place.map(|c| c.kind) {
                    Some(ConvInPlaceKind::Rows) => Form::Lean,
                    _ => Form::SlowInPlace,
                }
            } else if lean
                && s.without_scratch.is_some()
                && s.lean_scratch_bytes.is_some_and(|b| b < s.scratch_bytes)
            {
                // (A fast kernel's lean scratch; a reference kernel leaves its scratch
                // unused, so its lean form is no slower.)
                Form::Lean
            } else {
                Form::Fast
            };
            base * factor(form, dw) + call
        })
        .sum()
}

/// Elements of the activations an operator reads and writes (not constants or state).
fn activation_elements(graph: &Graph, op: &kiln_planner::ir::Op) -> f64 {
    op.present_inputs()
        .chain(op.outputs.iter().copied())
        .filter(|&t| matches!(graph.tensor(t).kind, TensorKind::Activation))
        .map(|t| graph.tensor(t).elements() as f64)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slower_form_is_slower() {
        for &(form, c, d) in &FORMS {
            if form != Form::Fast {
                assert!(c > 1.0 && d > 1.0, "{form:?}");
            }
        }
        assert!(factor(Form::SlowInPlace, true) > factor(Form::Lean, true));
        assert!(factor(Form::SlowInPlace, false) > factor(Form::Lean, false));
    }
}
