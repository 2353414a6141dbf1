//! Scheduling: the order in which operators run, chosen for the smallest peak of live bytes.
//!
//! The peak of an order is the lower bound of any placement for it ([`Lifetimes::lower_bound`]
//! of its lifetimes), so the order is chosen first and the offsets then aim at its bound.
//!
//! The search works on *executed sets*: which operators ran so far. The bytes resident after
//! a set `S` ran depend only on `S` (a tensor is resident if it is a graph input or was
//! produced in `S`, and is a graph output or has a consumer outside `S`), and the bytes live
//! while operator `o` runs after `S` are `resident(S) + outputs(o) + scratch(o)` (its inputs
//! are resident already), plus, at step 0 only, the graph inputs nobody reads. This is
//! exactly the inclusive lifetime rule of [`crate::lifetimes`], so the value the search
//! computes for an order is the lower bound of that order.
//!
//! Operators run after the producers of their inputs, and operators that read or write the
//! same variable (state) tensor keep their stored order.
//!
//! 1. **Segments.** An operator that is an ancestor or a descendant of every other operator
//!    (a *cut*: the graph narrows to it, as at every layer of a chain) runs at the same step
//!    in every order, and the operators between two cuts always occupy the same steps. Each
//!    segment between cuts is ordered on its own: the peak is the largest segment peak.
//! 2. **Seeds.** Cheap schedules give each segment an incumbent: the stored order, two list
//!    schedules (least live bytes now; most bytes freed, as XLA's list scheduler; ready
//!    operators in a heap, `O(edges log n)`), and two depth-first post-orders (operands in
//!    index order; the operand needing most memory first, as Sethi-Ullman). The stored order
//!    wins ties.
//! 3. **Beam search.** Dynamic programming over executed sets, level by level (all sets of
//!    `k` operators, deduplicated, each with the smallest peak that reaches it), keeping only
//!    the best states of each level (fewest resident bytes, then smallest peak). Long
//!    segments get a narrower beam (a budget of states per segment).
//! 4. **Exact search.** The same without the cut, pruned by the incumbent and by a
//!    per-operator lower bound on what is left: it proves the incumbent optimal or finds
//!    the optimum. It runs under a budget counted in states (never wall time), shared by
//!    all segments; a segment beyond it keeps the heuristic order. Neither search runs on a
//!    segment whose best seed meets its lower bound: the largest of its operators' bounds
//!    and of the bytes live at its last step, whichever operator can run there (what is
//!    resident after a segment is the same in every order): a fan-out whose outputs stay
//!    live, or meet at one operator, is proved optimal by its seeds.
//! 5. **Work budget.** Both searches also count their work in steps (a candidate state, a
//!    consumer, word or ready operator visited) against [`OrderOptions::work_budget`]: each
//!    segment may use the work left times its share of the operators left, and a search out
//!    of work keeps the segment's best order so far. A segment of thousands of operators that
//!    could run in any order (a wide fan-out) would otherwise cost its length squared per
//!    beam state. Everything else is near-linear: the seeds, the segments, and the bytes
//!    resident through each segment (one difference array over the segments).
//!
//! The searches only accept strictly smaller peaks, so a segment whose stored order is
//! optimal keeps it.
//!
//! **Knowing aliasing.** The search above counts views (they do not depend on the order);
//! in-place operators and concatenation slices depend on which operator reads a tensor last,
//! so [`crate::alias::analyse`] decides them for a given order. [`schedule_aliased`] runs the
//! same search with each step's live bytes lowered by what those could save there
//! ([`Gain`], from [`crate::alias::step_gains`]): an in-place operator's output costs nothing
//! when the operator reads the overwritten input last (the dying input is tested in each
//! state), a concatenation of slices costs nothing in any order. So an order where a RELU
//! reads its input after the input's other readers, or where the branches of a
//! concatenation run one after the other, can win although every order has the same peak
//! without aliasing. Its first seed is the order of the views-only search (which wins ties),
//! and it searches only the segments whose best seed is above every segment's lower bound
//! (what no order can go below), as only the whole order's peak counts. Its peak is an
//! estimate (the analysis may find a merge unsafe or take more than counted), so
//! [`crate::plan()`] takes its order only where the aliased plan packs smaller.
//!
//! Never worse than the stored order: every segment keeps its best seed unless a search finds
//! a strictly smaller peak. Everything is deterministic: ties go to the lower index, hash
//! tables are only used for lookups (never iterated), and budgets count states.
//!
//! [`Lifetimes::lower_bound`]: crate::lifetimes::Lifetimes::lower_bound

