//! The branch and bound over placements: the smallest arena for an order of placement,
//! within a budget of nodes.

use super::*;

/// The result of one decision: does a placement fit under a capacity?
pub(super) enum Decision {
    Fits(Vec<usize>),
    DoesNotFit,
    OutOfBudget,
}

/// [`branch_and_bound_within`] with a budget of its own (tests).
#[cfg(test)]
pub(super) fn branch_and_bound(
    buffers: &[Buffer],
    align: usize,
    target: usize,
    incumbent: usize,
    budget: usize,
) -> (Option<Vec<usize>>, bool) {
    branch_and_bound_within(buffers, align, target, incumbent, &mut { budget })
}

/// Branch and bound: the smallest arena it can find below `incumbent`, and whether the best
/// arena (that or `incumbent`) is proved optimal. With buffers of several pieces the search
/// places every piece above all pieces placed at its steps (a skyline), which does not
/// reach every placement: it finds placements but proves nothing. It asks first for the target (with a quarter
/// of the budget), then for one byte less than the best arena so far, until a capacity is
/// proved infeasible or the budget runs out. `budget` is left with the work it did not use.
pub(super) fn branch_and_bound_within(
    buffers: &[Buffer],
    align: usize,
    target: usize,
    incumbent: usize,
    budget: &mut usize,
) -> (Option<Vec<usize>>, bool) {
    let mut search = Canonical::new(buffers, align);
    let complete = !buffers.iter().any(Buffer::is_split);
    let mut found: Option<Vec<usize>> = None;
    let mut best = incumbent;
    if target >= best {
        return (None, true);
    }
    let mut first = *budget / 4;
    let mut rest = *budget - first;
    match search.decide(target, &mut first) {
        Decision::Fits(offsets) => {
            *budget = first + rest;
            return (Some(offsets), true);
        }
        Decision::DoesNotFit => {}
        Decision::OutOfBudget => {}
    }
    rest += first;
    while best > target + 1 {
        match search.decide(best - 1, &mut rest) {
            Decision::Fits(offsets) => {
                best = arena_end(buffers, &offsets);
                found = Some(offsets);
            }
            Decision::DoesNotFit => {
                *budget = rest;
                return (found, complete);
            }
            Decision::OutOfBudget => {
                *budget = rest;
                return (found, false);
            }
        }
    }
    // `best` is the target + 1 and the target was refused, or `best` is the target.
    let proven = best <= target
        || (complete && matches!(search.decide(target, &mut rest), Decision::DoesNotFit));
    *budget = rest;
    (found, proven)
}

/// The canonical search of one capacity (see the module documentation).
pub(super) struct Canonical<'a> {
    pub(super) buffers: &'a [Buffer],
    pub(super) align: usize,
    pub(super) steps: usize,
}

