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

/// Layers of at least this many elements take [`dequantize_s8_f32_table`]: its table has
/// 256 entries (1 KiB of flash), worth it once the layer converts at least as many
/// elements as the table holds.
pub const TABLE_FROM_ELEMENTS: usize = 256;

/// The float of every int8 input, as bits, indexed by the input byte (`table[x as u8]`):
/// [`dequantize_s8_f32`] run on all 256 inputs at build time.
pub fn table_s8_f32(p: &Params) -> [u32; 256] {
    let mut input = [0i8; 256];
    for (i, x) in input.iter_mut().enumerate() {
        *x = i as u8 as i8;
    }
    let mut floats = [0f32; 256];
    dequantize_s8_f32(p, &input, &mut floats);
    floats.map(f32::to_bits)
}

/// Int8 -> float DEQUANTIZE through the build-time [`table_s8_f32`]: bit-identical with
/// [`dequantize_s8_f32`], one load per element (four elements per loop step, written out
/// so that every opt-level runs them without the loop's overhead each).
pub fn dequantize_s8_f32_table(table: &[u32; 256], input: &[i8], output: &mut [f32]) {
    debug_assert_eq!(input.len(), output.len());
    let at = |x: i8| f32::from_bits(table[x as u8 as usize]);
    let mut quads_in = input.chunks_exact(4);
    let mut quads_out = output.chunks_exact_mut(4);
    for (o, i) in (&mut quads_out).zip(&mut quads_in) {
        (o[0], o[1], o[2], o[3]) = (at(i[0]), at(i[1]), at(i[2]), at(i[3]));
    }
    for (o, &x) in quads_out
        .into_remainder()
        .iter_mut()
        .zip(quads_in.remainder())
    {
        *o = at(x);
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
        // The table gives the arithmetic's floats, bit for bit, for every input.
        let p = prepare_s8_f32(QuantParams {
            scale: 0.0123,
            zero_point: 17,
        })
        .unwrap();
        let xs: [i8; 256] = core::array::from_fn(|i| (i as i32 - 128) as i8);
        let (mut want, mut got) = ([0f32; 256], [0f32; 256]);
        dequantize_s8_f32(&p, &xs, &mut want);
        dequantize_s8_f32_table(&table_s8_f32(&p), &xs, &mut got);
        assert_eq!(got.map(f32::to_bits), want.map(f32::to_bits));
        // A length that leaves three elements after the groups of four.
        let mut odd = [0f32; 255];
        dequantize_s8_f32_table(&table_s8_f32(&p), &xs[1..], &mut odd);
        assert_eq!(odd.map(f32::to_bits)[..], want.map(f32::to_bits)[1..]);
    }
}
