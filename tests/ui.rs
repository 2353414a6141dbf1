//! UI tests of `kiln::include_model!`: every malformed model, unsupported operator, broken
//! budget or bad option is a compile error that names the problem, on the argument's span.
//! The expected messages are the `.stderr` files beside the cases in `tests/ui/`; write them
//! anew with `TRYBUILD=overwrite cargo test --test ui` and read the diff.
//!
//! Some cases use the public models in `../shared/models` beside the repository.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/*.rs");
}
