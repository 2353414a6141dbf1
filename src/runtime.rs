//! Support for generated code: the arena cell, aligned weights, and safe slicing.
//!
//! Everything here is used by code that `include_model!` or `kiln-build` generates; it is
//! public for that reason, not as an API of its own. The only `unsafe` of a compiled model
//! lives in this module: handing out the one `&'static mut` to an [`Arena`], and viewing
//! byte slices as the element types the kernels take (checked by `bytemuck`).

use core::cell::UnsafeCell;

#[cfg(target_endian = "big")]
compile_error!("Kiln models store weights little-endian; big-endian targets are not supported");

/// Zero-sized marker types that give an [`Arena`] its alignment.
pub mod align {
    /// 4-byte alignment.
    #[derive(Clone, Copy)]
    #[repr(align(4))]
    pub struct A4;
    /// 8-byte alignment.
    #[derive(Clone, Copy)]
    #[repr(align(8))]
    pub struct A8;
    /// 16-byte alignment (the default, as TFLM).
    #[derive(Clone, Copy)]
    #[repr(align(16))]
    pub struct A16;
    /// 32-byte alignment.
    #[derive(Clone, Copy)]
    #[repr(align(32))]
    pub struct A32;
    /// 64-byte alignment.
    #[derive(Clone, Copy)]
    #[repr(align(64))]
    pub struct A64;
}

/// A `static` byte buffer of `N` bytes aligned like `A`, handed out once as `&'static mut`.
#[repr(C)]
pub struct Arena<A, const N: usize> {
    // `repr(C)` keeps this order: the bytes start at offset 0, aligned like `A`.
    _align: [A; 0],
    bytes: UnsafeCell<[u8; N]>,
    taken: TakeOnce,
}

// SAFETY: the bytes are reachable only through the single `&'static mut` that `take` hands
// out once; the flag that guards it is atomic (or set inside a critical section).
unsafe impl<A, const N: usize> Sync for Arena<A, N> {}

impl<A, const N: usize> Arena<A, N> {
    /// A zeroed arena.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Arena {
            _align: [],
            bytes: UnsafeCell::new([0; N]),
            taken: TakeOnce::new(),
        }
    }

    /// The arena's bytes, the first time only.
    // The `&mut` comes from the `UnsafeCell`, handed out once: the pattern this lint flags
    // is exactly what the flag makes sound.
    #[allow(clippy::mut_from_ref)]
    pub fn take(&'static self) -> Option<&'static mut [u8; N]> {
        if self.taken.take() {
            // SAFETY: `take` returns true exactly once, so this is the only reference.
            Some(unsafe { &mut *self.bytes.get() })
        } else {
            None
        }
    }
}

/// A flag that is taken once.
pub struct TakeOnce(core::sync::atomic::AtomicBool);

impl TakeOnce {
    const fn new() -> Self {
        TakeOnce(core::sync::atomic::AtomicBool::new(false))
    }

    /// True the first time it is called, false after.
    #[cfg(target_has_atomic = "8")]
    fn take(&self) -> bool {
        !self.0.swap(true, core::sync::atomic::Ordering::AcqRel)
    }

    /// True the first time it is called, false after (cores without compare-and-swap).
    #[cfg(not(target_has_atomic = "8"))]
    fn take(&self) -> bool {
        use core::sync::atomic::Ordering;
        critical_section::with(|_| {
            let first = !self.0.load(Ordering::Acquire);
            self.0.store(true, Ordering::Release);
            first
        })
    }
}

/// Constant bytes (weights) stored 16-byte aligned, so they can be viewed as wider types.
#[repr(C, align(16))]
pub struct Weights<const N: usize>(pub [u8; N]);

impl<const N: usize> Weights<N> {
    /// The raw bytes.
    pub const fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The `N` bytes at `offset` of a model file, at compile time: generated code reads each
    /// weight buffer as `Weights::from_file(include_bytes!("model.tflite"), offset)`, so the
    /// weights never pass through a Rust literal (the compiler holds the file once).
    pub const fn from_file(file: &[u8], offset: usize) -> Self {
        match file.split_at_checked(offset) {
            Some((_, rest)) => match rest.first_chunk::<N>() {
                Some(bytes) => Weights(*bytes),
                None => panic!("the model file changed: a weight buffer runs past its end"),
            },
            None => panic!("the model file changed: a weight buffer starts past its end"),
        }
    }
}

