//! UNIDIRECTIONAL_SEQUENCE_LSTM, int8 activations with an int16 cell state ("8x8->16").
//!
//! Follows TFLM's current LSTM (`unidirectional_sequence_lstm.cc`, `lstm_eval.h`,
//! `lstm_eval.cc`, `lstm_eval_common.cc`, `lstm_shared.h`): the standard (Keras) LSTM only —
//! all four gates (no CIFG), no peephole, no projection, no layer normalization, as TFLM's
//! `LstmTensors::ValidateTensorStatus` requires. Intermediate tensors are ignored (TFLM's
//! current kernel does not read them).
//!
//! Per time step and batch row, for every gate `g` in (forget, input, cell, output):
//!
//! ```text
//! fc_in[i]  = sat16(MBQM(sum_d Wx_g[i][d] * (x[d] - input_zp) + bias_g[i], mx_g, sx_g))
//! fc_rec[i] = sat16(MBQM(sum_d Wh_g[i][d] * (h[d] - hidden_zp),            mh_g, sh_g))
//! gate_g[i] = act_g(sat16(fc_in[i] + fc_rec[i]))        Q3.12 in, Q0.15 out
//! ```
//!
//! with `act` = TFLM's int16 LUT sigmoid (`reference_integer_ops::Logistic`, multiplier 0) for
//! forget/input/output and the LUT tanh (`reference_integer_ops::Tanh`, power -12) for the cell
//! gate; then
//!
//! ```text
//! c[i] = sat16(mul16(forget[i], c[i]) + mul16(input[i], cell[i]))   (then +-clip if clipping)
//! h[i] = sat8(MBQM(tanh_c(c[i]) * output[i], m_hidden, s_hidden) + hidden_zp)
//! ```
//!
//! where `mul16` is `MulElementwise` into int16 (`MBQM` of the int32 product, saturated) and
//! `tanh_c` is the LUT tanh with the cell state's power-of-two scale. The new hidden state is
//! the step's output. `MBQM` is `MultiplyByQuantizedMultiplier` (double rounding). The FC
//! multipliers are `QuantizeMultiplier(double(float(act_scale * weight_scale)) / 2^-12)`;
//! the three multiplications use `QuantizeMultiplier(double(a) * double(b) / double(out))`
//! with `a, b` = 2^-15 for gate outputs.
//!
//! Differences from TFLM's code that do not change a single bit:
//!
//! * The zero-point terms are folded into per-gate effective biases at build time
//!   ([`prepare_s8`] writes them): `sum W * (x - zp) + b == sum W * x + (b - zp * sum W)` in
//!   wrapping int32 arithmetic (TFLM requires weight zero points of 0).
//! * No scratch memory. TFLM computes each gate for the whole state vector into four int16
//!   buffers; but every gate element depends only on the input, the *previous* hidden state
//!   and its own cell element, so the kernel computes all four gates of element `i`, updates
//!   `c[i]`, and writes `h[i]` straight into the step's output slice; the hidden state is
//!   overwritten from that slice only after the whole row (exactly when TFLM overwrites it).
//!
//! Layouts: input `[batches, time_steps, input_size]` (`time_major == false`) or
//! `[time_steps, batches, input_size]` (`time_major == true`), output likewise with
//! `state_size` as last dim; weights `[state_size, input_size]` (input-to-gate) and
//! `[state_size, state_size]` (recurrent); hidden and cell state `[batches, state_size]`.
//!
//! State reset: TFLM's `ResetVariableTensors` fills an int8 variable tensor with its zero
//! point and zeroes the others, so the hidden state starts as `[hidden_zero_point as i8; n]`
//! (see [`reset_state_s8`]) and the int16 cell state as zeros.

use crate::fixed_point::multiply_by_quantized_multiplier;
use crate::quant::{Activation, PrepareError, QuantParams, ShiftRange, frexp, quantize_multiplier};

/// Index of the input gate in the per-gate arrays (TFLite's tensor order).
pub const GATE_INPUT: usize = 0;
/// Index of the forget gate in the per-gate arrays.
pub const GATE_FORGET: usize = 1;
/// Index of the cell gate in the per-gate arrays.
pub const GATE_CELL: usize = 2;
/// Index of the output gate in the per-gate arrays.
pub const GATE_OUTPUT: usize = 3;

