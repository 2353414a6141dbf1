//! Unary elementwise operators without parameters, float32: ABS, SQUARE, SQRT, RSQRT, SIN,
//! COS, LOG (TFLM's `elementwise.cc`), CEIL, FLOOR, ROUND, EXP and ELU (`ceil.cc`,
//! `floor.cc`, `round.cc`, `exp.cc`, `elu.cc`); and ABS int8/int16 (quantized, or int16
//! without quantization) and ELU int8 (TFLM's lookup table, built by [`prepare_elu_s8`] with
//! the same `float` operations).
//!
//! The float kernels call, per element, what TFLM's do: `std::abs`, `f * f`,
//! `std::sqrt`, `1.f / std::sqrt(f)`, `std::sin`, `std::cos`, `std::log`, `std::ceil`,
//! `std::floor`, `RoundToNearest` (ties to even, written with `std::floor`), `std::exp`,
//! `x < 0 ? std::expm1(x) : x`, with the C library functions ported from the reference host's
//! glibc ([`crate::libm_f32`], [`crate::math::expf`], [`crate::glibc_math::expm1f`],
//! [`crate::fmath`]), so the results are bit-identical with TFLM there, NaNs included (an
//! invalid argument gives x86's default NaN `0xffc00000`).

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::fmath::{ceil_f32 as ceilf, floor_f32 as floorf};
use crate::glibc_math::expm1f;
use crate::libm_f32::{cosf, logf, sinf, sqrtf};
use crate::math::expf;
use crate::quant::{
    PrepareError, QuantParams, ShiftRange, quantize_multiplier, round_f32 as roundf,
};
use crate::util::{map, map_in_place};

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

/// `RoundToNearest` (`reference/round.h`): `floor(x)`, plus one when the fraction is above
/// one half, or exactly one half and `floor(x)` is odd.
#[inline]
fn round_to_nearest(x: f32) -> f32 {
    let floor = floorf(x);
    let diff = x - floor;
    // A fraction of exactly 0.5 only occurs for |x| < 2^23, where the cast is exact.
    if diff < 0.5 || (diff == 0.5 && (floor as i32) % 2 == 0) {
        floor
    } else {
        floor + 1.0
    }
}

#[inline]
fn abs_op(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & 0x7fff_ffff)
}

#[inline]
fn rsqrt_op(x: f32) -> f32 {
    1.0 / sqrtf(x)
}

#[inline]
fn elu_op(x: f32) -> f32 {
    if x < 0.0 { expm1f(x) } else { x }
}

macro_rules! float_kernels {
    ($($(#[$doc:meta])* $name:ident, $in_place:ident => $f:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name(input: &[f32], output: &mut [f32]) {
            map(input, output, $f);
        }

        #[doc = concat!("[`", stringify!($name), "`] with the output overwriting the input.")]
        pub fn $in_place(data: &mut [f32]) {
            map_in_place(data, $f);
        }
    )*};
}

float_kernels! {
    /// ABS float32: `std::abs` (the sign bit cleared).
    abs_f32, abs_f32_in_place => abs_op;
    /// SQUARE float32: `x * x`.
    square_f32, square_f32_in_place => |x| x * x;
    /// SQRT float32: `std::sqrt` (correctly rounded).
    sqrt_f32, sqrt_f32_in_place => sqrtf;
    /// RSQRT float32: `1.f / std::sqrt(x)`.
    rsqrt_f32, rsqrt_f32_in_place => rsqrt_op;
    /// SIN float32: `std::sin` (glibc's `sinf`).
    sin_f32, sin_f32_in_place => sinf;
    /// COS float32: `std::cos` (glibc's `cosf`).
    cos_f32, cos_f32_in_place => cosf;
    /// LOG float32: `std::log` (glibc's `logf`).
    log_f32, log_f32_in_place => logf;
    /// CEIL float32: `std::ceil`.
    ceil_f32, ceil_f32_in_place => ceilf;
    /// FLOOR float32: `std::floor`.
    floor_f32, floor_f32_in_place => floorf;
    /// ROUND float32: `RoundToNearest` (half to even).
    round_f32, round_f32_in_place => round_to_nearest;
    /// EXP float32: `std::exp` (glibc's `expf`).
    exp_f32, exp_f32_in_place => expf;
    /// ELU float32: `x < 0 ? std::expm1(x) : x`.
    elu_f32, elu_f32_in_place => elu_op;
}

