//! SVDF (singular value decomposition filter), int8 and float.
//!
//! Follows TFLM's `svdf_common.cc`: `PrepareSvdf` and `EvalIntegerSvdfReference<T>` (int8
//! input/output with an int8 or int16 activation state and time weights of the same type) and
//! `EvalFloatSvdfReference`.
//!
//! One invocation, per batch `b`:
//!
//! 1. The activation state `[batches, num_filters * memory_size]` (row `f` of batch `b` holds
//!    that filter's last `memory_size` activations, oldest first) is shifted left by one
//!    element.
//! 2. Feature matmul: for every filter `f`, `sum_d weights_feature[f][d] * (x[d] - input_zp)`
//!    is requantized with `effective_scale_1`, saturated to the state type, offset by the state
//!    zero point and written (narrowed with wrapping, `static_cast<T>`) to the newest slot
//!    `state[b][f][memory_size - 1]`. This is the pinned TFLM's order; newer TFLM sources add
//!    the zero point before saturating, which differs when an int8 state saturates with a
//!    non-zero zero point (the golden tests contain such cases).
//! 3. Time: `t[f] = sum_m weights_time[f][m] * (state[b][f][m] - state_zp)` (i32).
//! 4. `acc[u] = bias[u] + sum_{r < rank} t[u * rank + r]`, requantized with
//!    `effective_scale_2`, offset by the output zero point and saturated to int8. The integer
//!    kernel applies no fused activation (TFLM ignores it; the converter's RELU outputs have
//!    zero point -128 anyway), the float kernel applies it.
//!
//! Layouts (TFLite's): input `[batches, input_size]`, weights_feature
//! `[num_filters, input_size]`, weights_time `[num_filters, memory_size]`, bias `[num_units]`,
//! state `[batches, num_filters * memory_size]`, output `[batches, num_units]`, with
//! `num_filters = num_units * rank`.
//!
//! Scratch: none. TFLM keeps the per-filter time products and the per-unit sums in two int32
//! scratch buffers; here they are accumulated in registers, which gives the same values (the
//! integer sums wrap in the same order-independent way, the float sums are formed in TFLM's
//! order: `bias + t[u*rank] + t[u*rank + 1] + ...`, each `t` summed from `0.0` in `m` order).
//!
//! State reset: TFLM's `ResetVariableTensors` (run after `AllocateTensors` and by `reset()`)
//! fills an int8 variable tensor with its zero point byte and any other type with zeros, so
//! an int8 state must start as `[state_zero_point as i8; n]` (see [`reset_state_s8`]), an
//! int16 or float state as zeros.

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::quant::{Activation, PrepareError, QuantParams, ShiftRange, quantize_multiplier};

/// Constant parameters of an SVDF node (TFLM's `OpDataSvdf` plus shapes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// `input.dims[0]`
    pub batches: usize,
    /// `input.dims[1]`
    pub input_size: usize,
    /// `weights_feature.dims[0]` (`num_units * rank`)
    pub num_filters: usize,
    /// `num_filters / rank` (`output.dims[1]`)
    pub num_units: usize,
    /// The `rank` builtin option.
    pub rank: usize,
    /// `weights_time.dims[1]`
    pub memory_size: usize,
    /// Input zero point (subtracted from the input).
    pub input_zero_point: i32,
    /// Activation state zero point.
    pub state_zero_point: i32,
    /// Output zero point (added after requantization).
    pub output_zero_point: i32,
    /// Q31 multiplier of `input_scale * weights_feature_scale / state_scale`.
    pub effective_scale_1_a: i32,
    /// Exponent of `effective_scale_1_a` (`> 0` is a left shift).
    pub effective_scale_1_b: i32,
    /// Q31 multiplier of `state_scale * weights_time_scale / output_scale`.
    pub effective_scale_2_a: i32,
    /// Exponent of `effective_scale_2_a` (`> 0` is a left shift).
    pub effective_scale_2_b: i32,
    /// Float kernel only: whether the fused activation clamps (false for NONE).
    pub float_activation_clamp: bool,
    /// Float kernel only: lower clamp (`0` for RELU/RELU6, `-1` for RELU_N1_TO_1).
    pub float_activation_min: f32,
    /// Float kernel only: upper clamp (`f32::MAX` for RELU, `6` for RELU6, `1` for
    /// RELU_N1_TO_1).
    pub float_activation_max: f32,
}

impl Params {
    const fn shape(
        batches: usize,
        input_size: usize,
        num_filters: usize,
        rank: usize,
        memory_size: usize,
    ) -> Params {
        Params {
            batches,
            input_size,
            num_filters,
            num_units: num_filters / rank,
            rank,
            memory_size,
            input_zero_point: 0,
            state_zero_point: 0,
            output_zero_point: 0,
            effective_scale_1_a: 0,
            effective_scale_1_b: 0,
            effective_scale_2_a: 0,
            effective_scale_2_b: 0,
            float_activation_clamp: false,
            float_activation_min: f32::MIN,
            float_activation_max: f32::MAX,
        }
    }

    /// Elements of the activation state tensor (`batches * num_filters * memory_size`).
    pub const fn state_len(&self) -> usize {
        self.batches * self.num_filters * self.memory_size
    }
}

/// No scratch memory: the kernels accumulate in registers (see the module docs).
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

