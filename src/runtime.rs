//! Support for generated code: arena buffers, aligned weights, and safe slicing.
//!
//! Everything here is used by code that `include_model!` or `kiln-build` generates; it is
//! public for that reason (and for [`Aligned`], [`max`] and [`align`], which a user names to
//! give a model its own arena). The only `unsafe` of a compiled model lives in this module:
//! handing out the one `&'static mut` to an [`Arena`] or [`PlacedArena`], masking interrupts
//! on single-core cores without compare-and-swap, and viewing byte slices as the element
//! types the kernels take (checked by `bytemuck`).
//!
//! # Cores without compare-and-swap (Cortex-M0/M0+, `thumbv6m-none-eabi`)
//!
//! `Model::take()` sets a flag once; without atomic compare-and-swap that needs one of two
//! features of `kiln`, and a crate that calls `take()` without either fails to compile
//! (`cargo check` too) with an error at that call naming them ([`TakeSupported`]):
//! - `single-core`: Kiln masks interrupts (PRIMASK) around the flag. Sound on a single core
//!   only: do not use it on a multi-core M0+ such as the RP2040.
//! - `critical-section`: the flag is set inside `critical_section::with`, so the firmware
//!   provides an implementation: on a single core `cortex-m`'s feature
//!   `critical-section-single-core`; on the RP2040 the HAL's (`rp2040-hal`'s feature
//!   `critical-section-impl`, or embassy-rp's), which takes a hardware spinlock as well and
//!   so is sound across both cores.
//!
//! `ModelIn::with_arena` needs neither: the borrow of the user's buffer is the proof of
//! exclusive access.

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;

#[cfg(target_endian = "big")]
compile_error!("Kiln models store weights little-endian; big-endian targets are not supported");

/// Zero-sized marker types that give an [`Aligned`] buffer (and an [`Arena`]) its alignment.
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

mod sealed {
    pub trait Sealed {}
}

/// An alignment marker of [`align`]: `BYTES` is its alignment.
pub trait Alignment: Copy + sealed::Sealed {
    /// The alignment in bytes.
    const BYTES: usize;
}

macro_rules! alignment {
    ($($t:ident = $n:literal),*) => {$(
        impl sealed::Sealed for align::$t {}
        impl Alignment for align::$t {
            const BYTES: usize = $n;
        }
    )*};
}
alignment!(A4 = 4, A8 = 8, A16 = 16, A32 = 32, A64 = 64);

/// The larger of two sizes, in constant expressions: one buffer for several models run one
/// after another is `Aligned<A16, { max(a::ARENA_BYTES, b::ARENA_BYTES) }>` (or a `const`
/// of it).
pub const fn max(a: usize, b: usize) -> usize {
    if a > b { a } else { b }
}

/// The largest of several sizes, in constant expressions (0 for none).
pub const fn max_of(sizes: &[usize]) -> usize {
    let mut m = 0;
    let mut i = 0;
    while i < sizes.len() {
        m = max(m, sizes[i]);
        i += 1;
    }
    m
}

/// Sets `bytes[from..to]` to `value`, in constant expressions (a generated `State::new`).
pub const fn fill(bytes: &mut [u8], from: usize, to: usize, value: u8) {
    let mut i = from;
    while i < to && i < bytes.len() {
        bytes[i] = value;
        i += 1;
    }
}

/// `N` bytes aligned like `A`: an arena a user owns (`ModelIn::with_arena` borrows it).
///
/// The alignment is part of the type, so a buffer can never be misaligned: a model whose
/// plan needs a larger alignment, or more than `N` bytes, does not build.
#[repr(C)]
#[derive(Clone)]
pub struct Aligned<A, const N: usize> {
    // `repr(C)` keeps this order: the bytes start at offset 0, aligned like `A`.
    _align: [A; 0],
    /// The bytes.
    pub bytes: [u8; N],
}

impl<A, const N: usize> Aligned<A, N> {
    /// A zeroed buffer.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Aligned {
            _align: [],
            bytes: [0; N],
        }
    }
}