/// Parameters of a quantized ABS (`OpDataAbsRsqrt`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbsParams {
    pub input_offset: i32,
    pub output_offset: i32,
    /// The scales differ: the magnitude is requantized by `multiplier` and `shift`.
    pub needs_rescale: bool,
    pub multiplier: i32,
    pub shift: i32,
}

/// Build-time parameters of a quantized ABS (TFLM's `PrepareAbsRsqrt`): `int16` requires
/// zero points 0 (else TFLM's `Prepare` fails).
pub fn prepare_abs(
    input: QuantParams,
    output: QuantParams,
    int16: bool,
) -> Result<AbsParams, PrepareError> {
    if int16 && (input.zero_point != 0 || output.zero_point != 0) {
        return Err(PrepareError::UnsupportedQuantization);
    }
    let needs_rescale = input.scale != output.scale;
    let (multiplier, shift) = if needs_rescale {
        quantize_multiplier(input.scale as f64 / output.scale as f64, ShiftRange::I32)?
    } else {
        (0, 0)
    };
    Ok(AbsParams {
        input_offset: input.zero_point,
        output_offset: output.zero_point,
        needs_rescale,
        multiplier,
        shift,
    })
}

/// `AbsEvalQuantized`: `|x - input_offset|`, requantized if the scales differ, plus the
/// output offset, clamped to the type.
#[inline]
fn abs_quantized(p: &AbsParams, x: i32, min: i32, max: i32) -> i32 {
    let value = (x - p.input_offset).wrapping_abs();
    let out = if p.needs_rescale {
        multiply_by_quantized_multiplier(value, p.multiplier, p.shift)
    } else {
        value
    }
    .wrapping_add(p.output_offset);
    out.clamp(min, max)
}

/// Int8 ABS.
pub fn abs_s8(p: &AbsParams, input: &[i8], output: &mut [i8]) {
    map(input, output, |x| {
        abs_quantized(p, x as i32, -128, 127) as i8
    });
}

/// [`abs_s8`] in place.
pub fn abs_s8_in_place(p: &AbsParams, data: &mut [i8]) {
    map_in_place(data, |x| abs_quantized(p, x as i32, -128, 127) as i8);
}

/// Int16 ABS of a quantized tensor (zero points 0).
pub fn abs_s16(p: &AbsParams, input: &[i16], output: &mut [i16]) {
    map(input, output, |x| {
        abs_quantized(p, x as i32, -32768, 32767) as i16
    });
}

/// [`abs_s16`] in place.
pub fn abs_s16_in_place(p: &AbsParams, data: &mut [i16]) {
    map_in_place(data, |x| abs_quantized(p, x as i32, -32768, 32767) as i16);
}

/// Int16 ABS of a tensor without quantization: `std::abs` stored back to `int16_t`
/// (`-32768` stays `-32768`).
pub fn abs_s16_raw(input: &[i16], output: &mut [i16]) {
    map(input, output, i16::wrapping_abs);
}

/// [`abs_s16_raw`] in place.
pub fn abs_s16_raw_in_place(data: &mut [i16]) {
    map_in_place(data, i16::wrapping_abs);
}

/// `static_cast<int32_t>(float)` as x86-64 computes it (`cvttss2si`): truncation, and
/// `INT32_MIN` for NaN and out-of-range values.
fn f32_to_i32_x86(x: f32) -> i32 {
    if (-2_147_483_648.0..2_147_483_648.0).contains(&x) {
        x as i32
    } else {
        i32::MIN
    }
}

