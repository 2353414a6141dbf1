//! The verifier: an independent check of every plan before any code is emitted.
//!
//! It shares no code with the stages that build a plan. From the graph alone it recomputes
//! what each buffer must cover and checks that the plan honours it:
//! - the order runs every operator once, after the producers of its inputs, and operators
//!   that use the same variable tensor in their stored order;
//! - every activation tensor the graph touches has exactly one buffer of its exact size, whose
//!   lifetime covers its producer, every consumer, step 0 for graph inputs and the last step
//!   for graph outputs; every operator with a scratch need has one scratch buffer live only
//!   at its step; no other buffers;
//! - every offset is aligned, every buffer lies inside the arena, the arena size is the
//!   largest end, and no two buffers live at a common step share a byte;
//! - variable tensors sit in the persistent region, aligned, without overlap;
//! - the reported lower bound is the most bytes live at any step; the reported bound of the
//!   stored order is the most bytes live at any step when the operators run in the model's
//!   order; the reported aligned bound is what it claims (per step, the live buffers' sizes
//!   rounded up to the alignment except the largest rounding) and the arena is not below it.
//!
//! A failure is a bug in Kiln, reported as [`ErrorKind::InvalidPlan`].

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::{Graph, OpId, TensorKind};
use crate::lifetimes::{BufferOwner, ScratchFn};
use crate::plan::Plan;
use std::collections::BTreeMap;

fn fail(message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(ErrorKind::InvalidPlan, message)
}

fn owner_name(o: BufferOwner) -> String {
    match o {
        BufferOwner::Tensor(t) => format!("tensor {}", t.0),
        BufferOwner::Scratch(op) => format!("scratch of op {}", op.0),
    }
}

