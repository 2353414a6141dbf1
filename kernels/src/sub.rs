//! SUB: elementwise difference with optional broadcasting and fused activation.
//!
//! Follows TFLM's `reference_ops::Sub`/`BroadcastSubSlow` for int8 (both inputs rescaled with
//! `left_shift = 20` headroom, subtracted, requantized — the ADD scheme) and float
//! (`clamp(x - y)`). The pinned wheel's `CalculateOpDataSub` (sub_common.cc) takes
//! `twice_max_input_scale = 2 * max(s1, s2)` in `float` and divides in `double`:
//! `double(s1) / double(twice_max)`, `double(twice_max) / (2^left_shift * double(s_out))`
//! ([`prepare_s8`], [`prepare_s16`]). TFLM's current source divides in `float` and widens
//! the quotients; that rounds the real multipliers to 24 bits, so their Q31 forms differ in
//! the low bits and about one output in a few thousand moves by one (measured on the pinned
//! wheel, int16 and int8 alike: `tools/kcases_arith_scales.py`); the wheel wins. int16 is the
//! int8 scheme with `left_shift = 15` and the int16 activation range ([`prepare_s16`]);
//! int32 is unquantized, `clamp(x - y)` with `CalculateActivationRange<int32_t>`
//! ([`prepare_i32`]; the difference wraps where C++ would overflow).

use crate::broadcast::{Broadcast, broadcast_binary};
use crate::fixed_point::{
    multiply_by_quantized_multiplier_smaller_than_one_exp, rounding_divide_by_pot,
};
use crate::quant::{
    Activation, PrepareError, QuantParams, activation_range_f32, activation_range_i8,
    activation_range_i16, quantize_multiplier_smaller_than_one_exp,
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

/// `tflite::CalculateActivationRange<int32_t>`: the clamping range of a fused activation on
/// unquantized int32 values.
pub fn activation_range_i32(activation: Activation) -> (i32, i32) {
    match activation {
        Activation::Relu => (0, i32::MAX),
        Activation::Relu6 => (0, 6),
        Activation::ReluN1To1 => (-1, 1),
        Activation::None | Activation::Tanh | Activation::SignBit => (i32::MIN, i32::MAX),
    }
}

/// Build-time parameters of an int32 SUB: only the activation range.
pub fn prepare_i32(activation: Activation) -> Params {
    let mut p = crate::add::prepare_f32(Activation::None);
    (p.quantized_activation_min, p.quantized_activation_max) = activation_range_i32(activation);
    p
}

/// Build-time parameters of an int8 SUB (`CalculateOpDataSub`).
pub fn prepare_s8(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
    activation: Activation,
) -> Result<Params, PrepareError> {
    let (min, max) = activation_range_i8(activation, output.scale, output.zero_point)?;
    prepare_quantized(input1, input2, output, 20, min, max)
}

/// Build-time parameters of an int16 SUB (`CalculateOpDataSub`, `left_shift = 15`).
pub fn prepare_s16(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
    activation: Activation,
) -> Result<Params, PrepareError> {
    let (min, max) = activation_range_i16(activation, output.scale, output.zero_point)?;
    prepare_quantized(input1, input2, output, 15, min, max)
}

fn prepare_quantized(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
    left_shift: i32,
    min: i32,
    max: i32,
) -> Result<Params, PrepareError> {
    let max_scale = if input1.scale < input2.scale {
        input2.scale
    } else {
        input1.scale
    };
    // `2 * max` in float (infinite above f32::MAX / 2: the input multipliers are then 0,
    // which QuantizeMultiplierSmallerThanOneExp refuses), the quotients in double.
    let twice_max_input_scale = f64::from(2.0 * max_scale);
    let real_input1_multiplier = f64::from(input1.scale) / twice_max_input_scale;
    let real_input2_multiplier = f64::from(input2.scale) / twice_max_input_scale;
    let real_output_multiplier =
        twice_max_input_scale / (f64::from(1i32 << left_shift) * f64::from(output.scale));
    let (input1_multiplier, input1_shift) =
        quantize_multiplier_smaller_than_one_exp(real_input1_multiplier)?;
    let (input2_multiplier, input2_shift) =
        quantize_multiplier_smaller_than_one_exp(real_input2_multiplier)?;
    let (output_multiplier, output_shift) =
        quantize_multiplier_smaller_than_one_exp(real_output_multiplier)?;
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
    sub_quantized(p, x as i32, y as i32) as i8
}

/// TFLM's quantized `SubFunc` on widened inputs (int8 and int16), clamped.
#[inline(always)]
fn sub_quantized(p: &Params, x: i32, y: i32) -> i32 {
    let a = p
        .input1_offset
        .wrapping_add(x)
        .wrapping_mul(1i32 << p.left_shift);
    let b = p
        .input2_offset
        .wrapping_add(y)
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
    clamp_i32(raw, p.quantized_activation_min, p.quantized_activation_max)
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

/// Whether [`sub_s16_fast`] applies: `left_shift = 15` (as [`prepare_s16`] sets), input
/// offsets of int16 zero points and non-negative input multipliers.
fn s16_fast_ok(p: &Params) -> bool {
    let offset_ok = |o: i32| (-32768..=32768).contains(&o);
    p.left_shift == 15
        && offset_ok(p.input1_offset)
        && offset_ok(p.input2_offset)
        && p.input1_multiplier >= 0
        && p.input2_multiplier >= 0
}

/// `MultiplyByQuantizedMultiplierSmallerThanOne((v << 15), m, s)` for `-2^16 <= v < 2^16`,
/// `m >= 0`. `a = v * 2^15` is then exact and never `i32::MIN * i32::MIN`, and
/// `SaturatingRoundingDoublingHighMul(a, m)` — `(a * m + 2^30) / 2^31` for `a * m >= 0`,
/// `(a * m + 1 - 2^30) / 2^31` else, `/` truncating — is `(v * m + 2^15) >> 16` (floor) in
/// both cases: for `a * m >= 0` both sides are the floor of `(v * m + 2^15) / 2^16`; for
/// `a * m < 0`, with `W = 2^15 - v * m > 0`, the truncated quotient is
/// `-floor((2^15 W - 1) / 2^31) = -floor((W - 1) / 2^16) = floor((v * m + 2^15) / 2^16)`.
#[inline(always)]
fn scale_s16_input(v: i32, m: i32, s: i32) -> i32 {
    let high = ((v as i64 * m as i64 + (1 << 15)) >> 16) as i32;
    rounding_divide_by_pot(high, -s)
}

/// [`sub_quantized`] for int16 when [`s16_fast_ok`] (same values).
#[inline(always)]
fn sub_s16_fast(p: &Params, x: i16, y: i16) -> i16 {
    let a = scale_s16_input(
        p.input1_offset + x as i32,
        p.input1_multiplier,
        p.input1_shift,
    );
    let b = scale_s16_input(
        p.input2_offset + y as i32,
        p.input2_multiplier,
        p.input2_shift,
    );
    let raw = multiply_by_quantized_multiplier_smaller_than_one_exp(
        a.wrapping_sub(b),
        p.output_multiplier,
        p.output_shift,
    )
    .wrapping_add(p.output_offset);
    clamp_i32(raw, p.quantized_activation_min, p.quantized_activation_max) as i16
}

/// Int16 SUB of two same-shaped tensors.
pub fn sub_s16(p: &Params, input1: &[i16], input2: &[i16], output: &mut [i16]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    let p = *p;
    if s16_fast_ok(&p) {
        for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
            *o = sub_s16_fast(&p, x, y);
        }
    } else {
        for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
            *o = sub_quantized(&p, x as i32, y as i32) as i16;
        }
    }
}

