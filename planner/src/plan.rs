//! The plan: order, buffers, offsets and sizes, produced by the stages and verified.

use crate::alias::{self, Alias, AliasOptions, OpMode};
use crate::diag::{Diagnostic, Result};
use crate::ir::{Graph, OpId, TensorId};
use crate::kernels::Kernels;
use crate::lifetimes::{self, BufferOwner, Piece};
use crate::offsets::{self, PlacementOptions};
use crate::regions::{self, Region, RegionPlan};
use crate::schedule::{self, OrderOptions};
use crate::verify;

/// The largest object (the arena, the state region, a weight buffer) a 32-bit core can hold:
/// Rust's limit on the size of one object, `isize::MAX` of a 32-bit target.
pub const MAX_OBJECT_BYTES: usize = i32::MAX as usize;

/// The bytes a 32-bit core can address: arena, state and weights must fit together.
pub const ADDRESS_SPACE_BYTES: u64 = 1 << 32;

/// Options that shape a plan. The default turns every optimisation on; each can be switched
/// off to compare (`PlanOptions::unoptimised()` turns them all off: the stored order and
/// TFLM's greedy placement).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// Alignment of every buffer offset in bytes (a power of two). Default 16, as TFLM.
    pub alignment: usize,
    /// How the operator order is chosen (`order.reorder = false`: the stored order).
    pub order: OrderOptions,
    /// How offsets are searched (`PlacementOptions::tflm()`: TFLM's greedy rule only).
    pub placement: PlacementOptions,
    /// Which tensors may share bytes (`AliasOptions::none()`: a buffer per tensor).
    pub aliasing: AliasOptions,
    /// Debug mode (TFLM's `preserve_all_tensors`): every activation tensor gets its own
    /// bytes (no aliasing) and keeps them from its producer (graph inputs: from the start)
    /// to the end of the run, so any of them can be read after `invoke()`.
    pub preserve_all_tensors: bool,
    /// The graph inputs keep their bytes to the end of the run (never overwritten).
    pub preserve_inputs: bool,
    /// The memory map: RAM regions, fastest first, over which the arena's buffers are split
    /// ([`crate::regions`]). Empty: one arena.
    pub regions: Vec<Region>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            alignment: 16,
            order: OrderOptions::default(),
            placement: PlacementOptions::default(),
            aliasing: AliasOptions::default(),
            preserve_all_tensors: false,
            preserve_inputs: false,
            regions: Vec::new(),
        }
    }
}

impl PlanOptions {
    /// Every optimisation off: the stored order, a buffer per tensor, placed by TFLM's
    /// greedy rule alone.
    pub fn unoptimised() -> Self {
        PlanOptions {
            order: OrderOptions {
                reorder: false,
                ..OrderOptions::default()
            },
            placement: PlacementOptions::tflm(),
            aliasing: AliasOptions::none(),
            ..PlanOptions::default()
        }
    }

    /// The default options with another alignment.
    pub fn with_alignment(alignment: usize) -> Self {
        PlanOptions {
            alignment,
            ..PlanOptions::default()
        }
    }
}

/// A buffer of the reused region with its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedBuffer {
    pub owner: BufferOwner,
    /// Bytes it spans (its tensor's, or its scratch's).
    pub size: usize,
    /// First and last step (positions in [`Plan::order`]) at which a piece is live,
    /// inclusive.
    pub first: usize,
    pub last: usize,
    /// Byte offset in the arena (with regions: in the address space where the regions lie
    /// one after another; `offset - regions[region].base` is its offset in its region).
    pub offset: usize,
    /// Its region in [`Plan::regions`] (0 without regions).
    pub region: usize,
    /// Its pieces (offsets relative to `offset`), each with its own steps: one, the whole
    /// buffer, unless it holds a group of aliases whose members live at different steps
    /// ([`crate::lifetimes::pieces_of`]). Only the bytes of a live piece are reserved.
    pub pieces: Vec<Piece>,
}

