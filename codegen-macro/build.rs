//! Gives the macro an identity for its plan cache (`src/cache.rs`): `KILN_BUILD_ID`, a hash
//! of the sources that decide what it generates (this crate, `kiln-build`, `kiln-planner`,
//! `kiln-kernels`) where they sit beside it (a path or git dependency, this repository), so
//! that an edited Kiln never reads an old entry; a published crate is immutable, and its
//! version (in the key too) suffices.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

fn main() {
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let mut hasher = DefaultHasher::new();
    let mut files = 0usize;
    for dir in [
        "codegen-macro/src",
        "build-support/src",
        "planner/src",
        "kernels/src",
    ] {
        let dir = here.join("..").join(dir);
        if dir.is_dir() {
            println!("cargo::rerun-if-changed={}", dir.display());
            files += hash_dir(&dir, &mut hasher);
        }
    }
    println!("cargo::rerun-if-changed=build.rs");
    println!(
        "cargo::rustc-env=KILN_BUILD_ID={:016x}-{files}",
        hasher.finish()
    );
}

/// Hashes every file under `dir` (path and bytes, in sorted order); returns how many.
fn hash_dir(dir: &Path, hasher: &mut DefaultHasher) -> usize {
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(_) => return 0,
    };
    entries.sort();
    let mut n = 0;
    for p in entries {
        if p.is_dir() {
            n += hash_dir(&p, hasher);
        } else if let Ok(bytes) = std::fs::read(&p) {
            p.file_name().hash(hasher);
            bytes.hash(hasher);
            n += 1;
        }
    }
    n
}
