//! QUANTIZE: float -> int8 and float -> int16 (`reference_ops::AffineQuantize`) and int8 -> int8 requantization
//! (`reference_ops::Requantize`), as TFLM's `quantize_common.cc` dispatches them.
//!
//! The narrowing ones (float -> int8 and int16, and [`crate::requantize`]'s int16 -> int8,
//! int32 -> int8 and int32 -> int16) also run in place, over one arena region holding the
//! input, writing the output front to back over its start (`*_in_place`): byte-identical
//! with the ordinary kernels, which they call on one element at a time.

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::quant::{PrepareError, QuantParams, ShiftRange, quantize_multiplier};
use crate::requantize::requantize_op;
use crate::util::{map, map_in_place};

/// Constant parameters of a QUANTIZE node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Output scale (float -> int8).
    pub output_scale: f32,
    /// Output zero point.
    pub output_zero_point: i32,
    /// Input zero point (int8 -> int8).
    pub input_zero_point: i32,
    /// Q31 multiplier of `input_scale / output_scale` (int8 -> int8).
    pub requantize_multiplier: i32,
    /// Exponent of `requantize_multiplier`.
    pub requantize_shift: i32,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters of a float -> int8 QUANTIZE.
pub fn prepare_f32_s8(output: QuantParams) -> Result<Params, PrepareError> {
    Ok(Params {
        output_scale: output.scale,
        output_zero_point: output.zero_point,
        input_zero_point: 0,
        requantize_multiplier: 0,
        requantize_shift: 0,
    })
}

/// Build-time parameters of an int8 -> int8 QUANTIZE (requantization with
/// `QuantizeMultiplier(double(input_scale) / double(output_scale))`).
pub fn prepare_s8_s8(input: QuantParams, output: QuantParams) -> Result<Params, PrepareError> {
    let (requantize_multiplier, requantize_shift) =
        quantize_multiplier(input.scale as f64 / output.scale as f64, ShiftRange::I32)?;
    Ok(Params {
        output_scale: output.scale,
        output_zero_point: output.zero_point,
        input_zero_point: input.zero_point,
        requantize_multiplier,
        requantize_shift,
    })
}

/// Float -> int8 (`AffineQuantize`): `clamp((int)roundf(x / scale) + zero_point)`.
///
/// `x / scale` beyond the `i32` range (or NaN) is undefined behaviour in the C++; here it
/// saturates (NaN gives the zero point), which is what ARM's conversion instruction does.
/// The rounding is `round_to_i32` (as in [`quantize_f32_s16`]).
pub fn quantize_f32_s8(p: &Params, input: &[f32], output: &mut [i8]) {
    debug_assert_eq!(input.len(), output.len());
    for (o, &x) in output.iter_mut().zip(input) {
        *o = quantize_f32_s8_op(p, x);
    }
}

/// The element function of [`quantize_f32_s8`].
#[inline(always)]
fn quantize_f32_s8_op(p: &Params, x: f32) -> i8 {
    let unclamped = round_to_i32(x / p.output_scale).wrapping_add(p.output_zero_point);
    unclamped.clamp(i8::MIN as i32, i8::MAX as i32) as i8
}

/// Build-time parameters of a float -> int16 QUANTIZE (those of [`prepare_f32_s8`]).
pub fn prepare_f32_s16(output: QuantParams) -> Result<Params, PrepareError> {
    prepare_f32_s8(output)
}

/// Float -> int16 (`AffineQuantize<float, int16_t>`): as [`quantize_f32_s8`], clamped to the
/// int16 range.
///
/// The rounding is `round_to_i32`, the same integers as `round_f32(x / scale) as i32`
/// without branches, so the loop runs on vectors where the target has them.
pub fn quantize_f32_s16(p: &Params, input: &[f32], output: &mut [i16]) {
    debug_assert_eq!(input.len(), output.len());
    for (o, &x) in output.iter_mut().zip(input) {
        *o = quantize_f32_s16_op(p, x);
    }
}

