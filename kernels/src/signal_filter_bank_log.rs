//! SignalFilterBankLog (TFLM's Signal library, `signal/src/filter_bank_log.cc` with
//! `log.cc`): each uint32 channel shifted left by `input_correction_bits`, then its natural
//! logarithm in fixed point times `output_scale`, saturated to int16 (0 for a shifted value
//! of 0 or 1).
//!
//! The logarithm is TFLM's: log2 as the top bit's position plus a fraction in Q16 (the
//! mantissa plus a 128-segment correction table, linearly interpolated), times ln 2 in Q16
//! (45426) with rounding, then times the output scale in 32 bits (wrapping, as the C++'s
//! uint32 product), rounded and shifted down by 16.

/// Constant parameters of a SignalFilterBankLog node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Left shift of each input, 0..=31.
    pub correction_bits: u32,
    /// The output scale as the C++'s uint32 (an int32 option converted, so wrapping).
    pub output_scale: u32,
}

/// The kernel needs no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the options; `None` if `input_correction_bits` is outside
/// `0..=31` (a uint32 shift by 32 or more is undefined in the C++) or `output_scale` outside
/// int32.
pub fn prepare(correction_bits: i64, output_scale: i64) -> Option<Params> {
    let correction_bits = u32::try_from(correction_bits).ok().filter(|&b| b < 32)?;
    let output_scale = i32::try_from(output_scale).ok()? as u32;
    Some(Params {
        correction_bits,
        output_scale,
    })
}

/// `log2(1 + i/128) - i/128` in Q16 for `i` in `0..=128`, and a padding 0 (TFLM's table;
/// the unit test derives every entry).
const LOG_LUT: [u16; 130] = [
    0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944,
    3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714,
    4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533,
    5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568,
    5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944,
    4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264, 4184, 4103, 4020, 3935, 3848, 3759,
    3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090,
    1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963, 830, 695, 559, 421, 282, 142, 0, 0,
];

/// TFLM's fraction of log2(x) in Q16, `x` with its top bit at `log2x`.
fn log2_fraction(x: u32, log2x: u32) -> u32 {
    // The mantissa x - 2^log2x < 2^log2x in Q16: TFLM shifts it left by 16 - log2x or right
    // by log2x - 16 (a branch). Shifted left by 31 - log2x, x has its top bit at bit 31
    // and the mantissa below it; one more shift left drops that bit, and the top 16 bits
    // are then the mantissa times 2^(16 - log2x), rounded down: the same bits, in 32-bit
    // shifts by amounts below 32 and without the branch.
    let frac = (((x << (31 - log2x)) << 1) >> 16) as i32;
    // frac < 2^16: the segment is below 128 (the mask only tells the compiler so).
    let seg = (frac >> 9) as usize & 127;
    let (c0, c1) = (LOG_LUT[seg] as i32, LOG_LUT[seg + 1] as i32);
    let rel = ((c1 - c0) * (frac - 512 * seg as i32)) >> 16;
    (frac + c0 + rel) as u32
}

/// TFLM's `Log32(x, out_scale)` for `x >= 1`.
pub fn log32(x: u32, out_scale: u32) -> u32 {
    let integer = 31 - x.leading_zeros();
    let log2 = (integer << 16) + log2_fraction(x, integer);
    let loge = ((45426u64 * log2 as u64 + 32768) >> 16) as u32;
    out_scale.wrapping_mul(loge).wrapping_add(32768) >> 16
}

/// The logarithms of `input` (as many as `output` holds).
pub fn signal_filter_bank_log(p: &Params, input: &[u32], output: &mut [i16]) {
    for (o, &x) in output.iter_mut().zip(input) {
        let scaled = x << p.correction_bits;
        *o = if scaled > 1 {
            log32(scaled, p.output_scale).min(i16::MAX as u32) as i16
        } else {
            0
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_the_log2_correction() {
        for (i, &v) in LOG_LUT[..129].iter().enumerate() {
            let t = i as f64 / 128.0;
            assert_eq!(
                v as f64,
                (65536.0 * ((1.0 + t).log2() - t)).round(),
                "entry {i}"
            );
        }
        assert_eq!(LOG_LUT[129], 0);
    }

    /// The shift without a branch is TFLM's two shifts, on every top bit position.
    #[test]
    fn fraction_shift_matches_the_two_branches() {
        for x in (1..=u32::MAX)
            .step_by(65_521)
            .chain((0..32).map(|k| 1u32 << k))
        {
            for x in [x, x.saturating_add(1), x | (x >> 1)] {
                let log2x = 31 - x.leading_zeros();
                let mut frac = (x - (1u32 << log2x)) as i32;
                if log2x < 16 {
                    frac <<= 16 - log2x;
                } else {
                    frac >>= log2x - 16;
                }
                let seg = (frac >> 9) as usize;
                let (c0, c1) = (LOG_LUT[seg] as i32, LOG_LUT[seg + 1] as i32);
                let want = (frac + c0 + (((c1 - c0) * (frac - 512 * seg as i32)) >> 16)) as u32;
                assert_eq!(log2_fraction(x, log2x), want, "x {x}");
            }
        }
    }

    /// TFLM's `filter_bank_log_test.cc` vectors.
    #[test]
    fn tflm_vectors() {
        let input = [
            29, 21, 29, 40, 19, 11, 13, 23, 13, 11, 25, 17, 5, 4, 46, 14, 17, 14, 20, 14, 10, 10,
            15, 11, 17, 12, 15, 16, 19, 18, 6, 2,
        ];
        let golden = [
            8715, 8198, 8715, 9229, 8038, 7164, 7431, 8344, 7431, 7164, 8477, 7860, 5902, 5545,
            9453, 7550, 7860, 7550, 8120, 7550, 7011, 7011, 7660, 7164, 7860, 7303, 7660, 7763,
            8038, 7952, 6194, 4436,
        ];
        let mut out = [0i16; 32];
        signal_filter_bank_log(&prepare(3, 1600).unwrap(), &input, &mut out);
        assert_eq!(out, golden);
        let input = [
            48, 20, 19, 24, 35, 47, 23, 30, 31, 10, 48, 21, 46, 14, 18, 27,
        ];
        let golden = [
            32767, 15121, 13440, 21095, 32767, 32767, 19701, 28407, 29482, 32767, 32767, 16720,
            32767, 3434, 11669, 24955,
        ];
        let mut out = [0i16; 16];
        signal_filter_bank_log(&prepare(5, 32768).unwrap(), &input, &mut out);
        assert_eq!(out, golden);
    }

    #[test]
    fn options_outside_the_cpp_range_are_refused() {
        assert_eq!(prepare(32, 1), None);
        assert_eq!(prepare(-1, 1), None);
        assert_eq!(prepare(0, 1 << 31), None);
        assert_eq!(prepare(0, -1).unwrap().output_scale, u32::MAX);
    }
}
