//! Lifetimes: the buffers a plan must place, and the steps at which each is live.
//!
//! A *step* is a position in the execution order (step `s` runs `order[s]`). Lifetimes are
//! inclusive `[first, last]`:
//! - an activation tensor lives from the step of its producer to the step of its last
//!   consumer; graph inputs from step 0, graph outputs to the last step; a tensor nobody
//!   reads lives only at its producer's step;
//! - each operator's scratch buffer lives only at that operator's step;
//! - variable tensors (LSTM/SVDF state) persist across `invoke()` calls and are not in the
//!   reused region at all: they are returned separately;
//! - tensors that share bytes ([`crate::alias`]) have one buffer per group, the root
//!   tensor's, live from the first step of any member to the last.

use crate::alias::Aliases;
use crate::ir::{Graph, OpId, TensorId, TensorKind};
use crate::kernels::Kernels;

/// Who owns a buffer of the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BufferOwner {
    /// An activation tensor.
    Tensor(TensorId),
    /// The scratch memory of an operator's kernel.
    Scratch(OpId),
}

/// A buffer to place in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub owner: BufferOwner,
    /// Bytes the buffer needs.
    pub size: usize,
    /// First step at which it is live (inclusive).
    pub first: usize,
    /// Last step at which it is live (inclusive).
    pub last: usize,
}

impl Buffer {
    /// Whether two buffers are live at a common step.
    pub fn overlaps_in_time(&self, other: &Buffer) -> bool {
        self.first <= other.last && other.first <= self.last
    }
}

/// The buffers of a graph for one execution order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lifetimes {
    /// Buffers of the reused region, tensors in tensor order then scratch in step order.
    pub buffers: Vec<Buffer>,
    /// Variable tensors, planned outside the reused region.
    pub persistent: Vec<TensorId>,
    /// Number of steps (operators).
    pub steps: usize,
}

impl Lifetimes {
    /// Bytes live at each step (linear in buffers and steps: a buffer adds its size where
    /// it starts and takes it back after its last step).
    pub fn live_bytes(&self) -> Vec<usize> {
        let steps = self.steps.max(1);
        let mut delta = vec![0isize; steps + 1];
        for b in &self.buffers {
            delta[b.first] += b.size as isize;
            delta[b.last + 1] -= b.size as isize;
        }
        let mut live = Vec::with_capacity(steps);
        let mut sum = 0isize;
        for d in &delta[..steps] {
            sum += d;
            live.push(sum as usize);
        }
        live
    }

    /// The lower bound for this order: the most bytes live at any one step.
    pub fn lower_bound(&self) -> usize {
        self.live_bytes().into_iter().max().unwrap_or(0)
    }
}

/// Computes the buffers of `graph` executed in `order` (a topological order of all ops),
/// one per tensor.
pub fn lifetimes(graph: &Graph, order: &[OpId], kernels: &dyn Kernels) -> Lifetimes {
    lifetimes_aliased(graph, order, kernels, &Aliases::none(graph))
}

/// [`lifetimes`] with aliasing: one buffer per group of tensors sharing bytes (the root
/// tensor's size), live from the first step of any member to the last.
pub fn lifetimes_aliased(
    graph: &Graph,
    order: &[OpId],
    kernels: &dyn Kernels,
    aliases: &Aliases,
) -> Lifetimes {
    let steps = order.len();
    let last_step = steps.saturating_sub(1);
    let n = graph.tensors.len();
    let mut first: Vec<Option<usize>> = vec![None; n];
    let mut last: Vec<Option<usize>> = vec![None; n];
    let mut touch = |t: TensorId, s: usize| {
        first[t.0] = Some(first[t.0].map_or(s, |f| f.min(s)));
        last[t.0] = Some(last[t.0].map_or(s, |l| l.max(s)));
    };
    for &i in &graph.inputs {
        touch(i, 0);
    }
    for (s, &id) in order.iter().enumerate() {
        let op = graph.op(id);
        for t in op.present_inputs().chain(op.outputs.iter().copied()) {
            touch(t, s);
        }
    }
    for &o in &graph.outputs {
        touch(o, last_step);
    }
    // A group lives while any member does.
    for t in 0..n {
        let (r, _) = aliases.root(TensorId(t));
        if r.0 != t
            && let (Some(f), Some(l)) = (first[t], last[t])
        {
            first[r.0] = Some(first[r.0].map_or(f, |x| x.min(f)));
            last[r.0] = Some(last[r.0].map_or(l, |x| x.max(l)));
        }
    }
    let mut buffers = Vec::new();
    let mut persistent = Vec::new();
    for t in &graph.tensors {
        match t.kind {
            TensorKind::Constant { .. } => {}
            TensorKind::Variable => {
                if first[t.id.0].is_some() {
                    persistent.push(t.id);
                }
            }
            TensorKind::Activation => {
                if let (Some(f), Some(l)) = (first[t.id.0], last[t.id.0])
                    && t.bytes() > 0
                    && aliases.root(t.id).0 == t.id
                {
                    buffers.push(Buffer {
                        owner: BufferOwner::Tensor(t.id),
                        size: t.bytes(),
                        first: f,
                        last: l,
                    });
                }
            }
        }
    }
    for (s, &id) in order.iter().enumerate() {
        let op = graph.op(id);
        let size = kernels.scratch_bytes(graph, op)
            + crate::alias::in_place_scratch(graph, kernels, op, aliases.mode(id));
        if size > 0 {
            buffers.push(Buffer {
                owner: BufferOwner::Scratch(id),
                size,
                first: s,
                last: s,
            });
        }
    }
    Lifetimes {
        buffers,
        persistent,
        steps,
    }
}
