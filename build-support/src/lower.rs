//! Lowering: each operator of a graph to one kernel call, as data.
//!
//! This is where TFLM's `Prepare` happens, at build time: each operator's module in
//! [`crate::ops`] checks the types it accepts and calls the kernels' `prepare*` functions,
//! which turn tensor shapes, scales and options into constant parameters (multipliers, shifts,
//! offsets, activation ranges, tables). The result is a [`Step`] per operator: the
//! [`Kernel`](crate::op::Kernel) it chose, with its parameters, and the tensors it reads and
//! writes. The emitter ([`crate::emit`]) asks the kernel for its call in `invoke()` and the
//! host executor (`crate::exec`, feature `exec`, for tests) runs it, so both see exactly the
//! same parameters.
//!
//! This module drives the operator modules through the table ([`crate::ops::lowering`]) and
//! the contract they write against ([`crate::op`]): it lowers a graph, names every operator
//! it cannot compile, locates a multiplier out of range, and collects what the steps declare
//! to the planner.

pub use crate::op::Step;
pub(crate) use crate::op::unsupported;
use crate::op::{Cx, SHIFT_OUT_OF_RANGE, number};
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{DType, Graph, Op, Quantization, TensorId};
use kiln_planner::kernels::Declared;
use kiln_planner::plan::Plan;

/// The byte a variable tensor is reset to: TFLM fills int8 state with its zero point and
/// every other type with zeros.
pub fn reset_byte(graph: &Graph, t: TensorId) -> u8 {
    let tensor = graph.tensor(t);
    match (&tensor.quant, tensor.dtype) {
        (Quantization::PerTensor { zero_point, .. }, DType::I8) => *zero_point as i8 as u8,
        _ => 0,
    }
}

/// Lowers every operator of `graph` in plan order.
pub fn lower(graph: &Graph, plan: &Plan) -> Result<Vec<Step>> {
    plan.order
        .iter()
        .map(|&id| lower_op(graph, graph.op(id)))
        .collect()
}

/// Lowers every operator of `graph` in the stored order (`steps[i].op == OpId(i)`). If
/// operators are unsupported (no kernel, or types, shapes or options its kernels do not
/// take), the diagnostic names every one of them with its types, not only the first; any
/// other failure is returned as it is.
pub fn lower_all(graph: &Graph) -> Result<Vec<Step>> {
    lower_all_with(graph, false)
}

/// [`lower_all`], with `reference`: every operator on its reference kernel, never a fast
/// one (`Options::reference_kernels`, for comparison).
pub fn lower_all_with(graph: &Graph, reference: bool) -> Result<Vec<Step>> {
    let mut steps = Vec::with_capacity(graph.ops.len());
    let mut refused = Vec::new();
    for op in &graph.ops {
        match lower_op_with(graph, op, reference) {
            Ok(step) => steps.push(step),
            Err(d) if d.kind == ErrorKind::Unsupported => refused.push((op, d)),
            Err(d) => return Err(d),
        }
    }
    match refused.len() {
        0 => Ok(steps),
        1 => Err(refused.pop().expect("one refusal").1),
        _ => Err(all_refused(graph, refused)),
    }
}

/// One diagnostic for several unsupported operators, an entry for each (index, name, types,
/// reason), then, once, the operators Kiln compiles.
fn all_refused(graph: &Graph, refused: Vec<(&Op, Diagnostic)>) -> Diagnostic {
    let n = refused.len();
    let list: Vec<String> = refused
        .into_iter()
        .map(|(op, mut d)| {
            d.op = None;
            let reason = if d.message == NO_KERNEL {
                "no kernel".to_string()
            } else {
                d.to_string()
            };
            format!(
                "op {} ({}, {}): {reason}",
                op.id.0,
                op.kind.name(),
                op_types(graph, op)
            )
        })
        .collect();
    unsupported(format!(
        "{n} operators of the model cannot be compiled: {}; Kiln compiles {}",
        list.join("; "),
        crate::ops::names().collect::<Vec<_>>().join(", ")
    ))
}

/// The message of the diagnostic for an operator without a kernel module.
const NO_KERNEL: &str = "Kiln has no kernel for this operator";