fn check_shape(
    batches: usize,
    input_size: usize,
    num_filters: usize,
    rank: usize,
    memory_size: usize,
) -> Result<(), PrepareError> {
    if batches == 0
        || input_size == 0
        || num_filters == 0
        || rank == 0
        || memory_size == 0
        || !num_filters.is_multiple_of(rank)
    {
        return Err(PrepareError::InvalidShape);
    }
    Ok(())
}

/// Build-time parameters of an int8 SVDF (`PrepareSvdf`, int8 branch). The same parameters
/// serve [`svdf_s8`] (int8 state and time weights) and [`svdf_s8_s16`] (int16 state and time
/// weights).
///
/// * `batches`, `input_size`: the input's dims; `num_filters`: `weights_feature.dims[0]`;
///   `rank`: the builtin option; `memory_size`: `weights_time.dims[1]`.
/// * `input`: input tensor quantization; `weights_feature_scale`, `weights_time_scale`: those
///   tensors' (per-tensor) scales; `bias_scale`: the int32 bias tensor's scale; `state`: the
///   activation state (variable) tensor's quantization; `output`: the output tensor's.
///
/// As TFLM: `effective_scale_1 = double(float(input_scale * weights_feature_scale) /
/// state_scale)`, `effective_scale_2 = double(float(state_scale * weights_time_scale) /
/// output_scale)`, both through `QuantizeMultiplier`; the bias scale must be within `1e-5` of
/// `float(state_scale * weights_time_scale)`. TFLM's Prepare dereferences the bias tensor, so a
/// missing bias (`None`) is rejected.
#[allow(clippy::too_many_arguments)]
pub fn prepare_s8(
    batches: usize,
    input_size: usize,
    num_filters: usize,
    rank: usize,
    memory_size: usize,
    input: QuantParams,
    weights_feature_scale: f32,
    weights_time_scale: f32,
    bias_scale: Option<f32>,
    state: QuantParams,
    output: QuantParams,
) -> Result<Params, PrepareError> {
    check_shape(batches, input_size, num_filters, rank, memory_size)?;
    let bias_scale = bias_scale.ok_or(PrepareError::UnsupportedQuantization)?;
    let effective_scale_1 = (input.scale * weights_feature_scale / state.scale) as f64;
    let effective_scale_2 = (state.scale * weights_time_scale / output.scale) as f64;
    let diff = bias_scale as f64 - (state.scale * weights_time_scale) as f64;
    let abs_diff = if diff < 0.0 { -diff } else { diff };
    if !(abs_diff < 1e-5) {
        return Err(PrepareError::UnsupportedQuantization);
    }
    let (effective_scale_1_a, effective_scale_1_b) =
        quantize_multiplier(effective_scale_1, ShiftRange::I32)?;
    let (effective_scale_2_a, effective_scale_2_b) =
        quantize_multiplier(effective_scale_2, ShiftRange::I32)?;
    Ok(Params {
        input_zero_point: input.zero_point,
        state_zero_point: state.zero_point,
        output_zero_point: output.zero_point,
        effective_scale_1_a,
        effective_scale_1_b,
        effective_scale_2_a,
        effective_scale_2_b,
        ..Params::shape(batches, input_size, num_filters, rank, memory_size)
    })
}

/// Build-time parameters of a float SVDF. Fused activations NONE, RELU, RELU_N1_TO_1 and
/// RELU6 are supported (TANH and SIGN_BIT are rejected).
pub fn prepare_f32(
    batches: usize,
    input_size: usize,
    num_filters: usize,
    rank: usize,
    memory_size: usize,
    activation: Activation,
) -> Result<Params, PrepareError> {
    check_shape(batches, input_size, num_filters, rank, memory_size)?;
    let (clamp, min, max) = match activation {
        Activation::None => (false, f32::MIN, f32::MAX),
        Activation::Relu => (true, 0.0, f32::MAX),
        Activation::ReluN1To1 => (true, -1.0, 1.0),
        Activation::Relu6 => (true, 0.0, 6.0),
        Activation::Tanh | Activation::SignBit => {
            return Err(PrepareError::UnsupportedQuantization);
        }
    };
    Ok(Params {
        float_activation_clamp: clamp,
        float_activation_min: min,
        float_activation_max: max,
        ..Params::shape(batches, input_size, num_filters, rank, memory_size)
    })
}

/// Fills an int8 activation state as TFLM's `ResetVariableTensors` does: every byte is the
/// state's zero point.
pub fn reset_state_s8(p: &Params, state: &mut [i8]) {
    state.fill(p.state_zero_point as i8);
}

/// Integer state element (int8 or int16), as TFLM's template parameter `T`.
trait StateInt: Copy {
    const MIN: i32;
    const MAX: i32;
    fn get(self) -> i32;
    /// `static_cast<T>` of an in-range value.
    fn put(v: i32) -> Self;
}

impl StateInt for i8 {
    const MIN: i32 = i8::MIN as i32;
    const MAX: i32 = i8::MAX as i32;
    #[inline]
    fn get(self) -> i32 {
        self as i32
    }
    #[inline]
    fn put(v: i32) -> Self {
        v as i8
    }
}

