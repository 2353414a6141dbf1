//! NEG: `-x` elementwise, float32 (`reference_ops::Negate`; TFLM's NEG accepts float32 only).

use crate::util::map;

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

/// Float32 NEG: `output[i] = -input[i]` (the sign bit flipped, as in C++, for zeros, infinities
/// and NaNs too).
pub fn neg_f32(input: &[f32], output: &mut [f32]) {
    map(input, output, |x| -x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flips_the_sign_of_everything() {
        let x = [1.5, -2.0, 0.0, -0.0, f32::INFINITY, f32::NAN];
        let mut y = [0.0; 6];
        neg_f32(&x, &mut y);
        for (a, b) in x.iter().zip(&y) {
            assert_eq!(a.to_bits() ^ (1 << 31), b.to_bits());
        }
    }
}
