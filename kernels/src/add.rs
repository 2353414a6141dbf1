//! ADD: elementwise sum with optional broadcasting and fused activation.
//!
//! Follows TFLM's `reference_integer_ops::Add`/`BroadcastAdd6DSlow` (int8, `AddFunc`),
//! `reference_ops::AddGeneralParamScale`/`BroadcastAdd6DSlow` (int16, the general-scale path
//! TFLM micro uses) and `reference_ops::Add`/`BroadcastAdd6DSlow` (float). Both quantized
//! inputs are rescaled to a common scale with `left_shift` headroom
//! (`MultiplyByQuantizedMultiplierSmallerThanOneExp`), summed, and requantized to the output.
//! The broadcast and same-shape paths compute the same per-element function, so a kernel
//! can be picked purely on shapes.
//!
//! # The fast int8 kernels
//!
//! `add_s8_fast*` compute TFLM's int8 `AddFunc` exactly with one `SMMULR` per
//! requantization instead of a 64-bit product, nudge and division, and a rounding shift
//! without masks, from constants [`prepare_fast_s8`] derives at build time ([`FastParams`]).
//! Write `a = x + input_offset` (in -255..=255), `m`, `e` for a multiplier and its right
//! shift (`e = -shift`), and `SMMULR(u, v) = floor((u * v + 2^31) / 2^32)`, the rounded
//! high word of a 64-bit product (`arch::smmulr`).
//!
//! * **High multiply.** gemmlowp's `SaturatingRoundingDoublingHighMul(u, m)` adds a nudge
//!   of `2^30` (`1 - 2^30` for a negative product) and divides by `2^31` truncating; both
//!   cases equal `floor((u * m + 2^30) / 2^31)` (for a negative numerator `c = u * m + 1 -
//!   2^30`, truncation is `ceil(c / 2^31) = floor((c + 2^31 - 1) / 2^31)`), and it never
//!   saturates unless `u = m = i32::MIN`. That is `SMMULR(2u, m)` whenever `2u` fits an
//!   `i32`.
//! * **Rounding shift.** gemmlowp's `RoundingDivideByPOT(y, e)` (to nearest, ties away from
//!   zero) is, for `e >= 1`, `(y + (y >> 31) + 2^(e-1)) >> e`: with `y = q * 2^e + r`, `0 <=
//!   r < 2^e`, it is `q + [r > 2^(e-1) - 1 + [y < 0]]` and the sum is `q + [r + 2^(e-1) -
//!   [y < 0] >= 2^e]` (the added term is at least `-1 + 2^(e-1) >= 0`). For `e = 0` it is
//!   the identity.
//! * **Inputs.** The reference rescales `u = a * 2^20` (`|u| < 2^28`, so `2u = a * 2^21`
//!   fits): `s(x) = RoundingDivideByPOT(SMMULR(a * 2^21, m), e)`; `|SMMULR(..)| <= |u| <
//!   2^28`, so the rounding shift cannot overflow. The larger input's multiplier is exactly
//!   0.5 (`m = 2^30, e = 0`; the ratio `scale / (2 * max_scale)` is at most 0.5 and rounds
//!   to `2^30 * 2^0` only there): then `s(x) = a * 2^19`, which `m = 2^31 - 1, e = 1` also
//!   give (`SMMULR(a * 2^21, 2^31 - 1) = round(a * 2^20 - a / 2^11) = a * 2^20`, as `|a /
//!   2^11| < 1/2`, and `a * 2^20` halves exactly), so every input uses the `e >= 1` form.
//! * **Output.** With `S = 2 * (s1 + s2)` (in range when `|s1 + s2| < 2^30`, checked from
//!   the extremes of `s1` and `s2`), the output is `clamp((y + (y >> 31) + 2^(e-1) + zo *
//!   2^e) >> e)` for `y = SMMULR(S, m)` and the output zero point `zo`: adding `zo * 2^e`
//!   before the floor division by `2^e` adds exactly `zo` after it. [`prepare_fast_s8`]
//!   checks that no intermediate leaves `i32`, from the extremes of `y`.
//!
//! [`prepare_fast_s8`] accepts a layer only under these conditions (right shifts 1..=31,
//! the sums in range) and then also compares the fast element function with the reference
//! on all 65536 pairs of int8 inputs, so an accepted layer is byte-identical by
//! construction, not only by the argument above. The same-shape kernels of large tensors
//! look the inputs' rescaling up in two 256-entry tables instead ([`fast_tables_s8`],
//! `2 * s(x)` indexed by the byte `x as u8`), leaving one multiply per element.
//! With Helium (`kiln_arch = "mve"`) those run four elements per step in int32 lanes
//! (`arch::add_s8_tables4`: two gathers from the tables, the output's requantization in
//! vector form); the bundle `add_large_int8` checks them on the emulated M55.

use crate::arch;
use crate::broadcast::{Broadcast, broadcast_binary};
use crate::fixed_point::multiply_by_quantized_multiplier_smaller_than_one_exp;
use crate::quant::{
    Activation, PrepareError, QuantParams, activation_range_f32, activation_range_i8,
    activation_range_i16, quantize_multiplier_smaller_than_one_exp,
};
use crate::util::{clamp_f32, clamp_i32, zip_map, zip_map_in_place1, zip_map_in_place2};

