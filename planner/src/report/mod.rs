//! The plan report: a summary and per-step table (text), JSON, and an SVG of the arena; and
//! the per-layer figures (MACs, bytes moved, kernels) of `kiln plan --layers`.
//!
//! A [`Header`] (filled in by `kiln-build`, which knows the model's bytes, the options and
//! the kernels chosen) adds the reproducibility fields to each: the model's sha256, Kiln's
//! version, the options, the alignment and the kernel variants.

mod analyze;
mod code;
mod header;
mod json;
mod names;
pub mod rates;
mod svg;
mod text;

pub use analyze::{Layer, estimate, layers, layers_text, op_macs};
pub use code::{CodeEstimate, code_work};
pub use header::{Flash, Header, KernelUse, RecordedOptions};
pub use json::{
    JsonAlias, JsonBuffer, JsonPersistent, JsonPiece, JsonRegion, JsonReport, json, json_with,
};
pub use names::{alias_reason, buffer_name};
pub use svg::svg;
pub use text::{text, text_with};
