//! The arguments of a kernel: an [`Operand`] (a tensor, or an optional one such as a bias)
//! and the element types the generic kernels are instantiated with ([`Elem`]).

use kiln_planner::ir::TensorId;

/// A tensor argument of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A tensor the kernel always reads.
    Tensor(TensorId),
    /// An optional input (a bias): the kernel takes an `Option`.
    Optional(Option<TensorId>),
}

impl Operand {
    /// The tensor, if present.
    pub fn tensor(self) -> Option<TensorId> {
        match self {
            Operand::Tensor(t) => Some(t),
            Operand::Optional(t) => t,
        }
    }
}

/// Element types the generic kernels are instantiated with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    I8,
    I16,
    I32,
    F32,
}
