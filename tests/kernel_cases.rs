//! Kernel golden cases: thousands of single-operator models with TFLM's outputs
//! (`tests/kernel_cases/*.kcase`, made by `tools/gen_kernel_cases.py`).
//!
//! Each case goes through the real pipeline (reader, planner, lowering with the kernels'
//! `prepare`) and the host executor runs the lowered kernel calls. int8/int16 outputs must
//! be byte-identical; float32 outputs must be bit-identical too (the kernels perform TFLM's
//! reference float operations in the same order).
//!
//! A KCASE2 case (a stateful streaming operator) is a sequence of invokes after one reset,
//! the state carried over: every output of every invoke must match.
//!
//! Every bundle whose operator and types Kiln compiles must pass completely. A bundle is
//! pending (listed, not silently skipped) only if the code generator rejects every one of its
//! cases as unsupported; a bundle it accepts only in part fails.

mod common;

use kiln_build::lower::lower;
use kiln_planner::{ErrorKind, PlanOptions, plan, read_model};

use common::Case;

enum Outcome {
    Pass,
    Unsupported(String),
    Fail(String),
}

/// Runs one case.
fn run(case: &Case) -> Outcome {
    match run_case(case) {
        Ok(()) => Outcome::Pass,
        Err(e) => e,
    }
}

fn run_case(case: &Case) -> Result<(), Outcome> {
    let fail = |s: String| Outcome::Fail(s);
    let graph = read_model(&case.model).map_err(|d| fail(format!("read: {d}")))?;
    let p = plan(
        &graph,
        &kiln_build::lower::kernels(&graph),
        &PlanOptions::default(),
    )
    .map_err(|d| fail(format!("plan: {d}")))?;
    let steps = lower(&graph, &p).map_err(|d| {
        if d.kind == ErrorKind::Unsupported {
            Outcome::Unsupported(d.to_string())
        } else {
            fail(format!("lower: {d}"))
        }
    })?;
    // Every invoke of the case (one, or a sequence with the state carried over).
    let invokes = case.invokes();
    let inputs: Vec<Vec<&[u8]>> = invokes
        .iter()
        .map(|(xs, _)| xs.iter().map(Vec::as_slice).collect())
        .collect();
    let runs = kiln_build::exec::run_sequence(&graph, &steps, &inputs);
    for (k, (tensors, (_, wants))) in runs.iter().zip(&invokes).enumerate() {
        if wants.len() != graph.outputs.len() {
            return Err(fail(format!(
                "invoke {k}: {} golden outputs, the model has {}",
                wants.len(),
                graph.outputs.len()
            )));
        }
        for (i, (&t, want)) in graph.outputs.iter().zip(wants.iter()).enumerate() {
            let got = tensors[t.0].bytes();
            if got != want.as_slice() {
                let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
                return Err(fail(format!(
                    "invoke {k}: output {i} differs at byte {at} of {} (got {:#04x}, want {:#04x})",
                    want.len(),
                    got.get(at).copied().unwrap_or(0),
                    want.get(at).copied().unwrap_or(0)
                )));
            }
        }
    }
    Ok(())
}

#[test]
fn every_supported_operator_matches_tflm_on_every_case() {
    let mut failures = Vec::new();
    let mut checked = 0usize;
    let mut pending = Vec::new();
    let mut in_place = 0usize;
    let mut split_slices = 0usize;
    for (entry, cases) in common::kernel_case_bundles() {
        let file = entry["file"].as_str().unwrap();
        assert_eq!(
            cases.len() as u64,
            entry["cases"].as_u64().unwrap(),
            "{file}"
        );
        let outcomes: Vec<Outcome> = cases.iter().map(run).collect();
        let unsupported = outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Unsupported(_)))
            .count();
        if unsupported == cases.len() {
            pending.push(file.to_string());
            continue;
        }
        let mut bad = 0;
        for (i, o) in outcomes.iter().enumerate() {
            let e = match o {
                Outcome::Pass => continue,
                Outcome::Unsupported(e) | Outcome::Fail(e) => e,
            };
            if bad < 3 {
                failures.push(format!("{file} case {i}: {e}"));
            }
            bad += 1;
        }
        if bad > 0 {
            failures.push(format!("{file}: {bad} of {} cases fail", cases.len()));
        }
        checked += cases.len();
        // The emitter has a call for the plan of every case shape here: in particular an
        // in-place form for every operator the planner lets overwrite its input (a single
        // operator's input dies at it).
        let options = kiln_build::Options {
            plan: PlanOptions::default(),
            ..kiln_build::Options::default()
        };
        for (i, case) in cases.iter().enumerate().take(20) {
            match kiln_build::compile_tokens(&case.model, &options) {
                Ok(c) => {
                    split_slices += usize::from(
                        c.plan
                            .modes
                            .contains(&kiln_planner::alias::OpMode::SplitSlices),
                    );
                    in_place += usize::from(
                        c.plan
                            .modes
                            .iter()
                            .any(|m| matches!(m, kiln_planner::alias::OpMode::InPlace { .. })),
                    );
                }
                Err(d) if d.kind == ErrorKind::Unsupported => {}
                Err(d) => failures.push(format!("{file} case {i}: emit: {d}")),
            }
        }
    }
    eprintln!(
        "{checked} cases checked, {in_place} emitted in place, {split_slices} split into slices; \
         bundles not compiled yet: {pending:?}"
    );
    let whole = common::kernel_case_filter().is_none();
    assert!(
        in_place >= 100 || !whole,
        "too few in-place operators emitted: {in_place}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 200 || !whole, "too few cases checked");
    // SPLIT, SPLIT_V and UNPACK on an outer axis and contiguous SLICEs need no code: their
    // outputs are slices of their input.
    assert!(
        split_slices >= 10 || !whole,
        "too few splits planned as slices: {split_slices}"
    );
}
