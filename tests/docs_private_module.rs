//! `cargo doc` of a binary crate whose model is in a private module (`mod model {
//! kiln::include_model!(..) }`, the form of the README and the board templates) documents
//! the generated items: rustdoc documents a binary's private items but never inlines its
//! re-exports, so the items must be visible where they are defined, in the module
//! `include_model!` emits inside `mod model`.
//!
//! The test runs `rustdoc` (as `cargo doc` does for a binary: `--document-private-items`)
//! on a two-line binary against the `kiln` library this test links with, found beside the
//! test executable. About a second.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The newest `libkiln-*.rlib` in `dir` (the one cargo built for this test run).
fn kiln_rlib(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("libkiln-") && name.ends_with(".rlib")
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
        .expect("libkiln-*.rlib beside the test executable")
}

#[test]
fn cargo_doc_of_a_binary_documents_a_private_model_module() {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let rlib = kiln_rlib(deps);
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs_private_module");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models/mlp_int8.tflite");
    let main = work.join("main.rs");
    std::fs::write(
        &main,
        format!(
            "//! A firmware-like binary.\n\
             mod model {{\n    kiln::include_model!({:?});\n}}\n\
             fn main() {{\n    let _ = model::ARENA_BYTES;\n}}\n",
            model.to_str().unwrap()
        ),
    )
    .unwrap();
    let out = work.join("doc");
    let run = Command::new(std::env::var_os("RUSTDOC").unwrap_or_else(|| "rustdoc".into()))
        .args([
            "--edition",
            "2024",
            "--crate-type",
            "bin",
            "--crate-name",
            "fw",
        ])
        .arg("--document-private-items")
        .arg("-L")
        .arg(format!("dependency={}", deps.display()))
        .arg("--extern")
        .arg(format!("kiln={}", rlib.display()))
        .arg("-o")
        .arg(&out)
        .arg(&main)
        .env("KILN_CACHE", "0")
        .output()
        .expect("rustdoc runs");
    assert!(
        run.status.success(),
        "rustdoc failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The generated items' pages, under `model`'s inner module (what rustdoc links the
    // re-export to), with their docs.
    let inner = out
        .join("fw/model")
        .join(kiln_build::emit::MODULE)
        .join("constant.ARENA_BYTES.html");
    let page = std::fs::read_to_string(&inner)
        .unwrap_or_else(|e| panic!("no page for ARENA_BYTES ({}): {e}", inner.display()));
    assert!(page.contains("Bytes of the activation arena"), "{page}");
    // `model`'s own page lists the module that holds them, with its doc.
    let index = std::fs::read_to_string(out.join("fw/model/index.html")).unwrap();
    assert!(index.contains(kiln_build::emit::MODULE), "{index}");
    assert!(
        index.contains("re-exported into the enclosing module"),
        "{index}"
    );
}
