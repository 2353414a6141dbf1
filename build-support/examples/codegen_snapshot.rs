//! Writes what Kiln generates for every model it is tested on, under several option sets,
//! so that a refactoring of the build side can be checked to change nothing: run it before
//! and after, then `diff -r` the two directories (or compare their `SHA256SUMS`).
//!
//! `cargo run --release -p kiln-build --example codegen_snapshot -- <out dir>`
//!
//! Models: `../shared/models/*.tflite` and `all_outputs/`, `../shared/models/realworld/`,
//! and the repository's `tests/models/`, `tests/misaligned/`, `tests/control_flow/` and
//! `tests/kernel_cases/models/`. Option sets: the default; `optimize = false`; `alias =
//! false`; `preserve_all_tensors`; a memory map of two regions (16 KiB, then the rest);
//! `kiln plan --min-ram` (the smallest plan, tiled where that is smaller); and a RAM budget
//! of 60 % of the default plan's arena (the leaner kernels or a tiling, or the budget
//! error). For each (model, option set): `<model>.<set>.rs`, the formatted code, and
//! `<model>.<set>.json`, the plan JSON; or `<model>.<set>.err`, the message of a refusal.
//! The directory's `SHA256SUMS` lists every file. Deterministic: the same tree gives the
//! same bytes.

use kiln_build::{
    AliasOptions, Budget, Options, PlanOptions, Region, compile_tokens, format_file, message,
    sha256_hex,
};
use std::path::{Path, PathBuf};

fn models(root: &Path) -> Vec<(String, PathBuf)> {
    let shared = std::env::var_os("KILN_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared"))
        .join("models");
    let dirs = [
        ("shared", shared.clone()),
        ("shared_all", shared.join("all_outputs")),
        ("realworld", shared.join("realworld")),
        ("tests", root.join("tests/models")),
        ("misaligned", root.join("tests/misaligned")),
        ("control_flow", root.join("tests/control_flow")),
        ("kcase", root.join("tests/kernel_cases/models")),
    ];
    let mut out = Vec::new();
    for (tag, dir) in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("skipped (missing): {}", dir.display());
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "tflite"))
            .collect();
        files.sort();
        for f in files {
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            out.push((format!("{tag}.{stem}"), f));
        }
    }
    out
}

/// The option sets, by name, for a model file (the budget set needs the default arena).
fn option_sets(file: &Path, default_arena: Option<usize>) -> Vec<(&'static str, Options)> {
    let base = Options {
        model_name: file.file_name().map(|n| n.to_string_lossy().into_owned()),
        model_file: Some(file.to_path_buf()),
        ..Options::default()
    };
    let mut sets = vec![("default", base.clone())];
    let mut o = base.clone();
    o.plan = PlanOptions::unoptimised();
    o.tiling.enabled = false;
    sets.push(("unoptimised", o));
    let mut o = base.clone();
    o.plan.aliasing = AliasOptions::none();
    sets.push(("no_alias", o));
    let mut o = base.clone();
    o.plan.preserve_all_tensors = true;
    sets.push(("preserve_all", o));
    let mut o = base.clone();
    o.plan.regions = vec![
        Region::new(".fast", 16 * 1024),
        Region::new(".slow", 64 * 1024 * 1024),
    ];
    sets.push(("regions", o));
    let mut o = base.clone();
    o.tiling.min_ram = true;
    sets.push(("min_ram", o));
    if let Some(arena) = default_arena.filter(|&a| a > 0) {
        let mut o = base;
        o.ram_budget = Some(Budget::Bytes(arena * 3 / 5));
        sets.push(("budget60", o));
    }
    sets
}

fn main() {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .expect("usage: codegen_snapshot <out dir>"),
    );
    std::fs::create_dir_all(&out).unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut sums = String::new();
    let mut write = |name: String, text: String| {
        sums.push_str(&format!("{}  {name}\n", sha256_hex(text.as_bytes())));
        std::fs::write(out.join(&name), text).unwrap();
    };
    let list = models(&root);
    for (i, (name, file)) in list.iter().enumerate() {
        let bytes = std::fs::read(file).unwrap();
        let file = file.canonicalize().unwrap();
        let default_arena = compile_tokens(&bytes, &option_sets(&file, None)[0].1)
            .ok()
            .map(|c| c.plan.arena_bytes);
        for (set, options) in option_sets(&file, default_arena) {
            let key = format!("{name}.{set}");
            // Paths differ between checkouts: only the file name goes into the snapshot.
            let local = file.to_string_lossy().into_owned();
            match compile_tokens(&bytes, &options) {
                Ok(c) => {
                    let code = format_file(&c.tokens, &key).replace(&local, "<model>");
                    write(format!("{key}.rs"), code);
                    write(format!("{key}.json"), c.report_json());
                }
                Err(d) => write(format!("{key}.err"), message(&name[..], &d)),
            }
        }
        if i % 50 == 0 {
            eprintln!("{}/{}: {name}", i + 1, list.len());
        }
    }
    std::fs::write(out.join("SHA256SUMS"), sums).unwrap();
    eprintln!("{} models written to {}", list.len(), out.display());
}