/// Checks `plan` against `graph`. `scratch` is the kernels' scratch contract.
pub fn verify(graph: &Graph, plan: &Plan, scratch: ScratchFn<'_>) -> Result<()> {
    let steps = plan.order.len();
    // 1. The order: a permutation of the operators, producers first.
    if steps != graph.ops.len() {
        return Err(
            fail("the order does not run every operator once").expected_found(
                format!("{} operators", graph.ops.len()),
                format!("{steps} steps"),
            ),
        );
    }
    let mut step_of: Vec<Option<usize>> = vec![None; graph.ops.len()];
    for (s, &OpId(i)) in plan.order.iter().enumerate() {
        match step_of.get_mut(i) {
            Some(slot @ None) => *slot = Some(s),
            Some(Some(_)) => return Err(fail(format!("op {i} runs twice"))),
            None => {
                return Err(fail(format!(
                    "the order names op {i}, which does not exist"
                )));
            }
        }
    }
    let step = |OpId(i): OpId| step_of[i].expect("checked to be a permutation");
    let mut producer_step: BTreeMap<usize, usize> = BTreeMap::new();
    for op in &graph.ops {
        for &t in &op.outputs {
            producer_step.insert(t.0, step(op.id));
        }
    }
    for op in &graph.ops {
        for t in op.present_inputs() {
            if let Some(&p) = producer_step.get(&t.0)
                && p >= step(op.id)
            {
                return Err(fail(format!(
                    "op {} runs at step {} but reads tensor {} produced at step {p}",
                    op.id.0,
                    step(op.id),
                    t.0
                )));
            }
        }
    }

    // Operators touching the same variable (state) tensor run in their stored order.
    let mut last_user: BTreeMap<usize, usize> = BTreeMap::new();
    for op in &graph.ops {
        for t in op.present_inputs().chain(op.outputs.iter().copied()) {
            if matches!(graph.tensors[t.0].kind, TensorKind::Variable) {
                if let Some(&before) = last_user.get(&t.0)
                    && before != op.id.0
                    && step(OpId(before)) > step(op.id)
                {
                    return Err(fail(format!(
                        "ops {before} and {} use variable tensor {} out of their stored order",
                        op.id.0, t.0
                    )));
                }
                last_user.insert(t.0, op.id.0);
            }
        }
    }

    // 2. What each buffer must cover: (earliest start, latest required end, size).
    let need = required(graph, &step, steps, scratch);
    let mut seen: BTreeMap<BufferOwner, usize> = BTreeMap::new();
    for (i, b) in plan.buffers.iter().enumerate() {
        if let Some(prev) = seen.insert(b.owner, i) {
            return Err(fail(format!(
                "{} has two buffers ({prev} and {i})",
                owner_name(b.owner)
            )));
        }
        let Some(&(first, last, size)) = need.get(&b.owner) else {
            return Err(fail(format!(
                "buffer {i} belongs to {}, which needs no arena memory",
                owner_name(b.owner)
            )));
        };
        if b.size != size {
            return Err(fail(format!(
                "buffer {i} ({}) has the wrong size",
                owner_name(b.owner)
            ))
            .expected_found(size.to_string(), b.size.to_string()));
        }
        if b.first > first || b.last < last || b.first > b.last || b.last >= steps.max(1) {
            return Err(fail(format!(
                "buffer {i} ({}) is not live at every step that uses it",
                owner_name(b.owner)
            ))
            .expected_found(
                format!("a lifetime covering [{first}, {last}]"),
                format!("[{}, {}]", b.first, b.last),
            ));
        }
        if matches!(b.owner, BufferOwner::Scratch(_)) && b.first != b.last {
            return Err(fail(format!("buffer {i} (scratch) outlives its operator")));
        }
    }
    if let Some(missing) = need.keys().find(|o| !seen.contains_key(o)) {
        return Err(fail(format!("{} has no buffer", owner_name(*missing))));
    }

    // 3. Places: aligned, inside the arena, arena = largest end, no overlap in time and space.
    let align = plan.alignment;
    if align == 0 || !align.is_power_of_two() {
        return Err(fail(format!("the alignment {align} is not a power of two")));
    }
    let mut max_end = 0usize;
    for (i, b) in plan.buffers.iter().enumerate() {
        let end = b
            .offset
            .checked_add(b.size)
            .ok_or_else(|| fail("an offset overflows"))?;
        if b.offset % align != 0 {
            return Err(fail(format!("buffer {i} is misaligned"))
                .expected_found(format!("a multiple of {align}"), b.offset.to_string()));
        }
        if end > plan.arena_bytes {
            return Err(fail(format!("buffer {i} ends outside the arena"))
                .expected_found(format!("end <= {}", plan.arena_bytes), end.to_string()));
        }
        max_end = max_end.max(end);
    }
    if max_end != plan.arena_bytes {
        return Err(fail("the arena size is not the end of its last buffer")
            .expected_found(max_end.to_string(), plan.arena_bytes.to_string()));
    }
    let mut by_start: Vec<usize> = (0..plan.buffers.len()).collect();
    by_start.sort_by_key(|&i| plan.buffers[i].first);
    for (k, &i) in by_start.iter().enumerate() {
        let a = &plan.buffers[i];
        for &j in &by_start[k + 1..] {
            let b = &plan.buffers[j];
            if b.first > a.last {
                break;
            }
            if a.offset < b.offset + b.size && b.offset < a.offset + a.size {
                return Err(fail(format!(
                    "buffers {i} ({}) and {j} ({}) are live at the same step and overlap",
                    owner_name(a.owner),
                    owner_name(b.owner)
                )));
            }
        }
    }

    // 4. The persistent region.
    let mut want: Vec<usize> = graph
        .tensors
        .iter()
        .filter(|t| matches!(t.kind, TensorKind::Variable))
        .filter(|t| {
            graph.ops.iter().any(|op| {
                op.present_inputs()
                    .chain(op.outputs.iter().copied())
                    .any(|x| x == t.id)
            }) || graph.inputs.contains(&t.id)
                || graph.outputs.contains(&t.id)
        })
        .map(|t| t.id.0)
        .collect();
    let mut have: Vec<usize> = plan.persistent.iter().map(|p| p.tensor.0).collect();
    want.sort_unstable();
    have.sort_unstable();
    if want != have {
        return Err(
            fail("the persistent region does not hold exactly the variable tensors")
                .expected_found(format!("{want:?}"), format!("{have:?}")),
        );
    }
    let mut pend = 0usize;
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for p in &plan.persistent {
        if p.size != graph.tensors[p.tensor.0].bytes() || p.offset % align != 0 {
            return Err(fail(format!(
                "variable tensor {} is misplaced or has the wrong size",
                p.tensor.0
            )));
        }
        spans.push((p.offset, p.offset + p.size));
        pend = pend.max(p.offset + p.size);
    }
    spans.sort_unstable();
    if spans.windows(2).any(|w| w[0].1 > w[1].0) {
        return Err(fail("two variable tensors overlap"));
    }
    if pend != plan.persistent_bytes {
        return Err(
            fail("the persistent size is not the end of its last buffer")
                .expected_found(pend.to_string(), plan.persistent_bytes.to_string()),
        );
    }

    // 5. The lower bound.
    let mut live = vec![0usize; steps.max(1)];
    for b in &plan.buffers {
        for l in live.iter_mut().take(b.last + 1).skip(b.first) {
            *l += b.size;
        }
    }
    let bound = live.iter().copied().max().unwrap_or(0);
    if bound != plan.lower_bound_bytes {
        return Err(fail("the reported lower bound is wrong")
            .expected_found(bound.to_string(), plan.lower_bound_bytes.to_string()));
    }
    let mut aligned = vec![(0usize, 0usize); steps.max(1)];
    for b in &plan.buffers {
        let rounded = b.size.div_ceil(align) * align;
        for a in aligned.iter_mut().take(b.last + 1).skip(b.first) {
            a.0 += rounded;
            a.1 = a.1.max(rounded - b.size);
        }
    }
    let aligned_bound = aligned
        .iter()
        .zip(&live)
        .map(|(&(sum, slack), &l)| (sum - slack).max(l))
        .max()
        .unwrap_or(0);
    if aligned_bound != plan.aligned_bound_bytes || plan.arena_bytes < aligned_bound {
        return Err(fail("the reported aligned bound is wrong").expected_found(
            format!("{aligned_bound}, at most the arena {}", plan.arena_bytes),
            plan.aligned_bound_bytes.to_string(),
        ));
    }

    // 6. The bound of the stored order, from the graph alone.
    let n = graph.ops.len();
    let stored = required(graph, &|OpId(i)| i, n, scratch);
    let mut live = vec![0usize; n.max(1)];
    for &(first, last, size) in stored.values() {
        for l in live.iter_mut().take(last + 1).skip(first) {
            *l += size;
        }
    }
    let stored_bound = live.iter().copied().max().unwrap_or(0);
    if stored_bound != plan.stored_order_bound_bytes {
        return Err(
            fail("the reported lower bound of the stored order is wrong").expected_found(
                stored_bound.to_string(),
                plan.stored_order_bound_bytes.to_string(),
            ),
        );
    }
    Ok(())
}