impl StateInt for i16 {
    const MIN: i32 = i16::MIN as i32;
    const MAX: i32 = i16::MAX as i32;
    #[inline]
    fn get(self) -> i32 {
        self as i32
    }
    #[inline]
    fn put(v: i32) -> Self {
        v as i16
    }
}

/// `sum(term(a[i], b[i]))` wrapping in 32 bits (as the reference's `int32_t` sums; the
/// order does not matter), four terms per step written out (opt-level s keeps them
/// unrolled); `a` and `b` of one length.
#[inline(always)]
fn dot_by4<A: Copy, B: Copy>(a: &[A], b: &[B], term: impl Fn(A, B) -> i32) -> i32 {
    debug_assert_eq!(a.len(), b.len());
    let (a4, a_rest) = a.as_chunks::<4>();
    let (b4, b_rest) = b.as_chunks::<4>();
    let mut acc = 0i32;
    for (a, b) in a4.iter().zip(b4) {
        let pair = term(a[0], b[0]).wrapping_add(term(a[1], b[1]));
        let pair2 = term(a[2], b[2]).wrapping_add(term(a[3], b[3]));
        acc = acc.wrapping_add(pair).wrapping_add(pair2);
    }
    for (&a, &b) in a_rest.iter().zip(b_rest) {
        acc = acc.wrapping_add(term(a, b));
    }
    acc
}

fn svdf_integer<T: StateInt>(
    p: &Params,
    input: &[i8],
    weights_feature: &[i8],
    weights_time: &[T],
    bias: Option<&[i32]>,
    state: &mut [T],
    output: &mut [i8],
) {
    let (n_input, n_filter, n_memory, n_rank, n_unit) = (
        p.input_size,
        p.num_filters,
        p.memory_size,
        p.rank,
        p.num_units,
    );
    debug_assert_eq!(input.len(), p.batches * n_input);
    debug_assert!(weights_feature.len() >= n_filter * n_input);
    debug_assert!(weights_time.len() >= n_filter * n_memory);
    debug_assert!(bias.is_none_or(|b| b.len() >= n_unit));
    debug_assert_eq!(state.len(), p.state_len());
    debug_assert_eq!(output.len(), p.batches * n_unit);
    if n_input == 0 || n_filter == 0 || n_memory == 0 || n_rank == 0 {
        return;
    }

    // Left shift the whole state by one element; every row's last slot is rewritten below.
    state.copy_within(1.., 0);

    let state_rows = state.chunks_exact_mut(n_filter * n_memory);
    let out_rows = output.chunks_exact_mut(n_unit);
    for ((x, state_b), out_b) in input.chunks_exact(n_input).zip(state_rows).zip(out_rows) {
        // Feature matmul into the newest slot of every filter row.
        for (w_row, s_row) in weights_feature
            .chunks_exact(n_input)
            .zip(state_b.chunks_exact_mut(n_memory))
        {
            let zp = p.input_zero_point;
            let dot = dot_by4(w_row, x, |w, v| (w as i32).wrapping_mul(v as i32 - zp));
            let scaled =
                multiply_by_quantized_multiplier(dot, p.effective_scale_1_a, p.effective_scale_1_b);
            // The pinned TFLM saturates to the state type first and then adds the zero point,
            // narrowing the sum with a wrapping `static_cast<T>` (newer TFLM sources add the
            // zero point before the clamp; the pinned build does not).
            let v = p
                .state_zero_point
                .wrapping_add(scaled.clamp(T::MIN, T::MAX));
            s_row[n_memory - 1] = T::put(v);
        }

        // Time weights, rank reduction, bias, requantization.
        let mut time_rows = weights_time
            .chunks_exact(n_memory)
            .zip(state_b.chunks_exact(n_memory));
        for (u, o) in out_b.iter_mut().enumerate() {
            let mut acc: i32 = match bias {
                Some(b) => b[u],
                None => 0,
            };
            for _ in 0..n_rank {
                let Some((w_row, s_row)) = time_rows.next() else {
                    break;
                };
                let zp = p.state_zero_point;
                let t = dot_by4(w_row, s_row, |w: T, s: T| {
                    w.get().wrapping_mul(s.get() - zp)
                });
                acc = acc.wrapping_add(t);
            }
            let x2 =
                multiply_by_quantized_multiplier(acc, p.effective_scale_2_a, p.effective_scale_2_b);
            let x3 = x2.wrapping_add(p.output_zero_point);
            *o = x3.clamp(i8::MIN as i32, i8::MAX as i32) as i8;
        }
    }
}

/// Int8 SVDF with an int8 activation state and int8 time weights (`EvalInt8SvdfReference`),
/// TFLM's loops: the reference kernel. `state` is the variable tensor, updated in place.
pub fn svdf_s8(
    p: &Params,
    input: &[i8],
    weights_feature: &[i8],
    weights_time: &[i8],
    bias: Option<&[i32]>,
    state: &mut [i8],
    output: &mut [i8],
) {
    svdf_integer(p, input, weights_feature, weights_time, bias, state, output);
}

