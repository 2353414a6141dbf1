//! Unary elementwise operators without parameters, float32: ABS, SQUARE, SQRT, RSQRT, SIN,
//! COS, LOG (TFLM's `elementwise.cc`), CEIL, FLOOR, ROUND, EXP and ELU (`ceil.cc`,
//! `floor.cc`, `round.cc`, `exp.cc`, `elu.cc`); and ABS int8/int16, RSQRT int8 and the int8
//! ELU table.
//!
//! The float kernels call, per element, what TFLM's do: `std::abs`, `f * f`,
//! `std::sqrt`, `1.f / std::sqrt(f)`, `std::sin`, `std::cos`, `std::log`, `std::ceil`,
//! `std::floor`, `RoundToNearest` (ties to even, written with `std::floor`), `std::exp`,
//! `x < 0 ? std::expm1(x) : x`, with the C library functions ported from the reference host's
//! glibc ([`crate::libm_f32`], [`crate::math::expf`], [`crate::glibc_math::expm1f`],
//! [`crate::fmath`]), so the results are bit-identical with TFLM there, NaNs included (an
//! invalid argument gives x86's default NaN `0xffc00000`).

use crate::fmath::{ceil_f32 as ceilf, floor_f32 as floorf};
use crate::glibc_math::expm1f;
use crate::libm_f32::{cosf, logf, sinf, sqrtf};
use crate::math::expf;
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
}
