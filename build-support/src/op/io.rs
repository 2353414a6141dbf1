//! [`Io`]: the operands of one kernel call on the host (feature `exec`): its inputs' bytes,
//! its state buffers and its outputs ([`Buffer`]s), viewed as the kernels' element types.

use super::operand::{Elem, Operand};

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

    pub(crate) fn from_bytes(bytes: &[u8]) -> Self {
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

/// The operands of one kernel call on the host: its inputs' bytes, its state buffers and
/// its output. Kernels read them typed (`Io::i8(slot)`, `Io::out_i8()`, ...).
pub struct Io<'a> {
    pub(crate) inputs: Operands<'a>,
    pub(crate) states: &'a mut [Buffer],
    pub(crate) out: &'a mut [u8],
    /// Outputs after the first (operators with several outputs).
    pub(crate) more: &'a mut [Buffer],
}

/// How many inputs [`Io::with_inputs`] and outputs [`Io::with_outs`] collect without a heap
/// allocation (the benchmarks time the call).
const FEW: usize = 8;

/// A step's operands, each looked up when the kernel asks for it: nothing is collected
/// before the call (the benchmarks time it).
pub(crate) struct Operands<'a> {
    pub(crate) ops: &'a [Operand],
    pub(crate) t: &'a [Buffer],
    pub(crate) len: usize,
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