impl<A: Alignment, const N: usize> Aligned<A, N> {
    /// The first `M` bytes, for a model that needs `M` bytes aligned to `ALIGN`: checked
    /// when the program is built (`cargo build`; `cargo check` does not evaluate it).
    pub fn lend<const M: usize, const ALIGN: usize>(&mut self) -> &mut [u8; M] {
        const {
            assert!(
                M <= N,
                "this buffer is smaller than the model's arena: make it at least ARENA_BYTES \
                 (for several models, `kiln::max` of theirs)"
            );
            assert!(
                A::BYTES >= ALIGN,
                "this buffer's alignment is below the model's: use at least its `Arena` type's \
                 marker (`ARENA_ALIGN` bytes)"
            );
        }
        match self.bytes.first_chunk_mut::<M>() {
            Some(b) => b,
            // `M <= N` is checked above.
            None => unreachable!(),
        }
    }
}

/// A `static` buffer of `N` bytes aligned like `A`, handed out once as `&'static mut`.
pub struct Arena<A, const N: usize> {
    bytes: UnsafeCell<Aligned<A, N>>,
    taken: TakeOnce,
}

// SAFETY: the bytes are reachable only through the single `&'static mut` that `take` hands
// out once; the flag that guards it is atomic (or set with interrupts masked, or inside a
// critical section).
unsafe impl<A, const N: usize> Sync for Arena<A, N> {}

impl<A, const N: usize> Arena<A, N> {
    /// A zeroed arena.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Arena {
            bytes: UnsafeCell::new(Aligned::new()),
            taken: TakeOnce::new(),
        }
    }

    /// The arena's bytes, the first time only.
    // The `&mut` comes from the `UnsafeCell`, handed out once: the pattern this lint flags
    // is exactly what the flag makes sound.
    #[allow(clippy::mut_from_ref)]
    pub fn take(&'static self) -> Option<&'static mut Aligned<A, N>> {
        check_take::<A, N>();
        if self.taken.take() {
            // SAFETY: `take` returns true exactly once, so this is the only reference.
            Some(unsafe { &mut *self.bytes.get() })
        } else {
            None
        }
    }
}

/// The bytes of a [`PlacedArena`]: a `static` of its own, so that it can sit in a link
/// section (`link_section = ".sram2"`) while the flag stays in ordinary RAM. Its contents
/// need not be initialised by the startup code (a `NOLOAD` section will do): they are zeroed
/// when taken.
pub struct ArenaCell<A, const N: usize>(UnsafeCell<MaybeUninit<Aligned<A, N>>>);

// SAFETY: the bytes are reachable only through the one `PlacedArena` over the cell (the
// contract of `PlacedArena::new`), which hands them out once.
unsafe impl<A, const N: usize> Sync for ArenaCell<A, N> {}

impl<A, const N: usize> ArenaCell<A, N> {
    /// A cell whose bytes are not initialised until taken.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        ArenaCell(UnsafeCell::new(MaybeUninit::uninit()))
    }
}

/// An [`Arena`] whose bytes are an [`ArenaCell`] (in a link section of the user's choice).
pub struct PlacedArena<A: 'static, const N: usize> {
    cell: &'static ArenaCell<A, N>,
    taken: TakeOnce,
}

impl<A, const N: usize> PlacedArena<A, N> {
    /// The arena over `cell`.
    ///
    /// # Safety
    ///
    /// No other `PlacedArena` may be made over `cell` (generated code declares the cell
    /// inside this call's initializer, where nothing else can name it).
    pub const unsafe fn new(cell: &'static ArenaCell<A, N>) -> Self {
        PlacedArena {
            cell,
            taken: TakeOnce::new(),
        }
    }

    /// The arena's bytes, zeroed, the first time only.
    #[allow(clippy::mut_from_ref)]
    pub fn take(&'static self) -> Option<&'static mut Aligned<A, N>> {
        check_take::<A, N>();
        if self.taken.take() {
            // SAFETY: `take` returns true exactly once and this arena is the cell's only
            // one, so this is the only reference; zeroing makes every byte initialised
            // whatever the section held.
            unsafe {
                let p = self.cell.0.get();
                p.write_bytes(0, 1);
                Some((*p).assume_init_mut())
            }
        } else {
            None
        }
    }
}

/// When a generated `invoke_with` calls its hook: before or after an operator's kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The operator is about to run.
    Before,
    /// The operator has run.
    After,
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

