//! `kiln-planner`: from `.tflite` bytes to a verified arena plan.
//!
//! A pipeline of stages, one module each:
//!
//! 1. [`reader`]: bytes to a validated [`ir::Graph`] (flatbuffer types stay inside);
//! 2. [`validate`]: data-flow rules (run by the reader);
//! 3. [`schedule`]: the operator order with the smallest peak of live bytes;
//! 4. [`alias`]: which tensors share bytes (views, in-place operators, concatenation
//!    slices), then [`lifetimes`]: which buffers exist and at which steps they are live;
//! 5. [`offsets`]: where each buffer sits in the arena (greedy portfolio, hill climbing,
//!    branch and bound, stopping at the lower bound);
//!    With a memory map, [`regions`] splits the buffers over the RAM regions named,
//!    fastest first, and places each region on its own;
//! 6. [`verify`]: an independent check of the plan, run on every plan;
//! 7. [`report`]: the plan as text, JSON and SVG.
//!
//! [`tiling`] rewrites a graph so that its first, high-resolution operators run one strip of
//! rows at a time (patch-based execution), for plans below the layer-by-layer bound.
//!
//! [`plan()`] runs stages 3 to 6 for the kernels a [`Kernels`] declares ([`kernels`]: their
//! scratch and aliasing abilities, from `kiln-build`'s operator modules; the planner knows no
//! operator by name). Every search has a work budget counted in steps, never wall time, and
//! planning is near-linear in the graph's size. Every failure is a [`diag::Diagnostic`].
//! [`synthetic`] builds random and structured graphs (up to many thousands of operators) for
//! tests and benchmarks, with the declaration of Kiln's kernels restated for them.

pub mod alias;
pub mod diag;
pub mod ir;
pub mod kernels;
pub mod lifetimes;
pub mod offsets;
pub mod plan;
pub mod reader;
pub mod regions;
pub mod report;
pub mod schedule;
pub mod synthetic;
pub mod tiling;
pub mod validate;
pub mod verify;

pub use diag::{Diagnostic, ErrorKind};
pub use ir::Graph;
pub use kernels::{Abilities, Kernels, NoKernels};
pub use plan::{Plan, PlanOptions, plan};
pub use reader::read_model;
