//! Tests of the offset search: validity (no overlap of live pieces, alignment), the
//! target, each stage against the others and against exhaustive search on tiny instances.

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
        let (found, proven) = branch_and_bound(&b, align, target(&b, align), usize::MAX, 1 << 30);
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
