//! Float LOGISTIC and TANH (the int8 kernels are in [`crate::logistic`] and [`crate::tanh`]).
//!
//! Follow TFLM's `reference_ops::Logistic<float>` (`1` above 16.619047, `expf(x)` below -9,
//! `1 / (1 + expf(-x))` between) and `reference_ops::Tanh` (`std::tanh` on each `float`),
//! with `expf` and `tanhf` ported from the reference host's C library ([`crate::math::expf`],
//! [`crate::glibc_math::tanhf`]). Neither kernel has parameters.

use crate::glibc_math::tanhf;
use crate::math::expf;
use crate::util::{map, map_in_place};

/// The element function of the float LOGISTIC kernels.
#[inline(always)]
pub(crate) fn logistic_f32_op(x: f32) -> f32 {
    // 16.619047164916992188f in TFLM (the same f32).
    const CUTOFF_UPPER: f32 = f32::from_bits(0x4184_f3cf);
    const CUTOFF_LOWER: f32 = -9.0;
    if x > CUTOFF_UPPER {
        1.0
    } else if x < CUTOFF_LOWER {
        expf(x)
    } else {
        1.0 / (1.0 + expf(-x))
    }
}

/// Float LOGISTIC (`reference_ops::Logistic<float>`).
pub fn logistic_f32(input: &[f32], output: &mut [f32]) {
    map(input, output, logistic_f32_op);
}

/// [`logistic_f32`] with the output overwriting the input (`data` holds the input and
/// receives the output); byte-identical with [`logistic_f32`].
pub fn logistic_f32_in_place(data: &mut [f32]) {
    map_in_place(data, logistic_f32_op);
}

/// Float TANH (`reference_ops::Tanh`: `std::tanh(x)`).
pub fn tanh_f32(input: &[f32], output: &mut [f32]) {
    map(input, output, tanhf);
}

/// [`tanh_f32`] with the output overwriting the input (`data` holds the input and receives
/// the output); byte-identical with [`tanh_f32`].
pub fn tanh_f32_in_place(data: &mut [f32]) {
    map_in_place(data, tanhf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        let mut out = [0.0f32; 4];
        logistic_f32(&[0.0, 20.0, -10.0, 1.0], &mut out);
        assert_eq!(out[0], 0.5);
        assert_eq!(out[1], 1.0);
        assert_eq!(out[2], expf(-10.0));
        assert!((out[3] - 0.731_058_6).abs() < 1e-6);
        tanh_f32(&[0.0, 30.0, -30.0, 0.5], &mut out);
        assert_eq!(&out[..3], &[0.0, 1.0, -1.0]);
        assert!((out[3] - 0.462_117_16).abs() < 1e-6);
    }
}