/// [`svdf_s8`], byte-identical, on the DSP extension's packed form (private module
/// `packed`: dual 16-bit multiply-accumulates) wherever that applies (a memory size that is
/// a multiple of 4); elsewhere the reference loops.
pub fn svdf_s8_fast(
    p: &Params,
    input: &[i8],
    weights_feature: &[i8],
    weights_time: &[i8],
    bias: Option<&[i32]>,
    state: &mut [i8],
    output: &mut [i8],
) {
    #[cfg(any(kiln_arch = "dsp", all(test, kiln_arch = "portable")))]
    if packed::svdf_s8(p, input, weights_feature, weights_time, bias, state, output) {
        return;
    }
    svdf_integer(p, input, weights_feature, weights_time, bias, state, output);
}

/// The int8 SVDF on the DSP extension's instructions (`crate::arch`), byte-identical with
/// [`svdf_integer`]. Also built for the host's tests (portable arch), on the plain-Rust
/// forms of the instructions.
///
/// * Both dot products four values per step: one load each of values and weights, the
///   values widened with their zero point subtracted by two `SXTAB16` (a zero point's
///   negation in both int16 halves; `x - zp` fits in 16 bits for int8 values and zero
///   points), the weights by two `SXTB16`, two `SMLAD`.
/// * Each filter whole before the next (its feature, its state row, its time product): the
///   state's shift by one is done row by row (only the row's first element leaves it; the
///   whole-state shift moves it into the previous row's newest slot, which that row's feature
///   overwrites anyway) a word at a time, and the time product reads the shifted words from
///   registers.
/// * Requantization by `arch::rq_full` (six instructions, any accumulator: a bias can take
///   the time sums past `rq_shift`'s `2^30`, as tflm_keyword_scrambled_int8's do) for right
///   shifts, else the reference arithmetic.
#[cfg(any(kiln_arch = "dsp", all(test, kiln_arch = "portable")))]
mod packed {
    use super::Params;
    use crate::arch::{rq_full, smlad, ssat8, sxtab16, sxtb16};
    use crate::fixed_point::multiply_by_quantized_multiplier;

    /// Four int8 values as a word (value `i` in byte `i`).
    #[inline(always)]
    fn word(b: [i8; 4]) -> u32 {
        u32::from_le_bytes(b.map(|v| v as u8))
    }

    /// `-zp` in both int16 halves of a word.
    fn offsets(zp: i32) -> u32 {
        ((zp.wrapping_neg() as u16) as u32) * 0x1_0001
    }

    /// `acc + sum_i (x_i - zp) * w_i` over the four bytes of `x` and `w`, `off2` =
    /// [`offsets`]`(zp)`.
    #[inline(always)]
    fn dot4(acc: i32, x: u32, off2: u32, w: u32) -> i32 {
        let acc = smlad(sxtab16::<false>(off2, x), sxtb16::<false>(w), acc);
        smlad(sxtab16::<true>(off2, x), sxtb16::<true>(w), acc)
    }

    /// `MultiplyByQuantizedMultiplier(acc, m, shift) + offset` (wrapping): `arch::rq_full`
    /// for the right shifts (`fast`: `shift` in `-31..=-1` and `m` not `i32::MIN`), else the
    /// reference arithmetic.
    #[inline(always)]
    fn requantize(fast: bool, acc: i32, m: i32, shift: i32, offset: i32) -> i32 {
        if fast {
            rq_full(acc, m, -shift, offset)
        } else {
            requantize_reference(acc, m, shift, offset)
        }
    }

    /// Whether [`requantize`] may take `arch::rq_full` for this multiplier and shift.
    fn rq_full_fits(m: i32, shift: i32) -> bool {
        (-31..=-1).contains(&shift) && m != i32::MIN
    }

    /// [`requantize`] outside `rq_full`'s range (left shifts, or a shift of 0): out of
    /// line, the models' layers do not take it.
    #[cold]
    #[inline(never)]
    fn requantize_reference(acc: i32, m: i32, shift: i32, offset: i32) -> i32 {
        multiply_by_quantized_multiplier(acc, m, shift).wrapping_add(offset)
    }

    /// `sum_i w[i] * (x[i] - zp)` over the shorter of the two.
    #[inline(always)]
    fn dot_offset(x: &[i8], w: &[i8], zp: i32, off2: u32) -> i32 {
        let (x4, x_rest) = x.as_chunks::<4>();
        let (w4, w_rest) = w.as_chunks::<4>();
        let mut acc = 0i32;
        for (&x, &w) in x4.iter().zip(w4) {
            acc = dot4(acc, word(x), off2, word(w));
        }
        for (&x, &w) in x_rest.iter().zip(w_rest) {
            acc = acc.wrapping_add((w as i32).wrapping_mul(x as i32 - zp));
        }
        acc
    }

    /// Shifts `row` (a multiple of 4 bytes) left by one element, `v` entering last, and
    /// returns `sum_m wt[m] * (row[m] - zp)` of the shifted row (`off2` =
    /// [`offsets`]`(zp)`; `wt` at least as long as `row`). Word by word: the shifted word
    /// `i` is the old word `i` shifted right by a byte with the old word `i + 1`'s first
    /// byte on top (each word loaded once, carried to the next step).
    #[inline(always)]
    fn shift_dot(row: &mut [i8], wt: &[i8], v: i8, off2: u32) -> i32 {
        let Some((first, rest)) = row.as_chunks_mut::<4>().0.split_first_mut() else {
            return 0;
        };
        let mut wts = wt.as_chunks::<4>().0.iter();
        let bytes = |s: u32| s.to_le_bytes().map(|b| b as i8);
        let mut prev = first;
        let mut old = word(*prev);
        let mut acc = 0i32;
        for (cur, &w) in rest.iter_mut().zip(&mut wts) {
            let next = word(*cur);
            let s = (old >> 8) | (next << 24);
            *prev = bytes(s);
            acc = dot4(acc, s, off2, word(w));
            (prev, old) = (cur, next);
        }
        if let Some(&w) = wts.next() {
            let s = (old >> 8) | ((v as u8 as u32) << 24);
            *prev = bytes(s);
            acc = dot4(acc, s, off2, word(w));
        }
        acc
    }

