//! The operator modules of `kiln-build` declare to the planner exactly what
//! `kiln_planner::synthetic::declared` restates from the graph alone (the declaration the
//! planner's own tests and benchmarks use, for graphs Kiln cannot lower): on every public
//! and own model and every kernel case that Kiln compiles, and on tilings of the public
//! models, operator by operator.

mod common;

use kiln_build::lower::{declared, lower_all};
use kiln_planner::Graph;

fn compare(what: &str, graph: &Graph, failures: &mut Vec<String>) -> bool {
    let Ok(steps) = lower_all(graph) else {
        return false;
    };
    let ours = declared(&steps);
    let restated = kiln_planner::synthetic::declared(graph);
    for (i, (a, b)) in ours.ops.iter().zip(&restated.ops).enumerate() {
        if a != b {
            failures.push(format!(
                "{what} op {i} ({}): the module declares {a:?}, the restatement {b:?}",
                graph.ops[i].kind.name()
            ));
        }
    }
    true
}

#[test]
fn operator_modules_declare_what_the_planner_tests_assume() {
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut dirs = vec![
        common::shared_models(),
        common::repo_root().join("tests/models"),
    ];
    dirs.push(common::shared_models().join("all_outputs"));
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|x| x != "tflite") {
                continue;
            }
            let g = kiln_planner::read_model(&std::fs::read(&path).unwrap()).unwrap();
            compared += usize::from(compare(&path.display().to_string(), &g, &mut failures));
        }
    }
    // The public models tiled, each region with its fewest and its most strips, also in 3
    // patches of columns each: the operators of a strip or patch (a row window, its own
    // padding rows and columns) are declared alike.
    let (mut tiled, mut patched) = (0, 0);
    for entry in std::fs::read_dir(common::shared_models()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "tflite") {
            continue;
        }
        let g = kiln_planner::read_model(&std::fs::read(&path).unwrap()).unwrap();
        let candidates = kiln_planner::tiling::candidates(&g);
        let mut ends: Vec<_> = Vec::new();
        for (i, t) in candidates.iter().enumerate() {
            let last_of_region = candidates
                .get(i + 1)
                .is_none_or(|n| (n.start, n.end) != (t.start, t.end));
            let first_of_region =
                i == 0 || (candidates[i - 1].start, candidates[i - 1].end) != (t.start, t.end);
            if first_of_region || last_of_region {
                ends.push(*t);
            }
        }
        let patches = ends
            .iter()
            .map(|&t| kiln_planner::tiling::Tiling { columns: 3, ..t });
        for t in ends.clone().into_iter().chain(patches) {
            let Ok(tiled_graph) = kiln_planner::tiling::tile(&g, t) else {
                continue;
            };
            let what = format!("{} tiled {t:?}", path.display());
            let compared = usize::from(compare(&what, &tiled_graph.graph, &mut failures));
            tiled += compared;
            if t.columns > 1 {
                patched += compared;
            }
        }
    }
    assert!(tiled > 20, "only {tiled} tilings compared");
    assert!(patched > 5, "only {patched} tilings in patches compared");
    for (entry, cases) in common::kernel_case_bundles() {
        for (i, case) in cases.iter().enumerate() {
            let g = kiln_planner::read_model(&case.model).unwrap();
            let what = format!("{} case {i}", entry["file"].as_str().unwrap());
            compared += usize::from(compare(&what, &g, &mut failures));
        }
    }
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(20)].join("\n")
    );
    assert!(compared > 10_000, "only {compared} models compared");
}
