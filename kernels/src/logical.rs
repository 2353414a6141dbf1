//! LOGICAL_AND, LOGICAL_OR (with optional broadcasting) and LOGICAL_NOT on TFLM's bools
//! (one byte, 0 or 1).
//!
//! Follows TFLM's `logical.cc` (`reference_ops::BinaryFunction` /
//! `BroadcastBinaryFunction6DSlow` with `a && b`, `a || b`) and `logical_not` (`!a`). A
//! byte other than 0 counts as true, as C++'s conversion of a `bool` would take it; TFLM's
//! bools are always 0 or 1.

use crate::broadcast::{Broadcast, broadcast_binary};

/// The logical kernels need no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

#[inline(always)]
fn and(x: u8, y: u8) -> u8 {
    u8::from(x != 0 && y != 0)
}

#[inline(always)]
fn or(x: u8, y: u8) -> u8 {
    u8::from(x != 0 || y != 0)
}

/// LOGICAL_AND of two same-shaped tensors.
pub fn logical_and(input1: &[u8], input2: &[u8], output: &mut [u8]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = and(x, y);
    }
}

/// LOGICAL_AND with broadcasting.
pub fn logical_and_broadcast(b: &Broadcast, input1: &[u8], input2: &[u8], output: &mut [u8]) {
    broadcast_binary(b, input1, input2, output, and);
}

/// LOGICAL_OR of two same-shaped tensors.
pub fn logical_or(input1: &[u8], input2: &[u8], output: &mut [u8]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = or(x, y);
    }
}

/// LOGICAL_OR with broadcasting.
pub fn logical_or_broadcast(b: &Broadcast, input1: &[u8], input2: &[u8], output: &mut [u8]) {
    broadcast_binary(b, input1, input2, output, or);
}

/// LOGICAL_NOT.
pub fn logical_not(input: &[u8], output: &mut [u8]) {
    debug_assert!(input.len() == output.len());
    for (o, &x) in output.iter_mut().zip(input) {
        *o = u8::from(x == 0);
    }
}

/// LOGICAL_NOT over its own input.
pub fn logical_not_in_place(data: &mut [u8]) {
    for x in data.iter_mut() {
        *x = u8::from(*x == 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_tables() {
        let (a, b) = ([0u8, 0, 1, 1], [0u8, 1, 0, 1]);
        let mut o = [9u8; 4];
        logical_and(&a, &b, &mut o);
        assert_eq!(o, [0, 0, 0, 1]);
        logical_or(&a, &b, &mut o);
        assert_eq!(o, [0, 1, 1, 1]);
        logical_not(&a, &mut o);
        assert_eq!(o, [1, 1, 0, 0]);
        let bc = Broadcast::new(&[2, 2], &[1]).unwrap();
        logical_and_broadcast(&bc, &a, &[1], &mut o);
        assert_eq!(o, a);
        let mut d = a;
        logical_not_in_place(&mut d);
        assert_eq!(d, [1, 1, 0, 0]);
    }
}