/// The element function of [`quantize_f32_s16`].
#[inline(always)]
fn quantize_f32_s16_op(p: &Params, x: f32) -> i16 {
    let unclamped = round_to_i32(x / p.output_scale).wrapping_add(p.output_zero_point);
    unclamped.clamp(i16::MIN as i32, i16::MAX as i32) as i16
}

/// `round_f32(v) as i32` (half away from zero, saturating, NaN to 0) without branches.
///
/// `t = v as i32` truncates (saturating, NaN to 0); `f = v - t` is then exact: the fraction
/// for `|v| < 2^23`, 0 for the integral floats up to `2^31`, and for a saturated `t` a value
/// of `v`'s sign that must not move it. `t` steps one away from zero when `|f| >= 0.5`, as
/// `round_f32` does, saturating (`QADD`/`QSUB` with the DSP extension): `i32::MAX` is
/// reached only by saturation (the float below `2^31` is `2^31 - 128`) with `f >= 0`, and
/// `i32::MIN` only as `-2^31` exactly (`f = 0`) or by saturation (`f < 0`).
#[inline(always)]
fn round_to_i32(v: f32) -> i32 {
    let t = v as i32;
    let f = v - t as f32;
    t.saturating_add((f >= 0.5) as i32)
        .saturating_sub((f <= -0.5) as i32)
}

/// The element function of the int8 -> int8 requantization kernels.
#[inline(always)]
fn requantize_s8_s8_op(p: &Params, x: i8) -> i8 {
    let v = multiply_by_quantized_multiplier(
        x as i32 - p.input_zero_point,
        p.requantize_multiplier,
        p.requantize_shift,
    )
    .wrapping_add(p.output_zero_point);
    v.clamp(i8::MIN as i32, i8::MAX as i32) as i8
}

/// Int8 -> int8 (`Requantize`):
/// `clamp(MultiplyByQuantizedMultiplier(x - input_zp, m, shift) + output_zp)`.
pub fn requantize_s8_s8(p: &Params, input: &[i8], output: &mut [i8]) {
    map(input, output, |x| requantize_s8_s8_op(p, x));
}

/// [`requantize_s8_s8`] with the output overwriting the input (`data` holds the input and
/// receives the output); byte-identical with [`requantize_s8_s8`].
pub fn requantize_s8_s8_in_place(p: &Params, data: &mut [i8]) {
    map_in_place(data, |x| requantize_s8_s8_op(p, x));
}

/// An element type the narrowing in-place kernels read and write as native-endian bytes
/// (the arena's byte views are native-endian too).
trait Element: Copy + Default {
    const SIZE: usize;
    fn read(bytes: &[u8]) -> Self;
    fn write(self, bytes: &mut [u8]);
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            #[inline(always)]
            fn read(bytes: &[u8]) -> Self {
                bytes.try_into().map(<$t>::from_ne_bytes).unwrap_or_default()
            }
            #[inline(always)]
            fn write(self, bytes: &mut [u8]) {
                for (b, v) in bytes.iter_mut().zip(self.to_ne_bytes()) {
                    *b = v;
                }
            }
        }
    )*};
}
element!(f32, i32, i16, i8, u8);

/// Runs the elementwise `op` (`I` -> `O`) in place: `data` holds its input from byte
/// `input_at` to its end, and receives its output from byte `output_at`, front to back,
/// four elements per step (the four read, then their outputs written; written out so that
/// opt-level s runs them unrolled), then the rest one by one.
///
/// Correct when `O` is no wider than `I` and `output_at <= input_at + (size(I) - size(O))`:
/// output element `i` then ends at or before input element `i + 1` starts, so it covers
/// only bytes of input elements already read, and the output ends within `data`. Bytes of
/// `data` before `input_at` are overwritten only by the output (when `output_at <
/// input_at`). Offsets out of range write nothing (no panic).
#[inline(always)]
fn narrow_in_place<I: Element, O: Element>(
    data: &mut [u8],
    input_at: usize,
    output_at: usize,
    op: impl Fn(I) -> O,
) {
    debug_assert!(O::SIZE <= I::SIZE && output_at <= input_at + (I::SIZE - O::SIZE));
    let n = data.len().saturating_sub(input_at) / I::SIZE;
    if output_at.saturating_add(n * O::SIZE) > data.len() {
        return;
    }
    let read = |data: &[u8], i: usize| {
        let from = input_at + i * I::SIZE;
        I::read(&data[from..from + I::SIZE])
    };
    let write = |data: &mut [u8], i: usize, y: O| {
        let to = output_at + i * O::SIZE;
        y.write(&mut data[to..to + O::SIZE]);
    };
    let quads = n / 4 * 4;
    for i in (0..quads).step_by(4) {
        let (x0, x1) = (read(data, i), read(data, i + 1));
        let (x2, x3) = (read(data, i + 2), read(data, i + 3));
        write(data, i, op(x0));
        write(data, i + 1, op(x1));
        write(data, i + 2, op(x2));
        write(data, i + 3, op(x3));
    }
    for i in quads..n {
        write(data, i, op(read(data, i)));
    }
}

