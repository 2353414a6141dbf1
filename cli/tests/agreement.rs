//! `kiln plan` and `include_model!` agree on every model: the command line plans what the
//! compile path compiles and, for what it refuses, exits non-zero with the same diagnostic
//! (hostile models of `tests/hostile`, the public models, Kiln's own test models, and
//! budgets).

#[path = "../../planner/tests/common/mod.rs"]
mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn hostile_models() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo_root().join("tests/hostile"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tflite"))
        .collect();
    v.sort();
    v
}

/// Runs `kiln plan` on `path` with `args`, and the compile path with `options`; both must
/// give the same answer.
fn agree(path: &Path, args: &[&str], options: &kiln_build::Options) -> bool {
    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("plan")
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let bytes = std::fs::read(path).unwrap();
    match kiln_build::compile_tokens(&bytes, options) {
        Ok(_) => {
            assert!(out.status.success(), "{}: {stderr}", path.display());
            true
        }
        Err(d) => {
            assert!(
                !out.status.success(),
                "{}: kiln plan accepts what the compile path refuses: {d}",
                path.display()
            );
            assert!(
                stderr.contains(&d.to_string()),
                "{}: kiln plan says {stderr}; the compile path says {d}",
                path.display()
            );
            false
        }
    }
}

#[test]
fn kiln_plan_and_the_compile_path_agree_on_every_model() {
    let options = kiln_build::Options::default();
    let mut refused = 0;
    let mut models = hostile_models();
    models.extend(shared_models());
    models.extend(own_models());
    for path in &models {
        refused += usize::from(!agree(path, &[], &options));
    }
    // Most hostile models and the audio preprocessor (custom Signal operators) are refused.
    assert!(refused >= 12, "only {refused} refused");
}

#[test]
fn kiln_plan_checks_budgets_as_the_macro_does() {
    let model = shared_models_dir().join("tflm_person_detect_int8.tflite");
    let budget = |ram: usize| kiln_build::Options {
        ram_budget: Some(kiln_build::Budget::Bytes(ram)),
        ..kiln_build::Options::default()
    };
    assert!(agree(&model, &["--ram-budget", "100000"], &budget(100_000)));
    assert!(!agree(&model, &["--ram-budget", "1000"], &budget(1000)));
}
