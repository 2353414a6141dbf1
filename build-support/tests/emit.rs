//! The emitter's output: deterministic, formatted, and as committed for a small model.
//!
//! `tests/expected/hello_world_int8.rs` is the emitted file for TFLM's hello_world model;
//! a change to the emitter shows up as a diff there. Regenerate it with
//! `KILN_BLESS=1 cargo test -p kiln-build --test emit`.

use kiln_build::{Model, Options, compile_tokens, format_file};
use std::path::{Path, PathBuf};

fn shared(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/models")
        .join(name)
}

#[test]
fn emitted_hello_world_matches_the_committed_file() {
    let path = shared("tflm_hello_world_int8.tflite");
    let tokens = Model::new(&path).tokens().unwrap();
    // The weights are read from the model file by its absolute path: name it the same way
    // on every machine.
    let abs = path.canonicalize().unwrap();
    let text = format_file(&tokens, "tflm_hello_world_int8.tflite").replace(
        abs.to_str().unwrap(),
        "$SHARED/models/tflm_hello_world_int8.tflite",
    );
    let expected = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/hello_world_int8.rs");
    if std::env::var_os("KILN_BLESS").is_some() {
        std::fs::write(&expected, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&expected).unwrap();
    assert!(
        text == committed,
        "the emitted code changed: run with KILN_BLESS=1 and review the diff"
    );
    assert!(text.starts_with("// @generated"));
}

#[test]
fn two_expansions_are_identical() {
    for name in [
        "tflm_person_detect_int8.tflite",
        "mlperf_tiny_ic_resnet8_int8.tflite",
    ] {
        let bytes = std::fs::read(shared(name)).unwrap();
        let a = compile_tokens(&bytes, &Options::default())
            .unwrap()
            .tokens
            .to_string();
        let b = compile_tokens(&bytes, &Options::default())
            .unwrap()
            .tokens
            .to_string();
        assert_eq!(a, b, "{name}");
    }
}

/// The memory map's emitted file for hello_world over two regions: one static per region in
/// its section, operands bound from their regions' arenas.
#[test]
fn emitted_hello_world_over_two_regions_matches_the_committed_file() {
    let path = shared("tflm_hello_world_int8.tflite");
    let tokens = Model::new(&path)
        .region(".dtcm", 16)
        .region_aligned(".sram", 4096, 32)
        .tokens()
        .unwrap();
    let abs = path.canonicalize().unwrap();
    let text = format_file(&tokens, "tflm_hello_world_int8.tflite").replace(
        abs.to_str().unwrap(),
        "$SHARED/models/tflm_hello_world_int8.tflite",
    );
    let expected =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/hello_world_int8_regions.rs");
    if std::env::var_os("KILN_BLESS").is_some() {
        std::fs::write(&expected, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&expected).unwrap();
    assert!(
        text == committed,
        "the emitted code changed: run with KILN_BLESS=1 and review the diff"
    );
    for needle in [
        "#[unsafe(link_section = \".dtcm\")]",
        "#[unsafe(link_section = \".sram\")]",
        "pub const ARENA0_BYTES: usize",
        "pub const ARENA1_BYTES: usize",
        "pub fn with_regions<",
        "let arena0 = &mut self.arena0[..];",
        "let arena1 = &mut self.arena1[..];",
    ] {
        assert!(text.contains(needle), "{needle}");
    }
    // A step whose operands are in both regions binds one slice set from each.
    let flat: String = text.split_whitespace().collect();
    assert!(
        flat.contains("split_many(&mut*arena0,[(") && flat.contains("split_many(&mut*arena1,[],["),
        "no step spans both regions"
    );
}

#[test]
fn region_expansions_are_identical() {
    let path = shared("tflm_person_detect_int8.tflite");
    let model = || {
        Model::new(&path)
            .region(".dtcm", 16 * 1024)
            .region(".sram", 64 * 1024)
            .tokens()
            .unwrap()
            .to_string()
    };
    assert_eq!(model(), model());
}

/// The header records the tiling options that differ from the defaults, and nothing for
/// the defaults (the committed file above has none).
#[test]
fn the_header_records_tiling_options_that_differ_from_the_defaults() {
    let path = shared("tflm_hello_world_int8.tflite");
    let text = |model: Model| format_file(&model.tokens().unwrap(), "hello_world");
    let tiled = text(Model::new(&path).tile(false).max_extra_macs(35));
    assert!(
        tiled.contains("tiling = off max_extra_macs:35`"),
        "no tiling options in the header:\n{tiled}"
    );
    assert!(!text(Model::new(&path)).contains("tiling ="));
}