    /// True the first time it is called, false after (cores without compare-and-swap): see
    /// the module docs for the two features.
    #[cfg(not(target_has_atomic = "8"))]
    fn take(&self) -> bool {
        use core::sync::atomic::Ordering;
        let once = || {
            let first = !self.0.load(Ordering::Acquire);
            self.0.store(true, Ordering::Release);
            first
        };
        #[cfg(feature = "critical-section")]
        {
            critical_section::with(|_| once())
        }
        #[cfg(all(feature = "single-core", not(feature = "critical-section")))]
        {
            single_core::without_interrupts(once)
        }
        // Without either feature the callers (`Arena::take`, `PlacedArena::take`) do not
        // build: see `NeedsFeature`.
        #[cfg(not(any(feature = "single-core", feature = "critical-section")))]
        {
            once()
        }
    }
}

/// The bound of a generated `Model::take()`: implemented for every type on cores with atomic
/// compare-and-swap, and with the feature `single-core` or `critical-section`; not on a
/// Cortex-M0/M0+ (`thumbv6m`) without either, where calling `take()` is then a compile error
/// at the call (`cargo check` shows it) that names the features. The generated `take()`
/// states it as `where ModelIn<'a>: TakeSupported`: a bound on the impl's lifetime, so it is
/// checked where `take()` is called, never where it is defined (a firmware that only uses
/// `ModelIn::with_arena` builds without a feature).
#[diagnostic::on_unimplemented(
    message = "`Model::take()` needs a feature of `kiln` on this core: it has no atomic \
               compare-and-swap (Cortex-M0/M0+ thumbv6m, RISC-V riscv32imc)",
    label = "this `take()` needs `kiln`'s feature `single-core` or `critical-section`",
    note = "in Cargo.toml: `kiln = {{ ..., features = [\"single-core\"] }}` on a single-core chip \
            (Kiln masks interrupts around its flag), or `features = [\"critical-section\"]` with \
            a critical-section implementation (cortex-m's feature \
            `critical-section-single-core`; on a multi-core M0+ such as the RP2040, its HAL's)",
    note = "or give the model a buffer of yours with `ModelIn::with_arena`, which needs neither"
)]
pub trait TakeSupported {}

#[cfg(any(
    target_has_atomic = "8",
    feature = "single-core",
    feature = "critical-section"
))]
impl<T: ?Sized> TakeSupported for T {}

/// The build error of `take()` on a core without compare-and-swap and neither feature: an
/// associated const of a generic type, evaluated only where an [`Arena::take`] or
/// [`PlacedArena::take`] is built (so `kiln` itself, and `ModelIn::with_arena`, build without
/// a feature). A model's `take()` stops earlier, at [`TakeSupported`]; this catches a direct
/// call of `Arena::take` (a shared buffer), at `cargo build`.
#[cfg(all(
    not(target_has_atomic = "8"),
    not(any(feature = "single-core", feature = "critical-section"))
))]
struct NeedsFeature<A, const N: usize>(core::marker::PhantomData<A>);

#[cfg(all(
    not(target_has_atomic = "8"),
    not(any(feature = "single-core", feature = "critical-section"))
))]
impl<A, const N: usize> NeedsFeature<A, N> {
    const FAIL: () = panic!(
        "kiln: `Model::take()` on a core without compare-and-swap (Cortex-M0/M0+, thumbv6m) \
         needs one feature of `kiln` in Cargo.toml: `features = [\"single-core\"]` on a \
         single-core chip, or `features = [\"critical-section\"]` with a critical-section \
         implementation (cortex-m's feature `critical-section-single-core`, or on a multi-core \
         M0+ such as the RP2040 its HAL's); or give the model your own buffer with \
         `ModelIn::with_arena`, which needs neither"
    );
}