/// Splits `arena` into `K` shared input slices and one exclusive output slice.
///
/// Each `(offset, len)` names bytes of the arena. The plan verifier has proved that the
/// output is disjoint from every input; with constant arguments the checks here compile away.
pub fn split<const K: usize>(
    arena: &mut [u8],
    inputs: [(usize, usize); K],
    output: (usize, usize),
) -> ([&[u8]; K], &mut [u8]) {
    // No panic path in release builds (the plan is verified; an impossible layout gives empty
    // slices, which the kernels, total on any lengths, leave alone); debug builds check.
    let (below, rest) = arena
        .split_at_mut_checked(output.0)
        .unwrap_or((&mut [], &mut []));
    let (out, above) = rest
        .split_at_mut_checked(output.1)
        .unwrap_or((&mut [], &mut []));
    let (below, above): (&[u8], &[u8]) = (below, above);
    let end = output.0 + output.1;
    let ins = inputs.map(|(offset, len)| {
        if offset + len <= output.0 {
            below.get(offset..offset + len).unwrap_or(&[])
        } else {
            debug_assert!(offset >= end, "an input overlaps the output");
            offset
                .checked_sub(end)
                .and_then(|at| above.get(at..at + len))
                .unwrap_or(&[])
        }
    });
    (ins, out)
}

/// Splits `arena` into `K` shared input slices and two exclusive output slices.
pub fn split2<const K: usize>(
    arena: &mut [u8],
    inputs: [(usize, usize); K],
    outputs: [(usize, usize); 2],
) -> ([&[u8]; K], &mut [u8], &mut [u8]) {
    let (first, second, swapped) = if outputs[0].0 <= outputs[1].0 {
        (outputs[0], outputs[1], false)
    } else {
        (outputs[1], outputs[0], true)
    };
    // No panic path in release builds, as `split`.
    debug_assert!(first.0 + first.1 <= second.0, "two outputs overlap");
    let b_start = first.0 + first.1;
    let c_start = second.0 + second.1;
    let gap = second.0.saturating_sub(b_start);
    let (a, rest) = arena
        .split_at_mut_checked(first.0)
        .unwrap_or((&mut [], &mut []));
    let (o1, rest) = rest
        .split_at_mut_checked(first.1)
        .unwrap_or((&mut [], &mut []));
    let (b, rest) = rest.split_at_mut_checked(gap).unwrap_or((&mut [], &mut []));
    let (o2, c) = rest
        .split_at_mut_checked(second.1)
        .unwrap_or((&mut [], &mut []));
    let (a, b, c): (&[u8], &[u8], &[u8]) = (a, b, c);
    let ins = inputs.map(|(offset, len)| {
        let part = if offset + len <= first.0 {
            a.get(offset..offset + len)
        } else if offset >= b_start && offset + len <= second.0 {
            b.get(offset - b_start..offset - b_start + len)
        } else {
            debug_assert!(offset >= c_start, "an input overlaps an output");
            offset
                .checked_sub(c_start)
                .and_then(|at| c.get(at..at + len))
        };
        part.unwrap_or(&[])
    });
    if swapped {
        (ins, o2, o1)
    } else {
        (ins, o1, o2)
    }
}

/// Splits `arena` into `K` shared input slices and `M` exclusive output slices (operators
/// with several outputs, such as SPLIT; a scratch slice is one more output).
///
/// As [`split`]: the verifier has proved the outputs pairwise disjoint and disjoint from
/// every input; release builds have no panic path (an impossible layout gives empty slices),
/// debug builds check.
pub fn split_many<const K: usize, const M: usize>(
    arena: &mut [u8],
    inputs: [(usize, usize); K],
    outputs: [(usize, usize); M],
) -> ([&[u8]; K], [&mut [u8]; M]) {
    let mut order = [0usize; M];
    for (i, o) in order.iter_mut().enumerate() {
        *o = i;
    }
    order.sort_unstable_by_key(|&i| outputs[i].0);
    let mut ins: [&[u8]; K] = [&[]; K];
    let mut outs: [Option<&mut [u8]>; M] = [const { None }; M];
    // Walks the outputs in address order; the bytes between two outputs (a gap) are shared
    // and hold the inputs that lie there.
    fn place<'a, const K: usize>(
        gap: &'a [u8],
        from: usize,
        inputs: &[(usize, usize); K],
        ins: &mut [&'a [u8]; K],
    ) {
        for (k, &(offset, len)) in inputs.iter().enumerate() {
            if offset >= from && offset + len <= from + gap.len() {
                ins[k] = gap.get(offset - from..offset - from + len).unwrap_or(&[]);
            }
        }
    }
    let mut rest = arena;
    let mut base = 0;
    for &i in &order {
        let (offset, len) = outputs[i];
        debug_assert!(offset >= base, "two outputs overlap");
        let (gap, tail) = rest
            .split_at_mut_checked(offset.saturating_sub(base))
            .unwrap_or((&mut [], &mut []));
        place(gap, base, &inputs, &mut ins);
        let (out, tail) = tail.split_at_mut_checked(len).unwrap_or((&mut [], &mut []));
        outs[i] = Some(out);
        rest = tail;
        base = offset.max(base) + len;
    }
    place(rest, base, &inputs, &mut ins);
    debug_assert!(
        inputs.iter().zip(&ins).all(|(&(_, len), i)| i.len() == len),
        "an input overlaps an output"
    );
    (ins, outs.map(Option::unwrap_or_default))
}

