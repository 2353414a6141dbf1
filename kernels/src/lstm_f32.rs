//! UNIDIRECTIONAL_SEQUENCE_LSTM, float32 (the int8 kernel is in [`crate::lstm`]).
//!
//! Follows TFLM's current LSTM (`unidirectional_sequence_lstm.cc`, `lstm_eval.h`,
//! `lstm_eval.cc`, `lstm_eval_common.cc`), `EvalLstm<float, float, float, float>`: the
//! standard LSTM only — all four gates (no CIFG), no peephole, no projection, no layer
//! normalization (TFLM's `LstmTensors::ValidateTensorStatus` refuses them, so `proj_clip`
//! never applies), the cell gate activated by TANH. Every float operation is TFLM's, in its
//! order, so the results are bit-identical with the reference build:
//!
//! ```text
//! fc_in[i]  = clamp(sum_d x[d] * Wx_g[i][d] + bias_g[i])    sum from 0.0f, d increasing
//! fc_rec[i] = clamp(sum_d h[d] * Wh_g[i][d] + 0.0f)          (the recurrent FC has no bias)
//! pre_g[i]  = fc_in[i] + fc_rec[i]                          (AddElementWise, not clamped)
//! forget, input, output = logistic(pre_f), logistic(pre_i), logistic(pre_o)
//! cell_gate = tanhf(pre_c)
//! c[i] = clamp(forget * c[i]) + clamp(input * cell_gate)    then, if cell_clip > 0,
//!        c[i] = max(min(c[i], cell_clip), -cell_clip)        (std::min/std::max: NaN stays)
//! h[i] = clamp(tanhf(c[i]) * output)
//! ```
//!
//! `clamp` is `ActivationFunctionWithMinMax` with the range of `kTfLiteActNone`
//! (`[-FLT_MAX, FLT_MAX]`: an infinity becomes `±FLT_MAX`, NaN passes), which TFLM's float
//! FC and Mul parameters carry; `logistic` is `reference_ops::Logistic<float>` and `tanhf`
//! `std::tanh`, both with the reference host's libm ported ([`crate::math::expf`],
//! [`crate::glibc_math::tanhf`], as the float LOGISTIC and TANH kernels).
//!
//! NaNs: where two NaN operands meet, the reference build (x86-64 SSE) keeps one of them by
//! its instruction's operand order: the FC keeps the input's NaN in `input * weight`, the
//! running sum's in `sum + product` and the bias's in `bias + sum`; the gate addition the
//! input FC's; TFLM's float Mul its *second* operand's (the cell state, the cell gate, the
//! output gate); the cell update the kept part's. The kernel selects those NaNs explicitly
//! (so the bits do not depend on the compiler's choice of operand order), and the cell clip
//! keeps a NaN cell, as the reference build does (measured with the wheel). A NaN made from
//! non-NaN operands (`inf - inf`, `0 * inf`) is the target's default NaN (x86-64: negative;
//! Arm: positive, as TFLM built for Arm).
//!
//! TFLM computes each gate for the whole state vector into scratch buffers; every gate element
//! depends only on the input row, the *previous* hidden state and its own cell element, so the
//! kernel computes the four gates of element `i`, updates `c[i]` and writes `h[i]` straight
//! into the step's output row, copied into the hidden state after the row (when TFLM
//! overwrites it): no scratch, same bits. Time-major models run all batches of a time step at
//! once in TFLM, batch-major ones one batch row at a time; the rows are independent, so the
//! row order does not change a bit either.
//!
//! Layouts: input `[batches, time_steps, input_size]` (`time_major == false`) or
//! `[time_steps, batches, input_size]`, output likewise with `state_size` last; weights
//! `[state_size, input_size]` and `[state_size, state_size]`; biases `[state_size]`; hidden
//! and cell state `[batches, state_size]`, both reset to zeros (TFLM's
//! `ResetVariableTensors`).

use crate::activations_f32::logistic_f32_op;
use crate::glibc_math::tanhf;
use crate::quant::{Activation, PrepareError};
use crate::util::clamp_f32;

