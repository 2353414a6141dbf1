//! Two fidelity fixes against the pinned TFLM wheel, on models from
//! `tools/gen_fidelity_models.py` (`tests/models/fidelity/`):
//!
//! - int16 SUB with the parameters of TFLM's seanet SUB integration tests (fitted from their
//!   CSVs): the wheel computes SUB's multipliers from double quotients, TFLM's current source
//!   from float ones, which changes one or two outputs of each model's golden inputs. The
//!   generated code must give the wheel's bytes.
//! - Pooling windows larger than the input: where TFLM places them (its padding narrowed to
//!   16 bits, the model's output shape where TFLM computes none) for the models Kiln compiles,
//!   and a diagnostic naming the operator, the tensor and the values for those it refuses
//!   (an AVERAGE_POOL_2D window without input cells, which TFLM leaves unwritten; a window
//!   position overflowing TFLM's `int`; an L2_POOL_2D TFLM refuses; an output height TFLM
//!   does not compute).
//!
//! The kernel-case bundles `sub_scales_*`, `add_scales_*`, `average_pool_2d_window_*` and
//! `max_pool_2d_window_*` hold many more such cases (`tests/kernel_cases.rs`).

mod common;

use kiln_planner::ErrorKind;
use std::path::PathBuf;

fn dir() -> PathBuf {
    common::repo_root().join("tests/models/fidelity")
}

macro_rules! golden {
    ($($name:ident = $file:literal),* $(,)?) => {
        $(
            mod $name {
                kiln::include_model!($file);
            }
        )*
        /// Every compiled model gives TFLM's bytes on its golden inputs.
        #[test]
        fn compiled_models_match_tflm() {
            $(check_golden!($name, dir().join("golden").join(stringify!($name)));)*
        }
        const COMPILED: &[&str] = &[$(stringify!($name)),*];
    };
}

golden!(
    sub_seanet0_int16 = "models/fidelity/sub_seanet0_int16.tflite",
    sub_seanet1_int16 = "models/fidelity/sub_seanet1_int16.tflite",
    sub_seanet2_int16 = "models/fidelity/sub_seanet2_int16.tflite",
    sub_seanet3_int16 = "models/fidelity/sub_seanet3_int16.tflite",
    sub_seanet4_int16 = "models/fidelity/sub_seanet4_int16.tflite",
    pool_max_same_2p17_int16 = "models/fidelity/pool_max_same_2p17_int16.tflite",
    pool_average_valid_larger_int8 = "models/fidelity/pool_average_valid_larger_int8.tflite",
);

/// The refused models: operator, tensor index and words of the diagnostic.
const REFUSED: &[(&str, &str, usize, &[&str])] = &[
    (
        "pool_average_empty_window_int8",
        "AVERAGE_POOL_2D",
        0,
        &[
            "output row 0 holds no input cell",
            "the ones after it unwritten",
            "filter height 1073741814",
            "padding -6",
        ],
    ),
    (
        "pool_max_stride_overflow_int8",
        "MAX_POOL_2D",
        0,
        &[
            "overflows",
            "output row 2",
            "stride 1073741824",
            "2 * 1073741824 - 0",
        ],
    ),
    (
        "pool_l2_valid_larger_float32",
        "L2_POOL_2D",
        1,
        &[
            "no output height",
            "window of 5",
            "positive output size",
            "0",
        ],
    ),
    (
        "pool_max_wrong_output_height_int8",
        "MAX_POOL_2D",
        1,
        &["output height is not the one TFLM computes", "2", "3"],
    ),
];

#[test]
fn every_model_is_listed_with_tflm_verdict() {
    let mut files: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "tflite").then(|| p.file_stem().unwrap().to_string_lossy().into())
        })
        .collect();
    files.sort();
    let mut listed: Vec<String> = COMPILED
        .iter()
        .chain(REFUSED.iter().map(|(n, ..)| n))
        .map(|n| n.to_string())
        .collect();
    listed.sort();
    assert_eq!(files, listed);
    let verdicts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("tflm.json")).unwrap()).unwrap();
    for name in COMPILED {
        assert_eq!(verdicts[name], "ok", "{name}: TFLM runs it");
    }
    // TFLM refuses the L2 pool; it runs the others, on undefined behaviour or a shape it does
    // not check.
    for (name, ..) in REFUSED {
        let refused = verdicts[name].as_str().unwrap().starts_with("error");
        assert_eq!(refused, *name == "pool_l2_valid_larger_float32", "{name}");
    }
}

#[test]
fn refused_models_name_operator_tensor_and_values() {
    let mut failures = Vec::new();
    for (name, op, tensor, says) in REFUSED {
        let bytes = std::fs::read(dir().join(format!("{name}.tflite"))).unwrap();
        let Err(d) = kiln_build::compile_tokens(&bytes, &kiln_build::Options::default()) else {
            failures.push(format!("{name}: compiles"));
            continue;
        };
        let shown = d.to_string();
        let got_op = d.op.as_ref().map(|o| (o.index, o.name.as_str()));
        if d.kind != ErrorKind::Unsupported
            || got_op != Some((0, *op))
            || d.tensor.as_ref().map(|t| t.index) != Some(*tensor)
            || says.iter().any(|w| !shown.contains(w))
        {
            failures.push(format!("{name}: {:?} {got_op:?}: {shown}", d.kind));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
