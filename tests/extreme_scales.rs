//! Extreme but legal quantization never compiles to code that panics or computes garbage.
//!
//! Every quantized tensor of the first cases of every kernel-case bundle gets, in turn, a
//! scale at the edges of `f32` (the smallest denormal, 1e-30, 1e30, 3e38, ...). Each such
//! model must either be refused with a typed diagnostic that names the operator (and a
//! tensor and the scale when a requantization multiplier is out of range), or compile and
//! run on the host without a panic. Tests build with overflow checks, so a shift or multiply
//! the kernels cannot handle panics here instead of wrapping silently as it would in a
//! release build.

mod common;

use kiln_build::lower::lower;
use kiln_planner::ir::Quantization;
use kiln_planner::{ErrorKind, PlanOptions, plan, read_model};

/// Scales at the edges of what a `.tflite` file can hold (finite, positive `f32`).
const SCALES: [f32; 7] = [1.4e-45, 1e-38, 1e-30, 1e-12, 1e12, 1e30, 3.0e38];

/// Cases per bundle.
const CASES: usize = 3;

#[derive(Default)]
struct Tally {
    ran: usize,
    refused: usize,
    panics: Vec<String>,
    bad_refusals: Vec<String>,
}

#[test]
fn extreme_scales_are_refused_or_run_cleanly() {
    let mut tally = Tally::default();
    // The panics are collected and reported below; do not print each one.
    std::panic::set_hook(Box::new(|i| {
        if std::env::var_os("KILN_SHOW_PANICS").is_some() {
            eprintln!("PANIC at {:?}", i.location())
        }
    }));
    for (entry, cases) in common::kernel_case_bundles() {
        let file = entry["file"].as_str().unwrap().to_string();
        for (c, case) in cases.iter().enumerate().take(CASES) {
            let original = read_model(&case.model).expect("kernel cases read");
            if lower(
                &original,
                &plan(
                    &original,
                    &kiln_build::lower::kernels(&original),
                    &PlanOptions::default(),
                )
                .expect("kernel cases plan"),
            )
            .is_err()
            {
                continue; // not compiled at all (pending bundle)
            }
            for t in 0..original.tensors.len() {
                for &scale in &SCALES {
                    let mut graph = original.clone();
                    match &mut graph.tensors[t].quant {
                        Quantization::None => continue,
                        Quantization::PerTensor { scale: s, .. } => *s = scale,
                        Quantization::PerChannel { scales, .. } => scales.fill(scale),
                    }
                    let what = format!("{file} case {c}, tensor {t} scale {scale:e}");
                    let inputs: Vec<&[u8]> = case.inputs.iter().map(Vec::as_slice).collect();
                    let result = std::panic::catch_unwind(|| {
                        let p = plan(
                            &graph,
                            &kiln_build::lower::kernels(&graph),
                            &PlanOptions::default(),
                        )?;
                        let steps = lower(&graph, &p)?;
                        kiln_build::exec::run(&graph, &steps, &inputs);
                        Ok::<(), kiln_planner::Diagnostic>(())
                    });
                    match result {
                        Ok(Ok(())) => tally.ran += 1,
                        Ok(Err(d)) => {
                            tally.refused += 1;
                            if d.kind != ErrorKind::Unsupported || d.op.is_none() {
                                tally.bad_refusals.push(format!("{what}: {d}"));
                            }
                        }
                        Err(e) => {
                            let msg = e
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_default();
                            tally.panics.push(format!("{what}: {msg}"));
                        }
                    }
                }
            }
        }
    }
    drop(std::panic::take_hook());
    eprintln!(
        "{} extreme-scale models ran, {} refused with a diagnostic",
        tally.ran, tally.refused
    );
    assert!(
        tally.panics.is_empty(),
        "{} panics, e.g.:\n{}",
        tally.panics.len(),
        tally.panics.join("\n")
    );
    assert!(
        tally.bad_refusals.is_empty(),
        "{}",
        tally.bad_refusals.join("\n")
    );
    assert!(tally.ran > 1000 && tally.refused > 100);
}
