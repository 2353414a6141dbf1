//! End to end, one or two models of every kernel-case bundle (`tests/kernel_cases/*.kcase`):
//! `tests/kernel_cases.rs` runs every case on the host executor; here the code Kiln emits for
//! each operator and type is compiled by rustc through `kiln::include_model!` and run on the
//! bundle's golden inputs, every output compared byte for byte with TFLM's (float32 bit for
//! bit).
//!
//! The models (`tests/kernel_cases/models/`) and the list of modules
//! (`tests/e2e_kernel_cases/list.rs`) are written by `tools/extract_kcase_models.py`: case 0 of
//! every bundle, plus a larger case where case 0 is trivially small. After new bundles are
//! generated, re-run the tool; `every_bundle_has_a_model` fails until then.

mod common;

use std::collections::BTreeSet;

/// Runs case `case` of bundle `bundle` through the compiled model module `$module`.
macro_rules! check_case {
    ($module:ident, $bundle:literal, $case:literal) => {{
        let mut m = $module::Model::take().expect("the model is taken once");
        let bytes = std::fs::read(
            common::repo_root()
                .join("tests/kernel_cases")
                .join(concat!($bundle, ".kcase")),
        )
        .unwrap();
        let cases = common::parse_kcase(&bytes);
        let c = &cases[$case];
        m.reset();
        let at = concat!($bundle, " case ", $case);
        // Every invoke of the case after one reset (a sequence carries the state over).
        for (k, (inputs, outputs)) in c.invokes().into_iter().enumerate() {
            assert_eq!(inputs.len(), $module::INPUTS, "{at}: inputs");
            for (i, bytes) in inputs.iter().enumerate() {
                let dst = m.input_bytes_mut(i);
                assert_eq!(dst.len(), bytes.len(), "{at}: input {i} length");
                dst.copy_from_slice(bytes);
            }
            m.invoke();
            assert_eq!(outputs.len(), $module::OUTPUTS, "{at}: outputs");
            let mut bad = Vec::new();
            for (i, want) in outputs.iter().enumerate() {
                let got = m.output_bytes(i);
                assert_eq!(got.len(), want.len(), "{at}: output {i} length");
                if let Some(at) = got.iter().zip(want).position(|(a, b)| a != b) {
                    bad.push(format!(
                        "output {i} differs from TFLM at byte {at} of {} (got {:#04x}, want {:#04x})",
                        want.len(),
                        got[at],
                        want[at]
                    ));
                }
            }
            assert!(bad.is_empty(), "{at} invoke {k}: {}", bad.join("; "));
        }
    }};
}

/// One module (the compiled model) and one test per line, and `MODELS`: (bundle, case,
/// model path) of every line.
macro_rules! kcases {
    ($($name:ident = ($bundle:literal, $case:literal, $path:literal)),* $(,)?) => {
        $(
            mod $name {
                kiln::include_model!($path);
            }
            #[test]
            fn $name() {
                check_case!($name, $bundle, $case);
            }
        )*
        const MODELS: &[(&str, usize, &str)] = &[$(($bundle, $case, $path)),*];
    };
}

include!("e2e_kernel_cases/list.rs");

/// Every bundle of the manifest has a line (its case 0) or is an exception; every model file
/// holds the bytes of its case in the bundle (the committed models are not stale); every
/// exception is still refused by Kiln (a bundle that compiles must get its line back).
#[test]
fn every_bundle_has_a_model() {
    let bundles = common::kernel_case_bundles();
    assert!(
        common::kernel_case_filter().is_some() || bundles.len() >= 200,
        "too few bundles: {}",
        bundles.len()
    );
    let mut problems = Vec::new();
    let listed: BTreeSet<&str> = MODELS.iter().filter(|m| m.1 == 0).map(|m| m.0).collect();
    let excepted: BTreeSet<&str> = EXCEPTIONS.iter().map(|e| e.0).collect();
    let mut known = BTreeSet::new();
    for (entry, cases) in &bundles {
        let bundle = entry["file"].as_str().unwrap().trim_end_matches(".kcase");
        known.insert(bundle.to_string());
        match (listed.contains(bundle), excepted.contains(bundle)) {
            (true, true) => problems.push(format!("{bundle}: both listed and an exception")),
            (false, false) => problems.push(format!(
                "{bundle}: no model; run tools/extract_kcase_models.py"
            )),
            (false, true) => {
                let options = kiln_build::Options::default();
                if kiln_build::compile_tokens(&cases[0].model, &options).is_ok() {
                    problems.push(format!(
                        "{bundle}: an exception, but Kiln compiles it now: remove it from \
                         EXCEPTIONS in tools/extract_kcase_models.py and re-run the tool"
                    ));
                }
            }
            (true, false) => {}
        }
        for (_, case, path) in MODELS.iter().filter(|m| m.0 == bundle) {
            let file = common::repo_root().join(path);
            match std::fs::read(&file) {
                Ok(bytes) if cases.get(*case).is_some_and(|c| c.model == bytes) => {}
                Ok(_) => problems.push(format!(
                    "{path} is not case {case} of {bundle}: run tools/extract_kcase_models.py"
                )),
                Err(e) => problems.push(format!("{path}: {e}")),
            }
        }
    }
    if common::kernel_case_filter().is_none() {
        for (bundle, _, path) in MODELS {
            if !known.contains(*bundle) {
                problems.push(format!("{path}: {bundle} is not in the manifest"));
            }
        }
        for (bundle, _) in EXCEPTIONS {
            if !known.contains(*bundle) {
                problems.push(format!("exception {bundle} is not in the manifest"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
