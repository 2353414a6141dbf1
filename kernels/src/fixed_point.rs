//! gemmlowp-style fixed-point arithmetic, bit-exact with the helpers TFLM's reference kernels use.
//!
//! These mirror `gemmlowp/fixedpoint/fixedpoint.h` and the requantization helpers of
//! `tensorflow/lite/kernels/internal/common.{h,cc}` in TFLM's default build (double rounding,
//! i.e. *not* `TFLITE_SINGLE_ROUNDING`).
//!
//! A "Q`m`" value below is a raw `i32` holding a fixed-point number with `m` integer bits and
//! `31 - m` fractional bits (gemmlowp's `FixedPoint<int32_t, m>`). gemmlowp's non-saturating
//! `+`/`-` are C++ signed operations whose overflow is undefined; here they wrap, which is what
//! every real compiler produces for them.

/// `gemmlowp::SaturatingRoundingDoublingHighMul` for `i32` (the ARM `VQRDMULH` semantics):
/// `round(a * b / 2^31)`, with ties rounded toward +infinity and `MIN * MIN` saturated to `MAX`.
#[inline]
pub const fn saturating_rounding_doubling_high_mul(a: i32, b: i32) -> i32 {
    if a == b && a == i32::MIN {
        return i32::MAX;
    }
    let ab = a as i64 * b as i64;
    let nudge: i64 = if ab >= 0 { 1 << 30 } else { 1 - (1 << 30) };
    // C++ `/` truncates toward zero, as Rust's does.
    ((ab + nudge) / (1i64 << 31)) as i32
}

/// `gemmlowp::RoundingDivideByPOT` for `i32`: `x / 2^exponent` rounded to nearest, ties away
/// from zero. `exponent` must be in `0..=31`.
#[inline]
pub const fn rounding_divide_by_pot(x: i32, exponent: i32) -> i32 {
    debug_assert!(exponent >= 0 && exponent <= 31);
    let mask = ((1i64 << exponent) - 1) as i32;
    let remainder = x & mask;
    let threshold = (mask >> 1) + (x < 0) as i32;
    (x >> exponent) + (remainder > threshold) as i32
}

/// `gemmlowp::RoundingDivideByPOT` for `i16` (used by the int16 kernels).
#[inline]
pub const fn rounding_divide_by_pot_i16(x: i16, exponent: i32) -> i16 {
    debug_assert!(exponent >= 0 && exponent <= 15);
    let mask = ((1i32 << exponent) - 1) as i16;
    let remainder = x & mask;
    let threshold = (mask >> 1) + (x < 0) as i16;
    (x >> exponent) + (remainder > threshold) as i16
}

/// `tflite::MultiplyByQuantizedMultiplier(int32_t, int32_t, int)` in TFLM's default
/// double-rounding build: a saturating rounding doubling high multiply by
/// `quantized_multiplier`, preceded by a left shift (`shift > 0`) or followed by a rounding
/// right shift (`shift < 0`). `shift` is the exponent returned by
/// [`quantize_multiplier`](crate::quant::quantize_multiplier) (`-31..=30`).
#[inline]
pub const fn multiply_by_quantized_multiplier(
    x: i32,
    quantized_multiplier: i32,
    shift: i32,
) -> i32 {
    let left_shift = if shift > 0 { shift } else { 0 };
    let right_shift = if shift > 0 { 0 } else { -shift };
    rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(
            x.wrapping_mul(1i32 << left_shift),
            quantized_multiplier,
        ),
        right_shift,
    )
}

/// `tflite::MultiplyByQuantizedMultiplier(int64_t, int32_t, int)` (used by the int16 kernels
/// with 64-bit accumulators): the multiplier is reduced to 16 bits and a single rounding shift
/// is applied. Expects `quantized_multiplier >= 0`, `-31 <= shift < 8` and `|x| < 2^47`.
#[inline]
pub const fn multiply_by_quantized_multiplier_i64(
    x: i64,
    quantized_multiplier: i32,
    shift: i32,
) -> i32 {
    let reduced_multiplier = if quantized_multiplier < 0x7FFF_0000 {
        (quantized_multiplier + (1 << 15)) >> 16
    } else {
        0x7FFF
    };
    let total_shift = 15 - shift;
    let x = x
        .wrapping_mul(reduced_multiplier as i64)
        .wrapping_add(1i64 << (total_shift - 1));
    (x >> total_shift) as i32
}

