//! `f32` elementary functions for the float kernels (`core` has no `expf`).
//!
//! [`expf`] is a port of the ARM optimized-routines `expf` that glibc (since 2.27) and musl
//! use (`EXP2F_TABLE_BITS = 5`, order-3 polynomial, evaluated in `f64`, < 0.502 ULP), so the
//! float softmax produces the same values as TFLM built against those C libraries: on
//! x86-64 with FMA glibc's ifunc picks the `-fma` build, whose three fused polynomial steps
//! are reproduced as `libm_f32` does for `cosf` (unfused fast path, fused with the exact
//! software `fma` near an f32 midpoint). Exhaustively checked against the host (all 2^32
//! inputs, see `libm_f32`); the unfused polynomial alone gives other bits for 2 inputs,
//! `32.564632` and `-63.09946` (in `same_bits_as_the_host_c_library`).
//!
//! On the host with FMA the EXP kernel's loop (`expf_map`) and LOG_SOFTMAX run
//! `expf_fused` instead: the `-fma` build's five fused operations on the CPU's instruction,
//! in glibc's order (the fused path of `libm_f32`, tested the same way).

use crate::libm_f32::{
    Fused, MulAdd, SoftFma, Unfused, map_f32, map_f32_in_place, near_f32_midpoint,
};

/// `tab[i] = uint(2^(i/32)) - (i << 47)` (`__exp2f_data.tab`).
pub(crate) const EXP2F_TAB: [u64; 32] = [
    0x3ff0000000000000,
    0x3fefd9b0d3158574,
    0x3fefb5586cf9890f,
    0x3fef9301d0125b51,
    0x3fef72b83c7d517b,
    0x3fef54873168b9aa,
    0x3fef387a6e756238,
    0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715,
    0x3feef1a7373aa9cb,
    0x3feedea64c123422,
    0x3feece086061892d,
    0x3feebfdad5362a27,
    0x3feeb42b569d4f82,
    0x3feeab07dd485429,
    0x3feea47eb03a5585,
    0x3feea09e667f3bcd,
    0x3fee9f75e8ec5f74,
    0x3feea11473eb0187,
    0x3feea589994cce13,
    0x3feeace5422aa0db,
    0x3feeb737b0cdc5e5,
    0x3feec49182a3f090,
    0x3feed503b23e255d,
    0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47,
    0x3fef199bdd85529c,
    0x3fef3720dcef9069,
    0x3fef5818dcfba487,
    0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da,
    0x3fefd0765b6e4540,
];

/// `e^x` for `f32`, bit-compatible with glibc's `expf` (round-to-nearest). Portable.
#[inline]
pub fn expf(x: f32) -> f32 {
    let inv_ln2_n = INV_LN2_N;
    let shift = SHIFT;

    if let Some(special) = expf_special(x) {
        return special;
    }
    let xd = x as f64;
    // glibc's `-fma` build fuses both uses of `z = InvLn2N * x`: `kd = round(z + shift)`
    // and `r = z - kd`. `r` exactly without `fma`: `InvLn2N = hi + lo` (29 and 24 bits), so
    // `x * hi` and `x * lo` are exact, `x * hi - kd` is exact (Sterbenz; or `kd = 0`), and
    // the last addition is the one rounding.
    let (hi, lo) = INV_LN2_N_SPLIT;
    let z = inv_ln2_n * xd;
    // Round z to an integer (ties to even) with the shift trick. The unfused `z + shift`
    // gives another integer than the fused one only when the exact product lies within
    // 2^-40 of a half-integer, i.e. `|r|` that close to 1/2: then the slow path.
    let kd = z + shift;
    let ki = kd.to_bits();
    let kd = kd - shift;
    let r = (xd * hi - kd) + xd * lo;
    const NEAR_HALF: f64 = 0.5 - f64::from_bits(0x3d70_0000_0000_0000); // 1/2 - 2^-40
    if !(-NEAR_HALF..=NEAR_HALF).contains(&r) {
        return expf_fused_all(xd);
    }
    let s = scale(ki);
    // The polynomial unfused (fast), then fused as GCC does where the unfused one lands near
    // an f32 midpoint (or below f32's normal range, where the f32 ulp is not at bit 29): as
    // `libm_f32::finish` argues for `cosf` (terms at most 1, y near 1), the two lie within
    // 2^7 ulps of each other.
    let fast = poly(Unfused, r) * s;
    if near_f32_midpoint(fast) || fast < f64::from(f32::MIN_POSITIVE) {
        return expf_poly_fused(r, s);
    }
    fast as f32
}

/// The result of `expf` for `|x| >= 88` and NaNs, where it is no polynomial's.
#[inline(always)]
fn expf_special(x: f32) -> Option<f32> {
    let abstop = (x.to_bits() >> 20) & 0x7ff;
    if abstop >= (88.0f32.to_bits() >> 20) {
        // |x| >= 88 or x is NaN.
        if x.to_bits() == f32::NEG_INFINITY.to_bits() {
            return Some(0.0);
        }
        if abstop >= (f32::INFINITY.to_bits() >> 20) {
            return Some(x + x);
        }
        if x > f32::from_bits(0x42b1_7217) {
            return Some(f32::INFINITY); // overflow
        }
        if x < f32::from_bits(0xc2cf_f1b4) {
            return Some(0.0); // underflow
        }
    }
    None
}

