//! FLOOR_DIV and FLOOR_MOD (float32), elementwise with optional broadcasting.
//!
//! Follows TFLM's `floor_div.cc`/`floor_mod.cc` (float32 only in the pinned wheel):
//! - FLOOR_DIV: `float(floor(double(x) / double(y)))` (`reference_ops::FloorDiv`);
//! - FLOOR_MOD: `r = fmodf(x, y)`, then `r + y` when `r != 0` and `r`'s sign differs from
//!   `y`'s (`reference_ops::FloorMod`).
//!
//! Both are exact IEEE operations (a correctly rounded division, `floor`, and `fmod`, whose
//! result is always exact), so the kernels here are bit-identical with TFLM's without libm:
//! [`fmod_f32`] computes the remainder with integer arithmetic on the significands.
//! TFLM's FLOOR_DIV refuses to run when the denominator holds a zero ("Division by 0"): a
//! constant denominator with a zero is refused at build time, a runtime zero gives IEEE
//! results here (infinities or NaN). FLOOR_MOD has no such check in the pinned wheel: a
//! remainder by zero is NaN there and here.

use crate::broadcast::{Broadcast, broadcast_binary};

/// The kernels need no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

/// `std::floor` for `double`, `-0.0` preserved.
fn floor_f64(x: f64) -> f64 {
    if x == 0.0 || !(x.abs_bits() < 4_503_599_627_370_496.0) {
        return x;
    }
    let t = x as i64 as f64;
    if t > x { t - 1.0 } else { t }
}

trait AbsBits {
    fn abs_bits(self) -> f64;
}

impl AbsBits for f64 {
    fn abs_bits(self) -> f64 {
        f64::from_bits(self.to_bits() & !(1u64 << 63))
    }
}

/// The significand and exponent of a finite non-zero `|x|`: `|x| = m * 2^e`.
fn split(bits: u32) -> (u64, i32) {
    let e = ((bits >> 23) & 0xff) as i32;
    let f = (bits & 0x7f_ffff) as u64;
    if e == 0 {
        (f, -149)
    } else {
        (f | 1 << 23, e - 150)
    }
}

/// C's `fmodf`: the exact remainder of `x / y` truncated towards zero, with `x`'s sign.
pub fn fmod_f32(x: f32, y: f32) -> f32 {
    let (bx, by) = (x.to_bits(), y.to_bits());
    let (ax, ay) = (bx & 0x7fff_ffff, by & 0x7fff_ffff);
    if ax >= 0x7f80_0000 || ay > 0x7f80_0000 || ay == 0 {
        // x infinite or NaN, y NaN or zero: the NaN of `(x * y) / (x * y)`, as C libraries
        // compute it (an input NaN propagates).
        #[allow(clippy::eq_op)]
        return (x * y) / (x * y);
    }
    if ay == 0x7f80_0000 || ax == 0 {
        return x; // y infinite, or x zero.
    }
    let ((mx, ex), (my, ey)) = (split(ax), split(ay));
    let (r, e) = if ex < ey {
        let d = ey - ex;
        if d >= 40 {
            return x; // |x| < 2^24 * 2^ex <= |y|
        }
        (mx % (my << d), ex)
    } else {
        let mut r = mx % my;
        let mut d = ex - ey;
        while d > 0 {
            let s = d.min(39);
            r = (r << s) % my;
            d -= s;
        }
        (r, ey)
    };
    // r < 2^40 and r * 2^e is a multiple of 2^e <= |x|: exact in f64 and in f32.
    let mut v = r as f64;
    let mut e = e;
    while e < 0 {
        let s = (-e).min(60);
        v /= (1u64 << s) as f64;
        e += s;
    }
    while e > 0 {
        let s = e.min(60);
        v *= (1u64 << s) as f64;
        e -= s;
    }
    let v = v as f32;
    if bx >> 31 == 1 { -v } else { v }
}

#[inline(always)]
fn floor_div(x: f32, y: f32) -> f32 {
    floor_f64(x as f64 / y as f64) as f32
}

#[inline(always)]
fn floor_mod(x: f32, y: f32) -> f32 {
    let r = fmod_f32(x, y);
    if r != 0.0 && ((y < 0.0) != (r < 0.0)) {
        r + y
    } else {
        r
    }
}

/// FLOOR_DIV of two same-shaped tensors.
pub fn floor_div_f32(input1: &[f32], input2: &[f32], output: &mut [f32]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = floor_div(x, y);
    }
}

/// FLOOR_DIV with broadcasting.
pub fn floor_div_broadcast_f32(b: &Broadcast, input1: &[f32], input2: &[f32], output: &mut [f32]) {
    broadcast_binary(b, input1, input2, output, floor_div);
}

/// FLOOR_MOD of two same-shaped tensors.
pub fn floor_mod_f32(input1: &[f32], input2: &[f32], output: &mut [f32]) {
    debug_assert!(input1.len() == output.len() && input2.len() == output.len());
    for ((o, &x), &y) in output.iter_mut().zip(input1).zip(input2) {
        *o = floor_mod(x, y);
    }
}

/// FLOOR_MOD with broadcasting.
pub fn floor_mod_broadcast_f32(b: &Broadcast, input1: &[f32], input2: &[f32], output: &mut [f32]) {
    broadcast_binary(b, input1, input2, output, floor_mod);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fmod_matches_std() {
        let vals = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            3.5,
            -3.5,
            0.1,
            7.0,
            1e-40,
            -1e-40,
            1e-45,
            3e38,
            -3e38,
            1e30,
            2.5e-20,
            123456.78,
            -0.75,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            16777215.0,
            0.3333333,
        ];
        for &x in &vals {
            for &y in &vals {
                let (got, want) = (fmod_f32(x, y), x % y);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "fmod({x:e}, {y:e}) = {got:e}, want {want:e}"
                );
            }
        }
    }

    #[test]
    fn fmod_matches_std_on_random_bits() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u32
        };
        for _ in 0..200_000 {
            let (x, y) = (f32::from_bits(next()), f32::from_bits(next()));
            let (got, want) = (fmod_f32(x, y), x % y);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "fmod({x:e}, {y:e}) = {got:e}, want {want:e}"
            );
        }
    }

    #[test]
    fn floor_ops() {
        let mut o = [0.0f32; 4];
        floor_div_f32(&[7.0, -7.0, -0.0, 1.0], &[2.0, 2.0, 3.0, -3.0], &mut o);
        assert_eq!(o, [3.0, -4.0, -0.0, -1.0]);
        assert!(o[2].is_sign_negative());
        floor_mod_f32(&[7.0, -7.0, 7.0, -7.0], &[2.0, 2.0, -2.0, -2.0], &mut o);
        assert_eq!(o, [1.0, 1.0, -1.0, -1.0]);
    }
}
