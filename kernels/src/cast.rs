//! CAST between int8, int16, int32 and float32 (and from bool), any direction.
//!
//! Follows TFLM's `cast.cc` as the pinned build behaves (checked against it): integer
//! narrowing keeps the low bits (two's complement wrap, `static_cast`), integers convert to
//! float with round-to-nearest-even, and float -> integer truncates toward zero and
//! *saturates* to the target range, NaN giving 0 — exactly Rust's `as`. CAST has no
//! parameters.

/// A `static_cast` from `Self` to `U` as TFLM's reference build performs it.
pub trait CastTo<U>: Copy {
    /// Converts one element.
    fn cast_to(self) -> U;
}

macro_rules! int_casts {
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
        impl CastTo<f32> for $from {
            #[inline]
            fn cast_to(self) -> f32 { self as f32 }
        }
    )*};
}
int_casts!(i8, i16, i32);

// Float -> integer: truncation with saturation, NaN -> 0 (Rust's `as`).
impl CastTo<i8> for f32 {
    #[inline]
    fn cast_to(self) -> i8 {
        self as i8
    }
}
impl CastTo<i16> for f32 {
    #[inline]
    fn cast_to(self) -> i16 {
        self as i16
    }
}
impl CastTo<i32> for f32 {
    #[inline]
    fn cast_to(self) -> i32 {
        self as i32
    }
}
impl CastTo<f32> for f32 {
    #[inline]
    fn cast_to(self) -> f32 {
        self
    }
}

macro_rules! bool_casts {
    ($($to:ty),*) => {$(
        impl CastTo<$to> for bool {
            #[inline]
            fn cast_to(self) -> $to { self as i32 as $to }
        }
    )*};
}
bool_casts!(i8, i16, i32, f32);

/// Reference kernels need no scratch memory (CAST has no parameters; the argument is
/// the element count, for uniformity).
pub const fn scratch_bytes(_elements: usize) -> usize {
    0
}

/// CAST (`copyCast<FromT, ToT>`): `output[i] = static_cast<U>(input[i])`.
pub fn cast<T: CastTo<U>, U>(input: &[T], output: &mut [U]) {
    debug_assert_eq!(input.len(), output.len());
    for (o, &x) in output.iter_mut().zip(input) {
        *o = x.cast_to();
    }
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
        let mut o32 = [0i32; 2];
        cast(&[true, false], &mut o32);
        assert_eq!(o32, [1, 0]);
    }
}
