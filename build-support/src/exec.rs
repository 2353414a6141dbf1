//! A host executor for lowered steps, for tests only (feature `exec`).
//!
//! It runs the same [`Step`]s the emitter renders, calling the same kernels with the same
//! parameters, with each tensor in its own aligned host buffer. Kernel tests use it to run
//! thousands of single-operator models against TFLM without generating code for each.
//! Generated firmware never contains it.

use crate::lower::{Elem, Operand, Step};
use kiln_planner::ir::{Graph, TensorId};

/// Tensor bytes, 16-byte aligned (stored as `u128`s).
#[derive(Clone, Debug, Default)]
pub struct Buffer {
    words: Vec<u128>,
    len: usize,
}

impl Buffer {
    pub(crate) fn zeroed(len: usize) -> Self {
        Buffer {
            words: vec![0; len.div_ceil(16)],
            len,
        }
    }

    fn from_bytes(bytes: &[u8]) -> Self {
        let mut b = Self::zeroed(bytes.len());
        b.bytes_mut().copy_from_slice(bytes);
        b
    }

    /// The bytes.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len]
    }

    /// The bytes, mutable.
    #[inline]
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.words)[..self.len]
    }
}

/// Runs `steps` of `graph` with the given graph inputs; returns every tensor's bytes
/// (constants, inputs, and everything the steps wrote), indexed by tensor.
pub fn run(graph: &Graph, steps: &[Step], inputs: &[&[u8]]) -> Vec<Buffer> {
    let mut t = reset(graph);
    invoke(graph, steps, &mut t, inputs);
    t
}

/// Runs `steps` of `graph` once per input set, as consecutive `invoke()` calls after one
/// `reset()`: the variable tensors (operators' state) carry over from one to the next.
/// Returns every tensor's bytes after each invoke.
pub fn run_sequence(graph: &Graph, steps: &[Step], inputs: &[Vec<&[u8]>]) -> Vec<Vec<Buffer>> {
    let mut t = reset(graph);
    inputs
        .iter()
        .map(|xs| {
            invoke(graph, steps, &mut t, xs);
            t.clone()
        })
        .collect()
}

/// Every tensor's buffer as after `reset()`: constants, zeroed activations, variables filled
/// with their reset byte.
fn reset(graph: &Graph) -> Vec<Buffer> {
    let mut t: Vec<Buffer> = graph
        .tensors
        .iter()
        .map(|x| match x.data() {
            Some(d) => Buffer::from_bytes(d),
            None => Buffer::zeroed(x.bytes()),
        })
        .collect();
    for (i, x) in graph.tensors.iter().enumerate() {
        if x.kind == kiln_planner::ir::TensorKind::Variable {
            t[i].bytes_mut()
                .fill(crate::lower::reset_byte(graph, TensorId(i)));
        }
    }
    t
}

/// One `invoke()`: writes the graph inputs, then runs every step.
fn invoke(graph: &Graph, steps: &[Step], t: &mut [Buffer], inputs: &[&[u8]]) {
    for (&id, bytes) in graph.inputs.iter().zip(inputs) {
        t[id.0].bytes_mut().copy_from_slice(bytes);
    }
    for step in steps {
        let out_id = step.outputs[0];
        let mut out = std::mem::take(&mut t[out_id.0]);
        let mut more: Vec<Buffer> = step.outputs[1..]
            .iter()
            .map(|o| std::mem::take(&mut t[o.0]))
            .collect();
        let mut states: Vec<Buffer> = step
            .states
            .iter()
            .map(|s| std::mem::take(&mut t[s.0]))
            .collect();
        run_step_outputs(step, t, &mut states, out.bytes_mut(), &mut more);
        for (s, b) in step.states.iter().zip(states) {
            t[s.0] = b;
        }
        for (o, b) in step.outputs[1..].iter().zip(more) {
            t[o.0] = b;
        }
        t[out_id.0] = out;
    }
}

/// The operands of one kernel call on the host: its inputs' bytes, its state buffers and
/// its output. Kernels read them typed (`Io::i8(slot)`, `Io::out_i8()`, ...).
pub struct Io<'a> {
    inputs: Operands<'a>,
    states: &'a mut [Buffer],
    out: &'a mut [u8],
    /// Outputs after the first (operators with several outputs).
    more: &'a mut [Buffer],
}

