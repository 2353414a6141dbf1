//! L2_NORMALIZATION over the last dimension, float32 and int8 (TFLM's `l2norm.cc`).
//!
//! Float: `reference_ops::L2Normalization` with TFLM's epsilon: per row, the sum of squares
//! in `f32` (in order), `l2 = max(sqrt(sum), 1e-6)`, each element divided by `l2`. Int8:
//! `reference_integer_ops::L2Normalization`: the sum of squared offsets in `i32`, its inverse
//! square root as a multiplier ([`crate::elementwise::inv_sqrt_quantized_multiplier_exp`]),
//! each offset requantized to Q0.7 and clamped. TFLM's int8 kernel ignores the output
//! quantization (the converter writes scale 1/128 and zero point 0).

use crate::elementwise::inv_sqrt_quantized_multiplier_exp_lanes;
use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::libm_f32::sqrtf;

/// Constant parameters of an L2_NORMALIZATION node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The product of every dimension but the last.
    pub outer: usize,
    /// The last dimension (at least 1).
    pub depth: usize,
    /// The input zero point (int8; 0 for float).
    pub input_zero_point: i32,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the input's shape (rank 1 to 4, as TFLM allows).
pub fn prepare(shape: &[usize], input_zero_point: i32) -> Option<Params> {
    let (&depth, lead) = shape.split_last()?;
    if shape.len() > 4 || depth == 0 {
        return None;
    }
    Some(Params {
        outer: lead.iter().product(),
        depth,
        input_zero_point,
    })
}

/// Float32 L2_NORMALIZATION.
pub fn l2_normalization_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    debug_assert_eq!(input.len(), p.outer * p.depth);
    debug_assert_eq!(output.len(), p.outer * p.depth);
    for (row, out) in input
        .chunks_exact(p.depth)
        .zip(output.chunks_exact_mut(p.depth))
    {
        let mut squared = 0.0f32;
        for &v in row {
            squared += v * v;
        }
        let l2 = sqrtf(squared);
        let l2 = if l2 < 1e-6 { 1e-6 } else { l2 }; // std::max(l2, epsilon)
        for (o, &v) in out.iter_mut().zip(row) {
            *o = v / l2;
        }
    }
}

/// Int8 L2_NORMALIZATION.
///
/// Rows are taken `ROWS` at a time so that their inverse square roots (the bulk of the
/// work: five Newton steps, each a chain of dependent multiplies) run interleaved.
pub fn l2_normalization_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    debug_assert_eq!(input.len(), p.outer * p.depth);
    debug_assert_eq!(output.len(), p.outer * p.depth);
    let group = ROWS * p.depth;
    for (rows, outs) in input.chunks(group).zip(output.chunks_mut(group)) {
        let mut acc = [0i32; ROWS];
        for (acc, row) in acc.iter_mut().zip(rows.chunks_exact(p.depth)) {
            for &v in row {
                let d = v as i32 - p.input_zero_point;
                *acc = acc.wrapping_add(d * d);
            }
        }
        let inv = inv_sqrt_quantized_multiplier_exp_lanes(acc, -1);
        let rows = rows
            .chunks_exact(p.depth)
            .zip(outs.chunks_exact_mut(p.depth));
        for ((row, out), (m, s)) in rows.zip(inv) {
            for (o, &v) in out.iter_mut().zip(row) {
                let d = v as i32 - p.input_zero_point;
                *o = multiply_by_quantized_multiplier(d, m, s + 7).clamp(-128, 127) as i8;
            }
        }
    }
}

/// Rows whose inverse square roots [`l2_normalization_s8`] computes together.
const ROWS: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_have_unit_norm() {
        let p = prepare(&[2, 3], 0).unwrap();
        let mut y = [0.0f32; 6];
        l2_normalization_f32(&p, &[3.0, 0.0, 4.0, 0.0, 0.0, 0.0], &mut y);
        assert_eq!(y, [0.6, 0.0, 0.8, 0.0, 0.0, 0.0]);
        let mut q = [0i8; 3];
        l2_normalization_s8(&prepare(&[3], 1).unwrap(), &[4, 1, 5], &mut q);
        assert!((q[0] as i32 - 77).abs() <= 1 && q[1] == 0 && (q[2] as i32 - 102).abs() <= 1);
        assert!(prepare(&[1, 1, 1, 1, 1], 0).is_none());
        assert!(prepare(&[], 0).is_none());
    }
}
