//! CONCATENATION: joins tensors along one axis by copying (`reference_ops::Concatenation`).
//!
//! For int8 TFLM requires every input to share the output's scale and zero point, so the
//! kernel is a pure copy for any element type.

use crate::quant::{PrepareError, QuantParams};

/// Constant parameters of a CONCATENATION node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Product of the output dims before the concatenation axis.
    pub outer_size: usize,
    /// Product of the output dims from the axis on (elements per outer step).
    pub output_inner_size: usize,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the output shape and the (non-negative) axis.
pub fn prepare(output_shape: &[usize], axis: usize) -> Result<Params, PrepareError> {
    if axis >= output_shape.len() {
        return Err(PrepareError::InvalidShape);
    }
    Ok(Params {
        outer_size: output_shape[..axis].iter().product(),
        output_inner_size: output_shape[axis..].iter().product(),
    })
}

/// Checks TFLM's int8 requirement that all inputs share the output's quantization.
pub fn check_quantization_s8(
    inputs: &[QuantParams],
    output: QuantParams,
) -> Result<(), PrepareError> {
    if inputs
        .iter()
        .all(|q| q.scale == output.scale && q.zero_point == output.zero_point)
    {
        Ok(())
    } else {
        Err(PrepareError::UnsupportedQuantization)
    }
}

/// Concatenates `inputs` (each `outer_size * copy_size_i` long) into `output`: for each outer
/// index, each input's next `copy_size_i` elements are copied in input order.
///
/// Input by input (the same bytes land in the same places): each input's run length is
/// found once, and its runs go every `output_inner_size` elements.
pub fn concatenation<T: Copy>(p: &Params, inputs: &[&[T]], output: &mut [T]) {
    debug_assert_eq!(output.len(), p.outer_size * p.output_inner_size);
    debug_assert_eq!(inputs.iter().map(|i| i.len()).sum::<usize>(), output.len());
    let (outer, row) = (p.outer_size, p.output_inner_size);
    if outer == 0 || row == 0 {
        return;
    }
    let mut pos = 0;
    for input in inputs {
        let copy = if outer == 1 {
            input.len()
        } else {
            crate::util::div_usize(input.len(), outer)
        };
        if copy == 0 {
            continue;
        }
        let (mut src, mut at) = (*input, pos);
        for _ in 0..outer {
            let (Some((s, rest)), Some(d)) =
                (src.split_at_checked(copy), output.get_mut(at..at + copy))
            else {
                return;
            };
            if size_of::<T>() >= 4 {
                // Runs of wide elements are short in elements (a few channels): fixed-size
                // copies. (Known at compile time: the byte instance keeps its loop.)
                crate::util::copy_run(d, s);
            } else if copy <= 4 {
                for (o, x) in d.iter_mut().zip(s) {
                    *o = *x;
                }
            } else {
                d.copy_from_slice(s);
            }
            src = rest;
            at += row;
        }
        pos += copy;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concat_axis1() {
        let p = prepare(&[2, 5], 1).unwrap();
        let a = [1i8, 2, 3, 4];
        let b = [5i8, 6, 7, 8, 9, 10];
        let mut out = [0i8; 10];
        concatenation(&p, &[&a, &b], &mut out);
        assert_eq!(out, [1, 2, 5, 6, 7, 3, 4, 8, 9, 10]);
        let p = prepare(&[4, 1], 0).unwrap();
        let mut f = [0f32; 4];
        concatenation(&p, &[&[1.0f32][..], &[2.0, 3.0, 4.0][..]], &mut f);
        assert_eq!(f, [1.0, 2.0, 3.0, 4.0]);
        let q = QuantParams {
            scale: 0.1,
            zero_point: 1,
        };
        assert!(check_quantization_s8(&[q, q], q).is_ok());
        assert!(
            check_quantization_s8(
                &[
                    q,
                    QuantParams {
                        scale: 0.2,
                        zero_point: 1
                    }
                ],
                q
            )
            .is_err()
        );
    }
}