/// Bytes as bytes (`UINT8` and `BOOL` tensors).
pub fn u8s(bytes: &[u8]) -> &[u8] {
    bytes
}

/// Bytes as bytes, mutable.
pub fn u8s_mut(bytes: &mut [u8]) -> &mut [u8] {
    bytes
}

/// Bytes as `i8`.
pub fn i8s(bytes: &[u8]) -> &[i8] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `i8`, mutable.
pub fn i8s_mut(bytes: &mut [u8]) -> &mut [i8] {
    bytemuck::cast_slice_mut(bytes)
}

/// Bytes as `i16` (2-byte aligned).
pub fn i16s(bytes: &[u8]) -> &[i16] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `i16`, mutable.
pub fn i16s_mut(bytes: &mut [u8]) -> &mut [i16] {
    bytemuck::cast_slice_mut(bytes)
}

/// Bytes as `i32` (4-byte aligned).
pub fn i32s(bytes: &[u8]) -> &[i32] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `i32`, mutable.
pub fn i32s_mut(bytes: &mut [u8]) -> &mut [i32] {
    bytemuck::cast_slice_mut(bytes)
}

/// Bytes as `u32` (4-byte aligned).
pub fn u32s(bytes: &[u8]) -> &[u32] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `u32`, mutable.
pub fn u32s_mut(bytes: &mut [u8]) -> &mut [u32] {
    bytemuck::cast_slice_mut(bytes)
}

/// Bytes as `f32` (4-byte aligned).
pub fn f32s(bytes: &[u8]) -> &[f32] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `f32`, mutable.
pub fn f32s_mut(bytes: &mut [u8]) -> &mut [f32] {
    bytemuck::cast_slice_mut(bytes)
}

/// Bytes as `i64` (8-byte aligned).
pub fn i64s(bytes: &[u8]) -> &[i64] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `i64`, mutable.
pub fn i64s_mut(bytes: &mut [u8]) -> &mut [i64] {
    bytemuck::cast_slice_mut(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_hands_out_disjoint_slices() {
        let mut a = [0u8, 1, 2, 3, 4, 5, 6, 7];
        let ([x, y], out) = split(&mut a, [(0, 2), (6, 2)], (2, 4));
        assert_eq!(x, &[0, 1]);
        assert_eq!(y, &[6, 7]);
        out.copy_from_slice(&[9, 9, 9, 9]);
        assert_eq!(a, [0, 1, 9, 9, 9, 9, 6, 7]);
    }

    #[test]
    fn split2_keeps_output_order() {
        let mut a = [0u8; 10];
        let ([x], o1, o2) = split2(&mut a, [(4, 2)], [(6, 4), (0, 4)]);
        assert_eq!(x.len(), 2);
        o1.fill(1);
        o2.fill(2);
        assert_eq!(a, [2, 2, 2, 2, 0, 0, 1, 1, 1, 1]);
    }

    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "overlaps the output"))]
    fn split_rejects_overlap() {
        let mut a = [0u8; 8];
        // Release builds have no panic path: the overlapping input comes back empty.
        let (ins, out) = split(&mut a, [(1, 2)], (2, 4));
        assert!(ins[0].is_empty());
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn split_many_keeps_output_order_and_finds_inputs_in_every_gap() {
        let mut a = [0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
        let ([x, y, z], [o1, o2, o3]) =
            split_many(&mut a, [(10, 2), (0, 1), (5, 1)], [(6, 4), (1, 2), (3, 2)]);
        assert_eq!((x, y, z), (&[10u8, 11][..], &[0u8][..], &[5u8][..]));
        o1.fill(1);
        o2.fill(2);
        o3.fill(3);
        assert_eq!(a, [0, 2, 2, 3, 3, 5, 1, 1, 1, 1, 10, 11]);
    }

    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "overlaps an output"))]
    fn split_many_rejects_overlap() {
        let mut a = [0u8; 8];
        // Release builds: the overlapping input comes back empty.
        let (ins, [out]) = split_many(&mut a, [(1, 2)], [(2, 4)]);
        assert!(ins[0].is_empty());
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn arena_is_taken_once() {
        static ARENA: Arena<align::A16, 32> = Arena::new();
        static ARENA64: Arena<align::A64, 8> = Arena::new();
        let a = ARENA.take().expect("first take");
        assert_eq!(a.as_ptr() as usize % 16, 0);
        assert_eq!(ARENA64.take().unwrap().as_ptr() as usize % 64, 0);
        a[0] = 1;
        assert!(ARENA.take().is_none());
    }
}