/// Constant parameters of a float32 UNIDIRECTIONAL_SEQUENCE_LSTM node.
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
    /// The `cell_clip` builtin option (`0` = no clipping).
    pub cell_clip: f32,
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

/// No scratch memory (see the module docs).
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// The constant operands of a float LSTM: node inputs 1-8 (weights, row-major) and 12-15
/// (gate biases), in that order.
#[derive(Clone, Copy, Debug)]
pub struct Weights<'a> {
    /// Input 1, `[state_size, input_size]`.
    pub input_to_input: &'a [f32],
    /// Input 2, `[state_size, input_size]`.
    pub input_to_forget: &'a [f32],
    /// Input 3, `[state_size, input_size]`.
    pub input_to_cell: &'a [f32],
    /// Input 4, `[state_size, input_size]`.
    pub input_to_output: &'a [f32],
    /// Input 5, `[state_size, state_size]`.
    pub recurrent_to_input: &'a [f32],
    /// Input 6, `[state_size, state_size]`.
    pub recurrent_to_forget: &'a [f32],
    /// Input 7, `[state_size, state_size]`.
    pub recurrent_to_cell: &'a [f32],
    /// Input 8, `[state_size, state_size]`.
    pub recurrent_to_output: &'a [f32],
    /// Input 12, `[state_size]`.
    pub input_gate_bias: &'a [f32],
    /// Input 13, `[state_size]`.
    pub forget_gate_bias: &'a [f32],
    /// Input 14, `[state_size]`.
    pub cell_gate_bias: &'a [f32],
    /// Input 15, `[state_size]`.
    pub output_gate_bias: &'a [f32],
}

/// Build-time parameters: checks the shapes (all positive), the activation (TANH, the only one
/// Kiln's reader can give that TFLM's float LSTM implements) and the clip (not negative or
/// NaN, as TFLM's `cell_clip > 0` test treats those as "no clip": refused to keep one
/// meaning).
pub fn prepare_f32(
    time_major: bool,
    batches: usize,
    time_steps: usize,
    input_size: usize,
    state_size: usize,
    cell_clip: f32,
    activation: Activation,
) -> Result<Params, PrepareError> {
    if batches == 0 || time_steps == 0 || input_size == 0 || state_size == 0 {
        return Err(PrepareError::InvalidShape);
    }
    if activation != Activation::Tanh || !(cell_clip >= 0.0) {
        return Err(PrepareError::UnsupportedQuantization);
    }
    Ok(Params {
        time_major,
        batches,
        time_steps,
        input_size,
        state_size,
        cell_clip,
    })
}

/// The `kTfLiteActNone` clamp of TFLM's float FC and Mul.
#[inline(always)]
fn clamp_none(x: f32) -> f32 {
    clamp_f32(x, f32::MIN, f32::MAX)
}

/// `a + b`, or `a` if it is a NaN: the NaN of x86-64's `addss`/`mulss` when both operands
/// are NaNs (its first operand), written out so that the bits do not depend on the order the
/// compiler picks for a commutative operation.
#[inline(always)]
fn add_keep(a: f32, b: f32) -> f32 {
    if a.is_nan() { a } else { a + b }
}

/// `a * b`, or `a` if it is a NaN (see [`add_keep`]).
#[inline(always)]
fn mul_keep(a: f32, b: f32) -> f32 {
    if a.is_nan() { a } else { a * b }
}

/// `reference_ops::FullyConnected<float>` for one output: `clamp(bias + sum)` (the reference
/// build adds the sum to the bias, so a NaN bias is the one kept).
#[inline(always)]
fn fc(row: &[f32], v: &[f32], bias: f32) -> f32 {
    let mut total = 0.0f32;
    for (&x, &w) in v.iter().zip(row) {
        // `input * weight`, then `total + product`, each keeping its first NaN.
        total = add_keep(total, mul_keep(x, w));
        if total.is_nan() {
            // A NaN total stays itself whatever is added.
            break;
        }
    }
    clamp_none(add_keep(bias, total))
}

