//! Every model in `../shared/models` and `tests/models` reads, plans and verifies, and the
//! plan is never larger than TFLM's planned region on the same model.

mod common;
use common::*;
use kiln_planner::{PlanOptions, read_model, verify};

#[test]
fn every_model_reads_plans_and_verifies() {
    let models: Vec<_> = shared_models().into_iter().chain(own_models()).collect();
    for path in &models {
        let bytes = std::fs::read(path).unwrap();
        let graph = read_model(&bytes).unwrap_or_else(|d| panic!("{}: {d}", path.display()));
        for alignment in [1, 4, 16, 64] {
            let p = plan(&graph, &PlanOptions::with_alignment(alignment))
                .unwrap_or_else(|d| panic!("{} (align {alignment}): {d}", path.display()));
            // `plan` verifies already; check again from the outside.
            verify::verify(&graph, &p, &kernels(&graph)).unwrap();
            assert!(p.arena_bytes >= p.lower_bound_bytes);
        }
    }
}

#[test]
fn public_models_match_the_tflm_table_and_never_exceed_tflm_head() {
    let table = tflm_table();
    assert_eq!(
        table.len(),
        14,
        "the README table has a row per public model"
    );
    for path in shared_models() {
        let name = stem(&path);
        let row = &table[&name];
        let graph = read_model(&std::fs::read(&path).unwrap()).unwrap();
        // The table is TFLM's reference kernels': compared with the same declaration (the
        // fast int8 kernels' im2col scratch left out, see `reference_kernels`).
        let (reference, largest_scratch) = reference_kernels(&graph);
        let p = kiln_planner::plan(&graph, &reference, &PlanOptions::default()).unwrap();
        assert_eq!(graph.ops.len(), row.ops, "{name}: ops");
        // The model's tensors (not the kernel state the reader adds, which TFLM keeps apart).
        let tensors = graph
            .tensors
            .iter()
            .filter(|t| !graph.is_kernel_state(t.id))
            .count();
        assert_eq!(tensors, row.tensors, "{name}: tensors");
        assert_eq!(graph.weights_bytes(), row.weights, "{name}: weight bytes");
        assert_eq!(
            p.unaliased_bound_bytes, row.lb_stored,
            "{name}: lower bound"
        );
        assert!(
            p.lower_bound_bytes <= p.unaliased_bound_bytes,
            "{name}: aliasing raised the bound"
        );
        assert!(
            p.arena_bytes <= row.head,
            "{name}: Kiln arena {} > TFLM head {}",
            p.arena_bytes,
            row.head
        );
        // With the fast kernels' scratch, at most that much more.
        let fast = plan(&graph, &PlanOptions::default()).unwrap();
        assert!(
            fast.arena_bytes <= p.arena_bytes + largest_scratch,
            "{name}: {} > {} + {largest_scratch}",
            fast.arena_bytes,
            p.arena_bytes
        );
    }
}