/// Constant parameters of an ADD node (TFLM's `ArithmeticParams` subset used by ADD).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// `-input1_zero_point`
    pub input1_offset: i32,
    /// `-input2_zero_point`
    pub input2_offset: i32,
    /// `output_zero_point`
    pub output_offset: i32,
    /// Headroom shift applied to both inputs (20 for int8, 15 for int16).
    pub left_shift: i32,
    /// Q31 multiplier of input 1 (`scale1 / (2 * max(scale1, scale2))`).
    pub input1_multiplier: i32,
    /// Exponent (`<= 0`) of input 1's multiplier.
    pub input1_shift: i32,
    /// Q31 multiplier of input 2.
    pub input2_multiplier: i32,
    /// Exponent (`<= 0`) of input 2's multiplier.
    pub input2_shift: i32,
    /// Q31 multiplier of the output (`2 * max_scale / (2^left_shift * output_scale)`).
    pub output_multiplier: i32,
    /// Exponent (`<= 0`) of the output multiplier.
    pub output_shift: i32,
    /// Lower clamp of the quantized output.
    pub quantized_activation_min: i32,
    /// Upper clamp of the quantized output.
    pub quantized_activation_max: i32,
    /// Lower clamp of the float output.
    pub float_activation_min: f32,
    /// Upper clamp of the float output.
    pub float_activation_max: f32,
}

const ZERO: Params = Params {
    input1_offset: 0,
    input2_offset: 0,
    output_offset: 0,
    left_shift: 0,
    input1_multiplier: 0,
    input1_shift: 0,
    input2_multiplier: 0,
    input2_shift: 0,
    output_multiplier: 0,
    output_shift: 0,
    quantized_activation_min: 0,
    quantized_activation_max: 0,
    float_activation_min: 0.0,
    float_activation_max: 0.0,
};

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters of a float ADD (`CalculateActivationRange`).
pub fn prepare_f32(activation: Activation) -> Params {
    let (min, max) = activation_range_f32(activation);
    Params {
        float_activation_min: min,
        float_activation_max: max,
        ..ZERO
    }
}

/// Build-time parameters of an int32 ADD. The pinned TFLM wheel's int32 ADD ignores the
/// fused activation (checked on the add_int32 cases: RELU and RELU6 outputs are not clamped,
/// whatever TFLM's source suggests; the wheel wins), so the range is the whole int32 range.
pub fn prepare_s32() -> Params {
    Params {
        quantized_activation_min: i32::MIN,
        quantized_activation_max: i32::MAX,
        ..ZERO
    }
}

/// The quantized part of `CalculateOpDataAdd` for a given `left_shift`.
fn prepare_quantized(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
    left_shift: i32,
) -> Result<Params, PrepareError> {
    // std::max<float>(a, b) = (a < b) ? b : a
    let max_scale = if input1.scale < input2.scale {
        input2.scale
    } else {
        input1.scale
    };
    let twice_max_input_scale = 2.0 * max_scale as f64;
    let real_input1_multiplier = input1.scale as f64 / twice_max_input_scale;
    let real_input2_multiplier = input2.scale as f64 / twice_max_input_scale;
    let real_output_multiplier =
        twice_max_input_scale / ((1i32 << left_shift) as f64 * output.scale as f64);
    let (input1_multiplier, input1_shift) =
        quantize_multiplier_smaller_than_one_exp(real_input1_multiplier)?;
    let (input2_multiplier, input2_shift) =
        quantize_multiplier_smaller_than_one_exp(real_input2_multiplier)?;
    let (output_multiplier, output_shift) =
        quantize_multiplier_smaller_than_one_exp(real_output_multiplier)?;
    Ok(Params {
        input1_offset: -input1.zero_point,
        input2_offset: -input2.zero_point,
        output_offset: output.zero_point,
        left_shift,
        input1_multiplier,
        input1_shift,
        input2_multiplier,
        input2_shift,
        output_multiplier,
        output_shift,
        ..ZERO
    })
}

/// Build-time parameters of an int8 ADD (`CalculateOpDataAdd`, `left_shift = 20`).
pub fn prepare_s8(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
    activation: Activation,
) -> Result<Params, PrepareError> {
    let mut p = prepare_quantized(input1, input2, output, 20)?;
    (p.quantized_activation_min, p.quantized_activation_max) =
        activation_range_i8(activation, output.scale, output.zero_point)?;
    Ok(p)
}

/// Build-time parameters of an int16 ADD (`CalculateOpDataAdd`, `left_shift = 15`).
pub fn prepare_s16(
    input1: QuantParams,
    input2: QuantParams,
    output: QuantParams,
    activation: Activation,
) -> Result<Params, PrepareError> {
    let mut p = prepare_quantized(input1, input2, output, 15)?;
    (p.quantized_activation_min, p.quantized_activation_max) =
        activation_range_i16(activation, output.scale, output.zero_point)?;
    Ok(p)
}

/// Input 1 rescaled to the common scale (the first half of TFLM's `AddFunc`).
#[inline]
fn scaled_input1(p: &Params, x: i32) -> i32 {
    multiply_by_quantized_multiplier_smaller_than_one_exp(
        p.input1_offset
            .wrapping_add(x)
            .wrapping_mul(1i32 << p.left_shift),
        p.input1_multiplier,
        p.input1_shift,
    )
}

/// Input 2 rescaled to the common scale.
#[inline]
fn scaled_input2(p: &Params, y: i32) -> i32 {
    multiply_by_quantized_multiplier_smaller_than_one_exp(
        p.input2_offset
            .wrapping_add(y)
            .wrapping_mul(1i32 << p.left_shift),
        p.input2_multiplier,
        p.input2_shift,
    )
}

/// TFLM's `AddFunc` on widened inputs (shared by int8 and int16).
#[inline]
fn add_func(p: &Params, x: i32, y: i32) -> i32 {
    output_func(p, scaled_input1(p, x).wrapping_add(scaled_input2(p, y)))
}

