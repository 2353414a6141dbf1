//! Multi-subgraph models: the calls between subgraphs (IF, WHILE, CALL_ONCE) and resource
//! variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE).
//!
//! A call names a subgraph by index: it must exist, not be the main one, and no subgraph may
//! call itself, directly or not (TFLM would recurse without end). Calls nest at most
//! [`MAX_CALL_DEPTH`] deep (Kiln's emitter recurses once per level).
//! A resource variable is named by its VAR_HANDLE's `container/shared_name`; each subgraph
//! that reads or writes it gets a variable tensor for it (appended, as an extra input of
//! READ_VARIABLE / ASSIGN_VARIABLE), and all of them are the model's one copy of its bytes:
//! they must agree on type and shape.

use crate::diag::{Diagnostic, Result};
use crate::ir::{DType, Graph, OpKind, Quantization, Tensor, TensorId, TensorKind};

/// How deep calls may nest: subgraphs active at once beyond the main one. Kiln's emitter
/// writes a called subgraph's function while it writes its caller's, one level of (native)
/// recursion per nesting level, 32 to 43 KB of stack each in a debug build (measured: 48 levels compile
/// in a 2 MB test thread, 64 overflow it). TFLM runs deeper chains (200 levels in a 1 MB
/// arena: tests/hostile/cf_nested_if_200); converted models nest a few levels.
pub const MAX_CALL_DEPTH: usize = 32;

/// The subgraphs each operator of `g` calls: (operator, option field, subgraph).
fn callees(g: &Graph) -> impl Iterator<Item = (usize, &'static str, usize)> + '_ {
    g.ops.iter().flat_map(|op| {
        callees_of(&op.kind)
            .into_iter()
            .map(move |(field, c)| (op.id.0, field, c))
    })
}

/// Every call names an existing subgraph other than the main one, the calls have no cycle,
/// and they nest at most [`MAX_CALL_DEPTH`] deep below the main subgraph.
pub(super) fn check_calls(graphs: &[Graph]) -> Result<()> {
    let n = graphs.len();
    for (s, g) in graphs.iter().enumerate() {
        for (op, field, c) in callees(g) {
            if c == 0 || c >= n {
                let name = g.ops[op].kind.name().to_string();
                let why = if c == 0 {
                    "names the main subgraph (0), which would run inside itself".to_string()
                } else {
                    format!("names a subgraph that does not exist (the model has {n})")
                };
                return Err(
                    Diagnostic::malformed(format!("the operator's {field} {why}"))
                        .at_op(op, name)
                        .expected_found(format!("a subgraph index in 1..{n}"), c.to_string())
                        .in_subgraph(s),
                );
            }
        }
    }
    // Depth-first from every subgraph, iteratively (a hostile model may nest deeply).
    // 0: not seen, 1: on the current path, 2: done. `depth[s]`: the longest chain of calls
    // below s, known once s is done (callees are done first).
    let mut state = vec![0u8; n];
    let mut depth = vec![0usize; n];
    let calls_of = |s: usize| -> Vec<(usize, usize)> {
        callees(&graphs[s]).map(|(op, _, c)| (op, c)).collect()
    };
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, Vec<(usize, usize)>)> = vec![(root, calls_of(root))];
        state[root] = 1;
        while let Some((s, next)) = stack.last_mut() {
            let s = *s;
            match next.pop() {
                Some((op, c)) if state[c] == 1 => {
                    // The cycle: from c's place on the path to s, then back to c.
                    let from = stack.iter().position(|e| e.0 == c).unwrap_or(0);
                    let mut path: Vec<String> =
                        stack[from..].iter().map(|e| e.0.to_string()).collect();
                    path.push(c.to_string());
                    let name = graphs[s].ops[op].kind.name().to_string();
                    return Err(Diagnostic::unsupported(format!(
                        "the operator calls subgraph {c}, which is already running: the \
                         subgraphs call each other in a cycle (TFLM recurses until its stack \
                         overflows)"
                    ))
                    .at_op(op, name)
                    .expected_found(
                        "calls between subgraphs without a cycle",
                        format!("subgraph {}", path.join(" -> ")),
                    )
                    .in_subgraph(s));
                }
                Some((_, c)) if state[c] == 0 => {
                    state[c] = 1;
                    stack.push((c, calls_of(c)));
                }
                Some(_) => {}
                None => {
                    state[s] = 2;
                    depth[s] = calls_of(s)
                        .iter()
                        .map(|&(_, c)| depth[c] + 1)
                        .max()
                        .unwrap_or(0);
                    stack.pop();
                }
            }
        }
    }
    if n > 0 && depth[0] > MAX_CALL_DEPTH {
        // Follow the deepest chain from the main subgraph to the call one level too deep.
        let (mut s, mut path) = (0, vec!["0".to_string()]);
        for level in 1.. {
            let Some((op, c)) = calls_of(s)
                .into_iter()
                .max_by_key(|&(op, c)| (depth[c], std::cmp::Reverse(op)))
            else {
                break;
            };
            path.push(c.to_string());
            if level > MAX_CALL_DEPTH {
                let name = graphs[s].ops[op].kind.name().to_string();
                return Err(Diagnostic::unsupported(format!(
                    "calls nest {} deep below the main subgraph; this operator's call of \
                     subgraph {c} is level {level}",
                    depth[0]
                ))
                .at_op(op, name)
                .expected_found(
                    format!("at most {MAX_CALL_DEPTH} nested calls"),
                    format!(
                        "{} nested calls (subgraph {} -> ...)",
                        depth[0],
                        path.iter()
                            .take(3)
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(" -> ")
                    ),
                )
                .in_subgraph(s));
            }
            s = c;
        }
    }
    Ok(())
}

