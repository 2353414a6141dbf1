//! TRANSPOSE: permutes the dimensions of a tensor (any element type).
//!
//! Follows TFLM's `transpose.cc` / `reference_ops::Transpose`: output dimension `i` is input
//! dimension `perm[i]`. It only moves elements, so the result does not depend on iteration
//! order. TFLM's `Prepare` accepts 1-D to 5-D inputs and `perm` values in `0..rank`; so does
//! [`prepare`] (which also rejects repeated `perm` entries, which no valid model has).

use crate::quant::PrepareError;

/// Largest rank TFLM's TRANSPOSE accepts.
pub const MAX_DIMS: usize = 5;

/// Constant parameters of a TRANSPOSE node, right-aligned to [`MAX_DIMS`] dimensions
/// (leading unused dimensions have extent 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Output extents, outermost first.
    pub output_dims: [usize; MAX_DIMS],
    /// Input element stride of each output dimension (`input_stride[perm[i]]`).
    pub input_strides: [usize; MAX_DIMS],
}

impl Params {
    /// Number of elements (input and output).
    pub const fn size(&self) -> usize {
        let d = &self.output_dims;
        d[0] * d[1] * d[2] * d[3] * d[4]
    }
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the input shape (1 to 5 dims) and the constant `perm` tensor
/// (`TransposePrepare`: `perm` has one entry per input dim, each in `0..rank`).
pub fn prepare(input_shape: &[usize], perm: &[i32]) -> Result<Params, PrepareError> {
    let rank = input_shape.len();
    if rank == 0 || rank > MAX_DIMS || perm.len() != rank {
        return Err(PrepareError::InvalidShape);
    }
    let mut seen = [false; MAX_DIMS];
    for &p in perm {
        if p < 0 || p as usize >= rank || seen[p as usize] {
            return Err(PrepareError::InvalidShape);
        }
        seen[p as usize] = true;
    }
    let mut strides = [0usize; MAX_DIMS];
    let mut acc = 1;
    for i in (0..rank).rev() {
        strides[i] = acc;
        acc *= input_shape[i];
    }
    let mut p = Params {
        output_dims: [1; MAX_DIMS],
        input_strides: [0; MAX_DIMS],
    };
    let pad = MAX_DIMS - rank;
    for (i, &src) in perm.iter().enumerate() {
        p.output_dims[pad + i] = input_shape[src as usize];
        p.input_strides[pad + i] = strides[src as usize];
    }
    Ok(p)
}

/// TRANSPOSE (`reference_ops::Transpose`): `output` in row-major order over `output_dims`,
/// each element read from `input` through `input_strides`.
pub fn transpose<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    debug_assert_eq!(input.len(), p.size());
    debug_assert_eq!(output.len(), p.size());
    let [d0, d1, d2, d3, d4] = p.output_dims;
    let [s0, s1, s2, s3, s4] = p.input_strides;
    let mut out = output.iter_mut();
    for i0 in 0..d0 {
        let b0 = i0 * s0;
        for i1 in 0..d1 {
            let b1 = b0 + i1 * s1;
            for i2 in 0..d2 {
                let b2 = b1 + i2 * s2;
                for i3 in 0..d3 {
                    let b3 = b2 + i3 * s3;
                    for i4 in 0..d4 {
                        let Some(o) = out.next() else { return };
                        *o = input[b3 + i4 * s4];
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn transposes_2d_and_4d() {
        let p = prepare(&[2, 3], &[1, 0]).unwrap();
        let mut out = [0i8; 6];
        transpose(&p, &[1, 2, 3, 4, 5, 6], &mut out);
        assert_eq!(out, [1, 4, 2, 5, 3, 6]);
        // NHWC -> NCHW
        let shape = [2, 3, 4, 5];
        let input: Vec<u32> = (0..120).collect();
        let p = prepare(&shape, &[0, 3, 1, 2]).unwrap();
        let mut out = std::vec![0u32; 120];
        transpose(&p, &input, &mut out);
        for n in 0..2 {
            for c in 0..5 {
                for h in 0..3 {
                    for w in 0..4 {
                        let o = ((n * 5 + c) * 3 + h) * 4 + w;
                        let i = ((n * 3 + h) * 4 + w) * 5 + c;
                        assert_eq!(out[o], input[i]);
                    }
                }
            }
        }
        assert!(prepare(&[2, 3], &[0, 0]).is_err());
        assert!(prepare(&[2, 3], &[0, 2]).is_err());
        assert!(prepare(&[1, 1, 1, 1, 1, 1], &[0, 1, 2, 3, 4, 5]).is_err());
    }
}
