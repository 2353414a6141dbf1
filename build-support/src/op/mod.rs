//! The operator contract: everything an operator module (`crate::ops::<op>`) writes
//! against, and nothing of the pipeline that drives it. It imports nothing from the rest of
//! the crate. Operator modules import only it (with `kiln-kernels` and the planner's IR);
//! the pipeline (`lower`, `emit`, `exec`, `control`) imports it and the table
//! `crate::ops::OPERATORS`, which sits above both.
//!
//! An operator module holds, for one TFLite operator (or a family sharing a kernel module):
//!
//! - `lower(cx: &Cx<'_>) -> Result<Step>`, its entry in `ops::OPERATORS`: TFLM's `Prepare`
//!   at build time. [`Cx`] is the graph and the operator, with the checks that name a
//!   tensor and a value (`input`, `output`, `quant`, `shape4`, `const_i32`, `check_bias`,
//!   `binary_operands`, `strip_window`, ...). The module checks the types and shapes its
//!   kernels take (refusing with `unsupported`), calls the kernels' `prepare*` (a refusal
//!   through `prepare_error`; tables through [`PerChannel`] and [`Fast`]), chooses a kernel
//!   and returns `cx.step(kernel, inputs, output)`: a [`Step`] with its [`Operand`]s, to
//!   which it adds its scratch bytes, state tensors and memory abilities
//!   (`kiln_planner::kernels::Abilities`: views, in place, slices).
//! - For each kernel it can choose, a type implementing [`Kernel`]:
//!   - `emit(&self, call: &mut Call) -> Result<TokenStream>`: the kernel's statement in
//!     `invoke()`, from the operands' tokens (`call.input(slot)`, `call.output()`, ...),
//!     the constants it emits (`call.params`, `call.table`, `call.per_channel`,
//!     `call.fast`, `call.broadcast`) and its forms (`call.standard`, `call.elementwise`,
//!     and in place when `call.in_place()` says so: `call.over_input_with_scratch`,
//!     `call.narrowing_in_place`), with [`kernel_fn`] for a kernel's path;
//!   - `run(&self, io: &mut Io)` (feature `exec`): the same kernel on the host on `Io`'s
//!     typed operands (`io.i8(slot)`, `io.out_i8()`, ...), for tests and benchmarks.
//!
//! The pipeline's side: the emitter builds a [`Call`] per step over the module's items
//! (`Items`), the host executor an `Io` over tensor `Buffer`s, and the emitter writes
//! [`Control`] steps (control flow, resource variables) itself.

mod call;
mod convert;
mod cx;
mod diag;
#[cfg(feature = "exec")]
mod io;
mod kernel;
mod operand;
mod step;
mod tables;
mod tokens;

pub use call::Call;
pub(crate) use call::Items;
pub(crate) use convert::{activation, bytemuck_i8, elem, padding, positive, types};
pub use cx::Cx;
pub(crate) use diag::{SHIFT_OUT_OF_RANGE, number, prepare_error, unsupported};
#[cfg(feature = "exec")]
pub use io::{Buffer, Io};
#[cfg(feature = "exec")]
pub(crate) use io::{
    Operands, Slices, SlicesMut, f32s, i8s, i16s, i32s, i64s, o8, o16, o32, of, unary_generic,
};
pub use kernel::Kernel;
pub use operand::{Elem, Operand};
pub use step::{Control, ControlKernel, Step};
pub use tables::{Fast, PerChannel};
pub use tokens::kernel_fn;
pub(crate) use tokens::{ints, u};
