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

/// SLICE (`reference_ops::Slice`): the box in row-major order, one contiguous run per
/// position of the outer axes (innermost axes taken whole are merged into the run).
pub fn slice<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    if p.stride.iter().any(|&s| s != 1) || p.start.iter().zip(&p.stop).any(|(a, b)| a > b || *a < 0)
    {
        return strided_slice(p, input, output);
    }
    let mut n = p.input_dims;
    let mut lo = p.start.map(|v| v as usize);
    let mut hi = p.stop.map(|v| v as usize);
    // While the last axis is whole, it and the one before are one axis.
    for _ in 1..PADDED_DIMS {
        if lo[PADDED_DIMS - 1] != 0 || hi[PADDED_DIMS - 1] != n[PADDED_DIMS - 1] {
            break;
        }
        let last = n[PADDED_DIMS - 1];
        for i in (1..PADDED_DIMS).rev() {
            (n[i], lo[i], hi[i]) = (n[i - 1], lo[i - 1], hi[i - 1]);
        }
        (n[0], lo[0], hi[0]) = (1, 0, 1);
        n[PADDED_DIMS - 1] *= last;
        lo[PADDED_DIMS - 1] *= last;
        hi[PADDED_DIMS - 1] *= last;
    }
    let [_, n1, n2, n3, n4] = n;
    let run = hi[4] - lo[4];
    let mut out = output;
    for o0 in lo[0]..hi[0] {
        for o1 in lo[1]..hi[1] {
            let b1 = (o0 * n1 + o1) * n2;
            for o2 in lo[2]..hi[2] {
                let b2 = (b1 + o2) * n3;
                for o3 in lo[3]..hi[3] {
                    let b3 = (b2 + o3) * n4 + lo[4];
                    let (Some(src), Some((dst, rest))) =
                        (input.get(b3..b3 + run), out.split_at_mut_checked(run))
                    else {
                        return;
                    };
                    if run <= 4 {
                        for (d, s) in dst.iter_mut().zip(src) {
                            *d = *s;
                        }
                    } else {
                        dst.copy_from_slice(src);
                    }
                    out = rest;
                }
            }
        }
    }
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
        // Boxes of a [2, 3, 4] input, whole and partial axes, against the strided loops.
        let x: [i16; 24] = core::array::from_fn(|i| i as i16);
        for b in 0..8usize {
            let begin = [(b & 1) as i64, (b >> 1 & 1) as i64, (b >> 2) as i64 * 2];
            for size in [[1, 2, 2], [-1, -1, -1], [1, 1, 1], [1, -1, 2], [-1, 1, -1]] {
                let p = prepare(&[2, 3, 4], &begin, &size).unwrap();
                let (mut got, mut want) = ([0i16; 24], [0i16; 24]);
                let n = p.output_size();
                slice(&p, &x, &mut got[..n]);
                strided_slice(&p, &x, &mut want[..n]);
                assert_eq!(got, want, "{begin:?} {size:?}");
            }
        }
    }
}