/// The second half of `AddFunc`: the rescaled sum requantized to the output and clamped.
#[inline]
fn output_func(p: &Params, raw_sum: i32) -> i32 {
    let raw_output = multiply_by_quantized_multiplier_smaller_than_one_exp(
        raw_sum,
        p.output_multiplier,
        p.output_shift,
    )
    .wrapping_add(p.output_offset);
    clamp_i32(
        raw_output,
        p.quantized_activation_min,
        p.quantized_activation_max,
    )
}

/// Elements from which [`add_s8_tables`] pays for its two 256-entry tables (2 KiB of flash).
pub const TABLES_FROM_ELEMENTS: usize = 2048;

/// Build-time tables for [`add_s8_tables`]: every int8 value of each input rescaled to the
/// common scale, indexed by `value + 128`. The kernel then does the same arithmetic as
/// [`add_s8`] with two of its three requantizations looked up, so outputs are identical.
pub fn rescale_tables_s8(p: &Params, table1: &mut [i32; 256], table2: &mut [i32; 256]) {
    for (i, (t1, t2)) in table1.iter_mut().zip(table2.iter_mut()).enumerate() {
        let x = i as i32 - 128;
        *t1 = scaled_input1(p, x);
        *t2 = scaled_input2(p, x);
    }
}

/// The element function of [`add_s8_tables`].
#[inline(always)]
fn add_s8_tables_op(p: &Params, table1: &[i32; 256], table2: &[i32; 256], x: i8, y: i8) -> i8 {
    let sum = table1[(x as i32 + 128) as usize].wrapping_add(table2[(y as i32 + 128) as usize]);
    output_func(p, sum) as i8
}

/// Int8 ADD of two same-shaped tensors with the inputs' rescaling looked up in tables from
/// [`rescale_tables_s8`]; byte-identical with [`add_s8`].
pub fn add_s8_tables(
    p: &Params,
    table1: &[i32; 256],
    table2: &[i32; 256],
    input1: &[i8],
    input2: &[i8],
    output: &mut [i8],
) {
    zip_map(input1, input2, output, |x, y| {
        add_s8_tables_op(p, table1, table2, x, y)
    });
}

/// [`add_s8_tables`] with the output overwriting input 1 (`input1_output` holds input 1 and
/// receives the sum); byte-identical with [`add_s8_tables`].
pub fn add_s8_tables_in_place1(
    p: &Params,
    table1: &[i32; 256],
    table2: &[i32; 256],
    input1_output: &mut [i8],
    input2: &[i8],
) {
    zip_map_in_place1(input1_output, input2, |x, y| {
        add_s8_tables_op(p, table1, table2, x, y)
    });
}

/// [`add_s8_tables`] with the output overwriting input 2 (`input2_output` holds input 2 and
/// receives the sum); byte-identical with [`add_s8_tables`].
pub fn add_s8_tables_in_place2(
    p: &Params,
    table1: &[i32; 256],
    table2: &[i32; 256],
    input1: &[i8],
    input2_output: &mut [i8],
) {
    zip_map_in_place2(input1, input2_output, |x, y| {
        add_s8_tables_op(p, table1, table2, x, y)
    });
}

/// The element function of the int8 ADD kernels.
#[inline(always)]
fn add_s8_op(p: &Params, x: i8, y: i8) -> i8 {
    add_func(p, x as i32, y as i32) as i8
}

/// Int8 ADD of two same-shaped tensors (`reference_integer_ops::Add`).
pub fn add_s8(p: &Params, input1: &[i8], input2: &[i8], output: &mut [i8]) {
    zip_map(input1, input2, output, |x, y| add_s8_op(p, x, y));
}

/// [`add_s8`] with the output overwriting input 1 (`input1_output` holds input 1 and
/// receives the sum); byte-identical with [`add_s8`].
pub fn add_s8_in_place1(p: &Params, input1_output: &mut [i8], input2: &[i8]) {
    zip_map_in_place1(input1_output, input2, |x, y| add_s8_op(p, x, y));
}

/// [`add_s8`] with the output overwriting input 2 (`input2_output` holds input 2 and
/// receives the sum); byte-identical with [`add_s8`].
pub fn add_s8_in_place2(p: &Params, input1: &[i8], input2_output: &mut [i8]) {
    zip_map_in_place2(input1, input2_output, |x, y| add_s8_op(p, x, y));
}

/// Int8 ADD with broadcasting (`reference_integer_ops::BroadcastAdd6DSlow`).
pub fn add_broadcast_s8(
    p: &Params,
    b: &Broadcast,
    input1: &[i8],
    input2: &[i8],
    output: &mut [i8],
) {
    broadcast_binary(b, input1, input2, output, |x, y| add_s8_op(p, x, y));
}

/// Build-time constants of the fast int8 ADD kernels (see the module documentation), from
/// [`prepare_fast_s8`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastParams {
    /// `-input1_zero_point * 2^21`: input 1's offset, left-shifted with the input.
    pub input1_offset: i32,
    /// Input 1's multiplier.
    pub input1_multiplier: i32,
    /// Input 1's right shift, 1..=31.
    pub input1_shift: i32,
    /// `2^(input1_shift - 1)`.
    pub input1_round: i32,
    /// `-input2_zero_point * 2^21`.
    pub input2_offset: i32,
    /// Input 2's multiplier.
    pub input2_multiplier: i32,
    /// Input 2's right shift, 1..=31.
    pub input2_shift: i32,
    /// `2^(input2_shift - 1)`.
    pub input2_round: i32,
    /// The output multiplier.
    pub output_multiplier: i32,
    /// The output's right shift, 1..=31.
    pub output_shift: i32,
    /// `2^(output_shift - 1) + output_zero_point * 2^output_shift`.
    pub output_round: i32,
    /// Lower clamp of the output.
    pub min: i32,
    /// Upper clamp of the output.
    pub max: i32,
}