use crate::ir::{Graph, OpId, TensorKind};
use crate::kernels::Kernels;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

mod search;
use search::*;

/// The model's stored order.
pub fn stored_order(graph: &Graph) -> Vec<OpId> {
    graph.ops.iter().map(|op| op.id).collect()
}

/// How the order is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderOptions {
    /// Search for the order with the smallest peak. Off: the stored order.
    pub reorder: bool,
    /// Also search with the in-place operators and concatenation slices counted
    /// ([`schedule_aliased`]); [`crate::plan()`] keeps that order where it packs smaller.
    pub alias_aware: bool,
    /// Run the exact search (off: seeds and beam search only).
    pub exact: bool,
    /// Work the exact search may do over all segments, in state words: a state of a
    /// segment of `m` operators costs `1 + ceil(m / 64)`. A segment that would exceed it
    /// keeps the heuristic order.
    pub exact_budget: usize,
    /// States kept per step by the beam search (0: no beam search).
    pub beam_width: usize,
    /// States the beam search may keep over a whole segment: long segments get a narrower
    /// beam (at least 4 states per step).
    pub beam_states: usize,
    /// Work the beam and exact searches may do over all segments, in steps: a candidate
    /// state evaluated, a consumer, word or ready operator visited. Each segment may use the
    /// work left times its share of the operators left (what it leaves goes to the later
    /// ones); a search that runs out keeps the segment's best order so far.
    pub work_budget: usize,
}

const MIN_BEAM_WIDTH: usize = 4;

/// Steps of work a candidate state costs when it is hashed and stored (a visit costs 1).
const CANDIDATE_WORK: usize = 4;

impl Default for OrderOptions {
    fn default() -> Self {
        OrderOptions {
            reorder: true,
            alias_aware: true,
            exact: true,
            exact_budget: 200_000,
            beam_width: 64,
            beam_states: 40_000,
            work_budget: 60_000_000,
        }
    }
}

/// How the chosen order was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderSearch {
    /// Reordering is off: the stored order.
    Off,
    /// Every segment was solved exactly or met its lower bound.
    Exact,
    /// Some segment was beyond the exact search's budgets and got the heuristics.
    Heuristic,
}

impl OrderSearch {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            OrderSearch::Off => "reordering off",
            OrderSearch::Exact => "exact search",
            OrderSearch::Heuristic => "heuristic search",
        }
    }
}

/// The chosen order and what is known about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Operators in execution order.
    pub order: Vec<OpId>,
    /// The peak of live bytes of `order` (its lifetimes' lower bound).
    pub peak_bytes: usize,
    /// The peak of the stored order.
    pub stored_peak_bytes: usize,
    /// Whether no order has a smaller peak (proved by the exact search or a lower bound).
    pub optimal: bool,
    /// A lower bound on the peak of every order (equal to `peak_bytes` when `optimal`).
    pub min_peak_bound_bytes: usize,
    pub search: OrderSearch,
    /// Segments the graph split into (cuts count as segments of one operator).
    pub segments: usize,
    /// Work of the exact and beam searches (states, in words).
    pub states: usize,
    /// Work of the exact and beam searches, in the steps of [`OrderOptions::work_budget`].
    pub work: usize,
}

/// What aliasing can save at one operator's step, as the alias-aware search counts it
/// ([`crate::alias::step_gains`]): bytes its output need not take of its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gain {
    /// `(tensor, bytes)`: saved when the operator is the last reader of that tensor (a view
    /// root), which its output can then overwrite (the in-place forms). The largest that
    /// applies counts.
    pub if_dies: Vec<(usize, usize)>,
    /// Saved in any order (a concatenation whose inputs are slices of its output).
    pub always: usize,
}

/// Chooses the order of `graph`'s operators (see the module documentation).
pub fn schedule(graph: &Graph, kernels: &dyn Kernels, options: &OrderOptions) -> Schedule {
    let roots: Vec<usize> = (0..graph.tensors.len()).collect();
    schedule_with_views(graph, kernels, options, &roots)
}

