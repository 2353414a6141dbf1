//! [`Step`]: what an operator module's `lower` returns, one operator lowered to one kernel
//! call (the [`Kernel`], its operands, outputs and state, its scratch and the memory
//! abilities it declares to the planner); and the [`Control`] steps, which the emitter
//! writes itself.

use super::call::Call;
#[cfg(feature = "exec")]
use super::io::Io;
use super::kernel::Kernel;
use super::operand::Operand;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{OpId, TensorId};
use kiln_planner::kernels::Abilities;
use proc_macro2::TokenStream;

/// One operator lowered to one kernel call.
#[derive(Debug)]
pub struct Step {
    pub op: OpId,
    pub kernel: Box<dyn Kernel>,
    /// Arena scratch bytes the kernel needs in its ordinary form.
    pub scratch_bytes: usize,
    /// What the kernel can do with memory (views, in-place forms, slices): the planner
    /// decides aliasing from these alone.
    pub abilities: Abilities,
    /// Tensors the kernel reads, in argument order.
    pub inputs: Vec<Operand>,
    /// Variable tensors (persistent state) the kernel reads and writes, before the output.
    pub states: Vec<TensorId>,
    /// Tensors the kernel writes, in argument order.
    pub outputs: Vec<TensorId>,
    /// Whether its in-place convolution form (`abilities.conv_in_place`) is much slower than
    /// its ordinary kernel (a fast kernel's): then it is planned in place only when the RAM
    /// budget needs it (`compile_tokens`).
    pub slow_in_place: bool,
    /// A smaller scratch the kernel also runs with, more slowly (a fast convolution without
    /// its widened pixels): planned only when the RAM budget needs it (`compile_tokens`).
    pub lean_scratch_bytes: Option<usize>,
    /// Control flow or a resource variable access: written by the emitter itself
    /// (`emit::control`), not by a kernel; `kernel` is then [`ControlKernel`].
    pub control: Option<Control>,
    /// The same operator on a kernel without scratch (a fast convolution's reference
    /// kernel), byte-identical and slower: planned only as the last, smallest plan, taken
    /// where no faster plan meets the RAM budget (`compile_tokens`). Its own
    /// `without_scratch` is `None`.
    pub without_scratch: Option<Box<Step>>,
}

impl Step {
    /// This step, with `reference` as its form without scratch ([`Step::without_scratch`]).
    pub fn or_without_scratch(mut self, reference: Step) -> Step {
        self.without_scratch = Some(Box::new(reference));
        self
    }
}

/// What a control flow or resource variable step does (see `crate::control`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Runs one of two subgraphs on the condition (input 0); the scratch holds either's arena.
    If {
        then_subgraph: usize,
        else_subgraph: usize,
    },
    /// Runs `body` while `cond` says so; the loop variables live in the outputs, the scratch
    /// holds either subgraph's arena.
    While { cond: usize, body: usize },
    /// Runs `init` once, at the first `invoke()` after a reset.
    CallOnce { init: usize },
    /// Names a resource variable: no code.
    VarHandle,
    /// Copies a resource variable (the state) to the output.
    ReadVariable,
    /// Copies the input to a resource variable (the state).
    AssignVariable,
}

/// The kernel of a [`Control`] step. Such steps are written by the emitter (control flow
/// runs other subgraphs' steps, which no kernel knows) and only run in generated code:
/// the host executor runs single subgraphs.
#[derive(Debug)]
pub struct ControlKernel;

impl Kernel for ControlKernel {
    fn emit(&self, _call: &mut Call<'_, '_>) -> Result<TokenStream> {
        Err(Diagnostic::new(
            ErrorKind::InvalidPlan,
            "a control flow step is written by the emitter's control flow path, not as a \
             kernel call",
        ))
    }

    #[cfg(feature = "exec")]
    fn run(&self, _io: &mut Io<'_>) {
        panic!(
            "control flow and resource variables run only in generated code: the host \
             executor runs single subgraphs"
        );
    }
}
