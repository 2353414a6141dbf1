//! Helpers for the end-to-end tests: golden data of `../shared/models` and `tests/models`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/models` (or `$KILN_SHARED/models`).
pub fn shared_models() -> PathBuf {
    std::env::var_os("KILN_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared"))
        .join("models")
}

/// One golden sample: input and output tensors as raw bytes.
pub struct Sample {
    pub seed: u64,
    pub inputs: Vec<Vec<u8>>,
    pub outputs: Vec<Vec<u8>>,
}

/// Reads the samples of a golden directory (`golden.json` plus `.bin` files).
pub fn samples(dir: &Path) -> Vec<Sample> {
    let text = std::fs::read_to_string(dir.join("golden.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let read = |v: &serde_json::Value| -> Vec<Vec<u8>> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|f| std::fs::read(dir.join(f.as_str().unwrap())).unwrap())
            .collect()
    };
    json["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Sample {
            seed: s["seed"].as_u64().unwrap(),
            inputs: read(&s["inputs"]),
            outputs: read(&s["outputs"]),
        })
        .collect()
}

/// Runs every sample of `dir` through a compiled model module and compares byte for byte.
#[macro_export]
macro_rules! check_golden {
    ($module:ident, $dir:expr) => {{
        let mut m = $module::Model::take().expect("the model is taken once");
        let samples = common::samples(&$dir);
        assert!(!samples.is_empty());
        for s in &samples {
            m.reset();
            assert_eq!(s.inputs.len(), $module::INPUTS);
            for (i, bytes) in s.inputs.iter().enumerate() {
                m.input_bytes_mut(i).copy_from_slice(bytes);
            }
            m.invoke();
            assert_eq!(s.outputs.len(), $module::OUTPUTS);
            for (i, want) in s.outputs.iter().enumerate() {
                let got = m.output_bytes(i);
                if got != want.as_slice() {
                    let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
                    panic!(
                        "{}: sample {} output {i} differs from TFLM at byte {first} of {} (got {}, want {})",
                        stringify!($module),
                        s.seed,
                        want.len(),
                        got[first],
                        want[first]
                    );
                }
            }
        }
    }};
}
