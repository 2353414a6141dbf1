//! The seed example from the planning notes, in the stored order A-B-C-D-E-F.

mod common;
use common::*;
use kiln_planner::PlanOptions;

const K: usize = 1024;

#[test]
fn seed_example_plans_at_its_lower_bound() {
    let g = seed_example(&["A", "B", "C", "D", "E", "F"]);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    assert_eq!(p.lower_bound_bytes, 136 * K);
    assert_eq!(p.arena_bytes, 136 * K);
    // Live bytes per step: A 48, B 128, C 136, D 104, E 80, F 32 (KiB).
    let live: Vec<usize> = p.live_bytes.iter().map(|b| b / K).collect();
    assert_eq!(live, vec![48, 128, 136, 104, 80, 32]);
    assert_eq!(p.peak_step(), Some(2));
}