/// [`expf`] as glibc's `-fma` build computes it: `kd = round(InvLn2N * x + shift)` and
/// `r = InvLn2N * x - kd` fused, then the polynomial fused, every fused operation done by
/// `m` (the host's instruction; [`SoftFma`] in the tests).
#[inline(always)]
pub(crate) fn expf_fused(m: impl Fused, x: f32) -> f32 {
    if let Some(special) = expf_special(x) {
        return special;
    }
    expf_fused_from(m, x as f64)
}

/// The part of [`expf_fused`] after the special cases.
#[inline(always)]
fn expf_fused_from(m: impl Fused, xd: f64) -> f32 {
    let kd = m.mul_add(INV_LN2_N, xd, SHIFT);
    let ki = kd.to_bits();
    let kd = kd - SHIFT;
    let r = m.mul_add(INV_LN2_N, xd, -kd);
    (poly(m, r) * scale(ki)) as f32
}

/// EXP's element loop: `output[i] = expf(input[i])`, fused on the host's FMA instruction
/// where it has one ([`map_f32`]).
#[allow(
    clippy::redundant_closure,
    reason = "a function item is called through a shim LLVM does not inline into `run_fma`"
)]
pub(crate) fn expf_map(input: &[f32], output: &mut [f32]) {
    map_f32(
        input,
        output,
        expf,
        #[inline(always)]
        |m, x| expf_fused(m, x),
    );
}

/// [`expf_map`] in place.
#[allow(
    clippy::redundant_closure,
    reason = "a function item is called through a shim LLVM does not inline into `run_fma`"
)]
pub(crate) fn expf_map_in_place(data: &mut [f32]) {
    map_f32_in_place(
        data,
        expf,
        #[inline(always)]
        |m, x| expf_fused(m, x),
    );
}

const N: f64 = 32.0;
/// `InvLn2N` (`0x1.71547652b82fep+0 * N`).
const INV_LN2_N: f64 = f64::from_bits(0x3ff7_1547_652b_82fe) * N;
/// [`INV_LN2_N`] as `hi + lo` exactly, `hi` its top 29 significant bits.
const INV_LN2_N_SPLIT: (f64, f64) = {
    let hi = f64::from_bits(INV_LN2_N.to_bits() & !((1 << 24) - 1));
    (hi, INV_LN2_N - hi)
};
/// poly_scaled = { C0 / N^3, C1 / N^2, C2 / N } (exact: divisions by powers of two)
const C: [f64; 3] = [
    f64::from_bits(0x3fac_6af8_4b91_2394) / N / N / N,
    f64::from_bits(0x3fce_bfce_50fa_c4f3) / N / N,
    f64::from_bits(0x3fe6_2e42_ff0c_52d6) / N,
];
const SHIFT: f64 = f64::from_bits(0x4338_0000_0000_0000); // 0x1.8p+52

/// `2^(k/N)` from the bits `ki` of `k + shift`.
#[inline(always)]
fn scale(ki: u64) -> f64 {
    let t = EXP2F_TAB[(ki % 32) as usize].wrapping_add(ki << (52 - 5));
    f64::from_bits(t)
}

/// Everything after the special cases as glibc's `-fma` build, with the exact software
/// `fma` (the rare slow path for `|r|` near 1/2).
#[cold]
#[inline(never)]
fn expf_fused_all(xd: f64) -> f32 {
    expf_fused_from(SoftFma, xd)
}

/// `expf`'s polynomial in `r`: `(c0 r + c1) r^2 + (c2 r + 1)`, each `a * b + c` by `m`.
#[inline(always)]
fn poly(m: impl MulAdd, r: f64) -> f64 {
    let z = m.mul_add(C[0], r, C[1]);
    let r2 = r * r;
    let y = m.mul_add(C[2], r, 1.0);
    m.mul_add(z, r2, y)
}

/// The fused polynomial times `s`, rounded to `f32` (the rare slow path).
#[cold]
#[inline(never)]
fn expf_poly_fused(r: f64, s: f64) -> f32 {
    (poly(SoftFma, r) * s) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expf_matches_std_closely() {
        let mut x = -104.0f32;
        while x < 89.0 {
            let got = expf(x);
            let want = x.exp();
            let ulp = (got.to_bits() as i64 - want.to_bits() as i64).abs();
            assert!(ulp <= 1, "x={x} got={got} want={want}");
            x += 0.0137;
        }
        assert_eq!(expf(0.0), 1.0);
        assert_eq!(expf(f32::NEG_INFINITY), 0.0);
        assert_eq!(expf(100.0), f32::INFINITY);
        assert_eq!(expf(-200.0), 0.0);
        assert!(expf(f32::NAN).is_nan());
    }
}