/// What each buffer must cover when operator `o` runs at step `step(o)` of `steps`:
/// `(earliest start, latest required end, size)` per owner.
fn required(
    graph: &Graph,
    step: &dyn Fn(OpId) -> usize,
    steps: usize,
    scratch: ScratchFn<'_>,
) -> BTreeMap<BufferOwner, (usize, usize, usize)> {
    let mut need: BTreeMap<BufferOwner, (usize, usize, usize)> = BTreeMap::new();
    let mut cover = |owner: BufferOwner, s: usize, size: usize| {
        let e = need.entry(owner).or_insert((s, s, size));
        e.0 = e.0.min(s);
        e.1 = e.1.max(s);
    };
    let activation = |t: usize| {
        let tensor = &graph.tensors[t];
        (matches!(tensor.kind, TensorKind::Activation) && tensor.bytes() > 0)
            .then(|| tensor.bytes())
    };
    for op in &graph.ops {
        let s = step(op.id);
        for t in op.present_inputs().chain(op.outputs.iter().copied()) {
            if let Some(size) = activation(t.0) {
                cover(BufferOwner::Tensor(t), s, size);
            }
        }
        let sc = scratch(graph, op);
        if sc > 0 {
            cover(BufferOwner::Scratch(op.id), s, sc);
        }
    }
    for &t in &graph.inputs {
        if let Some(size) = activation(t.0) {
            cover(BufferOwner::Tensor(t), 0, size);
        }
    }
    for &t in &graph.outputs {
        if let Some(size) = activation(t.0) {
            cover(BufferOwner::Tensor(t), steps.saturating_sub(1), size);
        }
    }
    need
}
