//! Everything Kiln does with a model, from any byte string: the one function behind the
//! `compile` fuzz target (`fuzz/fuzz_targets/compile.rs`) and the regression test
//! (`tests/fuzz_regressions.rs`, which includes this file by `#[path]`).
//!
//! [`compile_all`] reads the bytes, then for three sets of plan options (the default,
//! `PlanOptions::unoptimised()` with an alignment picked from the input's length, and, for
//! inputs whose length is a multiple of 3, a memory map of two regions, the first a third of
//! the default plan's arena) plans,
//! renders the three reports, lowers and emits, i.e. `kiln_build::compile_tokens` and what
//! the build.rs front end writes. The first plan's code is also formatted (parsed by syn,
//! printed by prettyplease) and emitted again under budgets: formatting was most of the
//! time per input, and the other plans emit the same code with other numbers. When the model compiles and is small enough to
//! run quickly, the host executor runs the lowered steps of both plans on deterministic
//! inputs (zeros, a fixed pseudo-random pattern, the model's own bytes): a panic there is a
//! panic the generated `invoke()` would hit too. All plans must give the same outputs.
//!
//! Errors are fine (bad input gives a `Diagnostic`); a panic, a hang or an unbounded
//! allocation is a bug.

use kiln_build::emit::emit;
use kiln_build::lower::{Step, lower, lower_all};
use kiln_build::{Budget, Options, PlanOptions};
use kiln_planner::ir::{Graph, OpKind};
use kiln_planner::{Diagnostic, ErrorKind, Plan, plan, read_model, report};

/// The executor runs a model only if its tensors take at most this many bytes in all
/// (every tensor has its own host buffer there; a model may declare tensors of 4 GiB).
pub const EXEC_MAX_BYTES: usize = 64 << 20;

/// The executor runs a model only if [`work`] estimates at most this many kernel steps
/// (multiply-accumulates and element visits) per invoke, so that one input runs in well
/// under a second. The public models need up to about 2.1e7 by that estimate (resnet8).
pub const EXEC_MAX_WORK: u64 = 100_000_000;

/// How far one input got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The reader accepted it.
    pub read: bool,
    /// Plans made (of three).
    pub planned: u8,
    /// Plans emitted and formatted (of three).
    pub compiled: u8,
    /// Plans whose steps the executor ran (of three; 0 when the model is too large to run).
    pub executed: u8,
}

/// Reads, plans, reports, lowers, emits, formats and, where it compiles, runs `data`.
/// Panics only on a Kiln bug.
pub fn compile_all(data: &[u8]) -> Outcome {
    let mut outcome = Outcome::default();
    let Ok(graph) = read_model(data) else {
        return outcome;
    };
    outcome.read = true;
    if has_control(&graph) {
        return compile_control(data, outcome);
    }
    let unoptimised = PlanOptions {
        alignment: 1 << (data.len() % 7),
        ..PlanOptions::unoptimised()
    };
    let mut results = Vec::new();
    // What the operators that lower declare (the others declare nothing).
    let kernels = kiln_build::lower::kernels(&graph);
    let mut all = vec![PlanOptions::default(), unoptimised];
    let mut k = 0;
    while let Some(options) = all.get(k).cloned() {
        k += 1;
        let p = match plan(&graph, &kernels, &options) {
            Ok(p) => p,
            Err(d) => {
                not_a_bug(&d, "plan");
                continue;
            }
        };
        if k == 1 && data.len().is_multiple_of(3) {
            // A memory map: a fast region of a third of this arena, a slow one of all of it
            // (for a third of the inputs, by length, to keep the bounded run's time).
            let region = |s: &str, n| kiln_planner::regions::Region::new(s, n);
            all.push(PlanOptions {
                regions: vec![
                    region(".fast", (p.arena_bytes / 3).max(16)),
                    region(".slow", p.arena_bytes + 64),
                ],
                ..PlanOptions::default()
            });
        }
        outcome.planned += 1;
        reports(&graph, &p);
        let steps = lower(&graph, &p);
        if let Err(d) = &steps {
            not_a_bug(d, "lower");
        }
        if emit_and_format(&graph, &p, options, data.len(), k == 1) {
            outcome.compiled += 1;
            let steps = steps.expect("a model that emits lowers");
            if runnable(&graph) {
                results.push(execute(&graph, &steps, data));
                outcome.executed += 1;
            }
        }
    }
    if let [a, rest @ ..] = &results[..] {
        assert!(
            rest.iter().all(|b| a == b),
            "the default, the unoptimised and the memory map's plan give different outputs"
        );
    }
    outcome
}

