//! The verifier: an independent check of every plan before any code is emitted.
//!
//! It shares no code with the stages that build a plan. From the graph alone it recomputes
//! what each buffer must cover and checks that the plan honours it:
//! - the order runs every operator once, after the producers of its inputs, and operators
//!   that use the same variable tensor in their stored order;
//! - every activation tensor the graph touches has exactly one buffer of its exact size, or
//!   lives inside another tensor's buffer (an alias); a buffer's lifetime covers its
//!   tensor's and its aliases' producers, every consumer, step 0 for graph inputs and the
//!   last step for graph outputs; every operator with a scratch need has one scratch buffer
//!   live only at its step; no other buffers;
//! - aliasing follows the rules of each kind, for modes the operator's kernels declare
//!   ([`crate::kernels::Abilities`]; the verifier takes no other input from the stages): a
//!   view's output is exactly its input's bytes; an elementwise in-place operator's inputs
//!   and output have one shape and type and its output is exactly the overwritten input's
//!   bytes, which no other input of it shares; a narrowing in-place operator's output has
//!   its input's element count, elements no wider, and starts at most the difference of
//!   the element sizes after the input's start (written front to back, output element `i`
//!   then covers only bytes of input elements already read: `verify/in_place.rs`), its
//!   input not shared with another input either; a convolution in place has rank-4 tensors of
//!   one type, its output at the start of the input's bytes (no larger, for channel planes;
//!   or ending at their end, for a wider pointwise one); a concatenation of slices has every
//!   input at its declared offset, one after another, filling the output; and no operator
//!   writes (outputs and scratch; views and concatenations of slices write nothing) bytes of
//!   a tensor that holds data someone reads later, except an in-place operator overwriting
//!   its input as that input dies;
//! - every buffer's pieces lie inside its bytes and steps (which they span), every tensor's
//!   (and scratch's) bytes lie in live pieces of its buffer at every step that uses them;
//! - every offset is aligned, every buffer lies inside the arena, the arena size is the
//!   largest end, and no two pieces (of any buffers, one buffer's too) live at a common step
//!   share a byte;
//! - with a memory map, each region on its own: aligned, after the region before it, within
//!   the size the user gave it, its buffers inside its used bytes at aligned offsets;
//! - variable tensors sit in the persistent region, aligned, without overlap;
//! - the reported lower bound is the most bytes of pieces live at any step; the bound without aliasing
//!   is the most bytes live at any step with a buffer per tensor; the reported bound of the
//!   stored order is the most bytes live at any step when the operators run in the model's
//!   order; the reported aligned bound is what it claims (per step, the live pieces' sizes
//!   rounded up to the alignment except the largest rounding; the bytes live where a piece at
//!   an unaligned offset in its buffer is live) and the arena is not below it.
//!
//! Every check is near-linear (`O(n log n)` in buffers, tensors and steps), so that graphs
//! of many thousands of operators verify quickly: overlap by a sweep over the steps with the
//! live pieces ordered by offset, coverage by the area each tensor shares with its buffer's
//! pieces (disjoint, so the whole area means covered; the pieces by offset with their
//! largest end so far), bytes live per step by difference arrays, and writes over
//! data still needed by a sweep that counts the tensors holding data in Fenwick trees.
//!
//! A failure is a bug in Kiln, reported as [`ErrorKind::InvalidPlan`].

use crate::alias::OpMode;
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::{Graph, OpId, TensorId, TensorKind};
use crate::kernels::Kernels;
use crate::lifetimes::BufferOwner;
use crate::plan::Plan;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

mod in_place;

fn fail(message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(ErrorKind::InvalidPlan, message)
}

fn owner_name(o: BufferOwner) -> String {
    match o {
        BufferOwner::Tensor(t) => format!("tensor {}", t.0),
        BufferOwner::Scratch(op) => format!("scratch of op {}", op.0),
    }
}

