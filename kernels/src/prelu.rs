//! PRELU: `x >= 0 ? x : x * alpha` elementwise, alpha broadcast against the input.
//!
//! Follows TFLM's `prelu.cc`/`prelu_common.cc`: float32 (`BroadcastPrelu4DSlowFloat`: `x >= 0`
//! keeps `x`, else `x * alpha`, so a NaN input gives NaN), int8 with int8 alpha and int16 with
//! int8 alpha (`reference_ops::BroadcastPrelu4DSlow`): with `v = x - input_zero_point`,
//! `v >= 0` gives `MultiplyByQuantizedMultiplier(v, m1, s1)` (`s_in / s_out`), otherwise
//! `MultiplyByQuantizedMultiplier(v * (alpha - alpha_zero_point), m2, s2)`
//! (`s_in * s_alpha / s_out`), plus the output zero point, clamped to the output type.
//! TFLM always takes the broadcasting path, over at most 4 dimensions (it aborts on more;
//! the operator module refuses them).

use crate::broadcast::{Broadcast, broadcast_binary};
use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::quant::{PrepareError, QuantParams, ShiftRange, quantize_multiplier};

/// TFLM's `PreluParams`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub input_offset: i32,
    pub alpha_offset: i32,
    pub output_offset: i32,
    pub output_multiplier_1: i32,
    pub output_shift_1: i32,
    pub output_multiplier_2: i32,
    pub output_shift_2: i32,
}

/// The kernels need no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

/// `CalculatePreluParams` for int8/int16 outputs.
pub fn prepare(
    input: QuantParams,
    alpha: QuantParams,
    output: QuantParams,
) -> Result<Params, PrepareError> {
    let real1 = input.scale as f64 / output.scale as f64;
    let real2 = input.scale as f64 * alpha.scale as f64 / output.scale as f64;
    let (output_multiplier_1, output_shift_1) = quantize_multiplier(real1, ShiftRange::I32)?;
    let (output_multiplier_2, output_shift_2) = quantize_multiplier(real2, ShiftRange::I32)?;
    Ok(Params {
        input_offset: input.zero_point.wrapping_neg(),
        alpha_offset: alpha.zero_point.wrapping_neg(),
        output_offset: output.zero_point,
        output_multiplier_1,
        output_shift_1,
        output_multiplier_2,
        output_shift_2,
    })
}

/// The quantized element function before the clamp.
#[inline]
fn quantized(p: &Params, x: i32, alpha: i32) -> i32 {
    let v = p.input_offset.wrapping_add(x);
    let out = if v >= 0 {
        multiply_by_quantized_multiplier(v, p.output_multiplier_1, p.output_shift_1)
    } else {
        let a = p.alpha_offset.wrapping_add(alpha);
        multiply_by_quantized_multiplier(v.wrapping_mul(a), p.output_multiplier_2, p.output_shift_2)
    };
    out.wrapping_add(p.output_offset)
}

#[inline]
fn q8(p: &Params, x: i8, a: i8) -> i8 {
    quantized(p, x as i32, a as i32).clamp(i8::MIN as i32, i8::MAX as i32) as i8
}

#[inline]
fn q16(p: &Params, x: i16, a: i8) -> i16 {
    quantized(p, x as i32, a as i32).clamp(i16::MIN as i32, i16::MAX as i32) as i16
}

#[inline(always)]
fn f(x: f32, a: f32) -> f32 {
    if x >= 0.0 { x } else { x * a }
}

/// Int8 PRELU, alpha of the input's shape.
pub fn prelu_s8(p: &Params, input: &[i8], alpha: &[i8], output: &mut [i8]) {
    debug_assert!(input.len() == output.len() && alpha.len() == output.len());
    for ((o, &x), &a) in output.iter_mut().zip(input).zip(alpha) {
        *o = q8(p, x, a);
    }
}

/// Int8 PRELU with broadcasting.
pub fn prelu_broadcast_s8(
    p: &Params,
    b: &Broadcast,
    input: &[i8],
    alpha: &[i8],
    output: &mut [i8],
) {
    broadcast_binary(b, input, alpha, output, |x, a| q8(p, x, a));
}

/// Int16 PRELU (int8 alpha), alpha of the input's shape.
pub fn prelu_s16(p: &Params, input: &[i16], alpha: &[i8], output: &mut [i16]) {
    debug_assert!(input.len() == output.len() && alpha.len() == output.len());
    for ((o, &x), &a) in output.iter_mut().zip(input).zip(alpha) {
        *o = q16(p, x, a);
    }
}

/// Int16 PRELU (int8 alpha) with broadcasting.
pub fn prelu_broadcast_s16(
    p: &Params,
    b: &Broadcast,
    input: &[i16],
    alpha: &[i8],
    output: &mut [i16],
) {
    debug_assert!(input.len() >= b.input1_span() && alpha.len() >= b.input2_span());
    // The two inputs have different types: walk the output with the broadcast's strides.
    let d = &b.output_dims;
    let (s1, s2) = (&b.input1_strides, &b.input2_strides);
    let mut idx = [0usize; 6];
    for o in output.iter_mut() {
        let at = |s: &[usize; 6]| idx.iter().zip(s).map(|(i, s)| i * s).sum::<usize>();
        *o = q16(p, input[at(s1)], alpha[at(s2)]);
        for k in (0..6).rev() {
            idx[k] += 1;
            if idx[k] < d[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// Float PRELU, alpha of the input's shape.
pub fn prelu_f32(input: &[f32], alpha: &[f32], output: &mut [f32]) {
    debug_assert!(input.len() == output.len() && alpha.len() == output.len());
    for ((o, &x), &a) in output.iter_mut().zip(input).zip(alpha) {
        *o = f(x, a);
    }
}

/// Float PRELU with broadcasting.
pub fn prelu_broadcast_f32(b: &Broadcast, input: &[f32], alpha: &[f32], output: &mut [f32]) {
    broadcast_binary(b, input, alpha, output, f);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        let b = Broadcast::new(&[2, 2], &[2]).unwrap();
        let mut o = [0.0f32; 4];
        prelu_broadcast_f32(&b, &[1.0, -1.0, -2.0, 0.0], &[0.5, 0.25], &mut o);
        assert_eq!(o, [1.0, -0.25, -1.0, 0.0]);
        let q = QuantParams {
            scale: 0.5,
            zero_point: 0,
        };
        let p = prepare(q, q, q).unwrap();
        let mut o8 = [0i8; 2];
        // alpha 2 * 0.5 = 1.0: -4 * 1.0 = -4 real, -8 quantized.
        prelu_s8(&p, &[6, -8], &[2, 2], &mut o8);
        assert_eq!(o8, [6, -8]);
        let mut o16 = [0i16; 4];
        prelu_broadcast_s16(&p, &b, &[6, -8, -8, 4], &[2, 1], &mut o16);
        assert_eq!(o16, [6, -4, -8, 4]);
    }
}