/// The fast kernels' form of one input's rescaling (`multiplier`, TFLM's `shift <= 0`):
/// `(offset * 2^21, multiplier, right shift 1..=31, 2^(right shift - 1))`, if it exists.
fn fast_input(offset: i32, multiplier: i32, shift: i32) -> Option<(i32, i32, i32, i32)> {
    let (m, e) = match (multiplier, shift) {
        (m, 0) if m == 1 << 30 => (i32::MAX, 1),
        (m, s) if (-31..=-1).contains(&s) && m > 0 => (m, -s),
        _ => return None,
    };
    (-255..=255)
        .contains(&offset)
        .then(|| (offset << 21, m, e, 1 << (e - 1)))
}

/// Whether the fast int8 ADD kernels ([`add_s8_fast`], [`add_s8_fast_tables`],
/// [`add_broadcast_s8_fast`] and their in-place forms) compute this layer byte-identically
/// with [`add_s8`], and their constants: under the conditions of the module documentation,
/// and checked on all 65536 input pairs.
pub fn prepare_fast_s8(p: &Params) -> Option<FastParams> {
    if p.left_shift != 20 || p.output_multiplier <= 0 || !(-31..=-1).contains(&p.output_shift) {
        return None;
    }
    let (input1_offset, input1_multiplier, input1_shift, input1_round) =
        fast_input(p.input1_offset, p.input1_multiplier, p.input1_shift)?;
    let (input2_offset, input2_multiplier, input2_shift, input2_round) =
        fast_input(p.input2_offset, p.input2_multiplier, p.input2_shift)?;
    let e = -p.output_shift;
    let round = (1i64 << (e - 1)) + ((p.output_offset as i64) << e);
    let output_round = i32::try_from(round).ok()?;
    let f = FastParams {
        input1_offset,
        input1_multiplier,
        input1_shift,
        input1_round,
        input2_offset,
        input2_multiplier,
        input2_shift,
        input2_round,
        output_multiplier: p.output_multiplier,
        output_shift: e,
        output_round,
        min: p.quantized_activation_min,
        max: p.quantized_activation_max,
    };
    // The reference's rescaled inputs bound the sums and `y` (monotone in the sum).
    let extremes = |scaled: fn(&Params, i32) -> i32| {
        let v = (-128..=127).map(|x| scaled(p, x) as i64);
        (v.clone().min().unwrap_or(0), v.max().unwrap_or(0))
    };
    let (lo1, hi1) = extremes(scaled_input1);
    let (lo2, hi2) = extremes(scaled_input2);
    let bound = 1i64 << 30;
    if lo1 + lo2 < -bound || hi1 + hi2 >= bound {
        return None;
    }
    let y = |sum: i64| arch::smmulr(2 * sum as i32, f.output_multiplier) as i64;
    let (ylo, yhi) = (y(lo1 + lo2), y(hi1 + hi2));
    if ylo - 1 + round < i32::MIN as i64 || yhi + round > i32::MAX as i64 {
        return None;
    }
    // Checked, not only argued: every input pair.
    let exact = (-128..=127).all(|x| {
        (-128..=127).all(|y| {
            add_s8_fast_op::<false>(&f, x as i8, y as i8) == add_s8_op(p, x as i8, y as i8)
        })
    });
    exact.then_some(f)
}

/// `2 * s(x)` of [`fast_tables_s8`]'s tables: `x`'s rescaling, doubled for the output's
/// `SMMULR`.
#[inline(always)]
fn fast_scaled(x: i8, offset: i32, multiplier: i32, shift: i32, round: i32) -> i32 {
    let y = arch::smmulr(((x as i32) << 21) + offset, multiplier);
    (y + (y >> 31) + round) >> shift
}

/// The fast requantization of `2 * (s1 + s2)`, clamped (`FULL`: the clamp is the whole
/// int8 range, one saturation).
#[inline(always)]
fn fast_output<const FULL: bool>(f: &FastParams, doubled_sum: i32) -> i8 {
    let y = arch::smmulr(doubled_sum, f.output_multiplier);
    let r = (y + (y >> 31) + f.output_round) >> f.output_shift;
    if FULL {
        r.clamp(-128, 127) as i8
    } else {
        r.max(f.min).min(f.max) as i8
    }
}

/// The element function of the fast kernels without tables.
#[inline(always)]
fn add_s8_fast_op<const FULL: bool>(f: &FastParams, x: i8, y: i8) -> i8 {
    let s1 = fast_scaled(
        x,
        f.input1_offset,
        f.input1_multiplier,
        f.input1_shift,
        f.input1_round,
    );
    let s2 = fast_scaled(
        y,
        f.input2_offset,
        f.input2_multiplier,
        f.input2_shift,
        f.input2_round,
    );
    fast_output::<FULL>(f, (s1 + s2) << 1)
}

/// The element function of the fast kernels with tables (Helium's is
/// `arch::add_s8_tables4`; the tests compare the two forms through the kernels).
#[cfg_attr(kiln_arch = "mve", allow(dead_code))]
#[inline(always)]
fn add_s8_fast_tables_op<const FULL: bool>(
    f: &FastParams,
    table1: &[i32; 256],
    table2: &[i32; 256],
    x: i8,
    y: i8,
) -> i8 {
    fast_output::<FULL>(f, table1[x as u8 as usize] + table2[y as u8 as usize])
}