/// Constant parameters of an int8 UNIDIRECTIONAL_SEQUENCE_LSTM node (TFLM's `OpDataLSTM`).
/// Per-gate arrays are indexed by [`GATE_INPUT`], [`GATE_FORGET`], [`GATE_CELL`],
/// [`GATE_OUTPUT`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The `time_major` builtin option.
    pub time_major: bool,
    /// Batch size (`input.dims[1]` if time major, else `input.dims[0]`).
    pub batches: usize,
    /// Time steps (`input.dims[0]` if time major, else `input.dims[1]`).
    pub time_steps: usize,
    /// `input.dims[2]`
    pub input_size: usize,
    /// `hidden_state.dims[1]` (number of cells = output depth).
    pub state_size: usize,
    /// Input zero point (folded into the effective biases; informational).
    pub input_zero_point: i32,
    /// Hidden state zero point: offset of the hidden-state multiplication's output (the
    /// recurrent zero-point term is folded into the effective biases).
    pub hidden_zero_point: i32,
    /// Q31 multipliers of the input-to-gate FCs (`input_scale * w_scale / 2^-12`).
    pub input_fc_multiplier: [i32; 4],
    /// Exponents of [`Params::input_fc_multiplier`].
    pub input_fc_shift: [i32; 4],
    /// Q31 multipliers of the recurrent FCs (`hidden_scale * w_scale / 2^-12`).
    pub recurrent_fc_multiplier: [i32; 4],
    /// Exponents of [`Params::recurrent_fc_multiplier`].
    pub recurrent_fc_shift: [i32; 4],
    /// forget gate x cell state -> cell state: multiplier of `2^-15 * cs / cs`.
    pub forget_cell_multiplier: i32,
    /// Exponent of [`Params::forget_cell_multiplier`].
    pub forget_cell_shift: i32,
    /// input gate x cell gate -> cell state: multiplier of `2^-15 * 2^-15 / cs`.
    pub input_cell_multiplier: i32,
    /// Exponent of [`Params::input_cell_multiplier`].
    pub input_cell_shift: i32,
    /// tanh(cell) x output gate -> hidden state: multiplier of `2^-15 * 2^-15 / hidden_scale`.
    pub hidden_multiplier: i32,
    /// Exponent of [`Params::hidden_multiplier`].
    pub hidden_shift: i32,
    /// `round(log2(cell_state_scale))` (TFLM's `cell_state_scale_power`, e.g. -12 for 2^-12).
    pub cell_state_scale_power: i32,
    /// Input multiplier of the LUT tanh applied to the cell state (derived from the power).
    pub cell_tanh_multiplier: i32,
    /// Input right shift of the LUT tanh applied to the cell state.
    pub cell_tanh_shift: i32,
    /// Whether the cell state is clipped (`cell_clip > 0`).
    pub use_cell_clip: bool,
    /// `int16(clamp(cell_clip / cell_state_scale, -32768, 32767))`.
    pub quantized_cell_clip: i32,
}

impl Params {
    /// Elements of the hidden and of the cell state (`batches * state_size`).
    pub const fn state_len(&self) -> usize {
        self.batches * self.state_size
    }

    /// Elements of the input tensor (`batches * time_steps * input_size`).
    pub const fn input_len(&self) -> usize {
        self.batches * self.time_steps * self.input_size
    }

    /// Elements of the output tensor (`batches * time_steps * state_size`).
    pub const fn output_len(&self) -> usize {
        self.batches * self.time_steps * self.state_size
    }
}

/// Length of the effective-bias table that [`prepare_s8`] fills and [`lstm_s8`] reads:
/// `8 * state_size` (input-FC biases of the four gates, then recurrent-FC biases).
pub const fn effective_bias_len(p: &Params) -> usize {
    8 * p.state_size
}

/// No scratch memory (see the module docs; TFLM uses `4 * batches * state_size` int16s).
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// The eight weight matrices of an int8 LSTM (node inputs 1-8), int8, row-major.
#[derive(Clone, Copy, Debug)]
pub struct LstmWeights<'a> {
    /// Input 1, `[state_size, input_size]`.
    pub input_to_input: &'a [i8],
    /// Input 2, `[state_size, input_size]`.
    pub input_to_forget: &'a [i8],
    /// Input 3, `[state_size, input_size]`.
    pub input_to_cell: &'a [i8],
    /// Input 4, `[state_size, input_size]`.
    pub input_to_output: &'a [i8],
    /// Input 5, `[state_size, state_size]`.
    pub recurrent_to_input: &'a [i8],
    /// Input 6, `[state_size, state_size]`.
    pub recurrent_to_forget: &'a [i8],
    /// Input 7, `[state_size, state_size]`.
    pub recurrent_to_cell: &'a [i8],
    /// Input 8, `[state_size, state_size]`.
    pub recurrent_to_output: &'a [i8],
}

impl<'a> LstmWeights<'a> {
    fn input_fc(&self, gate: usize) -> &'a [i8] {
        match gate {
            GATE_INPUT => self.input_to_input,
            GATE_FORGET => self.input_to_forget,
            GATE_CELL => self.input_to_cell,
            _ => self.input_to_output,
        }
    }

    fn recurrent_fc(&self, gate: usize) -> &'a [i8] {
        match gate {
            GATE_INPUT => self.recurrent_to_input,
            GATE_FORGET => self.recurrent_to_forget,
            GATE_CELL => self.recurrent_to_cell,
            _ => self.recurrent_to_output,
        }
    }
}

/// The four int32 gate biases of an int8 LSTM (node inputs 12-15), `[state_size]` each.
#[derive(Clone, Copy, Debug)]
pub struct LstmBiases<'a> {
    /// Input 12.
    pub input_gate: &'a [i32],
    /// Input 13.
    pub forget_gate: &'a [i32],
    /// Input 14.
    pub cell_gate: &'a [i32],
    /// Input 15.
    pub output_gate: &'a [i32],
}

