//! SignalFilterBankSquareRoot (TFLM's Signal library, `signal/src/filter_bank_square_root.cc`
//! with `square_root_64.cc`, `square_root_32.cc`): the rounded integer square root of each
//! uint64 channel, shifted right by a runtime number of scale bits, as uint32.
//!
//! The square root is TFLM's bit-by-bit one, its rounding included: values below 2^32 take
//! the 32-bit routine, whose result saturates at 65535 (so `sqrt(2^32 - 1)` is 65535, not
//! 65536); larger ones the 64-bit routine, saturating at 2^32 - 1. Kiln reaches the same
//! root and remainder by Newton's iteration ([`sqrt64`]: about a third of the instructions on
//! the Cortex-M4); TFLM's loop itself is the reference kernel.
//!
//! The scale bits are an int32 tensor written at run time (SignalFftAutoScale's second
//! output in the audio preprocessor: 0..=15 there). The C++ shifts a uint32 by it, which is
//! undefined outside 0..=31: the pinned wheel (x86-64) shifts by the value modulo 32 (32
//! shifts by 0, -1 by 31), Cortex-M's LSR by the low byte (32..=255 give 0). Kiln defines
//! it: a shift of 32 or more gives 0 (every bit shifted out), a negative one shifts by 0.

/// The kernel needs no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

/// TFLM's rounded square root of a 32-bit value, saturating at 65535: `floor(sqrt(num))`,
/// plus one where the remainder `num - floor²` exceeds it (TFLM's digit-by-digit routine
/// ends with exactly that root and remainder).
pub fn sqrt32(num: u32) -> u16 {
    let root = isqrt32(num);
    let rest = num - root * root;
    (root + (rest > root && root != 0xFFFF) as u32) as u16
}

/// TFLM's rounded square root of a 64-bit value (the 32-bit routine below 2^32),
/// saturating at 2^32 - 1.
pub fn sqrt64(num: u64) -> u32 {
    if num >> 32 == 0 {
        return sqrt32(num as u32) as u32;
    }
    let root = isqrt64(num);
    let rest = num - root * root;
    (root + (rest > root && root != 0xFFFF_FFFF) as u64) as u32
}

/// `floor(sqrt(n))` by Newton's iteration with 32-bit division, from `2^ceil(bits / 2)`, at
/// or above the root: the iterates fall to the root and stop there (about five steps instead
/// of one per pair of bits).
fn isqrt32(n: u32) -> u32 {
    if n < 2 {
        return n;
    }
    let bits = 32 - n.leading_zeros();
    let mut x = 1u32 << bits.div_ceil(2);
    loop {
        // x >= sqrt(n), so n / x <= sqrt(n) < 2^16: no overflow.
        let y = (x + n / x) >> 1;
        if y >= x {
            return x;
        }
        x = y;
    }
}

/// `floor(sqrt(n))` for `n >= 2^32`: the root of the top 32 bits (an even shift), scaled
/// back and rounded up, is within a relative 2^-15 above the root; one 64-bit Newton step
/// from above lands within one of it, and a test of the square settles it.
fn isqrt64(n: u64) -> u64 {
    let shift = (32 - n.leading_zeros()).div_ceil(2);
    let top = (n >> (2 * shift)) as u32;
    let x = (isqrt32(top) as u64 + 1) << shift;
    // x <= 2^32 + 2^16 and n / x < 2^32 + 2^16: no overflow.
    let mut y = (x + n / x) >> 1;
    // y is at least the root (Newton from above), and y² fits: y < 2^32 + 2^16.
    while y * y > n {
        y -= 1;
    }
    y
}

