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
//! `fmath`), so the results are bit-identical with TFLM there, NaNs included (an
//! invalid argument gives x86's default NaN `0xffc00000`).

use crate::fixed_point::{multiply_by_quantized_multiplier, rescale, rounding_divide_by_pot};
use crate::fmath::{ceil_f32 as ceilf, floor_f32 as floorf, is_even_small};
use crate::glibc_math::expm1f;
use crate::libm_f32::sqrtf;
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
    // A fraction of exactly 0.5 only occurs for |x| < 2^23, where `is_even_small` holds.
    // (`&` and `|`, not `&&` and `||`: no branches, so that the loop vectorizes.)
    if (diff < 0.5) | ((diff == 0.5) & is_even_small(floor)) {
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
    /// CEIL float32: `std::ceil`.
    ceil_f32, ceil_f32_in_place => ceilf;
    /// FLOOR float32: `std::floor`.
    floor_f32, floor_f32_in_place => floorf;
    /// ROUND float32: `RoundToNearest` (half to even).
    round_f32, round_f32_in_place => round_to_nearest;
    /// ELU float32: `x < 0 ? std::expm1(x) : x`.
    elu_f32, elu_f32_in_place => elu_op;
}

/// The kernels whose element loops the C library function's module provides (run with the
/// host's fused multiply-add where it has one; same bits).
macro_rules! float_loop_kernels {
    ($($(#[$doc:meta])* $name:ident, $in_place:ident => $map:path, $map_in_place:path;)*) => {$(
        $(#[$doc])*
        pub fn $name(input: &[f32], output: &mut [f32]) {
            $map(input, output);
        }

        #[doc = concat!("[`", stringify!($name), "`] with the output overwriting the input.")]
        pub fn $in_place(data: &mut [f32]) {
            $map_in_place(data);
        }
    )*};
}

float_loop_kernels! {
    /// SIN float32: `std::sin` (glibc's `sinf`).
    sin_f32, sin_f32_in_place => crate::libm_f32::sinf_map, crate::libm_f32::sinf_map_in_place;
    /// COS float32: `std::cos` (glibc's `cosf`).
    cos_f32, cos_f32_in_place => crate::libm_f32::cosf_map, crate::libm_f32::cosf_map_in_place;
    /// LOG float32: `std::log` (glibc's `logf`).
    log_f32, log_f32_in_place => crate::libm_f32::logf_map, crate::libm_f32::logf_map_in_place;
    /// EXP float32: `std::exp` (glibc's `expf`).
    exp_f32, exp_f32_in_place => crate::math::expf_map, crate::math::expf_map_in_place;
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

/// `SaturatingRoundingDoublingHighMul` without a division or a branch: `floor((a b + 2^30)
/// / 2^31)` (gemmlowp's nudge and truncating division give exactly this: ties toward
/// `+inf`), saturated (only `i32::MIN * i32::MIN` overflows). The same function as
/// `fixed_point::saturating_rounding_doubling_high_mul` (`srdhm_fast_is_srdhm`).
#[inline(always)]
fn srdhm_fast(a: i32, b: i32) -> i32 {
    let r = (a as i64 * b as i64 + (1 << 30)) >> 31;
    if r > i32::MAX as i64 {
        i32::MAX
    } else {
        r as i32
    }
}

/// `GetInvSqrtQuantizedMultiplierExp(input, reverse_shift)`: `1 / sqrt(input)` as a Q31
/// multiplier and an exponent (five Newton-Raphson steps in gemmlowp's Q3.28); `input <= 1`
/// gives `(i32::MAX, 0)`.
pub fn inv_sqrt_quantized_multiplier_exp(input: i32, reverse_shift: i32) -> (i32, i32) {
    inv_sqrt_quantized_multiplier_exp_lanes([input], reverse_shift)[0]
}

/// [`inv_sqrt_quantized_multiplier_exp`] of `N` inputs at once: the Newton steps of the lanes
/// are independent chains of multiplies, interleaved here so that they overlap (one chain
/// alone waits on each multiply's latency).
pub fn inv_sqrt_quantized_multiplier_exp_lanes<const N: usize>(
    inputs: [i32; N],
    reverse_shift: i32,
) -> [(i32, i32); N] {
    let mut shift = [11i32; N];
    let mut half_input = [0i32; N];
    for ((&v, shift), half) in inputs.iter().zip(&mut shift).zip(&mut half_input) {
        // Inputs <= 1 are answered below; any lane value keeps the others exact.
        let mut input = v.max(2);
        while input >= 1 << 29 {
            input /= 4;
            *shift += 1;
        }
        let max_left_shift_bits = (input as u32).leading_zeros() - 1;
        let left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
        *shift -= left_shift_bit_pairs as i32;
        input <<= 2 * left_shift_bit_pairs;
        // Q3.28 arithmetic: a product of two Q3 values is Q6, of three Q9.
        let fixedpoint_input = input >> 1;
        *half = rounding_divide_by_pot(fixedpoint_input, 1);
    }
    let half_three = (1 << 28) + (1 << 27);
    let mut x = [1i32 << 28; N]; // 1.0
    for _ in 0..5 {
        let mut moved = false;
        for (x, &half_input) in x.iter_mut().zip(&half_input) {
            let x3 = rescale(srdhm_fast(srdhm_fast(*x, *x), *x), 9, 3);
            let next = rescale(
                srdhm_fast(half_three, *x).wrapping_sub(srdhm_fast(half_input, x3)),
                6,
                3,
            );
            moved |= next != *x;
            *x = next;
        }
        // Each step is the same function of `x` (and the input): once it maps every lane's
        // `x` to itself, the remaining steps would too, so stopping gives TFLM's result.
        if !moved {
            break;
        }
    }
    let half_sqrt_2 = 1_518_500_250; // sqrt(2) / 2 in Q0.31
    core::array::from_fn(|i| {
        if inputs[i] <= 1 {
            return (i32::MAX, 0);
        }
        let mut inv_sqrt = srdhm_fast(x[i], half_sqrt_2);
        let mut shift = shift[i];
        if shift < 0 {
            inv_sqrt <<= -shift;
            shift = 0;
        }
        (inv_sqrt, shift * reverse_shift)
    })
}

/// Parameters of an int8 RSQRT (`OpDataAbsRsqrt`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RsqrtParams {
    pub input_offset: i32,
    pub output_offset: i32,
    /// `QuantizeMultiplier(1 / (sqrt(input_scale) * output_scale))`.
    pub multiplier: i32,
    pub shift: i32,
}

/// Build-time parameters of an int8 RSQRT (`SetRsqrtOutputMultiplier`); the multiplier's
/// shift, less RSQRT's 20, must suit [`multiply_by_quantized_multiplier`].
pub fn prepare_rsqrt_s8(
    input: QuantParams,
    output: QuantParams,
) -> Result<RsqrtParams, PrepareError> {
    let scale = 1.0 / (sqrtf64(input.scale as f64) * output.scale as f64);
    let (multiplier, shift) = quantize_multiplier(scale, ShiftRange { min: -11, max: 50 })?;
    Ok(RsqrtParams {
        input_offset: input.zero_point,
        output_offset: output.zero_point,
        multiplier,
        shift,
    })
}

/// `std::sqrt` for a positive finite normal `double`, correctly rounded (digit by digit on
/// the significand, as [`sqrtf`]); the scales it is used on are such numbers.
fn sqrtf64(x: f64) -> f64 {
    if !(f64::MIN_POSITIVE..f64::INFINITY).contains(&x) {
        return f64::NAN;
    }
    let bits = x.to_bits();
    let m = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
    // m * 2^e = (m * 2^k) * 2^(e - k) with e - k even and m * 2^k in [2^104, 2^106): the root
    // has 53 bits.
    let k = if (e - 52) & 1 == 0 { 52 } else { 53 };
    let big = (m as u128) << k;
    let mut rem = big;
    let mut root = 0u128;
    let mut bit = 1u128 << 106;
    while bit > big {
        bit >>= 2;
    }
    while bit != 0 {
        if rem >= root + bit {
            rem -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    // Round to nearest: up when (root + 1/2)^2 < big, i.e. rem > root (never a tie).
    let mut q = root + u128::from(rem > root);
    let mut re = (e - k) / 2;
    if q == 1u128 << 53 {
        q >>= 1;
        re += 1;
    }
    f64::from_bits((((re + 1075) as u64) << 52) | (q as u64 & ((1u64 << 52) - 1)))
}

/// `RsqrtEvalQuantized`: `1 / sqrt(x - input_offset)` through the inverse square root
/// multiplier with RSQRT's extra shift of 20, requantized, clamped; `i8::MAX` for 0. TFLM
/// fails `Invoke` for an input below the input offset; Kiln computes the same arithmetic
/// (which treats it as 1).
#[inline]
fn rsqrt_s8_op(p: &RsqrtParams, x: i8) -> i8 {
    const K_SHIFT: i32 = 20;
    let value = x as i32 - p.input_offset;
    if value == 0 {
        return i8::MAX;
    }
    let (m, s) = inv_sqrt_quantized_multiplier_exp(value, -1);
    let data = multiply_by_quantized_multiplier(1, m, s + K_SHIFT);
    let out = multiply_by_quantized_multiplier(data, p.multiplier, p.shift - K_SHIFT)
        .wrapping_add(p.output_offset);
    out.clamp(-128, 127) as i8
}

/// The results of a function of an `i8` computed so far in one call (an `int8` input has 256
/// values, and the RSQRT of one costs five Newton steps): 288 bytes of stack.
struct MemoS8 {
    value: [i8; 256],
    known: [u32; 8],
}

impl MemoS8 {
    fn new() -> Self {
        MemoS8 {
            value: [0; 256],
            known: [0; 8],
        }
    }

    #[inline(always)]
    fn get(&mut self, x: i8, f: impl Fn(i8) -> i8) -> i8 {
        let i = x as u8 as usize;
        let (word, bit) = (i >> 5, 1u32 << (i & 31));
        if self.known[word] & bit == 0 {
            self.value[i] = f(x);
            self.known[word] |= bit;
        }
        self.value[i]
    }
}

/// Int8 RSQRT (each distinct input byte computed once per call).
pub fn rsqrt_s8(p: &RsqrtParams, input: &[i8], output: &mut [i8]) {
    debug_assert_eq!(input.len(), output.len());
    let mut memo = MemoS8::new();
    for (o, &x) in output.iter_mut().zip(input) {
        *o = memo.get(x, |x| rsqrt_s8_op(p, x));
    }
}

/// [`rsqrt_s8`] in place.
pub fn rsqrt_s8_in_place(p: &RsqrtParams, data: &mut [i8]) {
    let mut memo = MemoS8::new();
    for d in data.iter_mut() {
        *d = memo.get(*d, |x| rsqrt_s8_op(p, x));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rsqrt_s8_memo_is_the_element_function() {
        let q = |scale, zero_point| QuantParams { scale, zero_point };
        let p = prepare_rsqrt_s8(q(0.05, -128), q(0.02, -10)).unwrap();
        // Every byte, in an order that repeats values.
        let x: std::vec::Vec<i8> = (0..600).map(|i| (i * 37 % 256) as u8 as i8).collect();
        let mut y = std::vec![0i8; x.len()];
        rsqrt_s8(&p, &x, &mut y);
        let mut z = x.clone();
        rsqrt_s8_in_place(&p, &mut z);
        for ((&x, &y), &z) in x.iter().zip(&y).zip(&z) {
            assert_eq!((y, z), (rsqrt_s8_op(&p, x), rsqrt_s8_op(&p, x)), "{x}");
        }
    }

    #[test]
    fn inv_sqrt_stops_only_at_a_fixed_point() {
        // The five steps always taken, as TFLM does.
        fn five_steps(input: i32, reverse_shift: i32) -> (i32, i32) {
            if input <= 1 {
                return (i32::MAX, 0);
            }
            let (mut input, mut shift) = (input, 11);
            while input >= 1 << 29 {
                input /= 4;
                shift += 1;
            }
            let pairs = ((input as u32).leading_zeros() - 1) / 2 - 1;
            shift -= pairs as i32;
            input <<= 2 * pairs;
            let half_input = rounding_divide_by_pot(input >> 1, 1);
            let mut x = 1i32 << 28;
            for _ in 0..5 {
                let x3 = rescale(srdhm_fast(srdhm_fast(x, x), x), 9, 3);
                x = rescale(
                    srdhm_fast((1 << 28) + (1 << 27), x).wrapping_sub(srdhm_fast(half_input, x3)),
                    6,
                    3,
                );
            }
            let mut inv_sqrt = srdhm_fast(x, 1_518_500_250);
            if shift < 0 {
                inv_sqrt <<= -shift;
                shift = 0;
            }
            (inv_sqrt, shift * reverse_shift)
        }
        let mut seed = 5u32;
        let samples = (-3..1 << 17).chain((0..1 << 16).map(|_| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 1) as i32
        }));
        for v in samples.chain([i32::MAX, (1 << 29) - 1, 1 << 29, 1 << 30]) {
            for rs in [-1, 1] {
                assert_eq!(
                    inv_sqrt_quantized_multiplier_exp(v, rs),
                    five_steps(v, rs),
                    "{v}"
                );
                let lanes = [v, v / 3, 1, v / 1000, v.wrapping_mul(7)];
                let got = inv_sqrt_quantized_multiplier_exp_lanes(lanes, rs);
                for (&l, g) in lanes.iter().zip(got) {
                    assert_eq!(g, five_steps(l, rs), "{l} among {lanes:?}");
                }
            }
        }
    }

    #[test]
    fn srdhm_fast_is_srdhm() {
        use crate::fixed_point::saturating_rounding_doubling_high_mul as srdhm;
        let edge = [
            i32::MIN,
            i32::MIN + 1,
            -(1 << 30),
            -1,
            0,
            1,
            1 << 30,
            i32::MAX,
        ];
        for &a in &edge {
            for &b in &edge {
                assert_eq!(srdhm_fast(a, b), srdhm(a, b), "{a} {b}");
            }
        }
        let mut s = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..1_000_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let (a, b) = (s as i32, (s >> 32) as i32);
            assert_eq!(srdhm_fast(a, b), srdhm(a, b), "{a} {b}");
            // Small operands too (the Newton steps' Q3.28 values).
            let (a, b) = (a >> (s % 16), b >> ((s >> 8) % 16));
            assert_eq!(srdhm_fast(a, b), srdhm(a, b), "{a} {b}");
        }
    }

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

    #[test]
    fn sqrt_f64_is_correctly_rounded() {
        let mut x = 1.0e-30f64;
        while x < 1.0e30 {
            assert_eq!(sqrtf64(x).to_bits(), x.sqrt().to_bits(), "{x}");
            assert_eq!(sqrtf64(x * 1.37).to_bits(), (x * 1.37).sqrt().to_bits());
            x *= 1.618;
        }
        for v in [2.0, 3.0, 0.5, 1e-5, 0.00390625f32 as f64, 0.1f32 as f64] {
            assert_eq!(sqrtf64(v).to_bits(), v.sqrt().to_bits(), "{v}");
        }
    }

    #[test]
    fn inv_sqrt_multiplier_is_close() {
        for v in [2i32, 3, 7, 100, 255, 1000, 65_536, 1 << 29, i32::MAX] {
            let (m, s) = inv_sqrt_quantized_multiplier_exp(v, -1);
            let got = m as f64 / 2f64.powi(31) * 2f64.powi(s);
            let want = 1.0 / (v as f64).sqrt();
            assert!((got / want - 1.0).abs() < 1e-5, "{v}: {got} {want}");
        }
        assert_eq!(inv_sqrt_quantized_multiplier_exp(1, -1), (i32::MAX, 0));
    }
}