/// [`schedule`] where tensors share bytes with their view root (`roots[t]`, from
/// [`crate::alias::view_roots`]): a view group is resident from its root's producer until
/// every member's last reader ran, and a view operator adds no bytes.
pub fn schedule_with_views(
    graph: &Graph,
    kernels: &dyn Kernels,
    options: &OrderOptions,
    roots: &[usize],
) -> Schedule {
    search_orders(
        Problem::new(graph, kernels, roots, &[]),
        graph,
        options,
        None,
    )
}

/// [`schedule_with_views`] where operator `o`'s step costs `gains[o]` fewer bytes when it
/// applies: the search counts the in-place forms and concatenation slices that aliasing
/// may take for the order it chooses. What it finds is a candidate: the aliasing decided
/// for it afterwards may take less (a merge that is not safe) or more (a pointwise
/// convolution's pieces), so its peak is an estimate, and [`crate::plan()`] keeps the order
/// whose aliased plan packs smaller. `first` (the views-only search's order) is the first
/// seed, which wins ties: where it is as good by this model, it is kept. Only the segments
/// whose best seed is above every segment's lower bound are searched (only the whole
/// order's peak counts).
pub fn schedule_aliased(
    graph: &Graph,
    kernels: &dyn Kernels,
    options: &OrderOptions,
    roots: &[usize],
    gains: &[Gain],
    first: &[OpId],
) -> Schedule {
    let p = Problem::new(graph, kernels, roots, gains);
    search_orders(p, graph, options, Some(first))
}