/// TFLM's digit-by-digit square root as the C++ computes it (`square_root_32.cc` below 2^32,
/// `square_root_64.cc` above): one step per pair of bits. The same results as [`sqrt64`], in
/// several times the instructions: the loop of the reference kernel
/// ([`signal_filter_bank_square_root_reference`]) and the oracle of the tests.
pub fn sqrt64_digit_by_digit(num: u64) -> u32 {
    let (width, max) = if num >> 32 == 0 {
        (32, 0xFFFF)
    } else {
        (64, 0xFFFF_FFFF)
    };
    if num == 0 {
        return 0;
    }
    let mut num = num;
    // Start at the highest even bit position at or below the top set bit.
    let top = (num.leading_zeros() - (64 - width)) | 1;
    let mut bit = 1u64 << (width - 1 - top);
    let mut res = 0u64;
    for _ in 0..(width - 1 - top) / 2 + 1 {
        if num >= res + bit {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if num > res && res != max {
        res += 1;
    }
    res as u32
}

/// `sqrt64(x) >> scale_bits` for each channel (`scale_bits`: the scalar tensor's value,
/// 0 if it has none; >= 32 gives 0, negative shifts by 0).
pub fn signal_filter_bank_square_root(input: &[u64], scale_bits: &[i32], output: &mut [u32]) {
    roots(input, scale_bits, output, sqrt64)
}

/// [`signal_filter_bank_square_root`] on TFLM's loop ([`sqrt64_digit_by_digit`]): the same
/// outputs, the kernel of `reference_kernels` builds.
pub fn signal_filter_bank_square_root_reference(
    input: &[u64],
    scale_bits: &[i32],
    output: &mut [u32],
) {
    roots(input, scale_bits, output, sqrt64_digit_by_digit)
}

#[inline(always)]
fn roots(input: &[u64], scale_bits: &[i32], output: &mut [u32], sqrt: impl Fn(u64) -> u32) {
    let shift = scale_bits.first().copied().unwrap_or(0).max(0) as u32;
    for (o, &x) in output.iter_mut().zip(input) {
        *o = sqrt(x).checked_shr(shift).unwrap_or(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(x: u64) {
        let want = sqrt64_digit_by_digit(x);
        assert_eq!(sqrt64(x), want, "sqrt64({x})");
        if x >> 32 == 0 {
            assert_eq!(sqrt32(x as u32) as u32, want, "sqrt32({x})");
        }
    }

    /// Every root's neighbourhood below 2^32 (squares, the rounding points, one either side)
    /// and a sample of them up to 2^64, against TFLM's routine.
    #[test]
    fn newton_matches_tflm_digit_by_digit() {
        for k in 0u64..=65_536 {
            for x in [k * k, k * k + k, k * k + k + 1] {
                for d in [0, 1, u64::MAX] {
                    check(x.wrapping_add(d) & 0xFFFF_FFFF);
                }
            }
        }
        let mut k = 65_536u64;
        while k < 1 << 32 {
            for x in [k * k, k * k + k, k * k + k + 1] {
                for d in [0u64, 1, u64::MAX] {
                    check(x.wrapping_add(d));
                }
            }
            k += 1 + k / 4099;
        }
        for x in [
            u64::MAX,
            u64::MAX - 1,
            1 << 63,
            (1 << 32) - 1,
            1 << 32,
            (1 << 32) + 1,
        ] {
            check(x);
        }
        // Pseudo-random values of every width.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            check(state >> (state % 64));
        }
    }

    #[test]
    fn square_roots_round_and_saturate() {
        assert_eq!(sqrt32(0), 0);
        assert_eq!(sqrt32(1), 1);
        assert_eq!(sqrt32(2), 1);
        assert_eq!(sqrt32(3), 2);
        assert_eq!(sqrt32(u32::MAX), 65535);
        assert_eq!(sqrt64(1 << 40), 1 << 20);
        assert_eq!(sqrt64(u64::MAX), u32::MAX);
        assert_eq!(sqrt64(99_999_999_999), 316_228);
        // Rounding: x^2 + x rounds down, x^2 + x + 1 up.
        for x in [65_536u64, 1 << 20, 3_000_000_000] {
            assert_eq!(sqrt64(x * x + x), x as u32);
            assert_eq!(sqrt64(x * x + x + 1), x as u32 + 1);
        }
    }

    /// TFLM's `filter_bank_square_root_test.cc` vectors (32 channels at 7 scale bits, 16 at 5).
    #[test]
    fn tflm_vectors() {
        let input: [u64; 32] = [
            10528000193,
            28362909357,
            47577133750,
            8466055850,
            5842710800,
            2350911449,
            2989811430,
            2646718839,
            515262774,
            276394561,
            469831522,
            55815334,
            28232446,
            11591835,
            40329249,
            67658028,
            183446654,
            323189165,
            117473797,
            41339272,
            25846050,
            12428673,
            18670978,
            22521722,
            78477733,
            54207503,
            25150296,
            43098592,
            28211625,
            15736687,
            20990296,
            17907031,
        ];
        let golden: [u32; 32] = [
            801, 1315, 1704, 718, 597, 378, 427, 401, 177, 129, 169, 58, 41, 26, 49, 64, 105, 140,
            84, 50, 39, 27, 33, 37, 69, 57, 39, 51, 41, 30, 35, 33,
        ];
        let mut out = [0u32; 32];
        signal_filter_bank_square_root(&input, &[7], &mut out);
        assert_eq!(out, golden);
        let input: [u64; 16] = [
            13051415151,
            14932650877,
            18954728418,
            8730126017,
            6529665275,
            12952546517,
            10314975609,
            8919697835,
            8053663348,
            17231208421,
            7366899760,
            1372112200,
            19953434807,
            17012385332,
            4710443222,
            17765594053,
        ];
        let golden: [u32; 16] = [
            3570, 3818, 4302, 2919, 2525, 3556, 3173, 2951, 2804, 4102, 2682, 1157, 4414, 4076,
            2144, 4165,
        ];
        let mut out = [0u32; 16];
        signal_filter_bank_square_root(&input, &[5], &mut out);
        assert_eq!(out, golden);
    }

    /// The wheel's outputs for these inputs at scale bits 0, 1, 5, 31 (measured), and Kiln's
    /// definition outside 0..=31.
    #[test]
    fn scale_bits() {
        let x = [
            0,
            1,
            (1 << 32) - 1,
            (1 << 40) + 12345,
            u64::MAX,
            99_999_999_999,
        ];
        let mut out = [0u32; 6];
        for (s, want) in [
            (0, [0, 1, 65535, 1_048_576, 4_294_967_295, 316_228]),
            (1, [0, 0, 32767, 524_288, 2_147_483_647, 158_114]),
            (5, [0, 0, 2047, 32768, 134_217_727, 9882]),
            (31, [0, 0, 0, 0, 1, 0]),
            (32, [0; 6]),
            (i32::MAX, [0; 6]),
            (-1, [0, 1, 65535, 1_048_576, 4_294_967_295, 316_228]),
        ] {
            signal_filter_bank_square_root(&x, &[s], &mut out);
            assert_eq!(out, want, "scale bits {s}");
        }
    }
}