/// Resolves READ_VARIABLE / ASSIGN_VARIABLE to their resource (the VAR_HANDLE that made the
/// handle, in the same subgraph) and appends the subgraph's variable tensor for it.
pub(super) fn add_resource_vars(g: &mut Graph) -> Result<()> {
    for i in 0..g.ops.len() {
        let op = &g.ops[i];
        let name = op.kind.name().to_string();
        let (value, reading) = match op.kind {
            OpKind::ReadVariable { .. } => (op.outputs.first().copied(), true),
            OpKind::AssignVariable { .. } => (op.inputs.get(1).copied().flatten(), false),
            _ => continue,
        };
        let at = |d: Diagnostic| d.at_op(i, name.clone());
        let (ins, outs) = if reading { (1, 1) } else { (2, 0) };
        if op.inputs.len() != ins
            || op.outputs.len() != outs
            || op.inputs.iter().any(|t| t.is_none())
        {
            return Err(at(Diagnostic::malformed(
                "the operator has the wrong number of operands",
            )
            .expected_found(
                format!("{ins} inputs and {outs} outputs"),
                format!(
                    "{} inputs and {} outputs",
                    op.inputs.len(),
                    op.outputs.len()
                ),
            )));
        }
        let (Some(handle), Some(value)) = (op.inputs[0], value) else {
            unreachable!("operands checked above");
        };
        let made_by = g.ops[..i].iter().find(|p| p.outputs.contains(&handle));
        let Some(resource) = made_by.and_then(|p| match p.kind {
            OpKind::VarHandle { resource } => Some(resource),
            _ => None,
        }) else {
            let t = g.tensor(handle);
            let found = match made_by {
                Some(p) => format!("the output of op {} ({})", p.id.0, p.kind.name()),
                None if g.inputs.contains(&handle) => "an input of the subgraph".to_string(),
                None => format!("a {} tensor no earlier operator writes", t.dtype),
            };
            return Err(at(Diagnostic::unsupported(
                "a resource handle must come from a VAR_HANDLE earlier in the same subgraph",
            )
            .at_tensor(handle.0, t.name.clone())
            .expected_found("the output of a VAR_HANDLE", found)));
        };
        let v = g.tensor(value).clone();
        if v.dtype == DType::Resource || v.is_constant() && reading {
            return Err(at(Diagnostic::unsupported(
                "the variable's value must be a tensor of numbers",
            )
            .at_tensor(value.0, v.name.clone())));
        }
        let var = match g.resource_vars.iter().find(|(r, _)| *r == resource) {
            Some(&(_, var)) => {
                let have = g.tensor(var);
                if have.dtype != v.dtype || have.shape != v.shape {
                    return Err(at(Diagnostic::unsupported(
                        "a resource variable is used with two types or shapes",
                    )
                    .at_tensor(value.0, v.name.clone())
                    .expected_found(
                        format!(
                            "{} {:?}, as elsewhere in the subgraph",
                            have.dtype, have.shape
                        ),
                        format!("{} {:?}", v.dtype, v.shape),
                    )));
                }
                var
            }
            None => {
                let id = TensorId(g.tensors.len());
                g.tensors.push(Tensor {
                    id,
                    name: format!("resource variable {resource}"),
                    shape: v.shape.clone(),
                    dtype: v.dtype,
                    // Set by `resource_defaults` (the first assigned value's).
                    quant: Quantization::None,
                    kind: TensorKind::Variable,
                });
                g.resource_vars.push((resource, id));
                id
            }
        };
        let op = &mut g.ops[i];
        op.kind = if reading {
            OpKind::ReadVariable { resource }
        } else {
            OpKind::AssignVariable { resource }
        };
        op.inputs.push(Some(var));
    }
    Ok(())
}

