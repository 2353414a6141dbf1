//! The searches over the orders of one segment: a beam search and an exact dynamic program
//! over sets of executed operators, both within their budgets of states and steps.

use super::*;

pub(super) enum Mode {
    Exact { budget: usize },
    Beam { width: usize },
}

pub(super) enum Outcome {
    /// A strictly better order of the segment (local indices) and its peak.
    Found(Vec<u32>, usize),
    /// No order beats the bound (proved in exact mode).
    NoBetter,
    /// The exact search ran out of budget (states).
    OverBudget,
    /// The search ran out of work.
    OutOfWork,
}

/// One segment `[lo, hi)` ready for the search. Local index `i` is operator `lo + i`.
pub(super) struct SegCtx<'a> {
    pub(super) p: &'a Problem,
    pub(super) lo: usize,
    pub(super) hi: usize,
    pub(super) m: usize,
    pub(super) words: usize,
    pub(super) start_res: usize,
    pub(super) extra0: usize,
    pub(super) preds: Vec<Vec<u32>>,
    pub(super) succs: Vec<Vec<u32>>,
    /// Local operators by decreasing lower bound of their step's live bytes.
    pub(super) by_bound: Vec<(usize, u32)>,
    /// No order of the segment has a smaller peak.
    pub(super) lower_bound: usize,
    pub(super) zobrist: Vec<u64>,
}

pub(super) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A child state before it is stored: the parent, the operator run, its peak and resident
/// bytes, and the hash of its executed set.
#[derive(Clone, Copy)]
pub(super) struct Cand {
    pub(super) parent: u32,
    pub(super) op: u32,
    pub(super) lb_at: u32,
    pub(super) peak: usize,
    pub(super) res: usize,
    pub(super) hash: u64,
}

/// One level of the search: all kept states with the same number of executed operators.
pub(super) struct Level {
    pub(super) keys: Vec<u64>,
    pub(super) hash: Vec<u64>,
    /// Position in `by_bound` of the first operator not yet run.
    pub(super) lb_at: Vec<u32>,
    pub(super) peak: Vec<usize>,
    pub(super) res: Vec<usize>,
    pub(super) ready_at: Vec<u32>,
    pub(super) ready: Vec<u32>,
}

impl Level {
    pub(super) fn len(&self) -> usize {
        self.hash.len()
    }
    pub(super) fn key(&self, s: usize, words: usize) -> &[u64] {
        &self.keys[s * words..(s + 1) * words]
    }
    pub(super) fn ready(&self, s: usize) -> &[u32] {
        &self.ready[self.ready_at[s] as usize..self.ready_at[s + 1] as usize]
    }
}

pub(super) fn has(key: &[u64], i: u32) -> bool {
    key[(i / 64) as usize] >> (i % 64) & 1 == 1
}

/// Open-addressing index from a hash to a candidate (slots hold index + 1).
pub(super) struct Table {
    pub(super) slots: Vec<u32>,
    pub(super) len: usize,
}

impl Table {
    pub(super) fn new() -> Table {
        Table {
            slots: vec![0; 64],
            len: 0,
        }
    }

    /// The candidate equal to the probe (`eq`), or inserts `new` and returns `None`.
    pub(super) fn find_or_insert(
        &mut self,
        hash: u64,
        new: u32,
        hashes: &[Cand],
        eq: impl Fn(u32) -> bool,
    ) -> Option<u32> {
        if (self.len + 1) * 2 > self.slots.len() {
            let cap = self.slots.len() * 2;
            let mut slots = vec![0u32; cap];
            for &s in self.slots.iter().filter(|&&s| s != 0) {
                let mut i = hashes[(s - 1) as usize].hash as usize & (cap - 1);
                while slots[i] != 0 {
                    i = (i + 1) & (cap - 1);
                }
                slots[i] = s;
            }
            self.slots = slots;
        }
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                self.slots[i] = new + 1;
                self.len += 1;
                return None;
            }
            if hashes[(s - 1) as usize].hash == hash && eq(s - 1) {
                return Some(s - 1);
            }
            i = (i + 1) & mask;
        }
    }
}

