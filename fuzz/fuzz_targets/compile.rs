//! Fuzz target: any byte string through the whole compile path
//! (`kiln_fuzz::compile_all::compile_all`: read, plan twice, reports, lower, emit, format,
//! host executor). Any panic is a crash.
//!
//! For triage only, two environment variables filter panics by their location (a
//! `file:line` substring such as `softmax.rs:208`, comma-separated): with
//! `KILN_FUZZ_IGNORE` those panics are not crashes (to keep fuzzing past a known bug), with
//! `KILN_FUZZ_ONLY` only those are (to `cargo fuzz tmin` one bug without drifting to
//! another). CI sets neither.

#![no_main]

use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

fn matches(list: &str, at: &str) -> bool {
    list.split(',').any(|p| !p.is_empty() && at.contains(p))
}

/// Wraps libfuzzer-sys' panic hook (print, then abort) so that filtered panics unwind.
fn install_filter() {
    let ignore = std::env::var("KILN_FUZZ_IGNORE").unwrap_or_default();
    let only = std::env::var("KILN_FUZZ_ONLY").ok();
    if ignore.is_empty() && only.is_none() {
        return;
    }
    let crash = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let wanted = only.as_deref().is_none_or(|o| matches(o, &at));
        if wanted && !matches(&ignore, &at) {
            crash(info);
        }
    }));
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    static FILTER: Once = Once::new();
    FILTER.call_once(install_filter);
    // Unfiltered panics abort inside the hook; filtered ones unwind to here.
    let _ = panic::catch_unwind(AssertUnwindSafe(|| {
        kiln_fuzz::compile_all::compile_all(data)
    }));
});