/// One gate pre-activation: both FCs, added.
#[inline(always)]
fn pre(w_in: &[f32], w_rec: &[f32], bias: &[f32], i: usize, x: &[f32], h: &[f32]) -> f32 {
    let (n_in, n_state) = (x.len(), h.len());
    let fc_in = fc(&w_in[i * n_in..(i + 1) * n_in], x, bias[i]);
    let fc_rec = fc(&w_rec[i * n_state..(i + 1) * n_state], h, 0.0);
    add_keep(fc_in, fc_rec)
}

/// One time step of one batch row: updates `cell` in place, writes the new hidden state to
/// `out`, then copies it into `hidden`.
fn step_row(
    p: &Params,
    w: &Weights<'_>,
    x: &[f32],
    hidden: &mut [f32],
    cell: &mut [f32],
    out: &mut [f32],
) {
    let h: &[f32] = hidden;
    for (i, (c, o)) in cell.iter_mut().zip(out.iter_mut()).enumerate() {
        let forget = logistic_f32_op(pre(
            w.input_to_forget,
            w.recurrent_to_forget,
            w.forget_gate_bias,
            i,
            x,
            h,
        ));
        let input = logistic_f32_op(pre(
            w.input_to_input,
            w.recurrent_to_input,
            w.input_gate_bias,
            i,
            x,
            h,
        ));
        let cell_gate = tanhf(pre(
            w.input_to_cell,
            w.recurrent_to_cell,
            w.cell_gate_bias,
            i,
            x,
            h,
        ));
        // TFLM's Mul keeps its second operand's NaN, its AddElementWise the first one's.
        let kept = clamp_none(mul_keep(*c, forget));
        let added = clamp_none(mul_keep(cell_gate, input));
        let mut new_c = add_keep(kept, added);
        if p.cell_clip > 0.0 {
            // The reference build's clip keeps a NaN cell (measured), as
            // `max(min(c, clip), -clip)` with std::min/std::max does.
            let clip = p.cell_clip;
            let y = if clip < new_c { clip } else { new_c };
            new_c = if y < -clip { -clip } else { y };
        }
        *c = new_c;
        let output = logistic_f32_op(pre(
            w.input_to_output,
            w.recurrent_to_output,
            w.output_gate_bias,
            i,
            x,
            h,
        ));
        *o = clamp_none(mul_keep(output, tanhf(new_c)));
    }
    hidden.copy_from_slice(out);
}