impl<'a> LstmBiases<'a> {
    fn gate(&self, gate: usize) -> &'a [i32] {
        match gate {
            GATE_INPUT => self.input_gate,
            GATE_FORGET => self.forget_gate,
            GATE_CELL => self.cell_gate,
            _ => self.output_gate,
        }
    }
}

/// Shapes, options and tensor quantization of an int8 LSTM node, the inputs of
/// [`prepare_s8`]. Per-gate arrays are indexed by [`GATE_INPUT`], [`GATE_FORGET`],
/// [`GATE_CELL`], [`GATE_OUTPUT`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LstmConfig {
    /// The `time_major` builtin option.
    pub time_major: bool,
    /// Batch size (`input.dims[1]` if time major, else `input.dims[0]`).
    pub batches: usize,
    /// Time steps (`input.dims[0]` if time major, else `input.dims[1]`).
    pub time_steps: usize,
    /// `input.dims[2]`
    pub input_size: usize,
    /// `hidden_state.dims[1]` (= `weights.dims[0]`).
    pub state_size: usize,
    /// The `cell_clip` builtin option (`0` = no clipping; negative is rejected).
    pub cell_clip: f32,
    /// The `fused_activation_function` builtin option, applied to the cell gate (only TANH is
    /// supported here; TFLM also accepts SIGMOID).
    pub activation: Activation,
    /// Input tensor (node input 0) quantization.
    pub input: QuantParams,
    /// Hidden state (`output_state`, node input 18, a variable tensor) quantization.
    pub hidden_state: QuantParams,
    /// Cell state (node input 19, int16 variable tensor) scale, normally a power of two.
    pub cell_state_scale: f32,
    /// Quantization of the input-to-gate weights (node inputs 1-4; zero points must be 0).
    pub input_weights: [QuantParams; 4],
    /// Quantization of the recurrent weights (node inputs 5-8; zero points must be 0).
    pub recurrent_weights: [QuantParams; 4],
}

/// TFLM's Q3.12 gate pre-activation scale (`nonlinear_input_scale`, 2^-12).
const GATE_INPUT_SCALE: f32 = 1.0 / 4096.0;
/// TFLM's Q0.15 gate output scale (`nonlinear_output_scale`, 2^-15).
const GATE_OUTPUT_SCALE: f32 = 1.0 / 32768.0;

/// `CheckedLog2`'s rounded result (TFLM ignores its flag): `round(log2(x))` for a positive `x`.
fn rounded_log2(x: f32) -> i32 {
    let (m, e) = frexp(x as f64);
    // log2(x) = e + log2(m) with m in [0.5, 1): rounds down to e - 1 iff m < 2^-0.5.
    if m < core::f64::consts::FRAC_1_SQRT_2 {
        e - 1
    } else {
        e
    }
}

/// `CreateInterGateMulParams`: `QuantizeMultiplier(double(a) * double(b) / double(out))`.
fn mul_multiplier(a: f32, b: f32, out: f32) -> Result<(i32, i32), PrepareError> {
    quantize_multiplier(a as f64 * b as f64 / out as f64, ShiftRange::I32)
}

/// `GetQuantizedConvolutionMultipler` for a gate FC with a 2^-12 int16 output.
fn fc_multiplier(act_scale: f32, weight_scale: f32) -> Result<(i32, i32), PrepareError> {
    let product = (act_scale * weight_scale) as f64;
    if !(product >= 0.0) {
        return Err(PrepareError::UnsupportedQuantization);
    }
    quantize_multiplier(product / GATE_INPUT_SCALE as f64, ShiftRange::I32)
}

