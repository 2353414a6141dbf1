//! Property tests on random DAGs (1 to 300 operators, random sizes, fan-in and fan-out up to
//! 4, some operators with two outputs, a variable input or scratch memory): every plan
//! verifies, its order is topological, its arena is at least its bound and at most TFLM's
//! greedy rule on the same lifetimes and on the stored order, and its bound is at most the
//! stored order's.

use kiln_planner::ir::{Graph, Op, OpId};
use kiln_planner::kernels::{Kernels, WithScratch};
use kiln_planner::lifetimes::{self, Buffer};
use kiln_planner::synthetic::{self, Spec};
use kiln_planner::{PlanOptions, schedule, verify};
use proptest::prelude::*;
use std::collections::HashMap;

/// TFLM's `GreedyMemoryPlanner`, written here from its description (independent of
/// `offsets`): largest first (stable), each at the lowest aligned gap among the buffers live
/// at the same time that are already placed.
fn tflm_arena(buffers: &[Buffer], align: usize) -> usize {
    let mut idx: Vec<usize> = (0..buffers.len()).collect();
    idx.sort_by_key(|&i| std::cmp::Reverse(buffers[i].size));
    let mut placed: Vec<(usize, usize, usize)> = Vec::new(); // (offset, end, buffer)
    let mut arena = 0;
    for i in idx {
        let b = &buffers[i];
        let mut spans: Vec<(usize, usize)> = placed
            .iter()
            .filter(|&&(_, _, j)| buffers[j].first <= b.last && b.first <= buffers[j].last)
            .map(|&(o, e, _)| (o, e))
            .collect();
        spans.sort_unstable();
        let mut at = 0usize;
        for (o, e) in spans {
            if at + b.size <= o {
                break;
            }
            at = at.max(e.div_ceil(align) * align);
        }
        placed.push((at, at + b.size, i));
        arena = arena.max(at + b.size);
    }
    arena
}

fn is_topological(g: &Graph, order: &[OpId]) -> bool {
    let producer: HashMap<usize, usize> = g
        .ops
        .iter()
        .flat_map(|op| op.outputs.iter().map(move |t| (t.0, op.id.0)))
        .collect();
    let mut step = vec![usize::MAX; g.ops.len()];
    for (s, o) in order.iter().enumerate() {
        step[o.0] = s;
    }
    order.len() == g.ops.len()
        && step.iter().all(|&s| s != usize::MAX)
        && g.ops.iter().all(|op| {
            op.present_inputs()
                .filter_map(|t| producer.get(&t.0))
                .all(|&p| step[p] < step[op.id.0])
        })
}

fn spec() -> impl Strategy<Value = (Spec, u8, usize)> {
    (
        1usize..=300,
        any::<u64>(),
        1usize..=4,
        1usize..=4,
        0usize..=8,
        0u32..=60,
        0u32..=20,
        prop::sample::select(vec![(1usize, 64usize), (1, 4096), (16, 65536), (100, 200)]),
        0u8..=2,
        prop::sample::select(vec![1usize, 4, 16]),
    )
        .prop_map(
            |(
                ops,
                seed,
                fan_in,
                fan_out,
                window,
                multi_in,
                multi_out,
                (lo, hi),
                scratch,
                align,
            )| {
                let spec = Spec {
                    ops,
                    inputs: 1 + (seed % 3) as usize,
                    max_fan_in: fan_in,
                    max_fan_out: fan_out,
                    window,
                    multi_input_percent: multi_in,
                    multi_output_percent: multi_out,
                    variable_percent: (seed % 2) as u32 * 5,
                    min_bytes: lo,
                    max_bytes: hi,
                    granule: 1,
                    alias_percent: ((seed >> 8) % 3) as u32 * 20,
                    seed,
                };
                (spec, scratch, align)
            },
        )
}

