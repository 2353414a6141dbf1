//! EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS and LESS_EQUAL: elementwise comparisons
//! with optional broadcasting, writing TFLM's bools (one byte, 0 or 1).
//!
//! Follows TFLM's `comparisons.cc` and `reference/comparisons.h`:
//! - float32, int32, int64 (and bool for EQUAL/NOT_EQUAL) compare the stored values
//!   (`*NoScaling`); for floats a NaN compares as in C++ (only NOT_EQUAL is true).
//! - int8 compares requantized values (TFLM's Eval also has an int16 case for GREATER, which
//!   the pinned wheel does not prepare; Kiln's operator module refuses it; the generic
//!   kernels take int16 as well) (`*WithScaling`): each input becomes
//!   `MultiplyByQuantizedMultiplierSmallerThanOneExp((q - zero_point) << 8, m, shift)`
//!   where `(m, shift)` is `QuantizeMultiplierSmallerThanOneExp(scale)` ([`prepare`]), so two
//!   inputs with different quantizations are compared on a common (rounded) real scale.
//!
//! Broadcasting goes through [`Broadcast`] (the pinned TFLM wheel broadcasts up to 6-D here,
//! with the same results as the row-major definition).

use crate::broadcast::{Broadcast, broadcast_binary};
use crate::fixed_point::multiply_by_quantized_multiplier_smaller_than_one_exp;
use crate::quant::{PrepareError, QuantParams, quantize_multiplier_smaller_than_one_exp};

/// TFLM's `kLeftShift` of the quantized comparisons.
pub const LEFT_SHIFT: i32 = 8;

/// `ComparisonParams` of the quantized comparisons (TFLM's `ComparisonsPrepare`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub left_shift: i32,
    pub input1_offset: i32,
    pub input1_multiplier: i32,
    pub input1_shift: i32,
    pub input2_offset: i32,
    pub input2_multiplier: i32,
    pub input2_shift: i32,
}

/// The comparisons need no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

/// TFLM's `ComparisonsPrepare` for int8/int16 inputs: offsets `-zero_point` and each input
/// scale as a multiplier smaller than one (a scale of 1 or more, or not positive, is
/// refused: TFLM's `QuantizeMultiplierSmallerThanOneExp` aborts on it).
pub fn prepare(input1: QuantParams, input2: QuantParams) -> Result<Params, PrepareError> {
    let (m1, s1) = quantize_multiplier_smaller_than_one_exp(input1.scale as f64)?;
    let (m2, s2) = quantize_multiplier_smaller_than_one_exp(input2.scale as f64)?;
    Ok(Params {
        left_shift: LEFT_SHIFT,
        input1_offset: input1.zero_point.wrapping_neg(),
        input1_multiplier: m1,
        input1_shift: s1,
        input2_offset: input2.zero_point.wrapping_neg(),
        input2_multiplier: m2,
        input2_shift: s2,
    })
}

/// The requantized value of a quantized comparison's input (`ComparisonWithScaling`).
#[inline(always)]
fn scaled(x: i32, offset: i32, multiplier: i32, shift: i32, left_shift: i32) -> i32 {
    let shifted = offset.wrapping_add(x).wrapping_mul(1i32 << left_shift);
    multiply_by_quantized_multiplier_smaller_than_one_exp(shifted, multiplier, shift)
}

