//! Build-time quantization helpers (what TFLM computes in `Prepare`), `no_std`-compatible.
//!
//! The planner calls these on the host to turn tensor scales/zero points and builtin options
//! into the constant kernel parameters. They follow `quantization_util.cc`, `kernel_util.cc`
//! and `padding.h` of TFLM, including their `float`/`double` evaluation order, so the
//! resulting multipliers and shifts are identical. Per-operator `prepare` functions live in
//! the operator modules and are built from these helpers.

/// Why a build-time computation was rejected (TFLM would fail `Prepare` or abort).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrepareError {
    /// A multiplier was outside the range its TFLM helper checks (e.g. not in `(0, 1)` for
    /// `QuantizeMultiplierSmallerThanOneExp`, not `> 1` for `QuantizeMultiplierGreaterThanOne`).
    MultiplierOutOfRange,
    /// A requantization multiplier whose power-of-two exponent the fixed-point helper that
    /// applies it cannot handle (see [`ShiftRange`]), or that is not a finite number.
    ShiftOutOfRange {
        /// The real multiplier (e.g. `input_scale * filter_scale / output_scale`).
        multiplier: f64,
        /// Its exponent (`None` if the multiplier is not finite).
        shift: Option<i32>,
        /// The exponents the kernel handles.
        range: ShiftRange,
    },
    /// Quantizing an activation bound overflowed `i32` (TFLM's `Quantize` check).
    ActivationRangeOverflow,
    /// Shapes or parameters are inconsistent (wrong slice length, zero stride, mismatched dims).
    InvalidShape,
    /// Quantization parameters that TFLM's kernel rejects (e.g. softmax output scale, pooling
    /// input/output scale mismatch).
    UnsupportedQuantization,
}

/// The exponents (`shift > 0` a left shift) a fixed-point helper can apply, inclusive.
///
/// Every multiplier and shift computed at build time is checked against the range of the
/// helper that applies it, here, through [`quantize_multiplier`] or [`ShiftRange::check`]:
/// outside it TFLM's C++ shifts by more than the width of the type (undefined behaviour) and
/// Kiln's kernels would panic in a debug build and compute garbage in a release build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShiftRange {
    pub min: i32,
    pub max: i32,
}

impl ShiftRange {
    /// [`multiply_by_quantized_multiplier`](crate::fixed_point::multiply_by_quantized_multiplier)
    /// on `i32`: `x * 2^shift` in 32 bits for a left shift, a rounding right shift of at
    /// most 31 bits.
    pub const I32: ShiftRange = ShiftRange { min: -31, max: 30 };
    /// [`multiply_by_quantized_multiplier_i64`](crate::fixed_point::multiply_by_quantized_multiplier_i64)
    /// (the 16x8 kernels' 64-bit accumulators): TFLM's `-31 <= shift < 8`.
    pub const I64: ShiftRange = ShiftRange { min: -31, max: 7 };
    /// Only right shifts (`MultiplyByQuantizedMultiplierSmallerThanOneExp`).
    pub const RIGHT: ShiftRange = ShiftRange { min: -31, max: 0 };
    /// Only left shifts (`MultiplyByQuantizedMultiplierGreaterThanOne`), up to the 31 of
    /// softmax's multiplier capped at `2^31 - 1` (`1 << 31` is `i32::MIN` in TFLM's build and
    /// in Kiln's kernels alike).
    pub const LEFT: ShiftRange = ShiftRange { min: 0, max: 31 };

    /// `Ok` if `shift` (the exponent of the real `multiplier`) is in the range.
    pub fn check(self, multiplier: f64, shift: i32) -> Result<(), PrepareError> {
        if self.min <= shift && shift <= self.max {
            Ok(())
        } else {
            Err(PrepareError::ShiftOutOfRange {
                multiplier,
                shift: Some(shift),
                range: self,
            })
        }
    }
}