impl PlannedBuffer {
    /// Bytes of its pieces live at step `step`.
    pub fn live_bytes_at(&self, step: usize) -> usize {
        self.pieces
            .iter()
            .filter(|p| p.first <= step && step <= p.last)
            .map(|p| p.size)
            .sum()
    }
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
    /// Tensors that live in another tensor's buffer (views, in-place outputs, slices of a
    /// concatenation), in tensor order.
    pub aliases: Vec<Alias>,
    /// Per operator (by id): whether it runs normally, in place, or not at all.
    pub modes: Vec<OpMode>,
    /// Bytes of the activation arena (scratch included): `max(offset + size)`.
    pub arena_bytes: usize,
    /// Most bytes live at any one step for this order and aliasing: no placement can do
    /// better.
    pub lower_bound_bytes: usize,
    /// Most bytes live at any one step for this order if every tensor had its own buffer.
    pub unaliased_bound_bytes: usize,
    /// Most bytes live at any one step for the model's stored order (what the lower bound
    /// would be without reordering).
    pub stored_order_bound_bytes: usize,
    /// The smallest arena any placement of this order could have with this alignment: the
    /// lower bound with every buffer but the top one at a step rounded up to the alignment.
    pub aligned_bound_bytes: usize,
    /// Whether no order has a smaller lower bound (proved by the exact search), counting
    /// views as the search does; in-place operators and concatenation slices are taken
    /// after the order is chosen and can only lower the bound further. (An order of the
    /// alias-aware search is optimal in this sense where its views-only peak meets the
    /// proved bound.)
    pub order_optimal: bool,
    /// How the order was chosen.
    pub order_search: &'static str,
    /// Whether no placement of this order has a smaller arena (it meets the aligned bound,
    /// or the branch and bound proved it).
    pub placement_optimal: bool,
    /// Variable tensors, laid out one after another (aligned).
    pub persistent: Vec<PersistentBuffer>,
    /// Bytes of the persistent region.
    pub persistent_bytes: usize,
    /// Live bytes at each step.
    pub live_bytes: Vec<usize>,
    /// The placement stage whose offsets were kept (e.g. TFLM's greedy rule).
    pub strategy: &'static str,
    /// The memory map, if regions were given: each region's place and used bytes. Empty:
    /// one arena.
    pub regions: Vec<RegionPlan>,
}

impl Plan {
    /// The first step at which the live bytes are the lower bound (`None` for a graph
    /// without operators: there are no steps).
    pub fn peak_step(&self) -> Option<usize> {
        let steps = self.live_bytes.get(..self.order.len())?;
        let max = *steps.iter().max()?;
        steps.iter().position(|&b| b == max)
    }

    /// Bytes of arena above the lower bound.
    pub fn gap_bytes(&self) -> usize {
        self.arena_bytes.saturating_sub(self.lower_bound_bytes)
    }

    /// Where tensor `t` lives in the arena: `(offset, size)`, if it has arena bytes.
    pub fn tensor_place(&self, graph: &Graph, t: TensorId) -> Option<(usize, usize)> {
        self.tensor_places(graph).get(t.0).copied().flatten()
    }

    /// [`Plan::tensor_place`] of every tensor (by id), in one pass over buffers and aliases.
    pub fn tensor_places(&self, graph: &Graph) -> Vec<Option<(usize, usize)>> {
        let mut root = vec![None; graph.tensors.len()];
        for b in &self.buffers {
            if let BufferOwner::Tensor(t) = b.owner {
                root[t.0] = Some(b.offset);
            }
        }
        let mut place: Vec<Option<(usize, usize)>> = root
            .iter()
            .zip(&graph.tensors)
            .map(|(r, t)| r.map(|o| (o, t.bytes())))
            .collect();
        for a in &self.aliases {
            place[a.tensor.0] =
                root[a.buffer.0].map(|o| (o + a.offset, graph.tensor(a.tensor).bytes()));
        }
        place
    }

    /// What operator `op` does about aliasing.
    pub fn mode(&self, op: OpId) -> OpMode {
        self.modes.get(op.0).copied().unwrap_or_default()
    }