/// An operator's input and output types, `INT8, INT32 -> INT8` (an omitted input as `-`).
pub fn op_types(graph: &Graph, op: &Op) -> String {
    let names = |ts: &mut dyn Iterator<Item = Option<TensorId>>| -> String {
        ts.map(|t| t.map_or("-", |t| graph.tensor(t).dtype.name()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{} -> {}",
        names(&mut op.inputs.iter().copied()),
        names(&mut op.outputs.iter().map(|&t| Some(t)))
    )
}

/// What the lowered steps declare to the planner, by operator.
pub fn declared(steps: &[Step]) -> Declared {
    let mut ops = Vec::new();
    for s in steps {
        if ops.len() <= s.op.0 {
            ops.resize(s.op.0 + 1, None);
        }
        ops[s.op.0] = Some((s.scratch_bytes, s.abilities.clone()));
    }
    Declared { ops }
}

/// What Kiln's kernels declare for every operator of `graph` that lowers; the others declare
/// nothing (for planning models Kiln cannot compile, e.g. in tests and reports).
pub fn kernels(graph: &Graph) -> Declared {
    let steps: Vec<Step> = graph
        .ops
        .iter()
        .filter_map(|op| lower_op(graph, op).ok())
        .collect();
    declared(&steps)
}

/// Lowers one operator through its module (the table in [`crate::ops`]); a diagnostic names
/// the operator.
pub fn lower_op(graph: &Graph, op: &Op) -> Result<Step> {
    lower_op_with(graph, op, false)
}

/// [`lower_op`], on the reference kernel if `reference` (see [`lower_all_with`]).
pub fn lower_op_with(graph: &Graph, op: &Op, reference: bool) -> Result<Step> {
    let cx = Cx {
        graph,
        op,
        reference,
    };
    let lowered = match crate::ops::lowering(op.kind.name()) {
        Some(lower) => lower(&cx),
        None => Err(unsupported(NO_KERNEL).expected_found(
            format!(
                "one of {}",
                crate::ops::names().collect::<Vec<_>>().join(", ")
            ),
            format!("{} ({})", op.kind.name(), op_types(graph, op)),
        )),
    };
    lowered
        .and_then(|step| check_not_empty(graph, step))
        .map_err(|d| locate_scale(graph, op, d).at_op(op.id.0, op.kind.name()))
}

/// Refuses a step that reads or writes an activation without elements (a dimension of 0):
/// it would have no bytes in the arena.
fn check_not_empty(graph: &Graph, step: Step) -> Result<Step> {
    let tensors = step.inputs.iter().filter_map(|o| o.tensor());
    for t in tensors
        .chain(step.states.iter().copied())
        .chain(step.outputs.iter().copied())
    {
        let tensor = graph.tensor(t);
        if !tensor.is_constant() && tensor.elements() == 0 {
            return Err(unsupported("tensors without elements are not supported")
                .at_tensor(t.0, tensor.name.clone())
                .expected_found("at least one element", format!("shape {:?}", tensor.shape)));
        }
    }
    Ok(step)
}

/// For a multiplier out of range: names the operator's tensor with the most extreme scale
/// (furthest from 1, the usual culprit) and lists the scales the multiplier came from.
fn locate_scale(graph: &Graph, op: &Op, mut d: Diagnostic) -> Diagnostic {
    if d.message != SHIFT_OUT_OF_RANGE || d.tensor.is_some() {
        return d;
    }
    let scales = |t: TensorId| -> Vec<f32> {
        match &graph.tensor(t).quant {
            Quantization::PerTensor { scale, .. } => vec![*scale],
            Quantization::PerChannel { scales, .. } => scales.clone(),
            Quantization::None => Vec::new(),
        }
    };
    let tensors: Vec<TensorId> = op
        .present_inputs()
        .chain(op.outputs.iter().copied())
        .collect();
    let extremity = |s: f32| (s as f64).log2().abs();
    let worst = tensors
        .iter()
        .filter_map(|&t| {
            let e = scales(t)
                .into_iter()
                .map(extremity)
                .fold(f64::NAN, f64::max);
            (!e.is_nan()).then_some((t, e))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let listed: Vec<String> = tensors
        .iter()
        .filter_map(|&t| {
            let s = scales(t);
            let (lo, hi) = s.iter().fold((f32::INFINITY, 0.0f32), |(lo, hi), &x| {
                (lo.min(x), hi.max(x))
            });
            let shown = match s.len() {
                0 => return None,
                1 => number(lo as f64),
                n if lo == hi => format!("{} ({n} channels)", number(lo as f64)),
                n => format!(
                    "{}..{} ({n} channels)",
                    number(lo as f64),
                    number(hi as f64)
                ),
            };
            Some(format!("tensor {} {shown}", t.0))
        })
        .collect();
    d.message = format!("{SHIFT_OUT_OF_RANGE} (scales: {})", listed.join(", "));
    match worst {
        Some((t, _)) => d.at_tensor(t.0, graph.tensor(t).name.clone()),
        None => d,
    }
}
