//! BROADCAST_TO: repeats a tensor along its dimensions of extent 1 (and new leading ones) to
//! a larger shape (`reference_ops::BroadcastTo`, any element type, at most 5 dimensions as
//! TFLM).

use crate::quant::PrepareError;

/// Largest rank TFLM's BROADCAST_TO accepts.
pub const MAX_DIMS: usize = 5;

/// Constant parameters of a BROADCAST_TO node, right-aligned to [`MAX_DIMS`] dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Output extents, outermost first.
    pub output_dims: [usize; MAX_DIMS],
    /// Input element stride of each output dimension (0 where the input's extent is 1).
    pub input_strides: [usize; MAX_DIMS],
    /// Elements of the input.
    pub input_size: usize,
}

impl Params {
    /// Elements of the output.
    pub fn output_size(&self) -> usize {
        self.output_dims.iter().product()
    }
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the input shape and the target shape (TFLM's
/// `ValidateOutputTensor`): the target has at most [`MAX_DIMS`] dimensions and at least as
/// many as the input, and each input dimension (right-aligned) is 1 or the target's.
pub fn prepare(input: &[usize], target: &[usize]) -> Result<Params, PrepareError> {
    let (n, m) = (input.len(), target.len());
    if m > MAX_DIMS || n > m {
        return Err(PrepareError::InvalidShape);
    }
    let mut p = Params {
        output_dims: [1; MAX_DIMS],
        input_strides: [0; MAX_DIMS],
        input_size: input.iter().product(),
    };
    let mut stride = 1;
    for k in (0..m).rev() {
        let j = MAX_DIMS - m + k;
        p.output_dims[j] = target[k];
        if let Some(i) = (k + n).checked_sub(m) {
            let d = input[i];
            if d != 1 && d != target[k] {
                return Err(PrepareError::InvalidShape);
            }
            p.input_strides[j] = if d == 1 { 0 } else { stride };
            stride *= d;
        }
    }
    Ok(p)
}

/// BROADCAST_TO: `output` in row-major order, each element read through `input_strides`.
pub fn broadcast_to<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    debug_assert_eq!(input.len(), p.input_size);
    debug_assert_eq!(output.len(), p.output_size());
    let [d0, d1, d2, d3, d4] = p.output_dims;
    let [s0, s1, s2, s3, s4] = p.input_strides;
    let mut out = output.iter_mut();
    for i0 in 0..d0 {
        for i1 in 0..d1 {
            for i2 in 0..d2 {
                for i3 in 0..d3 {
                    let b = i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3;
                    for i4 in 0..d4 {
                        let Some(o) = out.next() else { return };
                        *o = input[b + i4 * s4];
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasts() {
        let p = prepare(&[3], &[2, 3]).unwrap();
        let mut o = [0i8; 6];
        broadcast_to(&p, &[1, 2, 3], &mut o);
        assert_eq!(o, [1, 2, 3, 1, 2, 3]);
        let p = prepare(&[2, 1], &[2, 3]).unwrap();
        broadcast_to(&p, &[1, 2], &mut o);
        assert_eq!(o, [1, 1, 1, 2, 2, 2]);
        assert!(prepare(&[2], &[3]).is_err());
        assert!(prepare(&[1, 2], &[2]).is_err());
        assert!(prepare(&[1], &[1, 1, 1, 1, 1, 1]).is_err());
    }
}