    /// Whether the order differs from the model's stored order.
    pub fn reordered(&self) -> bool {
        self.order.iter().enumerate().any(|(i, o)| o.0 != i)
    }
}

/// Plans `graph` for the kernels `kernels` declares (their scratch and aliasing abilities):
/// the order search, aliasing, lifetimes, the offset search, then the verifier.
/// [`NoKernels`](crate::kernels::NoKernels) plans the tensors alone (no scratch, a buffer
/// per tensor).
pub fn plan(graph: &Graph, kernels: &dyn Kernels, options: &PlanOptions) -> Result<Plan> {
    let align = options.alignment;
    if align == 0 || !align.is_power_of_two() {
        return Err(
            Diagnostic::unsupported("the alignment must be a power of two")
                .expected_found("1, 2, 4, 8, 16, ...", align.to_string()),
        );
    }
    if options.preserve_all_tensors || options.preserve_inputs {
        return plan_preserving(graph, kernels, options);
    }
    let stored = schedule::stored_order(graph);
    let stored_order_bound_bytes = lifetimes::lifetimes(graph, &stored, kernels).lower_bound();
    // The order search sees views (they do not depend on the order); in-place operators and
    // concatenation slices are then taken for the chosen order. A second, alias-aware search
    // also counts what those can save at each step; its order is a candidate below.
    let roots = alias::view_roots(graph, kernels, &options.aliasing);
    let sched = schedule::schedule_with_views(graph, kernels, &options.order, &roots);
    let gains = alias::step_gains(graph, kernels, &options.aliasing, &roots);
    let aware = (options.order.reorder && options.order.alias_aware && !gains.is_empty())
        .then(|| {
            let aware = schedule::schedule_aliased;
            aware(graph, kernels, &options.order, &roots, &gains, &sched.order).order
        })
        .filter(|o| *o != sched.order);
    let stored_optimal = sched.stored_peak_bytes <= sched.min_peak_bound_bytes;
    let (mut order_optimal, mut order_search) = (sched.optimal, sched.search.name());
    let candidate = |order: Vec<OpId>, aliasing: &AliasOptions| {
        let aliases = alias::analyse(graph, &order, aliasing, kernels);
        let lt = lifetimes::lifetimes_aliased(graph, &order, kernels, &aliases);
        (order, aliases, lt)
    };
    let (mut order, mut aliases, mut lt) = candidate(sched.order, &options.aliasing);
    debug_assert!(lt.lower_bound() <= sched.peak_bytes);
    let mut placement = offsets::place(&lt.buffers, align, &options.placement);
    // A smaller bound need not pack as well: the alias-aware search's order, the stored
    // order, and plans without aliasing (a group of aliases is a larger buffer of pieces),
    // are kept instead when they pack smaller.
    let mut others = Vec::new();
    if let Some(o) = aware {
        others.push((o, options.aliasing, Source::AliasAware));
    }
    if order != stored {
        others.push((stored.clone(), options.aliasing, Source::Stored));
    }
    if options.aliasing.any() {
        others.push((order.clone(), AliasOptions::none(), Source::Searched));
        if order != stored {
            others.push((stored, AliasOptions::none(), Source::Stored));
        }
    }
    let mut tried = vec![lt.buffers.clone()];
    for (o, aliasing, source) in others {
        let (o, a, l) = candidate(o, &aliasing);
        if placement.arena_bytes <= offsets::target(&l.buffers, align) || tried.contains(&l.buffers)
        {
            continue;
        }
        tried.push(l.buffers.clone());
        let p = offsets::place(&l.buffers, align, &options.placement);
        if p.arena_bytes < placement.arena_bytes {
            (order_optimal, order_search) = match source {
                Source::Stored => (
                    stored_optimal,
                    "stored order packs smaller than the searched one",
                ),
                Source::Searched => (sched.optimal, sched.search.name()),
                // Optimal as the doc of `order_optimal` counts: by the views-only peak.
                Source::AliasAware => (
                    schedule::peak_with_views(graph, kernels, &roots, &o)
                        <= sched.min_peak_bound_bytes,
                    "alias-aware search",
                ),
            };
            (order, aliases, lt, placement) = (o, a, l, p);
        }
    }
    let lower_bound_bytes = lt.lower_bound();
    let unaliased_bound_bytes = lifetimes::lifetimes(graph, &order, kernels).lower_bound();
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
            region: 0,
            pieces: b.pieces.clone(),
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
    let mut plan = Plan {
        order,
        alignment: align,
        buffers,
        aliases: aliases.list(),
        modes: aliases.modes().to_vec(),
        arena_bytes: placement.arena_bytes,
        lower_bound_bytes,
        unaliased_bound_bytes,
        stored_order_bound_bytes,
        aligned_bound_bytes: placement.target_bytes,
        order_optimal,
        order_search,
        placement_optimal: placement.optimal,
        persistent,
        persistent_bytes: end,
        live_bytes: lt.live_bytes(),
        strategy: placement.method.name(),
        regions: Vec::new(),
    };
    regions::assign(graph, &mut plan, &options.regions, &options.placement)?;
    verify::verify(graph, &plan, kernels)?;
    check_address_space(graph, &plan)?;
    Ok(plan)
}