/// `tflite::MultiplyByQuantizedMultiplierSmallerThanOneExp` (double-rounding build):
/// `RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, m), -left_shift)` with
/// `left_shift <= 0`.
#[inline]
pub const fn multiply_by_quantized_multiplier_smaller_than_one_exp(
    x: i32,
    quantized_multiplier: i32,
    left_shift: i32,
) -> i32 {
    rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(x, quantized_multiplier),
        -left_shift,
    )
}

/// `tflite::MultiplyByQuantizedMultiplierGreaterThanOne` (double-rounding build):
/// `SaturatingRoundingDoublingHighMul(x * 2^left_shift, m)` with `left_shift >= 0`.
#[inline]
pub const fn multiply_by_quantized_multiplier_greater_than_one(
    x: i32,
    quantized_multiplier: i32,
    left_shift: i32,
) -> i32 {
    saturating_rounding_doubling_high_mul(x.wrapping_mul(1i32 << left_shift), quantized_multiplier)
}

/// `gemmlowp::RoundingHalfSum` for `i32`: `(a + b) / 2` rounded to nearest, ties away from zero.
#[inline]
pub const fn rounding_half_sum(a: i32, b: i32) -> i32 {
    let sum = a as i64 + b as i64;
    let sign: i64 = if sum >= 0 { 1 } else { -1 };
    ((sum + sign) / 2) as i32
}

/// gemmlowp's `SaturatingRoundingMultiplyByPOT<exponent>` (and TFLM's
/// `SaturatingRoundingMultiplyByPOTParam`) for `i32`: a saturating left shift for
/// `exponent > 0`, a rounding right shift for `exponent < 0`.
#[inline]
pub const fn saturating_rounding_multiply_by_pot(x: i32, exponent: i32) -> i32 {
    if exponent == 0 {
        x
    } else if exponent > 0 {
        let threshold = (1i32 << (31 - exponent)) - 1;
        if x > threshold {
            i32::MAX
        } else if x < -threshold {
            i32::MIN
        } else {
            x.wrapping_mul(1i32 << exponent)
        }
    } else {
        rounding_divide_by_pot(x, -exponent)
    }
}

/// gemmlowp's `Rescale<dst_integer_bits>` of a raw value with `src_integer_bits` integer bits.
#[inline]
pub const fn rescale(x: i32, src_integer_bits: i32, dst_integer_bits: i32) -> i32 {
    saturating_rounding_multiply_by_pot(x, src_integer_bits - dst_integer_bits)
}

/// `gemmlowp::exp_on_interval_between_negative_one_quarter_and_0_excl`: `exp(a)` for a Q0 `a`
/// in `[-1/4, 0)`, result in Q0.
#[inline]
pub const fn exp_on_interval_between_negative_one_quarter_and_0_excl(a: i32) -> i32 {
    const CONSTANT_TERM: i32 = 1_895_147_668; // exp(-1/8)
    const CONSTANT_1_OVER_3: i32 = 715_827_883;
    let x = a.wrapping_add(1 << 28); // a + 1/8
    let x2 = saturating_rounding_doubling_high_mul(x, x);
    let x3 = saturating_rounding_doubling_high_mul(x2, x);
    let x4 = saturating_rounding_doubling_high_mul(x2, x2);
    let x4_over_4 = rounding_divide_by_pot(x4, 2);
    let x4_over_24_plus_x3_over_6_plus_x2_over_2 = rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(x4_over_4.wrapping_add(x3), CONSTANT_1_OVER_3)
            .wrapping_add(x2),
        1,
    );
    CONSTANT_TERM.wrapping_add(saturating_rounding_doubling_high_mul(
        CONSTANT_TERM,
        x.wrapping_add(x4_over_24_plus_x3_over_6_plus_x2_over_2),
    ))
}

