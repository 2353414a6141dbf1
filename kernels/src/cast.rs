//! CAST between bool, int8, int16, int32, uint32 and float32, any direction (every pair the
//! pinned wheel runs).
//!
//! Follows TFLM's `cast.cc` as the pinned build behaves (checked against it): integer
//! narrowing keeps the low bits (two's complement wrap, `static_cast`; int8/int16 -> uint32
//! sign-extends first), integers convert to float with round-to-nearest-even, and float ->
//! integer truncates toward zero and *saturates* to the target range, NaN giving 0 —
//! exactly Rust's `as` (float -> uint32 too: negative values give 0). BOOL tensors are
//! bytes: a cast from bool reads a nonzero byte as 1 ([`cast`] on `u8`), a cast to bool
//! writes 1 for every nonzero value, NaN included ([`cast_to_bool`], `static_cast<bool>`).
//! CAST has no parameters.

use crate::util::map_by8;

/// A `static_cast` from `Self` to `U` as TFLM's reference build performs it.
pub trait CastTo<U>: Copy {
    /// Converts one element.
    fn cast_to(self) -> U;
}

macro_rules! as_casts {
    ($($from:ty),*) => {$(
        impl CastTo<i8> for $from {
            #[inline]
            fn cast_to(self) -> i8 { self as i8 }
        }
        impl CastTo<i16> for $from {
            #[inline]
            fn cast_to(self) -> i16 { self as i16 }
        }
        impl CastTo<i32> for $from {
            #[inline]
            fn cast_to(self) -> i32 { self as i32 }
        }
        impl CastTo<u32> for $from {
            #[inline]
            fn cast_to(self) -> u32 { self as u32 }
        }
        impl CastTo<f32> for $from {
            #[inline]
            fn cast_to(self) -> f32 { self as f32 }
        }
    )*};
}
// Float -> integer is Rust's saturating `as` (see the module docs).
as_casts!(i8, i16, i32, u32, f32);

// From BOOL bytes: 0 or 1 (a nonzero byte counts as true).
macro_rules! bool_casts {
    ($($to:ty),*) => {$(
        impl CastTo<$to> for u8 {
            #[inline]
            fn cast_to(self) -> $to { (self != 0) as u8 as $to }
        }
    )*};
}
bool_casts!(i8, i16, i32, u32, f32);

/// `static_cast<bool>`: whether a value is nonzero (NaN is; -0.0 is not).
pub trait NonZero: Copy {
    /// Whether `self != 0`.
    fn nonzero(self) -> bool;
}

macro_rules! nonzero {
    ($($t:ty),*) => {$(
        impl NonZero for $t {
            #[inline]
            fn nonzero(self) -> bool { self != 0 as $t }
        }
    )*};
}
// `u8`: BOOL bytes (bool -> bool).
nonzero!(u8, i8, i16, i32, u32, f32);

/// Reference kernels need no scratch memory (CAST has no parameters; the argument is
/// the element count, for uniformity).
pub const fn scratch_bytes(_elements: usize) -> usize {
    0
}

/// CAST (`copyCast<FromT, ToT>`): `output[i] = static_cast<U>(input[i])`.
/// Eight elements per step (`util::map_by8`), which opt-level s keeps unrolled.
pub fn cast<T: CastTo<U>, U: Copy>(input: &[T], output: &mut [U]) {
    debug_assert_eq!(input.len(), output.len());
    map_by8(input, output, T::cast_to);
}

/// CAST to BOOL: `output[i] = static_cast<bool>(input[i])`, as bytes 0 or 1.
pub fn cast_to_bool<T: NonZero>(input: &[T], output: &mut [u8]) {
    debug_assert_eq!(input.len(), output.len());
    map_by8(input, output, |x| x.nonzero() as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        let mut o8 = [0i8; 6];
        cast(&[1.9f32, -1.9, 300.0, f32::NAN, -129.0, 3e9], &mut o8);
        assert_eq!(o8, [1, -1, 127, 0, -128, 127]);
        let mut o16 = [0i16; 3];
        cast(&[70000i32, -1, 32768], &mut o16);
        assert_eq!(o16, [4464, -1, -32768]);
        let mut f = [0.0f32; 2];
        cast(&[16_777_217i32, -3], &mut f);
        assert_eq!(f, [16_777_216.0, -3.0]);
        let mut o32 = [0i32; 3];
        cast(&[1u8, 0, 2], &mut o32);
        assert_eq!(o32, [1, 0, 1]);
        let mut u = [0u32; 6];
        cast(
            &[-1.5f32, 4.3e9, f32::NAN, 7.9, -0.0, f32::INFINITY],
            &mut u,
        );
        assert_eq!(u, [0, u32::MAX, 0, 7, 0, u32::MAX]);
        cast(&[-1i8, 2, -128, 0, 1, 127], &mut u);
        assert_eq!(u, [u32::MAX, 2, 0xffff_ff80, 0, 1, 127]);
        let mut b = [9u8; 5];
        cast_to_bool(&[0.0f32, -0.0, f32::NAN, 1e-45, -3.0], &mut b);
        assert_eq!(b, [0, 0, 1, 1, 1]);
        cast_to_bool(&[0u32, 1, u32::MAX, 0, 5], &mut b);
        assert_eq!(b, [0, 1, 1, 0, 1]);
    }
}
