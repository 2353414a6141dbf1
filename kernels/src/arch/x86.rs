//! x86-64 (the host): the one instruction the float kernels take from the hardware,
//! `sqrtss`, which is what glibc's `sqrtf` compiles to there (so the reference's bits).
//!
//! The crate's software [`crate::libm_f32::sqrtf_soft`] gives the same bits on every input
//! (checked over all 2^32 patterns against the host C library, and sampled in the unit
//! tests below); this is only faster. `core` has no `f32::sqrt`, and the intrinsic is an
//! `unsafe fn` outside functions compiled for SSE, hence the one block here.

#![allow(unsafe_code)]

use core::arch::x86_64::{_mm_cvtss_f32, _mm_set_ss, _mm_sqrt_ss};

/// `sqrtss`: the correctly rounded square root (NaN quieted, negatives give the default
/// NaN), as IEEE 754 and glibc's `sqrtf` on x86-64 define it.
#[inline(always)]
pub(crate) fn sqrt_f32(x: f32) -> f32 {
    // SAFETY: the intrinsics only need SSE, which every x86-64 CPU has: it is part of the
    // target's baseline (this module is compiled only under `target_feature = "sse"`). They
    // read and write registers only, no memory.
    unsafe { _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x))) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sqrtss_is_the_software_sqrtf() {
        let mut bits = 0u32;
        loop {
            let x = f32::from_bits(bits);
            assert_eq!(
                super::sqrt_f32(x).to_bits(),
                crate::libm_f32::sqrtf_soft(x).to_bits(),
                "{bits:#x}"
            );
            match bits.checked_add(65_537) {
                Some(b) => bits = b,
                None => break,
            }
        }
    }
}