/// Where a candidate order of [`plan`] came from.
#[derive(Clone, Copy)]
enum Source {
    /// The order search that counts views only.
    Searched,
    /// The model's stored order.
    Stored,
    /// The search that also counts in-place operators and slices.
    AliasAware,
}

/// [`PlanOptions::preserve_all_tensors`] and [`PlanOptions::preserve_inputs`]: the tensors to
/// keep are added to the graph's outputs, which every stage keeps to the last step and never
/// overwrites (and the verifier checks so); the plan, verified against that graph, places
/// every tensor of `graph` (the tensors are the same).
fn plan_preserving(graph: &Graph, kernels: &dyn Kernels, options: &PlanOptions) -> Result<Plan> {
    let mut inner = options.clone();
    inner.preserve_all_tensors = false;
    inner.preserve_inputs = false;
    let mut keep: Vec<TensorId> = graph.inputs.clone();
    if options.preserve_all_tensors {
        inner.aliasing = AliasOptions::none();
        keep.extend(graph.ops.iter().flat_map(|op| op.outputs.iter().copied()));
    }
    let mut kept = graph.clone();
    let mut is_output = vec![false; graph.tensors.len()];
    for &t in &graph.outputs {
        is_output[t.0] = true;
    }
    for t in keep {
        if graph.tensor(t).kind == crate::ir::TensorKind::Activation && !is_output[t.0] {
            is_output[t.0] = true;
            kept.outputs.push(t);
        }
    }
    plan(&kept, kernels, &inner)
}

/// Refuses a plan no 32-bit core can hold: an arena or state region larger than one object
/// may be, or arena, state and weights together beyond the address space.
fn check_address_space(graph: &Graph, plan: &Plan) -> Result<()> {
    for (what, bytes) in [
        ("the arena", plan.arena_bytes),
        ("the persistent state", plan.persistent_bytes),
    ] {
        if bytes > MAX_OBJECT_BYTES {
            return Err(Diagnostic::unsupported(format!(
                "{what} does not fit a 32-bit address space"
            ))
            .expected_found(
                format!("at most {MAX_OBJECT_BYTES} bytes, the largest object on a 32-bit core"),
                format!("{bytes} bytes"),
            ));
        }
    }
    let total =
        plan.arena_bytes as u64 + plan.persistent_bytes as u64 + graph.weights_bytes() as u64;
    if total >= ADDRESS_SPACE_BYTES {
        return Err(Diagnostic::unsupported(
            "arena, state and weights together do not fit a 32-bit address space",
        )
        .expected_found(
            format!("less than {ADDRESS_SPACE_BYTES} bytes"),
            format!(
                "{total} bytes (arena {}, state {}, weights {})",
                plan.arena_bytes,
                plan.persistent_bytes,
                graph.weights_bytes()
            ),
        ));
    }
    Ok(())
}