/// Runs `run::<FULL>` with `FULL` true if the clamp is the whole int8 range (one
/// saturation per element instead of two comparisons).
macro_rules! by_clamp {
    ($f:expr, $run:ident ( $($arg:expr),* )) => {
        if $f.min == -128 && $f.max == 127 {
            $run::<true>($($arg),*)
        } else {
            $run::<false>($($arg),*)
        }
    };
}

/// Build-time tables of [`add_s8_fast_tables`]: `2 * s(x)` for each input, indexed by the
/// byte `x as u8` (see the module documentation).
pub fn fast_tables_s8(f: &FastParams, table1: &mut [i32; 256], table2: &mut [i32; 256]) {
    for (i, (t1, t2)) in table1.iter_mut().zip(table2.iter_mut()).enumerate() {
        let x = i as u8 as i8;
        *t1 = 2 * fast_scaled(
            x,
            f.input1_offset,
            f.input1_multiplier,
            f.input1_shift,
            f.input1_round,
        );
        *t2 = 2 * fast_scaled(
            x,
            f.input2_offset,
            f.input2_multiplier,
            f.input2_shift,
            f.input2_round,
        );
    }
}

/// Int8 ADD of two same-shaped tensors for the layers [`prepare_fast_s8`] accepts;
/// byte-identical with [`add_s8`].
pub fn add_s8_fast(f: &FastParams, input1: &[i8], input2: &[i8], output: &mut [i8]) {
    fn run<const FULL: bool>(f: &FastParams, input1: &[i8], input2: &[i8], output: &mut [i8]) {
        zip_map(input1, input2, output, |x, y| {
            add_s8_fast_op::<FULL>(f, x, y)
        });
    }
    by_clamp!(f, run(f, input1, input2, output))
}

/// [`add_s8_fast`] with the output overwriting input 1.
pub fn add_s8_fast_in_place1(f: &FastParams, input1_output: &mut [i8], input2: &[i8]) {
    fn run<const FULL: bool>(f: &FastParams, input1_output: &mut [i8], input2: &[i8]) {
        zip_map_in_place1(input1_output, input2, |x, y| {
            add_s8_fast_op::<FULL>(f, x, y)
        });
    }
    by_clamp!(f, run(f, input1_output, input2))
}

/// [`add_s8_fast`] with the output overwriting input 2.
pub fn add_s8_fast_in_place2(f: &FastParams, input1: &[i8], input2_output: &mut [i8]) {
    fn run<const FULL: bool>(f: &FastParams, input1: &[i8], input2_output: &mut [i8]) {
        zip_map_in_place2(input1, input2_output, |x, y| {
            add_s8_fast_op::<FULL>(f, x, y)
        });
    }
    by_clamp!(f, run(f, input1, input2_output))
}

/// Helium's form of the table kernels (`arch::add_s8_tables4`, four elements per
/// step): the output's constants, with the zero point taken back out of `output_round`
/// (`2^(e-1) + zo * 2^e`, so the subtraction and shift are exact).
#[cfg(kiln_arch = "mve")]
fn mve_tables<'a>(
    f: &FastParams,
    table1: &'a [i32; 256],
    table2: &'a [i32; 256],
) -> arch::AddTables<'a> {
    let e = f.output_shift.clamp(1, 31);
    arch::AddTables {
        t1: table1,
        t2: table2,
        multiplier: f.output_multiplier,
        shift: f.output_shift,
        zero_point: (f.output_round - (1 << (e - 1))) >> e,
        min: f.min,
        max: f.max,
    }
}

/// [`add_s8_fast`] with the inputs' rescaling looked up in the tables of
/// [`fast_tables_s8`]; byte-identical with [`add_s8`].
pub fn add_s8_fast_tables(
    f: &FastParams,
    table1: &[i32; 256],
    table2: &[i32; 256],
    input1: &[i8],
    input2: &[i8],
    output: &mut [i8],
) {
    #[cfg(kiln_arch = "mve")]
    arch::add_s8_tables4(&mve_tables(f, table1, table2), input1, input2, output);
    #[cfg(not(kiln_arch = "mve"))]
    {
        fn run<const FULL: bool>(
            f: &FastParams,
            t1: &[i32; 256],
            t2: &[i32; 256],
            input1: &[i8],
            input2: &[i8],
            output: &mut [i8],
        ) {
            zip_map(input1, input2, output, |x, y| {
                add_s8_fast_tables_op::<FULL>(f, t1, t2, x, y)
            });
        }
        by_clamp!(f, run(f, table1, table2, input1, input2, output))
    }
}

/// [`add_s8_fast_tables`] with the output overwriting input 1.
pub fn add_s8_fast_tables_in_place1(
    f: &FastParams,
    table1: &[i32; 256],
    table2: &[i32; 256],
    input1_output: &mut [i8],
    input2: &[i8],
) {
    #[cfg(kiln_arch = "mve")]
    arch::add_s8_tables4_in_place1(&mve_tables(f, table1, table2), input1_output, input2);
    #[cfg(not(kiln_arch = "mve"))]
    {
        fn run<const FULL: bool>(
            f: &FastParams,
            t1: &[i32; 256],
            t2: &[i32; 256],
            input1_output: &mut [i8],
            input2: &[i8],
        ) {
            zip_map_in_place1(input1_output, input2, |x, y| {
                add_s8_fast_tables_op::<FULL>(f, t1, t2, x, y)
            });
        }
        by_clamp!(f, run(f, table1, table2, input1_output, input2))
    }
}

