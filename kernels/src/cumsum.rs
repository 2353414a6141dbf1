//! CUMSUM along one axis, `exclusive` and `reverse`: float32 and int8 (the only types the
//! pinned TFLM runs).
//!
//! Follows TFLM's `cumsum.cc` and `reference_ops::CumSum`: the input is viewed as
//! `[before, depth, after]` (dims before the axis, the axis, dims after it); each
//! (before, after) line is accumulated along the axis, backwards when `reverse`, the output
//! taking the running sum before (`exclusive`) or after adding each element.
//!
//! * float32: the accumulator starts at `0.0f` and adds each element (`acc + x`).
//! * int8 (TFLM's general rescaling, left shift 20): each element becomes
//!   `scaled = MBQMSmallerThanOneExp((x - input_zero_point) << 20, m_in, s_in)` where
//!   `m_in, s_in` quantize `input_scale / (2 * input_scale) = 0.5`; the accumulator starts
//!   at `MBQMSmallerThanOneExp(-input_zero_point << 20, m_in, s_in)` (TFLM's reference starts
//!   it at the scaled negated zero point, not at zero, although its comment says 0: Kiln
//!   repeats it, so a zero point other than 0 shifts every output) and each output is
//!   `MBQMSmallerThanOneExp(acc, m_out, s_out) + output_zero_point` clamped to int8, with
//!   `m_out, s_out` quantizing `2 * input_scale / (2^20 * output_scale)` (which must be
//!   below 1). The int32 accumulator wraps as TFLM's does in practice on overflow.

use crate::fixed_point::multiply_by_quantized_multiplier_smaller_than_one_exp as mbqm;
use crate::quant::{PrepareError, QuantParams, quantize_multiplier_smaller_than_one_exp};

/// TFLM's `kCumSumIntegerShift`.
pub const LEFT_SHIFT: i32 = 20;

/// Constant parameters of a CUMSUM node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Product of the dims before the axis.
    pub before: usize,
    /// The axis's extent.
    pub depth: usize,
    /// Product of the dims after the axis.
    pub after: usize,
    /// The output takes the sum of the elements before each one.
    pub exclusive: bool,
    /// Accumulate from the end of the axis.
    pub reverse: bool,
    /// Int8: `-input_zero_point`.
    pub input_offset: i32,
    /// Int8: the output zero point.
    pub output_offset: i32,
    /// Int8: the multiplier and (non-positive) exponent of `0.5`.
    pub input_multiplier: i32,
    pub input_shift: i32,
    /// Int8: the multiplier and (non-positive) exponent of `2 s_in / (2^20 s_out)`.
    pub output_multiplier: i32,
    pub output_shift: i32,
}

impl Params {
    /// Number of elements (input and output).
    pub const fn size(&self) -> usize {
        self.before * self.depth * self.after
    }
}

/// The kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Float32 parameters for `shape` along `axis` (negative counts from the end once);
/// quantization fields zero.
pub fn prepare_f32(
    shape: &[usize],
    axis: i32,
    exclusive: bool,
    reverse: bool,
) -> Result<Params, PrepareError> {
    let rank = shape.len() as i32;
    let a = if axis < 0 { axis + rank } else { axis };
    if !(0..rank).contains(&a) {
        return Err(PrepareError::InvalidShape);
    }
    let a = a as usize;
    Ok(Params {
        before: shape[..a].iter().product(),
        depth: shape[a],
        after: shape[a + 1..].iter().product(),
        exclusive,
        reverse,
        input_offset: 0,
        output_offset: 0,
        input_multiplier: 0,
        input_shift: 0,
        output_multiplier: 0,
        output_shift: 0,
    })
}

/// Int8 parameters (`CalculateOpData`).
pub fn prepare_s8(
    shape: &[usize],
    axis: i32,
    exclusive: bool,
    reverse: bool,
    input: QuantParams,
    output: QuantParams,
) -> Result<Params, PrepareError> {
    let mut p = prepare_f32(shape, axis, exclusive, reverse)?;
    let twice = 2.0 * input.scale as f64;
    let (mi, si) = quantize_multiplier_smaller_than_one_exp(input.scale as f64 / twice)?;
    let (mo, so) = quantize_multiplier_smaller_than_one_exp(
        twice / ((1i64 << LEFT_SHIFT) as f64 * output.scale as f64),
    )?;
    p.input_offset = -input.zero_point;
    p.output_offset = output.zero_point;
    p.input_multiplier = mi;
    p.input_shift = si;
    p.output_multiplier = mo;
    p.output_shift = so;
    Ok(p)
}

/// Visits each line: `f(indices)` with the element indices in accumulation order.
#[inline(always)]
fn for_each_line(p: &Params, mut f: impl FnMut(&mut dyn Iterator<Item = usize>)) {
    for b in 0..p.before {
        for a in 0..p.after {
            let base = b * p.depth * p.after + a;
            let (depth, after, rev) = (p.depth, p.after, p.reverse);
            let mut it = (0..depth).map(move |d| {
                let d = if rev { depth - 1 - d } else { d };
                base + d * after
            });
            f(&mut it);
        }
    }
}

/// Float32 CUMSUM.
pub fn cumsum_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    debug_assert_eq!(input.len(), p.size());
    debug_assert_eq!(output.len(), p.size());
    for_each_line(p, |line| {
        let mut acc = 0.0f32;
        for i in line {
            let (Some(&x), Some(o)) = (input.get(i), output.get_mut(i)) else {
                return;
            };
            if p.exclusive {
                *o = acc;
                acc += x;
            } else {
                acc += x;
                *o = acc;
            }
        }
    });
}

/// Int8 CUMSUM (TFLM's rescaling, see the module docs).
pub fn cumsum_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    debug_assert_eq!(input.len(), p.size());
    debug_assert_eq!(output.len(), p.size());
    let scale = |y: i32| {
        mbqm(
            y.wrapping_shl(LEFT_SHIFT as u32),
            p.input_multiplier,
            p.input_shift,
        )
    };
    for_each_line(p, |line| {
        let mut acc = scale(p.input_offset);
        for i in line {
            let (Some(&x), Some(o)) = (input.get(i), output.get_mut(i)) else {
                return;
            };
            let y = scale(p.input_offset + x as i32);
            let s = if p.exclusive {
                let s = acc;
                acc = acc.wrapping_add(y);
                s
            } else {
                acc = acc.wrapping_add(y);
                acc
            };
            let v = mbqm(s, p.output_multiplier, p.output_shift).wrapping_add(p.output_offset);
            *o = v.clamp(-128, 127) as i8;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_along_the_axis() {
        let p = prepare_f32(&[2, 3], 1, false, false).unwrap();
        let mut y = [0.0f32; 6];
        cumsum_f32(&p, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut y);
        assert_eq!(y, [1.0, 3.0, 6.0, 4.0, 9.0, 15.0]);
        let p = prepare_f32(&[2, 3], 0, true, true).unwrap();
        cumsum_f32(&p, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &mut y);
        assert_eq!(y, [4.0, 5.0, 6.0, 0.0, 0.0, 0.0]);
        // int8 with zero point 0 and equal scales: plain sums, saturating.
        let q = QuantParams {
            scale: 0.5,
            zero_point: 0,
        };
        let p = prepare_s8(&[4], 0, false, false, q, q).unwrap();
        let mut y = [0i8; 4];
        cumsum_s8(&p, &[1, -3, 100, 100], &mut y);
        assert_eq!(y, [1, -2, 98, 127]);
        assert!(prepare_f32(&[2, 3], 2, false, false).is_err());
    }
}