/// Affine quantization of one tensor (`TfLiteQuantizationParams`): `real = scale * (q - zero_point)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuantParams {
    /// `params.scale`
    pub scale: f32,
    /// `params.zero_point`
    pub zero_point: i32,
}

/// TFLite's fused activation function (`TfLiteFusedActivation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// `kTfLiteActNone`
    None,
    /// `kTfLiteActRelu`
    Relu,
    /// `kTfLiteActReluN1To1`
    ReluN1To1,
    /// `kTfLiteActRelu6`
    Relu6,
    /// `kTfLiteActTanh` (not clamped by the kernels that fuse activations)
    Tanh,
    /// `kTfLiteActSignBit` (not clamped by the kernels that fuse activations)
    SignBit,
}

/// TFLite padding type (`TfLitePadding`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// `kTfLitePaddingSame`
    Same,
    /// `kTfLitePaddingValid`
    Valid,
}

/// `std::frexp`: returns `(m, e)` with `x = m * 2^e` and `|m|` in `[0.5, 1)`; `(x, 0)` for zero,
/// infinities and NaN.
pub fn frexp(x: f64) -> (f64, i32) {
    let mut bits = x.to_bits();
    let mut exp = ((bits >> 52) & 0x7ff) as i32;
    let mut bias = 0;
    if exp == 0x7ff || x == 0.0 {
        return (x, 0);
    }
    if exp == 0 {
        // Subnormal: scale into the normal range first.
        let scaled = x * f64::from_bits(0x43f0_0000_0000_0000); // 2^64
        bits = scaled.to_bits();
        exp = ((bits >> 52) & 0x7ff) as i32;
        bias = -64;
    }
    let mantissa = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (mantissa, exp - 1022 + bias)
}

/// `2^e` (0 or infinity beyond `f64`'s normal range), without `std`.
pub fn pow2(e: i32) -> f64 {
    match e {
        -1022..=1023 => f64::from_bits(((e + 1023) as u64) << 52),
        ..-1022 => 0.0,
        _ => f64::INFINITY,
    }
}

/// `std::round` for `double` (`TfLiteRound`): round half away from zero.
pub fn round_f64(x: f64) -> f64 {
    if !(abs_f64(x) < 4_503_599_627_370_496.0) {
        return x; // |x| >= 2^52 (already integral), inf or NaN
    }
    let t = x as i64 as f64; // trunc
    let diff = x - t; // exact
    let r = if diff >= 0.5 {
        t + 1.0
    } else if diff <= -0.5 {
        t - 1.0
    } else {
        t
    };
    if r == 0.0 && x.is_sign_negative() {
        -0.0
    } else {
        r
    }
}

/// `std::round` for `float` (`TfLiteRound`): round half away from zero.
pub fn round_f32(x: f32) -> f32 {
    if !(abs_f32(x) < 8_388_608.0) {
        return x; // |x| >= 2^23 (already integral), inf or NaN
    }
    let t = x as i32 as f32;
    let diff = x - t;
    let r = if diff >= 0.5 {
        t + 1.0
    } else if diff <= -0.5 {
        t - 1.0
    } else {
        t
    };
    if r == 0.0 && x.is_sign_negative() {
        -0.0
    } else {
        r
    }
}

/// `std::floor` for `double`.
pub fn floor_f64(x: f64) -> f64 {
    if !(abs_f64(x) < 4_503_599_627_370_496.0) {
        return x;
    }
    let t = x as i64 as f64;
    if t > x { t - 1.0 } else { t }
}

fn abs_f64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() & !(1u64 << 63))
}

fn abs_f32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & !(1u32 << 31))
}

