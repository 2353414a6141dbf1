//! SignalPCAN (TFLM's Signal library, `signal/src/pcan_argc_fixed.cc`): per-channel energy
//! normalization. Each uint32 filter bank channel is multiplied by a gain looked up from the
//! channel's noise estimate in a piecewise-quadratic int16 table, shifted right by
//! `snr_shift`, and passed through the "shrink" function (`x²/4` below 2, `x - 1` above, from
//! 12 to 6 fractional bits).
//!
//! The gain table holds, per power-of-two interval of the noise estimate, three
//! coefficients: estimates 0..=2 read entries 0..=2, and an estimate with its top bit at
//! position `p` (2..=32) entries `4p - 6 ..= 4p - 4`; the table needs 125 entries. As in the
//! C++, the int16 gain is converted to uint32 (sign-extended) before the 64-bit product.

/// Constant parameters of a SignalPCAN node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Right shift of the 64-bit product, 0..=63.
    pub snr_shift: u32,
}

/// Entries the gain table needs: an estimate with its top bit at position 32 reads entry 124.
pub const GAIN_LUT_LEN: usize = 125;

/// The kernel needs no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the `snr_shift` option, `None` outside `0..=63` (a uint64
/// shift by 64 or more is undefined in the C++).
pub fn prepare(snr_shift: i64) -> Option<Params> {
    let snr_shift = u32::try_from(snr_shift).ok().filter(|&s| s < 64)?;
    Some(Params { snr_shift })
}

/// TFLM's `WideDynamicFunction`: the gain for noise estimate `x` (`lut` holds
/// [`GAIN_LUT_LEN`] entries; a shorter one gives 0 where it falls short).
pub fn gain(x: u32, lut: &[i16]) -> i16 {
    let at = |i: usize| lut.get(i).copied().unwrap_or(0) as i32;
    if x <= 2 {
        return at(x as usize) as i16;
    }
    let interval = 32 - x.leading_zeros();
    let base = 4 * interval as usize - 6;
    // The 10 bits below the leading one (TFLM shifts x left by 11 - interval or right by
    // interval - 11, then masks): shifted up to bit 31, then one more to drop the leading
    // one, they are the top 10 bits, zero-filled below x's bit 0 as TFLM's left shift.
    let frac = ((x << x.leading_zeros()) << 1) >> 22;
    let frac = frac as i32;
    // The interval's three coefficients from one address (a table of `GAIN_LUT_LEN` always
    // holds them; a shorter one reads its zeros one by one).
    let (c0, c1, c2) = match lut.get(base..base + 3) {
        Some(&[c0, c1, c2]) => (c0 as i32, c1 as i32, c2 as i32),
        _ => (at(base), at(base + 1), at(base + 2)),
    };
    // |lut| < 2^15 and frac < 2^10: every step stays inside i32, as in the C++.
    let mut r = (c2 * frac) >> 5;
    r += c1 * 32;
    r *= frac;
    r = (r + (1 << 14)) >> 15;
    r += c0;
    r as i16
}

/// TFLM's `PcanShrink`: `x²/4` (12 to 6 fractional bits) below 2.0, `x - 1` above.
pub fn shrink(x: u32) -> u32 {
    if x < 2 << 12 {
        (x * x) >> 20
    } else {
        (x >> 6) - (1 << 6)
    }
}

