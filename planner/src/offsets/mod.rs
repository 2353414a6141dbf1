//! Offsets: where each buffer sits in the arena, for one order (fixed lifetimes).
//!
//! Three stages, each stopping as soon as the arena reaches the *target*, the smallest arena
//! any placement could have (the most bytes live at one step, with each buffer but the top one
//! at one step rounded up to the alignment): a placement at the target is optimal.
//!
//! 1. **Portfolio** of greedy assigners, each a sort key and a fit rule, smallest arena kept:
//!    - TFLM's own rule (`GreedyMemoryPlanner`): largest first, first gap that fits;
//!    - the same order with best fit (smallest gap that fits, as TFLite's arena planner);
//!    - other sort keys (size x lifetime, longest lifetime, first use, Vela's urgency, most
//!      conflicts as TVM) with both fits.
//!
//!    Ties keep the earlier assigner, so TFLM's rule wins unless another is strictly
//!    smaller. With the portfolio off, TFLM's rule alone. TFLM's rule always runs; the
//!    others while their passes fit the portfolio's work budget.
//! 2. **Hill climbing** on the placement order (as Vela's and TVM's allocators): take the
//!    buffer that ends highest, move it before (or swap it with) one of the buffers live with
//!    it that were placed before it, re-place, keep the new order if the arena is no larger.
//!    A fixed number of iterations (fewer where a pass costs more than the work budget
//!    allows), a fixed pseudo-random sequence.
//! 3. **Branch and bound** (as MiniMalloc): a depth-first search over canonical placements
//!    (buffers placed bottom-up, each at the lowest offset above the buffers already placed
//!    under it, offsets never decreasing), pruned when the buffers still to place at some
//!    step cannot fit under the capacity. It first asks for an arena at the target, then for
//!    one byte less than the best arena found, until a capacity is proved infeasible (the
//!    best arena is then optimal) or the budget runs out. Its budget counts work, not time.
//!
//! A buffer of several pieces ([`crate::lifetimes::Piece`], a group of aliases whose members
//! live at different steps) is placed whole: a greedy pass puts it at the lowest aligned
//! offset where each piece avoids the placed pieces live at its steps (under either fit);
//! the target counts live pieces; the branch and bound puts every piece above the pieces
//! placed at its steps, which finds placements but proves optimality only when no buffer is
//! split.
//!
//! A greedy pass places each buffer among the placed buffers live with it: from its list of
//! them, sorted by offset (sparse instances), or by scanning all placed buffers in offset
//! order (dense ones, where those lists would be quadratic; the lists are then not built).
//! Its cost, in buffer visits, is the unit of every budget here (never wall time). The
//! target, the sort keys and the conflict counts take `O(n log n)`, not the sum of the
//! lifetimes.
//!
//! Sorting is stable with ties broken by buffer index and the search is seeded: plans are
//! deterministic.

use crate::lifetimes::{Buffer, Piece};

mod exact;
use exact::*;

/// How a free gap is chosen among those that fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// The lowest gap that fits.
    First,
    /// The smallest gap that fits (the end of the arena counts as unbounded).
    Best,
}

/// In which order buffers are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// Largest first (TFLM).
    SizeDesc,
    /// Longest lifetime first, then largest.
    DurationDesc,
    /// Largest area (size x lifetime) first.
    AreaDesc,
    /// Earliest first use first, then largest.
    FirstUse,
    /// Vela's urgency: the most bytes live during the buffer's lifetime first, then longest,
    /// earliest, largest.
    Urgency,
    /// Most buffers live at the same time first (TVM's greedy by conflicts), then largest.
    Conflicts,
}

/// One assigner of the portfolio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strategy {
    pub key: SortKey,
    pub fit: Fit,
}

impl Strategy {
    /// A short name for reports, e.g. `size-desc/first-fit`.
    pub fn name(&self) -> &'static str {
        match (self.key, self.fit) {
            (SortKey::SizeDesc, Fit::First) => "size-desc/first-fit (TFLM)",
            (SortKey::SizeDesc, Fit::Best) => "size-desc/best-fit",
            (SortKey::DurationDesc, Fit::First) => "duration-desc/first-fit",
            (SortKey::DurationDesc, Fit::Best) => "duration-desc/best-fit",
            (SortKey::AreaDesc, Fit::First) => "area-desc/first-fit",
            (SortKey::AreaDesc, Fit::Best) => "area-desc/best-fit",
            (SortKey::FirstUse, Fit::First) => "first-use/first-fit",
            (SortKey::FirstUse, Fit::Best) => "first-use/best-fit",
            (SortKey::Urgency, Fit::First) => "urgency/first-fit",
            (SortKey::Urgency, Fit::Best) => "urgency/best-fit",
            (SortKey::Conflicts, Fit::First) => "conflicts/first-fit",
            (SortKey::Conflicts, Fit::Best) => "conflicts/best-fit",
        }
    }
}

const fn strategy(key: SortKey, fit: Fit) -> Strategy {
    Strategy { key, fit }
}

/// TFLM's `GreedyMemoryPlanner` rule: largest first, first fit.
pub const TFLM: Strategy = strategy(SortKey::SizeDesc, Fit::First);

