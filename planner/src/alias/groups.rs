//! The groups of aliasing tensors while the aliasing is built, with the safety checks of
//! merging two groups, and the lower bound kept up to date under changes (`LiveMax`).

use super::*;
use crate::lifetimes::{Piece, pieces_of};

/// A group of tensors sharing one buffer while the aliasing is built: its members, and
/// which of them hold data and are written when, for the safety checks.
#[derive(Clone, Debug, Default)]
pub(super) struct Group {
    /// Member `t` sits at `local[t] + base` bytes in the root.
    pub(super) base: i64,
    pub(super) members: Vec<u32>,
    /// Members that hold data at some step, by last read: `(read, tensor)` (empty for a
    /// group of one member, which is checked directly).
    pub(super) holders: BTreeSet<(usize, u32)>,
    /// Members written by an operator that is not elided, by step: `(step, tensor)` (empty
    /// for a group of one member).
    pub(super) writers: BTreeSet<(usize, u32)>,
    /// The pieces of its buffer ([`crate::lifetimes::pieces_of`] of the members), in the
    /// root's bytes; empty for a tensor without arena bytes.
    pub(super) pieces: Vec<Piece>,
}

/// The groups of aliases while they are built. Merging moves the smaller group's members
/// into the larger one's structures (each tensor moves `O(log n)` times), and whether two
/// groups can merge is decided from the pairs of members across them only (the pairs inside
/// each group were checked when it formed): every member of the smaller group, as a writer,
/// against the members of the larger one holding data at that step, and as a holder against
/// the larger one's writes while it holds data.
#[derive(Clone)]
pub(super) struct Groups<'a> {
    pub(super) graph: &'a Graph,
    pub(super) times: &'a Times,
    /// Per tensor: its group (an index into `groups`) and its offset from the group's base.
    pub(super) group: Vec<u32>,
    pub(super) local: Vec<i64>,
    pub(super) groups: Vec<Group>,
    /// Per group: the root tensor.
    pub(super) root: Vec<u32>,
    pub(super) mode: Vec<OpMode>,
    pub(super) producer: Vec<Option<OpId>>,
    /// Steps left of [`AliasOptions::work_budget`], shared by every copy.
    pub(super) work_left: &'a Cell<usize>,
}

/// A mode an operator would get if a merge is taken.
type Change = (OpId, OpMode);