/// Whether the model has control flow or resource variables: their steps are written by the
/// emitter over the subgraphs `compile_tokens` plans (the caller's scratch holds them), so
/// they go through it whole, and the host executor does not run them.
fn has_control(graph: &Graph) -> bool {
    graph.ops.iter().any(|o| {
        matches!(
            o.kind,
            OpKind::If { .. }
                | OpKind::While { .. }
                | OpKind::CallOnce { .. }
                | OpKind::VarHandle { .. }
                | OpKind::ReadVariable { .. }
                | OpKind::AssignVariable { .. }
        )
    })
}

/// [`compile_all`] for a model with control flow: `compile_tokens` with the default and the
/// unoptimised plan options, with and without budgets, and formatting.
fn compile_control(data: &[u8], mut outcome: Outcome) -> Outcome {
    let unoptimised = PlanOptions {
        alignment: 1 << (data.len() % 7),
        ..PlanOptions::unoptimised()
    };
    for plan in [PlanOptions::default(), unoptimised] {
        let free = Options {
            plan,
            model_name: Some("fuzz.tflite".into()),
            ..Options::default()
        };
        match kiln_build::compile_tokens(data, &free) {
            Ok(c) => {
                outcome.planned += 1;
                outcome.compiled += 1;
                let file = kiln_build::format_file(&c.tokens, "fuzz.tflite");
                assert!(file.starts_with("// @generated"));
                let (text, json) = (c.report_text("fuzz.tflite"), c.report_json());
                assert!(!text.is_empty() && !json.is_empty());
            }
            Err(d) => not_a_bug(&d, "compile"),
        }
        let budgeted = Options {
            ram_budget: Some(Budget::Expr("64 * 1024".parse().expect("an expression"))),
            flash_budget: Some(Budget::Bytes(data.len() / 2)),
            ..free
        };
        if let Err(d) = kiln_build::compile_tokens(data, &budgeted) {
            not_a_bug(&d, "compile with budgets");
        }
    }
    outcome
}

/// A diagnostic must be the model's fault: [`ErrorKind::InvalidPlan`] is a Kiln bug.
fn not_a_bug(d: &Diagnostic, stage: &str) {
    assert_ne!(d.kind, ErrorKind::InvalidPlan, "{stage}: {d}");
}

/// The text, JSON and SVG plan reports.
fn reports(graph: &Graph, p: &Plan) {
    let text = report::text(graph, p, "fuzz.tflite");
    let svg = report::svg(graph, p, "fuzz.tflite");
    let json = serde_json::to_string(&report::json(graph, p)).expect("the report serialises");
    assert!(!text.is_empty() && !svg.is_empty() && !json.is_empty());
}

/// Emits the plan with no budgets; for the `first` plan, formats that and emits it again
/// with budgets (a constant expression for RAM, a number derived from the input for flash).
/// Whether it compiled.
fn emit_and_format(graph: &Graph, p: &Plan, plan: PlanOptions, len: usize, first: bool) -> bool {
    let free = Options {
        plan: plan.clone(),
        model_name: Some("fuzz.tflite".into()),
        ..Options::default()
    };
    let lowered = match lower_all(graph) {
        Ok(steps) => steps,
        Err(d) => {
            not_a_bug(&d, "lower");
            return false;
        }
    };
    let tokens = match emit(graph, p, lowered, &free) {
        Ok(tokens) => tokens,
        Err(d) => {
            not_a_bug(&d, "emit");
            return false;
        }
    };
    if !first {
        return true;
    }
    let file = kiln_build::format_file(&tokens, "fuzz.tflite");
    assert!(file.starts_with("// @generated"));
    let budgeted = Options {
        ram_budget: Some(Budget::Expr("64 * 1024".parse().expect("an expression"))),
        flash_budget: Some(Budget::Bytes(len / 2)),
        ..free
    };
    let lowered = lower_all(graph).expect("it lowered above");
    if let Err(d) = emit(graph, p, lowered, &budgeted) {
        not_a_bug(&d, "emit with budgets");
    }
    true
}