/// Fails the build where `take()` cannot be sound (see [`NeedsFeature`]); nothing elsewhere.
#[inline(always)]
fn check_take<A, const N: usize>() {
    #[cfg(all(
        not(target_has_atomic = "8"),
        not(any(feature = "single-core", feature = "critical-section"))
    ))]
    #[allow(clippy::let_unit_value)]
    let () = NeedsFeature::<A, N>::FAIL;
}

/// Interrupt masking on a single Arm core without compare-and-swap (feature `single-core`).
#[cfg(all(
    not(target_has_atomic = "8"),
    feature = "single-core",
    not(feature = "critical-section")
))]
mod single_core {
    #[cfg(not(target_arch = "arm"))]
    compile_error!("kiln's feature `single-core` is for Arm cores (Cortex-M0/M0+)");

    /// Runs `f` with interrupts masked, restoring PRIMASK after.
    #[cfg(target_arch = "arm")]
    pub fn without_interrupts<R>(f: impl FnOnce() -> R) -> R {
        let primask: u32;
        // SAFETY: reads PRIMASK and masks interrupts; no memory is touched (the compiler
        // fences order the flag's accesses inside the masked region).
        unsafe {
            core::arch::asm!("mrs {}, PRIMASK", "cpsid i", out(reg) primask, options(nomem, nostack, preserves_flags));
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
        let r = f();
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
        if primask & 1 == 0 {
            // SAFETY: unmasks interrupts, which were unmasked when `f` started.
            unsafe {
                core::arch::asm!("cpsie i", options(nomem, nostack, preserves_flags));
            }
        }
        r
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
#[inline(always)]
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
    // A loop rather than `array::map`, which opt-level s leaves out of line.
    let mut ins: [&[u8]; K] = [&[]; K];
    for (i, &(offset, len)) in ins.iter_mut().zip(&inputs) {
        *i = if offset + len <= output.0 {
            below.get(offset..offset + len).unwrap_or(&[])
        } else {
            debug_assert!(offset >= end, "an input overlaps the output");
            offset
                .checked_sub(end)
                .and_then(|at| above.get(at..at + len))
                .unwrap_or(&[])
        };
    }
    (ins, out)
}

/// Splits `arena` into `K` shared input slices and two exclusive output slices.
#[inline(always)]
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
    // A loop rather than `array::map`, as in `split`.
    let mut ins: [&[u8]; K] = [&[]; K];
    for (i, &(offset, len)) in ins.iter_mut().zip(&inputs) {
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
        *i = part.unwrap_or(&[]);
    }
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
/// debug builds check. The outputs come in increasing offset order (the emitter sorts them at
/// build time, so that no code sorts them at run time; an output before the end of the one
/// before it is an impossible layout, and comes back empty).
pub fn split_many<const K: usize, const M: usize>(
    arena: &mut [u8],
    inputs: [(usize, usize); K],
    outputs: [(usize, usize); M],
) -> ([&[u8]; K], [&mut [u8]; M]) {
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
    for (i, &(offset, len)) in outputs.iter().enumerate() {
        debug_assert!(offset >= base, "two outputs overlap or are out of order");
        if offset < base {
            outs[i] = Some(&mut []);
            continue;
        }
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
#[inline(always)]
pub fn u8s(bytes: &[u8]) -> &[u8] {
    bytes
}

/// Bytes as bytes, mutable.
#[inline(always)]
pub fn u8s_mut(bytes: &mut [u8]) -> &mut [u8] {
    bytes
}

/// Bytes as `i8`.
#[inline(always)]
pub fn i8s(bytes: &[u8]) -> &[i8] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `i8`, mutable.
#[inline(always)]
pub fn i8s_mut(bytes: &mut [u8]) -> &mut [i8] {
    bytemuck::cast_slice_mut(bytes)
}

/// Bytes as `i16` (2-byte aligned).
#[inline(always)]
pub fn i16s(bytes: &[u8]) -> &[i16] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `i16`, mutable.
#[inline(always)]
pub fn i16s_mut(bytes: &mut [u8]) -> &mut [i16] {
    bytemuck::cast_slice_mut(bytes)
}

/// Bytes as `i32` (4-byte aligned).
#[inline(always)]
pub fn i32s(bytes: &[u8]) -> &[i32] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `i32`, mutable.
#[inline(always)]
pub fn i32s_mut(bytes: &mut [u8]) -> &mut [i32] {
    bytemuck::cast_slice_mut(bytes)
}

/// Bytes as `u32` (4-byte aligned).
#[inline(always)]
pub fn u32s(bytes: &[u8]) -> &[u32] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `u32`, mutable.
#[inline(always)]
pub fn u32s_mut(bytes: &mut [u8]) -> &mut [u32] {
    bytemuck::cast_slice_mut(bytes)
}

/// Bytes as `u64` (8-byte aligned).
#[inline(always)]
pub fn u64s(bytes: &[u8]) -> &[u64] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `u64`, mutable.
#[inline(always)]
pub fn u64s_mut(bytes: &mut [u8]) -> &mut [u64] {
    bytemuck::cast_slice_mut(bytes)
}

/// Bytes as `f32` (4-byte aligned).
#[inline(always)]
pub fn f32s(bytes: &[u8]) -> &[f32] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `f32`, mutable.
#[inline(always)]
pub fn f32s_mut(bytes: &mut [u8]) -> &mut [f32] {
    bytemuck::cast_slice_mut(bytes)
}

/// Bytes as `i64` (8-byte aligned).
#[inline(always)]
pub fn i64s(bytes: &[u8]) -> &[i64] {
    bytemuck::cast_slice(bytes)
}

/// Bytes as `i64`, mutable.
#[inline(always)]
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
    fn split_many_finds_inputs_in_every_gap() {
        let mut a = [0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
        let ([x, y, z], [o1, o2, o3]) =
            split_many(&mut a, [(10, 2), (0, 1), (5, 1)], [(1, 2), (3, 2), (6, 4)]);
        assert_eq!((x, y, z), (&[10u8, 11][..], &[0u8][..], &[5u8][..]));
        o1.fill(2);
        o2.fill(3);
        o3.fill(1);
        assert_eq!(a, [0, 2, 2, 3, 3, 5, 1, 1, 1, 1, 10, 11]);
    }

    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "out of order"))]
    fn split_many_outputs_out_of_order_come_back_empty() {
        let mut a = [0u8; 12];
        // Release builds: the output before the end of the one before it is empty.
        let ([], [o1, o2]) = split_many(&mut a, [], [(6, 4), (1, 2)]);
        assert_eq!((o1.len(), o2.len()), (4, 0));
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
        assert_eq!(a.bytes.as_ptr() as usize % 16, 0);
        assert_eq!(ARENA64.take().unwrap().bytes.as_ptr() as usize % 64, 0);
        a.bytes[0] = 1;
        assert!(ARENA.take().is_none());
    }

    #[test]
    fn placed_arena_is_taken_once_zeroed_and_aligned() {
        static ARENA: PlacedArena<align::A32, 40> = {
            static CELL: ArenaCell<align::A32, 40> = ArenaCell::new();
            // SAFETY: the only arena over `CELL`, which nothing else can name.
            unsafe { PlacedArena::new(&CELL) }
        };
        let a = ARENA.take().expect("first take");
        assert_eq!(a.bytes.as_ptr() as usize % 32, 0);
        assert_eq!(a.bytes, [0; 40]);
        assert!(ARENA.take().is_none());
    }

    #[test]
    fn lend_gives_the_prefix_and_max_sizes_a_shared_buffer() {
        const N: usize = max_of(&[3, max(24, 7), 16]);
        assert_eq!(N, 24);
        let mut buf = Aligned::<align::A16, N>::new();
        buf.bytes[0] = 5;
        let p: &mut [u8; 16] = buf.lend::<16, 8>();
        assert_eq!(p[0], 5);
        assert_eq!(p.as_ptr() as usize % 16, 0);
    }
}