/// [`quantize_f32_s8`] in place: `data` holds the float input from byte `input_at` to its
/// end; the int8 output goes from byte `output_at`, at most 3 bytes after `input_at`
/// (usually equal: the output over the start of the input).
pub fn quantize_f32_s8_in_place(p: &Params, data: &mut [u8], input_at: usize, output_at: usize) {
    narrow_in_place(data, input_at, output_at, |x: f32| quantize_f32_s8_op(p, x));
}

/// [`quantize_f32_s16`] in place (as [`quantize_f32_s8_in_place`]; the output at most 2
/// bytes after the input).
pub fn quantize_f32_s16_in_place(p: &Params, data: &mut [u8], input_at: usize, output_at: usize) {
    narrow_in_place(data, input_at, output_at, |x: f32| {
        quantize_f32_s16_op(p, x)
    });
}

/// [`crate::requantize::requantize_s16_s8`] in place (as [`quantize_f32_s8_in_place`]; the
/// output at most 1 byte after the input).
pub fn requantize_s16_s8_in_place(p: &Params, data: &mut [u8], input_at: usize, output_at: usize) {
    narrow_in_place(data, input_at, output_at, |x: i16| {
        requantize_op(p, x as i32, i8::MIN as i32, i8::MAX as i32) as i8
    });
}

/// [`crate::requantize::requantize_s32_s8`] in place (as [`quantize_f32_s8_in_place`]).
pub fn requantize_s32_s8_in_place(p: &Params, data: &mut [u8], input_at: usize, output_at: usize) {
    narrow_in_place(data, input_at, output_at, |x: i32| {
        requantize_op(p, x, i8::MIN as i32, i8::MAX as i32) as i8
    });
}

/// [`crate::requantize::requantize_s32_s16`] in place (as [`quantize_f32_s16_in_place`]).
pub fn requantize_s32_s16_in_place(p: &Params, data: &mut [u8], input_at: usize, output_at: usize) {
    narrow_in_place(data, input_at, output_at, |x: i32| {
        requantize_op(p, x, i16::MIN as i32, i16::MAX as i32) as i16
    });
}

/// [`crate::requantize::requantize_u8_s8`] in place (the output at or before the input's
/// start, as the planner places it: same element size). TFLM's "shift by 128" case (equal
/// scales, zero points 128 apart: every byte's top bit flipped) runs on 16 bytes per step
/// in four 32-bit words; any other on `narrow_in_place`.
pub fn requantize_u8_s8_in_place(p: &Params, data: &mut [u8], input_at: usize, output_at: usize) {
    if crate::requantize::flips(p, -128) && output_at == input_at {
        flip_in_place(data.get_mut(input_at..).unwrap_or(&mut []));
        return;
    }
    narrow_in_place(data, input_at, output_at, |x: u8| {
        requantize_op(p, x as i32, i8::MIN as i32, i8::MAX as i32) as i8
    });
}

/// [`crate::requantize::requantize_s8_u8`] in place (as [`requantize_u8_s8_in_place`]).
pub fn requantize_s8_u8_in_place(p: &Params, data: &mut [u8], input_at: usize, output_at: usize) {
    if crate::requantize::flips(p, 128) && output_at == input_at {
        flip_in_place(data.get_mut(input_at..).unwrap_or(&mut []));
        return;
    }
    narrow_in_place(data, input_at, output_at, |x: i8| {
        requantize_op(p, x as i32, u8::MIN as i32, u8::MAX as i32) as u8
    });
}