/// `gemmlowp::exp_on_negative_values` for a Q`INTEGER_BITS` input `a <= 0`; result in Q0
/// (`exp(0)` is `i32::MAX`).
#[inline]
pub const fn exp_on_negative_values<const INTEGER_BITS: i32>(a: i32) -> i32 {
    let fractional_bits = 31 - INTEGER_BITS;
    let one_quarter = 1i32 << (fractional_bits - 2);
    let mask = one_quarter - 1;
    let a_mod_quarter_minus_one_quarter = (a & mask).wrapping_sub(one_quarter);
    let mut result = exp_on_interval_between_negative_one_quarter_and_0_excl(rescale(
        a_mod_quarter_minus_one_quarter,
        INTEGER_BITS,
        0,
    ));
    let remainder = a_mod_quarter_minus_one_quarter.wrapping_sub(a);

    // Barrel shifter: multiply by exp(-2^e) for each bit e of the remainder.
    const MULTIPLIERS: [(i32, i32); 7] = [
        (-2, 1_672_461_947),
        (-1, 1_302_514_674),
        (0, 790_015_084),
        (1, 290_630_308),
        (2, 39_332_535),
        (3, 720_401),
        (4, 242),
    ];
    let mut i = 0;
    while i < MULTIPLIERS.len() {
        let (exponent, multiplier) = MULTIPLIERS[i];
        if INTEGER_BITS > exponent {
            let shift_amount = fractional_bits + exponent;
            if remainder & (1i32 << shift_amount) != 0 {
                result = saturating_rounding_doubling_high_mul(result, multiplier);
            }
        }
        i += 1;
    }

    if INTEGER_BITS > 5 {
        let clamp = -(1i32 << (36 - INTEGER_BITS)); // -32.0
        if a < clamp {
            result = 0;
        }
    }
    if a == 0 {
        result = i32::MAX;
    }
    result
}

/// `gemmlowp::one_over_one_plus_x_for_x_in_0_1`: `1 / (1 + a)` for a Q0 `a` in `[0, 1)`,
/// result in Q0 (Newton-Raphson division).
#[inline]
pub const fn one_over_one_plus_x_for_x_in_0_1(a: i32) -> i32 {
    let x = newton_raphson_reciprocal_of_half_denominator(rounding_half_sum(a, i32::MAX));
    // Rescale<0>(ExactMulByPot<-1>(x)): Q2 -> Q1 (same raw) -> Q0.
    rescale(x, 1, 0)
}

/// `gemmlowp::one_minus_x_over_one_plus_x_for_x_in_0_1`: `(1 - a) / (1 + a)` for a Q0 `a` in
/// `[0, 1)`, result in Q0.
#[inline]
pub const fn one_minus_x_over_one_plus_x_for_x_in_0_1(a: i32) -> i32 {
    let x = newton_raphson_reciprocal_of_half_denominator(rounding_half_sum(a, i32::MAX));
    // Rescale<0>(x - F2::One()).
    rescale(x.wrapping_sub(1 << 29), 2, 0)
}

/// The shared Newton-Raphson loop of gemmlowp's two `..._for_x_in_0_1` functions: returns a Q2
/// approximation of `1 / half_denominator` for a Q0 `half_denominator` in `[1/2, 1)`.
#[inline]
const fn newton_raphson_reciprocal_of_half_denominator(half_denominator: i32) -> i32 {
    const CONSTANT_48_OVER_17: i32 = 1_515_870_810; // Q2
    const CONSTANT_NEG_32_OVER_17: i32 = -1_010_580_540; // Q2
    const F2_ONE: i32 = 1 << 29;
    let mut x = CONSTANT_48_OVER_17.wrapping_add(saturating_rounding_doubling_high_mul(
        half_denominator,
        CONSTANT_NEG_32_OVER_17,
    ));
    let mut i = 0;
    while i < 3 {
        let half_denominator_times_x = saturating_rounding_doubling_high_mul(half_denominator, x);
        let one_minus_half_denominator_times_x = F2_ONE.wrapping_sub(half_denominator_times_x);
        // x * one_minus... is Q4; Rescale<2> shifts left by 2 with saturation.
        x = x.wrapping_add(rescale(
            saturating_rounding_doubling_high_mul(x, one_minus_half_denominator_times_x),
            4,
            2,
        ));
        i += 1;
    }
    x
}

/// `gemmlowp::logistic` for a Q`INTEGER_BITS` input; result in Q0.
#[inline]
pub const fn logistic<const INTEGER_BITS: i32>(a: i32) -> i32 {
    if a == 0 {
        return 1 << 30; // 0.5
    }
    let abs_input = if a > 0 { a } else { a.wrapping_neg() };
    let result_if_positive = one_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values::<INTEGER_BITS>(abs_input.wrapping_neg()),
    );
    if a > 0 {
        result_if_positive
    } else {
        // ResultF::One() - result_if_positive
        i32::MAX.wrapping_sub(result_if_positive)
    }
}

