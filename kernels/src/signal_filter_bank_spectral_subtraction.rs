//! SignalFilterBankSpectralSubtraction (TFLM's Signal library,
//! `signal/src/filter_bank_spectral_subtraction.cc`): per channel, a low-pass noise
//! estimate (persistent state, zeroed by reset, carried over between invocations) updated
//! from the scaled-up signal, then the signal minus the estimate, kept above
//! `min_signal_remaining` of the signal. Even channels use `smoothing`, odd ones the
//! alternate coefficients. All arithmetic is TFLM's: `uint32` values, 64-bit products,
//! the sum wrapping in 64 bits, shifts by `spectral_subtraction_bits`.

/// Constant parameters of a SignalFilterBankSpectralSubtraction node (the options, as the
/// `uint32` fields of TFLM's `SpectralSubtractionConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub num_channels: usize,
    pub smoothing: u32,
    pub one_minus_smoothing: u32,
    pub alternate_smoothing: u32,
    pub alternate_one_minus_smoothing: u32,
    pub min_signal_remaining: u32,
    /// 0..=31 (the signal is shifted left by it in 32 bits).
    pub smoothing_bits: u32,
    /// 0..=63 (64-bit values are shifted right by it).
    pub spectral_subtraction_bits: u32,
    pub clamping: bool,
}

/// The kernel needs no scratch memory (its state is a variable tensor).
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// `Some(params)` where TFLM's arithmetic is defined: `smoothing_bits` in 0..=31 and
/// `spectral_subtraction_bits` in 0..=63 (C shifts by the type's width or more are
/// undefined), at least one channel.
pub fn prepare(p: Params) -> Option<Params> {
    (p.smoothing_bits < 32 && p.spectral_subtraction_bits < 64 && p.num_channels > 0).then_some(p)
}

/// One invocation: `output` and `noise_out` (a copy of the updated estimate, TFLM's second
/// output) from `input` and the persistent `noise_estimate`, all `num_channels` long.
pub fn signal_filter_bank_spectral_subtraction(
    p: &Params,
    input: &[u32],
    noise_estimate: &mut [u32],
    output: &mut [u32],
    noise_out: &mut [u32],
) {
    let n = p.num_channels;
    debug_assert!(input.len() >= n && noise_estimate.len() >= n && output.len() >= n);
    debug_assert!(noise_out.len() >= n);
    // (Lowering makes every tensor `num_channels` long.)
    let n = n
        .min(input.len())
        .min(noise_estimate.len())
        .min(output.len())
        .min(noise_out.len());
    let (input, noise_estimate) = (&input[..n], &mut noise_estimate[..n]);
    let (output, noise_out) = (&mut output[..n], &mut noise_out[..n]);
    let even = (p.smoothing, p.one_minus_smoothing);
    let odd = (p.alternate_smoothing, p.alternate_one_minus_smoothing);
    // Channels in pairs (even, odd), so the coefficients need no test per channel.
    // The copy of the estimate is written as it is updated (a store per channel rather than
    // a memcpy after the loop).
    let mut xs = input.chunks_exact(2);
    let mut noises = noise_estimate.chunks_exact_mut(2);
    let mut copies = noise_out.chunks_exact_mut(2);
    let mut outs = output.chunks_exact_mut(2);
    let quads = (&mut xs).zip(&mut noises).zip(&mut copies).zip(&mut outs);
    for (((x, noise), copy), out) in quads {
        out[0] = channel(p, even, x[0], &mut noise[0]);
        out[1] = channel(p, odd, x[1], &mut noise[1]);
        copy[0] = noise[0];
        copy[1] = noise[1];
    }
    let rest = outs.into_remainder().iter_mut().zip(xs.remainder());
    let rest = rest
        .zip(noises.into_remainder())
        .zip(copies.into_remainder());
    for (((out, &x), noise), copy) in rest {
        *out = channel(p, even, x, noise);
        *copy = *noise;
    }
}

/// One channel: updates its noise estimate from `x` and returns its output.
#[inline(always)]
fn channel(p: &Params, (smoothing, one_minus): (u32, u32), x: u32, noise: &mut u32) -> u32 {
    let bits = p.spectral_subtraction_bits;
    let scaled = x << p.smoothing_bits;
    let sum = (scaled as u64 * smoothing as u64).wrapping_add(*noise as u64 * one_minus as u64);
    *noise = (sum >> bits) as u32;
    let mut estimate = *noise;
    if estimate > scaled {
        estimate = scaled;
        if p.clamping {
            *noise = estimate;
        }
    }
    let floor = ((x as u64 * p.min_signal_remaining as u64) >> bits) as u32;
    let subtracted = (scaled - estimate) >> p.smoothing_bits;
    subtracted.max(floor)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The preprocessor's configuration (smoothing 0.04 and 0.06 in Q14, min 0.05).
    const P: Params = Params {
        num_channels: 4,
        smoothing: 655,
        one_minus_smoothing: 15729,
        alternate_smoothing: 983,
        alternate_one_minus_smoothing: 15401,
        min_signal_remaining: 819,
        smoothing_bits: 10,
        spectral_subtraction_bits: 14,
        clamping: false,
    };

    #[test]
    fn noise_estimate_carries_over_and_is_copied() {
        let mut noise = [0u32; 4];
        let (mut out, mut copy) = ([0u32; 4], [0u32; 4]);
        let x = [1000, 2000, 0, 100_000];
        signal_filter_bank_spectral_subtraction(&P, &x, &mut noise, &mut out, &mut copy);
        // noise = (x << 10) * s >> 14; out = ((x << 10) - noise) >> 10, above x * 819 >> 14.
        assert_eq!(noise[0], ((1000u64 * 1024 * 655) >> 14) as u32);
        assert_eq!(noise[1], ((2000u64 * 1024 * 983) >> 14) as u32);
        assert_eq!(out[2], 0);
        assert_eq!(out[0], (1000 * 1024 - noise[0]) >> 10);
        assert_eq!(copy, noise);
        let before = noise;
        signal_filter_bank_spectral_subtraction(&P, &x, &mut noise, &mut out, &mut copy);
        assert!(noise[0] > before[0] && noise[1] > before[1]);
        assert_eq!(
            prepare(Params {
                smoothing_bits: 32,
                ..P
            }),
            None
        );
        assert_eq!(
            prepare(Params {
                spectral_subtraction_bits: 64,
                ..P
            }),
            None
        );
    }
}
