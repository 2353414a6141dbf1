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

/// The tensors of one invoke: inputs or outputs, each as raw bytes.
pub type Tensors = Vec<Vec<u8>>;

/// One single-operator case of a kernel-case bundle (`tests/kernel_cases/*.kcase`): the
/// inputs and TFLM's outputs of the first invoke after `reset()`, and for a KCASE2 case (a
/// stateful streaming operator) those of the invokes after it, the state carried over.
pub struct Case {
    pub model: Vec<u8>,
    pub inputs: Vec<Vec<u8>>,
    pub outputs: Vec<Vec<u8>>,
    /// (inputs, outputs) of each further invoke, in order (empty for KCASE1 bundles).
    pub later: Vec<(Tensors, Tensors)>,
}

impl Case {
    /// (inputs, outputs) of every invoke, the first one included.
    pub fn invokes(&self) -> Vec<(&Tensors, &Tensors)> {
        std::iter::once((&self.inputs, &self.outputs))
            .chain(self.later.iter().map(|(i, o)| (i, o)))
            .collect()
    }
}

/// Parses a `.kcase` bundle (format in `tests/kernel_cases/README.md`): KCASE1 (one invoke
/// per case) or KCASE2 (an invocation count per case).
pub fn parse_kcase(bytes: &[u8]) -> Vec<Case> {
    let seq = match &bytes[..8] {
        b"KCASE1\0\0" => false,
        b"KCASE2\0\0" => true,
        _ => panic!("bad magic"),
    };
    let mut at = 8;
    let u32_at = |at: &mut usize| {
        let v = u32::from_le_bytes(bytes[*at..*at + 4].try_into().unwrap()) as usize;
        *at += 4;
        v
    };
    let blob = |at: &mut usize| {
        let n = u32_at(at);
        let v = bytes[*at..*at + n].to_vec();
        *at += n;
        v
    };
    let count = u32_at(&mut at);
    let mut cases = Vec::with_capacity(count);
    for _ in 0..count {
        let model = blob(&mut at);
        let invokes = if seq { u32_at(&mut at) } else { 1 };
        assert!(invokes >= 1, "a case without invokes");
        let mut steps = Vec::with_capacity(invokes);
        for _ in 0..invokes {
            let n_in = u32_at(&mut at);
            let inputs: Vec<Vec<u8>> = (0..n_in).map(|_| blob(&mut at)).collect();
            let n_out = u32_at(&mut at);
            let outputs: Vec<Vec<u8>> = (0..n_out).map(|_| blob(&mut at)).collect();
            steps.push((inputs, outputs));
        }
        let mut steps = steps.into_iter();
        let (inputs, outputs) = steps.next().unwrap();
        cases.push(Case {
            model,
            inputs,
            outputs,
            later: steps.collect(),
        });
    }
    assert_eq!(at, bytes.len(), "trailing bytes");
    cases
}

/// `KILN_KCASES=abs,floor_int8` (file-name prefixes, comma-separated) keeps only the bundles
/// whose file starts with one of them: for working on one operator; CI never sets it.
pub fn kernel_case_filter() -> Option<Vec<String>> {
    std::env::var("KILN_KCASES")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect())
}

/// Every bundle of `tests/kernel_cases` with its manifest entry, in manifest order (only
/// those [`kernel_case_filter`] keeps).
pub fn kernel_case_bundles() -> Vec<(serde_json::Value, Vec<Case>)> {
    let dir = repo_root().join("tests/kernel_cases");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let only = kernel_case_filter();
    manifest
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| {
            let file = entry["file"].as_str().unwrap();
            only.as_ref()
                .is_none_or(|o| o.iter().any(|p| file.starts_with(p.as_str())))
        })
        .map(|entry| {
            let file = entry["file"].as_str().unwrap();
            let cases = parse_kcase(&std::fs::read(dir.join(file)).unwrap());
            (entry.clone(), cases)
        })
        .collect()
}
