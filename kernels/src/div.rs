//! DIV (float32): elementwise quotient with optional broadcasting and fused activation.
//!
//! Follows TFLM's `div.cc` float path: `reference_ops::Div` / `BroadcastDivSlow<float>`,
//! `ActivationFunctionWithMinMax(input1 / input2, min, max)` with the float activation
//! range. Division by zero gives IEEE infinities/NaN as in C++. (TFLM's int8 DIV is not
//! implemented here.)

use crate::broadcast::{Broadcast, broadcast_binary};
use crate::quant::{Activation, activation_range_f32};
use crate::util::clamp_f32;

/// Constant parameters of a float DIV node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Lower clamp of the output.
    pub float_activation_min: f32,
    /// Upper clamp of the output.
    pub float_activation_max: f32,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters of a float DIV (`CalculateActivationRange`).
pub fn prepare_f32(activation: Activation) -> Params {
    let (float_activation_min, float_activation_max) = activation_range_f32(activation);
    Params {
        float_activation_min,
        float_activation_max,
    }
}

/// Float DIV of two same-shaped tensors (`reference_ops::Div<float>`): `clamp(x / y)`.
pub fn div_f32(p: &Params, input1: &[f32], input2: &[f32], output: &mut [f32]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = clamp_f32(x / y, p.float_activation_min, p.float_activation_max);
    }
}

/// Float DIV with broadcasting (`reference_ops::BroadcastDivSlow<float>`).
pub fn div_broadcast_f32(
    p: &Params,
    b: &Broadcast,
    input1: &[f32],
    input2: &[f32],
    output: &mut [f32],
) {
    broadcast_binary(b, input1, input2, output, |x, y| {
        clamp_f32(x / y, p.float_activation_min, p.float_activation_max)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divides_and_clamps() {
        let p = prepare_f32(Activation::Relu6);
        let mut out = [0.0f32; 4];
        div_f32(
            &p,
            &[1.0, -1.0, 100.0, 3.0],
            &[2.0, 1.0, 2.0, 0.0],
            &mut out,
        );
        assert_eq!(out, [0.5, 0.0, 6.0, 6.0]);
        let p = prepare_f32(Activation::None);
        let b = Broadcast::new(&[2, 2], &[1]).unwrap();
        div_broadcast_f32(&p, &b, &[1.0, 2.0, 3.0, 4.0], &[4.0], &mut out);
        assert_eq!(out, [0.25, 0.5, 0.75, 1.0]);
    }
}
