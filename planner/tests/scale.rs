//! Planning at scale: chains, fan-outs, independent branches and random DAGs of 10,000
//! operators plan, verify and meet their bounds where the optimum is known, and every search
//! stays within its work budget (counted in steps, never in time) and falls back to a valid
//! plan when it runs out.

use kiln_planner::alias::{self, OpMode};
use kiln_planner::ir::Graph;
use kiln_planner::lifetimes::{self, Buffer};
use kiln_planner::offsets::{self, PlacementOptions};
use kiln_planner::schedule::{self, OrderOptions};
use kiln_planner::synthetic::{self, Flavor};
use kiln_planner::{Plan, PlanOptions, verify};

/// `kiln_planner::plan` for the kernels Kiln declares.
fn plan(g: &Graph, o: &PlanOptions) -> kiln_planner::diag::Result<Plan> {
    kiln_planner::plan(g, &synthetic::declared(g), o)
}

const N: usize = 10_000;

fn buffers(p: &Plan) -> Vec<Buffer> {
    p.buffers
        .iter()
        .map(|b| Buffer {
            owner: b.owner,
            size: b.size,
            first: b.first,
            last: b.last,
            pieces: b.pieces.clone(),
        })
        .collect()
}

/// Plans `g`, checks what holds for every plan and returns it.
fn checked(g: &Graph, options: &PlanOptions) -> Plan {
    let p = plan(g, options).expect("plans and verifies");
    verify::verify(g, &p, &synthetic::declared(g)).expect("verifies");
    assert_eq!(p.order.len(), g.ops.len());
    assert!(p.arena_bytes >= p.aligned_bound_bytes);
    assert!(p.aligned_bound_bytes >= p.lower_bound_bytes);
    assert!(p.lower_bound_bytes <= p.unaliased_bound_bytes);
    assert!(p.lower_bound_bytes <= p.stored_order_bound_bytes);
    // Never worse than TFLM's rule on the same buffers.
    let b = buffers(&p);
    let tflm = offsets::arena_end(&b, &offsets::greedy(&b, p.alignment, offsets::TFLM));
    assert!(p.arena_bytes <= tflm, "{} > TFLM's {tflm}", p.arena_bytes);
    p
}

fn tensor_bytes(g: &Graph) -> usize {
    g.tensors[g.inputs[0].0].bytes()
}

#[test]
fn chain_of_in_place_relus_is_one_buffer() {
    let g = synthetic::chain(N, Flavor::InPlace, 0);
    let p = checked(&g, &PlanOptions::default());
    assert_eq!(p.buffers.len(), 1);
    assert_eq!(p.aliases.len(), N);
    assert!(p.modes.iter().all(|&m| m == OpMode::InPlace { input: 0 }));
    assert_eq!(p.lower_bound_bytes, tensor_bytes(&g));
    assert_eq!(p.arena_bytes, p.lower_bound_bytes);
    assert!(p.order_optimal && p.placement_optimal);
}

#[test]
fn plain_chain_meets_its_bound() {
    let g = synthetic::chain(N, Flavor::Plain, 1);
    let p = checked(&g, &PlanOptions::default());
    // Each step holds its input and its output: the bound is the largest such pair.
    let pair = g
        .ops
        .iter()
        .map(|op| g.tensors[op.inputs[0].unwrap().0].bytes() + g.tensors[op.outputs[0].0].bytes())
        .max()
        .unwrap();
    assert_eq!(p.lower_bound_bytes, pair);
    assert_eq!(p.arena_bytes, p.lower_bound_bytes);
    assert!(!p.reordered());
}

#[test]
fn fan_out_merged_by_adds_holds_three_tensors() {
    // One tensor read by 5,000 RELUs whose outputs a chain of ADDs sums up: the best order
    // runs each RELU just before its ADD, which overwrites the running sum; the input, the
    // sum and one RELU output are live at a time.
    let g = synthetic::fan_out(N, Flavor::InPlace, 0);
    let p = checked(&g, &PlanOptions::default());
    assert_eq!(p.lower_bound_bytes, 3 * tensor_bytes(&g));
    assert_eq!(p.arena_bytes, p.lower_bound_bytes);
    assert!(p.reordered());
    let in_place = p
        .modes
        .iter()
        .filter(|m| matches!(m, OpMode::InPlace { .. }));
    assert!(in_place.count() >= N / 2 - 1);
}

#[test]
fn wide_fan_out_search_stays_within_its_budget() {
    // 9,999 operators read one tensor, one reads them all: one segment of 9,999 operators
    // in any order, where the beam search would cost the segment's length squared. Every
    // order holds all their outputs at the segment's last step: the seeds meet that bound
    // and no search runs.
    let g = synthetic::fan_out(N, Flavor::Plain, 0);
    let declared = synthetic::declared(&g);
    let roots = alias::view_roots(&g, &declared, &alias::AliasOptions::default());
    let s = schedule::schedule_with_views(&g, &declared, &OrderOptions::default(), &roots);
    assert_eq!(s.work, 0);
    assert!(s.optimal);
    let p = checked(&g, &PlanOptions::default());
    // Every reader's output is live when the last operator runs: they stack exactly.
    assert_eq!(p.arena_bytes, p.lower_bound_bytes);
    // 5,000 RELUs read one tensor and a chain of ADDs sums their outputs: the order
    // matters, and the search stops at its budget.
    let g = synthetic::fan_out(N, Flavor::InPlace, 0);
    let order = OrderOptions {
        work_budget: 100_000,
        ..OrderOptions::default()
    };
    let declared = synthetic::declared(&g);
    let roots = alias::view_roots(&g, &declared, &alias::AliasOptions::default());
    let s = schedule::schedule_with_views(&g, &declared, &order, &roots);
    assert!(s.work <= order.work_budget, "{} steps", s.work);
    assert!(
        s.work > order.work_budget / 2,
        "the budget binds here: {}",
        s.work
    );
    assert!(s.peak_bytes <= s.stored_peak_bytes);
    checked(
        &g,
        &PlanOptions {
            order,
            ..PlanOptions::default()
        },
    );
}

