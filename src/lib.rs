//! Kiln: a TensorFlow Lite model baked into firmware at compile time.
//!
//! This is the one crate a firmware project depends on. It is `#![no_std]`, needs no
//! allocator, and re-exports the `no_std` kernels that generated code calls.
//!
//! The planner (`kiln-planner`) reads a `.tflite` file on the host, plans its tensor arena
//! and verifies the plan; see `ARCHITECTURE.md` at the repository root for the whole map.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate self as kiln;

pub use kiln_kernels as kernels;
pub use kiln_macros::include_model;

pub mod quant;
pub mod runtime;

pub use quant::Quant;

/// Element type of a model input or output, as generated code reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    /// `f32`
    F32,
    /// `i8`
    I8,
    /// `u8`
    U8,
    /// `i16`
    I16,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `bool`, one byte each
    Bool,
}
