//! Multi-subgraph models: the subgraphs that IF, WHILE and CALL_ONCE run, planned on their
//! own and nested in their caller's arena, and the model's persistent region.
//!
//! Each called subgraph is lowered, planned and verified like a model of its own (callees
//! before callers). A control flow step's scratch is the arena of what it runs: the larger of
//! IF's two branches, of WHILE's condition and body, CALL_ONCE's init. The caller's planner
//! places that scratch where nothing else of the caller is live during the step, and the
//! verifier checks it, so a subgraph's arena exists only while it runs and the model's arena
//! is the maximum over the subgraphs active at one time, not the sum. The emitter writes the
//! callee's steps at `scratch offset + its own offsets` (`emit::control`).
//!
//! The persistent region is the main plan's, then each callee's own state (kernel state of
//! its operators) at a base of its own, then one byte per CALL_ONCE (whether it ran: zero in
//! a new state, kept by `reset()`, which in TFLM does not re-arm CALL_ONCE either). A
//! resource variable has one place for the model: where the main subgraph's plan put it, or
//! after the callees' state if the main subgraph does not touch it; every subgraph's variable
//! tensor for it is mapped there.

use crate::lower;
use crate::op::{Control, Step};
use crate::options::Options;
use kiln_planner::diag::{Diagnostic, Result};
use kiln_planner::ir::{DType, Graph, OpId, Tensor, TensorId};
use kiln_planner::plan::Plan;

/// A called subgraph, lowered and planned.
#[derive(Debug)]
pub struct Callee {
    /// Its steps, in plan order.
    pub steps: Vec<Step>,
    pub plan: Plan,
    /// Where its own variables start in the model's persistent region.
    pub state_base: usize,
}

/// The model's callees and its persistent region beyond the main plan's.
#[derive(Debug, Default)]
pub struct Program {
    /// By subgraph index (0, the main subgraph, is `None`).
    pub callees: Vec<Option<Callee>>,
    /// Per resource variable: its offset in the persistent region.
    pub resource_at: Vec<usize>,
    /// Per CALL_ONCE (subgraph, operator): the offset of its has-run byte.
    pub once_flags: Vec<((usize, OpId), usize)>,
    /// Persistent bytes beyond the main plan's and their reset values (offset, size, byte).
    pub fills: Vec<(usize, usize, u8)>,
    /// Bytes of the whole persistent region.
    pub persistent_bytes: usize,
}

impl Program {
    /// The callee for subgraph `s`.
    pub fn callee(&self, s: usize) -> Option<&Callee> {
        self.callees.get(s).and_then(Option::as_ref)
    }

    /// Where a variable tensor of subgraph `s` (`graph`) lives in the persistent region: in
    /// a called subgraph, the model's place of a resource variable, else its plan's offset
    /// past the subgraph's base; in the main subgraph, its plan's offset.
    pub fn state_offset(&self, s: usize, graph: &Graph, plan: &Plan, t: TensorId) -> Option<usize> {
        // The main subgraph's variables are where its plan put them (its resource variables'
        // places are the model's, by construction).
        let base = if s == 0 {
            0
        } else {
            if let Some(&(r, _)) = graph.resource_vars.iter().find(|v| v.1 == t) {
                return self.resource_at.get(r).copied();
            }
            self.callee(s)?.state_base
        };
        plan.persistent
            .iter()
            .find(|p| p.tensor == t)
            .map(|p| base + p.offset)
    }
}

