//! What the planner knows of the kernels that will run each operator: the scratch they need
//! and what they can do with memory (their aliasing abilities), as the build side declares
//! them (`kiln-build`'s operator modules, one per operator). The planner never derives
//! these from operator names: it decides aliasing from [`Abilities`], and the verifier checks
//! that every mode of a plan was declared and meets its kind's memory rules.

use crate::ir::{Graph, Op};

/// The kernels of a graph, as far as planning is concerned.
pub trait Kernels {
    /// Arena scratch bytes operator `op`'s kernel needs in its ordinary form.
    fn scratch_bytes(&self, graph: &Graph, op: &Op) -> usize;
    /// What `op`'s kernels can do with memory.
    fn abilities(&self, graph: &Graph, op: &Op) -> &Abilities;
}

/// What an operator's kernels can do with memory. Each ability is a promise of the kernel
/// (tested there); the planner takes one only where its kind's memory rules hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Abilities {
    /// The output can be input 0's bytes unchanged (RESHAPE, SQUEEZE, EXPAND_DIMS, a CAST
    /// that keeps every bit): the operator then needs no code.
    pub view: bool,
    /// Inputs (indices into the operator's inputs) an elementwise kernel can overwrite with
    /// its output, which has their shape and type.
    pub in_place: Vec<usize>,
    /// A narrowing kernel (QUANTIZE float32 -> int8, int16 -> int8, ...; an int8 sequence
    /// LSTM whose state is no wider than its input rows) that can write its output over
    /// input 0 front to back, unit by unit ([`Narrowing`]).
    pub narrowing_in_place: Option<Narrowing>,
    /// A convolution that can write its output over input 0 while reading it.
    pub conv_in_place: Option<ConvInPlace>,
    /// Byte offsets in the output at which the inputs can be placed as slices (in input
    /// order, tiling the output): the operator then needs no code.
    pub concat_slices: Option<Vec<usize>>,
    /// The input (an index into the operator's inputs) whose bytes the outputs can be, as
    /// slices at these byte offsets (in output order, ascending, not overlapping, within the
    /// input): SPLIT, SPLIT_V and UNPACK on an outer axis (tiling it), a SLICE whose box is
    /// contiguous. The operator then needs no code.
    pub split_slices: Option<(usize, Vec<usize>)>,
}

/// How a narrowing kernel runs over its own input 0: input and output are each `units`
/// equal runs of bytes (elements for QUANTIZE; rows, a time step of a batch row, for an
/// LSTM), the output's no longer; the kernel reads input unit `i` before it writes output
/// unit `i`, and reads no unit before `i` after that. So the output can start anywhere up to
/// input 0's start plus the difference of the unit sizes (the planner places it at the
/// start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Narrowing {
    pub units: usize,
    /// Scratch bytes of the in-place form (an LSTM's output row, computed before it is
    /// stored over its input row).
    pub scratch_bytes: usize,
}

impl Narrowing {
    /// Bytes per unit of input `input_bytes` and output `output_bytes`, if they split into
    /// [`Narrowing::units`] equal runs, the output's no longer and not empty.
    pub fn unit_bytes(&self, input_bytes: usize, output_bytes: usize) -> Option<(usize, usize)> {
        let n = self.units;
        if n == 0
            || output_bytes == 0
            || !input_bytes.is_multiple_of(n)
            || !output_bytes.is_multiple_of(n)
        {
            return None;
        }
        let (ea, ec) = (input_bytes / n, output_bytes / n);
        (ec <= ea).then_some((ea, ec))
    }
}

/// How a convolution runs over its own input, and the scratch that needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvInPlace {
    pub kind: ConvInPlaceKind,
    /// Scratch bytes the in-place form needs besides the ordinary scratch (one output
    /// channel plane, one output pixel, or a ring of output rows).
    pub scratch_bytes: usize,
}

/// The ways a convolution runs in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvInPlaceKind {
    /// One output channel plane at a time through a scratch plane, stored over that channel
    /// of the input (depthwise, depth multiplier 1): the output starts at the input's bytes
    /// and is no larger.
    ChannelPlanes,
    /// One output pixel at a time through a scratch pixel (pointwise, 1x1 stride 1): the
    /// output starts at the input's bytes if it is smaller, ends at their end if larger.
    Pixels,
    /// One output row at a time, each stored over the input once the rows after it no
    /// longer read what it covers (any other window; output rows no longer than input rows,
    /// per batch): the output starts at the input's bytes and is no larger.
    Rows,
}

/// No ability and no scratch: every tensor gets its own buffer. For planning tensors alone
/// (tests, graphs whose kernels are not known).
pub struct NoKernels;

/// The declaration of an operator without abilities.
pub static NO_ABILITIES: Abilities = Abilities {
    view: false,
    in_place: Vec::new(),
    narrowing_in_place: None,
    conv_in_place: None,
    concat_slices: None,
    split_slices: None,
};

impl Kernels for NoKernels {
    fn scratch_bytes(&self, _: &Graph, _: &Op) -> usize {
        0
    }
    fn abilities(&self, _: &Graph, _: &Op) -> &Abilities {
        &NO_ABILITIES
    }
}

/// Declarations per operator (by id), e.g. what `kiln-build` lowered: `(scratch bytes,
/// abilities)`; operators without one have neither.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    pub ops: Vec<Option<(usize, Abilities)>>,
}

impl Kernels for Declared {
    fn scratch_bytes(&self, _: &Graph, op: &Op) -> usize {
        self.ops
            .get(op.id.0)
            .and_then(Option::as_ref)
            .map_or(0, |d| d.0)
    }
    fn abilities(&self, _: &Graph, op: &Op) -> &Abilities {
        self.ops
            .get(op.id.0)
            .and_then(Option::as_ref)
            .map_or(&NO_ABILITIES, |d| &d.1)
    }
}

/// The abilities of `base` with the scratch of a function: for tests of other scratch
/// contracts.
pub struct WithScratch<'a, F: Fn(&Graph, &Op) -> usize>(pub F, pub &'a dyn Kernels);

impl<F: Fn(&Graph, &Op) -> usize> Kernels for WithScratch<'_, F> {
    fn scratch_bytes(&self, graph: &Graph, op: &Op) -> usize {
        (self.0)(graph, op)
    }
    fn abilities(&self, graph: &Graph, op: &Op) -> &Abilities {
        self.1.abilities(graph, op)
    }
}

#[cfg(test)]
mod tests {
    use super::Narrowing;

    #[test]
    fn narrowing_units_split_input_and_output_evenly() {
        // An LSTM of 28 rows: 28-byte input rows, 20-byte output rows.
        let lstm = Narrowing {
            units: 28,
            scratch_bytes: 20,
        };
        assert_eq!(lstm.unit_bytes(784, 560), Some((28, 20)));
        // Wider output rows, rows that do not divide, no units, an empty output.
        assert_eq!(lstm.unit_bytes(560, 784), None);
        assert_eq!(lstm.unit_bytes(785, 560), None);
        assert_eq!(
            Narrowing {
                units: 0,
                scratch_bytes: 0
            }
            .unit_bytes(4, 4),
            None
        );
        assert_eq!(lstm.unit_bytes(784, 0), None);
        // QUANTIZE float32 -> int8 of 10 elements.
        let q = Narrowing {
            units: 10,
            scratch_bytes: 0,
        };
        assert_eq!(q.unit_bytes(40, 10), Some((4, 1)));
    }
}
