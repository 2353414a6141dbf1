//! The plan cache: what an expansion of `include_model!` produced, kept under the target
//! directory, so that the next expansion of the same call (every `cargo check` after an
//! edit elsewhere, every rust-analyzer pass) reads it instead of planning again.
//!
//! - **Key**: the sha256 of the model's bytes, the macro's arguments as written (every
//!   option), the model's resolved path, Kiln's version and the identity of this build of
//!   the macro (`KILN_BUILD_ID`, a hash of Kiln's sources: see `build.rs`). The generated
//!   code does not depend on the target (it has no `cfg`; the kernels crate chooses its
//!   microkernels), so the target is not in the key.
//! - **Value**: the generated tokens as text, or the compile error (its message and which
//!   argument it points at). Written to a temporary file and renamed, so a reader never
//!   sees half a file; an unreadable or foreign file is a miss.
//! - **Where**: `$CARGO_TARGET_DIR/kiln-cache/`, else `target/kiln-cache/` beside the
//!   nearest `Cargo.lock` above the crate (the workspace's target directory when
//!   `CARGO_TARGET_DIR` is unset); safe to delete at any time. `KILN_CACHE=0` turns it off.
//!
//! Not cached (each expansion plans): calls whose budget is a named constant (their
//! compile-time checks carry the user's spans, which text cannot keep) and calls with
//! `report = "..."` (the reports are written by the expansion).

use std::path::{Path, PathBuf};

/// Bumped when the file format changes.
const FORMAT: &str = "kiln-plan-cache 1";

/// Which argument of the call a cached error points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    Path,
    RamBudget,
    ReservedRam,
    Regions,
    FlashBudget,
}

impl At {
    fn name(self) -> &'static str {
        match self {
            At::Path => "path",
            At::RamBudget => "ram_budget",
            At::ReservedRam => "reserved_ram",
            At::Regions => "regions",
            At::FlashBudget => "flash_budget",
        }
    }

    fn parse(s: &str) -> Option<At> {
        [
            At::Path,
            At::RamBudget,
            At::ReservedRam,
            At::Regions,
            At::FlashBudget,
        ]
        .into_iter()
        .find(|a| a.name() == s)
    }
}

/// What an expansion produced.
#[derive(Debug, PartialEq, Eq)]
pub enum Entry {
    /// The generated code, as text.
    Tokens(String),
    /// A compile error: its message and where it points.
    Error(At, String),
}

/// The cache directory, if there is one to use.
pub fn dir() -> Option<PathBuf> {
    if std::env::var_os("KILN_CACHE").is_some_and(|v| v == "0") {
        return None;
    }
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        let t = PathBuf::from(t);
        let t = if t.is_absolute() {
            t
        } else {
            std::env::current_dir().ok()?.join(t)
        };
        return Some(t.join("kiln-cache"));
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    manifest
        .ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .map(|d| d.join("target").join("kiln-cache"))
}

/// The key of a call: see the module docs.
pub fn key(model: &[u8], args: &str, path: &Path) -> String {
    let mut text = String::new();
    for part in [
        FORMAT,
        kiln_build::KILN_VERSION,
        env!("KILN_BUILD_ID"),
        args,
        &path.to_string_lossy(),
        &kiln_build::sha256_hex(model),
    ] {
        text.push_str(part);
        text.push('\0');
    }
    kiln_build::sha256_hex(text.as_bytes())
}

/// The entry of `key` in `dir`, if there is a readable one.
pub fn load(dir: &Path, key: &str) -> Option<Entry> {
    let text = std::fs::read_to_string(dir.join(format!("{key}.txt"))).ok()?;
    let (head, body) = text.split_once('\n')?;
    let (format, kind) = head.rsplit_once(' ')?;
    if format != FORMAT {
        return None;
    }
    match kind {
        "tokens" => Some(Entry::Tokens(body.to_string())),
        _ => Some(Entry::Error(
            At::parse(kind.strip_prefix("error:")?)?,
            body.to_string(),
        )),
    }
}

/// Stores `entry` as `key` in `dir`; a failure to write is ignored (the next expansion
/// plans again).
pub fn store(dir: &Path, key: &str, entry: &Entry) {
    let (kind, body) = match entry {
        Entry::Tokens(t) => ("tokens".to_string(), t.as_str()),
        Entry::Error(at, m) => (format!("error:{}", at.name()), m.as_str()),
    };
    let text = format!("{FORMAT} {kind}\n{body}");
    let tmp = dir.join(format!("{key}.{}.tmp", std::process::id()));
    if std::fs::create_dir_all(dir).is_ok() && std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, dir.join(format!("{key}.txt")));
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_foreign_files_miss() {
        let dir = std::env::temp_dir().join(format!("kiln-cache-test-{}", std::process::id()));
        let k = key(
            b"model",
            "\"m.tflite\", ram_budget = 4096",
            Path::new("/m.tflite"),
        );
        assert_eq!(k.len(), 64);
        assert_ne!(
            k,
            key(
                b"model2",
                "\"m.tflite\", ram_budget = 4096",
                Path::new("/m.tflite")
            )
        );
        assert_ne!(
            k,
            key(
                b"model",
                "\"m.tflite\", ram_budget = 4097",
                Path::new("/m.tflite")
            )
        );
        assert_eq!(load(&dir, &k), None);
        for e in [
            Entry::Tokens("pub const ARENA_BYTES: usize = 16;\nfn f() {}".into()),
            Entry::Error(At::RamBudget, "m.tflite: needs 9 bytes\nof RAM".into()),
        ] {
            store(&dir, &k, &e);
            assert_eq!(load(&dir, &k), Some(e));
        }
        std::fs::write(dir.join(format!("{k}.txt")), "something else\n").unwrap();
        assert_eq!(load(&dir, &k), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
