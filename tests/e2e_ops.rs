//! End to end, the newer operators in Kiln's own models (`tests/models/{features_int8,
//! features_float,lstm_float,math_float}.tflite`, built by `tools/gen_ops_models.py`, whose
//! docstring lists their operators): compiled with `include_model!`, run on TFLM's golden
//! inputs, compared byte for byte, on the final outputs (`golden/`) and on every layer (the
//! `all_outputs/` variants expose every operator's output, `golden_all/` holds TFLM's: the
//! first output that differs names the first wrong layer).
//! The host executor must give the same bytes.

mod common;

use kiln_planner::{ErrorKind, PlanOptions, plan, read_model};

macro_rules! golden {
    ($name:ident, $file:literal, $dir:literal, $stem:literal) => {
        mod $name {
            kiln::include_model!($file);
        }
        #[test]
        fn $name() {
            check_golden!(
                $name,
                common::repo_root()
                    .join("tests/models")
                    .join($dir)
                    .join($stem)
            );
        }
    };
}

golden!(
    features_int8,
    "models/features_int8.tflite",
    "golden",
    "features_int8"
);
golden!(
    features_float,
    "models/features_float.tflite",
    "golden",
    "features_float"
);
golden!(
    lstm_float,
    "models/lstm_float.tflite",
    "golden",
    "lstm_float"
);

golden!(
    math_float,
    "models/math_float.tflite",
    "golden",
    "math_float"
);

golden!(
    math_float_all,
    "models/all_outputs/math_float.tflite",
    "golden_all",
    "math_float"
);
golden!(
    features_int8_all,
    "models/all_outputs/features_int8.tflite",
    "golden_all",
    "features_int8"
);
golden!(
    features_float_all,
    "models/all_outputs/features_float.tflite",
    "golden_all",
    "features_float"
);
golden!(
    lstm_float_all,
    "models/all_outputs/lstm_float.tflite",
    "golden_all",
    "lstm_float"
);

mod features_int8_unaliased {
    kiln::include_model!("models/features_int8.tflite", alias = false);
}

#[test]
fn features_int8_without_aliasing() {
    check_golden!(
        features_int8_unaliased,
        common::repo_root().join("tests/models/golden/features_int8")
    );
}

mod features_int8_all_unaliased {
    kiln::include_model!("models/all_outputs/features_int8.tflite", alias = false);
}

#[test]
fn features_int8_every_layer_without_aliasing() {
    check_golden!(
        features_int8_all_unaliased,
        common::repo_root().join("tests/models/golden_all/features_int8")
    );
}

/// Reads, plans, lowers and runs a model on the host executor against a golden directory.
/// `Ok(None)`: every sample matches; `Ok(Some(diagnostic))`: refused as unsupported (a
/// failure for these models).
fn run_host(model: &str, golden: &str) -> Result<Option<String>, String> {
    let root = common::repo_root().join("tests/models");
    let bytes = std::fs::read(root.join(model)).unwrap();
    let graph = read_model(&bytes).map_err(|d| format!("read: {d}"))?;
    let p = plan(
        &graph,
        &kiln_build::lower::kernels(&graph),
        &PlanOptions::default(),
    )
    .map_err(|d| format!("plan: {d}"))?;
    let steps = match kiln_build::lower::lower(&graph, &p) {
        Ok(s) => s,
        Err(d) if d.kind == ErrorKind::Unsupported => return Ok(Some(d.to_string())),
        Err(d) => return Err(format!("lower: {d}")),
    };
    let samples = common::samples(&root.join(golden));
    assert!(!samples.is_empty());
    for s in &samples {
        let inputs: Vec<&[u8]> = s.inputs.iter().map(Vec::as_slice).collect();
        let tensors = kiln_build::exec::run(&graph, &steps, &inputs);
        assert_eq!(graph.outputs.len(), s.outputs.len());
        for (i, (&t, want)) in graph.outputs.iter().zip(&s.outputs).enumerate() {
            let got = tensors[t.0].bytes();
            if got != want.as_slice() {
                let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
                return Err(format!(
                    "{model}: sample {} output {i} (tensor {}) differs from TFLM at byte {at} of {}",
                    s.seed,
                    t.0,
                    want.len()
                ));
            }
        }
    }
    Ok(None)
}

/// The host executor gives TFLM's bytes too, on every layer.
#[test]
fn host_executor_matches_tflm_on_every_layer() {
    for stem in [
        "features_int8",
        "features_float",
        "lstm_float",
        "math_float",
    ] {
        for (model, golden) in [
            (format!("{stem}.tflite"), format!("golden/{stem}")),
            (
                format!("all_outputs/{stem}.tflite"),
                format!("golden_all/{stem}"),
            ),
        ] {
            assert_eq!(run_host(&model, &golden), Ok(None), "{model}");
        }
    }
}