/// The order search of `p` (see the module documentation), with `first` as the first seed
/// (else the stored order).
fn search_orders(
    p: Problem,
    graph: &Graph,
    options: &OrderOptions,
    first: Option<&[OpId]>,
) -> Schedule {
    let stored: Vec<u32> = (0..p.n as u32).collect();
    let stored_live = p.simulate(&stored);
    let stored_peak = stored_live.iter().copied().max().unwrap_or(0);
    if !options.reorder || p.n <= 1 {
        let optimal = p.n <= 1;
        return Schedule {
            order: stored_order(graph),
            peak_bytes: stored_peak,
            stored_peak_bytes: stored_peak,
            optimal,
            min_peak_bound_bytes: if optimal { stored_peak } else { 0 },
            search: if options.reorder {
                OrderSearch::Exact
            } else {
                OrderSearch::Off
            },
            segments: p.n,
            states: 0,
            work: 0,
        };
    }

    let segments = p.segments();
    let mut seeds: Vec<Vec<u32>> = vec![
        stored,
        p.list_schedule(ListRule::LeastLive),
        p.list_schedule(ListRule::MostFreed),
        p.dfs_schedule(false),
        p.dfs_schedule(true),
    ];
    let aware = first.is_some();
    if let Some(first) = first.filter(|o| o.len() == p.n) {
        seeds.insert(0, first.iter().map(|o| o.0 as u32).collect());
    }
    let lives: Vec<Vec<usize>> = seeds.iter().map(|s| p.simulate(s)).collect();
    let resident = p.resident_before_each_stored_step();
    let crossing = p.crossing_bytes(&segments);
    // Each segment of more than one operator, ready for the searches.
    let ctxs: Vec<Option<SegCtx>> = segments
        .iter()
        .enumerate()
        .map(|(seg, &(lo, hi))| {
            let res = (resident[lo], resident[hi]);
            (hi - lo > 1).then(|| SegCtx::new(&p, lo, hi, res, crossing[seg]))
        })
        .collect();
    // The alias-aware search only looks for a smaller peak of the whole order: a segment
    // whose best seed is within the largest segment's lower bound is not searched.
    let floor = if aware {
        let best_seed_peak = |lo: usize, hi: usize| {
            let seg_peak = |l: &Vec<usize>| l[lo..hi].iter().copied().max().unwrap_or(0);
            lives.iter().map(seg_peak).min().unwrap_or(0)
        };
        segments
            .iter()
            .zip(&ctxs)
            .map(|(&(lo, hi), ctx)| {
                ctx.as_ref()
                    .map_or(best_seed_peak(lo, hi), |c| c.lower_bound)
            })
            .max()
            .unwrap_or(0)
    } else {
        0
    };
    let mut work = 0usize;
    let mut work_left = options.work_budget;

    let mut order: Vec<u32> = Vec::with_capacity(p.n);
    let mut peak = 0usize;
    let mut proven_bound = 0usize;
    let mut all_proven = true;
    let mut states = 0usize;
    let mut exact_left = if options.exact {
        options.exact_budget
    } else {
        0
    };
    for (seg, &(lo, hi)) in segments.iter().enumerate() {
        // The best seed on this segment; the first seed (the stored order, or `first`) wins
        // ties.
        let seg_peak = |live: &Vec<usize>| live[lo..hi].iter().copied().max().unwrap_or(0);
        let (best_seed, mut best_peak) = lives
            .iter()
            .enumerate()
            .map(|(i, l)| (i, seg_peak(l)))
            .min_by_key(|&(i, pk)| (pk, i))
            .expect("there are seeds");
        let mut best: Vec<u32> = seeds[best_seed][lo..hi].to_vec();
        if hi - lo == 1 {
            peak = peak.max(best_peak);
            proven_bound = proven_bound.max(best_peak);
            order.extend(best);
            continue;
        }
        let ctx = ctxs[seg]
            .as_ref()
            .expect("a segment of more than one operator");
        let mut proven = best_peak <= ctx.lower_bound;
        let mut seg_bound = ctx.lower_bound;
        if !proven && aware && best_peak <= floor {
            all_proven = false;
            peak = peak.max(best_peak);
            proven_bound = proven_bound.max(seg_bound);
            order.extend(best);
            continue;
        }
        // This segment's share of the work left: its part of the operators not yet ordered.
        let share = (work_left as u128 * (hi - lo) as u128 / (p.n - lo) as u128) as usize;
        let mut allowance = share;
        // The beam search first: cheap, and a better incumbent prunes the exact search.
        if !proven && options.beam_width > 0 {
            let width = options
                .beam_width
                .min((options.beam_states / (hi - lo)).max(MIN_BEAM_WIDTH));
            let (outcome, used, spent) = ctx.search(best_peak, Mode::Beam { width }, allowance);
            states += used;
            allowance -= spent.min(allowance);
            if let Outcome::Found(o, pk) = outcome {
                best = o;
                best_peak = pk;
                proven = best_peak <= ctx.lower_bound;
            }
        }
        if !proven && exact_left > 0 {
            let mode = Mode::Exact { budget: exact_left };
            let (outcome, used, spent) = ctx.search(best_peak, mode, allowance);
            states += used;
            allowance -= spent.min(allowance);
            match outcome {
                Outcome::Found(o, pk) => {
                    best = o;
                    best_peak = pk;
                    proven = true;
                    exact_left -= used;
                }
                Outcome::NoBetter => {
                    proven = true;
                    exact_left -= used;
                }
                Outcome::OverBudget => exact_left = 0,
                Outcome::OutOfWork => exact_left -= used.min(exact_left),
            }
        }
        work += share - allowance;
        work_left -= share - allowance;
        if proven {
            seg_bound = best_peak;
        }
        all_proven &= proven;
        peak = peak.max(best_peak);
        proven_bound = proven_bound.max(seg_bound);
        order.extend(best);
    }
    debug_assert_eq!(order.len(), p.n);
    debug_assert_eq!(
        p.simulate(&order).into_iter().max().unwrap_or(0),
        peak,
        "the segment peaks add up"
    );
    let optimal = peak <= proven_bound;
    Schedule {
        order: order.into_iter().map(|o| OpId(o as usize)).collect(),
        peak_bytes: peak,
        stored_peak_bytes: stored_peak,
        optimal,
        min_peak_bound_bytes: proven_bound.min(peak),
        search: if all_proven || optimal {
            OrderSearch::Exact
        } else {
            OrderSearch::Heuristic
        },
        segments: segments.len(),
        states,
        work,
    }
}

/// The live bytes at each step of `order`, by the search's own model (equal to
/// [`crate::lifetimes::Lifetimes::live_bytes`] for the same order; for tests).
pub fn live_bytes(graph: &Graph, order: &[OpId], kernels: &dyn Kernels) -> Vec<usize> {
    let roots: Vec<usize> = (0..graph.tensors.len()).collect();
    live_bytes_with_gains(graph, kernels, &roots, &[], order)
}

