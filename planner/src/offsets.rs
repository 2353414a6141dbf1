//! Offsets: where each buffer sits in the arena.
//!
//! A portfolio of greedy assigners, each a sort key and a fit rule, the smallest arena kept:
//! - TFLM's own rule (`GreedyMemoryPlanner`): largest first, first gap that fits;
//! - the same order with best fit (smallest gap that fits, as TFLite's arena planner);
//! - other sort keys (longest lifetime, size x lifetime, first use) with both fits.
//!
//! Ties keep the earlier assigner, so TFLM's rule wins unless another is strictly smaller,
//! and sorting is stable with ties broken by buffer index: plans are deterministic.
//! The search stops early once an assigner reaches the lower bound.

use crate::lifetimes::Buffer;

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
        }
    }
}

/// The portfolio, in the order tried.
pub const PORTFOLIO: [Strategy; 8] = [
    Strategy {
        key: SortKey::SizeDesc,
        fit: Fit::First,
    },
    Strategy {
        key: SortKey::SizeDesc,
        fit: Fit::Best,
    },
    Strategy {
        key: SortKey::AreaDesc,
        fit: Fit::First,
    },
    Strategy {
        key: SortKey::AreaDesc,
        fit: Fit::Best,
    },
    Strategy {
        key: SortKey::DurationDesc,
        fit: Fit::First,
    },
    Strategy {
        key: SortKey::DurationDesc,
        fit: Fit::Best,
    },
    Strategy {
        key: SortKey::FirstUse,
        fit: Fit::First,
    },
    Strategy {
        key: SortKey::FirstUse,
        fit: Fit::Best,
    },
];

/// Offsets for every buffer and the arena they need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// `offsets[i]` is the offset of `buffers[i]`.
    pub offsets: Vec<usize>,
    /// `max(offset + size)` over all buffers (0 when there are none).
    pub arena_bytes: usize,
    /// The assigner that produced it.
    pub strategy: Strategy,
}

fn align_up(x: usize, align: usize) -> usize {
    x.div_ceil(align) * align
}

/// Runs the portfolio and keeps the smallest arena. `align` must be a power of two.
pub fn assign(buffers: &[Buffer], align: usize, lower_bound: usize) -> Placement {
    let mut best: Option<Placement> = None;
    for strategy in PORTFOLIO {
        let offsets = greedy(buffers, align, strategy);
        let arena_bytes = arena_end(buffers, &offsets);
        if best.as_ref().is_none_or(|b| arena_bytes < b.arena_bytes) {
            best = Some(Placement {
                offsets,
                arena_bytes,
                strategy,
            });
        }
        if arena_bytes <= lower_bound {
            break;
        }
    }
    best.expect("the portfolio is not empty")
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

/// The placement order of a strategy: indices into `buffers`.
fn placement_order(buffers: &[Buffer], key: SortKey) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..buffers.len()).collect();
    let duration = |b: &Buffer| b.last - b.first + 1;
    match key {
        SortKey::SizeDesc => idx.sort_by_key(|&i| std::cmp::Reverse(buffers[i].size)),
        SortKey::DurationDesc => idx.sort_by_key(|&i| {
            let b = &buffers[i];
            (std::cmp::Reverse(duration(b)), std::cmp::Reverse(b.size))
        }),
        SortKey::AreaDesc => idx.sort_by_key(|&i| {
            let b = &buffers[i];
            std::cmp::Reverse(b.size as u128 * duration(b) as u128)
        }),
        SortKey::FirstUse => idx.sort_by_key(|&i| {
            let b = &buffers[i];
            (b.first, std::cmp::Reverse(b.size))
        }),
    }
    idx
}

/// One greedy pass: place buffers in the strategy's order, each in a gap among the
/// already-placed buffers that are live at the same time.
pub fn greedy(buffers: &[Buffer], align: usize, strategy: Strategy) -> Vec<usize> {
    place(
        buffers,
        &placement_order(buffers, strategy.key),
        align,
        strategy.fit,
    )
}

/// Places buffers one by one in the given order (indices into `buffers`).
fn place(buffers: &[Buffer], order: &[usize], align: usize, fit: Fit) -> Vec<usize> {
    let mut offsets = vec![0usize; buffers.len()];
    let mut placed: Vec<usize> = Vec::with_capacity(buffers.len());
    let mut conflicts: Vec<(usize, usize)> = Vec::new();
    for &i in order {
        let b = &buffers[i];
        conflicts.clear();
        conflicts.extend(
            placed
                .iter()
                .filter(|&&j| buffers[j].overlaps_in_time(b))
                .map(|&j| (offsets[j], offsets[j] + buffers[j].size)),
        );
        conflicts.sort_unstable();
        let mut candidate = 0usize;
        let mut chosen: Option<(usize, usize)> = None; // (offset, gap size)
        for &(start, end) in &conflicts {
            if candidate + b.size <= start {
                let gap = start - candidate;
                match fit {
                    Fit::First => {
                        chosen = Some((candidate, gap));
                        break;
                    }
                    Fit::Best => {
                        if chosen.is_none_or(|(_, g)| gap < g) {
                            chosen = Some((candidate, gap));
                        }
                    }
                }
            }
            candidate = candidate.max(align_up(end, align));
        }
        offsets[i] = chosen.map_or(candidate, |(o, _)| o);
        placed.push(i);
    }
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::TensorId;
    use crate::lifetimes::BufferOwner;

    fn buf(i: usize, size: usize, first: usize, last: usize) -> Buffer {
        Buffer {
            owner: BufferOwner::Tensor(TensorId(i)),
            size,
            first,
            last,
        }
    }

    #[test]
    fn disjoint_lifetimes_share_offset_zero() {
        let b = [buf(0, 100, 0, 0), buf(1, 50, 1, 1)];
        let p = assign(&b, 16, 100);
        assert_eq!(p.offsets, vec![0, 0]);
        assert_eq!(p.arena_bytes, 100);
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
        let first = place(&b, &order, 16, Fit::First);
        let best = place(&b, &order, 16, Fit::Best);
        assert_eq!(&first[..4], &[0, 32, 48, 64]);
        assert_eq!(first[4], 0);
        assert_eq!(best[4], 48);
    }
}
