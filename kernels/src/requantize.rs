//! QUANTIZE between integer types involving int16 or int32 (16x8 models): int16 -> int8,
//! int8 -> int16, int16 -> int16, int16/int8 -> int32 and int32 -> int8/int16; and between
//! int8 and uint8 (int8 -> uint8, uint8 -> int8, e.g. a uint8 image into an int8 model).
//!
//! TFLM's `quantize_common.cc` runs `reference_ops::Requantize` for every integer pair:
//! `clamp(MultiplyByQuantizedMultiplier(x - input_zero_point, m, shift) + output_zero_point)`
//! with `QuantizeMultiplier(double(input_scale) / double(output_scale))` — the same
//! parameters as the int8 -> int8 case, so this module reuses [`crate::quantize::Params`]
//! and its computation. Between int8 and uint8 with equal scales and zero points 128
//! apart, TFLM flips the top bit instead; the general path gives the same values there
//! (the multiplier is exactly 1), so there is one path here.

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::quant::{PrepareError, QuantParams};
pub use crate::quantize::Params;
use crate::util::{map, map_in_place};

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters of an integer requantization (`PrepareQuantizeReference`): the
/// multiplier of `input_scale / output_scale` and both zero points (identical to
/// [`crate::quantize::prepare_s8_s8`]).
pub fn prepare(input: QuantParams, output: QuantParams) -> Result<Params, PrepareError> {
    crate::quantize::prepare_s8_s8(input, output)
}

/// The element function of the requantization kernels on a widened input, clamped to
/// `lo..=hi` (the output type's range).
#[inline(always)]
pub(crate) fn requantize_op(p: &Params, x: i32, lo: i32, hi: i32) -> i32 {
    multiply_by_quantized_multiplier(
        x.wrapping_sub(p.input_zero_point),
        p.requantize_multiplier,
        p.requantize_shift,
    )
    .wrapping_add(p.output_zero_point)
    .clamp(lo, hi)
}

/// Int16 -> int8 (`Requantize<int16_t, int8_t>`).
pub fn requantize_s16_s8(p: &Params, input: &[i16], output: &mut [i8]) {
    map(input, output, |x| {
        requantize_op(p, x as i32, i8::MIN as i32, i8::MAX as i32) as i8
    });
}

/// Int8 -> int16 (`Requantize<int8_t, int16_t>`).
pub fn requantize_s8_s16(p: &Params, input: &[i8], output: &mut [i16]) {
    map(input, output, |x| {
        requantize_op(p, x as i32, i16::MIN as i32, i16::MAX as i32) as i16
    });
}

/// The element function of the int16 -> int16 requantization kernels.
#[inline(always)]
fn requantize_s16_s16_op(p: &Params, x: i16) -> i16 {
    requantize_op(p, x as i32, i16::MIN as i32, i16::MAX as i32) as i16
}

/// Int16 -> int16 (`Requantize<int16_t, int16_t>`).
pub fn requantize_s16_s16(p: &Params, input: &[i16], output: &mut [i16]) {
    map(input, output, |x| requantize_s16_s16_op(p, x));
}

/// [`requantize_s16_s16`] with the output overwriting the input (`data` holds the input and
/// receives the output); byte-identical with [`requantize_s16_s16`].
pub fn requantize_s16_s16_in_place(p: &Params, data: &mut [i16]) {
    map_in_place(data, |x| requantize_s16_s16_op(p, x));
}

/// Int16 -> int32 (`Requantize<int16_t, int32_t>`), as the keyword benchmark model ends.
pub fn requantize_s16_s32(p: &Params, input: &[i16], output: &mut [i32]) {
    map(input, output, |x| {
        requantize_op(p, x as i32, i32::MIN, i32::MAX)
    });
}

/// Int8 -> int32 (`Requantize<int8_t, int32_t>`).
pub fn requantize_s8_s32(p: &Params, input: &[i8], output: &mut [i32]) {
    map(input, output, |x| {
        requantize_op(p, x as i32, i32::MIN, i32::MAX)
    });
}

/// Int32 -> int8 (`Requantize<int32_t, int8_t>`; `x - input_zero_point` wraps as in
/// practice in the C++).
pub fn requantize_s32_s8(p: &Params, input: &[i32], output: &mut [i8]) {
    map(input, output, |x| {
        requantize_op(p, x, i8::MIN as i32, i8::MAX as i32) as i8
    });
}

/// Int32 -> int16 (`Requantize<int32_t, int16_t>`).
pub fn requantize_s32_s16(p: &Params, input: &[i32], output: &mut [i16]) {
    map(input, output, |x| {
        requantize_op(p, x, i16::MIN as i32, i16::MAX as i32) as i16
    });
}

/// Whether the requantization is TFLM's "shift by 128" case: multiplier exactly 1 and the
/// zero points `output - input = diff` apart. The general path gives the same values there;
/// flipping the top bit is only faster (TFLM's `Requantize` does that too).
pub(crate) fn flips(p: &Params, diff: i32) -> bool {
    p.requantize_multiplier == 1 << 30
        && p.requantize_shift == 1
        && p.output_zero_point.wrapping_sub(p.input_zero_point) == diff
}