/// The peak of `order` by the order search's model with views (`roots`, as
/// [`schedule_with_views`]): what [`Schedule::peak_bytes`] would be for it.
pub fn peak_with_views(
    graph: &Graph,
    kernels: &dyn Kernels,
    roots: &[usize],
    order: &[OpId],
) -> usize {
    peak_with_gains(graph, kernels, roots, &[], order)
}

/// The peak of `order` by the alias-aware search's model (views `roots`, savings `gains`,
/// as [`schedule_aliased`]): what its [`Schedule::peak_bytes`] would be for it.
pub fn peak_with_gains(
    graph: &Graph,
    kernels: &dyn Kernels,
    roots: &[usize],
    gains: &[Gain],
    order: &[OpId],
) -> usize {
    let live = live_bytes_with_gains(graph, kernels, roots, gains, order);
    live.into_iter().max().unwrap_or(0)
}

/// The live bytes at each step of `order` by the search's model with views `roots` and
/// savings `gains`.
fn live_bytes_with_gains(
    graph: &Graph,
    kernels: &dyn Kernels,
    roots: &[usize],
    gains: &[Gain],
    order: &[OpId],
) -> Vec<usize> {
    let p = Problem::new(graph, kernels, roots, gains);
    let order: Vec<u32> = order.iter().map(|o| o.0 as u32).collect();
    p.simulate(&order)
}

/// The graph reduced to what the order search needs. Operators are numbered by their
/// stored position (a topological order).
struct Problem {
    n: usize,
    /// Per tensor: bytes in the arena (0 if not an arena buffer).
    size: Vec<usize>,
    /// Per tensor: a graph output, live to the end.
    keep: Vec<bool>,
    /// Per tensor: the operators reading it (distinct, ascending).
    consumers: Vec<Vec<u32>>,
    /// Per operator: distinct arena tensors read.
    ins: Vec<Vec<u32>>,
    /// Per operator: bytes of the arena tensors written.
    out_bytes: Vec<usize>,
    /// Per operator: bytes of written tensors that stay resident after it (read later or a
    /// graph output).
    kept_bytes: Vec<usize>,
    scratch: Vec<usize>,
    /// Per operator: distinct operators it depends on / that depend on it (ascending).
    preds: Vec<Vec<u32>>,
    succs: Vec<Vec<u32>>,
    /// Per tensor: the producing operator, if any.
    producer: Vec<Option<u32>>,
    /// Per tensor: a graph input.
    input: Vec<bool>,
    /// Per operator: the arena tensors it writes (ascending).
    outs: Vec<Vec<u32>>,
    /// Bytes resident before the first step (graph inputs still needed).
    start_resident: usize,
    /// Bytes live at step 0 only (graph inputs nobody reads).
    first_step_extra: usize,
    /// Per operator: what aliasing saves at its step (empty: nothing, for every operator).
    gains: Vec<Gain>,
    /// Per operator: the most its gain can be, in any order (empty with `gains`).
    max_gains: Vec<usize>,
}

