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
//!   tensor's size, made of *pieces* ([`Piece`]): parts of the buffer at fixed offsets in
//!   it, each live only while a member covering those bytes is. A piece is an elementary
//!   range of bytes (between two member boundaries) live from the first step of any member
//!   covering it to the last, adjacent ranges with the same steps joined ([`pieces_of`]).
//!   So the widening pointwise convolution in place (its input at the end of its output)
//!   holds the output's other bytes only from its own step on, and a concatenation's slices
//!   each from their producer on. A buffer of one tensor has one piece, the whole buffer.

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

/// A part of a buffer with its own lifetime: `size` bytes at `offset` bytes into the
/// buffer, live from step `first` to step `last` (inclusive). The pieces of a buffer do not
/// share a byte at a common step, and a placement keeps their offsets in the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Piece {
    pub offset: usize,
    pub size: usize,
    pub first: usize,
    pub last: usize,
}

impl Piece {
    /// Whether two pieces are live at a common step.
    pub fn overlaps_in_time(&self, other: &Piece) -> bool {
        self.first <= other.last && other.first <= self.last
    }
}

/// A buffer to place in the arena.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub owner: BufferOwner,
    /// Bytes the buffer spans (the root tensor's size).
    pub size: usize,
    /// First step at which a piece is live (inclusive).
    pub first: usize,
    /// Last step at which a piece is live (inclusive).
    pub last: usize,
    /// Its pieces, by offset: one, the whole buffer, unless it holds a group of aliases.
    pub pieces: Vec<Piece>,
}

impl Buffer {
    /// A buffer of one piece: `size` bytes live from `first` to `last`.
    pub fn whole(owner: BufferOwner, size: usize, first: usize, last: usize) -> Buffer {
        Buffer {
            owner,
            size,
            first,
            last,
            pieces: vec![Piece {
                offset: 0,
                size,
                first,
                last,
            }],
        }
    }

    /// Whether two buffers are live at a common step (their first and last steps).
    pub fn overlaps_in_time(&self, other: &Buffer) -> bool {
        self.first <= other.last && other.first <= self.last
    }

    /// Whether it has more than one piece.
    pub fn is_split(&self) -> bool {
        self.pieces.len() > 1
    }
}

