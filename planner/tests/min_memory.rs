//! Minimum-memory plans: the order search, the offset search, their switches and the report.

mod common;
use common::*;
use kiln_planner::ir::{Graph, Op, OpId};
use kiln_planner::kernels::{Kernels, NoKernels, WithScratch};
use kiln_planner::lifetimes;
use kiln_planner::offsets::{self, PlacementOptions};
use kiln_planner::schedule::{self, OrderOptions};
use kiln_planner::synthetic::{self, Spec};
use kiln_planner::{PlanOptions, read_model, report, verify};

const K: usize = 1024;

/// The seed example stored as A-B-D-C-E-F: B (96 KiB) and D (64 KiB) are live together.
fn seed_abdcef() -> Graph {
    seed_example(&["A", "B", "D", "C", "E", "F"])
}

fn names(g: &Graph, order: &[OpId]) -> String {
    order
        .iter()
        .map(|&o| g.op(o).kind.name().to_string())
        .collect::<Vec<_>>()
        .join("-")
}

#[test]
fn seed_example_stored_abdcef_is_reordered_to_its_minimum() {
    let g = seed_abdcef();
    let p = plan(&g, &PlanOptions::default()).unwrap();
    assert_eq!(p.stored_order_bound_bytes, 192 * K);
    assert_eq!(p.lower_bound_bytes, 136 * K);
    assert_eq!(p.arena_bytes, 136 * K);
    assert!(p.order_optimal && p.placement_optimal);
    assert!(p.reordered());
    // B's branch runs to completion before D's starts (or D's before B's).
    let order = names(&g, &p.order);
    assert!(
        ["A-B-C-D-E-F", "A-D-E-B-C-F"].contains(&order.as_str()),
        "{order}"
    );
    verify::verify(&g, &p, &kernels(&g)).unwrap();
}

#[test]
fn stored_order_already_optimal_is_kept() {
    for stored in [
        ["A", "B", "C", "D", "E", "F"],
        ["A", "D", "E", "B", "C", "F"],
    ] {
        let g = seed_example(&stored);
        let p = plan(&g, &PlanOptions::default()).unwrap();
        assert!(!p.reordered(), "{stored:?}");
        assert_eq!(p.lower_bound_bytes, 136 * K);
        assert_eq!(p.stored_order_bound_bytes, 136 * K);
    }
}

#[test]
fn every_optimisation_can_be_switched_off() {
    let g = seed_abdcef();
    let off = plan(&g, &PlanOptions::unoptimised()).unwrap();
    assert!(!off.reordered());
    assert_eq!(off.lower_bound_bytes, 192 * K);
    assert_eq!(off.strategy, offsets::TFLM.name());
    assert_eq!(off.order_search, "reordering off");
    // TFLM's greedy rule on the stored order, exactly.
    let lt = lifetimes::lifetimes(&g, &schedule::stored_order(&g), &kernels(&g));
    let tflm = offsets::greedy(&lt.buffers, 16, offsets::TFLM);
    assert_eq!(off.arena_bytes, offsets::arena_end(&lt.buffers, &tflm));
    let offsets_of_plan: Vec<usize> = off.buffers.iter().map(|b| b.offset).collect();
    assert_eq!(offsets_of_plan, tflm);

    // Reordering without the exact search still finds the minimum here (seeds and beam).
    let mut o = PlanOptions::default();
    o.order.exact = false;
    let p = plan(&g, &o).unwrap();
    assert_eq!(p.lower_bound_bytes, 136 * K);
    // Seeds only (no beam, no exact search): never worse than the stored order.
    o.order.beam_width = 0;
    let p = plan(&g, &o).unwrap();
    assert!(p.lower_bound_bytes <= 192 * K);
    // Exact search only.
    let o = PlanOptions {
        order: OrderOptions {
            beam_width: 0,
            ..OrderOptions::default()
        },
        ..PlanOptions::default()
    };
    let p = plan(&g, &o).unwrap();
    assert_eq!(p.lower_bound_bytes, 136 * K);
    assert!(p.order_optimal);
    // Reordering off, offsets on.
    let mut o = PlanOptions::default();
    o.order.reorder = false;
    let p = plan(&g, &o).unwrap();
    assert!(!p.reordered());
    assert_eq!(p.lower_bound_bytes, 192 * K);
    assert_eq!(p.arena_bytes, 192 * K);
}