impl Problem {
    /// The problem of `graph`, with tensor `t`'s bytes counted as its view root's
    /// (`roots[t]`; `roots[t] == t` for a tensor with bytes of its own).
    /// `gains` (per operator, or empty) are the alias-aware search's savings.
    fn new(graph: &Graph, kernels: &dyn Kernels, roots: &[usize], gains: &[Gain]) -> Problem {
        let n = graph.ops.len();
        let nt = graph.tensors.len();
        let size: Vec<usize> = graph
            .tensors
            .iter()
            .map(|t| match t.kind {
                TensorKind::Activation if roots[t.id.0] == t.id.0 => t.bytes(),
                _ => 0,
            })
            .collect();
        let mut keep = vec![false; nt];
        for &o in &graph.outputs {
            keep[roots[o.0]] = true;
        }
        let mut input = vec![false; nt];
        for &i in &graph.inputs {
            input[roots[i.0]] = true;
        }
        let mut producer: Vec<Option<u32>> = vec![None; nt];
        for op in &graph.ops {
            for &t in &op.outputs {
                producer[t.0] = Some(op.id.0 as u32);
            }
        }
        let mut consumers: Vec<Vec<u32>> = vec![Vec::new(); nt];
        let mut ins = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        let mut succs = vec![Vec::new(); n];
        // Operators touching the same variable (state) tensor keep their stored order.
        let mut last_user: Vec<Option<u32>> = vec![None; nt];
        for op in &graph.ops {
            let o = op.id.0 as u32;
            for t in op.present_inputs() {
                let r = roots[t.0];
                if size[r] > 0 && consumers[r].last() != Some(&o) {
                    consumers[r].push(o);
                    ins[o as usize].push(r as u32);
                }
                if let Some(pr) = producer[t.0]
                    && pr < o
                {
                    preds[o as usize].push(pr);
                }
            }
            for t in op.present_inputs().chain(op.outputs.iter().copied()) {
                if graph.tensor(t).kind == TensorKind::Variable {
                    if let Some(u) = last_user[t.0]
                        && u != o
                    {
                        preds[o as usize].push(u);
                    }
                    last_user[t.0] = Some(o);
                }
            }
            preds[o as usize].sort_unstable();
            preds[o as usize].dedup();
            for &pr in &preds[o as usize] {
                succs[pr as usize].push(o);
            }
        }
        let mut out_bytes = vec![0usize; n];
        let mut kept_bytes = vec![0usize; n];
        for op in &graph.ops {
            for &t in &op.outputs {
                out_bytes[op.id.0] += size[t.0];
                if keep[t.0] || !consumers[t.0].is_empty() {
                    kept_bytes[op.id.0] += size[t.0];
                }
            }
        }
        let mut start_resident = 0;
        let mut first_step_extra = 0;
        for t in 0..nt {
            if input[t] {
                if keep[t] || !consumers[t].is_empty() {
                    start_resident += size[t];
                } else {
                    first_step_extra += size[t];
                }
            }
        }
        let scratch = graph
            .ops
            .iter()
            .map(|op| kernels.scratch_bytes(graph, op))
            .collect();
        let mut outs = vec![Vec::new(); n];
        for t in 0..nt {
            if let Some(q) = producer[t]
                && size[t] > 0
            {
                outs[q as usize].push(t as u32);
            }
        }
        let mut p = Problem {
            n,
            size,
            keep,
            consumers,
            ins,
            out_bytes,
            kept_bytes,
            scratch,
            preds,
            succs,
            producer,
            input,
            outs,
            start_resident,
            first_step_extra,
            gains: gains.to_vec(),
            max_gains: Vec::new(),
        };
        p.max_gains = (0..gains.len()).map(|o| p.gain(o, |_| true)).collect();
        p
    }

    /// The bytes aliasing saves at operator `o`'s step, where `dies(t)` tells whether `o` is
    /// the last reader of tensor `t` (never a graph output) in the order at hand.
    fn gain(&self, o: usize, dies: impl Fn(usize) -> bool) -> usize {
        let Some(g) = self.gains.get(o) else {
            return 0;
        };
        let dying = g
            .if_dies
            .iter()
            .filter(|&&(t, _)| !self.keep[t] && dies(t))
            .map(|&(_, b)| b)
            .max()
            .unwrap_or(0);
        g.always + dying
    }

    /// The most [`Problem::gain`] can be for operator `o`, in any order.
    fn max_gain(&self, o: usize) -> usize {
        self.max_gains.get(o).copied().unwrap_or(0)
    }

    /// Live bytes while `o` runs with `res` bytes resident before it.
    fn step_live(&self, o: usize, res: usize, gain: usize) -> usize {
        (res + self.out_bytes[o] + self.scratch[o]).saturating_sub(gain)
    }

    /// Live bytes at each step of `order` (at least one entry, as `Lifetimes::live_bytes`).
    fn simulate(&self, order: &[u32]) -> Vec<usize> {
        if order.is_empty() {
            return vec![self.start_resident + self.first_step_extra];
        }
        let mut rem: Vec<usize> = self.consumers.iter().map(Vec::len).collect();
        let mut res = self.start_resident;
        let mut live = Vec::with_capacity(order.len());
        for (s, &o) in order.iter().enumerate() {
            let o = o as usize;
            let extra = if s == 0 { self.first_step_extra } else { 0 };
            let gain = self.gain(o, |t| rem[t] == 1);
            live.push(self.step_live(o, res, gain) + extra);
            res += self.kept_bytes[o];
            for &t in &self.ins[o] {
                let t = t as usize;
                rem[t] -= 1;
                if rem[t] == 0 && !self.keep[t] {
                    res -= self.size[t];
                }
            }
        }
        live
    }