/// Gives each control flow operator, as extra inputs, its subgraph's variable tensors of the
/// resource variables the subgraphs it calls read or write (directly or through their own
/// calls), adding them to the subgraph where it has none: the planner then keeps the
/// operators touching a variable in their stored order across calls. Needs calls without
/// cycles ([`check_calls`]).
pub(super) fn link_resources(graphs: &mut [Graph]) {
    let n = graphs.len();
    // Resources each subgraph uses, itself or through its calls (callees before callers).
    let mut uses: Vec<Option<Vec<usize>>> = vec![None; n];
    for root in 0..n {
        let mut stack = vec![root];
        while let Some(&s) = stack.last() {
            if uses[s].is_some() {
                stack.pop();
                continue;
            }
            let calls: Vec<usize> = callees(&graphs[s]).map(|c| c.2).collect();
            if let Some(&c) = calls.iter().find(|&&c| uses[c].is_none()) {
                stack.push(c);
                continue;
            }
            let mut own: Vec<usize> = graphs[s].resource_vars.iter().map(|r| r.0).collect();
            for c in calls {
                own.extend(uses[c].iter().flatten().copied());
            }
            own.sort_unstable();
            own.dedup();
            uses[s] = Some(own);
            stack.pop();
        }
    }
    // A variable tensor of each resource somewhere, for its type and shape.
    let mut model: Vec<(usize, Tensor)> = Vec::new();
    for g in graphs.iter() {
        for &(r, t) in &g.resource_vars {
            if !model.iter().any(|m| m.0 == r) {
                model.push((r, g.tensor(t).clone()));
            }
        }
    }
    for g in graphs.iter_mut() {
        for i in 0..g.ops.len() {
            let mut need: Vec<usize> = callees_of(&g.ops[i].kind)
                .iter()
                .flat_map(|&(_, c)| uses[c].iter().flatten().copied())
                .collect();
            need.sort_unstable();
            need.dedup();
            for r in need {
                let var = match g.resource_vars.iter().find(|v| v.0 == r) {
                    Some(&(_, var)) => var,
                    None => {
                        let Some((_, like)) = model.iter().find(|m| m.0 == r) else {
                            continue;
                        };
                        let id = TensorId(g.tensors.len());
                        let mut t = like.clone();
                        t.id = id;
                        g.tensors.push(t);
                        g.resource_vars.push((r, id));
                        id
                    }
                };
                g.ops[i].inputs.push(Some(var));
            }
        }
    }
}

