//! The operator modules of `kiln-build` declare to the planner exactly what
//! `kiln_planner::synthetic::declared` restates from the graph alone (the declaration the
//! planner's own tests and benchmarks use, for graphs Kiln cannot lower): on every public
//! and own model and every kernel case that Kiln compiles, operator by operator.

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