/// The portfolio, in the order tried.
pub const PORTFOLIO: [Strategy; 12] = [
    TFLM,
    strategy(SortKey::SizeDesc, Fit::Best),
    strategy(SortKey::AreaDesc, Fit::First),
    strategy(SortKey::AreaDesc, Fit::Best),
    strategy(SortKey::DurationDesc, Fit::First),
    strategy(SortKey::DurationDesc, Fit::Best),
    strategy(SortKey::FirstUse, Fit::First),
    strategy(SortKey::FirstUse, Fit::Best),
    strategy(SortKey::Urgency, Fit::First),
    strategy(SortKey::Urgency, Fit::Best),
    strategy(SortKey::Conflicts, Fit::First),
    strategy(SortKey::Conflicts, Fit::Best),
];

/// Which stages run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacementOptions {
    /// Run the whole portfolio (off: TFLM's rule only).
    pub portfolio: bool,
    /// Work budget of the portfolio, in buffer visits: TFLM's rule always runs, each other
    /// assigner only while the work left covers one more pass (large, dense instances get
    /// fewer assigners).
    pub portfolio_work: usize,
    /// Hill-climbing iterations (0: off).
    pub hill_climb_iterations: usize,
    /// Work budget of the hill climbing, in buffer visits: large instances get fewer
    /// iterations (one iteration visits every pair of buffers live together, or on dense
    /// instances every pair of buffers).
    pub hill_climb_work: usize,
    /// Work budget of the branch and bound, in buffer visits (0: off).
    pub exact_budget: usize,
}

impl Default for PlacementOptions {
    fn default() -> Self {
        PlacementOptions {
            portfolio: true,
            portfolio_work: 40_000_000,
            hill_climb_iterations: 2000,
            hill_climb_work: 40_000_000,
            exact_budget: 20_000_000,
        }
    }
}

impl PlacementOptions {
    /// TFLM's rule only.
    pub fn tflm() -> Self {
        PlacementOptions {
            portfolio: false,
            portfolio_work: 0,
            hill_climb_iterations: 0,
            hill_climb_work: 0,
            exact_budget: 0,
        }
    }
}

/// Which stage produced a placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Greedy(Strategy),
    /// Hill climbing, started from this assigner's order.
    HillClimb(Strategy),
    BranchAndBound,
}

impl Method {
    /// A short name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            Method::Greedy(s) => s.name(),
            Method::HillClimb(_) => "hill climbing",
            Method::BranchAndBound => "branch and bound",
        }
    }
}

/// Offsets for every buffer and the arena they need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// `offsets[i]` is the offset of `buffers[i]`.
    pub offsets: Vec<usize>,
    /// `max(offset + size)` over all buffers (0 when there are none).
    pub arena_bytes: usize,
    /// The stage that produced it.
    pub method: Method,
    /// The smallest arena any placement could have ([`target`]).
    pub target_bytes: usize,
    /// Whether no placement has a smaller arena (it is at the target, or the branch and bound
    /// proved it).
    pub optimal: bool,
    /// Work done by the stages, in buffer visits (the unit of their budgets).
    pub work: usize,
}

fn align_up(x: usize, align: usize) -> usize {
    x.div_ceil(align) * align
}

/// The smallest arena any placement of `buffers` could have: at every step, the pieces live
/// at that step are stacked, each but the top one taking its size rounded up to `align`
/// (offsets are aligned). At least the most bytes live at one step. At a step where a piece
/// at an unaligned offset in its buffer is live, pieces need not start aligned and the bound
/// there is the bytes live.
pub fn target(buffers: &[Buffer], align: usize) -> usize {
    let steps = buffers.iter().map(|b| b.last + 1).max().unwrap_or(0);
    let pieces: Vec<&Piece> = buffers.iter().flat_map(|b| &b.pieces).collect();
    // Sums by difference arrays; the largest rounding at each step by filling steps from the
    // largest rounding down, each step once (`next` skips filled ones).
    let mut sum = vec![0i128; steps + 1];
    let mut sum_aligned = vec![0i128; steps + 1];
    let mut unaligned = vec![0i64; steps + 1];
    for p in &pieces {
        sum[p.first] += p.size as i128;
        sum[p.last + 1] -= p.size as i128;
        sum_aligned[p.first] += align_up(p.size, align) as i128;
        sum_aligned[p.last + 1] -= align_up(p.size, align) as i128;
        if p.offset % align != 0 {
            unaligned[p.first] += 1;
            unaligned[p.last + 1] -= 1;
        }
    }
    let mut by_slack: Vec<usize> = (0..pieces.len()).collect();
    by_slack.sort_by_key(|&i| std::cmp::Reverse(align_up(pieces[i].size, align) - pieces[i].size));
    let mut slack = vec![0usize; steps];
    let mut next: Vec<usize> = (0..=steps).collect();
    fn find(next: &mut [usize], mut t: usize) -> usize {
        while next[t] != t {
            next[t] = next[next[t]];
            t = next[t];
        }
        t
    }
    for &i in &by_slack {
        let p = pieces[i];
        let value = align_up(p.size, align) - p.size;
        let mut t = find(&mut next, p.first);
        while t <= p.last {
            slack[t] = value;
            next[t] = t + 1;
            t = find(&mut next, t + 1);
        }
    }
    let (mut s, mut sa, mut u) = (0i128, 0i128, 0i64);
    (0..steps)
        .map(|t| {
            s += sum[t];
            sa += sum_aligned[t];
            u += unaligned[t];
            if u > 0 {
                s as usize
            } else {
                (sa as usize - slack[t]).max(s as usize)
            }
        })
        .max()
        .unwrap_or(0)
}