/// `tflite::QuantizeMultiplier`: splits a real multiplier into a Q31 significand and a
/// power-of-two exponent (`real = m * 2^(shift - 31)`), as TFLM does with `std::frexp` and
/// `std::round` (non-`TFLITE_EMULATE_FLOAT`, double-rounding build). Returns
/// `(quantized_multiplier, shift)`; `shift > 0` is a left shift.
///
/// The shift must be one the kernel that applies it handles (`range`): TFLM returns any
/// exponent and aborts on a non-finite multiplier; Kiln refuses both at build time.
/// Multipliers below `2^-31` are flushed to `(0, 0)` first, as TFLM does, so they are in
/// every range.
pub fn quantize_multiplier(
    double_multiplier: f64,
    range: ShiftRange,
) -> Result<(i32, i32), PrepareError> {
    if !double_multiplier.is_finite() {
        return Err(PrepareError::ShiftOutOfRange {
            multiplier: double_multiplier,
            shift: None,
            range,
        });
    }
    if double_multiplier == 0.0 {
        return Ok((0, 0));
    }
    let (q, mut shift) = frexp(double_multiplier);
    // |q| < 1, so |q * 2^31| <= 2^31 after rounding; TFLM renormalizes only +2^31.
    let mut q_fixed = round_f64(q * (1i64 << 31) as f64) as i64;
    if q_fixed == (1i64 << 31) {
        q_fixed /= 2;
        shift += 1;
    }
    // Flush multipliers below 2^-31 to zero, as TFLM does.
    if shift < -31 {
        shift = 0;
        q_fixed = 0;
    }
    range.check(double_multiplier, shift)?;
    Ok((q_fixed as i32, shift))
}

/// `tflite::QuantizeMultiplierSmallerThanOneExp`: requires `0 < m < 1`; returns
/// `(quantized_multiplier, left_shift)` with `left_shift <= 0`.
pub fn quantize_multiplier_smaller_than_one_exp(
    double_multiplier: f64,
) -> Result<(i32, i32), PrepareError> {
    if !(double_multiplier < 1.0 && double_multiplier > 0.0) {
        return Err(PrepareError::MultiplierOutOfRange);
    }
    quantize_multiplier(double_multiplier, ShiftRange::RIGHT)
        .map_err(|_| PrepareError::MultiplierOutOfRange)
}

/// `tflite::QuantizeMultiplierGreaterThanOne`: requires `m > 1`; returns
/// `(quantized_multiplier, left_shift)` with `0 <= left_shift <= 31`.
pub fn quantize_multiplier_greater_than_one(
    double_multiplier: f64,
) -> Result<(i32, i32), PrepareError> {
    if !(double_multiplier > 1.0) {
        return Err(PrepareError::MultiplierOutOfRange);
    }
    quantize_multiplier(double_multiplier, ShiftRange::LEFT)
}

/// `tflite::PreprocessSoftmaxScaling` (double-rounding build): the Q`(31 - input_integer_bits)`
/// multiplier of `beta * input_scale`, capped at `2^31 - 1`. Returns
/// `(quantized_multiplier, left_shift)`.
pub fn preprocess_softmax_scaling(
    beta: f64,
    input_scale: f64,
    input_integer_bits: i32,
) -> Result<(i32, i32), PrepareError> {
    let max_real_multiplier = (1i64 << 31) as f64 - 1.0;
    let product = beta * input_scale * (1i32 << (31 - input_integer_bits)) as f64;
    // std::min<double>(a, b) returns (b < a) ? b : a.
    let input_beta_real_multiplier = if max_real_multiplier < product {
        max_real_multiplier
    } else {
        product
    };
    quantize_multiplier_greater_than_one(input_beta_real_multiplier)
}

/// `tflite::CalculateInputRadius` (non-emulated float): the largest input difference that
/// still fits after scaling by `2^input_left_shift`.
pub fn calculate_input_radius(
    input_integer_bits: i32,
    input_left_shift: i32,
    total_signed_bits: i32,
) -> i32 {
    let max_input_rescaled = 1.0
        * ((1i32 << input_integer_bits) - 1) as f64
        * (1i64 << (total_signed_bits - input_integer_bits)) as f64
        / (1i64 << input_left_shift) as f64;
    floor_f64(max_input_rescaled) as i32
}

