//! SignalFftAutoScale (TFLM's Signal library, `signal/src/fft_auto_scale.cc`): shifts an int16
//! frame left by as many bits as its largest magnitude leaves free, and returns that shift
//! (the second, int32 output, which SignalFilterBankSquareRoot later undoes).
//!
//! The magnitude is TFLM's `MaxAbs16` exactly, with its int16 quirk: `-(-32768)` stored back
//! in an int16 is `-32768`, after which any larger sample replaces it; the bit count is
//! `MostSignificantBit32` as the wheel builds it (GCC's `32 - clz(x)`, and 32 for 0 or a
//! negative `max`), so an all-zero or all-`-32768` frame is shifted by 0.

/// The kernel needs no scratch memory and no parameters beyond the frame's length.
pub const fn scratch_bytes(_n: usize) -> usize {
    0
}

/// TFLM's `MaxAbs16`, int16 arithmetic included: with the DSP extension, the frame's largest
/// and smallest values two at a time ([`max_abs_packed`]), the sequential steps only for a
/// frame holding -32768.
fn max_abs(input: &[i16]) -> i16 {
    #[cfg(any(kiln_arch = "dsp", kiln_arch = "mve"))]
    if let Some(m) = max_abs_packed(input) {
        return m;
    }
    max_abs_steps(input)
}

/// `MaxAbs16` of a frame without -32768: then every step keeps `max >= 0` and takes
/// `max(max, v, -v)`, so the result is the largest magnitude (or 0), in any order; computed
/// from the largest and smallest values, two int16 lanes per word (`SSUB16` + `SEL`). `None`
/// for a frame holding -32768 (the int16 quirk makes the order matter).
#[cfg(any(
    kiln_arch = "dsp",
    kiln_arch = "mve",
    all(test, kiln_arch = "portable")
))]
fn max_abs_packed(input: &[i16]) -> Option<i16> {
    use crate::arch::{max_s16x2, min_s16x2};
    let word = |p: &[i16]| (p[0] as u16 as u32) | ((p[1] as u16 as u32) << 16);
    let (quads, rest) = input.as_chunks::<4>();
    // Two words per step, each into its own pair of lanes (fewer register moves than one
    // word per step); the pairs meet at the end.
    let (mut hi, mut lo) = ([0u32; 2], [0u32; 2]);
    for q in quads {
        let (w0, w1) = (word(&q[..2]), word(&q[2..]));
        hi = [max_s16x2(hi[0], w0), max_s16x2(hi[1], w1)];
        lo = [min_s16x2(lo[0], w0), min_s16x2(lo[1], w1)];
    }
    let (hi, lo) = (max_s16x2(hi[0], hi[1]), min_s16x2(lo[0], lo[1]));
    let half = |w: u32, k: u32| (w >> (16 * k)) as u16 as i16 as i32;
    let mut max = half(hi, 0).max(half(hi, 1));
    let mut min = half(lo, 0).min(half(lo, 1));
    for &v in rest {
        (max, min) = (max.max(v as i32), min.min(v as i32));
    }
    (min != i16::MIN as i32).then(|| max.max(-min) as i16)
}

/// `MaxAbs16` step by step.
fn max_abs_steps(input: &[i16]) -> i16 {
    let step = |max: i16, v: i16| {
        if v > max {
            v
        } else if -(v as i32) > max as i32 {
            (-(v as i32)) as i16
        } else {
            max
        }
    };
    // In order (the int16 quirk makes the steps depend on it), four per loop step written
    // out so that every opt-level runs them unrolled.
    let mut max: i16 = 0;
    let mut quads = input.chunks_exact(4);
    for q in &mut quads {
        max = step(step(step(step(max, q[0]), q[1]), q[2]), q[3]);
    }
    quads.remainder().iter().fold(max, |m, &v| step(m, v))
}

/// TFLM's `MostSignificantBit32` of the (sign-extended) value, as built with GCC.
fn msb(x: u32) -> u32 {
    if x == 0 { 32 } else { 32 - x.leading_zeros() }
}

/// `output[i] = input[i] << scale` (wrapping, as the C++'s int16 store), `scale` the number
/// of free bits of the frame's largest magnitude (0 if none), written to `scale_bits[0]`.
pub fn signal_fft_auto_scale(input: &[i16], output: &mut [i16], scale_bits: &mut [i32]) {
    debug_assert_eq!(input.len(), output.len());
    let max = max_abs(input);
    let scale = (16 - msb(max as i32 as u32) as i32 - 1).max(0);
    #[cfg(any(kiln_arch = "dsp", kiln_arch = "mve"))]
    shift_packed(input, output, scale as u32);
    #[cfg(not(any(kiln_arch = "dsp", kiln_arch = "mve")))]
    shift_steps(input, output, scale as u32);
    if let Some(s) = scale_bits.first_mut() {
        *s = scale;
    }
}