/// Every byte of `data` with its top bit flipped: 16 bytes per step as four native-endian
/// 32-bit words (the XOR of a word is the XOR of its bytes in any byte order; one load, XOR
/// and store each, written out so that opt-level s keeps them), the rest one at a time.
#[inline(always)]
fn flip_in_place(data: &mut [u8]) {
    const TOP: u32 = 0x8080_8080;
    let flip = |w: &mut [u8; 4]| *w = (u32::from_ne_bytes(*w) ^ TOP).to_ne_bytes();
    let (blocks, rest) = data.as_chunks_mut::<16>();
    for b in blocks {
        let (words, _) = b.as_chunks_mut::<4>();
        if let [w0, w1, w2, w3] = words {
            flip(w0);
            flip(w1);
            flip(w2);
            flip(w3);
        }
    }
    for b in rest {
        *b ^= 0x80;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::round_f32;
    use std::vec::Vec;

    /// Each narrowing kernel in place equals it out of place, for element counts around the
    /// block size and every output start it allows (before the input's, at it, up to the
    /// difference of the element sizes after it); the bytes before the output and after it
    /// within the input are what the input left there.
    #[test]
    fn narrowing_in_place_is_the_ordinary_kernel() {
        fn case<I: Element, O: Element + PartialEq + core::fmt::Debug>(
            make: impl Fn(u32) -> I,
            out_of_place: impl Fn(&[I], &mut [O]),
            in_place: impl Fn(&mut [u8], usize, usize),
        ) {
            for n in [0, 1, 2, 5, 31, 32, 33, 64, 65, 100] {
                let x: Vec<I> = (0..n as u32)
                    .map(|i| make(i.wrapping_mul(2_654_435_761)))
                    .collect();
                let mut want = std::vec![O::default(); n];
                out_of_place(&x, &mut want);
                let input_at = 6;
                let after = if n > 0 { I::SIZE - O::SIZE } else { 0 };
                for output_at in 0..=input_at + after {
                    let mut data = std::vec![0xA5u8; input_at + n * I::SIZE];
                    for (v, b) in x.iter().zip(data[input_at..].chunks_exact_mut(I::SIZE)) {
                        v.write(b);
                    }
                    let before = data.clone();
                    in_place(&mut data, input_at, output_at);
                    let got: Vec<O> = data[output_at..output_at + n * O::SIZE]
                        .chunks_exact(O::SIZE)
                        .map(O::read)
                        .collect();
                    assert_eq!(
                        got, want,
                        "n {n}, input at {input_at}, output at {output_at}"
                    );
                    let end = output_at + n * O::SIZE;
                    assert_eq!(data[..output_at], before[..output_at]);
                    assert_eq!(data[end..], before[end..]);
                }
            }
        }
        let q = QuantParams {
            scale: 0.37,
            zero_point: -3,
        };
        let p = prepare_f32_s8(q).unwrap();
        let float = |r: u32| (r % 20_001) as f32 / 37.0 - 270.0;
        case(
            float,
            |x, y| quantize_f32_s8(&p, x, y),
            |d, a, o| quantize_f32_s8_in_place(&p, d, a, o),
        );
        case(
            |r| float(r) * 100.0,
            |x, y| quantize_f32_s16(&p, x, y),
            |d, a, o| quantize_f32_s16_in_place(&p, d, a, o),
        );
        let r = crate::requantize::prepare(
            QuantParams {
                scale: 0.011,
                zero_point: 0,
            },
            q,
        )
        .unwrap();
        case(
            |v| (v as i16) >> 4,
            |x, y| crate::requantize::requantize_s16_s8(&r, x, y),
            |d, a, o| requantize_s16_s8_in_place(&r, d, a, o),
        );
        case(
            |v| (v as i32) >> 20,
            |x, y| crate::requantize::requantize_s32_s8(&r, x, y),
            |d, a, o| requantize_s32_s8_in_place(&r, d, a, o),
        );
        case(
            |v| (v as i32) >> 12,
            |x, y| crate::requantize::requantize_s32_s16(&r, x, y),
            |d, a, o| requantize_s32_s16_in_place(&r, d, a, o),
        );
        // Uint8 <-> int8: the top-bit flip (equal scales, zero points 128 apart) and a
        // general requantization.
        let u = |scale: f32, zero_point: i32| QuantParams { scale, zero_point };
        let flip_u8_s8 = crate::requantize::prepare(u(0.1, 127), u(0.1, -1)).unwrap();
        let flip_s8_u8 = crate::requantize::prepare(u(0.1, -5), u(0.1, 123)).unwrap();
        let general = crate::requantize::prepare(u(0.1, 120), u(0.23, 3)).unwrap();
        assert!(crate::requantize::flips(&flip_u8_s8, -128));
        assert!(crate::requantize::flips(&flip_s8_u8, 128));
        for r in [flip_u8_s8, general] {
            case(
                |v| (v >> 11) as u8,
                |x, y| crate::requantize::requantize_u8_s8(&r, x, y),
                |d, a, o| requantize_u8_s8_in_place(&r, d, a, o),
            );
        }
        for r in [flip_s8_u8, general] {
            case(
                |v| (v >> 11) as i8,
                |x, y| crate::requantize::requantize_s8_u8(&r, x, y),
                |d, a, o| requantize_s8_u8_in_place(&r, d, a, o),
            );
        }
    }

    #[test]
    fn float_to_int8() {
        let p = prepare_f32_s8(QuantParams {
            scale: 0.5,
            zero_point: -1,
        })
        .unwrap();
        let mut out = [0i8; 6];
        quantize_f32_s8(&p, &[0.0, 0.25, -0.25, 0.75, 1000.0, -1000.0], &mut out);
        // 0.5 -> 1 (half away from zero), -0.5 -> -1, 1.5 -> 2
        assert_eq!(out, [-1, 0, -2, 1, 127, -128]);
    }

    /// The branch-free rounding against `round_f32` on the values around every rounding
    /// boundary, the saturation edges, infinities and NaN.
    #[test]
    fn round_to_i32_is_round_f32() {
        let mut xs = std::vec![
            0.0f32,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            f32::MIN,
            2_147_483_648.0,
            -2_147_483_648.0,
            2_147_483_520.0,
            -2_147_483_520.0,
            8_388_608.0,
            8_388_607.5,
            -8_388_607.5,
            16_777_216.0,
        ];
        for k in -3000..3000 {
            let h = k as f32 + 0.5;
            for v in [
                h,
                f32::from_bits(h.to_bits() + 1),
                f32::from_bits(h.to_bits() - 1),
            ] {
                xs.push(v);
            }
        }
        for e in 0..40 {
            let m = (1u64 << e) as f32;
            xs.extend([m, -m, m * 1.5, -m * 1.5, m * 0.75]);
        }
        for &x in &xs {
            assert_eq!(round_to_i32(x), round_f32(x) as i32, "{x:e}");
        }
        let p = prepare_f32_s16(QuantParams {
            scale: 0.5,
            zero_point: 3,
        })
        .unwrap();
        let mut out = [0i16; 5];
        quantize_f32_s16(&p, &[0.25, -0.25, 1e9, -1e9, f32::NAN], &mut out);
        assert_eq!(out, [4, 2, 32767, -32768, 3]);
    }

    #[test]
    fn int8_to_int8() {
        let a = QuantParams {
            scale: 0.5,
            zero_point: 10,
        };
        let b = QuantParams {
            scale: 0.25,
            zero_point: -5,
        };
        let p = prepare_s8_s8(a, b).unwrap();
        let mut out = [0i8; 4];
        requantize_s8_s8(&p, &[10, 11, 9, 127], &mut out);
        assert_eq!(out, [-5, -3, -7, 127]);
        let p = prepare_s8_s8(b, a).unwrap();
        requantize_s8_s8(&p, &[-5, -4, -6, -3], &mut out);
        // (x+5)/2 + 10: 0 -> 10, 0.5 -> 1, -0.5 -> 0 (SRDHM rounds ties up), 1
        assert_eq!(out, [10, 11, 10, 11]);
    }
}