/// TFLM's `Quantize` helper of `CalculateActivationRangeQuantized`:
/// `zero_point + (int)round(f / scale)` computed in `float`.
fn quantize_activation_bound(scale: f32, zero_point: i32, f: f32) -> Result<i32, PrepareError> {
    let tmp = round_f32(f / scale);
    if !(-2_147_483_648.0f32..2_147_483_648.0f32).contains(&tmp) {
        return Err(PrepareError::ActivationRangeOverflow);
    }
    zero_point
        .checked_add(tmp as i32)
        .ok_or(PrepareError::ActivationRangeOverflow)
}

/// `tflite::CalculateActivationRangeQuantized` with explicit type bounds `qmin..=qmax`:
/// the clamping range of a fused activation for an output with `scale`/`zero_point`.
pub fn calculate_activation_range_quantized(
    activation: Activation,
    scale: f32,
    zero_point: i32,
    qmin: i32,
    qmax: i32,
) -> Result<(i32, i32), PrepareError> {
    let q = |f: f32| quantize_activation_bound(scale, zero_point, f);
    Ok(match activation {
        Activation::Relu => (qmin.max(q(0.0)?), qmax),
        Activation::Relu6 => (qmin.max(q(0.0)?), qmax.min(q(6.0)?)),
        Activation::ReluN1To1 => (qmin.max(q(-1.0)?), qmax.min(q(1.0)?)),
        Activation::None | Activation::Tanh | Activation::SignBit => (qmin, qmax),
    })
}

/// [`calculate_activation_range_quantized`] for an int8 output.
pub fn activation_range_i8(
    activation: Activation,
    scale: f32,
    zero_point: i32,
) -> Result<(i32, i32), PrepareError> {
    calculate_activation_range_quantized(
        activation,
        scale,
        zero_point,
        i8::MIN as i32,
        i8::MAX as i32,
    )
}

/// [`calculate_activation_range_quantized`] for an int16 output.
pub fn activation_range_i16(
    activation: Activation,
    scale: f32,
    zero_point: i32,
) -> Result<(i32, i32), PrepareError> {
    calculate_activation_range_quantized(
        activation,
        scale,
        zero_point,
        i16::MIN as i32,
        i16::MAX as i32,
    )
}

/// `tflite::CalculateActivationRange<float>`: the float clamping range of a fused activation.
pub fn activation_range_f32(activation: Activation) -> (f32, f32) {
    match activation {
        Activation::Relu => (0.0, f32::MAX),
        Activation::Relu6 => (0.0, 6.0),
        Activation::ReluN1To1 => (-1.0, 1.0),
        Activation::None | Activation::Tanh | Activation::SignBit => (f32::MIN, f32::MAX),
    }
}

/// `tflite::ComputeOutSize`: output extent of a windowed op (`0` when `stride == 0`).
pub const fn compute_out_size(
    padding: Padding,
    image_size: usize,
    filter_size: usize,
    stride: usize,
    dilation: usize,
) -> usize {
    let effective_filter_size = (filter_size.saturating_sub(1)) * dilation + 1;
    if stride == 0 {
        return 0;
    }
    match padding {
        Padding::Same => image_size.div_ceil(stride),
        Padding::Valid => (image_size + stride).saturating_sub(effective_filter_size) / stride,
    }
}

/// One spatial axis of `tflite::ComputePaddingHeightWidth`: returns
/// `(out_size, padding_before, extra_padding_after)`.
pub const fn compute_padding_with_offset(
    padding: Padding,
    stride: usize,
    dilation: usize,
    in_size: usize,
    filter_size: usize,
) -> (usize, usize, usize) {
    let out_size = compute_out_size(padding, in_size, filter_size, stride, dilation);
    let effective_filter_size = (filter_size.saturating_sub(1)) * dilation + 1;
    let needed = if out_size == 0 {
        0
    } else {
        (out_size - 1) * stride + effective_filter_size
    };
    let total_padding = needed.saturating_sub(in_size);
    (out_size, total_padding / 2, total_padding % 2)
}