impl<'a> Groups<'a> {
    pub(super) fn new(
        graph: &'a Graph,
        times: &'a Times,
        work_left: &'a Cell<usize>,
    ) -> Groups<'a> {
        let n = graph.tensors.len();
        let base = Aliases::none(graph);
        Groups {
            graph,
            times,
            group: (0..n as u32).collect(),
            local: vec![0; n],
            groups: (0..n)
                .map(|t| Group {
                    members: vec![t as u32],
                    pieces: match times.span[t] {
                        Some((first, last)) if is_arena(graph, TensorId(t)) => vec![Piece {
                            offset: 0,
                            size: graph.tensors[t].bytes(),
                            first,
                            last,
                        }],
                        _ => Vec::new(),
                    },
                    ..Group::default()
                })
                .collect(),
            root: (0..n as u32).collect(),
            mode: base.mode,
            producer: base.producer,
            work_left,
        }
    }

    /// The root of `t`'s group and `t`'s offset in it.
    pub(super) fn place(&self, t: usize) -> (usize, usize) {
        let g = self.group[t] as usize;
        let offset = self.local[t] + self.groups[g].base;
        (self.root[g] as usize, offset as usize)
    }

    pub(super) fn bytes(&self, t: usize) -> usize {
        self.graph.tensors[t].bytes()
    }

    pub(super) fn mode_of(&self, op: OpId, change: Option<Change>) -> OpMode {
        match change {
            Some((o, m)) if o == op => m,
            _ => self.mode[op.0],
        }
    }

    /// The step at which `t` is written by an operator that writes bytes (not a view or a
    /// concatenation of slices).
    pub(super) fn write_step(&self, t: usize, change: Option<Change>) -> Option<usize> {
        let (w, p) = (self.times.written[t]?, self.producer[t]?);
        (!self.mode_of(p, change).elided()).then_some(w)
    }

    /// The steps at which `t` holds data someone reads later: `first..=last`, possibly
    /// empty.
    pub(super) fn held(&self, t: usize) -> (usize, usize) {
        let first = self.times.written[t].map_or(0, |w| w + 1);
        (first, self.times.read[t])
    }

    /// Takes one step of the budget; `false` when it is spent.
    pub(super) fn spend(&self) -> bool {
        let left = self.work_left.get();
        if left == 0 {
            return false;
        }
        self.work_left.set(left - 1);
        true
    }

    /// Whether writer `m` (at `om` bytes) may write at its step over holder `n` (at `on`),
    /// which holds data then: only an in-place operator over its input's bytes as they die.
    pub(super) fn may_overwrite(
        &self,
        m: usize,
        om: usize,
        n: usize,
        on: usize,
        offset_of: &dyn Fn(usize) -> Option<usize>,
        change: Option<Change>,
    ) -> bool {
        let (sm, sn) = (self.bytes(m), self.bytes(n));
        if !(om < on + sn && on < om + sm) {
            return true;
        }
        let p = self.producer[m].expect("a writer has a producer");
        let w = self.times.written[m].expect("a writer is written");
        let in_place_input = match self.mode_of(p, change) {
            OpMode::InPlace { input } => self.graph.op(p).input(input),
            _ => None,
        };
        // Only the input the operator overwrites (another input on the same bytes, e.g. a
        // second view of them, would be read after being overwritten).
        let overwritten = in_place_input
            .is_some_and(|a| a.0 == n && offset_of(a.0) == Some(on) && self.bytes(a.0) == sn);
        overwritten && self.times.read[n] == w && !self.times.kept[n]
    }

    /// Whether the groups `gx` and `gy`, their members moved by `dx` and `dy` bytes, can
    /// share bytes: no member of one writes over bytes of a member of the other that holds
    /// data then (except an in-place operator over its dying input). Checks the pairs across
    /// the two groups only, from the smaller one's members; `false` when the budget runs out.
    pub(super) fn compatible(
        &self,
        gx: usize,
        dx: usize,
        gy: usize,
        dy: usize,
        change: Change,
    ) -> bool {
        if gx == gy {
            return false;
        }
        let change = Some(change);
        let offset_of = |t: usize| {
            let g = self.group[t] as usize;
            let d = if g == gx {
                dx
            } else if g == gy {
                dy
            } else {
                return None;
            };
            Some(self.place(t).1 + d)
        };
        let (small, large) = if self.groups[gx].members.len() <= self.groups[gy].members.len() {
            (gx, gy)
        } else {
            (gy, gx)
        };
        let big = &self.groups[large];
        for &u in &self.groups[small].members {
            let u = u as usize;
            let ou = offset_of(u).expect("in the small group");
            if let Some(w) = self.write_step(u, change) {
                // Members of the large group holding data at step `w`.
                let check = |n: usize| {
                    let (first, last) = self.held(n);
                    !(first <= w && w <= last)
                        || self.may_overwrite(
                            u,
                            ou,
                            n,
                            offset_of(n).expect("large"),
                            &offset_of,
                            change,
                        )
                };
                if big.members.len() == 1 {
                    if !self.spend() || !check(big.members[0] as usize) {
                        return false;
                    }
                } else {
                    for &(_, n) in big.holders.range((w, 0)..) {
                        if !self.spend() || !check(n as usize) {
                            return false;
                        }
                    }
                }
            }
            let (first, last) = self.held(u);
            if first <= last {
                // Writes of the large group while `u` holds data.
                let check = |m: usize| match self.write_step(m, change) {
                    Some(w) if first <= w && w <= last => self.may_overwrite(
                        m,
                        offset_of(m).expect("large"),
                        u,
                        ou,
                        &offset_of,
                        change,
                    ),
                    _ => true,
                };
                if big.members.len() == 1 {
                    if !self.spend() || !check(big.members[0] as usize) {
                        return false;
                    }
                } else {
                    for &(_, m) in big.writers.range((first, 0)..=(last, u32::MAX)) {
                        if !self.spend() || !check(m as usize) {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }

    /// Adds member `t` to the holders and writers of group `g`.
    pub(super) fn index(&mut self, g: usize, t: u32) {
        let (first, last) = self.held(t as usize);
        let w = self.write_step(t as usize, None);
        let group = &mut self.groups[g];
        if first <= last {
            group.holders.insert((last, t));
        }
        if let Some(w) = w {
            group.writers.insert((w, t));
        }
    }

    /// Moves every member of the group rooted at `from` into the group rooted at `to`, at
    /// `offset` bytes (members keep their offsets relative to each other).
    pub(super) fn merge(&mut self, from: usize, to: usize, offset: usize) {
        let (gf, gt) = (self.group[from] as usize, self.group[to] as usize);
        debug_assert_eq!(self.root[gf] as usize, from, "merges move whole groups");
        if gf == gt {
            self.groups[gf].base += offset as i64;
            for p in &mut self.groups[gf].pieces {
                p.offset += offset;
            }
            return;
        }
        let pieces = self.joined_pieces(&[(to, 0), (from, offset)]);
        self.move_members(from, to, offset, pieces);
    }

    /// [`Groups::merge`] of each group rooted at `parts[i].0` (distinct roots, none in
    /// `to`'s group) into the group rooted at `to`, at `parts[i].1` bytes: the joined
    /// pieces are computed once (`O(p log p)` for `p` pieces in all, where merging one
    /// group after the other would compute them again for each).
    pub(super) fn merge_all(&mut self, to: usize, parts: &[(usize, usize)]) {
        let joined: Vec<(usize, usize)> = std::iter::once((to, 0))
            .chain(parts.iter().copied())
            .collect();
        let pieces = self.joined_pieces(&joined);
        for &(from, offset) in parts {
            debug_assert_ne!(self.group[from], self.group[to], "distinct groups");
            self.move_members(from, to, offset, Vec::new());
        }
        let g = self.group[to] as usize;
        self.groups[g].pieces = pieces;
    }

    /// Moves the members of the group rooted at `from` into `to`'s (distinct groups), at
    /// `offset`, the joined group's pieces being `pieces`.
    fn move_members(&mut self, from: usize, to: usize, offset: usize, pieces: Vec<Piece>) {
        let (gf, gt) = (self.group[from] as usize, self.group[to] as usize);
        // The group that keeps its structures, and the one whose members move.
        let (keep, moved) = if self.groups[gf].members.len() <= self.groups[gt].members.len() {
            (gt, gf)
        } else {
            // `from`'s members move by `offset` in place; `to`'s move over.
            self.groups[gf].base += offset as i64;
            (gf, gt)
        };
        let shift = if moved == gf { offset as i64 } else { 0 };
        let old = std::mem::take(&mut self.groups[moved]);
        if self.groups[keep].members.len() == 1 {
            let t = self.groups[keep].members[0];
            self.index(keep, t);
        }
        for &t in &old.members {
            let ti = t as usize;
            self.local[ti] = self.local[ti] + old.base + shift - self.groups[keep].base;
            self.group[ti] = keep as u32;
            self.index(keep, t);
        }
        let group = &mut self.groups[keep];
        group.members.extend_from_slice(&old.members);
        group.pieces = pieces;
        self.root[keep] = to as u32;
    }

    /// Gives operator `op` its mode; the outputs of one that no longer writes (a view, a
    /// concatenation of slices) leave their groups' writers.
    pub(super) fn set_mode(&mut self, op: OpId, mode: OpMode) {
        if mode.elided() && !self.mode[op.0].elided() {
            for &t in &self.graph.op(op).outputs {
                if let Some(w) = self.times.written[t.0] {
                    let g = self.group[t.0] as usize;
                    self.groups[g].writers.remove(&(w, t.0 as u32));
                }
            }
        }
        self.mode[op.0] = mode;
    }

    /// Where `c`, the output of an operator running in place, goes over its input `a`:
    /// starting where `a` starts when `c` is no larger (elementwise, depthwise, a narrowing
    /// pointwise convolution), else ending where `a` ends (a widening pointwise convolution;
    /// `c`'s group becomes the root when `a` ends its own group). The merge to make, as
    /// `(from, to, offset)` for [`Groups::merge`], or `None` if `c` already shares bytes or
    /// cannot be placed so.
    pub(super) fn overwrite(&self, a: TensorId, c: TensorId) -> Option<(usize, usize, usize)> {
        if self.place(c.0) != (c.0, 0) {
            return None;
        }
        let (ra, oa) = self.place(a.0);
        let (sa, sc) = (self.bytes(a.0), self.bytes(c.0));
        if sc <= sa || oa + sa >= sc {
            Some((c.0, ra, if sc <= sa { oa } else { oa + sa - sc }))
        } else if oa + sa == self.bytes(ra) {
            Some((ra, c.0, sc - sa - oa))
        } else {
            None
        }
    }

    /// Whether the merge `(from, to, offset)` is safe with `change` made.
    pub(super) fn can_merge(
        &self,
        (from, to, offset): (usize, usize, usize),
        change: Change,
    ) -> bool {
        let (gf, gt) = (self.group[from] as usize, self.group[to] as usize);
        let safe = self.compatible(gf, offset, gt, 0, change);
        #[cfg(debug_assertions)]
        if self.graph.tensors.len() <= 300 && self.work_left.get() > 0 {
            let mut merged = self.clone();
            merged.merge(from, to, offset);
            merged.set_mode(change.0, change.1);
            let reference = merged.aliases(0).is_safe(self.graph, self.times, to);
            debug_assert_eq!(safe, reference, "incremental and full safety checks agree");
        }
        safe
    }

    /// Runs `c` in place over `a` (operator `op`, input slot `input`) if that is safe.
    pub(super) fn try_in_place(
        &mut self,
        op: OpId,
        input: usize,
        a: TensorId,
        c: TensorId,
    ) -> bool {
        let Some(merge) = self.overwrite(a, c) else {
            return false;
        };
        let change = (op, OpMode::InPlace { input });
        if !self.can_merge(merge, change) {
            return false;
        }
        self.merge(merge.0, merge.1, merge.2);
        self.set_mode(change.0, change.1);
        true
    }

    /// The pieces of the buffer of the group rooted at `root`, in the root's bytes.
    pub(super) fn pieces(&self, root: usize) -> &[Piece] {
        &self.groups[self.group[root] as usize].pieces
    }

    /// The pieces of one buffer holding the groups rooted at `parts` (distinct roots), the
    /// group rooted at `parts[i].0` at `parts[i].1` bytes into it.
    pub(super) fn joined_pieces(&self, parts: &[(usize, usize)]) -> Vec<Piece> {
        let rects: Vec<Piece> = parts
            .iter()
            .flat_map(|&(r, at)| {
                self.pieces(r).iter().map(move |p| Piece {
                    offset: p.offset + at,
                    ..*p
                })
            })
            .collect();
        pieces_of(&rects)
    }

    /// How the bytes live at each step change if the groups rooted at `parts` (distinct
    /// roots, each at its offset) become one group rooted at `parts[0].0`: their pieces go,
    /// those of the joined buffer come.
    pub(super) fn join_changes(&self, parts: &[(usize, usize)]) -> Vec<((usize, usize), i64)> {
        let mut changes: Vec<((usize, usize), i64)> = parts
            .iter()
            .flat_map(|&(r, _)| self.pieces(r))
            .map(|p| ((p.first, p.last), -(p.size as i64)))
            .collect();
        changes.extend(
            self.joined_pieces(parts)
                .into_iter()
                .map(|p| ((p.first, p.last), p.size as i64)),
        );
        changes
    }

    /// [`Groups::join_changes`] of the merge `(from, to, offset)` ([`Groups::merge`]).
    pub(super) fn merge_changes(
        &self,
        from: usize,
        to: usize,
        offset: usize,
    ) -> Vec<((usize, usize), i64)> {
        self.join_changes(&[(to, 0), (from, offset)])
    }

    /// The aliasing as built so far.
    pub(super) fn aliases(&self, work: usize) -> Aliases {
        Aliases {
            place: (0..self.group.len()).map(|t| self.place(t)).collect(),
            mode: self.mode.clone(),
            producer: self.producer.clone(),
            work,
        }
    }
}

/// Most bytes live at one step, under range additions (a segment tree with lazy
/// additions): the lower bound as groups merge, without recomputing every lifetime.
pub(super) struct LiveMax {
    pub(super) n: usize,
    pub(super) max: Vec<i64>,
    pub(super) add: Vec<i64>,
}

impl LiveMax {
    pub(super) fn new(live: &[usize]) -> LiveMax {
        let n = live.len().max(1);
        let mut tree = LiveMax {
            n,
            max: vec![0; 4 * n],
            add: vec![0; 4 * n],
        };
        tree.build(1, 0, n - 1, live);
        tree
    }

    pub(super) fn build(&mut self, node: usize, lo: usize, hi: usize, live: &[usize]) {
        if lo == hi {
            self.max[node] = live.get(lo).copied().unwrap_or(0) as i64;
            return;
        }
        let mid = (lo + hi) / 2;
        self.build(2 * node, lo, mid, live);
        self.build(2 * node + 1, mid + 1, hi, live);
        self.max[node] = self.max[2 * node].max(self.max[2 * node + 1]);
    }

    /// Adds `v` at steps `first..=last`.
    pub(super) fn add(&mut self, (first, last): (usize, usize), v: i64) {
        self.update(1, 0, self.n - 1, first, last, v);
    }

    pub(super) fn update(&mut self, node: usize, lo: usize, hi: usize, a: usize, b: usize, v: i64) {
        if b < lo || hi < a {
            return;
        }
        if a <= lo && hi <= b {
            self.max[node] += v;
            self.add[node] += v;
            return;
        }
        let mid = (lo + hi) / 2;
        self.update(2 * node, lo, mid, a, b, v);
        self.update(2 * node + 1, mid + 1, hi, a, b, v);
        self.max[node] = self.max[2 * node].max(self.max[2 * node + 1]) + self.add[node];
    }

    pub(super) fn max(&self) -> usize {
        self.max[1].max(0) as usize
    }
}