/// Build-time parameters of an int8 LSTM (`UnidirectionalSequenceLstmPrepare` with
/// `PrepareGateParametersInteger` and `CreateLstmCellStateInfo`), plus the folded effective
/// biases: `effective_bias` (length [`effective_bias_len`], `8 * state_size`) receives, for
/// gate `g`, `bias_g[i] - input_zp * sum_d Wx_g[i][d]` at `g * state_size + i` and
/// `-hidden_zp * sum_d Wh_g[i][d]` at `(4 + g) * state_size + i` (wrapping int32).
pub fn prepare_s8(
    config: &LstmConfig,
    weights: &LstmWeights<'_>,
    biases: &LstmBiases<'_>,
    effective_bias: &mut [i32],
) -> Result<Params, PrepareError> {
    let c = config;
    let (n_in, n_state) = (c.input_size, c.state_size);
    if c.batches == 0 || c.time_steps == 0 || n_in == 0 || n_state == 0 {
        return Err(PrepareError::InvalidShape);
    }
    if effective_bias.len() != 8 * n_state {
        return Err(PrepareError::InvalidShape);
    }
    for g in 0..4 {
        if weights.input_fc(g).len() != n_state * n_in
            || weights.recurrent_fc(g).len() != n_state * n_state
            || biases.gate(g).len() != n_state
        {
            return Err(PrepareError::InvalidShape);
        }
        if c.input_weights[g].zero_point != 0 || c.recurrent_weights[g].zero_point != 0 {
            return Err(PrepareError::UnsupportedQuantization);
        }
    }
    if c.activation != Activation::Tanh || !(c.cell_clip >= 0.0) {
        return Err(PrepareError::UnsupportedQuantization);
    }
    if !(c.cell_state_scale > 0.0) {
        return Err(PrepareError::UnsupportedQuantization);
    }

    let mut input_fc_multiplier = [0; 4];
    let mut input_fc_shift = [0; 4];
    let mut recurrent_fc_multiplier = [0; 4];
    let mut recurrent_fc_shift = [0; 4];
    for g in 0..4 {
        (input_fc_multiplier[g], input_fc_shift[g]) =
            fc_multiplier(c.input.scale, c.input_weights[g].scale)?;
        (recurrent_fc_multiplier[g], recurrent_fc_shift[g]) =
            fc_multiplier(c.hidden_state.scale, c.recurrent_weights[g].scale)?;
    }

    let cs = c.cell_state_scale;
    let (forget_cell_multiplier, forget_cell_shift) = mul_multiplier(GATE_OUTPUT_SCALE, cs, cs)?;
    let (input_cell_multiplier, input_cell_shift) =
        mul_multiplier(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, cs)?;
    let (hidden_multiplier, hidden_shift) =
        mul_multiplier(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, c.hidden_state.scale)?;

    let cell_state_scale_power = rounded_log2(cs);
    // lstm_internal::Tanh: left shift (15 + power) - 3; a negative one becomes a rounding
    // right shift with multiplier 3, a non-negative one folds into the multiplier 3 << shift.
    let tanh_left_shift = 15 + cell_state_scale_power - 3;
    let (cell_tanh_multiplier, cell_tanh_shift) = if tanh_left_shift < 0 {
        (3, -tanh_left_shift)
    } else if tanh_left_shift <= 20 {
        (3 << tanh_left_shift, 0)
    } else {
        return Err(PrepareError::UnsupportedQuantization);
    };
    if cell_tanh_shift > 30 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    // static_cast<int16_t>(min(max(double(clip) / double(cs), -32768.0), 32767.0))
    // (cell_clip >= 0 and cs > 0 were checked, so the quotient is not NaN.)
    let clip = (c.cell_clip as f64 / cs as f64).clamp(-32768.0, 32767.0);
    let quantized_cell_clip = clip as i16 as i32;

    // Folded biases.
    let (input_bias, recurrent_bias) = effective_bias.split_at_mut(4 * n_state);
    for g in 0..4 {
        let w = weights.input_fc(g);
        let b = biases.gate(g);
        for (i, out) in input_bias[g * n_state..(g + 1) * n_state]
            .iter_mut()
            .enumerate()
        {
            let row_sum = w[i * n_in..(i + 1) * n_in]
                .iter()
                .fold(0i32, |s, &v| s.wrapping_add(v as i32));
            *out = b[i].wrapping_sub(c.input.zero_point.wrapping_mul(row_sum));
        }
        let w = weights.recurrent_fc(g);
        for (i, out) in recurrent_bias[g * n_state..(g + 1) * n_state]
            .iter_mut()
            .enumerate()
        {
            let row_sum = w[i * n_state..(i + 1) * n_state]
                .iter()
                .fold(0i32, |s, &v| s.wrapping_add(v as i32));
            *out = 0i32.wrapping_sub(c.hidden_state.zero_point.wrapping_mul(row_sum));
        }
    }

    Ok(Params {
        time_major: c.time_major,
        batches: c.batches,
        time_steps: c.time_steps,
        input_size: n_in,
        state_size: n_state,
        input_zero_point: c.input.zero_point,
        hidden_zero_point: c.hidden_state.zero_point,
        input_fc_multiplier,
        input_fc_shift,
        recurrent_fc_multiplier,
        recurrent_fc_shift,
        forget_cell_multiplier,
        forget_cell_shift,
        input_cell_multiplier,
        input_cell_shift,
        hidden_multiplier,
        hidden_shift,
        cell_state_scale_power,
        cell_tanh_multiplier,
        cell_tanh_shift,
        use_cell_clip: c.cell_clip > 0.0,
        quantized_cell_clip,
    })
}

/// Fills an int8 hidden state as TFLM's `ResetVariableTensors` does (every byte is the hidden
/// state's zero point); the int16 cell state resets to zeros.
pub fn reset_state_s8(p: &Params, hidden_state: &mut [i8], cell_state: &mut [i16]) {
    hidden_state.fill(p.hidden_zero_point as i8);
    cell_state.fill(0);
}

/// `sigmoid(i / 24)` in unsigned Q0.16 (`sigmoid_table_uint16` of TFLite's `common.h`).
pub(crate) const SIGMOID_TABLE: [u16; 256] = [
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
];

