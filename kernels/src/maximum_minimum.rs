//! MAXIMUM and MINIMUM, elementwise with optional broadcasting, for any element type.
//!
//! Follows TFLM's `maximum_minimum.cc`: `reference_ops::MaximumMinimumBroadcastSlow` with
//! `MaximumOp` (`el1 > el2 ? el1 : el2`) or `MinimumOp` (`el1 < el2 ? el1 : el2`) on the raw
//! values — for floats, a NaN in `input1` yields `input2`'s element. TFLM has no `Prepare`
//! for these operators: quantized tensors are compared as stored integers and nothing is
//! rescaled (the converter gives inputs and output the same quantization), so there are no
//! build-time parameters besides the [`Broadcast`] of the broadcasting kernels.

use crate::broadcast::{Broadcast, broadcast_binary};

/// Reference kernels need no scratch memory (MAXIMUM/MINIMUM have no `Params`; the
/// broadcasting kernels' only parameter is the [`Broadcast`]).
pub const fn scratch_bytes(_b: &Broadcast) -> usize {
    0
}

/// `MaximumOp::op`: `el1 > el2 ? el1 : el2`.
#[inline(always)]
fn max_op<T: PartialOrd>(el1: T, el2: T) -> T {
    if el1 > el2 { el1 } else { el2 }
}

/// `MinimumOp::op`: `el1 < el2 ? el1 : el2`.
#[inline(always)]
fn min_op<T: PartialOrd>(el1: T, el2: T) -> T {
    if el1 < el2 { el1 } else { el2 }
}

/// MAXIMUM of two same-shaped tensors.
pub fn maximum<T: Copy + PartialOrd>(input1: &[T], input2: &[T], output: &mut [T]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = max_op(x, y);
    }
}

/// MAXIMUM with broadcasting.
pub fn maximum_broadcast<T: Copy + PartialOrd>(
    b: &Broadcast,
    input1: &[T],
    input2: &[T],
    output: &mut [T],
) {
    broadcast_binary(b, input1, input2, output, max_op);
}

/// MINIMUM of two same-shaped tensors.
pub fn minimum<T: Copy + PartialOrd>(input1: &[T], input2: &[T], output: &mut [T]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = min_op(x, y);
    }
}

/// MINIMUM with broadcasting.
pub fn minimum_broadcast<T: Copy + PartialOrd>(
    b: &Broadcast,
    input1: &[T],
    input2: &[T],
    output: &mut [T],
) {
    broadcast_binary(b, input1, input2, output, min_op);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_nan() {
        let mut out = [0.0f32; 3];
        maximum(&[1.0, f32::NAN, 2.0], &[0.5, 3.0, f32::NAN], &mut out);
        assert_eq!(out[..2], [1.0, 3.0]);
        assert!(out[2].is_nan());
        minimum(&[1.0, f32::NAN, 2.0], &[0.5, 3.0, f32::NAN], &mut out);
        assert_eq!(out[..2], [0.5, 3.0]);
        assert!(out[2].is_nan());
        let b = Broadcast::new(&[2, 2], &[2]).unwrap();
        let mut o8 = [0i8; 4];
        maximum_broadcast(&b, &[1i8, -5, 7, 0], &[2, -1], &mut o8);
        assert_eq!(o8, [2, -1, 7, 0]);
        minimum_broadcast(&b, &[1i8, -5, 7, 0], &[2, -1], &mut o8);
        assert_eq!(o8, [1, -5, 2, -1]);
    }
}