/// Lowers and plans every subgraph the main one calls (directly or not), callees first.
pub fn compile_callees(main: &Graph, options: &Options) -> Result<Program> {
    let n = main.subgraphs.len() + 1;
    let mut program = Program {
        callees: (0..n).map(|_| None).collect(),
        ..Program::default()
    };
    if n == 1 {
        return Ok(program);
    }
    // Post-order from the main subgraph (the reader proved the calls have no cycle).
    let graph_of = |s: usize| if s == 0 { Some(main) } else { main.subgraph(s) };
    let called = |s: usize| -> Vec<usize> {
        graph_of(s)
            .map(|g| {
                g.ops
                    .iter()
                    .flat_map(|op| op.kind.called_subgraphs())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut order = Vec::new();
    let mut seen = vec![false; n];
    let mut stack = vec![(0usize, called(0))];
    seen[0] = true;
    while let Some((s, next)) = stack.last_mut() {
        match next.pop() {
            Some(c) if c < n && !seen[c] => {
                seen[c] = true;
                let cs = called(c);
                stack.push((c, cs));
            }
            Some(_) => {}
            None => {
                order.push(*s);
                stack.pop();
            }
        }
    }
    let mut plan_options = options.plan.clone();
    plan_options.preserve_all_tensors = false;
    plan_options.preserve_inputs = false;
    // A memory map is the main graph's (which refuses it with control flow).
    plan_options.regions.clear();
    for s in order.into_iter().filter(|&s| s != 0) {
        let g = main.subgraph(s).expect("a called subgraph exists");
        let at = |d: Diagnostic| d.in_subgraph(s);
        let mut steps = lower::lower_all_with(g, options.reference_kernels).map_err(at)?;
        prepare_calls(g, &mut steps, main, &program).map_err(at)?;
        let declared = lower::declared(&steps);
        let plan = kiln_planner::plan(g, &declared, &plan_options).map_err(at)?;
        let mut by_op: Vec<Option<Step>> = (0..g.ops.len()).map(|_| None).collect();
        for st in steps {
            let i = st.op.0;
            by_op[i] = Some(st);
        }
        let steps = plan
            .order
            .iter()
            .filter_map(|id| by_op[id.0].take())
            .collect();
        program.callees[s] = Some(Callee {
            steps,
            plan,
            state_base: 0,
        });
    }
    Ok(program)
}

fn same(a: &Tensor, b: &Tensor) -> bool {
    a.dtype == b.dtype && a.shape == b.shape
}

/// Which of a callee's lists a caller's operands are checked against.
#[derive(Clone, Copy)]
enum Side {
    Inputs,
    Outputs,
}

/// Checks a list of the caller's tensors (`what`: the operands, e.g. "branch input") against
/// a callee's inputs or outputs (count, type, shape): the bytes are copied between them.
fn check_list(
    caller: &Graph,
    mine: &[TensorId],
    callee: &Graph,
    side: Side,
    what: &str,
    s: usize,
) -> Result<()> {
    let (theirs, side) = match side {
        Side::Inputs => (&callee.inputs, "input"),
        Side::Outputs => (&callee.outputs, "output"),
    };
    if mine.len() != theirs.len() {
        return Err(lower::unsupported(format!(
            "the operator has {} {what}s, subgraph {s} has {} {side}s",
            mine.len(),
            theirs.len()
        ))
        .expected_found(
            format!("{} {what}s (subgraph {s}'s {side}s)", theirs.len()),
            mine.len().to_string(),
        ));
    }
    for (i, (&a, &b)) in mine.iter().zip(theirs).enumerate() {
        let (ta, tb) = (caller.tensor(a), callee.tensor(b));
        if tb.is_constant() {
            return Err(constant_boundary(callee, b, &format!("{side} {i}"), s));
        }
        if !same(ta, tb) {
            return Err(lower::unsupported(format!(
                "the operator's {what} {i} has another type or shape than subgraph {s}'s {side} {i}"
            ))
            .at_tensor(a.0, ta.name.clone())
            .expected_found(
                format!(
                    "{} {:?} (subgraph {s}'s tensor {} `{}`)",
                    tb.dtype, tb.shape, b.0, tb.name
                ),
                format!("{} {:?}", ta.dtype, ta.shape),
            ));
        }
    }
    Ok(())
}

/// A callee's input or output that is a constant: Kiln copies the bytes of subgraph inputs
/// and outputs within the arena (TFLM copies into or out of the constant's buffer).
fn constant_boundary(callee: &Graph, t: TensorId, what: &str, s: usize) -> Diagnostic {
    let x = callee.tensor(t);
    lower::unsupported(format!(
        "subgraph {s}'s {what} is a constant (tensor {} `{}`): subgraph inputs and outputs \
         must be tensors of the arena",
        t.0, x.name
    ))
    .expected_found(
        "a tensor written at run time",
        format!("a constant {} {:?}", x.dtype, x.shape),
    )
}

/// Checks each control flow step of `graph` against the subgraphs it calls and sets its
/// scratch to the arena they need.
pub fn prepare_calls(
    graph: &Graph,
    steps: &mut [Step],
    main: &Graph,
    program: &Program,
) -> Result<()> {
    let sub = |s: usize| -> Result<(&Graph, usize)> {
        let g = main.subgraph(s);
        let c = program.callee(s);
        match (g, c) {
            (Some(g), Some(c)) => Ok((g, c.plan.arena_bytes)),
            _ => Err(lower::unsupported(format!("subgraph {s} is not compiled"))),
        }
    };
    for step in steps.iter_mut() {
        let Some(control) = step.control else {
            continue;
        };
        let op = graph.op(step.op);
        let at = |d: Diagnostic| d.at_op(op.id.0, op.kind.name());
        let ins: Vec<TensorId> = step.inputs.iter().filter_map(|o| o.tensor()).collect();
        step.scratch_bytes = match control {
            Control::If {
                then_subgraph,
                else_subgraph,
            } => {
                let mut bytes = 0;
                for s in [then_subgraph, else_subgraph] {
                    let (g, arena) = sub(s).map_err(at)?;
                    let (i, o) = (Side::Inputs, Side::Outputs);
                    check_list(graph, &ins[1..], g, i, "branch input", s).map_err(at)?;
                    check_list(graph, &step.outputs, g, o, "output", s).map_err(at)?;
                    bytes = bytes.max(arena);
                }
                bytes
            }
            Control::While { cond, body } => {
                let (c, ca) = sub(cond).map_err(at)?;
                let (b, ba) = sub(body).map_err(at)?;
                let (i, o) = (Side::Inputs, Side::Outputs);
                check_list(graph, &ins, c, i, "loop variable", cond).map_err(at)?;
                check_list(graph, &ins, b, i, "loop variable", body).map_err(at)?;
                check_list(graph, &ins, b, o, "loop variable", body).map_err(at)?;
                if let [t] = c.outputs.as_slice()
                    && c.tensor(*t).is_constant()
                {
                    return Err(at(constant_boundary(c, *t, "output 0", cond)));
                }
                let found = match c.outputs.as_slice() {
                    [t] => {
                        let x = c.tensor(*t);
                        (x.dtype != DType::Bool || x.elements() != 1).then(|| {
                            format!(
                                "{} of shape {:?} (tensor {} `{}`)",
                                x.dtype, x.shape, t.0, x.name
                            )
                        })
                    }
                    list => Some(format!("{} outputs", list.len())),
                };
                if let Some(found) = found {
                    return Err(at(lower::unsupported(format!(
                        "WHILE's condition (subgraph {cond}) must have one output, one BOOL"
                    ))
                    .expected_found("one output: BOOL, 1 element", found)));
                }
                ca.max(ba)
            }
            Control::CallOnce { init } => {
                let (g, arena) = sub(init).map_err(at)?;
                if !g.inputs.is_empty() || !g.outputs.is_empty() {
                    return Err(at(lower::unsupported(format!(
                        "CALL_ONCE's subgraph {init} must have no inputs and no outputs"
                    ))
                    .expected_found(
                        "0 inputs, 0 outputs",
                        format!("{} inputs, {} outputs", g.inputs.len(), g.outputs.len()),
                    )));
                }
                arena
            }
            _ => 0,
        };
    }
    Ok(())
}

/// Lays out the persistent region past the main plan's (see the module docs) and returns
/// its size.
pub fn layout_persistent(main: &Graph, plan: &Plan, program: &mut Program) -> usize {
    let align = plan.alignment.max(1);
    let up = |x: usize| x.div_ceil(align) * align;
    let mut end = up(plan.persistent_bytes);
    let mut fills = Vec::new();
    // Resource variables the main plan placed.
    program.resource_at = vec![usize::MAX; main.resources.len()];
    for &(r, t) in &main.resource_vars {
        if let Some(p) = plan.persistent.iter().find(|p| p.tensor == t) {
            program.resource_at[r] = p.offset;
        }
    }
    let n = program.callees.len();
    for s in 1..n {
        let Some(g) = main.subgraph(s) else { continue };
        let Some(c) = program.callees[s].as_mut() else {
            continue;
        };
        // The callee's own variables (not resource variables), at their plan offsets.
        let own: Vec<_> = c
            .plan
            .persistent
            .iter()
            .filter(|p| !g.resource_vars.iter().any(|v| v.1 == p.tensor))
            .collect();
        let size = own.iter().map(|p| p.offset + p.size).max().unwrap_or(0);
        c.state_base = end;
        for p in &own {
            fills.push((end + p.offset, p.size, lower::reset_byte(g, p.tensor)));
        }
        end = up(end + size);
        for &(r, t) in &g.resource_vars {
            if program.resource_at[r] == usize::MAX {
                let bytes = g.tensor(t).bytes();
                program.resource_at[r] = end;
                fills.push((end, bytes, lower::reset_byte(g, t)));
                end = up(end + bytes);
            }
        }
    }
    // The has-run byte of each CALL_ONCE.
    let mut flags = Vec::new();
    for s in 0..n {
        let (g, steps): (&Graph, Vec<OpId>) = if s == 0 {
            (main, main.ops.iter().map(|o| o.id).collect())
        } else {
            match (main.subgraph(s), program.callee(s)) {
                (Some(g), Some(c)) => (g, c.steps.iter().map(|st| st.op).collect()),
                _ => continue,
            }
        };
        for id in steps {
            // Zero in a new state; `reset()` leaves it: TFLM's reset does not re-run
            // CALL_ONCE (its variables are reset to their fill, not to their initial values).
            if matches!(g.op(id).kind, kiln_planner::ir::OpKind::CallOnce { .. }) {
                flags.push(((s, id), end));
                end += 1;
            }
        }
    }
    program.once_flags = flags;
    program.fills = fills;
    let total = if end > plan.persistent_bytes {
        up(end)
    } else {
        plan.persistent_bytes
    };
    program.persistent_bytes = total;
    total
}

/// Per subgraph (by index): where its arena starts in the model's, and the name of the
/// control flow step (of the main subgraph or of another callee) whose scratch holds it.
pub fn arena_places(main: &Graph, plan: &Plan, program: &Program) -> Vec<Option<(usize, String)>> {
    let n = program.callees.len();
    let mut at: Vec<Option<(usize, String)>> = vec![None; n];
    // Breadth first from the main subgraph (base 0).
    let mut queue = vec![(0usize, 0usize)];
    while let Some((s, base)) = queue.pop() {
        let (g, p) = if s == 0 {
            (main, plan)
        } else {
            match (main.subgraph(s), program.callee(s)) {
                (Some(g), Some(c)) => (g, &c.plan),
                _ => continue,
            }
        };
        for b in &p.buffers {
            let kiln_planner::lifetimes::BufferOwner::Scratch(op) = b.owner else {
                continue;
            };
            for c in g.op(op).kind.called_subgraphs() {
                if c < n && at[c].is_none() {
                    let mut name = kiln_planner::report::buffer_name(g, b.owner);
                    if s > 0 {
                        name = format!("{name} of subgraph {s}");
                    }
                    at[c] = Some((base + b.offset, name));
                    queue.push((c, base + b.offset));
                }
            }
        }
    }
    at
}
