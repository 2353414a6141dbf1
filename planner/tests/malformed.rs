//! Malformed input never panics: it gives a diagnostic (or, for a mutation that happens to
//! leave a valid model, a plan). Truncations, seeded random byte changes, an empty file, a
//! non-flatbuffer and a valid flatbuffer of another schema.

mod common;
use common::*;
use kiln_planner::{ErrorKind, PlanOptions, read_model};

/// xorshift64*: a tiny deterministic generator, so no seed depends on a crate's version.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Reads and, if that succeeds, plans: neither may panic.
fn read_and_plan(bytes: &[u8]) -> Result<(), kiln_planner::Diagnostic> {
    let g = read_model(bytes)?;
    plan(&g, &PlanOptions::default()).map(|_| ())
}

#[test]
fn truncated_models_give_diagnostics() {
    for path in shared_models() {
        let bytes = std::fs::read(&path).unwrap();
        for k in 0..64 {
            let len = bytes.len() * k / 64;
            let err = read_and_plan(&bytes[..len]).expect_err("a truncated model must not read");
            assert!(
                !err.to_string().is_empty(),
                "{}: empty message",
                path.display()
            );
        }
    }
}

#[test]
fn ten_thousand_random_byte_changes_per_model_never_panic() {
    const FLIPS: usize = 10_000;
    let mut errors = 0usize;
    let mut total = 0usize;
    // The public models, and three multi-subgraph ones (calls, nesting, resource variables).
    let control_flow = control_flow_models()
        .into_iter()
        .filter(|p| ["while_if_float", "call_once_var", "if_int8"].contains(&stem(p).as_str()));
    let models: Vec<_> = shared_models().into_iter().chain(control_flow).collect();
    assert!(models.len() >= 17, "the control flow models are found");
    for (m, path) in models.into_iter().enumerate() {
        let original = std::fs::read(&path).unwrap();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (m as u64 + 1));
        let mut bytes = original.clone();
        for i in 0..FLIPS {
            // Alternate single-byte and 4-byte changes; restore the model every time.
            let n = if i % 2 == 0 { 1 } else { 4 };
            let at = rng.below(bytes.len().saturating_sub(n).max(1));
            for b in &mut bytes[at..(at + n).min(original.len())] {
                *b ^= (rng.next() as u8).max(1);
            }
            let result = std::panic::catch_unwind(|| read_and_plan(&bytes));
            match result {
                Ok(Err(d)) => {
                    errors += 1;
                    assert!(!d.message.is_empty());
                }
                Ok(Ok(())) => {}
                Err(_) => panic!(
                    "{}: panicked on change {i} at byte {at} (seeded, reproducible)",
                    path.display()
                ),
            }
            bytes[at..(at + n).min(original.len())]
                .copy_from_slice(&original[at..(at + n).min(original.len())]);
            total += 1;
        }
    }
    eprintln!("{total} mutated models, {errors} rejected with a diagnostic");
    assert!(errors > 0);
}

#[test]
fn empty_file() {
    let e = read_model(&[]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotTflite);
    assert!(e.to_string().contains("too short"), "{e}");
}

#[test]
fn not_a_flatbuffer() {
    let text = b"This is a README, not a model. It is long enough to look like something.";
    let e = read_model(text).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotTflite);
    assert!(e.to_string().contains("file identifier"), "{e}");
}

/// A valid flatbuffer whose root table has other field types: a string where a model has
/// its version, an int where it has its operator codes, with and without TFL3.
fn foreign_flatbuffer(identifier: Option<&str>) -> Vec<u8> {
    let mut b = flatbuffers::FlatBufferBuilder::new();
    let s = b.create_string("a monster, not a model");
    let start = b.start_table();
    b.push_slot_always::<flatbuffers::WIPOffset<&str>>(4, s);
    b.push_slot::<i32>(6, 42, 0);
    b.push_slot::<i32>(8, 7, 0);
    let root: flatbuffers::WIPOffset<flatbuffers::TableFinishedWIPOffset> = b.end_table(start);
    b.finish(root, identifier);
    b.finished_data().to_vec()
}

#[test]
fn valid_flatbuffer_of_another_schema() {
    let e = read_model(&foreign_flatbuffer(None)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotTflite, "{e}");
    let e = read_model(&foreign_flatbuffer(Some("TFL3"))).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Malformed, "{e}");
    assert!(e.to_string().contains("does not verify"), "{e}");
}

/// A model whose operator writes a tensor flagged as a variable (a fuzzer's mutation of
/// `is_variable` on a FULLY_CONNECTED output): TFLM would keep it in persistent memory; Kiln
/// says it does not support that, naming the operator and the tensor, instead of failing
/// later in code generation.
#[test]
fn an_operator_writing_a_variable_tensor_is_unsupported() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fuzz_regressions/crash_emit_variable_output.tflite");
    let bytes = std::fs::read(&path).unwrap();
    let err = read_and_plan(&bytes).expect_err("a variable written by an operator");
    assert_eq!(err.kind, ErrorKind::Unsupported, "{err}");
    let text = err.to_string();
    assert!(
        text.contains("op 0 (FULLY_CONNECTED): tensor 7 ")
            && text.contains("writes a variable tensor"),
        "{text}"
    );
}