/// The int8 ELU table (`elu.cc`'s `PopulateLookupTable` with `x < 0 ? std::exp(x) - 1 : x`),
/// indexed by the input byte (`table[x as u8]`).
pub fn prepare_elu_s8(input: QuantParams, output: QuantParams) -> [i8; 256] {
    let inverse_scale = 1.0 / output.scale;
    let mut table = [0i8; 256];
    for val in -128i32..=127 {
        let dequantized = input.scale * (val - input.zero_point) as f32;
        let transformed = if dequantized < 0.0 {
            expf(dequantized) - 1.0
        } else {
            dequantized
        };
        let rescaled = roundf(transformed * inverse_scale);
        let quantized = f32_to_i32_x86(rescaled + output.zero_point as f32);
        table[val as u8 as usize] = quantized.clamp(-128, 127) as i8;
    }
    table
}

/// Int8 ELU: a table lookup.
pub fn elu_s8(table: &[i8; 256], input: &[i8], output: &mut [i8]) {
    map(input, output, |x| table[x as u8 as usize]);
}

/// [`elu_s8`] in place.
pub fn elu_s8_in_place(table: &[i8; 256], data: &mut [i8]) {
    map_in_place(data, |x| table[x as u8 as usize]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_is_half_to_even() {
        let x = [
            0.5f32,
            1.5,
            2.5,
            -0.5,
            -1.5,
            -2.5,
            2.4,
            -2.6,
            1e10,
            f32::INFINITY,
        ];
        let want = [
            0.0f32,
            2.0,
            2.0,
            0.0,
            -2.0,
            -2.0,
            2.0,
            -3.0,
            1e10,
            f32::INFINITY,
        ];
        let mut y = [0.0; 10];
        round_f32(&x, &mut y);
        assert_eq!(y, want);
        // -0.5 rounds to +0 (floor -1 is odd, so -1 + 1).
        assert_eq!(y[3].to_bits(), 0);
        round_f32_in_place(&mut [f32::NAN]);
    }

    #[test]
    fn float_kernels_match_std() {
        let x: std::vec::Vec<f32> = (-400..400).map(|i| i as f32 * 0.173).collect();
        let mut y = std::vec![0.0; x.len()];
        let check = |y: &[f32], f: fn(f32) -> f32| {
            for (a, b) in x.iter().zip(y) {
                assert_eq!(f(std::hint::black_box(*a)).to_bits(), b.to_bits(), "{a}");
            }
        };
        abs_f32(&x, &mut y);
        check(&y, f32::abs);
        sqrt_f32(&x, &mut y);
        check(&y, f32::sqrt);
        ceil_f32(&x, &mut y);
        check(&y, f32::ceil);
        floor_f32(&x, &mut y);
        check(&y, f32::floor);
        let mut z = x.clone();
        elu_f32_in_place(&mut z);
        check(&z, |v| if v < 0.0 { v.exp_m1() } else { v });
        rsqrt_f32(&x, &mut y);
        check(&y, |v| 1.0 / v.sqrt());
    }

    #[test]
    fn quantized_abs_and_elu() {
        let q = |scale, zero_point| QuantParams { scale, zero_point };
        let mut y = [0i16; 3];
        abs_s16_raw(&[-32768, -5, 7], &mut y);
        assert_eq!(y, [-32768, 5, 7]);
        let p = prepare_abs(q(0.5, -128), q(0.5, -128), false).unwrap();
        assert!(!p.needs_rescale);
        let mut z = [0i8; 3];
        abs_s8(&p, &[-128, 127, 0], &mut z);
        assert_eq!(z, [-128, 127, 0]); // |x + 128| - 128
        assert_eq!(
            prepare_abs(q(0.5, 1), q(0.5, 0), true),
            Err(PrepareError::UnsupportedQuantization)
        );
        let t = prepare_elu_s8(q(0.05, 0), q(0.05, 0));
        assert_eq!(t[0], 0);
        assert_eq!(t[100], 100);
        assert_eq!(t[(-128i8) as u8 as usize], -20); // round((e^-6.4 - 1) / 0.05)
    }
}