/// No order of the segment `[lo, hi)` (of more than one operator) has a smaller peak than
/// this: the least, over the operators that can run last (no successor in the segment), of
/// the bytes live at the last step if it runs there, which do not depend on the order
/// before it. `end_res` bytes are resident after the segment in every order, so before its
/// last operator `o` there are `end_res`, less what `o` keeps, plus the inputs `o` frees:
/// those read by nobody after the segment, which die at `o` (what aliasing saves there is
/// counted as in the search). A fan-out whose outputs all stay live, or all meet at one
/// operator, is proved here without a search. `O(edges)`.
fn last_step_bound(p: &Problem, lo: usize, hi: usize, succs: &[Vec<u32>], end_res: usize) -> usize {
    (lo..hi)
        .filter(|&o| succs[o - lo].is_empty())
        .map(|o| {
            let dies =
                |t: usize| !p.keep[t] && p.consumers[t].last().is_some_and(|&c| (c as usize) < hi);
            let freed: usize = p.ins[o]
                .iter()
                .map(|&t| t as usize)
                .filter(|&t| dies(t))
                .map(|t| p.size[t])
                .sum();
            let res = (end_res + freed).saturating_sub(p.kept_bytes[o]);
            p.step_live(o, res, p.gain(o, dies))
        })
        .min()
        .unwrap_or(0)
}