/// Checks `plan` against `graph` and what `kernels` declares (scratch, aliasing abilities).
pub fn verify(graph: &Graph, plan: &Plan, kernels: &dyn Kernels) -> Result<()> {
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

    // 2. What each buffer must cover: (earliest start, latest required end, size); an alias's
    // needs fall to the buffer of the tensor holding it.
    let per_tensor = required(graph, &step, steps, kernels, &plan.modes);
    let mut need = per_tensor.clone();
    let mut home: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    let aliased: BTreeSet<usize> = plan.aliases.iter().map(|a| a.tensor.0).collect();
    for a in &plan.aliases {
        let t = BufferOwner::Tensor(a.tensor);
        let Some(&(f, l, size)) = per_tensor.get(&t) else {
            return Err(fail(format!(
                "tensor {} is an alias but needs no arena memory",
                a.tensor.0
            )));
        };
        let root = BufferOwner::Tensor(a.buffer);
        let root_size = activation_bytes(graph, a.buffer.0).ok_or_else(|| {
            fail(format!(
                "tensor {} lives in tensor {}, which has no arena memory",
                a.tensor.0, a.buffer.0
            ))
        })?;
        if a.tensor == a.buffer
            || home.insert(a.tensor.0, (a.buffer.0, a.offset)).is_some()
            || aliased.contains(&a.buffer.0)
            || a.offset.checked_add(size).is_none_or(|end| end > root_size)
        {
            return Err(fail(format!(
                "tensor {} is not inside the buffer of tensor {}",
                a.tensor.0, a.buffer.0
            )));
        }
        need.remove(&t);
        let e = need.entry(root).or_insert((f, l, root_size));
        e.0 = e.0.min(f);
        e.1 = e.1.max(l);
    }
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
        // Its pieces: inside it, live within its steps, which they span.
        let inside = b.pieces.iter().all(|p| {
            p.size > 0
                && p.first <= p.last
                && b.first <= p.first
                && p.last <= b.last
                && p.offset
                    .checked_add(p.size)
                    .is_some_and(|end| end <= b.size)
        });
        let span = (
            b.pieces.iter().map(|p| p.first).min(),
            b.pieces.iter().map(|p| p.last).max(),
        );
        if !inside || span != (Some(b.first), Some(b.last)) {
            return Err(fail(format!(
                "buffer {i} ({}) has pieces outside its bytes or steps",
                owner_name(b.owner)
            )));
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
    check_regions(plan)?;
    // A sweep over the steps: the pieces live at a step, by offset, must not overlap (pieces
    // of one buffer neither); a piece starting is checked against its neighbours there
    // (O(n log n)). Pieces: (first, last, start, end, buffer).
    let mut pieces: Vec<(usize, usize, usize, usize, usize)> = Vec::new();
    for (i, b) in plan.buffers.iter().enumerate() {
        for p in &b.pieces {
            let start = b.offset + p.offset;
            pieces.push((p.first, p.last, start, start + p.size, i));
        }
    }
    pieces.sort_unstable();
    let mut live: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    let mut ends: BinaryHeap<Reverse<(usize, usize)>> = BinaryHeap::new();
    for &(first, last, start, end, i) in &pieces {
        while let Some(&Reverse((l, offset))) = ends.peek() {
            if l >= first {
                break;
            }
            ends.pop();
            live.remove(&offset);
        }
        let below = live.range(..=start).next_back();
        let above = live.range(start + 1..).next();
        let clash = match (below, above) {
            (Some((_, &(e, j))), _) if e > start => Some(j),
            (_, Some((&o, &(_, j)))) if o < end => Some(j),
            _ => None,
        };
        if let Some(j) = clash {
            let (a, b) = (&plan.buffers[i], &plan.buffers[j]);
            return Err(fail(format!(
                "buffers {j} ({}) and {i} ({}) are live at the same step and overlap",
                owner_name(b.owner),
                owner_name(a.owner)
            )));
        }
        live.insert(start, (end, i));
        ends.push(Reverse((last, start)));
    }
    check_aliasing(graph, plan, kernels, &home, &step_of)?;
    // Every tensor's bytes (and every scratch's), at every step that uses them, lie in live
    // pieces of its buffer: as the pieces do not overlap, the area they share with the
    // tensor's bytes over those steps is the whole of it.
    let index: BTreeMap<BufferOwner, usize> = plan
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| (b.owner, i))
        .collect();
    let by_start: Vec<Vec<(usize, usize, usize, usize)>> = plan
        .buffers
        .iter()
        .map(|b| {
            let mut v: Vec<_> = b
                .pieces
                .iter()
                .map(|p| (p.offset, p.offset + p.size, p.first, p.last))
                .collect();
            v.sort_unstable();
            v
        })
        .collect();
    let reach: Vec<Vec<usize>> = by_start
        .iter()
        .map(|v| {
            let mut m = 0;
            v.iter()
                .map(|p| {
                    m = m.max(p.1);
                    m
                })
                .collect()
        })
        .collect();
    for (&owner, &(first, last, size)) in &per_tensor {
        let (root, offset) = match owner {
            BufferOwner::Tensor(t) => match home.get(&t.0) {
                Some(&(r, o)) => (BufferOwner::Tensor(TensorId(r)), o),
                None => (owner, 0),
            },
            BufferOwner::Scratch(_) => (owner, 0),
        };
        let Some(&i) = index.get(&root) else {
            continue; // Reported above: every owner in need has a buffer.
        };
        let (a, z) = (offset, offset + size);
        let want = (z - a) as u128 * (last - first + 1) as u128;
        let mut got = 0u128;
        let v = &by_start[i];
        let mut k = v.partition_point(|p| p.0 < z);
        while k > 0 && reach[i][k - 1] > a {
            k -= 1;
            let (s0, e0, f0, l0) = v[k];
            let bytes = e0.min(z).saturating_sub(s0.max(a));
            let steps = (l0.min(last) + 1).saturating_sub(f0.max(first));
            got += bytes as u128 * steps as u128;
        }
        if got != want {
            return Err(fail(format!(
                "{} is not in live pieces of its buffer at every step that uses it",
                owner_name(owner)
            ))
            .expected_found(
                format!("bytes [{a}, {z}) of buffer {i} over steps [{first}, {last}]"),
                format!("{got} of {want} byte-steps covered"),
            ));
        }
    }

    // 4. The persistent region.
    let mut used = vec![false; graph.tensors.len()];
    for op in &graph.ops {
        for t in op.present_inputs().chain(op.outputs.iter().copied()) {
            used[t.0] = true;
        }
    }
    for &t in graph.inputs.iter().chain(&graph.outputs) {
        used[t.0] = true;
    }
    let mut want: Vec<usize> = graph
        .tensors
        .iter()
        .filter(|t| matches!(t.kind, TensorKind::Variable) && used[t.id.0])
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

    // 5. The lower bound: per step, the sum of the live buffers' sizes (added where a buffer
    // starts, taken back after it ends), and for the aligned bound the sum of their rounded
    // sizes less the largest rounding among them (a sweep over a multiset of roundings).
    let slots = steps.max(1);
    let mut delta = vec![0i128; slots + 1];
    let mut delta_rounded = vec![0i128; slots + 1];
    let mut starts: Vec<Vec<usize>> = vec![Vec::new(); slots];
    let mut stops: Vec<Vec<usize>> = vec![Vec::new(); slots + 1];
    // Pieces at an unaligned offset in their buffer need not start aligned: where one is
    // live, the aligned bound is the bytes live.
    let mut delta_unaligned = vec![0i64; slots + 1];
    for p in plan.buffers.iter().flat_map(|b| &b.pieces) {
        let rounded = p.size.div_ceil(align) * align;
        delta[p.first] += p.size as i128;
        delta[p.last + 1] -= p.size as i128;
        delta_rounded[p.first] += rounded as i128;
        delta_rounded[p.last + 1] -= rounded as i128;
        starts[p.first].push(rounded - p.size);
        stops[p.last + 1].push(rounded - p.size);
        if p.offset % align != 0 {
            delta_unaligned[p.first] += 1;
            delta_unaligned[p.last + 1] -= 1;
        }
    }
    let mut live = Vec::with_capacity(slots);
    let mut aligned = Vec::with_capacity(slots);
    let (mut sum, mut sum_rounded, mut unaligned) = (0i128, 0i128, 0i64);
    let mut roundings: BTreeMap<usize, usize> = BTreeMap::new();
    for s in 0..slots {
        sum += delta[s];
        sum_rounded += delta_rounded[s];
        for &r in &stops[s] {
            let n = roundings.get_mut(&r).expect("started before");
            *n -= 1;
            if *n == 0 {
                roundings.remove(&r);
            }
        }
        for &r in &starts[s] {
            *roundings.entry(r).or_insert(0) += 1;
        }
        unaligned += delta_unaligned[s];
        let slack = roundings.keys().next_back().copied().unwrap_or(0);
        live.push(sum as usize);
        aligned.push(if unaligned > 0 {
            sum as usize
        } else {
            (sum_rounded as usize - slack).max(sum as usize)
        });
    }
    let bound = live.iter().copied().max().unwrap_or(0);
    if bound != plan.lower_bound_bytes {
        return Err(fail("the reported lower bound is wrong")
            .expected_found(bound.to_string(), plan.lower_bound_bytes.to_string()));
    }
    let aligned_bound = aligned.iter().copied().max().unwrap_or(0);
    if aligned_bound != plan.aligned_bound_bytes || plan.arena_bytes < aligned_bound {
        return Err(fail("the reported aligned bound is wrong").expected_found(
            format!("{aligned_bound}, at most the arena {}", plan.arena_bytes),
            plan.aligned_bound_bytes.to_string(),
        ));
    }

    // 6. The bound of the stored order, from the graph alone.
    let n = graph.ops.len();
    let stored = required(graph, &|OpId(i)| i, n, kernels, &[]);
    let stored_bound = peak(stored.values(), n);
    let unaliased_need = required(graph, &step, steps, kernels, &[]);
    let unaliased = peak(unaliased_need.values(), steps);
    if unaliased != plan.unaliased_bound_bytes {
        return Err(
            fail("the reported bound without aliasing is wrong").expected_found(
                unaliased.to_string(),
                plan.unaliased_bound_bytes.to_string(),
            ),
        );
    }
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

/// The most bytes live at one of `steps` steps (at least one) when each `(first, last,
/// size)` is live from `first` to `last`.
fn peak<'a>(spans: impl Iterator<Item = &'a (usize, usize, usize)>, steps: usize) -> usize {
    let mut delta = vec![0i128; steps.max(1) + 1];
    for &(first, last, size) in spans {
        delta[first] += size as i128;
        delta[last + 1] -= size as i128;
    }
    let mut sum = 0i128;
    let mut best = 0i128;
    for d in &delta[..steps.max(1)] {
        sum += d;
        best = best.max(sum);
    }
    best as usize
}

