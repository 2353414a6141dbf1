//! `f32` functions bit-compatible with the C library TFLM's float kernels call on the
//! reference host (glibc 2.36, x86-64): `expm1f` and `tanhf` are the fdlibm-derived
//! implementations of `sysdeps/ieee754/flt-32` (`s_expm1f.c`, `s_tanhf.c`), ported here
//! operation for operation in `f32`. (`expf` is in [`crate::math`].)

/// `expm1f(x)` = `e^x - 1` (fdlibm `s_expm1f.c`: reduction by `k * ln2`, rational
/// approximation on the reduced argument, exponent reconstruction by bit manipulation).
pub fn expm1f(x: f32) -> f32 {
    const HUGE: f32 = 1.0e30;
    const TINY: f32 = 1.0e-30;
    const O_THRESHOLD: f32 = f32::from_bits(0x42b1_7180); // 8.8721679688e+01
    const LN2_HI: f32 = f32::from_bits(0x3f31_7180); // 6.9313812256e-01
    const LN2_LO: f32 = f32::from_bits(0x3717_f7d1); // 9.0580006145e-06
    const INVLN2: f32 = f32::from_bits(0x3fb8_aa3b); // 1.4426950216e+00
    const Q1: f32 = f32::from_bits(0xbd08_8889);
    const Q2: f32 = f32::from_bits(0x3ad0_0d01);
    const Q3: f32 = f32::from_bits(0xb8a6_70cd);
    const Q4: f32 = f32::from_bits(0x3686_7e54);
    const Q5: f32 = f32::from_bits(0xb457_edbb);

    let mut x = x;
    let bits = x.to_bits();
    let negative = bits & 0x8000_0000 != 0;
    let hx = bits & 0x7fff_ffff;

    // Huge and non-finite arguments.
    if hx >= 0x4195_b844 {
        // |x| >= 27 * ln2
        if hx >= 0x42b1_7218 {
            // |x| >= 88.721...
            if hx > 0x7f80_0000 {
                return x + x; // NaN
            }
            if hx == 0x7f80_0000 {
                return if negative { -1.0 } else { x };
            }
            if x > O_THRESHOLD {
                return HUGE * HUGE; // overflow
            }
        }
        if negative {
            return TINY - 1.0; // -1 with inexact
        }
    }

    // Argument reduction.
    let k: i32;
    let mut c = 0.0f32;
    if hx > 0x3eb1_7218 {
        // |x| > 0.5 ln2
        let (hi, lo);
        if hx < 0x3F85_1592 {
            // |x| < 1.5 ln2
            if !negative {
                hi = x - LN2_HI;
                lo = LN2_LO;
                k = 1;
            } else {
                hi = x + LN2_HI;
                lo = -LN2_LO;
                k = -1;
            }
        } else {
            // k = invln2 * x + (+-0.5), converted to int by truncation.
            k = (INVLN2 * x + if negative { -0.5f32 } else { 0.5f32 }) as i32;
            let t = k as f32;
            hi = x - t * LN2_HI; // exact
            lo = t * LN2_LO;
        }
        x = hi - lo;
        c = (hi - x) - lo;
    } else if hx < 0x3300_0000 {
        // |x| < 2^-25: return x (with inexact when x != 0).
        let t = HUGE + x;
        return x - (t - (HUGE + x));
    } else {
        k = 0;
    }

    // x is now in the primary range.
    let hfx = 0.5f32 * x;
    let hxs = x * hfx;
    let r1 = 1.0f32 + hxs * (Q1 + hxs * (Q2 + hxs * (Q3 + hxs * (Q4 + hxs * Q5))));
    let t = 3.0f32 - r1 * hfx;
    let mut e = hxs * ((r1 - t) / (6.0f32 - x * t));
    if k == 0 {
        return x - (x * e - hxs); // c is 0
    }
    e = x * (e - c) - c;
    e -= hxs;
    if k == -1 {
        return 0.5f32 * (x - e) - 0.5f32;
    }
    if k == 1 {
        return if x < -0.25f32 {
            -2.0f32 * (e - (x + 0.5f32))
        } else {
            1.0f32 + 2.0f32 * (x - e)
        };
    }
    let add_exponent = |y: f32| f32::from_bits((y.to_bits() as i32).wrapping_add(k << 23) as u32);
    if k <= -2 || k > 56 {
        // Suffices to return exp(x) - 1.
        let y = 1.0f32 - (e - x);
        return add_exponent(y) - 1.0f32;
    }
    if k < 23 {
        let t = f32::from_bits(0x3f80_0000 - (0x0100_0000u32 >> k)); // 1 - 2^-k
        let y = t - (e - x);
        add_exponent(y)
    } else {
        let t = f32::from_bits(((0x7f - k) as u32) << 23); // 2^-k
        let mut y = x - (e + t);
        y += 1.0f32;
        add_exponent(y)
    }
}

/// `tanhf(x)` (fdlibm `s_tanhf.c`): `x` itself for tiny `|x|`, `1 - 2 / (expm1f(2|x|) + 2)`
/// for `|x| >= 1`, `-t / (t + 2)` with `t = expm1f(-2|x|)` below, `+-1` from `|x| >= 22`.
pub fn tanhf(x: f32) -> f32 {
    const TINY: f32 = 1.0e-30;
    let jx = x.to_bits() as i32;
    let ix = jx & 0x7fff_ffff;

    if ix >= 0x7f80_0000 {
        // Inf or NaN.
        return if jx >= 0 {
            1.0 / x + 1.0
        } else {
            1.0 / x - 1.0
        };
    }
    let z;
    if ix < 0x41b0_0000 {
        // |x| < 22
        if ix == 0 {
            return x; // +-0
        }
        if ix < 0x2400_0000 {
            // |x| < 2^-55
            return x * (1.0 + x);
        }
        let ax = f32::from_bits(ix as u32);
        if ix >= 0x3f80_0000 {
            // |x| >= 1
            let t = expm1f(2.0 * ax);
            z = 1.0 - 2.0 / (t + 2.0);
        } else {
            let t = expm1f(-2.0 * ax);
            z = -t / (t + 2.0);
        }
    } else {
        z = 1.0 - TINY; // |x| >= 22: +-1 (inexact)
    }
    if jx >= 0 { z } else { -z }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_to_std() {
        let mut x = -30.0f32;
        while x < 30.0 {
            let want = (x as f64).tanh();
            let got = tanhf(x) as f64;
            assert!(
                (got - want).abs() <= 2.0 * f32::EPSILON as f64 * want.abs().max(1e-30),
                "{x}"
            );
            let want = (x as f64).exp_m1();
            let got = expm1f(x) as f64;
            assert!(
                (got - want).abs() <= 2.0 * f32::EPSILON as f64 * want.abs().max(1e-30),
                "{x} {got} {want}"
            );
            x += 0.01371;
        }
        assert_eq!(tanhf(0.0).to_bits(), 0);
        assert_eq!(tanhf(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tanhf(f32::INFINITY), 1.0);
        assert_eq!(tanhf(f32::NEG_INFINITY), -1.0);
        assert!(tanhf(f32::NAN).is_nan());
        assert_eq!(expm1f(f32::NEG_INFINITY), -1.0);
        assert_eq!(expm1f(1e-10), 1e-10);
    }
}
