//! SLICE: a box of the input (`begin`, `size`; `size = -1` runs to the end), any element
//! type (TFLM runs float32, int8, int16, int32 and bool), inputs of at most 5 dims.
//!
//! Follows TFLM's `slice.cc` (`GetValidatedBeginAndSizeVectors`: `0 <= begin <= dim`,
//! `0 <= size <= dim - begin` after resolving `-1`, the output's element count equal to the
//! box's) and `reference_ops::Slice`, which copies the box in row-major order: the
//! STRIDED_SLICE kernel with unit strides does exactly that, so SLICE reuses its
//! [`crate::strided_slice::Params`] and loops.

use crate::quant::PrepareError;
use crate::strided_slice::{PADDED_DIMS, Params, strided_slice};

/// Largest input rank TFLM's SLICE accepts.
pub const MAX_DIMS: usize = 5;

/// The kernel needs no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Parameters of a SLICE of `input_shape` by the constant `begin` and `size` (int32 or int64
/// values, one per input dim), with TFLM's validation.
pub fn prepare(input_shape: &[usize], begin: &[i64], size: &[i64]) -> Result<Params, PrepareError> {
    let rank = input_shape.len();
    if rank == 0 || rank > MAX_DIMS || begin.len() != rank || size.len() != rank {
        return Err(PrepareError::InvalidShape);
    }
    let pad = PADDED_DIMS - rank;
    let mut p = Params {
        input_dims: [1; PADDED_DIMS],
        start: [0; PADDED_DIMS],
        stop: [1; PADDED_DIMS],
        stride: [1; PADDED_DIMS],
    };
    for i in 0..rank {
        let dim = i64::try_from(input_shape[i]).map_err(|_| PrepareError::InvalidShape)?;
        if dim > i32::MAX as i64 || begin[i] < 0 || begin[i] > dim {
            return Err(PrepareError::InvalidShape);
        }
        let remaining = dim - begin[i];
        let resolved = if size[i] == -1 { remaining } else { size[i] };
        if resolved < 0 || resolved > remaining {
            return Err(PrepareError::InvalidShape);
        }
        p.input_dims[pad + i] = input_shape[i];
        p.start[pad + i] = begin[i] as i32;
        p.stop[pad + i] = (begin[i] + resolved) as i32;
    }
    Ok(p)
}

/// SLICE (`reference_ops::Slice`).
pub fn slice<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    strided_slice(p, input, output);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes() {
        let p = prepare(&[3, 4], &[1, 1], &[2, -1]).unwrap();
        let x: [i32; 12] = core::array::from_fn(|i| i as i32);
        let mut y = [0; 6];
        slice(&p, &x, &mut y);
        assert_eq!(y, [5, 6, 7, 9, 10, 11]);
        assert!(prepare(&[3, 4], &[3, 0], &[1, 1]).is_err());
        assert!(prepare(&[3, 4], &[-1, 0], &[1, 1]).is_err());
        assert!(prepare(&[3, 4], &[1, 0], &[3, 1]).is_err());
        assert_eq!(prepare(&[3, 4], &[3, 0], &[0, 4]).unwrap().output_size(), 0);
    }
}
