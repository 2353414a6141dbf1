//! ADD_N: the elementwise sum of two or more same-shaped tensors (no broadcasting).
//!
//! Follows TFLM's `add_n.cc` and `reference_ops::AddN`: float32 sums from `0.0` in input
//! order (`x = 0; x += in_j[i]`, so all `-0.0` inputs give `+0.0`); int8 (all inputs with one
//! quantization) rescales each input as ADD does (`(q - zp) << 20` times the multiplier of
//! `0.5`), adds them to a start value that TFLM takes as the rescaled *input offset*
//! (`-zero_point`, not 0 as its comment says; repeated here), then requantizes with
//! `2 * s_in / (2^20 * s_out)`, clamped to int8.

use crate::fixed_point::multiply_by_quantized_multiplier_smaller_than_one_exp as mul_exp;
use crate::quant::{PrepareError, QuantParams, quantize_multiplier_smaller_than_one_exp};

/// TFLM's `kAddNIntegerShift`.
pub const LEFT_SHIFT: i32 = 20;

/// Constant parameters of an int8 ADD_N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub input_offset: i32,
    pub output_offset: i32,
    pub left_shift: i32,
    pub input_multiplier: i32,
    pub input_shift: i32,
    pub output_multiplier: i32,
    pub output_shift: i32,
}

/// The kernels need no scratch memory (TFLM's scratch holds the input pointers).
pub const fn scratch_bytes() -> usize {
    0
}

/// `CalculateOpData` for int8 (inputs' common quantization `input`).
pub fn prepare_s8(input: QuantParams, output: QuantParams) -> Result<Params, PrepareError> {
    let twice_max = 2.0 * input.scale as f64;
    let real_input = input.scale as f64 / twice_max;
    let real_output = twice_max / ((1i32 << LEFT_SHIFT) as f64 * output.scale as f64);
    let (input_multiplier, input_shift) = quantize_multiplier_smaller_than_one_exp(real_input)?;
    let (output_multiplier, output_shift) = quantize_multiplier_smaller_than_one_exp(real_output)?;
    Ok(Params {
        input_offset: input.zero_point.wrapping_neg(),
        output_offset: output.zero_point,
        left_shift: LEFT_SHIFT,
        input_multiplier,
        input_shift,
        output_multiplier,
        output_shift,
    })
}

/// Float ADD_N: `output[i] = 0 + inputs[0][i] + inputs[1][i] + ...`.
///
/// One pass over the output per input (the same additions in the same order per element as
/// TFLM's loop, which runs over the inputs inside; this order lets the passes vectorize).
pub fn add_n_f32(inputs: &[&[f32]], output: &mut [f32]) {
    debug_assert!(inputs.iter().all(|x| x.len() == output.len()));
    let Some((first, rest)) = inputs.split_first() else {
        output.fill(0.0);
        return;
    };
    for (o, &a) in output.iter_mut().zip(first.iter()) {
        *o = 0.0 + a;
    }
    for input in rest {
        for (o, &a) in output.iter_mut().zip(input.iter()) {
            *o += a;
        }
    }
}

/// Int8 ADD_N.
pub fn add_n_s8(p: &Params, inputs: &[&[i8]], output: &mut [i8]) {
    debug_assert!(inputs.iter().all(|x| x.len() == output.len()));
    let scale = |v: i32| {
        mul_exp(
            v.wrapping_mul(1i32 << p.left_shift),
            p.input_multiplier,
            p.input_shift,
        )
    };
    let start = scale(p.input_offset);
    for (i, o) in output.iter_mut().enumerate() {
        let mut acc = start;
        for input in inputs {
            acc = acc.wrapping_add(scale(p.input_offset.wrapping_add(input[i] as i32)));
        }
        let raw = mul_exp(acc, p.output_multiplier, p.output_shift).wrapping_add(p.output_offset);
        *o = raw.clamp(i8::MIN as i32, i8::MAX as i32) as i8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums() {
        let mut o = [9.0f32; 2];
        add_n_f32(&[&[1.0, -0.0], &[2.0, -0.0], &[0.5, -0.0]], &mut o);
        assert_eq!(o, [3.5, 0.0]);
        assert!(o[1].is_sign_positive());
        let q = QuantParams {
            scale: 0.5,
            zero_point: 0,
        };
        let p = prepare_s8(q, q).unwrap();
        let mut o8 = [0i8; 2];
        add_n_s8(&p, &[&[1, 100], &[2, 100], &[3, -10]], &mut o8);
        assert_eq!(o8, [6, 127]);
    }
}
