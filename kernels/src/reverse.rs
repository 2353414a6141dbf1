//! REVERSE_V2: reverses a tensor along a run of consecutive axes (TFLM's `reverse.cc` and
//! `reference_ops::Reverse`, any element type).
//!
//! TFLM accepts only contiguous axes (after normalising negative ones and sorting), at most
//! 8 of them, on tensors of at most 6 dimensions. Reversing axes `a..=b` together is reversing
//! the index formed by those dimensions: the tensor is `[outer, middle, inner]` and each
//! `inner` block moves from middle index `j` to `middle - 1 - j`.

use crate::quant::PrepareError;

/// Largest rank TFLM's REVERSE_V2 accepts (`RuntimeShape::kMaxSmallSize`).
pub const MAX_DIMS: usize = 6;

/// Constant parameters of a REVERSE_V2 node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Product of the dimensions before the first reversed axis.
    pub outer: usize,
    /// Product of the reversed dimensions.
    pub middle: usize,
    /// Product of the dimensions after the last reversed axis.
    pub inner: usize,
}

impl Params {
    /// Elements of input and output.
    pub const fn size(&self) -> usize {
        self.outer * self.middle * self.inner
    }
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the input shape and the constant axes (negative ones count
/// from the end): 1 to 8 axes that, sorted, are consecutive and distinct.
pub fn prepare(shape: &[usize], axes: &[i32]) -> Result<Params, PrepareError> {
    let rank = shape.len();
    if rank > MAX_DIMS || axes.is_empty() || axes.len() > 8 || axes.len() > rank {
        return Err(PrepareError::InvalidShape);
    }
    let mut sorted = [0usize; 8];
    for (s, &a) in sorted.iter_mut().zip(axes) {
        let a = if a < 0 { a + rank as i32 } else { a };
        *s = usize::try_from(a)
            .ok()
            .filter(|&a| a < rank)
            .ok_or(PrepareError::InvalidShape)?;
    }
    let sorted = &mut sorted[..axes.len()];
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] + 1 != w[1]) {
        return Err(PrepareError::InvalidShape);
    }
    let (lo, hi) = (sorted[0], sorted[sorted.len() - 1]);
    Ok(Params {
        outer: shape[..lo].iter().product(),
        middle: shape[lo..=hi].iter().product(),
        inner: shape[hi + 1..].iter().product(),
    })
}

/// REVERSE_V2 (`reference_ops::Reverse`).
pub fn reverse<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    debug_assert_eq!(input.len(), p.size());
    debug_assert_eq!(output.len(), p.size());
    let (m, l) = (p.middle, p.inner);
    if m == 0 || l == 0 {
        return;
    }
    for (x, y) in input
        .chunks_exact(m * l)
        .zip(output.chunks_exact_mut(m * l))
    {
        if l == 1 {
            // The reversed axes are the innermost: element by element (no call per element).
            for (d, s) in y.iter_mut().zip(x.iter().rev()) {
                *d = *s;
            }
        } else {
            for (d, s) in y.chunks_exact_mut(l).zip(x.chunks_exact(l).rev()) {
                d.copy_from_slice(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverses_runs_of_axes() {
        let x = [1i8, 2, 3, 4, 5, 6];
        let mut y = [0i8; 6];
        reverse(&prepare(&[2, 3], &[1]).unwrap(), &x, &mut y);
        assert_eq!(y, [3, 2, 1, 6, 5, 4]);
        reverse(&prepare(&[2, 3], &[-2]).unwrap(), &x, &mut y);
        assert_eq!(y, [4, 5, 6, 1, 2, 3]);
        reverse(&prepare(&[2, 3], &[1, 0]).unwrap(), &x, &mut y);
        assert_eq!(y, [6, 5, 4, 3, 2, 1]);
        assert!(prepare(&[2, 3, 4], &[0, 2]).is_err());
        assert!(prepare(&[2, 3], &[1, 1]).is_err());
        assert!(prepare(&[2, 3], &[]).is_err());
        assert!(prepare(&[2, 3], &[2]).is_err());
    }
}
