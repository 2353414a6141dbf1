//! SELECT_V2: `output = condition ? x : y` elementwise, the three inputs broadcast together.
//!
//! Follows TFLM's `select.cc`: `reference_ops::Select` when the three shapes are equal (or
//! every tensor has one element), else `BroadcastSelect5DSlow` (the pinned wheel broadcasts
//! up to 6-D, right-aligned, a dimension of extent 1 repeated), writing the output in
//! row-major order. The condition is TFLM's bool (one byte; non-zero selects `x`). Values
//! are copied, never converted, so any element type works (TFLM accepts float32, int8 and
//! int16, with the same quantization throughout).

use crate::quant::PrepareError;

/// The select kernels need no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

/// A precomputed broadcast of three inputs over at most 6 dimensions: output extents and
/// element strides of each input (0 along broadcast dimensions), outermost first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Broadcast3 {
    pub output_dims: [usize; 6],
    pub condition_strides: [usize; 6],
    pub x_strides: [usize; 6],
    pub y_strides: [usize; 6],
}

impl Broadcast3 {
    /// The broadcast of three shapes (each at most 6-D; equal extents or 1 in each aligned
    /// dimension; no zero extents).
    pub fn new(condition: &[usize], x: &[usize], y: &[usize]) -> Result<Broadcast3, PrepareError> {
        let shapes = [condition, x, y];
        if shapes.iter().any(|s| s.len() > 6 || s.contains(&0)) {
            return Err(PrepareError::InvalidShape);
        }
        let mut ext = [[1usize; 6]; 3];
        for (e, s) in ext.iter_mut().zip(shapes) {
            e[6 - s.len()..].copy_from_slice(s);
        }
        let mut b = Broadcast3 {
            output_dims: [1; 6],
            condition_strides: [0; 6],
            x_strides: [0; 6],
            y_strides: [0; 6],
        };
        for i in 0..6 {
            let out = ext.iter().map(|e| e[i]).max().unwrap_or(1);
            if ext.iter().any(|e| e[i] != 1 && e[i] != out) {
                return Err(PrepareError::InvalidShape);
            }
            b.output_dims[i] = out;
        }
        let mut strides = [[0usize; 6]; 3];
        for (st, e) in strides.iter_mut().zip(&ext) {
            let mut acc = 1usize;
            for i in (0..6).rev() {
                st[i] = if e[i] == 1 { 0 } else { acc };
                acc *= e[i];
            }
        }
        [b.condition_strides, b.x_strides, b.y_strides] = strides;
        Ok(b)
    }

    /// Number of output elements.
    pub const fn output_size(&self) -> usize {
        let d = &self.output_dims;
        d[0] * d[1] * d[2] * d[3] * d[4] * d[5]
    }

    /// Smallest length of an input with these strides (`max index + 1`).
    pub fn span(&self, strides: &[usize; 6]) -> usize {
        1 + (0..6)
            .map(|i| (self.output_dims[i] - 1) * strides[i])
            .sum::<usize>()
    }
}

/// SELECT_V2 of three same-shaped tensors.
pub fn select<T: Copy>(condition: &[u8], x: &[T], y: &[T], output: &mut [T]) {
    debug_assert!(condition.len() == output.len() && x.len() == output.len());
    for (((o, &c), &a), &b) in output.iter_mut().zip(condition).zip(x).zip(y) {
        *o = if c != 0 { a } else { b };
    }
}

/// SELECT_V2 with broadcasting, in row-major output order.
pub fn select_broadcast<T: Copy>(
    b: &Broadcast3,
    condition: &[u8],
    x: &[T],
    y: &[T],
    output: &mut [T],
) {
    debug_assert_eq!(output.len(), b.output_size());
    let d = &b.output_dims;
    let mut idx = [0usize; 6];
    for o in output.iter_mut() {
        let at = |strides: &[usize; 6]| idx.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>();
        let (ic, ix, iy) = (at(&b.condition_strides), at(&b.x_strides), at(&b.y_strides));
        *o = if condition[ic] != 0 { x[ix] } else { y[iy] };
        // Next output coordinate, innermost first.
        for k in (0..6).rev() {
            idx[k] += 1;
            if idx[k] < d[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasts_three_ways() {
        let b = Broadcast3::new(&[2, 1], &[1, 3], &[1]).unwrap();
        assert_eq!(b.output_size(), 6);
        let mut o = [0i8; 6];
        select_broadcast(&b, &[1, 0], &[1, 2, 3], &[-1], &mut o);
        assert_eq!(o, [1, 2, 3, -1, -1, -1]);
        assert!(Broadcast3::new(&[2], &[3], &[1]).is_err());
        let mut f = [0.0f32; 2];
        select(&[0, 1], &[1.0, 2.0], &[3.0, 4.0], &mut f);
        assert_eq!(f, [3.0, 2.0]);
    }
}
