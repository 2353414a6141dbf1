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
mod greedy;
mod hill_climb;
#[cfg(test)]
mod tests;
use exact::*;
pub use greedy::greedy;
use greedy::*;
use hill_climb::*;

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