    /// The int8 SVDF (see [`super`]'s module docs and [`packed`](self)); `false` (nothing
    /// written) unless the memory size is a non-zero multiple of 4, the zero points are
    /// int8 and every slice is as long as `p` says.
    pub(super) fn svdf_s8(
        p: &Params,
        input: &[i8],
        weights_feature: &[i8],
        weights_time: &[i8],
        bias: Option<&[i32]>,
        state: &mut [i8],
        output: &mut [i8],
    ) -> bool {
        let (n_input, n_filter, n_memory, n_rank, n_unit) = (
            p.input_size,
            p.num_filters,
            p.memory_size,
            p.rank,
            p.num_units,
        );
        let int8 = |zp: i32| (-128..=127).contains(&zp);
        if n_memory == 0
            || !n_memory.is_multiple_of(4)
            || n_input == 0
            || n_rank == 0
            || n_filter != n_unit * n_rank
            || !int8(p.input_zero_point)
            || !int8(p.state_zero_point)
            || input.len() != p.batches * n_input
            || weights_feature.len() < n_filter * n_input
            || weights_time.len() < n_filter * n_memory
            || state.len() != p.state_len()
            || output.len() != p.batches * n_unit
            || bias.is_some_and(|b| b.len() < n_unit)
        {
            return false;
        }
        let (x_zp, s_zp) = (p.input_zero_point, p.state_zero_point);
        let (x_off, s_off) = (offsets(x_zp), offsets(s_zp));
        let (m1, shift1) = (p.effective_scale_1_a, p.effective_scale_1_b);
        let (m2, shift2) = (p.effective_scale_2_a, p.effective_scale_2_b);
        let (fast1, fast2) = (rq_full_fits(m1, shift1), rq_full_fits(m2, shift2));
        let state_rows = state.chunks_exact_mut(n_filter * n_memory);
        let out_rows = output.chunks_exact_mut(n_unit);
        for ((x, state_b), out_b) in input.chunks_exact(n_input).zip(state_rows).zip(out_rows) {
            let mut filters = weights_feature
                .chunks_exact(n_input)
                .zip(weights_time.chunks_exact(n_memory))
                .zip(state_b.chunks_exact_mut(n_memory));
            for (u, o) in out_b.iter_mut().enumerate() {
                let mut acc = bias.map_or(0, |b| b[u]);
                for _ in 0..n_rank {
                    let Some(((wf, wt), row)) = filters.next() else {
                        break;
                    };
                    let dot = dot_offset(x, wf, x_zp, x_off);
                    // Saturated to int8, then the zero point added and narrowed (the pinned
                    // TFLM's order, see `svdf_integer`).
                    let scaled = requantize(fast1, dot, m1, shift1, 0);
                    let v = s_zp.wrapping_add(ssat8(scaled)) as i8;
                    acc = acc.wrapping_add(shift_dot(row, wt, v, s_off));
                }
                let r = requantize(fast2, acc, m2, shift2, p.output_zero_point);
                *o = ssat8(r) as i8;
            }
        }
        true
    }
}

/// Int8 SVDF with an int16 activation state and int16 time weights
/// (`EvalInt16SvdfReference`). `state` is the variable tensor, updated in place.
pub fn svdf_s8_s16(
    p: &Params,
    input: &[i8],
    weights_feature: &[i8],
    weights_time: &[i16],
    bias: Option<&[i32]>,
    state: &mut [i16],
    output: &mut [i8],
) {
    svdf_integer(p, input, weights_feature, weights_time, bias, state, output);
}

/// `ActivationValFloat` for the clamping activations: `TfLiteMax(lo, TfLiteMin(a, hi))` with
/// `std::min`/`std::max` NaN behaviour (RELU: `max(0, a)`, i.e. `hi = f32::MAX` never wins).
#[inline]
fn activation_f32(p: &Params, a: f32) -> f32 {
    if !p.float_activation_clamp {
        return a;
    }
    // std::min(a, hi) = (hi < a) ? hi : a; std::max(lo, y) = (lo < y) ? y : lo.
    let y = if p.float_activation_max < a {
        p.float_activation_max
    } else {
        a
    };
    if p.float_activation_min < y {
        y
    } else {
        p.float_activation_min
    }
}

