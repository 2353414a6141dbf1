//! Quantization helpers for a model's int8, int16 and uint8 inputs and outputs, `no_std`.
//!
//! A generated model module has one const [`Quant`] per input or output quantized per tensor
//! (`INPUT_QUANT`, `OUTPUT_QUANT`, or `INPUT0_QUANT`, `INPUT1_QUANT`, ... when there are
//! several, numbered like `INPUT0_SCALE`):
//!
//! ```text
//! let q = model::INPUT_QUANT;                  // kiln::Quant<i8>
//! q.quantize_slice(&features, m.input_mut());  // f32 -> i8, as TFLM's QUANTIZE
//! m.invoke();
//! let p = model::OUTPUT_QUANT.dequantize(m.output()[0]); // i8 -> f32, as TFLM's DEQUANTIZE
//! ```
//!
//! The arithmetic is the kernels' own (`kiln::kernels::quantize` and `dequantize`, the ones
//! the QUANTIZE and DEQUANTIZE operators run), so the results are TFLM's byte for byte:
//!
//! - [`Quant::quantize`]: `clamp(round(x / scale) + zero_point)` with the division in `f32`
//!   and `round` as C's `roundf` (halves away from zero: 0.5 -> 1, -2.5 -> -3), clamped to
//!   the element type's range (TFLM's `AffineQuantize`). `core` has no `f32::round`; Kiln's
//!   is exact for every `f32`.
//! - [`Quant::dequantize`]: `scale * (q - zero_point)` as an `f32` (TFLM's `Dequantize`,
//!   which multiplies in `double` and rounds once; the product of an `f32` scale and a 17-bit
//!   integer is exact in `double`, so the `f32` product is the same number).
//!
//! Where TFLM's C++ is undefined (`x / scale` NaN or beyond ±2^31, where its `int32_t` cast
//! overflows), these saturate instead: `x / scale >= 2^30` (and +infinity) gives the type's
//! maximum, `<= -2^30` (and -infinity) its minimum, NaN the zero point. For every other
//! input the result is TFLM's (tested against the pinned wheel on ties, saturation and zero
//! points at the type's extremes: `tests/quant.rs`).
//!
//! **uint8** (`Quant<u8>`): models from older converters and vision zoos take uint8 images
//! (OpenMV's MoveNet: scale 1/127.5, zero point 127, so the camera's bytes go in as they are)
//! or give uint8 scores. Their `Quant<u8>` does the same arithmetic clamped to 0..=255:
//! `dequantize` is TFLM's DEQUANTIZE of uint8; `quantize` is TFLite's `AffineQuantize` to
//! uint8 (TFLM's QUANTIZE from float writes int8 and int16 only), i.e. the int16 result
//! clamped to 0..=255.
//!
//! **Float inputs and outputs** need none of this: a model whose graph starts with a QUANTIZE
//! and ends with DEQUANTIZEs (common in vendor zoos) takes and gives `f32`
//! (`INPUT_DTYPE = DType::F32`, `input_mut() -> &mut [f32; N]`), quantizing inside
//! `invoke()`; its `INPUT_QUANT` is a [`NotQuantized<f32>`], whose `quantize` is a compile
//! error saying the input is float32, and `INPUT_SCALE` is 0.
//!
//! **Per-channel quantized** inputs and outputs (several scales along one axis, rare for
//! activations) have a [`NotQuantized`] `*_QUANT` too, and their `*_SCALE` is 0: quantize them
//! channel by channel from the model's own parameters. So do inputs and outputs of other
//! types (`i32`, `bool`, ...).

use core::marker::PhantomData;
use kiln_kernels::{dequantize, quantize};

/// Affine quantization of an int8 or int16 tensor: `real = scale * (q - zero_point)`.
///
/// `T` is `i8` or `i16`. Generated modules hold these as consts (see the [module
/// docs](self)); [`Quant::new`] makes one for other parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quant<T> {
    scale: f32,
    zero_point: i32,
    _element: PhantomData<T>,
}

/// The element types [`Quant`] handles: `i8` and `i16` (the types TFLM's QUANTIZE from float
/// and DEQUANTIZE to float take) and `u8` (see the [module docs](self)). Sealed.
pub trait Element: Copy + sealed::Sealed {
    #[doc(hidden)]
    const MIN: Self;
    #[doc(hidden)]
    const MAX: Self;
    #[doc(hidden)]
    const ZERO: Self;
    #[doc(hidden)]
    fn quantize_kernel(p: &quantize::Params, input: &[f32], output: &mut [Self]);
    #[doc(hidden)]
    fn dequantize_kernel(p: &dequantize::Params, input: &[Self], output: &mut [f32]);
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i8 {}
    impl Sealed for i16 {}
    impl Sealed for u8 {}
}

impl Element for i8 {
    const MIN: i8 = i8::MIN;
    const MAX: i8 = i8::MAX;
    const ZERO: i8 = 0;
    fn quantize_kernel(p: &quantize::Params, input: &[f32], output: &mut [i8]) {
        quantize::quantize_f32_s8(p, input, output);
    }
    fn dequantize_kernel(p: &dequantize::Params, input: &[i8], output: &mut [f32]) {
        dequantize::dequantize_s8_f32(p, input, output);
    }
}