#[test]
fn placement_switches_are_honoured() {
    // A graph where TFLM's rule misses the bound (found by search over synthetic graphs).
    let (g, tflm_arena) = (0..200u64)
        .find_map(|seed| {
            let g = synthetic::graph(&Spec::random(24, seed));
            let p = plan(&g, &PlanOptions::default()).unwrap();
            let lt = lifetimes::lifetimes(&g, &p.order, &kernels(&g));
            let t = offsets::arena_end(
                &lt.buffers,
                &offsets::greedy(&lt.buffers, 16, offsets::TFLM),
            );
            (t > p.arena_bytes).then_some((g, t))
        })
        .expect("some graph where the portfolio or the search beats TFLM's rule");
    let full = plan(&g, &PlanOptions::default()).unwrap();
    let mut o = PlanOptions {
        placement: PlacementOptions::tflm(),
        ..PlanOptions::default()
    };
    let tflm_only = plan(&g, &o).unwrap();
    assert_eq!(tflm_only.order, full.order);
    assert_eq!(tflm_only.arena_bytes, tflm_arena);
    assert_eq!(tflm_only.strategy, offsets::TFLM.name());
    assert!(full.arena_bytes < tflm_only.arena_bytes);
    // Each stage alone is never worse than TFLM's rule.
    for placement in [
        PlacementOptions {
            portfolio: true,
            ..PlacementOptions::tflm()
        },
        PlacementOptions {
            hill_climb_iterations: 500,
            hill_climb_work: usize::MAX,
            ..PlacementOptions::tflm()
        },
        PlacementOptions {
            exact_budget: 1_000_000,
            ..PlacementOptions::tflm()
        },
    ] {
        o.placement = placement;
        let p = plan(&g, &o).unwrap();
        assert!(p.arena_bytes <= tflm_arena, "{placement:?}");
    }
}

/// Scratch contracts for tests: none, or some operators with a few hundred bytes.
fn scratch_of(kind: u8) -> WithScratch<'static, impl Fn(&Graph, &Op) -> usize> {
    WithScratch(
        move |_: &Graph, op: &Op| match kind {
            0 => 0,
            _ => {
                let i = op.id.0 as u64 * 0x9E37_79B9 + kind as u64;
                if i.is_multiple_of(3) {
                    (i % 700) as usize
                } else {
                    0
                }
            }
        },
        &NoKernels,
    )
}

fn test_graphs() -> Vec<Graph> {
    let mut v = Vec::new();
    for seed in 0..12u64 {
        v.push(synthetic::graph(&Spec::random(
            1 + (seed as usize * 7) % 40,
            seed,
        )));
        v.push(synthetic::graph(&Spec::nn_like(
            5 + seed as usize * 5,
            seed,
        )));
        v.push(synthetic::cells(10 + seed as usize * 9, seed));
    }
    v.push(seed_abdcef());
    v
}

#[test]
fn search_value_equals_the_lower_bound_of_its_order() {
    for (i, g) in test_graphs().iter().enumerate() {
        for kind in [0u8, 1, 2] {
            let scratch = scratch_of(kind);
            let s = schedule::schedule(g, &scratch, &OrderOptions::default());
            let lt = lifetimes::lifetimes(g, &s.order, &scratch);
            assert_eq!(s.peak_bytes, lt.lower_bound(), "graph {i} scratch {kind}");
            let stored = lifetimes::lifetimes(g, &schedule::stored_order(g), &scratch);
            assert_eq!(s.stored_peak_bytes, stored.lower_bound(), "graph {i}");
            assert!(s.peak_bytes <= s.stored_peak_bytes);
            assert!(s.min_peak_bound_bytes <= s.peak_bytes);
            // The search's live bytes equal the lifetimes' at every step, for its order and
            // for the stored one.
            assert_eq!(
                schedule::live_bytes(g, &s.order, &scratch),
                lt.live_bytes(),
                "graph {i}"
            );
            assert_eq!(
                schedule::live_bytes(g, &schedule::stored_order(g), &scratch),
                stored.live_bytes()
            );
        }
    }
}

