//! UNIDIRECTIONAL_SEQUENCE_LSTM with int16 activations ("16x8->16": int16 input, hidden state
//! and output, int8 weights, int64 biases, int16 cell state).
//!
//! TFLM's `EvalLstm<int16_t, int8_t, int16_t, int64_t>`: the int8 LSTM of [`crate::lstm`]
//! (same standard-LSTM restrictions, gate order, LUT sigmoid/tanh, cell update, clip and
//! hidden-state multiplication, the same [`lstm::Params`] from [`lstm::prepare_s8`]) with
//! TFLM's int16 fully connected layers for the gates: no input offset (16x8 zero points are
//! 0; the operator module refuses others), `acc = sum w * x (+ bias)` in int64, requantized
//! with the 64-bit `MultiplyByQuantizedMultiplier` (its 16-bit reduced multiplier, as the
//! 16x8 FULLY_CONNECTED with an int64 bias) and saturated to int16; the hidden state is the
//! `MulElementwise` of `tanh(c)` and the output gate saturated to int16 (zero point 0). The
//! recurrent FCs have no bias, as in the int8 kernel. No scratch (as [`crate::lstm`]).
//!
//! State reset: both int16 variable tensors are zeroed (TFLM fills only int8 state with its
//! zero point).

use crate::fixed_point::{multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_i64};
use crate::int16::check_shifts_s16;
use crate::lstm::{
    self, GATE_CELL, GATE_FORGET, GATE_INPUT, GATE_OUTPUT, LstmWeights, Params, sigmoid_q3_12,
    tanh_i16,
};
use crate::quant::PrepareError;

/// The four int64 gate biases of an int16 LSTM (node inputs 12-15), `[state_size]` each.
#[derive(Clone, Copy, Debug)]
pub struct Biases<'a> {
    /// Input 12.
    pub input_gate: &'a [i64],
    /// Input 13.
    pub forget_gate: &'a [i64],
    /// Input 14.
    pub cell_gate: &'a [i64],
    /// Input 15.
    pub output_gate: &'a [i64],
}

impl<'a> Biases<'a> {
    fn gate(&self, gate: usize) -> &'a [i64] {
        match gate {
            GATE_INPUT => self.input_gate,
            GATE_FORGET => self.forget_gate,
            GATE_CELL => self.cell_gate,
            _ => self.output_gate,
        }
    }
}

fn input_fc<'a>(w: &LstmWeights<'a>, gate: usize) -> &'a [i8] {
    match gate {
        GATE_INPUT => w.input_to_input,
        GATE_FORGET => w.input_to_forget,
        GATE_CELL => w.input_to_cell,
        _ => w.input_to_output,
    }
}

fn recurrent_fc<'a>(w: &LstmWeights<'a>, gate: usize) -> &'a [i8] {
    match gate {
        GATE_INPUT => w.recurrent_to_input,
        GATE_FORGET => w.recurrent_to_forget,
        GATE_CELL => w.recurrent_to_cell,
        _ => w.recurrent_to_output,
    }
}

/// Build-time parameters of an int16 LSTM: [`lstm::prepare_s8`]'s multipliers, clip and LUT
/// parameters (which depend on the scales and options only, not on the weights: computed on a
/// one-cell LSTM with the same scales, then given this shape), the input and hidden zero
/// points checked to be 0, the shapes checked, and the FC exponents checked for the 64-bit
/// `MultiplyByQuantizedMultiplier`.
pub fn prepare_s16(
    config: &lstm::LstmConfig,
    weights: &LstmWeights<'_>,
    biases: &Biases<'_>,
) -> Result<Params, PrepareError> {
    let (n_in, n) = (config.input_size, config.state_size);
    if config.input.zero_point != 0 || config.hidden_state.zero_point != 0 {
        return Err(PrepareError::UnsupportedQuantization);
    }
    if n_in == 0 || n == 0 {
        return Err(PrepareError::InvalidShape);
    }
    for g in 0..4 {
        if input_fc(weights, g).len() != n * n_in
            || recurrent_fc(weights, g).len() != n * n
            || biases.gate(g).len() != n
        {
            return Err(PrepareError::InvalidShape);
        }
    }
    let mut one_cell = *config;
    one_cell.input_size = 1;
    one_cell.state_size = 1;
    let one = [0i8; 1];
    let w = LstmWeights {
        input_to_input: &one,
        input_to_forget: &one,
        input_to_cell: &one,
        input_to_output: &one,
        recurrent_to_input: &one,
        recurrent_to_forget: &one,
        recurrent_to_cell: &one,
        recurrent_to_output: &one,
    };
    let z = [0i32; 1];
    let b = lstm::LstmBiases {
        input_gate: &z,
        forget_gate: &z,
        cell_gate: &z,
        output_gate: &z,
    };
    let mut folded = [0i32; 8];
    let mut p = lstm::prepare_s8(&one_cell, &w, &b, &mut folded)?;
    p.input_size = n_in;
    p.state_size = n;
    check_fc_shifts(&p)?;
    Ok(p)
}

