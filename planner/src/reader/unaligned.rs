//! Verification of a table's fields without the alignment rule.
//!
//! The `flatbuffers` crate's verifier refuses a scalar, an offset or a vector of scalars at a
//! position that is not a multiple of its size (google/flatbuffers#7015). Some converters
//! write such files (older TOCO and MediaPipe tooling put int64 zero points at 4 mod 8);
//! TFLM runs them (it runs no verifier), and the crate reads every scalar by copying its
//! bytes out of the slice (`read_scalar_at`), so alignment is not needed to read them: only
//! the verifier stands in the way.
//!
//! `tools/regen_schema.sh` rewrites the verifier of the generated code (`tflite_generated.rs`)
//! so that every field of every table is verified through one of the types here:
//!
//! - [`Scalar<T>`]: a scalar or enum field: its bytes lie in the buffer.
//! - [`Offset<T>`]: an offset field (to a table, string, vector or union value): its four
//!   bytes lie in the buffer, then `T` is verified where it points.
//! - [`ScalarVector<T>`]: a vector of scalars (the target of an [`Offset`]): its length and
//!   its `length * size` bytes lie in the buffer.
//!
//! Each makes the checks the crate makes for its kind (the same bounds, the apparent size
//! counted the same) except alignment. Everything else stays the crate's, alignment
//! included: tables (their vtable offset), vtables, strings (with UTF-8 and terminator
//! checks), vectors of tables or strings, union types, the depth and table count limits.
//!
//! Why this is sound (no `unsafe` here): after `flatbuffers::root_with_opts` verifies, the
//! generated accessors read a field of type `T` at position `p` with `read_scalar_at`, which
//! copies `size_of::<T::Scalar>()` bytes from `p` (into an aligned local: no alignment is
//! needed) and relies on the verifier for `p + size <= len`; an offset is read the same way
//! as a `u32`, and a vector's elements at `start + i * size_of::<T>()` for `i < length`.
//! These are the ranges checked here (the sizes are equal: asserted at compile time), with
//! the crate's `Verifier::range_in_buffer` and `Verifier::get_u8`.

use core::marker::PhantomData;
use core::mem::size_of;
use flatbuffers::{EndianScalar, InvalidFlatbuffer, Verifiable, Verifier};

/// A scalar (or enum) field of type `T`, at any byte position.
pub(super) struct Scalar<T>(PhantomData<T>);

/// An offset field (`uoffset`, four bytes) at any byte position, to a `T`.
pub(super) struct Offset<T>(PhantomData<T>);

/// A vector of scalars of type `T` whose length and elements may be at any byte position.
pub(super) struct ScalarVector<T>(PhantomData<T>);

/// The bytes a `T` takes in the buffer (the size its accessor reads).
const fn wire_size<T: EndianScalar>() -> usize {
    // The accessors read `size_of::<T::Scalar>()` bytes and step vectors by `size_of::<T>()`.
    assert!(size_of::<T>() == size_of::<T::Scalar>());
    size_of::<T::Scalar>()
}

impl<T: EndianScalar> Verifiable for Scalar<T> {
    #[inline]
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.range_in_buffer(pos, const { wire_size::<T>() })
    }
}

/// The little-endian `u32` at `pos`, at any alignment. Counts four bytes of apparent size,
/// as the crate's `get_uoffset` does.
fn read_u32(v: &mut Verifier, pos: usize) -> Result<u32, InvalidFlatbuffer> {
    let mut bytes = [0u8; 4];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = v.get_u8(pos.saturating_add(i)).map_err(|e| match e {
            // Report the whole field, as the crate would.
            InvalidFlatbuffer::RangeOutOfBounds { .. } => InvalidFlatbuffer::RangeOutOfBounds {
                range: pos..pos.saturating_add(4),
                error_trace: Default::default(),
            },
            e => e,
        })?;
    }
    Ok(u32::from_le_bytes(bytes))
}

impl<T: Verifiable> Verifiable for Offset<T> {
    #[inline]
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        // As `flatbuffers::ForwardsUOffset`: offsets only point forward.
        let offset = read_u32(v, pos)? as usize;
        T::run_verifier(v, offset.saturating_add(pos))
    }
}

impl<T: EndianScalar> Verifiable for ScalarVector<T> {
    #[inline]
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        let len = read_u32(v, pos)? as usize;
        let start = pos.saturating_add(4);
        v.range_in_buffer(start, len.saturating_mul(const { wire_size::<T>() }))
    }
}