/// Every topological order of a small graph.
fn all_orders(g: &Graph) -> Vec<Vec<OpId>> {
    let n = g.ops.len();
    let producer: std::collections::HashMap<usize, usize> = g
        .ops
        .iter()
        .flat_map(|op| op.outputs.iter().map(move |t| (t.0, op.id.0)))
        .collect();
    let preds: Vec<Vec<usize>> = g
        .ops
        .iter()
        .map(|op| {
            op.present_inputs()
                .filter_map(|t| producer.get(&t.0).copied())
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    let mut done = vec![false; n];
    let mut cur = Vec::new();
    fn rec(
        preds: &[Vec<usize>],
        done: &mut Vec<bool>,
        cur: &mut Vec<OpId>,
        out: &mut Vec<Vec<OpId>>,
    ) {
        if cur.len() == done.len() {
            out.push(cur.clone());
            return;
        }
        for o in 0..done.len() {
            if !done[o] && preds[o].iter().all(|&p| done[p]) {
                done[o] = true;
                cur.push(OpId(o));
                rec(preds, done, cur, out);
                cur.pop();
                done[o] = false;
            }
        }
    }
    rec(&preds, &mut done, &mut cur, &mut out);
    out
}

#[test]
fn exact_search_finds_the_minimum_over_all_orders() {
    let mut checked = 0;
    for seed in 0..200u64 {
        let n = 1 + (seed as usize % 10);
        let mut spec = Spec::random(n, seed);
        spec.window = (seed % 3) as usize * 3;
        spec.multi_input_percent = 25;
        spec.variable_percent = 0; // all_orders ignores the order of variable users
        let g = synthetic::graph(&spec);
        let orders = all_orders(&g);
        for kind in [0u8, 1] {
            let scratch = scratch_of(kind);
            let best = orders
                .iter()
                .map(|o| lifetimes::lifetimes(&g, o, &scratch).lower_bound())
                .min()
                .unwrap();
            let s = schedule::schedule(&g, &scratch, &OrderOptions::default());
            assert!(s.optimal, "seed {seed}");
            assert_eq!(s.peak_bytes, best, "seed {seed}: {} orders", orders.len());
            assert_eq!(s.min_peak_bound_bytes, best);
            // The exact search alone (no beam) gets there too.
            let exact_only = OrderOptions {
                beam_width: 0,
                ..OrderOptions::default()
            };
            let s = schedule::schedule(&g, &scratch, &exact_only);
            assert_eq!(s.peak_bytes, best, "seed {seed}, exact only");
            checked += orders.len();
        }
    }
    assert!(checked > 10_000, "{checked} orders checked");
}

#[test]
fn over_budget_searches_stay_valid_and_never_worse() {
    for g in test_graphs() {
        let stored = plan(&g, &PlanOptions::unoptimised()).unwrap();
        for (exact_budget, beam_width) in [(0, 0), (0, 2), (50, 0), (50, 3)] {
            let o = PlanOptions {
                order: OrderOptions {
                    exact_budget,
                    beam_width,
                    ..OrderOptions::default()
                },
                ..PlanOptions::default()
            };
            let p = plan(&g, &o).unwrap();
            assert!(p.lower_bound_bytes <= stored.lower_bound_bytes);
            assert!(p.arena_bytes <= stored.arena_bytes);
        }
    }
}

#[test]
fn plans_are_deterministic() {
    for g in test_graphs().iter().chain(&[synthetic::cells(2000, 7)]) {
        let a = plan(g, &PlanOptions::default()).unwrap();
        let b = plan(&g.clone(), &PlanOptions::default()).unwrap();
        assert_eq!(a, b);
        let ja = serde_json::to_string(&report::json(g, &a)).unwrap();
        let jb = serde_json::to_string(&report::json(g, &b)).unwrap();
        assert_eq!(ja, jb);
    }
}

#[test]
fn large_synthetic_graphs_plan_and_verify() {
    for g in [
        synthetic::cells(2000, 1),
        synthetic::graph(&Spec::nn_like(2000, 1)),
        synthetic::graph(&Spec::random(500, 1)),
    ] {
        let p = plan(&g, &PlanOptions::default()).unwrap();
        assert!(p.lower_bound_bytes <= p.stored_order_bound_bytes);
        assert!(p.arena_bytes >= p.aligned_bound_bytes);
    }
}

#[test]
fn corpus_models_reach_the_best_order_bound() {
    let models: Vec<_> = shared_models().into_iter().chain(own_models()).collect();
    let table = tflm_table();
    for path in &models {
        let name = stem(path);
        let g = read_model(&std::fs::read(path).unwrap()).unwrap();
        // With byte alignment the arena is the bound exactly.
        let p = plan(&g, &PlanOptions::with_alignment(1)).unwrap();
        assert_eq!(p.arena_bytes, p.lower_bound_bytes, "{name}");
        assert!(p.order_optimal && p.placement_optimal, "{name}");
        // With TFLM's alignment, any gap is alignment that no placement avoids.
        let p = plan(&g, &PlanOptions::default()).unwrap();
        assert!(p.placement_optimal, "{name}");
        assert!(p.order_optimal, "{name}");
        if let Some(row) = table.get(&name) {
            // TFLM's head is its reference kernels' plan, which has no im2col scratch; with
            // the same declaration (the fast int8 kernels' im2col scratch left out) Kiln's
            // arena is at most TFLM's. The fast kernels' scratch (as CMSIS-NN's, which TFLM
            // adds to its arena too) may add at most its own size.
            let (reference, largest_scratch) = common::reference_kernels(&g);
            let r = kiln_planner::plan(&g, &reference, &PlanOptions::default()).unwrap();
            assert!(r.arena_bytes <= row.head, "{name}");
            assert!(p.arena_bytes <= r.arena_bytes + largest_scratch, "{name}");
        }
    }
}

#[test]
fn report_shows_bounds_gap_and_orders() {
    let g = seed_abdcef();
    let p = plan(&g, &PlanOptions::default()).unwrap();
    let text = report::text(&g, &p, "seed");
    for needle in [
        "arena bytes      139264",
        "lower bound      139264 (gap 0 bytes, 0.00 %; placement optimal)",
        "stored bound     196608 (lower bound of the stored order without aliasing, 57344 bytes above)",
        "aliases          none (every tensor has its own buffer)",
        "order            reordered (exact search; no order has a smaller bound)",
        "chosen order     ",
        "stored order     0 1 2 3 4 5",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let json = serde_json::to_value(report::json(&g, &p)).unwrap();
    assert_eq!(json["stored_order_bound_bytes"], 192 * K);
    assert_eq!(json["lower_bound_bytes"], 136 * K);
    assert_eq!(json["gap_bytes"], 0);
    assert_eq!(json["reordered"], true);
    assert_eq!(json["order_optimal"], true);
    assert_eq!(json["placement_optimal"], true);
    assert_eq!(json["stored_order"], serde_json::json!([0, 1, 2, 3, 4, 5]));
    let svg = report::svg(&g, &p, "seed");
    assert!(svg.contains("stored-order bound") && svg.contains("reordered"));
    // Not reordered: no order lines.
    let p = plan(&g, &PlanOptions::unoptimised()).unwrap();
    let text = report::text(&g, &p, "seed");
    assert!(
        text.contains("order            stored order kept (reordering off; not proved optimal)"),
        "{text}"
    );
    assert!(!text.contains("chosen order"));
}

/// The seed example stored as A-B-D-C-E-F, with B, D and C (in that order) updating one
/// variable tensor: their order is fixed, so B and D are live together.
fn seed_with_shared_state() -> Graph {
    use kiln_planner::ir::{DType, Quantization, Tensor, TensorId, TensorKind};
    let mut g = seed_abdcef();
    let v = TensorId(g.tensors.len());
    g.tensors.push(Tensor {
        id: v,
        name: "state".into(),
        shape: vec![4],
        dtype: DType::I8,
        quant: Quantization::None,
        kind: TensorKind::Variable,
    });
    for name in ["B", "D", "C"] {
        let op = g.ops.iter_mut().find(|o| o.kind.name() == name).unwrap();
        op.inputs.push(Some(v));
    }
    kiln_planner::validate::validate(&g).unwrap();
    g
}

#[test]
fn operators_sharing_a_variable_keep_their_stored_order() {
    let g = seed_with_shared_state();
    let p = plan(&g, &PlanOptions::default()).unwrap();
    assert_eq!(p.lower_bound_bytes, 192 * K);
    let order = names(&g, &p.order);
    let at = |n: &str| order.find(n).unwrap();
    assert!(at("B") < at("D") && at("D") < at("C"), "{order}");
    assert!(p.order_optimal);
    // The verifier rejects an order that swaps two users of the variable.
    let mut bad = p.clone();
    let (b, d) = (
        bad.order
            .iter()
            .position(|&o| g.op(o).kind.name() == "B")
            .unwrap(),
        bad.order
            .iter()
            .position(|&o| g.op(o).kind.name() == "D")
            .unwrap(),
    );
    bad.order.swap(b, d);
    let lt = lifetimes::lifetimes(&g, &bad.order, &kernels(&g));
    bad.buffers.iter_mut().zip(&lt.buffers).for_each(|(pb, b)| {
        pb.first = b.first;
        pb.last = b.last;
    });
    let e = verify::verify(&g, &bad, &kernels(&g)).unwrap_err();
    assert!(e.to_string().contains("variable tensor"), "{e}");
}

#[test]
fn verifier_checks_the_stored_order_and_aligned_bounds() {
    let g = seed_abdcef();
    let p = plan(&g, &PlanOptions::default()).unwrap();
    let declared = kernels(&g);
    let scratch: &dyn Kernels = &declared;
    let mut bad = p.clone();
    bad.stored_order_bound_bytes = bad.lower_bound_bytes;
    let e = verify::verify(&g, &bad, scratch).unwrap_err();
    assert!(e.to_string().contains("stored order"), "{e}");
    let mut bad = p.clone();
    bad.aligned_bound_bytes += 16;
    let e = verify::verify(&g, &bad, scratch).unwrap_err();
    assert!(e.to_string().contains("aligned bound"), "{e}");
}