/// [`add_s8_fast_tables`] with the output overwriting input 2.
pub fn add_s8_fast_tables_in_place2(
    f: &FastParams,
    table1: &[i32; 256],
    table2: &[i32; 256],
    input1: &[i8],
    input2_output: &mut [i8],
) {
    #[cfg(kiln_arch = "mve")]
    arch::add_s8_tables4_in_place2(&mve_tables(f, table1, table2), input1, input2_output);
    #[cfg(not(kiln_arch = "mve"))]
    {
        fn run<const FULL: bool>(
            f: &FastParams,
            t1: &[i32; 256],
            t2: &[i32; 256],
            input1: &[i8],
            input2_output: &mut [i8],
        ) {
            zip_map_in_place2(input1, input2_output, |x, y| {
                add_s8_fast_tables_op::<FULL>(f, t1, t2, x, y)
            });
        }
        by_clamp!(f, run(f, table1, table2, input1, input2_output))
    }
}

/// [`add_broadcast_s8`] for the layers [`prepare_fast_s8`] accepts; byte-identical with it.
pub fn add_broadcast_s8_fast(
    f: &FastParams,
    b: &Broadcast,
    input1: &[i8],
    input2: &[i8],
    output: &mut [i8],
) {
    fn run<const FULL: bool>(
        f: &FastParams,
        b: &Broadcast,
        input1: &[i8],
        input2: &[i8],
        output: &mut [i8],
    ) {
        broadcast_binary(b, input1, input2, output, |x, y| {
            add_s8_fast_op::<FULL>(f, x, y)
        });
    }
    by_clamp!(f, run(f, b, input1, input2, output))
}

/// The element function of the int16 ADD kernels.
#[inline(always)]
fn add_s16_op(p: &Params, x: i16, y: i16) -> i16 {
    add_func(p, x as i32, y as i32) as i16
}

/// Int16 ADD of two same-shaped tensors (`reference_ops::AddGeneralParamScale`).
pub fn add_s16(p: &Params, input1: &[i16], input2: &[i16], output: &mut [i16]) {
    zip_map(input1, input2, output, |x, y| add_s16_op(p, x, y));
}

/// [`add_s16`] with the output overwriting input 1 (`input1_output` holds input 1 and
/// receives the sum); byte-identical with [`add_s16`].
pub fn add_s16_in_place1(p: &Params, input1_output: &mut [i16], input2: &[i16]) {
    zip_map_in_place1(input1_output, input2, |x, y| add_s16_op(p, x, y));
}

/// [`add_s16`] with the output overwriting input 2 (`input2_output` holds input 2 and
/// receives the sum); byte-identical with [`add_s16`].
pub fn add_s16_in_place2(p: &Params, input1: &[i16], input2_output: &mut [i16]) {
    zip_map_in_place2(input1, input2_output, |x, y| add_s16_op(p, x, y));
}

/// Int16 ADD with broadcasting (`reference_ops::BroadcastAdd6DSlow<int16_t>`).
pub fn add_broadcast_s16(
    p: &Params,
    b: &Broadcast,
    input1: &[i16],
    input2: &[i16],
    output: &mut [i16],
) {
    broadcast_binary(b, input1, input2, output, |x, y| add_s16_op(p, x, y));
}

/// The element function of the int32 ADD kernels: the two's-complement sum (TFLM's `int32_t`
/// addition, which wraps on the targets it runs on). No clamp: [`prepare_s32`]'s range is the
/// whole int32 range, and a clamp kept for it costs opt-level s's out-of-line kernels (which
/// do not see the constant parameters) two compares per element.
#[inline(always)]
fn add_s32_op(_p: &Params, x: i32, y: i32) -> i32 {
    x.wrapping_add(y)
}

/// Int32 ADD of two same-shaped tensors (`reference_ops::Add<int32_t>`).
pub fn add_s32(p: &Params, input1: &[i32], input2: &[i32], output: &mut [i32]) {
    zip_map(input1, input2, output, |x, y| add_s32_op(p, x, y));
}

/// [`add_s32`] with the output overwriting input 1; byte-identical with [`add_s32`].
pub fn add_s32_in_place1(p: &Params, input1_output: &mut [i32], input2: &[i32]) {
    zip_map_in_place1(input1_output, input2, |x, y| add_s32_op(p, x, y));
}

/// [`add_s32`] with the output overwriting input 2; byte-identical with [`add_s32`].
pub fn add_s32_in_place2(p: &Params, input1: &[i32], input2_output: &mut [i32]) {
    zip_map_in_place2(input1, input2_output, |x, y| add_s32_op(p, x, y));
}

/// Int32 ADD with broadcasting (`reference_ops::BroadcastAdd6DSlow<int32_t>`).
pub fn add_broadcast_s32(
    p: &Params,
    b: &Broadcast,
    input1: &[i32],
    input2: &[i32],
    output: &mut [i32],
) {
    broadcast_binary(b, input1, input2, output, |x, y| add_s32_op(p, x, y));
}

/// The element function of the float ADD kernels: `clamp(x + y)`.
#[inline(always)]
fn add_f32_op(p: &Params, x: f32, y: f32) -> f32 {
    clamp_f32(x + y, p.float_activation_min, p.float_activation_max)
}

/// Float ADD of two same-shaped tensors (`reference_ops::Add`): `clamp(x + y)`.
pub fn add_f32(p: &Params, input1: &[f32], input2: &[f32], output: &mut [f32]) {
    zip_map(input1, input2, output, |x, y| add_f32_op(p, x, y));
}

/// [`add_f32`] with the output overwriting input 1 (`input1_output` holds input 1 and
/// receives the sum); byte-identical with [`add_f32`].
pub fn add_f32_in_place1(p: &Params, input1_output: &mut [f32], input2: &[f32]) {
    zip_map_in_place1(input1_output, input2, |x, y| add_f32_op(p, x, y));
}

