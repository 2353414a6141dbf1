//! SignalFilterBankSquareRoot (TFLM's Signal library, `signal/src/filter_bank_square_root.cc`
//! with `square_root_64.cc`, `square_root_32.cc`): the rounded integer square root of each
//! uint64 channel, shifted right by a runtime number of scale bits, as uint32.
//!
//! The square root is TFLM's bit-by-bit one, its rounding included: values below 2^32 take
//! the 32-bit routine, whose result saturates at 65535 (so `sqrt(2^32 - 1)` is 65535, not
//! 65536); larger ones the 64-bit routine, saturating at 2^32 - 1.
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

/// TFLM's rounded square root of a 32-bit value, saturating at 65535.
pub fn sqrt32(mut num: u32) -> u16 {
    if num == 0 {
        return 0;
    }
    // Start at the highest even bit position at or below the top set bit.
    let top = (num.leading_zeros() | 1) as i32;
    let mut bit = 1u32 << (31 - top);
    let mut res = 0u32;
    for _ in 0..(31 - top) / 2 + 1 {
        if num >= res + bit {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if num > res && res != 0xFFFF {
        res += 1;
    }
    res as u16
}

/// TFLM's rounded square root of a 64-bit value (the 32-bit routine below 2^32),
/// saturating at 2^32 - 1.
pub fn sqrt64(mut num: u64) -> u32 {
    if num >> 32 == 0 {
        return sqrt32(num as u32) as u32;
    }
    let top = (num.leading_zeros() | 1) as i32;
    let mut bit = 1u64 << (63 - top);
    let mut res = 0u64;
    for _ in 0..(63 - top) / 2 + 1 {
        if num >= res + bit {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if num > res && res != 0xFFFF_FFFF {
        res += 1;
    }
    res as u32
}

/// `sqrt64(x) >> scale_bits` for each channel (`scale_bits`: the scalar tensor's value,
/// 0 if it has none; >= 32 gives 0, negative shifts by 0).
pub fn signal_filter_bank_square_root(input: &[u64], scale_bits: &[i32], output: &mut [u32]) {
    let shift = scale_bits.first().copied().unwrap_or(0).max(0) as u32;
    for (o, &x) in output.iter_mut().zip(input) {
        *o = sqrt64(x).checked_shr(shift).unwrap_or(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