/// `gemmlowp::tanh` for a Q`INTEGER_BITS` input; result in Q0.
///
/// `INTEGER_BITS_PLUS_ONE` must be `INTEGER_BITS + 1` (gemmlowp's `ExactMulByPot<1>` of the
/// input, spelled out because stable Rust cannot compute it from a const parameter).
#[inline]
pub const fn tanh<const INTEGER_BITS: i32, const INTEGER_BITS_PLUS_ONE: i32>(a: i32) -> i32 {
    debug_assert!(INTEGER_BITS_PLUS_ONE == INTEGER_BITS + 1);
    if a == 0 {
        return 0;
    }
    let n = if a < 0 { a } else { a.wrapping_neg() };
    // neg_tanh_on_negative_values(n) = (1 - exp(2n)) / (1 + exp(2n)).
    let t = one_minus_x_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values::<INTEGER_BITS_PLUS_ONE>(n),
    );
    if a < 0 { t.wrapping_neg() } else { t }
}

/// `tflite::GetReciprocal`: returns `(Q0 reciprocal, num_bits_over_unit)` for a positive `x`
/// with `x_integer_digits` integer bits, as used by the quantized softmax.
#[inline]
pub const fn get_reciprocal(x: i32, x_integer_digits: i32) -> (i32, i32) {
    let headroom_plus_one = (x as u32).leading_zeros() as i32;
    let num_bits_over_unit = x_integer_digits - headroom_plus_one;
    let shifted_sum_minus_one =
        ((x as u32).wrapping_shl(headroom_plus_one as u32)).wrapping_sub(1u32 << 31) as i32;
    (
        one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one),
        num_bits_over_unit,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Wide-integer reference for SaturatingRoundingDoublingHighMul.
    /// (VQRDMULH: `floor((2ab + 2^31) / 2^32)`, i.e. ties toward +infinity, saturated.)
    fn srdhm_ref(a: i32, b: i32) -> i32 {
        let q = (2 * a as i128 * b as i128 + (1i128 << 31)).div_euclid(1i128 << 32);
        q.clamp(i32::MIN as i128, i32::MAX as i128) as i32
    }

    /// Wide-integer reference for RoundingDivideByPOT.
    fn rdbp_ref(x: i32, e: i32) -> i32 {
        let x = x as i128;
        let d = 1i128 << e;
        let q = if x >= 0 {
            (x + d / 2) / d
        } else {
            -((-x + d / 2) / d)
        };
        // Ties go away from zero: (x + d/2)/d already rounds half up for positive; for negative
        // the mirror rounds half away from zero too.
        q as i32
    }

    fn mbqm_ref(x: i32, m: i32, shift: i32) -> i32 {
        let left = shift.max(0);
        let right = (-shift).max(0);
        let shifted = (x as i64 * (1i64 << left)) as i32; // wrapping like the C++ (in-range inputs only)
        rdbp_ref(srdhm_ref(shifted, m), right)
    }

    proptest! {
        #[test]
        fn srdhm_matches_wide_reference(a in any::<i32>(), b in any::<i32>()) {
            prop_assert_eq!(saturating_rounding_doubling_high_mul(a, b), srdhm_ref(a, b));
        }

        #[test]
        fn rdbp_matches_wide_reference(x in any::<i32>(), e in 0i32..=31) {
            prop_assert_eq!(rounding_divide_by_pot(x, e), rdbp_ref(x, e));
        }

        #[test]
        fn mbqm_matches_wide_reference(
            x in -(1i32 << 22)..(1i32 << 22),
            m in (1i32 << 30)..=i32::MAX,
            shift in -31i32..=8,
        ) {
            prop_assert_eq!(multiply_by_quantized_multiplier(x, m, shift), mbqm_ref(x, m, shift));
        }

        #[test]
        fn mbqm_is_close_to_real_product(
            x in -(1i32 << 20)..(1i32 << 20),
            m in (1i32 << 30)..=i32::MAX,
            shift in -20i32..=0,
        ) {
            let real = x as f64 * (m as f64 / 2f64.powi(31)) * 2f64.powi(shift);
            let got = multiply_by_quantized_multiplier(x, m, shift) as f64;
            // Double rounding: at most one unit away from the exact product.
            prop_assert!((got - real).abs() <= 1.0, "x={x} m={m} shift={shift} got={got} real={real}");
        }

        #[test]
        fn rounding_half_sum_matches(a in any::<i32>(), b in any::<i32>()) {
            let s = a as i128 + b as i128;
            let expected = if s >= 0 { (s + 1) / 2 } else { -((-s + 1) / 2) };
            prop_assert_eq!(rounding_half_sum(a, b) as i128, expected);
        }

        #[test]
        fn exp_on_negative_values_is_accurate(a in -(31i32 << 26)..=0) {
            let got = exp_on_negative_values::<5>(a) as f64 / 2f64.powi(31);
            let expected = (a as f64 / 2f64.powi(26)).exp();
            prop_assert!((got - expected).abs() < 1e-6, "a={a} got={got} expected={expected}");
        }

        #[test]
        fn one_over_one_plus_x_is_accurate(a in 0i32..=i32::MAX) {
            let x = a as f64 / 2f64.powi(31);
            let got = one_over_one_plus_x_for_x_in_0_1(a) as f64 / 2f64.powi(31);
            prop_assert!((got - 1.0 / (1.0 + x)).abs() < 1e-7);
        }

        #[test]
        fn logistic_and_tanh_are_accurate(a in -(8i32 << 27)..(8i32 << 27)) {
            // Q4 input.
            let x = a as f64 / 2f64.powi(27);
            let l = logistic::<4>(a) as f64 / 2f64.powi(31);
            prop_assert!((l - 1.0 / (1.0 + (-x).exp())).abs() < 1e-6, "x={x} l={l}");
            let t = tanh::<4, 5>(a) as f64 / 2f64.powi(31);
            prop_assert!((t - x.tanh()).abs() < 1e-6, "x={x} t={t}");
        }
    }

    #[test]
    fn srdhm_edge_cases() {
        assert_eq!(
            saturating_rounding_doubling_high_mul(i32::MIN, i32::MIN),
            i32::MAX
        );
        assert_eq!(
            saturating_rounding_doubling_high_mul(i32::MIN, i32::MAX),
            -i32::MAX
        );
        assert_eq!(
            saturating_rounding_doubling_high_mul(1 << 30, 1 << 30),
            1 << 29
        );
        // Ties round toward +infinity: -0.5 -> 0, -1.5 -> -1, 0.5 -> 1.
        assert_eq!(saturating_rounding_doubling_high_mul(-1, 1 << 30), 0);
        assert_eq!(saturating_rounding_doubling_high_mul(-3, 1 << 30), -1);
        assert_eq!(saturating_rounding_doubling_high_mul(1, 1 << 30), 1);
        assert_eq!(saturating_rounding_doubling_high_mul(0, 12345), 0);
    }

    #[test]
    fn rdbp_edge_cases() {
        assert_eq!(rounding_divide_by_pot(5, 1), 3);
        assert_eq!(rounding_divide_by_pot(-5, 1), -3);
        assert_eq!(rounding_divide_by_pot(4, 1), 2);
        assert_eq!(rounding_divide_by_pot(-4, 1), -2);
        assert_eq!(rounding_divide_by_pot(-6, 2), -2); // -1.5 -> -2
        assert_eq!(rounding_divide_by_pot(6, 2), 2); // 1.5 -> 2
        assert_eq!(rounding_divide_by_pot(i32::MIN, 31), -1);
        assert_eq!(rounding_divide_by_pot(i32::MAX, 31), 1);
        assert_eq!(rounding_divide_by_pot(123, 0), 123);
        assert_eq!(rounding_divide_by_pot_i16(-5, 1), -3);
        assert_eq!(rounding_divide_by_pot_i16(5, 1), 3);
    }

    #[test]
    fn mbqm_i64_matches_tflm_formula() {
        // 0.5 multiplier, shift 0 -> halves with rounding.
        assert_eq!(multiply_by_quantized_multiplier_i64(10, 1 << 30, 0), 5);
        assert_eq!(multiply_by_quantized_multiplier_i64(11, 1 << 30, 0), 6);
        assert_eq!(multiply_by_quantized_multiplier_i64(-11, 1 << 30, 0), -5);
        // i32::MAX reduces to 0x7FFF: 2^40 * 32767 / 2^25.
        assert_eq!(
            multiply_by_quantized_multiplier_i64(1 << 40, i32::MAX, -10),
            32767 << 15
        );
    }

    #[test]
    fn exp_and_reciprocal_special_values() {
        assert_eq!(exp_on_negative_values::<5>(0), i32::MAX);
        assert_eq!(exp_on_negative_values::<12>(i32::MIN), 0);
        let (r, bits) = get_reciprocal(1 << 19, 12); // sum = 1.0 in Q12
        assert_eq!(bits, 0);
        assert!(r > (i32::MAX - 10));
        assert_eq!(logistic::<4>(0), 1 << 30);
        assert_eq!(tanh::<4, 5>(0), 0);
    }
}