/// `output[i] = shrink((input[i] · gain(noise[i])) >> snr_shift)`.
pub fn signal_pcan(p: &Params, input: &[u32], noise: &[u32], lut: &[i16], output: &mut [u32]) {
    for ((o, &x), &n) in output.iter_mut().zip(input).zip(noise) {
        let g = gain(n, lut) as i32 as u32;
        let snr = ((x as u64 * g as u64) >> p.snr_shift) as u32;
        *o = shrink(snr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TFLM's `pcan_test.cc` vector (40 channels, its gain table, snr_shift 6).
    #[test]
    fn tflm_vector() {
        let input: [u32; 40] = [
            286, 298, 305, 291, 290, 279, 273, 257, 250, 240, 240, 233, 234, 230, 221, 205, 183,
            159, 156, 188, 239, 298, 345, 374, 380, 369, 359, 364, 372, 354, 302, 243, 194, 135,
            64, 72, 171, 245, 277, 304,
        ];
        let noise: [u32; 40] = [
            7310, 18308, 7796, 17878, 7413, 17141, 6978, 15789, 6390, 14745, 6135, 14314, 5981,
            14130, 5649, 12594, 4677, 9768, 3987, 11550, 6109, 18308, 8819, 22977, 9713, 22670,
            9176, 22363, 9509, 21748, 7719, 14929, 4959, 8294, 1636, 4423, 4371, 15052, 7080,
            18677,
        ];
        let lut: [i16; GAIN_LUT_LEN] = [
            32636, 32633, 32630, -6, 0, -21589, 32624, -12, 0, -21589, 32612, -23, -2, -21589,
            32587, -48, 0, -21589, 32539, -96, 0, -21589, 32443, -190, 0, -21589, 32253, -378, 4,
            -21589, 31879, -739, 18, -21589, 31158, -1409, 62, -21589, 29811, -2567, 202, -21589,
            27446, -4301, 562, -21589, 23707, -6265, 1230, -21589, 18672, -7458, 1952, -21589,
            13166, -7030, 2212, -21589, 8348, -5342, 1868, -21589, 4874, -3459, 1282, -21589, 2697,
            -2025, 774, -21589, 1446, -1120, 436, -21589, 762, -596, 232, -21589, 398, -313, 122,
            -21589, 207, -164, 64, -21589, 107, -85, 34, -21589, 56, -45, 18, -21589, 29, -22, 8,
            -21589, 15, -13, 6, -21589, 8, -8, 4, -21589, 4, -2, 0, -21589, 2, -3, 2, -21589, 1, 0,
            0, -21589, 1, -3, 2, -21589, 0, 0, 0,
        ];
        let golden: [u32; 40] = [
            1301, 836, 1354, 827, 1312, 811, 1263, 779, 1192, 753, 1160, 743, 1140, 738, 1096, 698,
            956, 607, 845, 667, 1157, 836, 1461, 912, 1546, 908, 1496, 904, 1527, 895, 1346, 758,
            999, 548, 378, 344, 908, 761, 1274, 843,
        ];
        let mut out = [0u32; 40];
        signal_pcan(&prepare(6).unwrap(), &input, &noise, &lut, &mut out);
        assert_eq!(out, golden);
    }

    #[test]
    fn shrink_is_quadratic_then_linear() {
        assert_eq!(shrink(0), 0);
        // 1.0 in Q12 -> 0.25 in Q6.
        assert_eq!(shrink(1 << 12), 16);
        assert_eq!(shrink((2 << 12) - 1), 63);
        // 2.0 -> 1.0, 3.0 -> 2.0.
        assert_eq!(shrink(2 << 12), 64);
        assert_eq!(shrink(3 << 12), 128);
        assert_eq!(shrink(u32::MAX), (u32::MAX >> 6) - 64);
    }

    /// TFLM's `WideDynamicFunction` as written (the two shifts and the mask), against
    /// [`gain`] over every interval.
    #[test]
    fn gain_is_tflms_function() {
        let lut: [i16; GAIN_LUT_LEN] = core::array::from_fn(|i| (i as i16).wrapping_mul(2311));
        let tflm = |x: u32| -> i16 {
            if x <= 2 {
                return lut[x as usize];
            }
            let interval = 32 - x.leading_zeros();
            let frac = if interval < 11 {
                x << (11 - interval)
            } else {
                x >> (interval - 11)
            } & 0x3FF;
            let frac = frac as i32;
            let base = 4 * interval as usize - 6;
            let mut r = (lut[base + 2] as i32 * frac) >> 5;
            r += lut[base + 1] as i32 * 32;
            r *= frac;
            r = (r + (1 << 14)) >> 15;
            (r + lut[base] as i32) as i16
        };
        for x in (0..=u32::MAX)
            .step_by(40_009)
            .chain((0..32).flat_map(|k| [(1u32 << k) - 1, 1 << k, (1 << k) + 1]))
            .chain(0..5000)
        {
            assert_eq!(gain(x, &lut), tflm(x), "x = {x}");
        }
    }

    #[test]
    fn gain_reads_each_interval_of_the_table() {
        let lut: [i16; GAIN_LUT_LEN] = core::array::from_fn(|i| (i as i16) * 100 - 6000);
        assert_eq!(gain(0, &lut), -6000);
        assert_eq!(gain(2, &lut), -5800);
        // 3: interval 2, entries 2..=4, frac (3 << 9) & 0x3FF = 512.
        let (c0, c1, c2) = (-5800, -5700, -5600);
        let r = ((((c2 * 512) >> 5) + c1 * 32) * 512 + (1 << 14)) >> 15;
        assert_eq!(gain(3, &lut) as i32, r + c0);
        // The top interval reads entries 122..=124; frac = (x >> 21) & 0x3FF.
        let (c0, c1, c2) = (6200, 6300, 6400);
        let r = ((((c2 * 1023) >> 5) + c1 * 32) * 1023 + (1 << 14)) >> 15;
        assert_eq!(gain(u32::MAX, &lut) as i32, (r + c0) as i16 as i32);
    }

    #[test]
    fn negative_gain_wraps_like_the_cpp() {
        let lut = [-1i16; GAIN_LUT_LEN];
        let p = prepare(32).unwrap();
        let mut out = [0u32; 1];
        // (1 · (2^32 - 1)) >> 32 == 0.
        signal_pcan(&p, &[1], &[0], &lut, &mut out);
        assert_eq!(out, [0]);
        // A gain of -1 is 2^32 - 1: (2^20 · (2^32 - 1)) >> 32.
        signal_pcan(&p, &[1 << 20], &[1], &lut, &mut out);
        assert_eq!(
            out,
            [shrink((((1u64 << 20) * u32::MAX as u64) >> 32) as u32)]
        );
        assert_eq!(prepare(64), None);
        assert_eq!(prepare(-1), None);
    }
}
