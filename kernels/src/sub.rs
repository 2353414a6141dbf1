//! SUB: elementwise difference with optional broadcasting and fused activation.
//!
//! Follows TFLM's `reference_ops::Sub`/`BroadcastSubSlow` for int8 (both inputs rescaled with
//! `left_shift = 20` headroom, subtracted, requantized — the ADD scheme) and float
//! (`clamp(x - y)`). Unlike ADD, `sub_common.cc` computes the real multipliers in `float`
//! (`2 * max(s1, s2)`, `s1 / twice_max`, `twice_max / (2^20 * s_out)`) before widening them to
//! `double`; [`prepare_s8`] reproduces that.

use crate::broadcast::{Broadcast, broadcast_binary};
use crate::fixed_point::multiply_by_quantized_multiplier_smaller_than_one_exp;
use crate::quant::{
    Activation, PrepareError, QuantParams, activation_range_f32, activation_range_i8,
    quantize_multiplier_smaller_than_one_exp,
};
use crate::util::{clamp_f32, clamp_i32};

/// Constant parameters of a SUB node (same fields as ADD's).
pub use crate::add::Params;

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters of a float SUB.
pub fn prepare_f32(activation: Activation) -> Params {
    let mut p = crate::add::prepare_f32(Activation::None);
    (p.float_activation_min, p.float_activation_max) = activation_range_f32(activation);
    p
}

/// Build-time parameters of an int8 SUB (`CalculateOpDataSub`).
pub fn prepare_s8(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
    activation: Activation,
) -> Result<Params, PrepareError> {
    let left_shift = 20;
    let max_scale = if input1.scale < input2.scale {
        input2.scale
    } else {
        input1.scale
    };
    let twice_max_input_scale: f32 = 2.0 * max_scale;
    let real_input1_multiplier = (input1.scale / twice_max_input_scale) as f64;
    let real_input2_multiplier = (input2.scale / twice_max_input_scale) as f64;
    let real_output_multiplier =
        (twice_max_input_scale / ((1i32 << left_shift) as f32 * output.scale)) as f64;
    let (input1_multiplier, input1_shift) =
        quantize_multiplier_smaller_than_one_exp(real_input1_multiplier)?;
    let (input2_multiplier, input2_shift) =
        quantize_multiplier_smaller_than_one_exp(real_input2_multiplier)?;
    let (output_multiplier, output_shift) =
        quantize_multiplier_smaller_than_one_exp(real_output_multiplier)?;
    let (min, max) = activation_range_i8(activation, output.scale, output.zero_point)?;
    Ok(Params {
        input1_offset: -input1.zero_point,
        input2_offset: -input2.zero_point,
        output_offset: output.zero_point,
        left_shift,
        input1_multiplier,
        input1_shift,
        input2_multiplier,
        input2_shift,
        output_multiplier,
        output_shift,
        quantized_activation_min: min,
        quantized_activation_max: max,
        float_activation_min: 0.0,
        float_activation_max: 0.0,
    })
}

#[inline]
fn sub_func(p: &Params, x: i8, y: i8) -> i8 {
    let a = p
        .input1_offset
        .wrapping_add(x as i32)
        .wrapping_mul(1i32 << p.left_shift);
    let b = p
        .input2_offset
        .wrapping_add(y as i32)
        .wrapping_mul(1i32 << p.left_shift);
    let a = multiply_by_quantized_multiplier_smaller_than_one_exp(
        a,
        p.input1_multiplier,
        p.input1_shift,
    );
    let b = multiply_by_quantized_multiplier_smaller_than_one_exp(
        b,
        p.input2_multiplier,
        p.input2_shift,
    );
    let raw = multiply_by_quantized_multiplier_smaller_than_one_exp(
        a.wrapping_sub(b),
        p.output_multiplier,
        p.output_shift,
    )
    .wrapping_add(p.output_offset);
    clamp_i32(raw, p.quantized_activation_min, p.quantized_activation_max) as i8
}

/// Int8 SUB of two same-shaped tensors.
pub fn sub_s8(p: &Params, input1: &[i8], input2: &[i8], output: &mut [i8]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = sub_func(p, x, y);
    }
}

/// Int8 SUB with broadcasting.
pub fn sub_broadcast_s8(
    p: &Params,
    b: &Broadcast,
    input1: &[i8],
    input2: &[i8],
    output: &mut [i8],
) {
    broadcast_binary(b, input1, input2, output, |x, y| sub_func(p, x, y));
}

/// Float SUB of two same-shaped tensors: `clamp(x - y)`.
pub fn sub_f32(p: &Params, input1: &[f32], input2: &[f32], output: &mut [f32]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = clamp_f32(x - y, p.float_activation_min, p.float_activation_max);
    }
}

/// Float SUB with broadcasting.
pub fn sub_broadcast_f32(
    p: &Params,
    b: &Broadcast,
    input1: &[f32],
    input2: &[f32],
    output: &mut [f32],
) {
    broadcast_binary(b, input1, input2, output, |x, y| {
        clamp_f32(x - y, p.float_activation_min, p.float_activation_max)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int8_sub() {
        let q = QuantParams {
            scale: 0.5,
            zero_point: 0,
        };
        let p = prepare_s8(q, q, q, Activation::None).unwrap();
        let mut out = [0i8; 4];
        sub_s8(&p, &[5, -100, 100, 0], &[3, 100, -100, 0], &mut out);
        assert_eq!(out, [2, -128, 127, 0]);
        let b = Broadcast::new(&[4], &[1]).unwrap();
        sub_broadcast_s8(&p, &b, &[5, -100, 100, 0], &[1], &mut out);
        assert_eq!(out, [4, -101, 99, -1]);
        let p = prepare_f32(Activation::None);
        let mut f = [0f32; 2];
        sub_f32(&p, &[2.0, -2.0], &[3.0, 3.0], &mut f);
        assert_eq!(f, [-1.0, -5.0]);
    }
}