/// Whether the model is small enough for the executor (see [`EXEC_MAX_BYTES`] and
/// [`EXEC_MAX_WORK`]).
fn runnable(graph: &Graph) -> bool {
    let bytes = graph
        .tensors
        .iter()
        .try_fold(0usize, |acc, t| acc.checked_add(t.bytes()));
    bytes.is_some_and(|b| b <= EXEC_MAX_BYTES) && work(graph) <= EXEC_MAX_WORK
}

/// An upper estimate of one invoke's kernel steps: every operator visits its inputs and
/// outputs; convolutions, fully connected layers and the recurrent operators multiply
/// their other inputs (weights) once per pixel or row of the first; pooling visits its
/// window (clipped to the input) once per output element.
pub fn work(graph: &Graph) -> u64 {
    let elements = |t: kiln_planner::ir::TensorId| graph.tensor(t).elements() as u64;
    graph.ops.iter().fold(0u64, |total, op| {
        let ins: u64 = op.present_inputs().map(elements).sum();
        let outs: u64 = op.outputs.iter().map(|&t| elements(t)).sum();
        let first = op
            .inputs
            .first()
            .copied()
            .flatten()
            .map(|t| graph.tensor(t));
        let rows = first.map_or(1, |t| {
            (t.elements() / t.shape.last().copied().unwrap_or(1).max(1)).max(1) as u64
        });
        let extra = match &op.kind {
            OpKind::Conv2d(_)
            | OpKind::DepthwiseConv2d(_)
            | OpKind::FullyConnected(_)
            | OpKind::TransposeConv(_)
            | OpKind::Svdf(_)
            | OpKind::UnidirectionalSequenceLstm(_) => {
                let others: u64 = op
                    .inputs
                    .iter()
                    .skip(1)
                    .flatten()
                    .map(|&t| elements(t))
                    .sum();
                rows.saturating_mul(others)
            }
            OpKind::AveragePool2d(o) | OpKind::MaxPool2d(o) => {
                let (h, w) = first.map_or((1, 1), |t| match t.shape[..] {
                    [_, h, w, _] => (h, w),
                    _ => (1, 1),
                });
                let fh = usize::try_from(o.filter_h).unwrap_or(1).clamp(1, h.max(1));
                let fw = usize::try_from(o.filter_w).unwrap_or(1).clamp(1, w.max(1));
                outs.saturating_mul((fh * fw) as u64)
            }
            _ => 0,
        };
        total
            .saturating_add(ins)
            .saturating_add(outs)
            .saturating_add(extra)
    })
}

/// Runs the steps on three inputs; returns every graph output's bytes for each.
fn execute(graph: &Graph, steps: &[Step], data: &[u8]) -> Vec<Vec<u8>> {
    let mut results = Vec::new();
    for pattern in 0..3 {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let inputs: Vec<Vec<u8>> = graph
            .inputs
            .iter()
            .map(|&t| {
                (0..graph.tensor(t).bytes())
                    .map(|i| match pattern {
                        0 => 0,
                        1 => {
                            // xorshift64*
                            rng ^= rng >> 12;
                            rng ^= rng << 25;
                            rng ^= rng >> 27;
                            (rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
                        }
                        _ => data[i % data.len()],
                    })
                    .collect()
            })
            .collect();
        let views: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let tensors = kiln_build::exec::run(graph, steps, &views);
        results.extend(graph.outputs.iter().map(|&t| tensors[t.0].bytes().to_vec()));
    }
    results
}
