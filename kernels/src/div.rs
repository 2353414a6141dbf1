//! DIV (float32, int8, int32): elementwise quotient with optional broadcasting and fused activation.
//!
//! Follows TFLM's `div.cc` float path: `reference_ops::Div` / `BroadcastDivSlow<float>`,
//! `ActivationFunctionWithMinMax(input1 / input2, min, max)` with the float activation
//! range. Division by zero gives IEEE infinities/NaN as in C++.
//!
//! int8 (`reference_ops::DivElementwise` / `BroadcastDivSlowQuantized`): with
//! `a = x - zp1`, `b = y - zp2` (both negated when `b < 0`), `b`'s Q31 reciprocal
//! (`GetReciprocal(b, 31)`), `a` shifted by its headroom (`CountLeadingSignBits`) and
//! multiplied by it, then `MultiplyByQuantizedMultiplierSmallerThanOneExp` with the output
//! multiplier of `float(s1 / (s2 * s_out))` and the right shift
//! `recip_shift + headroom - output_shift`, plus the output zero point, clamped.
//! That right shift depends on the data; TFLM shifts by it unchecked (undefined behaviour
//! outside `0..=31`). [`prepare_s8`] therefore checks every pair of int8 inputs at build
//! time and refuses quantizations for which some pair with `a != 0` needs a shift outside
//! `0..=31`. A divisor equal to its zero point (`b == 0`) is undefined in TFLM (a failed
//! debug check); Kiln gives the activation bound of `a`'s sign (the zero point for `a == 0`).
//!
//! int32 (unquantized, `reference_ops::Div<int32_t>`): C++'s truncating `x / y`, clamped to
//! `CalculateActivationRange<int32_t>`. TFLM traps on `y == 0` and on `i32::MIN / -1`;
//! Kiln gives 0 for the first and `i32::MIN` (wrapping) for the second.

use crate::broadcast::{Broadcast, broadcast_binary};
use crate::fixed_point::{
    get_reciprocal, multiply_by_quantized_multiplier_greater_than_one,
    multiply_by_quantized_multiplier_smaller_than_one_exp,
};
use crate::quant::{
    Activation, PrepareError, QuantParams, ShiftRange, activation_range_f32, activation_range_i8,
    quantize_multiplier,
};
use crate::util::{clamp_f32, clamp_i32};

/// Constant parameters of an int8 DIV node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamsS8 {
    pub input1_offset: i32,
    pub input2_offset: i32,
    pub output_offset: i32,
    pub output_multiplier: i32,
    pub output_shift: i32,
    pub quantized_activation_min: i32,
    pub quantized_activation_max: i32,
}

/// `CountLeadingSignBits` for `i32` (31 for 0).
#[inline]
const fn leading_sign_bits(x: i32) -> i32 {
    if x >= 0 {
        x.leading_zeros() as i32 - 1
    } else {
        (!x).leading_zeros() as i32 - 1
    }
}

/// `get_reciprocal(m, 31).0` for each odd `m` in `1..=255`, at index `m / 2`, computed at
/// compile time (512 bytes of constants).
///
/// `GetReciprocal(b, 31)` depends on `b` only through `b` shifted up to bit 31 (and its shift
/// through `b`'s leading zeros): `b` and `2 * b` share the reciprocal, so every `b` is its odd
/// part's. The int8 divisors `|y - zero_point|` are at most 255, so the kernel looks every
/// reciprocal up here instead of running gemmlowp's Newton-Raphson iterations per element
/// (what TFLM does; the same integers).
static RECIPROCALS: [i32; 128] = {
    let mut table = [0i32; 128];
    let mut i = 0;
    while i < table.len() {
        table[i] = get_reciprocal(2 * i as i32 + 1, 31).0;
        i += 1;
    }
    table
};

/// `get_reciprocal(b, 31)` for `b > 0` (or `i32::MIN`, whose bits it takes as `2^31`), from
/// [`RECIPROCALS`] when `b`'s odd part is in the table (every divisor of an int8 DIV), else
/// computed.
#[inline(always)]
fn reciprocal(b: i32) -> (i32, i32) {
    let u = b as u32;
    let odd = u >> u.trailing_zeros();
    let at = (odd >> 1) as usize;
    if u != 0 && at < RECIPROCALS.len() {
        (RECIPROCALS[at], 31 - u.leading_zeros() as i32)
    } else {
        get_reciprocal(b, 31)
    }
}

/// The sign-normalized operands, the reciprocal of `b` and the right shift of one element.
#[inline(always)]
fn div_terms(p: &ParamsS8, a: i32, b: i32) -> (i32, i32, i32, i32) {
    let (a, b) = if b < 0 {
        (a.wrapping_neg(), b.wrapping_neg())
    } else {
        (a, b)
    };
    let (inv, recip_shift) = reciprocal(b);
    let headroom = leading_sign_bits(a);
    let right = recip_shift + headroom - p.output_shift;
    (a, inv, headroom, right)
}