impl Element for i16 {
    const MIN: i16 = i16::MIN;
    const MAX: i16 = i16::MAX;
    const ZERO: i16 = 0;
    fn quantize_kernel(p: &quantize::Params, input: &[f32], output: &mut [i16]) {
        quantize::quantize_f32_s16(p, input, output);
    }
    fn dequantize_kernel(p: &dequantize::Params, input: &[i16], output: &mut [f32]) {
        dequantize::dequantize_s16_f32(p, input, output);
    }
}

/// uint8 through the int16 kernels, a chunk at a time on the stack (no allocator): int16
/// holds every uint8 value and the zero point, clamping the int16 result to 0..=255 is
/// clamping the unclamped value to 0..=255, and widening a uint8 to int16 before
/// `scale * (q - zero_point)` changes nothing.
const U8_CHUNK: usize = 64;

impl Element for u8 {
    const MIN: u8 = u8::MIN;
    const MAX: u8 = u8::MAX;
    const ZERO: u8 = 0;
    fn quantize_kernel(p: &quantize::Params, input: &[f32], output: &mut [u8]) {
        let mut wide = [0i16; U8_CHUNK];
        for (x, q) in input.chunks(U8_CHUNK).zip(output.chunks_mut(U8_CHUNK)) {
            let wide = &mut wide[..x.len()];
            quantize::quantize_f32_s16(p, x, wide);
            for (q, &w) in q.iter_mut().zip(wide.iter()) {
                *q = w.clamp(0, 255) as u8;
            }
        }
    }
    fn dequantize_kernel(p: &dequantize::Params, input: &[u8], output: &mut [f32]) {
        let mut wide = [0i16; U8_CHUNK];
        for (q, x) in input.chunks(U8_CHUNK).zip(output.chunks_mut(U8_CHUNK)) {
            let wide = &mut wide[..q.len()];
            for (w, &q) in wide.iter_mut().zip(q) {
                *w = i16::from(q);
            }
            dequantize::dequantize_s16_f32(p, wide, x);
        }
    }
}

/// `x / scale` from here on (either sign) saturates: TFLM's `int32_t` cast is defined up to
/// 2^31, and the zero point (at most 2^15 in size) must not overflow the sum.
const SATURATED: f32 = 1_073_741_824.0; // 2^30

impl<T: Element> Quant<T> {
    /// Quantization with `scale` (positive and finite, as a model's) and `zero_point`
    /// (within `T`'s range).
    pub const fn new(scale: f32, zero_point: i32) -> Self {
        Quant {
            scale,
            zero_point,
            _element: PhantomData,
        }
    }

    /// The scale: one step of `T` in real units.
    pub const fn scale(&self) -> f32 {
        self.scale
    }

    /// The zero point: the `T` value of real 0.
    pub const fn zero_point(&self) -> i32 {
        self.zero_point
    }

    fn quantize_params(&self) -> quantize::Params {
        quantize::Params {
            output_scale: self.scale,
            output_zero_point: self.zero_point,
            input_zero_point: 0,
            requantize_multiplier: 0,
            requantize_shift: 0,
        }
    }

    fn dequantize_params(&self) -> dequantize::Params {
        dequantize::Params {
            scale: self.scale,
            zero_point: self.zero_point,
        }
    }

    /// `x` quantized as TFLM's QUANTIZE does: `clamp(round(x / scale) + zero_point)`.
    pub fn quantize(&self, x: f32) -> T {
        let mut q = [T::ZERO];
        self.quantize_slice(&[x], &mut q);
        q[0]
    }

    /// `quantize` of every element of `input` into `output`.
    ///
    /// Panics if the lengths differ.
    pub fn quantize_slice(&self, input: &[f32], output: &mut [T]) {
        assert_eq!(
            input.len(),
            output.len(),
            "quantize_slice: input and output lengths differ"
        );
        T::quantize_kernel(&self.quantize_params(), input, output);
        // Beyond TFLM's defined range: saturate (see the module docs).
        for (q, &x) in output.iter_mut().zip(input) {
            let v = x / self.scale;
            if v >= SATURATED {
                *q = T::MAX;
            } else if v <= -SATURATED {
                *q = T::MIN;
            }
        }
    }

    /// `q` dequantized as TFLM's DEQUANTIZE does: `scale * (q - zero_point)`.
    pub fn dequantize(&self, q: T) -> f32 {
        let mut x = [0.0];
        self.dequantize_slice(&[q], &mut x);
        x[0]
    }