#[test]
fn independent_branches_each_fit_one_buffer() {
    // Chains from their own input to their own output: each is one buffer live throughout.
    let g = synthetic::branches(N, Flavor::InPlace, 0);
    let p = checked(&g, &PlanOptions::default());
    assert_eq!(p.buffers.len(), g.outputs.len());
    assert_eq!(p.lower_bound_bytes, g.outputs.len() * tensor_bytes(&g));
    assert_eq!(p.arena_bytes, p.lower_bound_bytes);
    let g = synthetic::branches(N, Flavor::Plain, 0);
    checked(&g, &PlanOptions::default());
}

#[test]
fn random_dags_plan_with_every_kind_of_alias() {
    let g = synthetic::dag(N, Flavor::InPlace, 0);
    let p = checked(&g, &PlanOptions::default());
    for kind in ["view", "in place", "concatenation of slices"] {
        assert!(p.modes.iter().any(|m| m.name() == kind), "no {kind}");
    }
    assert!(p.lower_bound_bytes < p.unaliased_bound_bytes);
    let g = synthetic::dag(N, Flavor::Plain, 0);
    let p = checked(&g, &PlanOptions::default());
    assert!(p.aliases.is_empty());
    assert_eq!(
        p,
        plan(&g, &PlanOptions::default()).unwrap(),
        "deterministic"
    );
}

#[test]
fn searches_stay_within_their_budgets() {
    let g = synthetic::dag(N, Flavor::InPlace, 1);
    let o = PlanOptions::default();
    let declared = synthetic::declared(&g);
    let scratch: &dyn kiln_planner::Kernels = &declared;
    let roots = alias::view_roots(&g, scratch, &o.aliasing);
    let s = schedule::schedule_with_views(&g, scratch, &o.order, &roots);
    assert!(
        s.work > 0 && s.work <= o.order.work_budget,
        "{} steps",
        s.work
    );
    let al = alias::analyse(&g, &s.order, &o.aliasing, scratch);
    assert!(al.work() > 0 && al.work() <= o.aliasing.work_budget);
    let lt = lifetimes::lifetimes_aliased(&g, &s.order, scratch, &al);
    let pl = offsets::place(&lt.buffers, o.alignment, &o.placement);
    let budgets =
        o.placement.portfolio_work + o.placement.hill_climb_work + o.placement.exact_budget;
    assert!(pl.work > 0 && pl.work <= budgets, "{} visits", pl.work);
}

#[test]
fn exhausted_budgets_fall_back_to_valid_plans() {
    let g = synthetic::dag(N, Flavor::InPlace, 2);
    let mut o = PlanOptions::default();
    o.order.work_budget = 0;
    o.aliasing.work_budget = 0;
    o.placement = PlacementOptions {
        portfolio_work: 0,
        hill_climb_work: 0,
        exact_budget: 0,
        ..PlacementOptions::default()
    };
    let declared = synthetic::declared(&g);
    let roots = alias::view_roots(&g, &declared, &o.aliasing);
    let s = schedule::schedule_with_views(&g, &declared, &o.order, &roots);
    assert_eq!(s.work, 0);
    let p = checked(&g, &o);
    // No budget for safety checks: views only (they need none).
    assert!(p.modes.contains(&OpMode::View));
    assert!(
        p.modes
            .iter()
            .all(|&m| matches!(m, OpMode::Normal | OpMode::View))
    );
    // TFLM's rule alone placed it.
    assert_eq!(p.strategy, offsets::TFLM.name());
    let b = buffers(&p);
    let tflm = offsets::arena_end(&b, &offsets::greedy(&b, p.alignment, offsets::TFLM));
    assert_eq!(p.arena_bytes, tflm);
}

/// The text report stays linear in the steps: 10,000 ADDs whose sums are all graph outputs
/// have up to 10,000 buffers live at a step, and each step lists at most 24 of them, then
/// how many more (it listed every one before: 290 MB of text for such a model).
#[test]
fn text_report_of_ten_thousand_live_outputs_stays_small() {
    use kiln_planner::synthetic::{Addend, Sums};
    let g = synthetic::shared_adds(N, Addend::Constant, Sums::Outputs, 0);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    let text = kiln_planner::report::text(&g, &p, "shared_adds");
    let last = text.lines().last().unwrap();
    let step = p.order.len() - 1;
    let live = p
        .buffers
        .iter()
        .filter(|b| b.first <= step && step <= b.last)
        .count();
    assert!(live > N / 2, "{live} buffers live at the last step");
    assert!(last.contains(&format!("(+{} more)", live - 24)), "{last}");
    // Header, aliases (none here) and one line per step, each under a few hundred bytes.
    assert!(text.len() < 400 * N, "{} bytes", text.len());
}
