//! MIRROR_PAD: pads each dimension with a mirror image of the input (TFLM's `mirror_pad.cc`,
//! any element type).
//!
//! REFLECT leaves the edge out (`[1, 2, 3]` padded by 2 on both sides is
//! `[3, 2, 1, 2, 3, 2, 1]`), SYMMETRIC repeats it (`[2, 1, 1, 2, 3, 3, 2]`). TFLM maps each
//! output coordinate to an input one in every dimension (`GetInputDimension`); so does
//! [`mirror_pad`]. TFLM does not check the paddings; beyond `dim - 1` (REFLECT) or `dim`
//! (SYMMETRIC) before a dimension it reads outside the input, and beyond that after one it
//! repeats the first element: [`prepare`] refuses both, as TensorFlow Lite does.

use crate::quant::PrepareError;

/// Largest rank [`prepare`] accepts (TFLM's MIRROR_PAD has no limit; models have at most 6).
pub const MAX_DIMS: usize = 6;

/// Constant parameters of a MIRROR_PAD node, right-aligned to [`MAX_DIMS`] dimensions
/// (leading dimensions of extent 1 without padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub input_dims: [usize; MAX_DIMS],
    pub output_dims: [usize; MAX_DIMS],
    /// Padding before each dimension.
    pub left_padding: [usize; MAX_DIMS],
    /// 1 for REFLECT, 0 for SYMMETRIC (TFLM's `offset`).
    pub offset: usize,
}

impl Params {
    /// Elements of the output.
    pub fn output_size(&self) -> usize {
        self.output_dims.iter().product()
    }

    /// Elements of the input.
    pub fn input_size(&self) -> usize {
        self.input_dims.iter().product()
    }
}

/// Reference kernels need no scratch memory (TFLM's two scratch arrays of strides are
/// constants here).
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the input shape (1 to [`MAX_DIMS`] dims), the `[before, after]`
/// padding of each dimension and the mode. Each padding must be at most `dim - 1` (REFLECT)
/// or `dim` (SYMMETRIC).
pub fn prepare(
    input_shape: &[usize],
    paddings: &[[i64; 2]],
    symmetric: bool,
) -> Result<Params, PrepareError> {
    let n = input_shape.len();
    if n == 0 || n > MAX_DIMS || paddings.len() != n {
        return Err(PrepareError::InvalidShape);
    }
    let offset = usize::from(!symmetric);
    let mut p = Params {
        input_dims: [1; MAX_DIMS],
        output_dims: [1; MAX_DIMS],
        left_padding: [0; MAX_DIMS],
        offset,
    };
    for (k, (&d, pad)) in input_shape.iter().zip(paddings).enumerate() {
        let limit = d.checked_sub(offset).ok_or(PrepareError::InvalidShape)?;
        let side = |v: i64| {
            usize::try_from(v)
                .ok()
                .filter(|&v| v <= limit)
                .ok_or(PrepareError::InvalidShape)
        };
        let (l, r) = (side(pad[0])?, side(pad[1])?);
        let j = MAX_DIMS - n + k;
        p.input_dims[j] = d;
        p.left_padding[j] = l;
        p.output_dims[j] = d + l + r;
    }
    Ok(p)
}

/// The input coordinate of output coordinate `o` in a dimension of `n` elements.
fn source(o: usize, left: usize, n: usize, offset: usize) -> usize {
    if o < left {
        left + offset - 1 - o
    } else if o - left >= n {
        // `o - left - n` is below `n - offset` (checked by `prepare`).
        (n - 1 - offset) - (o - left - n)
    } else {
        o - left
    }
}

/// MIRROR_PAD: every output element, in order, is read from its mirrored input coordinate.
pub fn mirror_pad<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(output.len(), p.output_size());
    let mut strides = [1usize; MAX_DIMS];
    for i in (0..MAX_DIMS - 1).rev() {
        strides[i] = strides[i + 1] * p.input_dims[i + 1];
    }
    let last = MAX_DIMS - 1;
    let (n_last, l_last) = (p.input_dims[last], p.left_padding[last]);
    let mut coord = [0usize; MAX_DIMS];
    let rows = output.chunks_exact_mut(p.output_dims[last].max(1));
    for row in rows {
        let base: usize = (0..last)
            .map(|i| source(coord[i], p.left_padding[i], p.input_dims[i], p.offset) * strides[i])
            .sum();
        for (o, y) in row.iter_mut().enumerate() {
            *y = input[base + source(o, l_last, n_last, p.offset)];
        }
        // Next row: increment the outer coordinates.
        for i in (0..last).rev() {
            coord[i] += 1;
            if coord[i] < p.output_dims[i] {
                break;
            }
            coord[i] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflect_and_symmetric() {
        let p = prepare(&[3], &[[2, 2]], false).unwrap();
        let mut o = [0i8; 7];
        mirror_pad(&p, &[1, 2, 3], &mut o);
        assert_eq!(o, [3, 2, 1, 2, 3, 2, 1]);
        let p = prepare(&[3], &[[2, 3]], true).unwrap();
        let mut o = [0i8; 8];
        mirror_pad(&p, &[1, 2, 3], &mut o);
        assert_eq!(o, [2, 1, 1, 2, 3, 3, 2, 1]);
        // 2-D reflect: [[1, 2], [3, 4]] padded by 1 before both dims.
        let p = prepare(&[2, 2], &[[1, 0], [1, 0]], false).unwrap();
        let mut o = [0f32; 9];
        mirror_pad(&p, &[1.0, 2.0, 3.0, 4.0], &mut o);
        assert_eq!(o, [4.0, 3.0, 4.0, 2.0, 1.0, 2.0, 4.0, 3.0, 4.0]);
    }

    #[test]
    fn refuses_paddings_beyond_the_mirror() {
        assert!(prepare(&[3], &[[3, 0]], false).is_err());
        assert!(prepare(&[3], &[[0, 3]], false).is_err());
        assert!(prepare(&[3], &[[3, 3]], true).is_ok());
        assert!(prepare(&[3], &[[4, 0]], true).is_err());
        assert!(prepare(&[3], &[[-1, 0]], true).is_err());
        assert!(prepare(&[1; 7], &[[0, 0]; 7], true).is_err());
    }
}
