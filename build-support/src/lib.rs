//! `kiln-build`: compile a `.tflite` model from `build.rs`, and the one emitter.
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     kiln_build::Model::new("models/hello_world_int8.tflite")
//!         .ram_budget(64 * 1024)
//!         .compile("hello")?;
//!     Ok(())
//! }
//! ```
//! then, in the crate: `mod hello { include!(concat!(env!("OUT_DIR"), "/hello.rs")); }`.
//!
//! [`Model::compile`] writes `$OUT_DIR/<name>.rs` (formatted, first line `// @generated`),
//! `<name>.plan.txt`, `<name>.plan.svg` and `<name>.plan.json` beside it (and into
//! [`Model::report_dir`] if given), and prints `cargo:rerun-if-changed`.
//! `kiln::include_model!` calls the same [`compile_tokens`], so both front ends emit the same
//! tokens for the same model and options.
//!
//! The crate in floors (ARCHITECTURE.md, "The build side's floors"), each importing only
//! from the ones below: [`op`], the operator contract; [`ops`], one module per operator and
//! the table of them; the pipeline ([`lower`] graphs to steps, [`control`] subgraphs,
//! [`emit`] steps to tokens, `exec` steps on the host, [`compile_tokens`] choosing among
//! plans and tilings); and the front ends ([`Model`], the re-exports here).

mod choose;
mod compile;
mod compiled;
pub mod control;
mod cost;
pub mod emit;
mod error;
#[cfg(feature = "exec")]
pub mod exec;
mod header;
pub mod lower;
mod model;
pub mod op;
pub mod ops;
mod options;
mod tile;

pub use compile::compile_tokens;
pub use compiled::Compiled;
pub use error::{Error, message};
pub use header::{KILN_VERSION, recorded_options, sha256_hex};
pub use kiln_planner::PlanOptions;
pub use kiln_planner::alias::AliasOptions;
pub use kiln_planner::diag::ErrorKind;
pub use kiln_planner::regions::Region;
pub use kiln_planner::report::{Header, KernelUse, RecordedOptions};
pub use model::{Model, format_file};
pub use options::{Budget, Options, TilingOptions};
pub use tile::TilingReport;
