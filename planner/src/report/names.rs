//! How the reports name things: a buffer's display name, the members of an alias group,
//! the persistent region's variables, and why a tensor shares another's buffer.

use crate::alias::OpMode;
use crate::ir::{Graph, TensorId};
use crate::lifetimes::BufferOwner;
use crate::plan::Plan;
use std::fmt::Write;

/// Why tensor `t` shares another's buffer: the kind and the operator that makes it.
pub fn alias_reason(graph: &Graph, plan: &Plan, t: TensorId) -> (&'static str, Option<usize>) {
    Reasons::new(graph, plan).of(t)
}

/// Why each aliased tensor shares another's buffer, found in one pass over the operators.
pub(super) struct Reasons {
    /// Per tensor: the first reason an operator gives, if any.
    direct: Vec<Option<(&'static str, usize)>>,
    /// Per tensor: the in-place operator that overwrites it, if any.
    overwritten: Vec<Option<usize>>,
}

impl Reasons {
    pub(super) fn new(graph: &Graph, plan: &Plan) -> Reasons {
        let n = graph.tensors.len();
        let (mut direct, mut overwritten) = (vec![None; n], vec![None; n]);
        for op in &graph.ops {
            let mode = plan.mode(op.id);
            if let Some(&o) = op.outputs.first()
                && matches!(mode, OpMode::View | OpMode::InPlace { .. })
            {
                direct[o.0].get_or_insert((mode.name(), op.id.0));
            }
            if mode == OpMode::ConcatSlices {
                for i in op.present_inputs() {
                    direct[i.0].get_or_insert(("concatenation slice", op.id.0));
                }
            }
            if mode == OpMode::SplitSlices {
                for &o in &op.outputs {
                    direct[o.0].get_or_insert(("split slice", op.id.0));
                }
            }
            if let OpMode::InPlace { input } = mode
                && let Some(i) = op.input(input)
            {
                overwritten[i.0].get_or_insert(op.id.0);
            }
        }
        Reasons {
            direct,
            overwritten,
        }
    }

    pub(super) fn of(&self, t: TensorId) -> (&'static str, Option<usize>) {
        if let Some((reason, op)) = self.direct[t.0] {
            return (reason, Some(op));
        }
        // The input of an in-place operator whose output is the root (a wider pointwise
        // convolution's input sits at the end of its output's bytes).
        match self.overwritten[t.0] {
            Some(op) => ("overwritten in place", Some(op)),
            None => ("in the group of a slice", None),
        }
    }
}

/// Members shown in a group's label before the rest is counted.
const LABEL_MEMBERS: usize = 8;

/// The members of each tensor buffer's group, by root: `t3=t4=t9` (long groups end with the
/// number of members not shown).
pub(super) fn group_labels(plan: &Plan) -> std::collections::HashMap<TensorId, String> {
    let mut members: std::collections::HashMap<TensorId, Vec<TensorId>> = Default::default();
    for a in &plan.aliases {
        members.entry(a.buffer).or_default().push(a.tensor);
    }
    members
        .into_iter()
        .map(|(root, ms)| {
            let mut label = format!("t{}", root.0);
            for m in ms.iter().take(LABEL_MEMBERS) {
                let _ = write!(label, "=t{}", m.0);
            }
            if ms.len() > LABEL_MEMBERS {
                let _ = write!(label, "=...(+{})", ms.len() - LABEL_MEMBERS);
            }
            (root, label)
        })
        .collect()
}

/// ` (name n B, ...)` of the persistent region's variables, or nothing.
pub(super) fn persistent_names(graph: &Graph, plan: &Plan) -> String {
    if plan.persistent.is_empty() {
        return String::new();
    }
    let names: Vec<String> = plan
        .persistent
        .iter()
        .map(|p| format!("{} {} B", graph.tensor(p.tensor).name, p.size))
        .collect();
    format!(" ({})", names.join(", "))
}

/// A buffer's display name: the tensor's name, or `scratch(op N)` (a control flow
/// operator's scratch holds the subgraphs it runs: `subgraphs 1, 2 (op N IF)`).
pub fn buffer_name(graph: &Graph, owner: BufferOwner) -> String {
    if let BufferOwner::Scratch(op) = owner {
        let called: Vec<String> = graph
            .op(op)
            .kind
            .called_subgraphs()
            .iter()
            .map(ToString::to_string)
            .collect();
        let called = match called.len() {
            0 => String::new(),
            1 => format!("subgraph {}", called[0]),
            _ => format!("subgraphs {}", called.join(", ")),
        };
        if !called.is_empty() {
            return format!("{called} (op {} {})", op.0, graph.op(op).kind.name());
        }
    }
    match owner {
        BufferOwner::Tensor(t) => {
            let n = &graph.tensor(t).name;
            if n.is_empty() {
                format!("t{}", t.0)
            } else {
                n.clone()
            }
        }
        BufferOwner::Scratch(op) => format!("scratch(op {})", op.0),
    }
}