/// What each buffer must cover when operator `o` runs at step `step(o)` of `steps`:
/// `(earliest start, latest required end, size)` per owner.
fn required(
    graph: &Graph,
    step: &dyn Fn(OpId) -> usize,
    steps: usize,
    kernels: &dyn Kernels,
    modes: &[OpMode],
) -> BTreeMap<BufferOwner, (usize, usize, usize)> {
    let mut need: BTreeMap<BufferOwner, (usize, usize, usize)> = BTreeMap::new();
    let mut cover = |owner: BufferOwner, s: usize, size: usize| {
        let e = need.entry(owner).or_insert((s, s, size));
        e.0 = e.0.min(s);
        e.1 = e.1.max(s);
    };
    let activation = |t: usize| activation_bytes(graph, t);
    for op in &graph.ops {
        let s = step(op.id);
        for t in op.present_inputs().chain(op.outputs.iter().copied()) {
            if let Some(size) = activation(t.0) {
                cover(BufferOwner::Tensor(t), s, size);
            }
        }
        // A convolution in place keeps one output channel plane or pixel aside, a narrowing
        // LSTM one output row.
        let declared = kernels.abilities(graph, op);
        let plane = match (
            modes.get(op.id.0),
            declared.conv_in_place,
            declared.narrowing_in_place,
        ) {
            (Some(OpMode::InPlace { input: 0 }), Some(c), _) => c.scratch_bytes,
            (Some(OpMode::InPlace { input: 0 }), None, Some(n)) => n.scratch_bytes,
            _ => 0,
        };
        let sc = kernels.scratch_bytes(graph, op) + plane;
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

/// The arena bytes of tensor `t`, if it is an activation with bytes.
fn activation_bytes(graph: &Graph, t: usize) -> Option<usize> {
    let tensor = graph.tensors.get(t)?;
    (matches!(tensor.kind, TensorKind::Activation) && tensor.bytes() > 0).then(|| tensor.bytes())
}

/// The aliasing rules: each operator's mode is legal for its kind and places, and no
/// operator clobbers bytes that hold data read later. `home` maps an alias to the tensor
/// whose buffer holds it and its offset there; `step_of` is each operator's step.
fn check_aliasing(
    graph: &Graph,
    plan: &Plan,
    kernels: &dyn Kernels,
    home: &BTreeMap<usize, (usize, usize)>,
    step_of: &[Option<usize>],
) -> Result<()> {
    if plan.modes.len() != graph.ops.len() {
        return Err(fail("the plan does not give every operator a mode")
            .expected_found(graph.ops.len().to_string(), plan.modes.len().to_string()));
    }
    // Every arena tensor's bytes: [start, end).
    let mut at: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    for b in &plan.buffers {
        if let BufferOwner::Tensor(t) = b.owner {
            at.insert(t.0, (b.offset, b.offset + b.size));
        }
    }
    for (&t, &(root, offset)) in home {
        let (start, _) = *at
            .get(&root)
            .ok_or_else(|| fail(format!("tensor {root} holds aliases but has no buffer")))?;
        let size = activation_bytes(graph, t).unwrap_or(0);
        at.insert(t, (start + offset, start + offset + size));
    }
    let place = |t: Option<TensorId>| t.and_then(|t| at.get(&t.0).copied());
    for (op, &mode) in graph.ops.iter().zip(&plan.modes) {
        let bad = |why: &str| {
            fail(format!(
                "op {} ({}) is planned as {} but {why}",
                op.id.0,
                op.kind.name(),
                mode.name()
            ))
        };
        let out = op.outputs.first().copied();
        let declared = kernels.abilities(graph, op);
        match mode {
            OpMode::Normal => {}
            OpMode::View => {
                if !declared.view {
                    return Err(bad("its kernel declares no view"));
                }
                if place(op.input(0)).is_none() || place(op.input(0)) != place(out) {
                    return Err(bad("its output is not its input's bytes"));
                }
            }
            OpMode::InPlace { input } => {
                in_place::check(graph, op, input, declared, &place).map_err(bad)?;
            }
            OpMode::ConcatSlices => {
                let Some(offsets) = &declared.concat_slices else {
                    return Err(bad("its kernel declares no slices"));
                };
                let Some((start, end)) = place(out) else {
                    return Err(bad("its output has no arena bytes"));
                };
                if offsets.len() != op.inputs.len() {
                    return Err(bad("it declares a slice per input"));
                }
                // Each input at its declared offset, one after another, filling the output.
                let mut next = start;
                for (i, &off) in op.inputs.iter().zip(offsets) {
                    let Some((s, e)) = place(*i) else {
                        return Err(bad("an input has no arena bytes"));
                    };
                    if s != next || s != start + off {
                        return Err(bad("an input is not at its slice of the output"));
                    }
                    next = e;
                }
                if next != end {
                    return Err(bad("its inputs do not fill the output"));
                }
            }
            OpMode::SplitSlices => {
                let Some((slot, offsets)) = &declared.split_slices else {
                    return Err(bad("its kernel declares no slices"));
                };
                let Some((start, end)) = place(op.input(*slot)) else {
                    return Err(bad("its input has no arena bytes"));
                };
                if offsets.len() != op.outputs.len() {
                    return Err(bad("it declares a slice per output"));
                }
                // Each output at its declared offset, in order, not overlapping, within the
                // input, of the input's type.
                let dtype = op.input(*slot).map(|t| graph.tensors[t.0].dtype);
                let mut next = start;
                for (&o, &off) in op.outputs.iter().zip(offsets) {
                    let Some((s, e)) = place(Some(o)) else {
                        return Err(bad("an output has no arena bytes"));
                    };
                    if s < next || s != start + off || Some(graph.tensors[o.0].dtype) != dtype {
                        return Err(bad("an output is not at its slice of the input"));
                    }
                    next = e;
                }
                if next > end {
                    return Err(bad("its outputs run past the input"));
                }
            }
        }
    }

    // When each tensor is written (None: before the first step) and last needed.
    let steps = plan.order.len();
    let last = steps.saturating_sub(1);
    let mut written: BTreeMap<usize, Option<usize>> = BTreeMap::new();
    let mut read: BTreeMap<usize, usize> = BTreeMap::new();
    let mut kept: Vec<bool> = vec![false; graph.tensors.len()];
    for &t in &graph.inputs {
        written.insert(t.0, None);
        read.insert(t.0, 0);
    }
    for op in &graph.ops {
        let s = step_of[op.id.0].expect("a permutation");
        for t in op.present_inputs().chain(op.outputs.iter().copied()) {
            let r = read.entry(t.0).or_insert(s);
            *r = (*r).max(s);
        }
        for &t in &op.outputs {
            written.insert(t.0, Some(s));
        }
    }
    for &t in &graph.outputs {
        read.insert(t.0, last);
        kept[t.0] = true;
    }
    let scratch_at: BTreeMap<OpId, (usize, usize)> = plan
        .buffers
        .iter()
        .filter_map(|b| match b.owner {
            BufferOwner::Scratch(op) => Some((op, (b.offset, b.offset + b.size))),
            BufferOwner::Tensor(_) => None,
        })
        .collect();
    // What each step writes: its outputs and its scratch (views and concatenations of slices
    // write nothing), and the bytes an in-place operator may overwrite.
    let mut writes: Vec<Vec<(usize, usize, String)>> = vec![Vec::new(); steps];
    let mut overwritten: Vec<Option<(usize, usize)>> = vec![None; steps];
    for (s, &id) in plan.order.iter().enumerate() {
        let op = graph.op(id);
        let mode = plan.modes[id.0];
        if mode.elided() {
            continue;
        }
        for &t in &op.outputs {
            if let Some((a, b)) = place(Some(t)) {
                writes[s].push((a, b, format!("tensor {}", t.0)));
            }
        }
        if let Some(&(a, b)) = scratch_at.get(&id) {
            writes[s].push((a, b, "its scratch".to_string()));
        }
        if let OpMode::InPlace { input } = mode {
            overwritten[s] = place(op.input(input));
        }
    }
    // Each tensor holds data from after its write to its last read: no write in between may
    // touch its bytes, except an in-place operator overwriting it as it dies. A sweep over the
    // steps keeps the tensors holding data in two Fenwick trees over byte positions, one of
    // their starts and one of their ends: a write `[a, b)` meets `#(start < b) - #(end <= a)`
    // of them, less those it may overwrite (exactly the overwritten input's bytes, dying at
    // that step). O((tensors + writes) log).
    if steps == 0 {
        return Ok(());
    }
    // (first step holding data, last read, tensor, start, end)
    let mut holds: Vec<(usize, usize, usize, usize, usize)> = Vec::new();
    let mut spare = vec![0i64; steps];
    for (&t, &(start, end)) in &at {
        let (Some(&w), Some(&r)) = (written.get(&t), read.get(&t)) else {
            continue;
        };
        let from = w.map_or(0, |w| w + 1);
        if from > r || start >= end || r >= steps {
            continue;
        }
        if !kept[t] && overwritten[r] == Some((start, end)) {
            spare[r] += 1;
        }
        holds.push((from, r, t, start, end));
    }
    let mut xs: Vec<usize> = holds.iter().flat_map(|h| [h.3, h.4]).collect();
    xs.extend(writes.iter().flatten().flat_map(|w| [w.0, w.1]));
    xs.sort_unstable();
    xs.dedup();
    let pos = |x: usize| xs.binary_search(&x).expect("every position is listed");
    let mut starts = Fenwick::new(xs.len());
    let mut ends = Fenwick::new(xs.len());
    let mut by_from: Vec<usize> = (0..holds.len()).collect();
    by_from.sort_by_key(|&h| (holds[h].0, h));
    let mut by_last: Vec<usize> = (0..holds.len()).collect();
    by_last.sort_by_key(|&h| (holds[h].1, h));
    let (mut next_in, mut next_out) = (0, 0);
    for (s, step_writes) in writes.iter().enumerate() {
        while let Some(&h) = by_from.get(next_in).filter(|&&h| holds[h].0 == s) {
            starts.add(pos(holds[h].3), 1);
            ends.add(pos(holds[h].4), 1);
            next_in += 1;
        }
        for (a, b, what) in step_writes {
            if a >= b {
                continue;
            }
            let met = starts.sum_below(pos(*b)) - ends.sum_below(pos(*a) + 1);
            let may = match overwritten[s] {
                Some((os, oe)) if os < *b && *a < oe => spare[s],
                _ => 0,
            };
            if met > may {
                // Name the first tensor it clobbers.
                let t = holds
                    .iter()
                    .filter(|&&(from, r, t, start, end)| {
                        let excused = r == s && !kept[t] && overwritten[s] == Some((start, end));
                        from <= s && s <= r && start < *b && *a < end && !excused
                    })
                    .map(|h| h.2)
                    .min()
                    .expect("the count found one");
                return Err(fail(format!(
                    "op {} at step {s} writes {what} over tensor {t}, which holds data read later",
                    plan.order[s].0
                )));
            }
        }
        while let Some(&h) = by_last.get(next_out).filter(|&&h| holds[h].1 == s) {
            starts.add(pos(holds[h].3), -1);
            ends.add(pos(holds[h].4), -1);
            next_out += 1;
        }
    }
    Ok(())
}

/// Counts over positions `0..n`: add at a position, sum below a position (O(log n) each).
struct Fenwick(Vec<i64>);

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick(vec![0; n + 1])
    }

    fn add(&mut self, at: usize, v: i64) {
        let mut i = at + 1;
        while i < self.0.len() {
            self.0[i] += v;
            i += i & i.wrapping_neg();
        }
    }

    /// The sum over positions `< at`.
    fn sum_below(&self, at: usize) -> i64 {
        let mut i = at;
        let mut sum = 0;
        while i > 0 {
            sum += self.0[i];
            i &= i - 1;
        }
        sum
    }
}