impl<'a> SegCtx<'a> {
    /// The segment `[lo, hi)`, entered with `start_res` bytes resident and left with
    /// `end_res` ([`Problem::resident_before_each_stored_step`]), `crossing_bytes` of them
    /// resident through it ([`Problem::crossing_bytes`]).
    pub(super) fn new(
        p: &'a Problem,
        lo: usize,
        hi: usize,
        (start_res, end_res): (usize, usize),
        crossing_bytes: usize,
    ) -> SegCtx<'a> {
        let m = hi - lo;
        let local = |o: u32| o as usize >= lo && (o as usize) < hi;
        let preds: Vec<Vec<u32>> = (lo..hi)
            .map(|o| {
                p.preds[o]
                    .iter()
                    .filter(|&&q| local(q))
                    .map(|&q| q - lo as u32)
                    .collect()
            })
            .collect();
        let succs: Vec<Vec<u32>> = (lo..hi)
            .map(|o| {
                p.succs[o]
                    .iter()
                    .filter(|&&q| local(q))
                    .map(|&q| q - lo as u32)
                    .collect()
            })
            .collect();
        // Tensors resident through the whole segment: available before it, needed after.
        let crossing = |t: usize| {
            let before = p.input[t] || p.producer[t].is_some_and(|q| (q as usize) < lo);
            let after = p.keep[t] || p.consumers[t].last().is_some_and(|&c| c as usize >= hi);
            p.size[t] > 0 && before && after
        };
        let outs = &p.outs[lo..hi];
        let mut by_bound: Vec<(usize, u32)> = (0..m)
            .map(|i| {
                let o = lo + i;
                let own: usize = p.ins[o]
                    .iter()
                    .chain(&outs[i])
                    .filter(|&&t| !crossing(t as usize))
                    .map(|&t| p.size[t as usize])
                    .sum();
                let bound = (crossing_bytes + own + p.scratch[o]).saturating_sub(p.max_gain(o));
                (bound, i as u32)
            })
            .collect();
        by_bound.sort_by_key(|&(b, i)| (std::cmp::Reverse(b), i));
        let lower_bound = by_bound
            .first()
            .map_or(0, |b| b.0)
            .max(last_step_bound(p, lo, hi, &succs, end_res));
        SegCtx {
            p,
            lo,
            hi,
            m,
            words: m.div_ceil(64),
            start_res,
            extra0: if lo == 0 { p.first_step_extra } else { 0 },
            preds,
            succs,
            by_bound,
            lower_bound,
            zobrist: (0..m as u64).map(splitmix).collect(),
        }
    }

    /// Searches orders of the segment with a peak strictly below `bound`, doing at most
    /// `work_limit` steps of work. Returns the outcome, the number of states created (in
    /// words) and the steps of work done.
    pub(super) fn search(
        &self,
        bound: usize,
        mode: Mode,
        work_limit: usize,
    ) -> (Outcome, usize, usize) {
        let (m, w) = (self.m, self.words);
        let mut cur = Level {
            keys: vec![0; w],
            hash: vec![0],
            lb_at: vec![0],
            peak: vec![0],
            res: vec![self.start_res],
            ready_at: vec![0],
            ready: (0..m as u32)
                .filter(|&i| self.preds[i as usize].is_empty())
                .collect(),
        };
        cur.ready_at.push(cur.ready.len() as u32);
        // Per level: (parent, op) of each kept state, to rebuild the order.
        let mut trail: Vec<Vec<(u32, u32)>> = Vec::with_capacity(m);
        let mut created = 0usize;
        let mut work = 0usize;
        let mut cands: Vec<Cand> = Vec::new();
        let mut dying: Vec<usize> = Vec::new();
        for level in 0..m {
            cands.clear();
            let mut table = Table::new();
            let extra = if level == 0 { self.extra0 } else { 0 };
            for s in 0..cur.len() {
                let key = cur.key(s, w);
                for &o in cur.ready(s) {
                    work += 1;
                    if work > work_limit {
                        return (Outcome::OutOfWork, created, work);
                    }
                    let go = self.lo + o as usize;
                    // The most aliasing can save here first (0 unless the search is alias
                    // aware), then what it saves in this state, once the dying inputs are known.
                    let live = self.p.step_live(go, cur.res[s], self.p.max_gain(go)) + extra;
                    if cur.peak[s].max(live) >= bound {
                        continue;
                    }
                    // Lower bound of what is left: the largest bound of an operator not run.
                    let mut lb_at = cur.lb_at[s] as usize;
                    while let Some(&(_, i)) = self.by_bound.get(lb_at) {
                        if i != o && !has(key, i) {
                            break;
                        }
                        lb_at += 1;
                        work += 1;
                    }
                    let rest = self.by_bound.get(lb_at).map_or(0, |b| b.0);
                    if rest >= bound {
                        continue;
                    }
                    // Inputs whose every other reader ran: freed after this step.
                    let mut freed = 0usize;
                    dying.clear();
                    for &t in &self.p.ins[go] {
                        let t = t as usize;
                        if self.p.keep[t] {
                            continue;
                        }
                        let mut last = true;
                        for &c in &self.p.consumers[t] {
                            work += 1;
                            let c = c as usize;
                            if !(c < self.lo
                                || c == go
                                || (c < self.hi && has(key, (c - self.lo) as u32)))
                            {
                                last = false;
                                break;
                            }
                        }
                        if last {
                            freed += self.p.size[t];
                            dying.push(t);
                        }
                    }
                    let gain = self.p.gain(go, |t| dying.contains(&t));
                    let peak = cur.peak[s].max(self.p.step_live(go, cur.res[s], gain) + extra);
                    if peak >= bound {
                        continue;
                    }
                    let cand = Cand {
                        parent: s as u32,
                        op: o,
                        lb_at: lb_at as u32,
                        peak,
                        res: cur.res[s] + self.p.kept_bytes[go] - freed,
                        hash: cur.hash[s] ^ self.zobrist[o as usize],
                    };
                    let new = cands.len() as u32;
                    let same = |ci: u32| {
                        let c = cands[ci as usize];
                        if c.parent == s as u32 {
                            return c.op == o;
                        }
                        let other = cur.key(c.parent as usize, w);
                        (0..w).all(|k| {
                            let bit = |x: u32| {
                                if (x / 64) as usize == k {
                                    1u64 << (x % 64)
                                } else {
                                    0
                                }
                            };
                            (other[k] | bit(c.op)) == (key[k] | bit(o))
                        })
                    };
                    // Storing a candidate costs more than visiting: a hash probe, a copy.
                    work += CANDIDATE_WORK;
                    match table.find_or_insert(cand.hash, new, &cands, same) {
                        Some(ci) => {
                            let c = &mut cands[ci as usize];
                            if peak < c.peak {
                                c.parent = s as u32;
                                c.op = o;
                                c.peak = peak;
                            }
                        }
                        None => {
                            cands.push(cand);
                            // A level past the budget ends the exact search (checked as
                            // states are created, so one wide level cannot run long).
                            if let Mode::Exact { budget } = mode
                                && created + cands.len() * (1 + w) > budget
                            {
                                return (
                                    Outcome::OverBudget,
                                    created + cands.len() * (1 + w),
                                    work,
                                );
                            }
                        }
                    }
                }
            }
            created += cands.len() * (1 + w);
            if cands.is_empty() {
                return (Outcome::NoBetter, created, work);
            }
            let mut keep: Vec<u32> = (0..cands.len() as u32).collect();
            match mode {
                Mode::Exact { budget } => {
                    if created > budget {
                        return (Outcome::OverBudget, created, work);
                    }
                }
                Mode::Beam { width } => {
                    if keep.len() > width {
                        work += keep.len();
                        // Fewest resident bytes first: what the rest of the order must carry
                        // (the `width` smallest keys, a total order: no full sort needed).
                        keep.select_nth_unstable_by_key(width - 1, |&i| {
                            let c = &cands[i as usize];
                            (c.res, c.peak, i)
                        });
                        keep.truncate(width);
                        keep.sort_unstable();
                    }
                }
            }
            // Materialize the kept states.
            let mut next = Level {
                keys: Vec::with_capacity(keep.len() * w),
                hash: Vec::with_capacity(keep.len()),
                lb_at: Vec::with_capacity(keep.len()),
                peak: Vec::with_capacity(keep.len()),
                res: Vec::with_capacity(keep.len()),
                ready_at: Vec::with_capacity(keep.len() + 1),
                ready: Vec::new(),
            };
            next.ready_at.push(0);
            let mut links = Vec::with_capacity(keep.len());
            for &ci in &keep {
                let c = cands[ci as usize];
                let start = next.keys.len();
                next.keys.extend_from_slice(cur.key(c.parent as usize, w));
                next.keys[start + (c.op / 64) as usize] |= 1u64 << (c.op % 64);
                let key = &next.keys[start..];
                let ready_start = next.ready.len();
                next.ready.extend(
                    cur.ready(c.parent as usize)
                        .iter()
                        .copied()
                        .filter(|&r| r != c.op),
                );
                for &sx in &self.succs[c.op as usize] {
                    if self.preds[sx as usize].iter().all(|&q| has(key, q)) {
                        next.ready.push(sx);
                    }
                }
                next.ready[ready_start..].sort_unstable();
                next.ready_at.push(next.ready.len() as u32);
                work += w + 2 * (next.ready.len() - ready_start);
                for &sx in &self.succs[c.op as usize] {
                    work += 1 + self.preds[sx as usize].len();
                }
                if work > work_limit {
                    return (Outcome::OutOfWork, created, work);
                }
                next.hash.push(c.hash);
                next.lb_at.push(c.lb_at);
                next.peak.push(c.peak);
                next.res.push(c.res);
                links.push((c.parent, c.op));
            }
            trail.push(links);
            cur = next;
        }
        debug_assert_eq!(cur.len(), 1);
        let peak = cur.peak[0];
        let mut order = vec![0u32; m];
        let mut s = 0u32;
        for level in (0..m).rev() {
            let (parent, op) = trail[level][s as usize];
            order[level] = self.lo as u32 + op;
            s = parent;
        }
        (Outcome::Found(order, peak), created, work)
    }
}