/// Runs all stages with their default settings.
pub fn assign(buffers: &[Buffer], align: usize) -> Placement {
    place(buffers, align, &PlacementOptions::default())
}

/// Runs the stages that `options` enables; `align` must be a power of two.
pub fn place(buffers: &[Buffer], align: usize, options: &PlacementOptions) -> Placement {
    let target_bytes = target(buffers, align);
    let degree = degrees(buffers);
    let mut ws = Workspace::for_buffers(buffers, &degree);
    // The lists of buffers live together only where the greedy passes use them: on dense
    // instances they would be quadratic, and the passes scan the placed buffers instead.
    let adj = if ws.dense {
        Vec::new()
    } else {
        conflicts(buffers)
    };
    let strategies: &[Strategy] = if options.portfolio {
        &PORTFOLIO
    } else {
        &PORTFOLIO[..1]
    };
    let mut best: Option<(Placement, Vec<usize>, Fit)> = None;
    let mut work = 0usize;
    for (k, &strategy) in strategies.iter().enumerate() {
        if k > 0 && work + ws.cost > options.portfolio_work {
            break;
        }
        work += ws.cost;
        let order = placement_order_by(buffers, &degree, strategy.key);
        let arena = ws
            .place(buffers, &adj, &order, align, strategy.fit, usize::MAX)
            .expect("no limit");
        if best.as_ref().is_none_or(|b| arena < b.0.arena_bytes) {
            best = Some((
                Placement {
                    offsets: ws.offsets.clone(),
                    arena_bytes: arena,
                    method: Method::Greedy(strategy),
                    target_bytes,
                    optimal: arena <= target_bytes,
                    work: 0,
                },
                order,
                strategy.fit,
            ));
        }
        if arena <= target_bytes {
            break;
        }
    }
    let (mut best, order, fit) = best.expect("the portfolio is not empty");
    let iterations = options
        .hill_climb_iterations
        .min(options.hill_climb_work / ws.cost.max(1));
    if !best.optimal && iterations > 0 {
        let Method::Greedy(start) = best.method else {
            unreachable!("greedy first")
        };
        let (improved, passes) = hill_climb(
            buffers,
            &adj,
            order,
            align,
            fit,
            best.arena_bytes,
            target_bytes,
            iterations,
            &mut ws,
        );
        work += passes * ws.cost;
        if let Some((offsets, arena)) = improved {
            best = Placement {
                offsets,
                arena_bytes: arena,
                method: Method::HillClimb(start),
                target_bytes,
                optimal: arena <= target_bytes,
                work: 0,
            };
        }
    }
    if !best.optimal && options.exact_budget > 0 {
        let mut left = options.exact_budget;
        let (found, proven) =
            branch_and_bound_within(buffers, align, target_bytes, best.arena_bytes, &mut left);
        work += options.exact_budget - left;
        if let Some(offsets) = found {
            best.arena_bytes = arena_end(buffers, &offsets);
            best.offsets = offsets;
            best.method = Method::BranchAndBound;
        }
        best.optimal = proven || best.arena_bytes <= target_bytes;
    }
    best.work = work;
    best
}

/// `max(offset + size)`.
pub fn arena_end(buffers: &[Buffer], offsets: &[usize]) -> usize {
    buffers
        .iter()
        .zip(offsets)
        .map(|(b, &o)| o + b.size)
        .max()
        .unwrap_or(0)
}

/// For each buffer, how many other buffers are live at a common step (`O(n log n)`: those
/// starting by its last step less those ending before its first).
fn degrees(buffers: &[Buffer]) -> Vec<usize> {
    let mut firsts: Vec<usize> = buffers.iter().map(|b| b.first).collect();
    let mut lasts: Vec<usize> = buffers.iter().map(|b| b.last).collect();
    firsts.sort_unstable();
    lasts.sort_unstable();
    buffers
        .iter()
        .map(|b| {
            let started = firsts.partition_point(|&f| f <= b.last);
            let ended = lasts.partition_point(|&l| l < b.first);
            started - ended - 1
        })
        .collect()
}

/// For each buffer, the buffers live at a common step (ascending indices).
fn conflicts(buffers: &[Buffer]) -> Vec<Vec<u32>> {
    let mut idx: Vec<usize> = (0..buffers.len()).collect();
    idx.sort_by_key(|&i| (buffers[i].first, i));
    let mut adj = vec![Vec::new(); buffers.len()];
    let mut active: Vec<usize> = Vec::new();
    for &i in &idx {
        let b = &buffers[i];
        active.retain(|&j| buffers[j].last >= b.first);
        for &j in &active {
            adj[i].push(j as u32);
            adj[j].push(i as u32);
        }
        active.push(i);
    }
    for a in &mut adj {
        a.sort_unstable();
    }
    adj
}