macro_rules! comparison {
    ($name:ident, $bcast:ident, $q:ident, $qbcast:ident, $op:tt, $doc:literal) => {
        #[doc = concat!("`", $doc, "` of two same-shaped tensors (`x ", stringify!($op), " y`).")]
        pub fn $name<T: Copy + PartialOrd>(input1: &[T], input2: &[T], output: &mut [u8]) {
            debug_assert!(input1.len() == output.len() && input2.len() == output.len());
            for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
                *o = u8::from(x $op y);
            }
        }

        #[doc = concat!("`", $doc, "` with broadcasting.")]
        pub fn $bcast<T: Copy + PartialOrd>(
            b: &Broadcast,
            input1: &[T],
            input2: &[T],
            output: &mut [u8],
        ) {
            broadcast_binary(b, input1, input2, output, |x, y| u8::from(x $op y));
        }

        #[doc = concat!("Quantized `", $doc, "` (int8/int16) of two same-shaped tensors.")]
        pub fn $q<T: Copy + Into<i32>>(p: &Params, input1: &[T], input2: &[T], output: &mut [u8]) {
            debug_assert!(input1.len() == output.len() && input2.len() == output.len());
            for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
                *o = u8::from(scale1(p, x.into()) $op scale2(p, y.into()));
            }
        }

        #[doc = concat!("Quantized `", $doc, "` with broadcasting.")]
        pub fn $qbcast<T: Copy + Into<i32>>(
            p: &Params,
            b: &Broadcast,
            input1: &[T],
            input2: &[T],
            output: &mut [u8],
        ) {
            broadcast_binary(b, input1, input2, output, |x, y| {
                u8::from(scale1(p, x.into()) $op scale2(p, y.into()))
            });
        }
    };
}

#[inline(always)]
fn scale1(p: &Params, x: i32) -> i32 {
    scaled(
        x,
        p.input1_offset,
        p.input1_multiplier,
        p.input1_shift,
        p.left_shift,
    )
}

#[inline(always)]
fn scale2(p: &Params, x: i32) -> i32 {
    scaled(
        x,
        p.input2_offset,
        p.input2_multiplier,
        p.input2_shift,
        p.left_shift,
    )
}

comparison!(equal, equal_broadcast, equal_quantized, equal_quantized_broadcast, ==, "EQUAL");
comparison!(
    not_equal,
    not_equal_broadcast,
    not_equal_quantized,
    not_equal_quantized_broadcast,
    !=,
    "NOT_EQUAL"
);
comparison!(
    greater,
    greater_broadcast,
    greater_quantized,
    greater_quantized_broadcast,
    >,
    "GREATER"
);
comparison!(
    greater_equal,
    greater_equal_broadcast,
    greater_equal_quantized,
    greater_equal_quantized_broadcast,
    >=,
    "GREATER_EQUAL"
);
comparison!(less, less_broadcast, less_quantized, less_quantized_broadcast, <, "LESS");
comparison!(
    less_equal,
    less_equal_broadcast,
    less_equal_quantized,
    less_equal_quantized_broadcast,
    <=,
    "LESS_EQUAL"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_nan_and_broadcast() {
        let mut o = [9u8; 3];
        less(&[1.0f32, f32::NAN, 2.0], &[2.0, 1.0, 2.0], &mut o);
        assert_eq!(o, [1, 0, 0]);
        not_equal(&[1.0f32, f32::NAN, 2.0], &[2.0, f32::NAN, 2.0], &mut o);
        assert_eq!(o, [1, 1, 0]);
        let b = Broadcast::new(&[2, 2], &[2]).unwrap();
        let mut o4 = [9u8; 4];
        greater_equal_broadcast(&b, &[1i64, 5, 7, 0], &[2, 0], &mut o4);
        assert_eq!(o4, [0, 1, 1, 1]);
    }

    #[test]
    fn quantized_compares_real_values() {
        // 0.5 * (10 - 0) = 5.0 against 0.25 * (30 - 10) = 5.0: equal although the bytes differ.
        let p = prepare(
            QuantParams {
                scale: 0.5,
                zero_point: 0,
            },
            QuantParams {
                scale: 0.25,
                zero_point: 10,
            },
        )
        .unwrap();
        let mut o = [9u8; 2];
        equal_quantized(&p, &[10i8, 11], &[30i8, 30], &mut o);
        assert_eq!(o, [1, 0]);
        greater_quantized(&p, &[10i16, 11], &[30i16, 30], &mut o);
        assert_eq!(o, [0, 1]);
        assert!(
            prepare(
                QuantParams {
                    scale: 1.0,
                    zero_point: 0
                },
                QuantParams {
                    scale: 0.5,
                    zero_point: 0
                }
            )
            .is_err()
        );
    }
}