fn check_fc_shifts(p: &Params) -> Result<(), PrepareError> {
    check_shifts_s16(&p.input_fc_multiplier, &p.input_fc_shift)?;
    check_shifts_s16(&p.recurrent_fc_multiplier, &p.recurrent_fc_shift)
}

#[inline]
fn sat16(x: i32) -> i32 {
    x.clamp(i16::MIN as i32, i16::MAX as i32)
}

/// TFLM's int16 FULLY_CONNECTED for one output: `sat16(MBQM64(sum w * x + bias))`.
#[inline]
fn fc(row: &[i8], v: &[i16], bias: i64, multiplier: i32, shift: i32) -> i32 {
    let mut acc = bias;
    for (&w, &x) in row.iter().zip(v) {
        acc = acc.wrapping_add((w as i32 * x as i32) as i64);
    }
    sat16(multiply_by_quantized_multiplier_i64(acc, multiplier, shift))
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

#[allow(clippy::too_many_arguments)]
fn step_row(
    p: &Params,
    weights: &LstmWeights<'_>,
    biases: &Biases<'_>,
    x: &[i16],
    hidden: &mut [i16],
    cell: &mut [i16],
    out: &mut [i16],
) {
    let (n_in, n) = (p.input_size, p.state_size);
    let h: &[i16] = hidden;
    for (i, (c, o)) in cell.iter_mut().zip(out.iter_mut()).enumerate() {
        let pre = |gate: usize| {
            // TFLM adds the input FC's bias; its recurrent FC has none. (The bias is added
            // after the products in TFLM; int64 sums of 16x8-bit products do not overflow,
            // so the order does not matter.)
            let fc_in = fc(
                &input_fc(weights, gate)[i * n_in..(i + 1) * n_in],
                x,
                biases.gate(gate)[i],
                p.input_fc_multiplier[gate],
                p.input_fc_shift[gate],
            );
            let fc_rec = fc(
                &recurrent_fc(weights, gate)[i * n..(i + 1) * n],
                h,
                0,
                p.recurrent_fc_multiplier[gate],
                p.recurrent_fc_shift[gate],
            );
            sat16(fc_in + fc_rec) as i16
        };
        let forget = sigmoid_q3_12(pre(GATE_FORGET));
        let input = sigmoid_q3_12(pre(GATE_INPUT));
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
        );
        *o = sat16(v) as i16;
    }
    hidden.copy_from_slice(out);
}