/// How many inputs [`Io::with_inputs`] and outputs [`Io::with_outs`] collect without a heap
/// allocation (the benchmarks time the call).
const FEW: usize = 8;

/// A step's operands, each looked up when the kernel asks for it: nothing is collected
/// before the call (the benchmarks time it).
struct Operands<'a> {
    ops: &'a [Operand],
    t: &'a [Buffer],
    len: usize,
}

impl<'a> Operands<'a> {
    #[inline]
    fn get(&self, slot: usize) -> Option<&'a [u8]> {
        let id = self.ops.get(slot)?.tensor()?;
        Some(self.t[id.0].bytes())
    }
}

/// Byte views as the element types kernels take.
pub(crate) fn i8s(b: &[u8]) -> &[i8] {
    bytemuck::cast_slice(b)
}
pub(crate) fn i16s(b: &[u8]) -> &[i16] {
    bytemuck::cast_slice(b)
}
pub(crate) fn i32s(b: &[u8]) -> &[i32] {
    bytemuck::cast_slice(b)
}
pub(crate) fn f32s(b: &[u8]) -> &[f32] {
    bytemuck::cast_slice(b)
}
pub(crate) fn i64s(b: &[u8]) -> &[i64] {
    bytemuck::cast_slice(b)
}
pub(crate) fn o8(b: &mut [u8]) -> &mut [i8] {
    bytemuck::cast_slice_mut(b)
}
pub(crate) fn o16(b: &mut [u8]) -> &mut [i16] {
    bytemuck::cast_slice_mut(b)
}
pub(crate) fn o32(b: &mut [u8]) -> &mut [i32] {
    bytemuck::cast_slice_mut(b)
}
pub(crate) fn of(b: &mut [u8]) -> &mut [f32] {
    bytemuck::cast_slice_mut(b)
}

