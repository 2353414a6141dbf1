//! x86-64 (the host): the instructions the float kernels take from the hardware.
//!
//! * `sqrtss`, which is what glibc's `sqrtf` compiles to there (so the reference's bits).
//!   The crate's software [`crate::libm_f32::sqrtf_soft`] gives the same bits on every input
//!   (checked over all 2^32 patterns against the host C library, and sampled in the unit
//!   tests below); this is only faster. `core` has no `f32::sqrt`, and the intrinsic is an
//!   `unsafe fn` outside functions compiled for SSE, hence one block here.
//! * The fused multiply-add (`vfmadd*sd`, FMA3), when the CPU has it (detected at run time,
//!   [`fma`]): glibc's `sinf`, `cosf`, `logf` and `expf` on the reference host are the
//!   `-fma` builds, whose `a * b + c` are single fused operations; with the instruction the
//!   float kernels run those operations as they are (`libm_f32::sinf_fused` and its
//!   siblings), instead of the portable path's exact reductions, unfused polynomials and
//!   software `fma` near rounding midpoints. Same bits either way (the unit tests of
//!   `libm_f32` compare the two paths, and each with the host's C library).
//!
//! A [`Fma`] value is the proof that the CPU executes FMA3 (and the AVX state it needs);
//! [`Fma::run`] runs a closure inside a function compiled with the `fma` target feature, so
//! that the [`Fma::mul_add`] calls inlined into it become single instructions (outside it
//! they stay correct, as calls).

#![allow(unsafe_code)]

use core::arch::x86_64::{
    __cpuid, _mm_cvtsd_f64, _mm_cvtss_f32, _mm_cvttsd_si32, _mm_fmadd_sd, _mm_set_sd, _mm_set_ss,
    _mm_sqrt_ss, _xgetbv,
};
use core::sync::atomic::{AtomicU8, Ordering};

/// `sqrtss`: the correctly rounded square root (NaN quieted, negatives give the default
/// NaN), as IEEE 754 and glibc's `sqrtf` on x86-64 define it.
#[inline(always)]
pub(crate) fn sqrt_f32(x: f32) -> f32 {
    // SAFETY: the intrinsics only need SSE, which every x86-64 CPU has: it is part of the
    // target's baseline (this module is compiled only under `target_feature = "sse"`). They
    // read and write registers only, no memory.
    unsafe { _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x))) }
}

/// `r` truncated toward zero to an `i32` (`cvttsd2si`: what C's `(int32_t) r` compiles to;
/// `0x80000000` if out of range, where Rust's `as i32` saturates). SSE2, in every x86-64
/// CPU.
#[inline(always)]
pub(crate) fn trunc_i32(r: f64) -> i32 {
    // SAFETY: the intrinsics only need SSE2, which every x86-64 CPU has (part of the
    // target's baseline). They read and write registers only, no memory.
    unsafe { _mm_cvttsd_si32(_mm_set_sd(r)) }
}

/// The proof that this CPU executes the `fma` target feature's instructions, and those of
/// the features it implies for rustc (`avx`, `sse4.2`, `sse4.1`, `ssse3`, `sse3`), with the
/// operating system saving the AVX register state. Only [`fma`] makes one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fma(());

/// 0: not detected yet; [`ABSENT`] or [`PRESENT`] once [`detect`] has run.
static FMA_STATE: AtomicU8 = AtomicU8::new(0);
const ABSENT: u8 = 1;
const PRESENT: u8 = 2;

/// The proof that the CPU has FMA, or `None` (detected once, then read from an atomic;
/// two threads detecting at once store the same answer).
#[inline]
pub(crate) fn fma() -> Option<Fma> {
    if cfg!(target_feature = "fma") {
        // Compiled for such CPUs only (`-C target-cpu=native` on one with FMA, or
        // `-C target-feature=+fma`): the build says so.
        return Some(Fma(()));
    }
    let state = match FMA_STATE.load(Ordering::Relaxed) {
        0 => {
            let state = if detect() { PRESENT } else { ABSENT };
            FMA_STATE.store(state, Ordering::Relaxed);
            state
        }
        s => s,
    };
    (state == PRESENT).then_some(Fma(()))
}