/// Float UNIDIRECTIONAL_SEQUENCE_LSTM (`EvalLstm<float, float, float, float>`).
///
/// `hidden_state` (node input 18) and `cell_state` (node input 19) are the variable tensors,
/// updated in place; `output` receives the hidden state of every step. No scratch memory.
pub fn lstm_f32(
    p: &Params,
    input: &[f32],
    weights: &Weights<'_>,
    hidden_state: &mut [f32],
    cell_state: &mut [f32],
    output: &mut [f32],
) {
    let (n_batch, n_time, n_in, n_state) = (p.batches, p.time_steps, p.input_size, p.state_size);
    debug_assert_eq!(input.len(), p.input_len());
    debug_assert_eq!(output.len(), p.output_len());
    debug_assert_eq!(hidden_state.len(), p.state_len());
    debug_assert_eq!(cell_state.len(), p.state_len());
    let w = weights;
    for m in [
        w.input_to_input,
        w.input_to_forget,
        w.input_to_cell,
        w.input_to_output,
    ] {
        debug_assert!(m.len() >= n_state * n_in);
    }
    for m in [
        w.recurrent_to_input,
        w.recurrent_to_forget,
        w.recurrent_to_cell,
        w.recurrent_to_output,
    ] {
        debug_assert!(m.len() >= n_state * n_state);
    }
    for b in [
        w.input_gate_bias,
        w.forget_gate_bias,
        w.cell_gate_bias,
        w.output_gate_bias,
    ] {
        debug_assert!(b.len() >= n_state);
    }
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
                weights,
                &input[row * n_in..(row + 1) * n_in],
                &mut hidden_state[b * n_state..(b + 1) * n_state],
                &mut cell_state[b * n_state..(b + 1) * n_state],
                &mut output[row * n_state..(row + 1) * n_state],
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::expf;

    fn weights<'a>(wx: &'a [f32], wh: &'a [f32], b: &'a [f32]) -> Weights<'a> {
        Weights {
            input_to_input: wx,
            input_to_forget: wx,
            input_to_cell: wx,
            input_to_output: wx,
            recurrent_to_input: wh,
            recurrent_to_forget: wh,
            recurrent_to_cell: wh,
            recurrent_to_output: wh,
            input_gate_bias: b,
            forget_gate_bias: b,
            cell_gate_bias: b,
            output_gate_bias: b,
        }
    }

    #[test]
    fn prepare_checks() {
        assert_eq!(
            prepare_f32(false, 1, 1, 0, 2, 0.0, Activation::Tanh),
            Err(PrepareError::InvalidShape)
        );
        assert!(prepare_f32(false, 1, 1, 1, 2, -1.0, Activation::Tanh).is_err());
        assert!(prepare_f32(false, 1, 1, 1, 2, f32::NAN, Activation::Tanh).is_err());
        assert!(prepare_f32(false, 1, 1, 1, 2, 0.0, Activation::Relu).is_err());
        let p = prepare_f32(true, 2, 3, 1, 2, 0.5, Activation::Tanh).unwrap();
        assert_eq!((p.state_len(), p.input_len(), p.output_len()), (4, 6, 12));
        assert_eq!(scratch_bytes(&p), 0);
    }

    #[test]
    fn one_step_by_hand_and_the_clip() {
        // One input, one cell: every gate's pre-activation is x * 1 + h * 0.5 + 0.25.
        let (wx, wh, b) = ([1.0f32], [0.5f32], [0.25f32]);
        let w = weights(&wx, &wh, &b);
        let p = prepare_f32(false, 1, 2, 1, 1, 0.0, Activation::Tanh).unwrap();
        let (mut h, mut c, mut out) = ([0.0f32], [0.0f32], [0.0f32; 2]);
        lstm_f32(&p, &[0.5, -1.0], &w, &mut h, &mut c, &mut out);
        let sig = |v: f32| 1.0 / (1.0 + expf(-v));
        let pre1 = 0.5f32 + 0.25 + 0.0;
        let c1 = sig(pre1) * 0.0 + sig(pre1) * tanhf(pre1);
        let h1 = tanhf(c1) * sig(pre1);
        let pre2 = (-1.0f32 + 0.25) + h1 * 0.5;
        let c2 = sig(pre2) * c1 + sig(pre2) * tanhf(pre2);
        let h2 = tanhf(c2) * sig(pre2);
        assert_eq!(out, [h1, h2]);
        assert_eq!((h, c), ([h2], [c2]));

        let p = prepare_f32(false, 1, 1, 1, 1, 0.1, Activation::Tanh).unwrap();
        let (mut h, mut c, mut out) = ([0.0f32], [0.0f32], [0.0f32]);
        lstm_f32(&p, &[0.5], &w, &mut h, &mut c, &mut out);
        assert_eq!(c, [0.1]);
        assert_eq!(out, [tanhf(0.1) * sig(pre1)]);
    }

    #[test]
    fn time_major_rows_and_overflow_clamps() {
        // Two batches, time major: row (b, t) at t * 2 + b; the huge weight overflows the FC
        // to infinity, which the FC clamps to f32::MAX (logistic 1, tanh 1).
        let (wx, wh, b) = ([f32::MAX], [0.0f32], [0.0f32]);
        let w = weights(&wx, &wh, &b);
        let p = prepare_f32(true, 2, 1, 1, 1, 0.0, Activation::Tanh).unwrap();
        let (mut h, mut c, mut out) = ([0.0f32; 2], [0.0f32; 2], [0.0f32; 2]);
        lstm_f32(&p, &[4.0, -4.0], &w, &mut h, &mut c, &mut out);
        // Batch 0: all gates 1, c = 1, h = tanh(1). Batch 1: pre = -MAX: sigmoid(-MAX) =
        // expf(-MAX) = 0, tanh = -1: c = 0 * 0 + 0 * -1 = +0 + -0 = +0, h = tanh(0) * 0.
        assert_eq!(c[0], 1.0);
        assert_eq!(out[0], tanhf(1.0));
        assert_eq!((c[1].to_bits(), out[1].to_bits()), (0, 0));
    }
}