    /// `dequantize` of every element of `input` into `output`.
    ///
    /// Panics if the lengths differ.
    pub fn dequantize_slice(&self, input: &[T], output: &mut [f32]) {
        assert_eq!(
            input.len(),
            output.len(),
            "dequantize_slice: input and output lengths differ"
        );
        T::dequantize_kernel(&self.dequantize_params(), input, output);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_halves_away_from_zero_and_saturates() {
        let q = Quant::<i8>::new(0.5, -1);
        // x / scale: 0.5 -> 1, -0.5 -> -1, 1.5 -> 2, -2.5 -> -3, then + zero point
        assert_eq!(q.quantize(0.25), 0);
        assert_eq!(q.quantize(-0.25), -2);
        assert_eq!(q.quantize(0.75), 1);
        assert_eq!(q.quantize(-1.25), -4);
        assert_eq!(q.quantize(1000.0), 127);
        assert_eq!(q.quantize(-1000.0), -128);
        assert_eq!(q.quantize(f32::INFINITY), 127);
        assert_eq!(q.quantize(f32::NEG_INFINITY), -128);
        assert_eq!(q.quantize(f32::NAN), -1);
        assert_eq!(q.quantize(3e38), 127);
        assert_eq!(q.quantize(-3e38), -128);
        let q = Quant::<i16>::new(1.0, 32767);
        assert_eq!(q.quantize(f32::INFINITY), 32767);
        assert_eq!(q.quantize(-1e12), -32768);
        assert_eq!(q.quantize(-0.5), 32766);
        assert_eq!(q.dequantize(-32768), -65535.0);
    }

    #[test]
    fn uint8_clamps_to_its_range_and_matches_int16_inside_it() {
        // MoveNet's input: scale 1/127.5, zero point 127.
        let q = Quant::<u8>::new(0.007_843_138, 127);
        let wide = Quant::<i16>::new(0.007_843_138, 127);
        assert_eq!(q.quantize(0.0), 127);
        assert_eq!(q.quantize(-1.0), 0);
        assert_eq!(q.quantize(1.0), 254); // 1.0 / scale = 127.4999..: the f32 scale is a hair above 1/127.5
        assert_eq!(q.quantize(1.01), 255);
        assert_eq!(q.quantize(-5.0), 0);
        assert_eq!(q.quantize(5.0), 255);
        assert_eq!(q.quantize(f32::NAN), 127);
        assert_eq!(q.quantize(f32::INFINITY), 255);
        assert_eq!(q.quantize(f32::NEG_INFINITY), 0);
        // A slice longer than a chunk, across the whole range.
        let xs: [f32; 300] = core::array::from_fn(|i| (i as f32 - 150.0) / 140.0);
        let mut got = [0u8; 300];
        q.quantize_slice(&xs, &mut got);
        let mut back = [0.0f32; 300];
        q.dequantize_slice(&got, &mut back);
        for ((&x, &g), &b) in xs.iter().zip(&got).zip(&back) {
            let w = wide.quantize(x);
            assert_eq!(g, w.clamp(0, 255) as u8, "{x}");
            assert_eq!(b, wide.dequantize(i16::from(g)), "{g}");
        }
    }
}

/// The `*_QUANT` of an input or output that is not quantized per tensor: float32, int32 or
/// bool values, or int8 quantized per channel. There is nothing to convert: write and read
/// its values as they are (`*_DTYPE` names their type). Its `quantize` and `dequantize`
/// exist to say so at compile time: calling either is an error naming the element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotQuantized<T>(PhantomData<T>);

/// Implemented by no type: the bound of [`NotQuantized`]'s methods, whose message the
/// compiler prints when they are called.
#[diagnostic::on_unimplemented(
    message = "this input or output holds `{Self}` values, not values quantized per tensor: \
               it has no quantization to apply",
    label = "not quantized per tensor",
    note = "write and read its `{Self}` values as they are (`*_DTYPE` names the type; a \
            per-channel tensor's parameters are the model's own)"
)]
pub trait QuantizedPerTensor {
    /// Never called (no type implements the trait).
    fn unreachable() -> Self;
}

impl<T> NotQuantized<T> {
    /// The `*_QUANT` of a tensor of `T` values that is not quantized per tensor.
    pub const fn new() -> Self {
        NotQuantized(PhantomData)
    }

    /// A compile error: the tensor is not quantized per tensor (see [`NotQuantized`]).
    pub fn quantize(&self, x: f32) -> T
    where
        T: QuantizedPerTensor,
    {
        let _ = x;
        T::unreachable()
    }

    /// A compile error: the tensor is not quantized per tensor (see [`NotQuantized`]).
    pub fn dequantize(&self, q: T) -> f32
    where
        T: QuantizedPerTensor,
    {
        let _ = q;
        0.0
    }

    /// A compile error: the tensor is not quantized per tensor (see [`NotQuantized`]).
    pub fn quantize_slice(&self, input: &[f32], output: &mut [T])
    where
        T: QuantizedPerTensor,
    {
        let _ = (input, output);
    }

    /// A compile error: the tensor is not quantized per tensor (see [`NotQuantized`]).
    pub fn dequantize_slice(&self, input: &[T], output: &mut [f32])
    where
        T: QuantizedPerTensor,
    {
        let _ = (input, output);
    }
}

impl<T> Default for NotQuantized<T> {
    fn default() -> Self {
        Self::new()
    }
}