/// `output[i] = input[i] ^ 0x80` between the byte types: four bytes per 32-bit word (one
/// load, one XOR, one store where the target takes unaligned words), the last
/// `len % 4` one at a time.
#[inline(always)]
fn flip_top_bits<T: Copy, U>(
    input: &[T],
    output: &mut [U],
    to_u8: impl Fn(T) -> u8,
    from_u8: impl Fn(u8) -> U,
) {
    debug_assert_eq!(input.len(), output.len());
    let mut words_in = input.chunks_exact(4);
    let mut words_out = output.chunks_exact_mut(4);
    for (o, i) in (&mut words_out).zip(&mut words_in) {
        let w = u32::from_le_bytes([to_u8(i[0]), to_u8(i[1]), to_u8(i[2]), to_u8(i[3])]);
        let [b0, b1, b2, b3] = (w ^ 0x8080_8080).to_le_bytes();
        (o[0], o[1], o[2], o[3]) = (from_u8(b0), from_u8(b1), from_u8(b2), from_u8(b3));
    }
    for (o, &i) in words_out
        .into_remainder()
        .iter_mut()
        .zip(words_in.remainder())
    {
        *o = from_u8(to_u8(i) ^ 0x80);
    }
}

/// Int8 -> uint8 (`Requantize<int8_t, uint8_t>`).
pub fn requantize_s8_u8(p: &Params, input: &[i8], output: &mut [u8]) {
    if flips(p, 128) {
        flip_top_bits(input, output, |x| x as u8, |b| b);
        return;
    }
    map(input, output, |x| {
        requantize_op(p, x as i32, u8::MIN as i32, u8::MAX as i32) as u8
    });
}

/// Uint8 -> int8 (`Requantize<uint8_t, int8_t>`).
pub fn requantize_u8_s8(p: &Params, input: &[u8], output: &mut [i8]) {
    if flips(p, -128) {
        flip_top_bits(input, output, |x| x, |b| b as i8);
        return;
    }
    map(input, output, |x| {
        requantize_op(p, x as i32, i8::MIN as i32, i8::MAX as i32) as i8
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p_flip_s8_u8() -> Params {
        let p = prepare(q(0.1, -5), q(0.1, 123)).unwrap();
        assert!(flips(&p, 128), "{p:?}");
        p
    }

    fn q(scale: f32, zero_point: i32) -> QuantParams {
        QuantParams { scale, zero_point }
    }

    #[test]
    fn int16_int8_round_trip() {
        let p = prepare(q(1.0 / 32768.0, 0), q(1.0 / 128.0, -3)).unwrap();
        let mut o8 = [0i8; 5];
        requantize_s16_s8(&p, &[0, 256, -256, 32767, -32768], &mut o8);
        assert_eq!(o8, [-3, -2, -4, 125, -128]);
        let p = prepare(q(1.0 / 128.0, -3), q(1.0 / 32768.0, 0)).unwrap();
        let mut o16 = [0i16; 3];
        requantize_s8_s16(&p, &[-3, -2, 127], &mut o16);
        assert_eq!(o16, [0, 256, 32767]);
        let p = prepare(q(0.5, 0), q(0.25, 0)).unwrap();
        requantize_s16_s16(&p, &[1, -20000, 20000], &mut o16);
        assert_eq!(o16, [2, -32768, 32767]);
    }

    #[test]
    fn int8_uint8_shift_by_128_is_the_bit_flip() {
        let p = prepare(q(0.1, -5), q(0.1, 123)).unwrap();
        let input: [i8; 6] = [-128, -5, -1, 0, 4, 127];
        let mut out = [0u8; 6];
        requantize_s8_u8(&p, &input, &mut out);
        assert_eq!(out, input.map(|x| x as u8 ^ 0x80));
        let p = prepare(q(0.1, 123), q(0.1, -5)).unwrap();
        let mut back = [0i8; 6];
        requantize_u8_s8(&p, &out, &mut back);
        assert_eq!(back, input);
        // The bit flip is the general path on every value.
        let all: [i8; 256] = core::array::from_fn(|i| i as u8 as i8);
        let (mut flipped, mut general) = ([0u8; 256], [0u8; 256]);
        requantize_s8_u8(&p_flip_s8_u8(), &all, &mut flipped);
        let p = p_flip_s8_u8();
        map(&all, &mut general, |x| {
            requantize_op(&p, x as i32, 0, 255) as u8
        });
        assert_eq!(flipped, general);
        let (mut back, mut general) = ([0i8; 256], [0i8; 256]);
        let p = prepare(q(0.1, 123), q(0.1, -5)).unwrap();
        assert!(flips(&p, -128));
        requantize_u8_s8(&p, &flipped, &mut back);
        map(&flipped, &mut general, |x| {
            requantize_op(&p, x as i32, -128, 127) as i8
        });
        assert_eq!(back, general);
        assert_eq!(back, all);
        // Lengths that leave 1 to 3 bytes after the words.
        for n in [1, 2, 3, 5, 250, 255] {
            let (mut got, mut want) = ([0i8; 256], [0i8; 256]);
            requantize_u8_s8(&p, &flipped[..n], &mut got[..n]);
            map(&flipped[..n], &mut want[..n], |x| {
                requantize_op(&p, x as i32, -128, 127) as i8
            });
            assert_eq!(got, want, "{n}");
            let (mut got, mut want) = ([0u8; 256], [0u8; 256]);
            let pf = p_flip_s8_u8();
            requantize_s8_u8(&pf, &all[..n], &mut got[..n]);
            map(&all[..n], &mut want[..n], |x| {
                requantize_op(&pf, x as i32, 0, 255) as u8
            });
            assert_eq!(got, want, "{n}");
        }
        // A coarser output saturates at both ends of uint8.
        let p = prepare(q(1.0, 0), q(0.5, 128)).unwrap();
        requantize_s8_u8(&p, &[-128, -64, 0, 63, 64, 127], &mut out);
        assert_eq!(out, [0, 0, 128, 254, 255, 255]);
    }
}
