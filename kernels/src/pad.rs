//! PAD / PADV2: copies the input into the middle of a larger output filled with a constant
//! (`reference_ops::PadImpl`, shapes right-aligned and extended to 5-D).
//!
//! TFLM pads int8 tensors with the output zero point unless a constant value is given (PADV2),
//! and float tensors with `0.0`; the caller passes that value.

use crate::quant::PrepareError;

/// Constant parameters of a PAD node. Fields are `[usize; 5]` arrays (outermost first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Input shape extended to 5-D.
    pub input_dims: [usize; 5],
    /// Padding before each dimension.
    pub left_padding: [usize; 5],
    /// Output shape extended to 5-D.
    pub output_dims: [usize; 5],
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the input shape (at most 5 dims) and the `[before, after]`
/// padding of each of its dims.
pub fn prepare(input_shape: &[usize], paddings: &[[usize; 2]]) -> Result<Params, PrepareError> {
    let n = input_shape.len();
    if n > 5 || paddings.len() != n {
        return Err(PrepareError::InvalidShape);
    }
    let mut p = Params {
        input_dims: [1; 5],
        left_padding: [0; 5],
        output_dims: [1; 5],
    };
    for (k, (&d, pad)) in input_shape.iter().zip(paddings).enumerate() {
        let j = 5 - n + k;
        p.input_dims[j] = d;
        p.left_padding[j] = pad[0];
        p.output_dims[j] = d + pad[0] + pad[1];
    }
    Ok(p)
}

/// Pads `input` into `output` with `pad_value` (any element type).
pub fn pad<T: Copy>(p: &Params, input: &[T], pad_value: T, output: &mut [T]) {
    debug_assert_eq!(input.len(), p.input_dims.iter().product::<usize>());
    debug_assert_eq!(output.len(), p.output_dims.iter().product::<usize>());
    output.fill(pad_value);
    let [_, i1, i2, i3, i4] = p.input_dims;
    let [_, o1, o2, o3, o4] = p.output_dims;
    let [l0, l1, l2, l3, l4] = p.left_padding;
    if i4 == 0 {
        return;
    }
    // Copy each innermost input row to its place in the output.
    for (r, row) in input.chunks_exact(i4).enumerate() {
        let mut rem = r;
        let c3 = rem % i3.max(1);
        rem /= i3.max(1);
        let c2 = rem % i2.max(1);
        rem /= i2.max(1);
        let c1 = rem % i1.max(1);
        let c0 = rem / i1.max(1);
        let start = ((((c0 + l0) * o1 + c1 + l1) * o2 + c2 + l2) * o3 + c3 + l3) * o4 + l4;
        output[start..start + i4].copy_from_slice(row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_2d_and_4d() {
        let p = prepare(&[2, 2], &[[1, 0], [0, 2]]).unwrap();
        let mut out = [9i8; 12];
        pad(&p, &[1, 2, 3, 4], -5, &mut out);
        assert_eq!(out, [-5, -5, -5, -5, 1, 2, -5, -5, 3, 4, -5, -5]);
        let p = prepare(&[1, 1, 2, 1], &[[0, 0], [1, 1], [0, 0], [1, 0]]).unwrap();
        let mut f = [9f32; 12];
        pad(&p, &[1.0, 2.0], 0.0, &mut f);
        assert_eq!(
            f,
            [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0]
        );
    }
}
