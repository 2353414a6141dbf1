//! DEQUANTIZE: int8 and int16 -> float (`reference_ops::Dequantize`, the two input types
//! TFLM's `DequantizePrepare` accepts): `output = scale * (float)(x - zero_point)` in `f32`.
//! TFLM multiplies in `double` and rounds to `float`; for int8 and int16 inputs the `double`
//! product of a `float` scale and an integer of at most 17 bits is exact, so rounding it once
//! gives the `f32` product.

use crate::quant::{PrepareError, QuantParams};

/// Constant parameters of a DEQUANTIZE node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Input scale.
    pub scale: f32,
    /// Input zero point.
    pub zero_point: i32,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters of an int8 -> float DEQUANTIZE.
pub fn prepare_s8_f32(input: QuantParams) -> Result<Params, PrepareError> {
    Ok(Params {
        scale: input.scale,
        zero_point: input.zero_point,
    })
}

/// Int8 -> float DEQUANTIZE.
pub fn dequantize_s8_f32(p: &Params, input: &[i8], output: &mut [f32]) {
    debug_assert_eq!(input.len(), output.len());
    for (o, &x) in output.iter_mut().zip(input) {
        *o = p.scale * (x as i32 - p.zero_point) as f32;
    }
}

/// Build-time parameters of an int16 -> float DEQUANTIZE.
pub fn prepare_s16_f32(input: QuantParams) -> Result<Params, PrepareError> {
    prepare_s8_f32(input)
}

/// Int16 -> float DEQUANTIZE.
pub fn dequantize_s16_f32(p: &Params, input: &[i16], output: &mut [f32]) {
    debug_assert_eq!(input.len(), output.len());
    for (o, &x) in output.iter_mut().zip(input) {
        *o = p.scale * (x as i32 - p.zero_point) as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dequantizes() {
        let p = prepare_s8_f32(QuantParams {
            scale: 0.5,
            zero_point: -3,
        })
        .unwrap();
        let mut out = [0f32; 3];
        dequantize_s8_f32(&p, &[-3, 0, 127], &mut out);
        assert_eq!(out, [0.0, 1.5, 65.0]);
    }
}
