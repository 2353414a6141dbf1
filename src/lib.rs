//! Kiln: a TensorFlow Lite model baked into firmware at compile time.
//!
//! This is the one crate a firmware project depends on. It is `#![no_std]` and needs no
//! allocator. [`include_model!`] (or `kiln-build` from `build.rs`, which writes the same code
//! into a file) reads a `.tflite` file on the host while the crate compiles, plans its
//! tensor arena, verifies the plan and expands to the model's code: a static arena, the
//! weights as aligned statics read from the file, and one kernel call per operator. See
//! `ARCHITECTURE.md` at the repository root for the whole map.
//!
//! # Example
//!
//! ```
//! mod model {
//!     // A path relative to the calling file, else to `CARGO_MANIFEST_DIR`.
//!     kiln::include_model!("tests/models/mlp_int8.tflite", ram_budget = 8 * 1024);
//! }
//!
//! // Sizes are consts: check them at compile time.
//! const _: () = assert!(model::ARENA_BYTES + model::PERSISTENT_BYTES <= 8 * 1024);
//! assert_eq!((model::INPUTS, model::OUTPUTS), (1, 1));
//! assert_eq!(model::INPUT_SHAPE, [1, 64]);
//! assert_eq!(model::INPUT_DTYPE, kiln::DType::I8);
//!
//! let mut m = model::Model::take().expect("handed out once");
//! // Floats in, quantized as TFLM's QUANTIZE would (`INPUT_QUANT: kiln::Quant<i8>`).
//! let features = [0.25f32; 64];
//! model::INPUT_QUANT.quantize_slice(&features, m.input_mut());
//! m.invoke();
//! // Scores out (`OUTPUT_QUANT` dequantizes as TFLM's DEQUANTIZE).
//! let scores: [f32; 10] = m.output().map(|q| model::OUTPUT_QUANT.dequantize(q));
//! let sum: f32 = scores.iter().sum();
//! assert!((sum - 1.0).abs() < 0.05, "softmax sums to 1: {sum}");
//! ```
//!
//! # What a model module holds
//!
//! `include_model!` puts these items into the module that calls it (one model per module:
//! a second one in the same module is an error that says so).
//!
//! | item | what |
//! |---|---|
//! | `ARENA_BYTES: usize` | bytes of the activation arena (scratch included), one static |
//! | `PERSISTENT_BYTES: usize` | bytes of state kept between `invoke()` calls (LSTM/SVDF variables), 0 if none |
//! | `WEIGHTS_BYTES: usize` | bytes of the model's constant buffers in flash, as the kernels read them |
//! | `INPUTS: usize`, `OUTPUTS: usize` | the number of inputs and outputs |
//! | `INPUT_SHAPE: [usize; RANK]` | the input's shape |
//! | `INPUT_DTYPE: DType` | its element type ([`DType`]) |
//! | `INPUT_SCALE: f32`, `INPUT_ZERO_POINT: i32` | its quantization (scale 0 if not quantized, or quantized per channel) |
//! | `INPUT_QUANT: Quant<i8>` (or `Quant<i16>`, `Quant<u8>`) | the same as a [`Quant`], for int8, int16 and uint8 inputs quantized per tensor (a float32 input's is a [`NotQuantized<f32>`]: write floats, see [`quant`]) |
//! | `OUTPUT_SHAPE`, `OUTPUT_DTYPE`, `OUTPUT_SCALE`, `OUTPUT_ZERO_POINT`, `OUTPUT_QUANT` | the same for the output |
//! | `ARENA_ALIGN: usize`, `Arena` | the arena's alignment, and a buffer type for it ([`Aligned`]) |
//! | `OPERATORS: [(usize, &str); N]` | the operators `invoke()` runs, in order: (index in the model, name) |
//! | `State` | a stateful model's state (`PERSISTENT_BYTES > 0`), for `ModelIn::with_arena` |
//! | `ModelIn<'a>` | the compiled model over an arena it borrows: its static one or a buffer of the caller's |
//! | `Model` | `ModelIn<'static>`, over the model's own static arena |
//! | with `regions = [...]` (a memory map), instead of `ARENA_ALIGN` and `Arena`: `ARENA0_BYTES`, `ARENA1_BYTES`, ..., `ARENA0_ALIGN`, ..., `Arena0`, ... | per region (fastest first) the bytes the plan uses of it (one static each, in its link section), its alignment and a buffer type; `REGIONS: [(&str, usize, usize); R]` lists (section, bytes used, bytes given); `ARENA_BYTES` is then all of them, laid one after another |
//!
//! With several inputs or outputs the names are numbered from 0: `INPUT0_SHAPE`,
//! `INPUT1_SHAPE`, ..., `OUTPUT0_QUANT`, ... (a model with one input has `INPUT_SHAPE`
//! only).
//!
//! `Model` methods:
//!
//! | method | what |
//! |---|---|
//! | `Model::take() -> Option<Model>` | the model, the first time only (it owns the static arena), with its state reset |
//! | `ModelIn::with_arena(&mut Arena)` (`, &mut State` if stateful) | the model over a buffer of the caller's, as often as wanted (one buffer can serve several models run in turn: size it with [`max`]) |
//! | `ModelIn::with_regions(&mut Arena0, &mut Arena1, ...)` (`, &mut State`) | with a memory map, instead of `with_arena`: one buffer of the caller's per region |
//! | `invoke_with(&mut self, hook)` | `invoke()`, calling `hook(op, name, Phase)` before and after each operator ([`Phase`]) |
//! | `tensor_bytes(&self, t) -> Option<&[u8]>` | with `preserve_all_tensors = true` only: any activation's bytes after `invoke()`, by tensor index |
//! | `reset(&mut self)` | resets the state kept between calls as TFLM does (a no-op for stateless models) |
//! | `invoke(&mut self)` | runs the model once, inputs to outputs |
//! | `input_mut(&mut self) -> &mut [T; N]` | the input, typed (`input0_mut()`, `input1_mut()`, ... with several) |
//! | `output(&self) -> &[T; N]` | the output, typed (`output0()`, `output1()`, ... with several) |
//! | `input_bytes_mut(&mut self, i) -> &mut [u8]` | input `i`'s raw bytes (little-endian); panics if `i >= INPUTS` |
//! | `output_bytes(&self, i) -> &[u8]` | output `i`'s raw bytes; panics if `i >= OUTPUTS` |
//!
//! Write the inputs before every `invoke()`: the arena reuses an input's bytes once the
//! model has read them. Items a firmware does not use give no warnings.
//!
//! Several inputs, numbered:
//!
//! ```
//! mod add {
//!     kiln::include_model!("tests/kernel_cases/models/add_int8.tflite");
//! }
//!
//! assert_eq!(add::INPUTS, 2);
//! let mut m = add::Model::take().unwrap();
//! let (a, b) = (add::INPUT0_QUANT, add::INPUT1_QUANT);
//! m.input0_mut().fill(a.quantize(0.5));
//! m.input1_mut().fill(b.quantize(0.25));
//! m.invoke();
//! let sum = add::OUTPUT_QUANT.dequantize(m.output()[0]);
//! assert!((sum - 0.75).abs() <= 2.0 * add::OUTPUT_SCALE + a.scale() + b.scale(), "{sum}");
//! assert_eq!(m.output_bytes(0).len(), add::OUTPUT_SHAPE.iter().product::<usize>());
//! ```
//!
//! # Options
//!
//! `include_model!("model.tflite", ram_budget = <const expr>, flash_budget = <const expr>,
//! align = <power of two>, optimize = <bool>, reorder = <bool>, alias = <bool>,
//! link_section = "<section>", preserve_all_tensors = <bool>, preserve_inputs = <bool>,
//! regions = [("<section>", <bytes>), ...], tile = <bool>, max_extra_macs = <percent>)`: see
//! [`include_model!`]. Under a `ram_budget` in bytes that no plan layer by layer meets, or
//! meets only with slower kernels, Kiln runs the model's first operators one strip of rows at
//! a time where that fits (at most `max_extra_macs` % more multiply-accumulates, default 20;
//! `tile = false` never). A budget over which the model does not fit is a compile error with
//! the bytes needed, the budget and the overage, also when the budget is a named constant.
//!
//! The modules `runtime` and `kernels` are what generated code calls; they are public for
//! that reason and hidden from these docs.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate self as kiln;

#[doc(hidden)]
pub use kiln_kernels as kernels;
pub use kiln_macros::include_model;

pub mod quant;
#[doc(hidden)]
pub mod runtime;
pub mod stream;

#[cfg(feature = "defmt")]
mod defmt_impls;
pub use quant::{NotQuantized, Quant};
/// What a user's own arena and the per-operator hook need (`ModelIn::with_arena`,
/// `invoke_with`); the rest of `runtime` is for generated code.
pub use runtime::{Aligned, Phase, align, max, max_of};
pub use stream::RowSource;

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
    /// `u32`
    U32,
    /// `u64`
    U64,
}