/// `reference_integer_ops::Logistic` for int16 with `input_multiplier == 0` and
/// `input_left_shift == 0` (Q3.12 in, Q0.15 out), as the LSTM gates call it.
#[inline]
pub fn sigmoid_q3_12(x: i16) -> i16 {
    // Power-of-two case: input_multiplier = 3 << 0, no shift.
    let input = x as i32 * 3;
    let abs = input.unsigned_abs();
    let uh = abs >> 9;
    let result: u32 = if uh >= 255 {
        0x7FFF << 10
    } else {
        let ua = SIGMOID_TABLE[uh as usize] as u32;
        let ub = SIGMOID_TABLE[uh as usize + 1] as u32;
        let ut = abs & 0x1ff;
        (ua << 9).wrapping_add(ut.wrapping_mul(ub.wrapping_sub(ua)))
    };
    let result = if input >= 0 {
        result.wrapping_add(1 << 9)
    } else {
        (1u32 << 25)
            .wrapping_sub(result)
            .wrapping_add(1 << 9)
            .wrapping_sub(1)
    };
    (result >> 10) as i16
}

/// `reference_integer_ops::Tanh` for int16 with an explicit (non-zero) `input_multiplier`
/// and right shift `input_shift` (Q0.15 out).
#[inline]
pub fn tanh_i16(x: i16, input_multiplier: i32, input_shift: i32) -> i16 {
    let round = if input_shift > 0 {
        1i32 << (input_shift - 1)
    } else {
        0
    };
    let input = (x as i32)
        .wrapping_mul(input_multiplier)
        .wrapping_add(round)
        >> input_shift;
    let abs = input.unsigned_abs();
    let uh = abs >> 8;
    let result: i32 = if uh >= 255 {
        0xFFFF << 8
    } else {
        let ua = SIGMOID_TABLE[uh as usize] as u32;
        let ub = SIGMOID_TABLE[uh as usize + 1] as u32;
        let ut = abs & 0xFF;
        (ua << 8).wrapping_add(ut.wrapping_mul(ub.wrapping_sub(ua))) as i32
    };
    let result = if input >= 0 {
        result.wrapping_sub(1 << 23).wrapping_add(1 << 7)
    } else {
        result
            .wrapping_neg()
            .wrapping_add(1 << 23)
            .wrapping_add(1 << 7)
            .wrapping_sub(1)
    };
    (result >> 8) as i16
}

#[inline]
fn sat16(x: i32) -> i32 {
    x.clamp(i16::MIN as i32, i16::MAX as i32)
}

/// One int16 gate pre-activation: both FCs requantized to Q3.12, saturated, added, saturated.
#[inline]
#[allow(clippy::too_many_arguments)]
fn gate_preactivation(
    p: &Params,
    gate: usize,
    i: usize,
    effective_bias: &[i32],
    x: &[i8],
    h: &[i8],
    w_in: &[i8],
    w_rec: &[i8],
) -> i16 {
    let n_in = p.input_size;
    let n_state = p.state_size;
    // The dot products on the target's microkernel (`SMLAD` on the DSP: wrapping int32
    // sums, as the scalar loop's).
    let acc_in = crate::arch::mac_1x1(
        n_in.min(x.len()),
        x,
        &w_in[i * n_in..(i + 1) * n_in],
        effective_bias[gate * n_state + i],
    );
    let fc_in = sat16(multiply_by_quantized_multiplier(
        acc_in,
        p.input_fc_multiplier[gate],
        p.input_fc_shift[gate],
    ));
    let acc_rec = crate::arch::mac_1x1(
        n_state.min(h.len()),
        h,
        &w_rec[i * n_state..(i + 1) * n_state],
        effective_bias[(4 + gate) * n_state + i],
    );
    let fc_rec = sat16(multiply_by_quantized_multiplier(
        acc_rec,
        p.recurrent_fc_multiplier[gate],
        p.recurrent_fc_shift[gate],
    ));
    sat16(fc_in + fc_rec) as i16
}

/// `MulElementwise` of two int16 values into int16 (offsets 0).
#[inline]
fn mul_i16(a: i16, b: i16, multiplier: i32, shift: i32) -> i16 {
    sat16(multiply_by_quantized_multiplier(
        a as i32 * b as i32,
        multiplier,
        shift,
    )) as i16
}