    /// Resident bytes before each step of the stored order (the same for every order, at the
    /// first step of a segment).
    fn resident_before_each_stored_step(&self) -> Vec<usize> {
        let mut rem: Vec<usize> = self.consumers.iter().map(Vec::len).collect();
        let mut res = self.start_resident;
        let mut out = Vec::with_capacity(self.n + 1);
        for o in 0..self.n {
            out.push(res);
            res += self.kept_bytes[o];
            for &t in &self.ins[o] {
                let t = t as usize;
                rem[t] -= 1;
                if rem[t] == 0 && !self.keep[t] {
                    res -= self.size[t];
                }
            }
        }
        out.push(res);
        out
    }

    /// Per segment: bytes of the tensors resident through the whole segment (available
    /// before it, needed after it). A tensor crosses a run of consecutive segments: one
    /// difference array over the segments, `O(tensors log segments)`.
    fn crossing_bytes(&self, segments: &[(usize, usize)]) -> Vec<usize> {
        let mut delta = vec![0i128; segments.len() + 1];
        for t in 0..self.size.len() {
            if self.size[t] == 0 {
                continue;
            }
            // Crosses `[lo, hi)` iff `from <= lo` and `hi <= until`.
            let from = if self.input[t] {
                0
            } else if let Some(q) = self.producer[t] {
                q as usize + 1
            } else {
                continue;
            };
            let until = if self.keep[t] {
                self.n
            } else if let Some(&c) = self.consumers[t].last() {
                c as usize
            } else {
                continue;
            };
            let first = segments.partition_point(|&(lo, _)| lo < from);
            let end = segments.partition_point(|&(_, hi)| hi <= until);
            if first < end {
                delta[first] += self.size[t] as i128;
                delta[end] -= self.size[t] as i128;
            }
        }
        let mut sum = 0i128;
        delta[..segments.len()]
            .iter()
            .map(|d| {
                sum += d;
                sum as usize
            })
            .collect()
    }

    /// Segments `[lo, hi)` of stored positions: every cut operator alone, the operators
    /// between cuts together. Operator `v` is a cut iff no dependency jumps over it, every
    /// operator before it has a successor and every operator after it a predecessor.
    fn segments(&self) -> Vec<(usize, usize)> {
        let n = self.n;
        let mut jump = vec![0i64; n + 1];
        for (o, ps) in self.preds.iter().enumerate() {
            for &p in ps {
                let p = p as usize;
                if p + 1 < o {
                    jump[p + 1] += 1;
                    jump[o] -= 1;
                }
            }
        }
        let first_sink = (0..n).find(|&v| self.succs[v].is_empty()).unwrap_or(n);
        let last_source = (0..n)
            .rev()
            .find(|&v| self.preds[v].is_empty())
            .unwrap_or(0);
        let mut segs = Vec::new();
        let mut run_start = 0usize;
        let mut jumped = 0i64;
        for (v, &j) in jump.iter().enumerate().take(n) {
            jumped += j;
            let cut = jumped == 0 && v <= first_sink && v >= last_source;
            if cut {
                if run_start < v {
                    segs.push((run_start, v));
                }
                segs.push((v, v + 1));
                run_start = v + 1;
            }
        }
        if run_start < n {
            segs.push((run_start, n));
        }
        segs
    }

