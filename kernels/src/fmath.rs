//! `f32` rounding helpers missing from `core` (`std::floor` / `std::ceil` for `float`).

/// 2^23: from there on every `f32` is an integer, and below it sums with it have ulp 1.
const TWO23: f32 = 8_388_608.0;

/// The integer nearest to `x` (ties to even; `x`'s sign) for `|x| < 2^23`, else any value:
/// `|x| + 2^23` rounds to an integer (its ulp is 1), and subtracting `2^23` is exact. Not
/// `x as i32` (a saturating conversion, which LLVM does not vectorize).
#[inline(always)]
fn nearest_small(x: f32) -> f32 {
    let a = f32::from_bits(x.to_bits() & 0x7fff_ffff);
    let n = (a + TWO23) - TWO23;
    f32::from_bits(n.to_bits() | (x.to_bits() & 0x8000_0000))
}

/// Whether the integer `f` (`|f| <= 2^23`) is even: the last significand bit of `|f| + 2^23`.
#[inline(always)]
pub(crate) fn is_even_small(f: f32) -> bool {
    let a = f32::from_bits(f.to_bits() & 0x7fff_ffff);
    (a + TWO23).to_bits() & 1 == 0
}

/// `std::floor` for `float`. Without branches, so that loops over elements vectorize: the
/// nearest integer stepped down if above `x`, with `x`'s sign (`-0` from `-0`; a negative
/// `x` otherwise gives a negative result, where the sign bit is set already), or `x` itself
/// where `|x| >= 2^23` (already integral), infinities and NaNs.
#[inline]
pub(crate) fn floor_f32(x: f32) -> f32 {
    let n = nearest_small(x);
    let r = if n > x { n - 1.0 } else { n };
    with_sign_of(r, x)
}

/// `std::ceil` for `float` (as [`floor_f32`]: `-0` for `-0` and for `x` in `(-1, 0)`).
#[inline]
pub(crate) fn ceil_f32(x: f32) -> f32 {
    let n = nearest_small(x);
    let r = if n < x { n + 1.0 } else { n };
    with_sign_of(r, x)
}

/// `r` with the sign bit of `x` ORed in where `|x| < 2^23`, else `x`.
#[inline(always)]
fn with_sign_of(r: f32, x: f32) -> f32 {
    let r = f32::from_bits(r.to_bits() | (x.to_bits() & 0x8000_0000));
    if f32::from_bits(x.to_bits() & 0x7fff_ffff) < TWO23 {
        r
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_std() {
        for &x in &[
            0.0f32, -0.0, 0.5, -0.5, 1.0, -1.0, 2.7, -2.7, 1e10, -1e10, 8388607.5,
        ] {
            assert_eq!(floor_f32(x).to_bits(), x.floor().to_bits(), "{x}");
            assert_eq!(ceil_f32(x).to_bits(), x.ceil().to_bits(), "{x}");
        }
        // Every 257th bit pattern; a NaN comes back as it is.
        for b in (0..=u32::MAX).step_by(257) {
            let x = f32::from_bits(b);
            if x.is_nan() {
                assert_eq!(floor_f32(x).to_bits(), b);
                assert_eq!(ceil_f32(x).to_bits(), b);
                continue;
            }
            assert_eq!(floor_f32(x).to_bits(), x.floor().to_bits(), "{x}");
            assert_eq!(ceil_f32(x).to_bits(), x.ceil().to_bits(), "{x}");
        }
        for i in -(1i32 << 23)..=(1 << 23) {
            if i % 997 == 0 || i.abs() > (1 << 23) - 3 {
                assert_eq!(is_even_small(i as f32), i % 2 == 0, "{i}");
            }
        }
    }
}
