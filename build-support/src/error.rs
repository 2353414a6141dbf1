//! The build.rs front end's [`Error`], and the one-line message both front ends print for
//! a model's diagnostic.

use kiln_planner::diag::Diagnostic;
use std::path::{Path, PathBuf};

/// The message of a model's diagnostic as both front ends print it: the model's file name,
/// then the diagnostic on one line (`model.tflite: the model needs ... bytes of RAM, ...`).
pub fn message(model_name: &str, d: &Diagnostic) -> String {
    let text = d.to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    format!("{model_name}: {}", lines.join(" "))
}

/// The file name of a model path, as messages name the model.
pub(crate) fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// An error of the build.rs front end.
///
/// Its `Debug` is its `Display`, the message `include_model!` gives for the same model: a
/// build script's `fn main() -> Result<(), Box<dyn Error>>` prints the error's `Debug`.
pub enum Error {
    /// The model file could not be read.
    Io(PathBuf, std::io::Error),
    /// The model cannot be compiled.
    Model(PathBuf, Diagnostic),
    /// Kiln panicked on the model: a bug in Kiln (the message of the panic).
    Internal(PathBuf, String),
    /// `OUT_DIR` is not set (not running in a build script) and no directory was given.
    NoOutDir,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io(p, e) => write!(f, "cannot read {}: {e}", p.display()),
            Error::Model(p, d) => f.write_str(&message(&file_name(p), d)),
            Error::Internal(p, m) => write!(
                f,
                "{}: internal error in Kiln, please report it with the model: {m}",
                file_name(p)
            ),
            Error::NoOutDir => f.write_str("OUT_DIR is not set: call compile() from build.rs"),
        }
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(_, e) => Some(e),
            Error::Model(_, d) => Some(d),
            _ => None,
        }
    }
}

/// The message of a caught panic.
pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}