/// CPUID leaf 1, ECX: the instruction sets `#[target_feature(enable = "fma")]` lets LLVM
/// use, and OSXSAVE (the operating system manages the extended states with XSAVE).
const SSE3: u32 = 1 << 0;
const SSSE3: u32 = 1 << 9;
const FMA3: u32 = 1 << 12;
const SSE41: u32 = 1 << 19;
const SSE42: u32 = 1 << 20;
const OSXSAVE: u32 = 1 << 27;
const AVX: u32 = 1 << 28;
const NEEDED: u32 = SSE3 | SSSE3 | FMA3 | SSE41 | SSE42 | OSXSAVE | AVX;

/// Whether the CPU has every bit of [`NEEDED`] and the operating system has enabled the SSE
/// and AVX states in XCR0 (bits 1 and 2; VEX-encoded instructions, FMA's among them, fault
/// without them).
fn detect() -> bool {
    // Every x86-64 CPU has CPUID leaf 1 (its maximum leaf is at least 1).
    let ecx = __cpuid(1).ecx;
    if ecx & NEEDED != NEEDED {
        return false;
    }
    xcr0() & 6 == 6
}

/// XCR0, the extended states the operating system enabled; only called where CPUID says
/// OSXSAVE.
#[inline(never)]
fn xcr0() -> u64 {
    // SAFETY: `xgetbv` exists (and may run at any privilege level) when CPUID.1:ECX.OSXSAVE
    // is set, which `detect` checked before calling this; `XCR0` (register 0) always
    // exists then. It reads a register only, no memory.
    unsafe { _xgetbv(0) }
}

impl Fma {
    /// `a * b + c` rounded once (`vfmadd213sd`), as glibc's `-fma` builds compute the
    /// products that feed additions. A single instruction where inlined into [`Fma::run`].
    #[inline(always)]
    pub(crate) fn mul_add(self, a: f64, b: f64, c: f64) -> f64 {
        // SAFETY: `self` exists only if `fma()` found the FMA feature (CPUID and XCR0, or
        // the build's `target_feature`), which is all the intrinsic needs; it reads and
        // writes registers only, no memory.
        unsafe { _mm_cvtsd_f64(_mm_fmadd_sd(_mm_set_sd(a), _mm_set_sd(b), _mm_set_sd(c))) }
    }

    /// `f()`, compiled with the `fma` target feature: an element loop in `f` gets the
    /// fused multiply-adds as instructions (everything `#[inline(always)]` is inlined into
    /// it). Same result as calling `f()`.
    #[inline(always)]
    pub(crate) fn run<R>(self, f: impl FnOnce() -> R) -> R {
        // SAFETY: `run_fma` only requires that the CPU has the `fma` target feature and the
        // ones it implies, which `self` proves (see `Fma`); it does nothing but call `f`.
        unsafe { run_fma(f) }
    }
}

/// `f()` inside a function compiled for FMA (and AVX).
#[target_feature(enable = "fma")]
fn run_fma<R>(f: impl FnOnce() -> R) -> R {
    f()
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

    /// The detection agrees with std's, and the instruction is the exact `fma`.
    #[test]
    fn fma_detection_and_instruction() {
        let std_says = std::is_x86_feature_detected!("fma") && std::is_x86_feature_detected!("avx");
        let f = super::fma();
        assert_eq!(f.is_some(), std_says);
        // Detected once, then cached.
        assert_eq!(super::fma().is_some(), std_says);
        let Some(f) = f else { return };
        let cases = [
            (1.0 + f64::EPSILON, 1.0 - f64::EPSILON, -1.0),
            (3.0, 1.0 / 3.0, -1.0),
            (0.1, 10.0, -1.0),
            (-2.5, 4.0, 10.0),
        ];
        for (a, b, c) in cases {
            let want = crate::libm_f32::fma(a, b, c).to_bits();
            assert_eq!(f.mul_add(a, b, c).to_bits(), want, "{a} {b} {c}");
            assert_eq!(f.run(|| f.mul_add(a, b, c)).to_bits(), want, "{a} {b} {c}");
        }
        // Not the unfused form (else the test proves nothing).
        let (a, b) = (1.0 + f64::EPSILON, 1.0 - f64::EPSILON);
        assert_ne!(f.mul_add(a, b, -1.0), a * b - 1.0);
    }
}