/// Result of `tflite::ComputePaddingHeightWidth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaddingValues {
    /// Output height computed from the padding type (TFLM's `out_height`).
    pub out_height: usize,
    /// Output width computed from the padding type (TFLM's `out_width`).
    pub out_width: usize,
    /// Rows of implicit zero padding before the input (`padding_values.height`).
    pub height: usize,
    /// Columns of implicit zero padding before the input (`padding_values.width`).
    pub width: usize,
    /// Extra padding row after the input (`height_offset`, unused by the reference kernels).
    pub height_offset: usize,
    /// Extra padding column after the input (`width_offset`, unused by the reference kernels).
    pub width_offset: usize,
}

/// `tflite::ComputePaddingHeightWidth`.
#[allow(clippy::too_many_arguments)]
pub const fn compute_padding_height_width(
    padding: Padding,
    stride_height: usize,
    stride_width: usize,
    dilation_height: usize,
    dilation_width: usize,
    in_height: usize,
    in_width: usize,
    filter_height: usize,
    filter_width: usize,
) -> PaddingValues {
    let (out_height, height, height_offset) = compute_padding_with_offset(
        padding,
        stride_height,
        dilation_height,
        in_height,
        filter_height,
    );
    let (out_width, width, width_offset) = compute_padding_with_offset(
        padding,
        stride_width,
        dilation_width,
        in_width,
        filter_width,
    );
    PaddingValues {
        out_height,
        out_width,
        height,
        width,
        height_offset,
        width_offset,
    }
}

