//! Accumulators of TFLM's 16x8 kernels (int16 activations, int8 weights).
//!
//! TFLM instantiates its int16 CONV_2D / FULLY_CONNECTED reference kernels with the bias type
//! as accumulator: `int32_t` (bias absent or int32) requantizes with the double-rounding
//! `MultiplyByQuantizedMultiplier(int32_t, ...)`, `int64_t` (int64 bias) with the 16-bit
//! reduced-multiplier `MultiplyByQuantizedMultiplier(int64_t, ...)`. The two round
//! differently, so the kernels must pick the same one.

use crate::fixed_point::{multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_i64};
use crate::quant::{PrepareError, ShiftRange, pow2};

/// An accumulator type of the 16x8 kernels (`i32` or `i64`), with C++'s wrapping arithmetic.
pub(crate) trait Accumulator: Copy {
    const ZERO: Self;
    /// `acc += a * b` (the product is formed in `int32_t` as the C++ does).
    fn mac(self, a: i32, b: i32) -> Self;
    /// `acc += bias`.
    fn add(self, bias: Self) -> Self;
    /// The `MultiplyByQuantizedMultiplier` overload of this accumulator type.
    fn requantize(self, multiplier: i32, shift: i32) -> i32;
}

impl Accumulator for i32 {
    const ZERO: i32 = 0;
    #[inline(always)]
    fn mac(self, a: i32, b: i32) -> i32 {
        self.wrapping_add(a.wrapping_mul(b))
    }
    #[inline(always)]
    fn add(self, bias: i32) -> i32 {
        self.wrapping_add(bias)
    }
    #[inline(always)]
    fn requantize(self, multiplier: i32, shift: i32) -> i32 {
        multiply_by_quantized_multiplier(self, multiplier, shift)
    }
}

impl Accumulator for i64 {
    const ZERO: i64 = 0;
    #[inline(always)]
    fn mac(self, a: i32, b: i32) -> i64 {
        self.wrapping_add(a.wrapping_mul(b) as i64)
    }
    #[inline(always)]
    fn add(self, bias: i64) -> i64 {
        self.wrapping_add(bias)
    }
    #[inline(always)]
    fn requantize(self, multiplier: i32, shift: i32) -> i32 {
        multiply_by_quantized_multiplier_i64(self, multiplier, shift)
    }
}

/// Rejects requantization exponents outside [`ShiftRange::I64`] (`-31..8`), the documented
/// domain of `MultiplyByQuantizedMultiplier(int64_t, ...)` (TFLM's behaviour is undefined
/// beyond it; such multipliers, `>= 128`, only arise from degenerate output scales).
pub(crate) fn check_shifts_s16(multipliers: &[i32], shifts: &[i32]) -> Result<(), PrepareError> {
    for (&m, &s) in multipliers.iter().zip(shifts) {
        // The real multiplier, for the message: m * 2^(s - 31).
        let real = m as f64 * pow2(s - 31);
        ShiftRange::I64.check(real, s)?;
    }
    Ok(())
}