/// The placement order of a sort key, with the conflict lists (tests).
#[cfg(test)]
fn placement_order(buffers: &[Buffer], adj: &[Vec<u32>], key: SortKey) -> Vec<usize> {
    let degree: Vec<usize> = adj.iter().map(Vec::len).collect();
    placement_order_by(buffers, &degree, key)
}

/// The placement order of a sort key: indices into `buffers`; `degree[i]` is how many
/// buffers are live with buffer `i` ([`degrees`]).
fn placement_order_by(buffers: &[Buffer], degree: &[usize], key: SortKey) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..buffers.len()).collect();
    let duration = |b: &Buffer| b.last - b.first + 1;
    use std::cmp::Reverse;
    match key {
        SortKey::SizeDesc => idx.sort_by_key(|&i| Reverse(buffers[i].size)),
        SortKey::DurationDesc => idx.sort_by_key(|&i| {
            let b = &buffers[i];
            (Reverse(duration(b)), Reverse(b.size))
        }),
        SortKey::AreaDesc => idx.sort_by_key(|&i| {
            let b = &buffers[i];
            Reverse(b.size as u128 * duration(b) as u128)
        }),
        SortKey::FirstUse => idx.sort_by_key(|&i| {
            let b = &buffers[i];
            (b.first, Reverse(b.size))
        }),
        SortKey::Urgency => {
            let steps = buffers.iter().map(|b| b.last + 1).max().unwrap_or(0);
            let mut delta = vec![0i128; steps + 1];
            for p in buffers.iter().flat_map(|b| &b.pieces) {
                delta[p.first] += p.size as i128;
                delta[p.last + 1] -= p.size as i128;
            }
            let mut sum = 0i128;
            let live: Vec<usize> = delta[..steps]
                .iter()
                .map(|d| {
                    sum += d;
                    sum as usize
                })
                .collect();
            let most = RangeMax::new(&live);
            let urgency: Vec<usize> = buffers.iter().map(|b| most.max(b.first, b.last)).collect();
            idx.sort_by_key(|&i| {
                let b = &buffers[i];
                (
                    Reverse(urgency[i]),
                    Reverse(duration(b)),
                    b.first,
                    Reverse(b.size),
                )
            });
        }
        SortKey::Conflicts => idx.sort_by_key(|&i| (Reverse(degree[i]), Reverse(buffers[i].size))),
    }
    idx
}

/// Maxima over ranges of a fixed sequence (a sparse table: `O(n log n)` to build, `O(1)`
/// per query).
struct RangeMax {
    levels: Vec<Vec<usize>>,
}

impl RangeMax {
    fn new(values: &[usize]) -> RangeMax {
        let mut levels = vec![values.to_vec()];
        let mut width = 1;
        while 2 * width <= values.len() {
            let prev = levels.last().expect("one level");
            let next: Vec<usize> = (0..=values.len() - 2 * width)
                .map(|i| prev[i].max(prev[i + width]))
                .collect();
            levels.push(next);
            width *= 2;
        }
        RangeMax { levels }
    }

    /// The maximum over `first..=last`.
    fn max(&self, first: usize, last: usize) -> usize {
        let k = (usize::BITS - 1 - (last - first + 1).leading_zeros()) as usize;
        let level = &self.levels[k];
        level[first].max(level[last + 1 - (1 << k)])
    }
}

/// One greedy pass: place buffers in the strategy's order, each in a gap among the
/// already-placed buffers that are live at the same time.
pub fn greedy(buffers: &[Buffer], align: usize, strategy: Strategy) -> Vec<usize> {
    let degree = degrees(buffers);
    let order = placement_order_by(buffers, &degree, strategy.key);
    let mut ws = Workspace::for_buffers(buffers, &degree);
    let adj = if ws.dense {
        Vec::new()
    } else {
        conflicts(buffers)
    };
    ws.place(buffers, &adj, &order, align, strategy.fit, usize::MAX)
        .expect("no limit");
    ws.offsets
}

/// Reusable memory of the greedy placement.
struct Workspace {
    offsets: Vec<usize>,
    placed: Vec<bool>,
    gaps: Vec<(usize, usize)>,
    /// Per piece of a buffer of several pieces: the placed pieces live with it.
    piece_gaps: Vec<Vec<(usize, usize)>>,
    /// Placed pieces sorted by `(offset, end)`, for dense instances, with their first and
    /// last steps (scanned in place, without looking the buffer up).
    by_offset: Sorted,
    /// Whether scanning all placed buffers is cheaper than sorting each buffer's conflicts
    /// (many buffers live together). Both give the same offsets.
    dense: bool,
    /// Work of one placement, in buffer visits.
    cost: usize,
}

impl Workspace {
    /// A workspace for buffers of one piece with these conflict lists (tests).
    #[cfg(test)]
    fn new(adj: &[Vec<u32>]) -> Workspace {
        let degree: Vec<usize> = adj.iter().map(Vec::len).collect();
        Workspace::for_degrees(&degree, 0)
    }

    /// A workspace for `buffers`, live with `degree[i]` others each ([`degrees`]).
    fn for_buffers(buffers: &[Buffer], degree: &[usize]) -> Workspace {
        // A buffer of several pieces visits the buffers live with it once per piece.
        let extra: usize = buffers
            .iter()
            .zip(degree)
            .map(|(b, &d)| (b.pieces.len().max(1) - 1) * (d + 1))
            .sum();
        Workspace::for_degrees(degree, extra)
    }