/// The pieces covering `rects` (rectangles of bytes and steps, e.g. the members of a group
/// at their offsets, which may share bytes): every range of bytes between two consecutive
/// boundaries of the rectangles, live from the first step of any rectangle covering it to
/// the last; adjacent ranges live at the same steps become one piece. Canonical (the same
/// bytes and steps give the same pieces, whatever the rectangles' order and whether they
/// were pieces already), by offset, `O(n log n)`. Empty rectangles are skipped.
pub fn pieces_of(rects: &[Piece]) -> Vec<Piece> {
    // Boundaries: (position, rectangle starts there?, index).
    let mut events: Vec<(usize, bool, usize)> = Vec::with_capacity(2 * rects.len());
    for (i, r) in rects.iter().enumerate() {
        if r.size > 0 {
            events.push((r.offset, true, i));
            events.push((r.offset + r.size, false, i));
        }
    }
    events.sort_unstable();
    let mut firsts: std::collections::BTreeMap<usize, usize> = Default::default();
    let mut lasts: std::collections::BTreeMap<usize, usize> = Default::default();
    let mut out: Vec<Piece> = Vec::new();
    let mut k = 0;
    while k < events.len() {
        let x = events[k].0;
        while k < events.len() && events[k].0 == x {
            let (_, start, i) = events[k];
            let (f, l) = (rects[i].first, rects[i].last);
            if start {
                *firsts.entry(f).or_insert(0) += 1;
                *lasts.entry(l).or_insert(0) += 1;
            } else {
                for (map, key) in [(&mut firsts, f), (&mut lasts, l)] {
                    let n = map.get_mut(&key).expect("added at its start");
                    *n -= 1;
                    if *n == 0 {
                        map.remove(&key);
                    }
                }
            }
            k += 1;
        }
        let (Some((&first, _)), Some((&last, _)), Some(&(next, _, _))) = (
            firsts.iter().next(),
            lasts.iter().next_back(),
            events.get(k),
        ) else {
            continue;
        };
        match out.last_mut() {
            Some(p) if p.offset + p.size == x && p.first == first && p.last == last => {
                p.size = next - p.offset;
            }
            _ => out.push(Piece {
                offset: x,
                size: next - x,
                first,
                last,
            }),
        }
    }
    out
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
        for p in self.buffers.iter().flat_map(|b| &b.pieces) {
            delta[p.first] += p.size as isize;
            delta[p.last + 1] -= p.size as isize;
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
/// tensor's size), its pieces from the members at their offsets ([`pieces_of`]).
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
    // The members of each group with an alias, at their offsets: (root, offset, tensor).
    let mut members: Vec<(usize, usize, usize)> = (0..n)
        .filter_map(|t| {
            let (r, o) = aliases.root(TensorId(t));
            (r.0 != t).then_some((r.0, o, t))
        })
        .collect();
    members.sort_unstable();
    let rect = |t: usize, offset: usize| -> Option<Piece> {
        Some(Piece {
            offset,
            size: graph.tensors[t].bytes(),
            first: first[t]?,
            last: last[t]?,
        })
    };
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
                if t.bytes() == 0 || aliases.root(t.id).0 != t.id {
                    continue;
                }
                let at = members.partition_point(|m| m.0 < t.id.0);
                let group = members[at..].iter().take_while(|m| m.0 == t.id.0);
                let mut rects: Vec<Piece> = rect(t.id.0, 0).into_iter().collect();
                rects.extend(group.filter_map(|&(_, o, m)| rect(m, o)));
                let pieces = if rects.len() == 1 {
                    rects
                } else {
                    pieces_of(&rects)
                };
                let (Some(f), Some(l)) = (
                    pieces.iter().map(|p| p.first).min(),
                    pieces.iter().map(|p| p.last).max(),
                ) else {
                    continue;
                };
                buffers.push(Buffer {
                    owner: BufferOwner::Tensor(t.id),
                    size: t.bytes(),
                    first: f,
                    last: l,
                    pieces,
                });
            }
        }
    }
    for (s, &id) in order.iter().enumerate() {
        let op = graph.op(id);
        let size = kernels.scratch_bytes(graph, op)
            + crate::alias::in_place_scratch(graph, kernels, op, aliases.mode(id));
        if size > 0 {
            buffers.push(Buffer::whole(BufferOwner::Scratch(id), size, s, s));
        }
    }
    Lifetimes {
        buffers,
        persistent,
        steps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(offset: usize, size: usize, first: usize, last: usize) -> Piece {
        Piece {
            offset,
            size,
            first,
            last,
        }
    }

    #[test]
    fn a_widening_input_at_the_end_gives_two_pieces() {
        // Input 18 bytes at the end of a 36-byte output: the output's first half is live only
        // from the convolution's step on.
        let pieces = pieces_of(&[p(0, 36, 5, 9), p(18, 18, 2, 5)]);
        assert_eq!(pieces, vec![p(0, 18, 5, 9), p(18, 18, 2, 9)]);
    }

    #[test]
    fn members_with_the_same_steps_join_and_gaps_stay_free() {
        // An in-place chain over one range is one piece; a range nobody covers is no piece.
        assert_eq!(
            pieces_of(&[p(0, 8, 0, 2), p(0, 8, 2, 4), p(0, 8, 4, 6)]),
            vec![p(0, 8, 0, 6)]
        );
        assert_eq!(
            pieces_of(&[p(0, 4, 1, 3), p(8, 4, 1, 3)]),
            vec![p(0, 4, 1, 3), p(8, 4, 1, 3)]
        );
        // Adjacent ranges with the same steps join.
        assert_eq!(
            pieces_of(&[p(0, 4, 1, 3), p(4, 4, 1, 3)]),
            vec![p(0, 8, 1, 3)]
        );
        assert!(pieces_of(&[p(3, 0, 1, 1)]).is_empty());
    }

    /// Canonical: pieces of pieces are the same pieces, in any order of the rectangles, and
    /// every byte at every step is covered exactly when a rectangle covers it at some step
    /// in the hull of the steps of the rectangles covering that byte.
    #[test]
    fn pieces_are_canonical_and_cover_their_rectangles() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut below = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..500 {
            let rects: Vec<Piece> = (0..1 + below(6))
                .map(|_| {
                    let f = below(8);
                    p(below(20), below(12), f, f + below(5))
                })
                .collect();
            let pieces = pieces_of(&rects);
            let mut reversed = rects.clone();
            reversed.reverse();
            assert_eq!(pieces_of(&reversed), pieces);
            assert_eq!(pieces_of(&pieces), pieces);
            for x in 0..40 {
                let covering: Vec<&Piece> = rects
                    .iter()
                    .filter(|r| r.offset <= x && x < r.offset + r.size)
                    .collect();
                let hull = (
                    covering.iter().map(|r| r.first).min(),
                    covering.iter().map(|r| r.last).max(),
                );
                for s in 0..16 {
                    let want = matches!(hull, (Some(f), Some(l)) if f <= s && s <= l);
                    let n = pieces
                        .iter()
                        .filter(|q| q.offset <= x && x < q.offset + q.size)
                        .filter(|q| q.first <= s && s <= q.last)
                        .count();
                    assert_eq!(n, usize::from(want), "{rects:?} -> {pieces:?} at {x}, {s}");
                }
            }
        }
    }
}