/// Int16 SUB with broadcasting.
pub fn sub_broadcast_s16(
    p: &Params,
    b: &Broadcast,
    input1: &[i16],
    input2: &[i16],
    output: &mut [i16],
) {
    let p = *p;
    if s16_fast_ok(&p) {
        broadcast_binary(b, input1, input2, output, |x, y| sub_s16_fast(&p, x, y));
    } else {
        broadcast_binary(b, input1, input2, output, |x, y| {
            sub_quantized(&p, x as i32, y as i32) as i16
        });
    }
}

#[inline]
fn sub_func32(p: &Params, x: i32, y: i32) -> i32 {
    clamp_i32(
        x.wrapping_sub(y),
        p.quantized_activation_min,
        p.quantized_activation_max,
    )
}

/// Int32 SUB of two same-shaped tensors: `clamp(x - y)`.
pub fn sub_i32(p: &Params, input1: &[i32], input2: &[i32], output: &mut [i32]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = sub_func32(p, x, y);
    }
}

/// Int32 SUB with broadcasting.
pub fn sub_broadcast_i32(
    p: &Params,
    b: &Broadcast,
    input1: &[i32],
    input2: &[i32],
    output: &mut [i32],
) {
    broadcast_binary(b, input1, input2, output, |x, y| sub_func32(p, x, y));
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
    fn int16_input_scaling_is_the_general_one() {
        let multipliers = [
            0,
            1,
            12345,
            1 << 29,
            1 << 30,
            1_518_500_250,
            i32::MAX - 1,
            i32::MAX,
        ];
        for m in multipliers {
            for s in [0, -1, -2, -7, -15, -16, -30, -31] {
                for v in -65536i32..65536 {
                    let want = multiply_by_quantized_multiplier_smaller_than_one_exp(
                        v.wrapping_mul(1 << 15),
                        m,
                        s,
                    );
                    assert_eq!(scale_s16_input(v, m, s), want, "v {v} m {m} s {s}");
                }
            }
        }
    }

    #[test]
    fn int16_and_int32_sub() {
        let q = QuantParams {
            scale: 0.5,
            zero_point: 0,
        };
        let p = prepare_s16(q, q, q, Activation::None).unwrap();
        let mut o = [0i16; 3];
        sub_s16(&p, &[5, -30000, 30000], &[3, 30000, -30000], &mut o);
        assert_eq!(o, [2, -32768, 32767]);
        let p = prepare_i32(Activation::ReluN1To1);
        let mut o = [0i32; 3];
        sub_i32(&p, &[5, 0, 7], &[3, 0, 8], &mut o);
        assert_eq!(o, [1, 0, -1]);
    }

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