/// The subgraphs an operator calls, with the option field naming each.
fn callees_of(kind: &OpKind) -> Vec<(&'static str, usize)> {
    match *kind {
        OpKind::If {
            then_subgraph,
            else_subgraph,
        } => vec![
            ("then_subgraph_index", then_subgraph),
            ("else_subgraph_index", else_subgraph),
        ],
        OpKind::While {
            cond_subgraph,
            body_subgraph,
        } => vec![
            ("cond_subgraph_index", cond_subgraph),
            ("body_subgraph_index", body_subgraph),
        ],
        OpKind::CallOnce { init_subgraph } => vec![("init_subgraph_index", init_subgraph)],
        _ => vec![],
    }
}

/// Gives every variable tensor of a resource the quantization of the value its first
/// ASSIGN_VARIABLE writes (subgraphs in index order, operators in order: TFLM's Prepare
/// order), whose zero point TFLM fills the variable with when it allocates or resets it.
/// A resource nothing assigns is refused at its first READ_VARIABLE: TFLM never allocates
/// it, and the read leaves whatever bytes the output held.
pub(super) fn resource_defaults(graphs: &mut [Graph], resources: &[String]) -> Result<()> {
    for (r, name) in resources.iter().enumerate() {
        let mut quant = None;
        let mut first_read = None;
        'find: for (s, g) in graphs.iter().enumerate() {
            for op in &g.ops {
                match op.kind {
                    OpKind::AssignVariable { resource } if resource == r => {
                        let value = op.inputs[1].expect("checked when read");
                        quant = Some(g.tensor(value).quant.clone());
                        break 'find;
                    }
                    OpKind::ReadVariable { resource } if resource == r && first_read.is_none() => {
                        first_read = Some((s, op.id.0, op.outputs[0]));
                    }
                    _ => {}
                }
            }
        }
        match (quant, first_read) {
            (Some(q), _) => {
                for g in graphs.iter_mut() {
                    for &(x, t) in &g.resource_vars {
                        if x == r {
                            g.tensors[t.0].quant = q.clone();
                        }
                    }
                }
            }
            (None, Some((s, op, out))) => {
                let t = graphs[s].tensor(out);
                return Err(Diagnostic::unsupported(format!(
                    "resource variable `{name}` is read but never assigned (TFLM never \
                     allocates it and the read returns stale bytes)"
                ))
                .at_op(op, "READ_VARIABLE")
                .at_tensor(out.0, t.name.clone())
                .in_subgraph(s));
            }
            (None, None) => {}
        }
    }
    Ok(())
}

/// The subgraphs' variable tensors for one resource agree on type and shape.
pub(super) fn check_resources(graphs: &[Graph], resources: &[String]) -> Result<()> {
    for (r, name) in resources.iter().enumerate() {
        let mut first: Option<(usize, &Tensor)> = None;
        for (s, g) in graphs.iter().enumerate() {
            for &(_, var) in g.resource_vars.iter().filter(|(x, _)| *x == r) {
                let t = g.tensor(var);
                match first {
                    None => first = Some((s, t)),
                    Some((s0, t0)) if t0.dtype != t.dtype || t0.shape != t.shape => {
                        let mut d = Diagnostic::unsupported(format!(
                            "resource variable `{name}` is used with two types or shapes"
                        ))
                        .expected_found(
                            format!("{} {:?} (subgraph {s0})", t0.dtype, t0.shape),
                            format!("{} {:?} (subgraph {s})", t.dtype, t.shape),
                        );
                        // The operator of subgraph s reading or writing it, and the value.
                        if let Some(op) = g.ops.iter().find(|o| o.inputs.contains(&Some(var))) {
                            d = d.at_op(op.id.0, op.kind.name());
                            let value = match op.kind {
                                OpKind::ReadVariable { .. } => op.outputs.first().copied(),
                                OpKind::AssignVariable { .. } => {
                                    op.inputs.get(1).copied().flatten()
                                }
                                _ => None,
                            };
                            if let Some(v) = value {
                                d = d.at_tensor(v.0, g.tensor(v).name.clone());
                            }
                        }
                        return Err(d.in_subgraph(s));
                    }
                    Some(_) => {}
                }
            }
        }
    }
    Ok(())
}