/// One LSTM step for one batch row: updates `cell` in place, writes the new hidden state to
/// `out` (then copied into `hidden`).
fn step_row(
    p: &Params,
    effective_bias: &[i32],
    weights: &LstmWeights<'_>,
    x: &[i8],
    hidden: &mut [i8],
    cell: &mut [i16],
    out: &mut [i8],
) {
    let h: &[i8] = hidden;
    for (i, (c, o)) in cell.iter_mut().zip(out.iter_mut()).enumerate() {
        let pre = |gate: usize| {
            gate_preactivation(
                p,
                gate,
                i,
                effective_bias,
                x,
                h,
                weights.input_fc(gate),
                weights.recurrent_fc(gate),
            )
        };
        let forget = sigmoid_q3_12(pre(GATE_FORGET));
        let input = sigmoid_q3_12(pre(GATE_INPUT));
        // Cell gate: Tanh(cell_state_scale_power = -12): multiplier 3, no shift.
        let cell_gate = tanh_i16(pre(GATE_CELL), 3, 0);

        let kept = mul_i16(forget, *c, p.forget_cell_multiplier, p.forget_cell_shift);
        let added = mul_i16(
            input,
            cell_gate,
            p.input_cell_multiplier,
            p.input_cell_shift,
        );
        let mut new_c = sat16(kept as i32 + added as i32) as i16;
        if p.use_cell_clip {
            // std::max(std::min(clip, c), -clip) in int16.
            let clip = p.quantized_cell_clip as i16;
            let y = if clip < new_c { clip } else { new_c };
            let neg = clip.wrapping_neg();
            new_c = if y < neg { neg } else { y };
        }
        *c = new_c;

        let output_gate = sigmoid_q3_12(pre(GATE_OUTPUT));
        let t = tanh_i16(new_c, p.cell_tanh_multiplier, p.cell_tanh_shift);
        let v = multiply_by_quantized_multiplier(
            t as i32 * output_gate as i32,
            p.hidden_multiplier,
            p.hidden_shift,
        )
        .wrapping_add(p.hidden_zero_point);
        *o = v.clamp(i8::MIN as i32, i8::MAX as i32) as i8;
    }
    hidden.copy_from_slice(out);
}

/// Int8 UNIDIRECTIONAL_SEQUENCE_LSTM (`EvalLstm<int8_t, int8_t, int16_t, int32_t>`).
///
/// `effective_bias` is the table [`prepare_s8`] filled; `hidden_state` (int8, node input 18)
/// and `cell_state` (int16, node input 19) are the variable tensors, updated in place;
/// `output` receives the hidden state of every step. No scratch memory.
pub fn lstm_s8(
    p: &Params,
    effective_bias: &[i32],
    input: &[i8],
    weights: &LstmWeights<'_>,
    hidden_state: &mut [i8],
    cell_state: &mut [i16],
    output: &mut [i8],
) {
    let (n_batch, n_time, n_in, n_state) = (p.batches, p.time_steps, p.input_size, p.state_size);
    debug_assert_eq!(effective_bias.len(), effective_bias_len(p));
    debug_assert_eq!(input.len(), p.input_len());
    debug_assert_eq!(output.len(), p.output_len());
    debug_assert_eq!(hidden_state.len(), p.state_len());
    debug_assert_eq!(cell_state.len(), p.state_len());
    debug_assert!(weights.input_to_input.len() >= n_state * n_in);
    debug_assert!(weights.input_to_forget.len() >= n_state * n_in);
    debug_assert!(weights.input_to_cell.len() >= n_state * n_in);
    debug_assert!(weights.input_to_output.len() >= n_state * n_in);
    debug_assert!(weights.recurrent_to_input.len() >= n_state * n_state);
    debug_assert!(weights.recurrent_to_forget.len() >= n_state * n_state);
    debug_assert!(weights.recurrent_to_cell.len() >= n_state * n_state);
    debug_assert!(weights.recurrent_to_output.len() >= n_state * n_state);
    if n_in == 0 || n_state == 0 {
        return;
    }
    for t in 0..n_time {
        for b in 0..n_batch {
            // Row (b, t) of the input/output: [t][b] if time major, else [b][t].
            let row = if p.time_major {
                t * n_batch + b
            } else {
                b * n_time + t
            };
            step_row(
                p,
                effective_bias,
                weights,
                &input[row * n_in..(row + 1) * n_in],
                &mut hidden_state[b * n_state..(b + 1) * n_state],
                &mut cell_state[b * n_state..(b + 1) * n_state],
                &mut output[row * n_state..(row + 1) * n_state],
            );
        }
    }
}