impl<'a> Io<'a> {
    /// Input `slot`'s bytes (it must be present).
    pub fn input(&self, slot: usize) -> &'a [u8] {
        self.inputs.get(slot).expect("a present input")
    }

    /// Input `slot`'s bytes, if present.
    pub fn opt(&self, slot: usize) -> Option<&'a [u8]> {
        self.inputs.get(slot)
    }

    /// The number of operands.
    pub fn len(&self) -> usize {
        self.inputs.len
    }

    /// Whether the kernel has no operands.
    pub fn is_empty(&self) -> bool {
        self.inputs.len == 0
    }

    pub fn i8(&self, slot: usize) -> &'a [i8] {
        i8s(self.input(slot))
    }
    pub fn i16(&self, slot: usize) -> &'a [i16] {
        i16s(self.input(slot))
    }
    pub fn i32(&self, slot: usize) -> &'a [i32] {
        i32s(self.input(slot))
    }
    pub fn i64(&self, slot: usize) -> &'a [i64] {
        i64s(self.input(slot))
    }
    pub fn f32(&self, slot: usize) -> &'a [f32] {
        f32s(self.input(slot))
    }
    /// Bytes as `u8` (UINT8 and BOOL tensors: TFLM's bools are bytes holding 0 or 1).
    pub fn u8(&self, slot: usize) -> &'a [u8] {
        self.input(slot)
    }
    pub fn opt_i8(&self, slot: usize) -> Option<&'a [i8]> {
        self.opt(slot).map(i8s)
    }
    pub fn opt_i16(&self, slot: usize) -> Option<&'a [i16]> {
        self.opt(slot).map(i16s)
    }
    pub fn opt_i32(&self, slot: usize) -> Option<&'a [i32]> {
        self.opt(slot).map(i32s)
    }
    pub fn opt_i64(&self, slot: usize) -> Option<&'a [i64]> {
        self.opt(slot).map(i64s)
    }
    pub fn opt_f32(&self, slot: usize) -> Option<&'a [f32]> {
        self.opt(slot).map(f32s)
    }

    /// The output's bytes.
    pub fn out(&mut self) -> &mut [u8] {
        self.out
    }
    pub fn out_i8(&mut self) -> &mut [i8] {
        o8(self.out)
    }
    pub fn out_i16(&mut self) -> &mut [i16] {
        o16(self.out)
    }
    pub fn out_i32(&mut self) -> &mut [i32] {
        o32(self.out)
    }
    pub fn out_f32(&mut self) -> &mut [f32] {
        of(self.out)
    }
    pub fn out_i64(&mut self) -> &mut [i64] {
        bytemuck::cast_slice_mut(self.out)
    }
    /// The output as `u8` (UINT8 and BOOL).
    pub fn out_u8(&mut self) -> &mut [u8] {
        self.out
    }

    /// Calls `f` with every input's bytes (all present) viewed by `view`, in order, and the
    /// output's bytes (PACK, CONCATENATION, ADD_N); up to [`FEW`] inputs without a heap
    /// allocation.
    pub fn with_inputs<T, R>(
        &mut self,
        view: fn(&'a [u8]) -> &'a [T],
        f: impl FnOnce(&[&'a [T]], &mut [u8]) -> R,
    ) -> R {
        let n = self.inputs.len;
        if n <= FEW {
            let mut few: [&'a [T]; FEW] = [&[]; FEW];
            for (i, slot) in few[..n].iter_mut().enumerate() {
                *slot = view(self.input(i));
            }
            f(&few[..n], self.out)
        } else {
            let many: Vec<&'a [T]> = (0..n).map(|i| view(self.input(i))).collect();
            f(&many, self.out)
        }
    }

    /// Calls `f` with every output's bytes, in order (operators with several outputs); up to
    /// [`FEW`] outputs without a heap allocation.
    pub fn with_outs<R>(&mut self, f: impl FnOnce(&mut [&mut [u8]]) -> R) -> R {
        let n = 1 + self.more.len();
        let all =
            std::iter::once(&mut *self.out).chain(self.more.iter_mut().map(Buffer::bytes_mut));
        if n <= FEW {
            let mut few: [&mut [u8]; FEW] = Default::default();
            for (slot, o) in few.iter_mut().zip(all) {
                *slot = o;
            }
            f(&mut few[..n])
        } else {
            let mut many: Vec<&mut [u8]> = all.collect();
            f(&mut many)
        }
    }

    /// The state buffers and the output, at once (stateful kernels write both).
    pub fn states_and_out(&mut self) -> (&mut [Buffer], &mut [u8]) {
        (self.states, self.out)
    }

    /// The state buffers, the first output and the outputs after it, at once (stateful
    /// kernels with several outputs).
    pub fn states_and_outs(&mut self) -> (&mut [Buffer], &mut [u8], &mut [Buffer]) {
        (self.states, self.out, self.more)
    }
}

/// Runs one lowered step: reads its inputs from `t` (indexed by tensor), updates `states`
/// (its variable tensors, in order) and writes `out`. Benchmarks time this call.
pub fn run_step(step: &Step, t: &[Buffer], states: &mut [Buffer], out: &mut [u8]) {
    run_step_outputs(step, t, states, out, &mut []);
}

/// [`run_step`] for a step with several outputs: `more` holds the outputs after the first.
pub fn run_step_outputs(
    step: &Step,
    t: &[Buffer],
    states: &mut [Buffer],
    out: &mut [u8],
    more: &mut [Buffer],
) {
    step.kernel.run(&mut Io {
        inputs: Operands {
            ops: &step.inputs,
            t,
            len: step.inputs.len(),
        },
        states,
        out,
        more,
    });
}

/// A typed view of input bytes, for the generic kernels.
pub(crate) enum Slices<'a> {
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    F32(&'a [f32]),
}

/// A typed view of output bytes, for the generic kernels.
pub(crate) enum SlicesMut<'a> {
    I8(&'a mut [i8]),
    I16(&'a mut [i16]),
    I32(&'a mut [i32]),
    F32(&'a mut [f32]),
}

/// Runs a generic one-input kernel on `input` and `out` viewed as `e`.
pub(crate) fn unary_generic(
    e: Elem,
    input: &[u8],
    out: &mut [u8],
    f: impl FnOnce(Slices, SlicesMut),
) {
    match e {
        Elem::I8 => f(Slices::I8(i8s(input)), SlicesMut::I8(o8(out))),
        Elem::I16 => f(Slices::I16(i16s(input)), SlicesMut::I16(o16(out))),
        Elem::I32 => f(Slices::I32(i32s(input)), SlicesMut::I32(o32(out))),
        Elem::F32 => f(Slices::F32(f32s(input)), SlicesMut::F32(of(out))),
    }
}
