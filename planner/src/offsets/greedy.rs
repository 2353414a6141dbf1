//! One greedy pass: the placement order of a sort key (with the conflict counts and lists it
//! needs) and the [`Workspace`] that places buffers in that order, each in a gap among the
//! placed buffers live with it, by first or best fit. Its cost, in buffer visits, is the
//! unit of every work budget of the offset search.

use super::*;

/// For each buffer, how many other buffers are live at a common step (`O(n log n)`: those
/// starting by its last step less those ending before its first).
pub(super) fn degrees(buffers: &[Buffer]) -> Vec<usize> {
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
pub(super) fn conflicts(buffers: &[Buffer]) -> Vec<Vec<u32>> {
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
pub(super) fn placement_order(buffers: &[Buffer], adj: &[Vec<u32>], key: SortKey) -> Vec<usize> {
    let degree: Vec<usize> = adj.iter().map(Vec::len).collect();
    placement_order_by(buffers, &degree, key)
}

/// The placement order of a sort key: indices into `buffers`; `degree[i]` is how many
/// buffers are live with buffer `i` ([`degrees`]).
pub(super) fn placement_order_by(buffers: &[Buffer], degree: &[usize], key: SortKey) -> Vec<usize> {
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
pub(super) struct Workspace {
    pub(super) offsets: Vec<usize>,
    placed: Vec<bool>,
    gaps: Vec<(usize, usize)>,
    /// Per piece of a buffer of several pieces: the placed pieces live with it.
    piece_gaps: Vec<Vec<(usize, usize)>>,
    /// Placed pieces sorted by `(offset, end)`, for dense instances, with their first and
    /// last steps (scanned in place, without looking the buffer up).
    by_offset: Sorted,
    /// Whether scanning all placed buffers is cheaper than sorting each buffer's conflicts
    /// (many buffers live together). Both give the same offsets.
    pub(super) dense: bool,
    /// Work of one placement, in buffer visits.
    pub(super) cost: usize,
}

impl Workspace {
    /// A workspace for buffers of one piece with these conflict lists (tests).
    #[cfg(test)]
    pub(super) fn new(adj: &[Vec<u32>]) -> Workspace {
        let degree: Vec<usize> = adj.iter().map(Vec::len).collect();
        Workspace::for_degrees(&degree, 0)
    }

    /// A workspace for `buffers`, live with `degree[i]` others each ([`degrees`]).
    pub(super) fn for_buffers(buffers: &[Buffer], degree: &[usize]) -> Workspace {
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
    pub(super) fn place(
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