/// [`lstm_s8`] over its own input, for a state no wider than the input rows (`state_size <=
/// input_size`): `data` holds the input from element `input_at` and receives the output from
/// element `output_at` (at most `input_size - state_size` after `input_at`). Rows run in
/// memory order (for batch-major layouts, batch row after batch row: each has its own state,
/// so the order changes no bit); each row's hidden state goes to `scratch` (`state_size`
/// elements) while its input row is read, and then over it, so output row `r` covers only
/// input rows up to `r`, all read.
#[allow(clippy::too_many_arguments)]
pub fn lstm_s8_in_place(
    p: &Params,
    effective_bias: &[i32],
    data: &mut [i8],
    input_at: usize,
    output_at: usize,
    weights: &LstmWeights<'_>,
    hidden_state: &mut [i8],
    cell_state: &mut [i16],
    scratch: &mut [i8],
) {
    let (n_batch, n_time, n_in, n_state) = (p.batches, p.time_steps, p.input_size, p.state_size);
    debug_assert!(n_state <= n_in && output_at <= input_at + (n_in - n_state));
    debug_assert_eq!(scratch.len(), n_state);
    if n_in == 0 || n_state == 0 || n_state > n_in {
        return;
    }
    for row in 0..n_batch * n_time {
        let b = if p.time_major {
            row % n_batch
        } else {
            row / n_time
        };
        let x = &data[input_at + row * n_in..][..n_in];
        step_row(
            p,
            effective_bias,
            weights,
            x,
            &mut hidden_state[b * n_state..(b + 1) * n_state],
            &mut cell_state[b * n_state..(b + 1) * n_state],
            scratch,
        );
        data[output_at + row * n_state..][..n_state].copy_from_slice(scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigmoid_lut_values() {
        assert_eq!(sigmoid_q3_12(0), 16384); // 0.5 in Q0.15
        // Q3.12 covers [-8, 8): sigmoid(8) = 0.99966.
        assert_eq!(sigmoid_q3_12(i16::MAX), 32757);
        assert_eq!(sigmoid_q3_12(i16::MIN), 11);
        // Close to the real sigmoid everywhere.
        for x in (-32768i32..32768).step_by(7) {
            let r = 1.0 / (1.0 + (-(x as f64) / 4096.0).exp());
            let got = sigmoid_q3_12(x as i16) as f64 / 32768.0;
            assert!((got - r).abs() < 2e-4, "{x}: {got} vs {r}");
        }
    }

    #[test]
    fn tanh_lut_values() {
        assert_eq!(tanh_i16(0, 3, 0), 0);
        assert_eq!(tanh_i16(i16::MAX, 3, 0), 32767);
        assert_eq!(tanh_i16(i16::MIN, 3, 0), -32767);
        for (mult, shift, frac_bits) in [(3, 0, 12), (6, 0, 11), (3, 1, 13)] {
            for x in (-32768i32..32768).step_by(5) {
                let r = (x as f64 / (1u32 << frac_bits) as f64).tanh();
                let got = tanh_i16(x as i16, mult, shift) as f64 / 32768.0;
                assert!((got - r).abs() < 4e-4, "{x}: {got} vs {r}");
            }
        }
    }

    #[test]
    fn log2_rounding() {
        assert_eq!(rounded_log2(0.000_244_140_62), -12);
        assert_eq!(rounded_log2(0.000_488_281_25), -11);
        assert_eq!(rounded_log2(1.0), 0);
        assert_eq!(rounded_log2(0.7), -1);
        assert_eq!(rounded_log2(0.71), 0);
    }

    fn config(n_in: usize, n_state: usize) -> LstmConfig {
        let w = QuantParams {
            scale: 0.01,
            zero_point: 0,
        };
        LstmConfig {
            time_major: false,
            batches: 1,
            time_steps: 1,
            input_size: n_in,
            state_size: n_state,
            cell_clip: 10.0,
            activation: Activation::Tanh,
            input: QuantParams {
                scale: 0.02,
                zero_point: 5,
            },
            hidden_state: QuantParams {
                scale: 1.0 / 128.0,
                zero_point: -3,
            },
            cell_state_scale: 1.0 / 4096.0,
            input_weights: [w; 4],
            recurrent_weights: [w; 4],
        }
    }

    #[test]
    fn prepare_folds_biases_and_computes_tflm_multipliers() {
        let wx = [1i8, 2, 3, -4, 5, 6];
        let wh = [1i8, -1, 2, 2];
        let weights = LstmWeights {
            input_to_input: &wx,
            input_to_forget: &wx,
            input_to_cell: &wx,
            input_to_output: &wx,
            recurrent_to_input: &wh,
            recurrent_to_forget: &wh,
            recurrent_to_cell: &wh,
            recurrent_to_output: &wh,
        };
        let b = [100i32, -100];
        let biases = LstmBiases {
            input_gate: &b,
            forget_gate: &b,
            cell_gate: &b,
            output_gate: &b,
        };
        let mut eb = [0i32; 16];
        let p = prepare_s8(&config(3, 2), &weights, &biases, &mut eb).unwrap();
        // input zp 5: row sums 6 and 7; hidden zp -3: row sums 0 and 4.
        assert_eq!(&eb[0..2], &[100 - 30, -100 - 35]);
        assert_eq!(&eb[8..10], &[0, 12]);
        let (m, s) = quantize_multiplier(
            (0.02f32 * 0.01f32) as f64 / 4096f64.recip(),
            ShiftRange::I32,
        )
        .unwrap();
        assert_eq!(
            (
                p.input_fc_multiplier[GATE_CELL],
                p.input_fc_shift[GATE_CELL]
            ),
            (m, s)
        );
        assert_eq!(
            (p.forget_cell_multiplier, p.forget_cell_shift),
            (1 << 30, -14)
        );
        assert_eq!(
            (p.input_cell_multiplier, p.input_cell_shift),
            (1 << 30, -17)
        );
        // 2^-30 * 128 = 2^-23
        assert_eq!((p.hidden_multiplier, p.hidden_shift), (1 << 30, -22));
        assert_eq!(p.cell_state_scale_power, -12);
        assert_eq!((p.cell_tanh_multiplier, p.cell_tanh_shift), (3, 0));
        // 10 / 2^-12 = 40960 -> 32767
        assert_eq!((p.use_cell_clip, p.quantized_cell_clip), (true, 32767));
        let s = std::format!("{p:?}");
        assert!(s.starts_with("Params { time_major: false,"), "{s}");

        let mut bad = config(3, 2);
        bad.activation = Activation::Relu;
        assert!(prepare_s8(&bad, &weights, &biases, &mut eb).is_err());
        assert_eq!(
            prepare_s8(&config(3, 3), &weights, &biases, &mut eb),
            Err(PrepareError::InvalidShape)
        );
    }

    #[test]
    fn zero_weights_give_the_analytic_cell_update() {
        // All weights zero and biases zero: every gate pre-activation is 0, so
        // forget = input = output = 0.5 and the cell gate is tanh(0) = 0.
        let z4 = [0i8; 4 * 3];
        let z2 = [0i8; 4 * 4];
        let weights = LstmWeights {
            input_to_input: &z4,
            input_to_forget: &z4,
            input_to_cell: &z4,
            input_to_output: &z4,
            recurrent_to_input: &z2,
            recurrent_to_forget: &z2,
            recurrent_to_cell: &z2,
            recurrent_to_output: &z2,
        };
        let zb = [0i32; 4];
        let biases = LstmBiases {
            input_gate: &zb,
            forget_gate: &zb,
            cell_gate: &zb,
            output_gate: &zb,
        };
        let mut cfg = config(3, 4);
        cfg.time_steps = 2;
        cfg.batches = 2;
        let mut eb = [0i32; 32];
        let p = prepare_s8(&cfg, &weights, &biases, &mut eb).unwrap();
        let mut h = [0i8; 8];
        let mut c = [0i16; 8];
        reset_state_s8(&p, &mut h, &mut c);
        assert_eq!(h, [-3; 8]);
        c.copy_from_slice(&[4096, -4096, 8192, 0, 100, -100, 32767, -32768]);
        let input = [7i8; 12];
        let mut out = [0i8; 16];
        lstm_s8(&p, &eb, &input, &weights, &mut h, &mut c, &mut out);
        // Each step halves the cell state: 0.5 * c (16384 * c * 2^-15, rounded).
        assert_eq!(c, [1024, -1024, 2048, 0, 25, -25, 8192, -8192]);
        // h = tanh(c) * 0.5 at scale 1/128, zero point -3: tanh(0.25) * 64 = 15.7 -> 16.
        assert_eq!(&out[4..8], &[16 - 3, -16 - 3, 30 - 3, -3]);
        assert_eq!(&out[4..8], &h[0..4]);
    }

    /// The in-place form gives the ordinary one's output, hidden and cell state, in both
    /// layouts, with the output at the input's start and at the farthest the planner allows.
    #[test]
    fn in_place_matches_out_of_place() {
        const N_IN: usize = 5;
        const N_STATE: usize = 3;
        const ROWS: usize = 6;
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as i8
        };
        let wx: [[i8; N_STATE * N_IN]; 4] =
            core::array::from_fn(|_| core::array::from_fn(|_| next()));
        let wh: [[i8; N_STATE * N_STATE]; 4] =
            core::array::from_fn(|_| core::array::from_fn(|_| next()));
        let weights = LstmWeights {
            input_to_input: &wx[0],
            input_to_forget: &wx[1],
            input_to_cell: &wx[2],
            input_to_output: &wx[3],
            recurrent_to_input: &wh[0],
            recurrent_to_forget: &wh[1],
            recurrent_to_cell: &wh[2],
            recurrent_to_output: &wh[3],
        };
        let b = [300i32, -200, 50];
        let biases = LstmBiases {
            input_gate: &b,
            forget_gate: &b,
            cell_gate: &b,
            output_gate: &b,
        };
        let input: [i8; ROWS * N_IN] = core::array::from_fn(|_| next());
        for time_major in [false, true] {
            let mut cfg = config(N_IN, N_STATE);
            cfg.time_major = time_major;
            (cfg.batches, cfg.time_steps) = (2, 3);
            let mut eb = [0i32; 8 * N_STATE];
            let p = prepare_s8(&cfg, &weights, &biases, &mut eb).unwrap();
            let (mut h, mut c) = ([0i8; 2 * N_STATE], [0i16; 2 * N_STATE]);
            reset_state_s8(&p, &mut h, &mut c);
            c[1] = 900;
            let (h0, c0) = (h, c);
            let mut want = [0i8; ROWS * N_STATE];
            lstm_s8(&p, &eb, &input, &weights, &mut h, &mut c, &mut want);
            for output_at in [0, N_IN - N_STATE] {
                let (mut h1, mut c1) = (h0, c0);
                let mut data = input;
                let mut scratch = [0i8; N_STATE];
                lstm_s8_in_place(
                    &p,
                    &eb,
                    &mut data,
                    0,
                    output_at,
                    &weights,
                    &mut h1,
                    &mut c1,
                    &mut scratch,
                );
                let got = &data[output_at..][..ROWS * N_STATE];
                assert_eq!(
                    got,
                    &want[..],
                    "time major {time_major}, output at {output_at}"
                );
                assert_eq!((h1, c1), (h, c));
            }
        }
    }
}