/// Int16 UNIDIRECTIONAL_SEQUENCE_LSTM (`EvalLstm<int16_t, int8_t, int16_t, int64_t>`).
///
/// `hidden_state` (node input 18) and `cell_state` (node input 19), both int16, are updated in
/// place; `output` receives the hidden state of every step. No scratch memory.
pub fn lstm_s16(
    p: &Params,
    input: &[i16],
    weights: &LstmWeights<'_>,
    biases: &Biases<'_>,
    hidden_state: &mut [i16],
    cell_state: &mut [i16],
    output: &mut [i16],
) {
    let (n_batch, n_time, n_in, n) = (p.batches, p.time_steps, p.input_size, p.state_size);
    debug_assert_eq!(input.len(), p.input_len());
    debug_assert_eq!(output.len(), p.output_len());
    debug_assert_eq!(hidden_state.len(), p.state_len());
    debug_assert_eq!(cell_state.len(), p.state_len());
    for g in 0..4 {
        debug_assert!(input_fc(weights, g).len() >= n * n_in);
        debug_assert!(recurrent_fc(weights, g).len() >= n * n);
        debug_assert!(biases.gate(g).len() >= n);
    }
    if n_in == 0 || n == 0 {
        return;
    }
    for t in 0..n_time {
        for b in 0..n_batch {
            let row = if p.time_major {
                t * n_batch + b
            } else {
                b * n_time + t
            };
            step_row(
                p,
                weights,
                biases,
                &input[row * n_in..(row + 1) * n_in],
                &mut hidden_state[b * n..(b + 1) * n],
                &mut cell_state[b * n..(b + 1) * n],
                &mut output[row * n..(row + 1) * n],
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::{Activation, QuantParams};

    fn config(n_in: usize, n: usize, zp: i32) -> lstm::LstmConfig {
        let w = QuantParams {
            scale: 0.01,
            zero_point: 0,
        };
        lstm::LstmConfig {
            time_major: false,
            batches: 1,
            time_steps: 2,
            input_size: n_in,
            state_size: n,
            cell_clip: 0.0,
            activation: Activation::Tanh,
            input: QuantParams {
                scale: 1.0 / 4096.0,
                zero_point: zp,
            },
            hidden_state: QuantParams {
                scale: 1.0 / 32768.0,
                zero_point: 0,
            },
            cell_state_scale: 1.0 / 4096.0,
            input_weights: [w; 4],
            recurrent_weights: [w; 4],
        }
    }

    #[test]
    fn zero_weights_halve_the_cell_and_biases_reach_the_gates() {
        let (wx, wh) = ([0i8; 3], [0i8; 9]);
        let w = LstmWeights {
            input_to_input: &wx,
            input_to_forget: &wx,
            input_to_cell: &wx,
            input_to_output: &wx,
            recurrent_to_input: &wh,
            recurrent_to_forget: &wh,
            recurrent_to_cell: &wh,
            recurrent_to_output: &wh,
        };
        let zero = [0i64; 3];
        let b = Biases {
            input_gate: &zero,
            forget_gate: &zero,
            cell_gate: &zero,
            output_gate: &zero,
        };
        assert_eq!(
            prepare_s16(&config(1, 3, 5), &w, &b),
            Err(PrepareError::UnsupportedQuantization)
        );
        assert_eq!(
            prepare_s16(&config(2, 3, 0), &w, &b),
            Err(PrepareError::InvalidShape)
        );
        let p = prepare_s16(&config(1, 3, 0), &w, &b).unwrap();
        assert_eq!((p.input_size, p.state_size), (1, 3));
        // Every gate is 0.5, the cell gate tanh(0) = 0: the cell halves at each step.
        let (mut h, mut c, mut out) = ([0i16; 3], [8192i16, -4096, 0], [0i16; 6]);
        lstm_s16(&p, &[1000, -1000], &w, &b, &mut h, &mut c, &mut out);
        assert_eq!(c, [2048, -1024, 0]);
        // Step 0: c = 4096 (1.0), h = tanh(1) * 0.5 at scale 2^-15 = 12478.
        assert_eq!(out[0], 12478);
        assert_eq!(&out[3..], &h);
        // A cell-gate bias of 1.0 (at the input scale x weight scale) opens the cell gate.
        let one = [(1.0 / (0.01f64 / 4096.0)) as i64; 3];
        let b = Biases {
            cell_gate: &one,
            ..b
        };
        let (mut h, mut c, mut out) = ([0i16; 3], [0i16; 3], [0i16; 6]);
        lstm_s16(&p, &[0, 0], &w, &b, &mut h, &mut c, &mut out);
        assert!(c.iter().all(|&v| v > 0), "{c:?}");
    }
}