/// [`add_f32`] with the output overwriting input 2 (`input2_output` holds input 2 and
/// receives the sum); byte-identical with [`add_f32`].
pub fn add_f32_in_place2(p: &Params, input1: &[f32], input2_output: &mut [f32]) {
    zip_map_in_place2(input1, input2_output, |x, y| add_f32_op(p, x, y));
}

/// Float ADD with broadcasting (`reference_ops::BroadcastAdd6DSlow<float>`).
pub fn add_broadcast_f32(
    p: &Params,
    b: &Broadcast,
    input1: &[f32],
    input2: &[f32],
    output: &mut [f32],
) {
    broadcast_binary(b, input1, input2, output, |x, y| add_f32_op(p, x, y));
}

#[cfg(test)]
mod fast_tests {
    use super::*;
    use std::vec::Vec;

    /// xorshift32: deterministic parameters without a dependency.
    struct Rng(u32);

    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 17;
            self.0 ^= self.0 << 5;
            self.0
        }
        /// Log-uniform in `[2^-12, 2^2)`.
        fn scale(&mut self) -> f32 {
            (2f64.powf(-12.0 + 14.0 * (self.next() as f64 / 2f64.powi(32)))) as f32
        }
        fn zero_point(&mut self) -> i32 {
            match self.next() % 4 {
                0 => -128,
                1 => 127,
                _ => (self.next() % 256) as i32 - 128,
            }
        }
    }

    /// Every fast kernel (with and without tables, both in-place forms, broadcasting) on
    /// all 65536 int8 input pairs, against the reference element function, for many seeded
    /// parameter sets: scales over four decades in both orders, equal scales (both inputs
    /// at multiplier 0.5), zero points at the extremes, every activation.
    #[test]
    fn fast_kernels_equal_the_reference_on_every_pair() {
        let x: Vec<i8> = (0..65536).map(|i| (i & 0xff) as u8 as i8).collect();
        let y: Vec<i8> = (0..65536).map(|i| (i >> 8) as u8 as i8).collect();
        let acts = [
            Activation::None,
            Activation::Relu,
            Activation::Relu6,
            Activation::ReluN1To1,
        ];
        let mut rng = Rng(0x9e37_79b9);
        let (mut tried, mut accepted) = (0, 0);
        for case in 0..48 {
            let q = |scale, zero_point| QuantParams { scale, zero_point };
            let s1 = rng.scale();
            let s2 = if case % 8 == 0 { s1 } else { rng.scale() };
            // Output scales from about the inputs' down to 2^-6 of them and up to 2^4.
            let so = s1.max(s2) * 2f32.powf((rng.next() % 11) as f32 - 6.0);
            let (z1, z2, zo) = (rng.zero_point(), rng.zero_point(), rng.zero_point());
            let act = acts[case % 4];
            let Ok(p) = prepare_s8(q(s1, z1), q(s2, z2), q(so, zo), act) else {
                continue;
            };
            tried += 1;
            let mut want = std::vec![0i8; 65536];
            add_s8(&p, &x, &y, &mut want);
            let Some(f) = prepare_fast_s8(&p) else {
                continue;
            };
            accepted += 1;
            let what = std::format!("case {case}: {p:?}");
            let mut got = std::vec![0i8; 65536];
            add_s8_fast(&f, &x, &y, &mut got);
            assert_eq!(got, want, "{what}");
            let (mut t1, mut t2) = ([0; 256], [0; 256]);
            fast_tables_s8(&f, &mut t1, &mut t2);
            add_s8_fast_tables(&f, &t1, &t2, &x, &y, &mut got);
            assert_eq!(got, want, "tables {what}");
            let mut d = x.clone();
            add_s8_fast_in_place1(&f, &mut d, &y);
            assert_eq!(d, want, "in place 1 {what}");
            let mut d = y.clone();
            add_s8_fast_in_place2(&f, &x, &mut d);
            assert_eq!(d, want, "in place 2 {what}");
            let mut d = x.clone();
            add_s8_fast_tables_in_place1(&f, &t1, &t2, &mut d, &y);
            assert_eq!(d, want, "tables in place 1 {what}");
            let mut d = y.clone();
            add_s8_fast_tables_in_place2(&f, &t1, &t2, &x, &mut d);
            assert_eq!(d, want, "tables in place 2 {what}");
            // Broadcasting: x as [256, 256] against each row of 256 values of y.
            let b = Broadcast::new(&[256, 256], &[256]).unwrap();
            let row: Vec<i8> = (0..256).map(|i| i as u8 as i8).collect();
            let mut want_b = std::vec![0i8; 65536];
            add_broadcast_s8(&p, &b, &y, &row, &mut want_b);
            add_broadcast_s8_fast(&f, &b, &y, &row, &mut got);
            assert_eq!(got, want_b, "broadcast {what}");
        }
        // Only layers with output scales far below the inputs' (shifts beyond 31) may be
        // refused.
        assert!(tried >= 40 && accepted == tried, "{accepted} of {tried}");
    }

    /// The fast kernels refuse what they cannot compute exactly.
    #[test]
    fn fast_refuses_out_of_range_shifts() {
        let q = |scale, zero_point| QuantParams { scale, zero_point };
        let p = prepare_s8(q(1.0, 0), q(0.5, 3), q(0.8, -1), Activation::None).unwrap();
        assert!(prepare_fast_s8(&p).is_some());
        let mut bad = p;
        bad.output_shift = 0;
        assert_eq!(prepare_fast_s8(&bad), None);
        let mut bad = p;
        bad.input2_shift = -32;
        assert_eq!(prepare_fast_s8(&bad), None);
        let mut bad = p;
        bad.left_shift = 15;
        assert_eq!(prepare_fast_s8(&bad), None);
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;

    /// The table kernel equals the direct one on every pair of int8 values, for scales that
    /// make the rescaling shift both ways and with zero points at the extremes.
    #[test]
    fn tables_give_the_same_bytes_as_add_func() {
        let cases = [
            (0.05, -128, 0.02, 127, 0.07, 3, Activation::None),
            (0.5, 0, 0.001, -5, 0.3, -128, Activation::Relu),
            (0.0125, 17, 0.0124, -17, 0.02, 0, Activation::Relu6),
        ];
        let x: [i8; 256] = core::array::from_fn(|i| (i as i32 - 128) as i8);
        for (s1, z1, s2, z2, so, zo, act) in cases {
            let q = |scale, zero_point| QuantParams { scale, zero_point };
            let p = prepare_s8(q(s1, z1), q(s2, z2), q(so, zo), act).unwrap();
            let (mut t1, mut t2) = ([0; 256], [0; 256]);
            rescale_tables_s8(&p, &mut t1, &mut t2);
            for y in x {
                let ys = [y; 256];
                let (mut a, mut b) = ([0i8; 256], [0i8; 256]);
                add_s8(&p, &x, &ys, &mut a);
                add_s8_tables(&p, &t1, &t2, &x, &ys, &mut b);
                assert_eq!(a, b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(scale: f32, zero_point: i32) -> QuantParams {
        QuantParams { scale, zero_point }
    }

    /// Real-valued check: the int8 result is within one output step of the exact sum.
    #[test]
    fn int8_is_close_to_real_sum() {
        let (a, b, o) = (q(0.05, -3), q(0.02, 10), q(0.07, 5));
        let p = prepare_s8(a, b, o, Activation::None).unwrap();
        assert_eq!(p.left_shift, 20);
        for x in (-128i32..=127).step_by(7) {
            for y in (-128i32..=127).step_by(5) {
                let mut out = [0i8];
                add_s8(&p, &[x as i8], &[y as i8], &mut out);
                let real =
                    a.scale * (x - a.zero_point) as f32 + b.scale * (y - b.zero_point) as f32;
                let expected = (real / o.scale + o.zero_point as f32).clamp(-128.0, 127.0);
                assert!(
                    (out[0] as f32 - expected).abs() <= 1.0,
                    "{x} {y} {} {expected}",
                    out[0]
                );
            }
        }
    }

    #[test]
    fn int8_known_multipliers_and_values() {
        // Equal scales: input multipliers 0.5, output multiplier 2*s/(2^20*s) = 2^-19.
        let p = prepare_s8(q(0.5, 0), q(0.5, 0), q(0.5, 0), Activation::None).unwrap();
        assert_eq!((p.input1_multiplier, p.input1_shift), (1 << 30, 0));
        assert_eq!((p.output_multiplier, p.output_shift), (1 << 30, -18));
        let mut out = [0i8; 4];
        add_s8(&p, &[1, 100, -100, -1], &[2, 100, -100, 0], &mut out);
        assert_eq!(out, [3, 127, -128, -1]);
        let p = prepare_s8(q(0.5, 0), q(0.5, 0), q(0.5, 0), Activation::Relu).unwrap();
        add_s8(&p, &[1, 100, -100, -1], &[2, 100, -100, 0], &mut out);
        assert_eq!(out, [3, 127, 0, 0]);
    }

    #[test]
    fn broadcast_matches_elementwise() {
        let p = prepare_s8(q(0.1, 1), q(0.3, -2), q(0.25, 0), Activation::None).unwrap();
        let in1: [i8; 6] = [1, 2, 3, 4, 5, 6];
        let in2: [i8; 3] = [10, -20, 30];
        let b = Broadcast::new(&[2, 3], &[3]).unwrap();
        let mut out = [0i8; 6];
        add_broadcast_s8(&p, &b, &in1, &in2, &mut out);
        let tiled: [i8; 6] = [10, -20, 30, 10, -20, 30];
        let mut expected = [0i8; 6];
        add_s8(&p, &in1, &tiled, &mut expected);
        assert_eq!(out, expected);
    }

    #[test]
    fn int16_and_float() {
        let p = prepare_s16(
            q(1.0 / 1024.0, 0),
            q(1.0 / 1024.0, 0),
            q(1.0 / 512.0, 0),
            Activation::None,
        )
        .unwrap();
        assert_eq!(p.left_shift, 15);
        let mut out = [0i16; 3];
        add_s16(&p, &[1000, -1000, 32767], &[24, -24, 32767], &mut out);
        assert_eq!(out, [512, -512, 32767]);

        let p = prepare_f32(Activation::Relu6);
        let mut out = [0f32; 3];
        add_f32(&p, &[1.0, -5.0, 4.0], &[2.5, 1.0, 4.0], &mut out);
        assert_eq!(out, [3.5, 0.0, 6.0]);
        let b = Broadcast::new(&[3], &[1]).unwrap();
        add_broadcast_f32(&p, &b, &[1.0, -5.0, 4.0], &[0.5], &mut out);
        assert_eq!(out, [1.5, 0.0, 4.5]);
    }

    #[test]
    fn rejects_tiny_output_scale() {
        // 2 * max_scale / (2^20 * out_scale) >= 1 -> TFLM's CHECK fails.
        assert_eq!(
            prepare_s8(q(1.0, 0), q(1.0, 0), q(1e-7, 0), Activation::None),
            Err(PrepareError::MultiplierOutOfRange)
        );
    }
}