    /// A workspace for buffers live with `degree[i]` others each, `extra` visits more per
    /// pass for buffers of several pieces.
    fn for_degrees(degree: &[usize], extra: usize) -> Workspace {
        let n = degree.len();
        let sparse_cost: usize = degree
            .iter()
            .map(|&d| d * (1 + (usize::BITS - d.leading_zeros()) as usize))
            .sum::<usize>()
            + n
            + extra;
        let dense_cost = n * n / 2 + n + extra;
        Workspace {
            offsets: vec![0; n],
            placed: vec![false; n],
            gaps: Vec::new(),
            piece_gaps: Vec::new(),
            by_offset: Sorted::default(),
            dense: dense_cost < sparse_cost,
            cost: sparse_cost.min(dense_cost),
        }
    }

    /// Places buffers one by one in `order`, each in the lowest (first fit) or smallest (best
    /// fit) gap among the placed pieces live at the same time; a buffer of several pieces
    /// goes to the lowest offset where each of its pieces avoids the placed pieces live with
    /// it. Returns the arena, or `None` as soon as a buffer ends above `limit`.
    fn place(
        &mut self,
        buffers: &[Buffer],
        adj: &[Vec<u32>],
        order: &[usize],
        align: usize,
        fit: Fit,
        limit: usize,
    ) -> Option<usize> {
        self.placed.iter_mut().for_each(|p| *p = false);
        self.by_offset.clear();
        let mut arena = 0usize;
        for &i in order {
            let b = &buffers[i];
            let offset = if b.is_split() {
                self.lowest_fit(buffers, adj, i, align)
            } else {
                self.fit_whole(buffers, adj, i, align, fit)
            };
            self.offsets[i] = offset;
            self.placed[i] = true;
            if self.dense {
                for p in &b.pieces {
                    let start = offset + p.offset;
                    self.by_offset
                        .insert((start, start + p.size, p.first, p.last));
                }
            }
            arena = arena.max(offset + b.size);
            if arena > limit {
                return None;
            }
        }
        Some(arena)
    }

    /// The offset of buffer `i` of one piece: walks the placed pieces live with it by
    /// offset, the gaps between them.
    fn fit_whole(
        &mut self,
        buffers: &[Buffer],
        adj: &[Vec<u32>],
        i: usize,
        align: usize,
        fit: Fit,
    ) -> usize {
        let b = &buffers[i];
        let mut candidate = 0usize;
        let mut chosen: Option<(usize, usize)> = None; // (offset, gap size)
        let mut step = |start: usize, end: usize| {
            if candidate + b.size <= start {
                let gap = start - candidate;
                match fit {
                    Fit::First => {
                        chosen = Some((candidate, gap));
                        return true;
                    }
                    Fit::Best => {
                        if chosen.is_none_or(|(_, g)| gap < g) {
                            chosen = Some((candidate, gap));
                        }
                    }
                }
            }
            candidate = candidate.max(align_up(end, align));
            false
        };
        if self.dense {
            'scan: for block in &self.by_offset.blocks {
                for &(start, end, first, last) in block {
                    if first <= b.last && b.first <= last && step(start, end) {
                        break 'scan;
                    }
                }
            }
        } else {
            self.gaps.clear();
            for &j in &adj[i] {
                let j = j as usize;
                if self.placed[j] {
                    let o = self.offsets[j];
                    for q in &buffers[j].pieces {
                        if q.first <= b.last && b.first <= q.last {
                            self.gaps.push((o + q.offset, o + q.offset + q.size));
                        }
                    }
                }
            }
            self.gaps.sort_unstable();
            for &(start, end) in &self.gaps {
                if step(start, end) {
                    break;
                }
            }
        }
        chosen.map_or(candidate, |(o, _)| o)
    }

    /// The lowest aligned offset of buffer `i` (several pieces) at which every piece avoids
    /// the placed pieces live with it: each piece in turn moves the offset up to where it
    /// fits, until one round moves nothing.
    fn lowest_fit(
        &mut self,
        buffers: &[Buffer],
        adj: &[Vec<u32>],
        i: usize,
        align: usize,
    ) -> usize {
        let b = &buffers[i];
        let k = b.pieces.len();
        if self.piece_gaps.len() < k {
            self.piece_gaps.resize(k, Vec::new());
        }
        for (p, gaps) in b.pieces.iter().zip(&mut self.piece_gaps) {
            gaps.clear();
            let live = |first: usize, last: usize| first <= p.last && p.first <= last;
            if self.dense {
                for block in &self.by_offset.blocks {
                    for &(start, end, first, last) in block {
                        if live(first, last) {
                            gaps.push((start, end));
                        }
                    }
                }
            } else {
                for &j in &adj[i] {
                    let j = j as usize;
                    if self.placed[j] {
                        let o = self.offsets[j];
                        for q in &buffers[j].pieces {
                            if live(q.first, q.last) {
                                gaps.push((o + q.offset, o + q.offset + q.size));
                            }
                        }
                    }
                }
                gaps.sort_unstable();
            }
        }
        // The lowest aligned `x >= from` at which piece `p` avoids `gaps` (sorted by start).
        let fit_from = |gaps: &[(usize, usize)], p: &Piece, from: usize| {
            let mut x = from;
            for &(start, end) in gaps {
                let at = x + p.offset;
                if end <= at {
                    continue;
                }
                if at + p.size <= start {
                    break;
                }
                x = align_up(end - p.offset, align);
            }
            x
        };
        let mut x = 0usize;
        loop {
            let mut moved = false;
            for (p, gaps) in b.pieces.iter().zip(&self.piece_gaps) {
                let y = fit_from(gaps, p, x);
                if y != x {
                    x = y;
                    moved = true;
                }
            }
            if !moved {
                return x;
            }
        }
    }
}