impl<'a> Canonical<'a> {
    pub(super) fn new(buffers: &'a [Buffer], align: usize) -> Canonical<'a> {
        Canonical {
            buffers,
            align,
            steps: buffers.iter().map(|b| b.last + 1).max().unwrap_or(0),
        }
    }

    pub(super) fn decide(&mut self, capacity: usize, budget: &mut usize) -> Decision {
        let (bufs, align) = (self.buffers, self.align);
        let n = bufs.len();
        if n == 0 {
            return Decision::Fits(Vec::new());
        }
        let steps = self.steps;
        // What one node costs: the cross-section over all steps, and the floor of every
        // piece over its lifetime.
        let pieces = |b: &'a Buffer| b.pieces.iter();
        let cost = steps
            + bufs
                .iter()
                .flat_map(pieces)
                .map(|p| p.last - p.first + 2)
                .sum::<usize>();
        if *budget < cost {
            return Decision::OutOfBudget; // Before setting up, which costs as much.
        }
        // Rounded sizes count only where every piece starts aligned in its buffer.
        let rounding = bufs.iter().flat_map(pieces).all(|p| p.offset % align == 0);
        // Per step: top of the placed pieces; bytes (and aligned bytes) still to place.
        let mut sky = vec![0usize; steps];
        let mut todo = vec![0usize; steps];
        let mut todo_aligned = vec![0usize; steps];
        for p in bufs.iter().flat_map(pieces) {
            for t in p.first..=p.last {
                todo[t] += p.size;
                todo_aligned[t] += align_up(p.size, align);
            }
        }
        let mut placed = vec![false; n];
        let mut offsets = vec![0usize; n];
        // The placement stack: (buffer, offset, previous sky values start in `undo`).
        let mut stack: Vec<(usize, usize, usize)> = Vec::with_capacity(n);
        let mut undo: Vec<usize> = Vec::new();
        // The candidate to resume after on backtracking: its sort key.
        let mut resume: Option<(usize, std::cmp::Reverse<usize>, usize)> = None;
        let mut cands: Vec<(usize, std::cmp::Reverse<usize>, usize)> = Vec::with_capacity(n);
        loop {
            if *budget < cost {
                return Decision::OutOfBudget;
            }
            *budget -= cost;
            if stack.len() == n {
                return Decision::Fits(offsets);
            }
            let (last_off, last_idx) = stack.last().map_or((0, 0), |&(i, o, _)| (o, i));
            let mut dead = false;
            // Cross-section: what is left at each step must fit above its floor.
            for t in 0..steps {
                if todo[t] > 0 {
                    let floor = align_up(last_off.max(sky[t]), align);
                    let need = if rounding {
                        todo[t].max(todo_aligned[t].saturating_sub(align - 1))
                    } else {
                        todo[t]
                    };
                    if floor + need > capacity {
                        dead = true;
                        break;
                    }
                }
            }
            cands.clear();
            if !dead {
                for (i, b) in bufs.iter().enumerate() {
                    if placed[i] {
                        continue;
                    }
                    // The lowest offset putting every piece above the placed ones.
                    let top = b
                        .pieces
                        .iter()
                        .map(|p| {
                            sky[p.first..=p.last]
                                .iter()
                                .copied()
                                .max()
                                .unwrap_or(0)
                                .saturating_sub(p.offset)
                        })
                        .max()
                        .unwrap_or(0);
                    let h = align_up(top, align);
                    if h + b.size > capacity {
                        dead = true; // It can only go higher from here.
                        break;
                    }
                    if h < last_off || (h == last_off && !stack.is_empty() && i < last_idx) {
                        continue;
                    }
                    let key = (h, std::cmp::Reverse(b.size), i);
                    if resume.is_none_or(|r| key > r) {
                        cands.push(key);
                    }
                }
            }
            let next = if dead {
                None
            } else {
                cands.iter().copied().min()
            };
            match next {
                Some((h, _, i)) => {
                    resume = None;
                    let b = &bufs[i];
                    stack.push((i, h, undo.len()));
                    for p in &b.pieces {
                        for t in p.first..=p.last {
                            undo.push(sky[t]);
                            sky[t] = sky[t].max(h + p.offset + p.size);
                            todo[t] -= p.size;
                            todo_aligned[t] -= align_up(p.size, align);
                        }
                    }
                    placed[i] = true;
                    offsets[i] = h;
                }
                None => {
                    // Backtrack: undo the last placement and try its next sibling.
                    let Some((i, h, at)) = stack.pop() else {
                        return Decision::DoesNotFit;
                    };
                    let b = &bufs[i];
                    let mut k = undo.len();
                    for p in b.pieces.iter().rev() {
                        for t in (p.first..=p.last).rev() {
                            k -= 1;
                            sky[t] = undo[k];
                            todo[t] += p.size;
                            todo_aligned[t] += align_up(p.size, align);
                        }
                    }
                    debug_assert_eq!(k, at);
                    undo.truncate(at);
                    placed[i] = false;
                    resume = Some((h, std::cmp::Reverse(b.size), i));
                }
            }
        }
    }
}