/// Per-channel requantization multipliers as TFLM's `PopulateConvolutionQuantizationParams`
/// computes them: for each output channel `i`,
/// `QuantizeMultiplier(double(input_scale) * double(filter_scale[i]) / double(output_scale))`.
/// A single filter scale (per-tensor quantization) is broadcast to all channels. Every shift
/// must be in [`ShiftRange::I32`] (the 16x8 kernels check [`ShiftRange::I64`] on top).
pub fn populate_per_channel_multipliers(
    input_scale: f32,
    filter_scales: &[f32],
    output_scale: f32,
    output_multiplier: &mut [i32],
    output_shift: &mut [i32],
) -> Result<(), PrepareError> {
    let channels = output_multiplier.len();
    if output_shift.len() != channels
        || !(filter_scales.len() == 1 || filter_scales.len() == channels)
    {
        return Err(PrepareError::InvalidShape);
    }
    let per_channel = filter_scales.len() > 1;
    for (i, (m, s)) in output_multiplier
        .iter_mut()
        .zip(output_shift.iter_mut())
        .enumerate()
    {
        let scale = if per_channel {
            filter_scales[i]
        } else {
            filter_scales[0]
        };
        let effective_output_scale = input_scale as f64 * scale as f64 / output_scale as f64;
        (*m, *s) = quantize_multiplier(effective_output_scale, ShiftRange::I32)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every exponent: TFLM's `QuantizeMultiplier` itself.
    const ANY: ShiftRange = ShiftRange {
        min: i32::MIN,
        max: i32::MAX,
    };

    fn qm(x: f64) -> (i32, i32) {
        quantize_multiplier(x, ANY).unwrap()
    }

    #[test]
    fn multipliers_out_of_a_kernels_range_are_refused() {
        let q = |x: f64| quantize_multiplier(x, ShiftRange::I32);
        assert_eq!(q(0.5), Ok((1 << 30, 0)));
        assert_eq!(q(2f64.powi(29)), Ok((1 << 30, 30)));
        // 2^30 needs a left shift of 31: beyond `x * 2^shift` in 32 bits.
        assert_eq!(
            q(2f64.powi(30)),
            Err(PrepareError::ShiftOutOfRange {
                multiplier: 2f64.powi(30),
                shift: Some(31),
                range: ShiftRange::I32
            })
        );
        // An activation scale of 1e-45 below an input scale of 0.5.
        let huge = 0.5f64 / 1.4e-45f32 as f64;
        assert!(matches!(
            q(huge),
            Err(PrepareError::ShiftOutOfRange { shift: Some(s), .. }) if s > 140
        ));
        // Not finite (a float product that overflowed): TFLM aborts.
        for x in [f64::INFINITY, f64::NAN, f64::NEG_INFINITY] {
            assert!(matches!(
                q(x),
                Err(PrepareError::ShiftOutOfRange { shift: None, .. })
            ));
        }
        // Tiny multipliers flush to zero, in every range.
        assert_eq!(q(1e-300), Ok((0, 0)));
        assert_eq!(quantize_multiplier(1e-300, ShiftRange::LEFT), Ok((0, 0)));
        // The 64-bit helper takes exponents below 8 only.
        assert!(quantize_multiplier(127.0, ShiftRange::I64).is_ok());
        assert!(quantize_multiplier(128.0, ShiftRange::I64).is_err());
        assert_eq!(pow2(3), 8.0);
        assert_eq!(pow2(-1074), 0.0);
        assert_eq!(pow2(2000), f64::INFINITY);
    }

    #[test]
    fn frexp_matches_libm() {
        assert_eq!(frexp(1.0), (0.5, 1));
        assert_eq!(frexp(0.75), (0.75, 0));
        assert_eq!(frexp(-3.0), (-0.75, 2));
        assert_eq!(frexp(0.0), (0.0, 0));
        assert_eq!(frexp(f64::MIN_POSITIVE), (0.5, -1021));
        assert_eq!(frexp(f64::from_bits(1)), (0.5, -1073));
        for &x in &[1e-300, 2.71, 123456.789, 2f64.powi(-40), 0.1] {
            let (m, e) = frexp(x);
            assert!((0.5..1.0).contains(&m));
            assert_eq!(m * 2f64.powi(e), x);
        }
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(round_f64(0.5), 1.0);
        assert_eq!(round_f64(-0.5), -1.0);
        assert_eq!(round_f64(1.5), 2.0);
        assert_eq!(round_f64(2.5), 3.0);
        assert_eq!(round_f64(-2.5), -3.0);
        assert_eq!(round_f64(0.49999999999999994), 0.0);
        assert!(round_f64(-0.2).is_sign_negative());
        assert_eq!(round_f32(2.5), 3.0);
        assert_eq!(round_f32(-2.5), -3.0);
        assert_eq!(round_f32(0.49999997), 0.0);
        assert_eq!(round_f32(1e10), 1e10);
        assert_eq!(floor_f64(2.7), 2.0);
        assert_eq!(floor_f64(-2.2), -3.0);
    }

    /// Cases from TFLite's `quantization_util_test.cc`.
    #[test]
    fn quantize_multiplier_tflite_test_values() {
        let q = quantize_multiplier_smaller_than_one_exp;
        assert!(q(-0.1).is_err());
        assert!(q(0.0).is_err());
        assert_eq!(q(0.25), Ok((1073741824, -1)));
        assert_eq!(q(0.50 - 5e-9), Ok((2147483627, -1)));
        assert_eq!(q(0.50 - 1e-10), Ok((1073741824, 0)));
        assert_eq!(q(0.50), Ok((1073741824, 0)));
        assert_eq!(q(0.75), Ok((1610612736, 0)));
        assert_eq!(q(1.0 - 1e-9), Ok((2147483646, 0)));
        assert!(q(1.0 - 1e-15).is_err());
        assert!(q(1.0 - 1e-17).is_err());
        assert!(q(1.0).is_err());

        let g = quantize_multiplier_greater_than_one;
        assert!(g(1.0 + 1e-16).is_err());
        assert_eq!(g(1.0 + 1e-11), Ok((1073741824, 1)));
        assert_eq!(g(1.25), Ok((1342177280, 1)));
        assert_eq!(g(1.50), Ok((1610612736, 1)));
        assert_eq!(g(1.75), Ok((1879048192, 1)));
        assert_eq!(g(2.0 - 1e-9), Ok((2147483647, 1)));
        assert_eq!(g(2.0 - 1e-11), Ok((1073741824, 2)));
        assert_eq!(g(2.0), Ok((1073741824, 2)));

        for (v, m, s) in [
            (-4.0, -1073741824, 3),
            (-2.0, -1073741824, 2),
            (-1.0, -1073741824, 1),
            (-0.5, -1073741824, 0),
            (-0.25, -1073741824, -1),
            (-0.125, -1073741824, -2),
            (0.0, 0, 0),
            (0.125, 1073741824, -2),
            (0.25, 1073741824, -1),
            (0.5, 1073741824, 0),
            (1.0, 1073741824, 1),
            (2.0, 1073741824, 2),
            (4.0, 1073741824, 3),
        ] {
            assert_eq!(qm(v), (m, s), "{v}");
        }
    }

    #[test]
    fn quantize_multiplier_known_values() {
        assert_eq!(qm(0.0), (0, 0));
        assert_eq!(qm(1.0), (1 << 30, 1));
        assert_eq!(qm(0.5), (1 << 30, 0));
        assert_eq!(qm(2.0), (1 << 30, 2));
        assert_eq!(qm(-1.0), (-(1 << 30), 1));
        assert_eq!(qm(0.25), (1 << 30, -1));
        // 1e-10 = 0.858993459 * 2^-33 -> flushed to zero because shift < -31.
        assert_eq!(qm(1e-10), (0, 0));
        assert_eq!(qm(0.1), (1_717_986_918, -3));
        // A value whose rounded significand reaches 2^31 is renormalized.
        assert_eq!(qm(1.0 - 1e-12), (1 << 30, 1));
        // 1.5e9 = 0.6984919309616089 * 2^31
        assert_eq!(qm(1.5e9), (1_500_000_000, 31));
    }

    #[test]
    fn quantize_multiplier_round_trips() {
        for &x in &[
            0.003921568859368563,
            0.0235294122248888,
            1.0 / 3.0,
            7.5,
            1234.5678,
            0.9999,
        ] {
            let (m, s) = qm(x);
            assert!(m >= 1 << 30, "{x}");
            let back = m as f64 / 2f64.powi(31) * 2f64.powi(s);
            assert!((back - x).abs() <= x * 2f64.powi(-30), "{x} {back}");
        }
    }

    #[test]
    fn smaller_and_greater_than_one() {
        assert_eq!(
            quantize_multiplier_smaller_than_one_exp(0.5),
            Ok((1 << 30, 0))
        );
        assert_eq!(
            quantize_multiplier_smaller_than_one_exp(0.25),
            Ok((1 << 30, -1))
        );
        assert_eq!(
            quantize_multiplier_smaller_than_one_exp(1.0),
            Err(PrepareError::MultiplierOutOfRange)
        );
        assert_eq!(
            quantize_multiplier_smaller_than_one_exp(0.0),
            Err(PrepareError::MultiplierOutOfRange)
        );
        assert_eq!(quantize_multiplier_greater_than_one(2.0), Ok((1 << 30, 2)));
        assert_eq!(
            quantize_multiplier_greater_than_one(1.0),
            Err(PrepareError::MultiplierOutOfRange)
        );
    }

    #[test]
    fn softmax_scaling_and_radius() {
        // beta = 1, input_scale = 1/16 (a common int8 softmax input): 2^26 / 16 = 2^22.
        let (m, s) = preprocess_softmax_scaling(1.0, 1.0 / 16.0, 5).unwrap();
        assert_eq!((m, s), (1 << 30, 23));
        // 31 * 2^26 / 2^23 = 248
        assert_eq!(calculate_input_radius(5, 23, 31), 248);
        // Huge scales are capped at 2^31 - 1.
        let (m, s) = preprocess_softmax_scaling(1.0, 1e6, 5).unwrap();
        assert_eq!((m, s), (i32::MAX, 31));
        assert_eq!(calculate_input_radius(5, 31, 31), 0);
    }

    #[test]
    fn activation_ranges() {
        assert_eq!(
            activation_range_i8(Activation::None, 0.1, 3),
            Ok((-128, 127))
        );
        assert_eq!(activation_range_i8(Activation::Relu, 0.1, 3), Ok((3, 127)));
        assert_eq!(
            activation_range_i8(Activation::Relu6, 0.1, -128),
            Ok((-128, -68))
        );
        assert_eq!(
            activation_range_i8(Activation::Relu6, 0.01, -128),
            Ok((-128, 127))
        );
        assert_eq!(
            activation_range_i8(Activation::ReluN1To1, 0.1, 0),
            Ok((-10, 10))
        );
        // 6 / 0.08 = 75 exactly-ish in float; rounding half away from zero on .5 cases.
        assert_eq!(activation_range_i8(Activation::Relu6, 0.4, 0), Ok((0, 15)));
        assert_eq!(
            activation_range_i8(Activation::Relu6, 1e-12, 0),
            Err(PrepareError::ActivationRangeOverflow)
        );
        assert_eq!(
            activation_range_i16(Activation::Relu, 0.001, 0),
            Ok((0, 32767))
        );
        assert_eq!(activation_range_f32(Activation::Relu6), (0.0, 6.0));
        assert_eq!(activation_range_f32(Activation::None), (f32::MIN, f32::MAX));
    }

    #[test]
    fn padding_matches_tflm() {
        // SAME, stride 2, 3x3 on 5x5: out 3, total padding (2*2+3-5)=2 -> 1 before.
        let p = compute_padding_height_width(Padding::Same, 2, 2, 1, 1, 5, 5, 3, 3);
        assert_eq!(
            (
                p.out_height,
                p.out_width,
                p.height,
                p.width,
                p.height_offset
            ),
            (3, 3, 1, 1, 0)
        );
        // SAME, stride 2, 3x3 on 4x4: out 2, total (1*2+3-4)=1 -> 0 before, offset 1.
        let p = compute_padding_height_width(Padding::Same, 2, 2, 1, 1, 4, 4, 3, 3);
        assert_eq!((p.out_height, p.height, p.height_offset), (2, 0, 1));
        // VALID: no padding.
        let p = compute_padding_height_width(Padding::Valid, 1, 1, 1, 1, 5, 5, 3, 3);
        assert_eq!((p.out_height, p.height, p.width), (3, 0, 0));
        // Dilation 2 with 3x3 (effective 5) SAME on 7: out 7, total 4 -> 2.
        let p = compute_padding_height_width(Padding::Same, 1, 1, 2, 2, 7, 7, 3, 3);
        assert_eq!((p.out_height, p.height), (7, 2));
        assert_eq!(compute_out_size(Padding::Valid, 2, 3, 1, 1), 0);
    }

    #[test]
    fn per_channel_multipliers() {
        let mut m = [0; 3];
        let mut s = [0; 3];
        populate_per_channel_multipliers(0.5, &[0.5, 0.25, 1.0], 0.25, &mut m, &mut s).unwrap();
        assert_eq!(m, [1 << 30; 3]);
        assert_eq!(s, [1, 0, 2]);
        populate_per_channel_multipliers(0.5, &[0.5], 0.25, &mut m, &mut s).unwrap();
        assert_eq!(s, [1, 1, 1]);
        assert!(populate_per_channel_multipliers(0.5, &[0.5, 0.5], 0.25, &mut m, &mut s).is_err());
    }
}