/// Placed pieces `(offset, end, first step, last step)` sorted by `(offset, end)`, in blocks
/// of a few hundred: scanned in order almost as fast as one array, and an insertion moves one
/// block, not every piece above it.
#[derive(Default)]
struct Sorted {
    blocks: Vec<Vec<(usize, usize, usize, usize)>>,
}

impl Sorted {
    const BLOCK: usize = 512;

    fn clear(&mut self) {
        self.blocks.clear();
    }

    fn insert(&mut self, entry: (usize, usize, usize, usize)) {
        let key = |e: &(usize, usize, usize, usize)| (e.0, e.1);
        if self.blocks.is_empty() {
            self.blocks.push(Vec::with_capacity(Self::BLOCK));
        }
        let k = self
            .blocks
            .partition_point(|block| block.last().is_some_and(|l| key(l) < key(&entry)))
            .min(self.blocks.len() - 1);
        let block = &mut self.blocks[k];
        let at = block.partition_point(|e| key(e) < key(&entry));
        block.insert(at, entry);
        if block.len() >= 2 * Self::BLOCK {
            let upper = block.split_off(Self::BLOCK);
            self.blocks.insert(k + 1, upper);
        }
    }
}

/// A small deterministic pseudo-random sequence (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Hill climbing on the placement order. Returns a strictly smaller placement, if found,
/// and the number of placements it made. Without conflict lists (`adj` empty: a dense
/// instance), the buffers live with the bottleneck are found by a scan.
#[allow(clippy::too_many_arguments)]
fn hill_climb(
    buffers: &[Buffer],
    adj: &[Vec<u32>],
    mut order: Vec<usize>,
    align: usize,
    fit: Fit,
    start_arena: usize,
    target: usize,
    iterations: usize,
    ws: &mut Workspace,
) -> (Option<(Vec<usize>, usize)>, usize) {
    let n = buffers.len();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut passes = 1;
    let Some(mut arena) = ws.place(buffers, adj, &order, align, fit, usize::MAX) else {
        return (None, passes);
    };
    debug_assert_eq!(arena, start_arena);
    let mut offsets = ws.offsets.clone();
    let mut best: Option<(Vec<usize>, usize)> = None;
    let mut pos = vec![0usize; n];
    let mut trial: Vec<usize> = Vec::with_capacity(n);
    for _ in 0..iterations {
        if arena <= target {
            break;
        }
        for (k, &i) in order.iter().enumerate() {
            pos[i] = k;
        }
        // The bottleneck: the buffer ending highest (earliest placed on ties).
        let bottleneck = order
            .iter()
            .copied()
            .find(|&i| offsets[i] + buffers[i].size == arena)
            .expect("some buffer ends at the arena");
        // Buffers placed before it and live with it: they decided where it went.
        let below: Vec<usize> = if adj.is_empty() {
            let b = &buffers[bottleneck];
            (0..n)
                .filter(|&j| j != bottleneck && b.overlaps_in_time(&buffers[j]))
                .filter(|&j| pos[j] < pos[bottleneck])
                .collect()
        } else {
            adj[bottleneck]
                .iter()
                .map(|&j| j as usize)
                .filter(|&j| pos[j] < pos[bottleneck])
                .collect()
        };
        if below.is_empty() {
            break; // It sits at 0 with nothing under it: the arena is its size.
        }
        let other = below[rng.below(below.len())];
        let (a, b) = (pos[other], pos[bottleneck]);
        trial.clear();
        trial.extend_from_slice(&order);
        if rng.next() & 1 == 0 {
            trial.swap(a, b);
        } else {
            // Move the bottleneck just before the other buffer.
            trial[a..=b].rotate_right(1);
        }
        passes += 1;
        if let Some(new) = ws.place(buffers, adj, &trial, align, fit, arena) {
            std::mem::swap(&mut order, &mut trial);
            offsets.copy_from_slice(&ws.offsets);
            if new < arena {
                best = Some((offsets.clone(), new));
            }
            arena = new;
        }
    }
    (best, passes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::TensorId;
    use crate::lifetimes::BufferOwner;

    fn buf(i: usize, size: usize, first: usize, last: usize) -> Buffer {
        Buffer::whole(BufferOwner::Tensor(TensorId(i)), size, first, last)
    }

    /// Aligned, and no two pieces of different buffers live at a common step share a byte.
    fn valid(b: &[Buffer], offsets: &[usize], align: usize) -> bool {
        offsets.iter().all(|o| o % align == 0)
            && (0..b.len()).all(|i| {
                (0..i).all(|j| {
                    b[i].pieces.iter().all(|p| {
                        b[j].pieces.iter().all(|q| {
                            let (sp, sq) = (offsets[i] + p.offset, offsets[j] + q.offset);
                            !p.overlaps_in_time(q) || sp + p.size <= sq || sq + q.size <= sp
                        })
                    })
                })
            })
    }

    /// A buffer of pieces from random members (as a group of aliases).
    fn split_buf(rng: &mut Rng, i: usize, steps: usize) -> Buffer {
        let rects: Vec<Piece> = (0..1 + rng.below(4))
            .map(|_| {
                let f = rng.below(steps);
                Piece {
                    offset: rng.below(3) * 16 + rng.below(2) * 5,
                    size: 1 + rng.below(40),
                    first: f,
                    last: f + rng.below(steps - f),
                }
            })
            .collect();
        let pieces = crate::lifetimes::pieces_of(&rects);
        Buffer {
            owner: BufferOwner::Tensor(TensorId(i)),
            size: pieces.iter().map(|p| p.offset + p.size).max().unwrap(),
            first: pieces.iter().map(|p| p.first).min().unwrap(),
            last: pieces.iter().map(|p| p.last).max().unwrap(),
            pieces,
        }
    }

    /// Buffers of several pieces: every stage gives valid placements at or above the target,
    /// dense and sparse passes agree, and the pieces let other buffers use a group's bytes
    /// while they are not live.
    #[test]
    fn split_buffers_place_validly() {
        let mut rng = Rng(4242);
        for case in 0..300 {
            let n = 1 + rng.below(12);
            let steps = 1 + rng.below(8);
            let align = [1, 4, 16][rng.below(3)];
            let b: Vec<Buffer> = (0..n)
                .map(|i| {
                    if rng.below(2) == 0 {
                        split_buf(&mut rng, i, steps)
                    } else {
                        let f = rng.below(steps);
                        buf(i, 1 + rng.below(40), f, f + rng.below(steps - f))
                    }
                })
                .collect();
            let t = target(&b, align);
            let adj = conflicts(&b);
            for s in PORTFOLIO {
                let order = placement_order(&b, &adj, s.key);
                let mut sparse = Workspace::new(&adj);
                sparse.dense = false;
                let mut dense = Workspace::new(&adj);
                dense.dense = true;
                let a = sparse.place(&b, &adj, &order, align, s.fit, usize::MAX);
                let d = dense.place(&b, &adj, &order, align, s.fit, usize::MAX);
                assert_eq!(a, d, "case {case}");
                assert_eq!(sparse.offsets, dense.offsets, "case {case}");
                assert!(valid(&b, &sparse.offsets, align), "case {case}: {b:?}");
                assert!(a.unwrap() >= t, "case {case}");
            }
            let p = place(&b, align, &PlacementOptions::default());
            assert!(valid(&b, &p.offsets, align), "case {case}");
            assert_eq!(p.arena_bytes, arena_end(&b, &p.offsets));
            assert!(p.arena_bytes >= t, "case {case}");
            let (found, _) = branch_and_bound(&b, align, t, usize::MAX, 1 << 20);
            if let Some(offsets) = found {
                assert!(valid(&b, &offsets, align), "case {case}");
                assert!(arena_end(&b, &offsets) >= t, "case {case}");
            }
        }
        // A widening group: 16 bytes live from step 0, the 16 below them only from step 2;
        // a 16-byte buffer live at steps 0-1 fits under the group.
        let group = Buffer {
            owner: BufferOwner::Tensor(TensorId(0)),
            size: 32,
            first: 0,
            last: 3,
            pieces: vec![
                Piece {
                    offset: 0,
                    size: 16,
                    first: 2,
                    last: 3,
                },
                Piece {
                    offset: 16,
                    size: 16,
                    first: 0,
                    last: 3,
                },
            ],
        };
        let b = [group, buf(1, 16, 0, 1)];
        let p = assign(&b, 16);
        assert_eq!(p.arena_bytes, 32);
        assert_eq!(target(&b, 16), 32);
        assert!(p.optimal);
    }

    #[test]
    fn disjoint_lifetimes_share_offset_zero() {
        let b = [buf(0, 100, 0, 0), buf(1, 50, 1, 1)];
        let p = assign(&b, 16);
        assert_eq!(p.offsets, vec![0, 0]);
        assert_eq!(p.arena_bytes, 100);
        assert!(p.optimal);
    }

    #[test]
    fn offsets_are_aligned() {
        let b = [buf(0, 3, 0, 1), buf(1, 5, 0, 1), buf(2, 7, 1, 1)];
        for s in PORTFOLIO {
            let o = greedy(&b, 16, s);
            assert!(o.iter().all(|o| o % 16 == 0), "{s:?}: {o:?}");
        }
    }

    #[test]
    fn best_fit_takes_the_tighter_gap() {
        // Two holes at one step: 32 bytes at 0..32 and 16 bytes at 48..64.
        let b = [
            buf(0, 32, 0, 0),  // hole A once dead
            buf(1, 16, 0, 2),  // 32..48, pins
            buf(2, 16, 0, 0),  // hole B once dead
            buf(3, 100, 0, 2), // 64..164, pins
            buf(4, 16, 2, 2),  // goes into a hole
        ];
        let order = [0, 1, 2, 3, 4];
        let adj = conflicts(&b);
        let mut ws = Workspace::new(&adj);
        ws.place(&b, &adj, &order, 16, Fit::First, usize::MAX);
        let first = ws.offsets.clone();
        ws.place(&b, &adj, &order, 16, Fit::Best, usize::MAX);
        let best = ws.offsets.clone();
        assert_eq!(&first[..4], &[0, 32, 48, 64]);
        assert_eq!(first[4], 0);
        assert_eq!(best[4], 48);
    }

    #[test]
    fn target_counts_alignment_below_the_top() {
        // Two 10-byte buffers together: one must start at 16, so 26 bytes at least.
        let b = [buf(0, 10, 0, 0), buf(1, 10, 0, 0)];
        assert_eq!(target(&b, 16), 26);
        assert_eq!(target(&b, 1), 20);
        let p = assign(&b, 16);
        assert_eq!(p.arena_bytes, 26);
        assert!(p.optimal);
    }

    /// A classic instance where largest-first greedy misses the bound: the search stages
    /// must find the packing at the bound.
    #[test]
    fn search_stages_reach_the_bound_where_greedy_does_not() {
        // Steps 0..3. Bound 4 at every step, reachable only with the 2-unit buffers split.
        let b = [
            buf(0, 2, 0, 1),
            buf(1, 1, 0, 0),
            buf(2, 1, 0, 2),
            buf(3, 2, 1, 3),
            buf(4, 1, 2, 3),
            buf(5, 2, 2, 2),
            buf(6, 1, 3, 3),
        ];
        let load = target(&b, 1);
        let tflm = arena_end(&b, &greedy(&b, 1, TFLM));
        let p = place(&b, 1, &PlacementOptions::default());
        assert!(valid(&b, &p.offsets, 1));
        assert!(p.arena_bytes <= tflm);
        assert_eq!(p.arena_bytes, load, "{p:?}");
        assert!(p.optimal);
        // The branch and bound alone finds it too.
        let only_exact = PlacementOptions {
            exact_budget: 1_000_000,
            ..PlacementOptions::tflm()
        };
        let e = place(&b, 1, &only_exact);
        assert!(valid(&b, &e.offsets, 1));
        assert_eq!(e.arena_bytes, load);
    }

    /// Exhaustive check of the branch and bound on tiny instances: its optimum equals the
    /// best of all placement orders with first fit over every permutation.
    #[test]
    fn branch_and_bound_is_exact_on_tiny_instances() {
        let mut rng = Rng(12345);
        for case in 0..300 {
            let n = 1 + rng.below(6);
            let steps = 1 + rng.below(5);
            let align = [1, 4, 16][rng.below(3)];
            let b: Vec<Buffer> = (0..n)
                .map(|i| {
                    let f = rng.below(steps);
                    let l = f + rng.below(steps - f);
                    buf(i, 1 + rng.below(40), f, l)
                })
                .collect();
            // Brute force over permutations with first fit (complete for canonical packings).
            let adj = conflicts(&b);
            let mut ws = Workspace::new(&adj);
            let mut perm: Vec<usize> = (0..n).collect();
            let mut brute = usize::MAX;
            permute(&mut perm, 0, &mut |p| {
                let a = ws
                    .place(&b, &adj, p, align, Fit::First, usize::MAX)
                    .unwrap();
                brute = brute.min(a);
            });
            let (found, proven) =
                branch_and_bound(&b, align, target(&b, align), usize::MAX, 1 << 30);
            assert!(proven, "case {case}");
            let offsets = found.expect("a placement below usize::MAX");
            assert!(valid(&b, &offsets, align), "case {case}");
            assert_eq!(
                arena_end(&b, &offsets),
                brute,
                "case {case}: {b:?} align {align}"
            );
        }
    }

    #[test]
    fn dense_and_sparse_greedy_agree() {
        let mut rng = Rng(777);
        for _ in 0..200 {
            let n = 1 + rng.below(60);
            let steps = 1 + rng.below(30);
            let b: Vec<Buffer> = (0..n)
                .map(|i| {
                    let f = rng.below(steps);
                    let l = f + rng.below(steps - f);
                    buf(i, 1 + rng.below(100), f, l)
                })
                .collect();
            let adj = conflicts(&b);
            for s in PORTFOLIO {
                let order = placement_order(&b, &adj, s.key);
                let mut sparse = Workspace::new(&adj);
                sparse.dense = false;
                let mut dense = Workspace::new(&adj);
                dense.dense = true;
                let a = sparse.place(&b, &adj, &order, 8, s.fit, usize::MAX);
                let d = dense.place(&b, &adj, &order, 8, s.fit, usize::MAX);
                assert_eq!(a, d);
                assert_eq!(sparse.offsets, dense.offsets);
                assert!(valid(&b, &dense.offsets, 8));
            }
        }
    }

    fn permute(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
        if k == v.len() {
            f(v);
            return;
        }
        for i in k..v.len() {
            v.swap(k, i);
            permute(v, k + 1, f);
            v.swap(k, i);
        }
    }
}