fn scratch_of(kind: u8) -> impl Fn(&Graph, &Op) -> usize {
    move |_: &Graph, op: &Op| {
        let i = op.id.0 as u64 * 0x9E37_79B9 + kind as u64;
        if kind > 0 && i.is_multiple_of(4) {
            (i % 300) as usize
        } else {
            0
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_dags_plan_within_bound_and_tflm((spec, scratch_kind, align) in spec()) {
        let g = synthetic::graph(&spec);
        let declared = synthetic::declared(&g);
        let scratch = WithScratch(scratch_of(scratch_kind), &declared);
        let options = PlanOptions::with_alignment(align);
        let p = lifetimes_checked_plan(&g, &options, &scratch);
        prop_assert!(verify::verify(&g, &p, &scratch).is_ok());
        prop_assert!(is_topological(&g, &p.order));
        prop_assert!(p.arena_bytes >= p.lower_bound_bytes);
        prop_assert!(p.arena_bytes >= p.aligned_bound_bytes);
        // The plan is chosen by its arena, not its bound: a searched order whose views or
        // groups of aliases pack badly can lose to the same order without aliasing, whose
        // bound may then be above the stored order's (seed 8215669400578464405: bound 708
        // over the stored 691, arena 734). Such a plan must still pack smaller than the
        // stored order planned alone.
        if p.lower_bound_bytes > p.stored_order_bound_bytes {
            let mut kept = options.clone();
            kept.order.reorder = false;
            let q = lifetimes_checked_plan(&g, &kept, &scratch);
            prop_assert!(p.arena_bytes <= q.arena_bytes, "{} > {}", p.arena_bytes, q.arena_bytes);
        }
        // The same lifetimes: the plan's buffers (one per group of aliases).
        let same: Vec<Buffer> = p
            .buffers
            .iter()
            .map(|b| Buffer { owner: b.owner, size: b.size, first: b.first, last: b.last, pieces: b.pieces.clone() })
            .collect();
        prop_assert!(p.arena_bytes <= tflm_arena(&same, align));
        prop_assert!(p.lower_bound_bytes <= p.unaliased_bound_bytes);
        if spec.alias_percent == 0 {
            prop_assert!(p.aliases.is_empty());
            let unaliased = lifetimes::lifetimes(&g, &p.order, &scratch).buffers;
            prop_assert_eq!(same, unaliased);
        }
        let stored = lifetimes::lifetimes(&g, &schedule::stored_order(&g), &scratch);
        prop_assert!(p.arena_bytes <= tflm_arena(&stored.buffers, align));
        prop_assert_eq!(stored.lower_bound(), p.stored_order_bound_bytes);
        // The alias-aware order search only adds a candidate: never a larger arena.
        if spec.alias_percent > 0 {
            let mut views_only = options.clone();
            views_only.order.alias_aware = false;
            let q = lifetimes_checked_plan(&g, &views_only, &scratch);
            prop_assert!(p.arena_bytes <= q.arena_bytes, "{} > {}", p.arena_bytes, q.arena_bytes);
        }
    }
}

fn lifetimes_checked_plan(
    g: &Graph,
    options: &PlanOptions,
    kernels: &dyn Kernels,
) -> kiln_planner::Plan {
    kiln_planner::plan(g, kernels, options).expect("plans verify")
}

#[test]
fn tflm_model_of_the_test_matches_the_planner_rule() {
    // The independent TFLM rule above and the planner's agree on a few graphs.
    for seed in 0..20 {
        let g = synthetic::graph(&Spec::random(60, seed));
        let lt = lifetimes::lifetimes(&g, &schedule::stored_order(&g), &synthetic::declared(&g));
        let ours = kiln_planner::offsets::greedy(&lt.buffers, 16, kiln_planner::offsets::TFLM);
        assert_eq!(
            kiln_planner::offsets::arena_end(&lt.buffers, &ours),
            tflm_arena(&lt.buffers, 16)
        );
    }
}