/// The memory map, each region on its own: its start aligned to its alignment (a power of
/// two, at least the plan's) and after the previous region's bytes; every buffer in one
/// region, at an offset aligned to it, inside the bytes it reports; those bytes the end of
/// its last buffer and within the size the user gave it. The regions' bytes being disjoint,
/// the sweep above (no two live pieces share a byte) checks each region on its own too.
/// Without regions, every buffer is in region 0.
fn check_regions(plan: &Plan) -> Result<()> {
    if plan.regions.is_empty() {
        if let Some(i) = plan.buffers.iter().position(|b| b.region != 0) {
            return Err(fail(format!(
                "buffer {i} names region {} of a plan without regions",
                plan.buffers[i].region
            )));
        }
        return Ok(());
    }
    let mut prev_end = 0usize;
    for (r, region) in plan.regions.iter().enumerate() {
        let a = region.align;
        if a == 0 || !a.is_power_of_two() || a % plan.alignment != 0 {
            return Err(fail(format!(
                "region {r} `{}` has alignment {a}, not a power of two multiple of {}",
                region.section, plan.alignment
            )));
        }
        if region.base % a != 0 || region.base < prev_end {
            return Err(fail(format!(
                "region {r} `{}` starts at {}, misaligned or inside the region before it",
                region.section, region.base
            ))
            .expected_found(
                format!("a multiple of {a}, at least {prev_end}"),
                region.base.to_string(),
            ));
        }
        if region.bytes > region.size {
            return Err(fail(format!(
                "region {r} `{}` uses more bytes than it has",
                region.section
            ))
            .expected_found(format!("at most {}", region.size), region.bytes.to_string()));
        }
        prev_end = region
            .base
            .checked_add(region.bytes)
            .ok_or_else(|| fail("a region's end overflows"))?;
    }
    let mut ends = vec![0usize; plan.regions.len()];
    for (i, b) in plan.buffers.iter().enumerate() {
        let Some(region) = plan.regions.get(b.region) else {
            return Err(fail(format!(
                "buffer {i} ({}) names region {}, which does not exist",
                owner_name(b.owner),
                b.region
            )));
        };
        let Some(local) = b.offset.checked_sub(region.base) else {
            return Err(fail(format!(
                "buffer {i} ({}) starts before its region `{}`",
                owner_name(b.owner),
                region.section
            )));
        };
        let end = local + b.size;
        if end > region.bytes {
            return Err(fail(format!(
                "buffer {i} ({}) ends outside its region `{}`",
                owner_name(b.owner),
                region.section
            ))
            .expected_found(format!("end <= {}", region.bytes), end.to_string()));
        }
        if local % region.align != 0 {
            return Err(fail(format!(
                "buffer {i} ({}) is misaligned in its region `{}`",
                owner_name(b.owner),
                region.section
            ))
            .expected_found(format!("a multiple of {}", region.align), local.to_string()));
        }
        ends[b.region] = ends[b.region].max(end);
    }
    for (region, &end) in plan.regions.iter().zip(&ends) {
        if end != region.bytes {
            return Err(fail(format!(
                "region `{}` reports {} bytes, but its last buffer ends at {end}",
                region.section, region.bytes
            )));
        }
    }
    Ok(())
}