    /// A list schedule: repeatedly run the ready operator that is best by `rule`. The bytes
    /// live and resident before the step are the same for every ready operator, so each
    /// one's key changes only when it becomes the last reader of one of its inputs: ready
    /// operators sit in a heap, re-entered then (`O(edges log n)`).
    fn list_schedule(&self, rule: ListRule) -> Vec<u32> {
        let n = self.n;
        let mut indeg: Vec<usize> = self.preds.iter().map(Vec::len).collect();
        let mut rem: Vec<usize> = self.consumers.iter().map(Vec::len).collect();
        let mut done = vec![false; n];
        // Per ready operator: bytes of its inputs nobody else still reads, and the version
        // of its heap entry.
        let mut freed = vec![0usize; n];
        let mut version = vec![0u32; n];
        let key = |o: usize, freed: usize| {
            let own = (self.out_bytes[o] + self.scratch[o]) as i128;
            // Net bytes released by running o (negative: it grows the resident set).
            let net = freed as i128 - self.kept_bytes[o] as i128;
            match rule {
                ListRule::LeastLive => (own, -net, o as u32),
                ListRule::MostFreed => (-net, own, o as u32),
            }
        };
        let mut heap = BinaryHeap::new();
        let make_ready =
            |o: usize, rem: &[usize], freed: &mut [usize], heap: &mut BinaryHeap<_>| {
                freed[o] = self.ins[o]
                    .iter()
                    .map(|&t| t as usize)
                    .filter(|&t| rem[t] == 1 && !self.keep[t])
                    .map(|t| self.size[t])
                    .sum();
                heap.push(Reverse((key(o, freed[o]), 0u32)));
            };
        for o in (0..n).filter(|&o| indeg[o] == 0) {
            make_ready(o, &rem, &mut freed, &mut heap);
        }
        let mut ready = vec![false; n];
        for o in (0..n).filter(|&o| indeg[o] == 0) {
            ready[o] = true;
        }
        let mut order = Vec::with_capacity(n);
        while let Some(Reverse(((_, _, o), v))) = heap.pop() {
            let o = o as usize;
            if done[o] || v != version[o] {
                continue;
            }
            done[o] = true;
            order.push(o as u32);
            for &t in &self.ins[o] {
                let t = t as usize;
                rem[t] -= 1;
                if rem[t] == 1 && !self.keep[t] {
                    // Its last reader frees it now.
                    let c = self.consumers[t]
                        .iter()
                        .map(|&c| c as usize)
                        .find(|&c| !done[c])
                        .expect("one reader left");
                    if ready[c] {
                        freed[c] += self.size[t];
                        version[c] += 1;
                        heap.push(Reverse((key(c, freed[c]), version[c])));
                    }
                }
            }
            for &s in &self.succs[o] {
                let s = s as usize;
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    ready[s] = true;
                    make_ready(s, &rem, &mut freed, &mut heap);
                }
            }
        }
        order
    }

    /// A depth-first post-order from the sinks. With `heavy_first`, the operands whose
    /// evaluation needs the most memory (a Sethi-Ullman estimate) run first; else in index
    /// order.
    fn dfs_schedule(&self, heavy_first: bool) -> Vec<u32> {
        let n = self.n;
        let mut preds: Vec<Vec<u32>> = self.preds.clone();
        if heavy_first {
            // need(v): memory to evaluate v's operands one after the other, heaviest first,
            // holding each result; saturating (it is only an estimate on DAGs).
            let mut need = vec![0usize; n];
            for v in 0..n {
                let mut ps: Vec<u32> = self.preds[v].clone();
                ps.sort_by_key(|&p| (std::cmp::Reverse(need[p as usize]), p));
                let mut held = 0usize;
                let mut worst = 0usize;
                for &p in &ps {
                    worst = worst.max(held.saturating_add(need[p as usize]));
                    held = held.saturating_add(self.kept_bytes[p as usize]);
                }
                need[v] = worst.max(held.saturating_add(self.out_bytes[v] + self.scratch[v]));
                preds[v] = ps;
            }
        }
        let mut visited = vec![false; n];
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for root in (0..n).filter(|&v| self.succs[v].is_empty()) {
            visited[root] = true;
            stack.push((root as u32, 0));
            while let Some(top) = stack.last_mut() {
                let v = top.0 as usize;
                if let Some(&p) = preds[v].get(top.1) {
                    top.1 += 1;
                    if !visited[p as usize] {
                        visited[p as usize] = true;
                        stack.push((p, 0));
                    }
                } else {
                    order.push(v as u32);
                    stack.pop();
                }
            }
        }
        debug_assert_eq!(order.len(), n);
        order
    }
}

#[derive(Clone, Copy)]
enum ListRule {
    /// The fewest bytes live at this step, then the most bytes freed.
    LeastLive,
    /// The most bytes freed net (XLA's list scheduler), then the fewest live.
    MostFreed,
}
