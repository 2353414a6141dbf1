//! The plan: order, buffers, offsets and sizes, produced by the stages and verified.

use crate::diag::{Diagnostic, Result};
use crate::ir::{Graph, OpId, TensorId};
use crate::lifetimes::{self, BufferOwner};
use crate::{offsets, schedule, verify};

/// Options that shape a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// Alignment of every buffer offset in bytes (a power of two). Default 16, as TFLM.
    pub alignment: usize,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions { alignment: 16 }
    }
}

/// A buffer of the reused region with its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedBuffer {
    pub owner: BufferOwner,
    pub size: usize,
    /// First and last step (positions in [`Plan::order`]) at which it is live, inclusive.
    pub first: usize,
    pub last: usize,
    /// Byte offset in the arena.
    pub offset: usize,
}

/// A variable tensor's place in the persistent region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PersistentBuffer {
    pub tensor: TensorId,
    pub size: usize,
    pub offset: usize,
}

/// A verified memory plan for one graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Operators in execution order.
    pub order: Vec<OpId>,
    pub alignment: usize,
    /// The reused region: activations and scratch.
    pub buffers: Vec<PlannedBuffer>,
    /// Bytes of the activation arena (scratch included): `max(offset + size)`.
    pub arena_bytes: usize,
    /// Most bytes live at any one step for this order: no placement can do better.
    pub lower_bound_bytes: usize,
    /// Variable tensors, laid out one after another (aligned).
    pub persistent: Vec<PersistentBuffer>,
    /// Bytes of the persistent region.
    pub persistent_bytes: usize,
    /// Live bytes at each step.
    pub live_bytes: Vec<usize>,
    /// The assigner whose placement was kept.
    pub strategy: &'static str,
}

impl Plan {
    /// The first step at which the live bytes are the lower bound.
    pub fn peak_step(&self) -> Option<usize> {
        let max = *self.live_bytes.iter().max()?;
        self.live_bytes.iter().position(|&b| b == max)
    }
}

/// Plans `graph` with the scratch needs of Kiln's kernels: stored order, lifetimes, the
/// offset portfolio, then the verifier.
pub fn plan(graph: &Graph, options: &PlanOptions) -> Result<Plan> {
    plan_with_scratch(graph, options, &lifetimes::kernel_scratch)
}

/// [`plan`] with another scratch contract (tests, other kernel sets).
pub fn plan_with_scratch(
    graph: &Graph,
    options: &PlanOptions,
    scratch: lifetimes::ScratchFn<'_>,
) -> Result<Plan> {
    let align = options.alignment;
    if align == 0 || !align.is_power_of_two() {
        return Err(
            Diagnostic::unsupported("the alignment must be a power of two")
                .expected_found("1, 2, 4, 8, 16, ...", align.to_string()),
        );
    }
    let order = schedule::stored_order(graph);
    let lt = lifetimes::lifetimes(graph, &order, scratch);
    let lower_bound_bytes = lt.lower_bound();
    let placement = offsets::assign(&lt.buffers, align, lower_bound_bytes);
    let buffers = lt
        .buffers
        .iter()
        .zip(&placement.offsets)
        .map(|(b, &offset)| PlannedBuffer {
            owner: b.owner,
            size: b.size,
            first: b.first,
            last: b.last,
            offset,
        })
        .collect();
    let mut persistent = Vec::new();
    let mut end = 0usize;
    for &t in &lt.persistent {
        let offset = end.div_ceil(align) * align;
        let size = graph.tensor(t).bytes();
        persistent.push(PersistentBuffer {
            tensor: t,
            size,
            offset,
        });
        end = offset + size;
    }
    let plan = Plan {
        order,
        alignment: align,
        buffers,
        arena_bytes: placement.arena_bytes,
        lower_bound_bytes,
        persistent,
        persistent_bytes: end,
        live_bytes: lt.live_bytes(),
        strategy: placement.strategy.name(),
    };
    verify::verify(graph, &plan, scratch)?;
    Ok(plan)
}