/// Float SVDF (`EvalFloatSvdfReference`): same steps as the integer kernels in `f32`, the
/// fused activation applied to the output. `state` is updated in place.
pub fn svdf_f32(
    p: &Params,
    input: &[f32],
    weights_feature: &[f32],
    weights_time: &[f32],
    bias: Option<&[f32]>,
    state: &mut [f32],
    output: &mut [f32],
) {
    let (n_input, n_filter, n_memory, n_rank, n_unit) = (
        p.input_size,
        p.num_filters,
        p.memory_size,
        p.rank,
        p.num_units,
    );
    debug_assert_eq!(input.len(), p.batches * n_input);
    debug_assert!(weights_feature.len() >= n_filter * n_input);
    debug_assert!(weights_time.len() >= n_filter * n_memory);
    debug_assert!(bias.is_none_or(|b| b.len() >= n_unit));
    debug_assert_eq!(state.len(), p.state_len());
    debug_assert_eq!(output.len(), p.batches * n_unit);
    if n_input == 0 || n_filter == 0 || n_memory == 0 || n_rank == 0 {
        return;
    }

    state.copy_within(1.., 0);

    let state_rows = state.chunks_exact_mut(n_filter * n_memory);
    let out_rows = output.chunks_exact_mut(n_unit);
    for ((x, state_b), out_b) in input.chunks_exact(n_input).zip(state_rows).zip(out_rows) {
        for (w_row, s_row) in weights_feature
            .chunks_exact(n_input)
            .zip(state_b.chunks_exact_mut(n_memory))
        {
            let mut dot = 0.0f32;
            for (&w, &v) in w_row.iter().zip(x) {
                dot += w * v;
            }
            s_row[n_memory - 1] = dot;
        }

        let mut time_rows = weights_time
            .chunks_exact(n_memory)
            .zip(state_b.chunks_exact(n_memory));
        for (u, o) in out_b.iter_mut().enumerate() {
            let mut acc = match bias {
                Some(b) => b[u],
                None => 0.0,
            };
            for _ in 0..n_rank {
                let Some((w_row, s_row)) = time_rows.next() else {
                    break;
                };
                let mut t = 0.0f32;
                for (&w, &s) in w_row.iter().zip(s_row) {
                    t += w * s;
                }
                acc += t;
            }
            *o = activation_f32(p, acc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn q(scale: f32, zero_point: i32) -> QuantParams {
        QuantParams { scale, zero_point }
    }

    /// Straightforward transcription of TFLM's loops (two scratch buffers), for comparison.
    fn reference_s8(
        p: &Params,
        input: &[i8],
        wf: &[i8],
        wt: &[i8],
        bias: &[i32],
        state: &mut [i8],
        output: &mut [i8],
    ) {
        let n = state.len();
        for i in 0..n - 1 {
            state[i] = state[i + 1];
        }
        for b in 0..p.batches {
            for r in 0..p.num_filters {
                let mut dot = 0i32;
                for c in 0..p.input_size {
                    dot += wf[r * p.input_size + c] as i32
                        * (input[b * p.input_size + c] as i32 - p.input_zero_point);
                }
                let d = multiply_by_quantized_multiplier(
                    dot,
                    p.effective_scale_1_a,
                    p.effective_scale_1_b,
                );
                let d = p.state_zero_point + d.clamp(-128, 127);
                state[b * p.num_filters * p.memory_size + r * p.memory_size + p.memory_size - 1] =
                    d as i8;
            }
        }
        let mut scratch = vec![0i32; p.batches * p.num_filters];
        for b in 0..p.batches {
            for i in 0..p.num_filters {
                for j in 0..p.memory_size {
                    scratch[b * p.num_filters + i] += wt[i * p.memory_size + j] as i32
                        * (state[b * p.num_filters * p.memory_size + i * p.memory_size + j] as i32
                            - p.state_zero_point);
                }
            }
        }
        let mut out32 = vec![0i32; p.batches * p.num_units];
        for b in 0..p.batches {
            for i in 0..p.num_units {
                out32[b * p.num_units + i] = bias[i];
                for j in 0..p.rank {
                    out32[b * p.num_units + i] += scratch[b * p.num_filters + i * p.rank + j];
                }
            }
        }
        for (o, &x) in output.iter_mut().zip(&out32) {
            let x2 =
                multiply_by_quantized_multiplier(x, p.effective_scale_2_a, p.effective_scale_2_b);
            *o = (x2 + p.output_zero_point).clamp(-128, 127) as i8;
        }
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) as u32
        }
        fn i8(&mut self) -> i8 {
            self.next() as i8
        }
    }

    #[test]
    fn prepare_matches_tflm_formulas() {
        let p = prepare_s8(
            1,
            16,
            64,
            1,
            8,
            q(0.434_007_38, -7),
            0.005_183_118,
            0.006_897_4,
            Some(0.002_961_719_6),
            q(0.429_396_5, -13),
            q(0.131_417_86, -128),
        )
        .unwrap();
        assert_eq!(
            (p.num_units, p.input_zero_point, p.state_zero_point),
            (64, -7, -13)
        );
        let s1 = (0.434_007_38f32 * 0.005_183_118f32 / 0.429_396_5f32) as f64;
        assert_eq!(
            (p.effective_scale_1_a, p.effective_scale_1_b),
            quantize_multiplier(s1, ShiftRange::I32).unwrap()
        );
        // A bias scale off by more than 1e-5 is rejected, a missing bias too.
        let bad = prepare_s8(
            1,
            16,
            64,
            1,
            8,
            q(0.4, -7),
            0.005,
            0.006,
            Some(0.1),
            q(0.4, -13),
            q(0.1, -128),
        );
        assert_eq!(bad, Err(PrepareError::UnsupportedQuantization));
        let no_bias = prepare_s8(
            1,
            16,
            64,
            1,
            8,
            q(0.4, 0),
            0.005,
            0.006,
            None,
            q(0.4, 0),
            q(0.1, 0),
        );
        assert_eq!(no_bias, Err(PrepareError::UnsupportedQuantization));
        assert_eq!(
            prepare_s8(
                1,
                16,
                63,
                2,
                8,
                q(0.4, 0),
                0.1,
                0.1,
                Some(0.04),
                q(0.4, 0),
                q(0.1, 0)
            ),
            Err(PrepareError::InvalidShape)
        );
    }

    #[test]
    fn hand_checked_rank_one() {
        // 1 batch, 2 inputs, 2 filters (rank 1), memory 2. Unit scales: effective scales 1.
        let p = prepare_s8(
            1,
            2,
            2,
            1,
            2,
            q(1.0, 1),
            1.0,
            1.0,
            Some(1.0),
            q(1.0, 0),
            q(1.0, 3),
        )
        .unwrap();
        let wf = [1i8, 2, -1, 1];
        let wt = [1i8, 10, 2, -3];
        let bias = [5i32, -5];
        for svdf in [svdf_s8, svdf_s8_fast] {
            let mut state = [0i8; 4];
            let mut out = [0i8; 2];
            // x - zp = [2, 3]: features [8, 1]; state rows [0, 8], [0, 1].
            svdf(&p, &[3, 4], &wf, &wt, Some(&bias), &mut state, &mut out);
            assert_eq!(state, [0, 8, 0, 1]);
            // unit 0: 5 + 10*8 = 85 (+3); unit 1: -5 - 3 = -8 (+3).
            assert_eq!(out, [88, -5]);
            // x - zp = [0, -1]: features [-2, -1]; rows [8, -2], [1, -1].
            svdf(&p, &[1, 0], &wf, &wt, Some(&bias), &mut state, &mut out);
            assert_eq!(state, [8, -2, 1, -1]);
            // unit 0: 5 + 8 - 20 = -7 (+3); unit 1: -5 + 2 + 3 = 0 (+3).
            assert_eq!(out, [-4, 3]);
        }
    }

    #[test]
    fn matches_transcribed_reference() {
        let mut rng = Lcg(42);
        for case in 0..50 {
            let batches = 1 + case % 3;
            let input_size = 1 + (rng.next() % 9) as usize;
            let rank = 1 + (rng.next() % 3) as usize;
            let num_units = 1 + (rng.next() % 5) as usize;
            let num_filters = rank * num_units;
            let memory_size = 1 + (rng.next() % 6) as usize;
            let p = prepare_s8(
                batches,
                input_size,
                num_filters,
                rank,
                memory_size,
                q(0.05, rng.i8() as i32),
                0.02,
                0.03,
                Some(0.1 * 0.03),
                q(0.1, rng.i8() as i32 / 2),
                q(0.07, rng.i8() as i32),
            )
            .unwrap();
            let wf: Vec<i8> = (0..num_filters * input_size).map(|_| rng.i8()).collect();
            let wt: Vec<i8> = (0..num_filters * memory_size).map(|_| rng.i8()).collect();
            let bias: Vec<i32> = (0..num_units).map(|_| rng.next() as i32 % 2000).collect();
            let mut state = vec![p.state_zero_point as i8; p.state_len()];
            let (mut state_ref, mut state_fast) = (state.clone(), state.clone());
            let mut out = vec![0i8; batches * num_units];
            let (mut out_ref, mut out_fast) = (out.clone(), out.clone());
            for _ in 0..4 {
                let x: Vec<i8> = (0..batches * input_size).map(|_| rng.i8()).collect();
                svdf_s8(&p, &x, &wf, &wt, Some(&bias), &mut state, &mut out);
                svdf_s8_fast(
                    &p,
                    &x,
                    &wf,
                    &wt,
                    Some(&bias),
                    &mut state_fast,
                    &mut out_fast,
                );
                reference_s8(&p, &x, &wf, &wt, &bias, &mut state_ref, &mut out_ref);
                assert_eq!(state, state_ref, "case {case}");
                assert_eq!(out, out_ref, "case {case}");
                assert_eq!(state_fast, state_ref, "case {case}, fast");
                assert_eq!(out_fast, out_ref, "case {case}, fast");
            }
        }
    }

    /// The packed form against `svdf_integer` on random layers: memory sizes that are
    /// multiples of 4, input sizes with every tail, extreme zero points and weights, both
    /// requantizations' fast and reference ranges (left shifts, a shift of 0, sums past
    /// 2^30 through large biases), several batches and ranks, states run over several
    /// invokes.
    #[cfg(any(kiln_arch = "dsp", kiln_arch = "portable"))]
    #[test]
    fn packed_matches_the_generic_kernel() {
        let mut rng = Lcg(7);
        let mut fast_runs = 0;
        for case in 0..400 {
            let batches = 1 + case % 3;
            let input_size = 1 + (rng.next() % 40) as usize;
            let rank = 1 + (rng.next() % 3) as usize;
            let num_units = 1 + (rng.next() % 5) as usize;
            let num_filters = rank * num_units;
            let memory_size = 4 * (1 + (rng.next() % 9) as usize);
            let zp = |rng: &mut Lcg| match rng.next() % 4 {
                0 => -128,
                1 => 127,
                _ => rng.i8() as i32,
            };
            let shift = |rng: &mut Lcg| match rng.next() % 8 {
                0 => 0,
                1 => 1 + (rng.next() % 3) as i32,
                2 => -31,
                _ => -1 - (rng.next() % 14) as i32,
            };
            let p = Params {
                input_zero_point: zp(&mut rng),
                state_zero_point: zp(&mut rng),
                output_zero_point: zp(&mut rng),
                effective_scale_1_a: (1 << 30) + (rng.next() >> 2) as i32,
                effective_scale_1_b: shift(&mut rng),
                effective_scale_2_a: (1 << 30) + (rng.next() >> 2) as i32,
                effective_scale_2_b: shift(&mut rng),
                ..Params::shape(batches, input_size, num_filters, rank, memory_size)
            };
            let extreme = |rng: &mut Lcg| match rng.next() % 4 {
                0 => -128,
                1 => 127,
                _ => rng.i8(),
            };
            let wf: Vec<i8> = (0..num_filters * input_size)
                .map(|_| extreme(&mut rng))
                .collect();
            let wt: Vec<i8> = (0..num_filters * memory_size)
                .map(|_| extreme(&mut rng))
                .collect();
            let bias: Vec<i32> = (0..num_units)
                .map(|_| match rng.next() % 5 {
                    0 => (1 << 30) - (rng.next() % 70_000) as i32,
                    1 => i32::MIN + (rng.next() % 70_000) as i32,
                    _ => rng.next() as i32 % 100_000,
                })
                .collect();
            let bias = (case % 7 != 0).then_some(&bias[..]);
            let mut state = vec![0i8; p.state_len()];
            reset_state_s8(&p, &mut state);
            let mut state_ref = state.clone();
            let mut out = vec![0i8; batches * num_units];
            let mut out_ref = out.clone();
            for _ in 0..3 {
                let x: Vec<i8> = (0..batches * input_size)
                    .map(|_| extreme(&mut rng))
                    .collect();
                assert!(packed::svdf_s8(
                    &p, &x, &wf, &wt, bias, &mut state, &mut out
                ));
                svdf_integer(&p, &x, &wf, &wt, bias, &mut state_ref, &mut out_ref);
                assert_eq!(state, state_ref, "case {case}: {p:?}");
                assert_eq!(out, out_ref, "case {case}: {p:?}");
            }
            fast_runs += (p.effective_scale_1_b < 0 && p.effective_scale_2_b < 0) as usize;
        }
        assert!(fast_runs > 200);
        // Memory sizes that are not multiples of 4 are left to the generic kernel.
        let p = Params::shape(1, 4, 2, 1, 6);
        let mut state = [0i8; 12];
        assert!(!packed::svdf_s8(
            &p,
            &[0; 4],
            &[0; 8],
            &[0; 12],
            None,
            &mut state,
            &mut [0; 2]
        ));
    }

    #[test]
    fn float_hand_checked() {
        let p = prepare_f32(1, 2, 2, 2, 2, Activation::Relu).unwrap();
        assert_eq!(p.num_units, 1);
        let wf = [1.0f32, 0.5, -1.0, 2.0];
        let wt = [1.0f32, 2.0, 0.5, -1.0];
        let mut state = [0.0f32; 4];
        let mut out = [0.0f32; 1];
        svdf_f32(
            &p,
            &[2.0, 4.0],
            &wf,
            &wt,
            Some(&[0.25]),
            &mut state,
            &mut out,
        );
        // features [4, 6]: rows [0, 4], [0, 6]; t = [8, -6]; 0.25 + 8 - 6 = 2.25.
        assert_eq!(state, [0.0, 4.0, 0.0, 6.0]);
        assert_eq!(out, [2.25]);
        svdf_f32(
            &p,
            &[-2.0, 0.0],
            &wf,
            &wt,
            Some(&[0.25]),
            &mut state,
            &mut out,
        );
        // features [-2, 2]: rows [4, -2], [6, 2]; t = [0, 1]; 0.25 + 0 + 1.
        assert_eq!(out, [1.25]);
        svdf_f32(
            &p,
            &[0.0, -4.0],
            &wf,
            &wt,
            Some(&[0.25]),
            &mut state,
            &mut out,
        );
        // features [-2, -8]: rows [-2, -2], [2, -8]; t = [-6, 9]; 0.25 - 6 + 9 = 3.25.
        assert_eq!(out, [3.25]);
        svdf_f32(
            &p,
            &[0.0, 4.0],
            &wf,
            &wt,
            Some(&[-20.0]),
            &mut state,
            &mut out,
        );
        assert_eq!(out, [0.0]); // RELU
        assert!(prepare_f32(1, 2, 2, 2, 2, Activation::Tanh).is_err());
    }

    #[test]
    fn debug_is_a_struct_literal() {
        let p = prepare_f32(1, 2, 2, 1, 2, Activation::None).unwrap();
        let s = std::format!("{p:?}");
        assert!(s.starts_with("Params { batches: 1,"), "{s}");
        assert!(!s.contains("inf") && !s.contains("NaN"), "{s}");
    }
}