/// `output[i] = input[i] << scale`, wrapping to 16 bits (`scale < 16`), four at a time.
#[cfg_attr(any(kiln_arch = "dsp", kiln_arch = "mve"), allow(dead_code))]
fn shift_steps(input: &[i16], output: &mut [i16], scale: u32) {
    let f = |x: i16| ((x as u32) << scale) as i16;
    let (mut os, mut xs) = (output.chunks_exact_mut(4), input.chunks_exact(4));
    for (o, x) in (&mut os).zip(&mut xs) {
        (o[0], o[1], o[2], o[3]) = (f(x[0]), f(x[1]), f(x[2]), f(x[3]));
    }
    for (o, &x) in os.into_remainder().iter_mut().zip(xs.remainder()) {
        *o = f(x);
    }
}

/// [`shift_steps`] two samples per word: the low one shifted and cut to its half, the high
/// one shifted within its own, joined by `PKHBT` (`arch::pack_halves`, which also keeps the
/// compiler from splitting the word back into halfword loads and stores).
#[cfg(any(
    kiln_arch = "dsp",
    kiln_arch = "mve",
    all(test, kiln_arch = "portable")
))]
fn shift_packed(input: &[i16], output: &mut [i16], scale: u32) {
    use crate::arch::pack_halves;
    let word = |x: &[i16]| (x[0] as u16 as u32) | ((x[1] as u16 as u32) << 16);
    let shift = |w: u32| pack_halves(w << scale, pack_halves(0, w) << scale);
    // Eight samples per step, written out (opt-level s keeps the loop as written; an
    // `array::map` would stay a loop through the stack).
    let (outs, out_rest) = output.as_chunks_mut::<8>();
    let (ins, in_rest) = input.as_chunks::<8>();
    for (o, x) in outs.iter_mut().zip(ins) {
        let (a, b) = (shift(word(&x[0..2])), shift(word(&x[2..4])));
        let (c, d) = (shift(word(&x[4..6])), shift(word(&x[6..8])));
        *o = [
            a as i16,
            (a >> 16) as i16,
            b as i16,
            (b >> 16) as i16,
            c as i16,
            (c >> 16) as i16,
            d as i16,
            (d >> 16) as i16,
        ];
    }
    // (One length: the remainders are the same samples.)
    shift_steps(in_rest, out_rest, scale);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed form gives the steps' result on every frame without -32768 and declines
    /// every frame with it.
    #[test]
    #[cfg(kiln_arch = "portable")]
    fn packed_max_abs_matches_the_steps() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for len in 0..40 {
            for round in 0..200 {
                let frame: [i16; 40] = core::array::from_fn(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    match (state >> 58, round % 3) {
                        (0, _) => i16::MIN,
                        (1, _) => i16::MAX,
                        (_, 0) => state as i16,
                        _ => (state as i16) >> 8,
                    }
                });
                let frame = &frame[..len];
                match max_abs_packed(frame) {
                    Some(m) => assert_eq!(m, max_abs_steps(frame), "{frame:?}"),
                    None => assert!(frame.contains(&i16::MIN), "{frame:?}"),
                }
            }
        }
    }

    /// The packed shift gives the steps' samples for every shift and length.
    #[test]
    #[cfg(kiln_arch = "portable")]
    fn packed_shift_matches_the_steps() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let frame: [i16; 43] = core::array::from_fn(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as i16
        });
        for scale in 0..16 {
            for len in [0, 1, 3, 4, 5, 42, 43] {
                let (mut a, mut b) = ([0i16; 43], [1i16; 43]);
                shift_steps(&frame[..len], &mut a[..len], scale);
                shift_packed(&frame[..len], &mut b[..len], scale);
                assert_eq!(a[..len], b[..len], "scale {scale}, length {len}");
            }
        }
    }

    fn run<const N: usize>(input: &[i16; N]) -> ([i16; N], i32) {
        let mut out = [0; N];
        let mut s = [0];
        signal_fft_auto_scale(input, &mut out, &mut s);
        (out, s[0])
    }

    #[test]
    fn tflm_test_vectors() {
        // signal/micro/kernels/fft_test.cc: FftAutoScaleTestSmall and FftAutoScaleTestScaleBit.
        let input = [
            0x0000, 0x1111, 0x2222, 0x3333, 0x3333, 0x2222, 0x1111, 0x0000,
        ];
        let (out, s) = run(&input);
        assert_eq!(s, 1);
        assert_eq!(
            out,
            [
                0x0000, 0x2222, 0x4444, 0x6666, 0x6666, 0x4444, 0x2222, 0x0000
            ]
        );
        let (out, s) = run(&[238, 113, -88, -243, -5, -130, 159, -70]);
        assert_eq!(s, 7);
        assert_eq!(
            out,
            [30464, 14464, -11264, -31104, -640, -16640, 20352, -8960]
        );
    }

    #[test]
    fn zero_and_minimum_frames_are_not_shifted() {
        assert_eq!(run(&[0, 0, 0]), ([0, 0, 0], 0));
        assert_eq!(run(&[-32768, -32768]), ([-32768, -32768], 0));
        // After -32768 the next larger sample becomes the maximum (TFLM's int16 quirk).
        assert_eq!(run(&[-32768, 1]).1, 14);
        assert_eq!(run(&[-1]), ([-16384], 14));
    }
}
