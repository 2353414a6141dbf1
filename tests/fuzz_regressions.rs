//! The fuzz regression corpus: every file in `tests/fuzz_regressions/` (minimized inputs that
//! crashed the `compile` fuzz target, and a `cargo fuzz cmin` covering set of small inputs)
//! goes through the fuzz target's own function, `fuzz/src/compile_all.rs` (read, both plans,
//! reports, lowering, emission, formatting, the host executor), and must not panic; so do
//! the multi-subgraph models of `tests/control_flow/`.
//! Errors are fine; a panic fails the test with the file's name and message.

#[path = "../fuzz/src/compile_all.rs"]
mod compile_all;

mod common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

#[test]
fn no_regression_input_panics() {
    let dir = common::repo_root().join("tests/fuzz_regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: no inputs", dir.display());
    // The multi-subgraph models (control flow, resource variables) too: compile_all takes
    // them through compile_tokens whole.
    let control_flow = common::repo_root().join("tests/control_flow");
    let mut more: Vec<_> = std::fs::read_dir(&control_flow)
        .unwrap_or_else(|e| panic!("{}: {e}", control_flow.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tflite"))
        .collect();
    more.sort();
    files.extend(more);
    // Keep each panic's location for the report (the default hook prints it as well).
    let location = Arc::new(Mutex::new(String::new()));
    let default_hook = panic::take_hook();
    let at = Arc::clone(&location);
    panic::set_hook(Box::new(move |info| {
        if let Some(l) = info.location() {
            *at.lock().unwrap() = format!("{}:{}", l.file(), l.line());
        }
        default_hook(info);
    }));
    let mut failures = Vec::new();
    let mut totals = compile_all::Outcome::default();
    let mut compiled = 0usize;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match panic::catch_unwind(AssertUnwindSafe(|| compile_all::compile_all(&bytes))) {
            Ok(o) => {
                totals.read |= o.read;
                totals.planned = totals.planned.saturating_add(o.planned);
                totals.executed = totals.executed.saturating_add(o.executed);
                compiled += usize::from(o.compiled > 0);
            }
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| payload.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)");
                let at = location.lock().unwrap();
                failures.push(format!("{name}: {message} (at {at})"));
            }
        }
    }
    drop(panic::take_hook());
    eprintln!(
        "{} inputs: {compiled} compile, {} plans, {} executor runs, {} panic",
        files.len(),
        totals.planned,
        totals.executed,
        failures.len()
    );
    assert!(totals.read, "no input reads: the corpus lost its models");
    assert!(
        failures.is_empty(),
        "{} of {} inputs panic:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
