//! `f32` rounding helpers missing from `core` (`std::floor` / `std::ceil` for `float`).

/// `std::floor` for `float`.
#[inline]
pub(crate) fn floor_f32(x: f32) -> f32 {
    if !(f32::from_bits(x.to_bits() & 0x7fff_ffff) < 8_388_608.0) {
        return x; // |x| >= 2^23 (already integral), inf or NaN
    }
    let t = x as i32 as f32;
    let r = if t > x { t - 1.0 } else { t };
    if r == 0.0 && x.is_sign_negative() {
        -0.0
    } else {
        r
    }
}

/// `std::ceil` for `float`.
#[inline]
pub(crate) fn ceil_f32(x: f32) -> f32 {
    if !(f32::from_bits(x.to_bits() & 0x7fff_ffff) < 8_388_608.0) {
        return x;
    }
    let t = x as i32 as f32;
    let r = if t < x { t + 1.0 } else { t };
    if r == 0.0 && x.is_sign_negative() {
        -0.0
    } else {
        r
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
    }
}