/// Build-time parameters of an int8 DIV (`CalculateOpDataDiv`), refused when the kernel's
/// data-dependent shift can leave `0..=31` (see the module docs).
pub fn prepare_s8(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
    activation: Activation,
) -> Result<ParamsS8, PrepareError> {
    let (min, max) = activation_range_i8(activation, output.scale, output.zero_point)?;
    let real = (input1.scale / (input2.scale * output.scale)) as f64;
    let range = ShiftRange { min: -31, max: 31 };
    let (output_multiplier, output_shift) = quantize_multiplier(real, range)?;
    let p = ParamsS8 {
        input1_offset: input1.zero_point.wrapping_neg(),
        input2_offset: input2.zero_point.wrapping_neg(),
        output_offset: output.zero_point,
        output_multiplier,
        output_shift,
        quantized_activation_min: min,
        quantized_activation_max: max,
    };
    // The right shift of a pair is `recip_shift + headroom - output_shift`: it stays in
    // 0..=31 for every pair with `a != 0` exactly when the output exponent is within
    // `max(recip + headroom) - 31 ..= min(recip + headroom)`.
    let (mut lo, mut hi) = (i32::MIN, i32::MAX);
    for x in i8::MIN as i32..=i8::MAX as i32 {
        for y in i8::MIN as i32..=i8::MAX as i32 {
            let (a, b) = (p.input1_offset + x, p.input2_offset + y);
            if b == 0 {
                continue;
            }
            let (a, _, _, right) = div_terms(&p, a, b);
            if a != 0 {
                let total = right + output_shift; // recip_shift + headroom
                lo = lo.max(total - 31);
                hi = hi.min(total);
            }
        }
    }
    ShiftRange { min: lo, max: hi }.check(real, output_shift)?;
    Ok(p)
}

/// The int8 element function.
#[inline(always)]
fn div_s8_op(p: &ParamsS8, x: i8, y: i8) -> i8 {
    let a = p.input1_offset.wrapping_add(x as i32);
    let b = p.input2_offset.wrapping_add(y as i32);
    let (lo, hi) = (p.quantized_activation_min, p.quantized_activation_max);
    if b == 0 {
        let v = if a > 0 {
            hi
        } else if a < 0 {
            lo
        } else {
            p.output_offset
        };
        return clamp_i32(v, lo, hi) as i8;
    }
    let (a, inv, headroom, right) = div_terms(p, a, b);
    let quotient = multiply_by_quantized_multiplier_greater_than_one(a, inv, headroom);
    // `right` is in 0..=31 for every `a != 0` of an accepted model (prepare_s8); `a == 0`
    // gives a zero quotient, which every shift keeps 0.
    let raw = multiply_by_quantized_multiplier_smaller_than_one_exp(
        quotient,
        p.output_multiplier,
        -right.clamp(0, 31),
    )
    .wrapping_add(p.output_offset);
    clamp_i32(raw, lo, hi) as i8
}

/// Build-time parameters of an int32 DIV: the activation range in the quantized fields.
pub fn prepare_i32(activation: Activation) -> ParamsS8 {
    let (min, max) = crate::sub::activation_range_i32(activation);
    ParamsS8 {
        input1_offset: 0,
        input2_offset: 0,
        output_offset: 0,
        output_multiplier: 0,
        output_shift: 0,
        quantized_activation_min: min,
        quantized_activation_max: max,
    }
}

#[inline]
fn div_i32_op(p: &ParamsS8, x: i32, y: i32) -> i32 {
    let q = if y == 0 { 0 } else { x.wrapping_div(y) };
    clamp_i32(q, p.quantized_activation_min, p.quantized_activation_max)
}

/// Int32 DIV of two same-shaped tensors.
pub fn div_i32(p: &ParamsS8, input1: &[i32], input2: &[i32], output: &mut [i32]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = div_i32_op(p, x, y);
    }
}

/// Int32 DIV with broadcasting.
pub fn div_broadcast_i32(
    p: &ParamsS8,
    b: &Broadcast,
    input1: &[i32],
    input2: &[i32],
    output: &mut [i32],
) {
    broadcast_binary(b, input1, input2, output, |x, y| div_i32_op(p, x, y));
}

/// Int8 DIV of two same-shaped tensors.
pub fn div_s8(p: &ParamsS8, input1: &[i8], input2: &[i8], output: &mut [i8]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = div_s8_op(p, x, y);
    }
}

/// Int8 DIV with broadcasting.
pub fn div_broadcast_s8(
    p: &ParamsS8,
    b: &Broadcast,
    input1: &[i8],
    input2: &[i8],
    output: &mut [i8],
) {
    broadcast_binary(b, input1, input2, output, |x, y| div_s8_op(p, x, y));
}

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
    fn int8_quotients() {
        let q = |scale| QuantParams {
            scale,
            zero_point: 0,
        };
        // s1 / (s2 * s_out) = 1 / (1 * 1/128) = 128: within the checked shifts.
        let p = prepare_s8(q(1.0), q(1.0), q(1.0 / 128.0), Activation::None).unwrap();
        let mut o = [0i8; 4];
        div_s8(&p, &[1, -1, 0, 3], &[2, 4, 5, -1], &mut o);
        assert_eq!(o, [64, -32, 0, -128]);
        // Multiplier 1: the shift for a = -1, b = 127 would be 37, refused.
        assert!(prepare_s8(q(1.0), q(1.0), q(1.0), Activation::None).is_err());
    }

    #[test]
    fn reciprocal_table_is_get_reciprocal() {
        for b in (1..=70_000).chain([i32::MAX, i32::MAX - 1, 1 << 30, i32::MIN]) {
            assert_eq!(reciprocal(b), get_reciprocal(b, 31), "b = {b}");
        }
    }

    #[test]
    fn int32_quotients() {
        let p = prepare_i32(Activation::Relu6);
        let mut o = [9i32; 5];
        div_i32(&p, &[7, -7, 100, 5, i32::MIN], &[2, 2, 3, 0, -1], &mut o);
        assert_eq!(o, [3, 0, 6, 0, 0]);
    }

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
