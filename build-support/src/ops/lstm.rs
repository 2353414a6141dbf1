//! UNIDIRECTIONAL_SEQUENCE_LSTM: int8 with int16 cell state, its biases folded with the zero
//! points at build time (`kiln_kernels::lstm`), int16 activations with int8 weights and int64
//! biases (`kiln_kernels::lstm_s16`), and float32 (`kiln_kernels::lstm_f32`); the
//! standard LSTM (no CIFG, peephole, projection or layer norm, which TFLM refuses too), its
//! hidden and cell state kept between invocations.

use crate::op::{
    Call, Cx, Kernel, Operand, Step, activation, bytemuck_i8, kernel_fn, prepare_error, types,
    unsupported,
};
#[cfg(feature = "exec")]
use crate::op::{Io, f32s, i8s, o8, o16, of};
use kiln_kernels::{lstm, lstm_f32, lstm_s16};
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, LstmOptions, OpKind, TensorId};
use kiln_planner::kernels::Narrowing;
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

/// The int8 kernel and its folded biases.
#[derive(Debug)]
struct LstmS8(lstm::Params, Vec<i32>);

/// The float kernel.
#[derive(Debug)]
struct LstmF32(lstm_f32::Params);

/// The int16-activation kernel (its biases are operands).
#[derive(Debug)]
struct LstmS16(lstm::Params);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::UnidirectionalSequenceLstm(o) = &cx.op.kind else {
        unreachable!("registered for UNIDIRECTIONAL_SEQUENCE_LSTM")
    };
    let input = cx.input(0)?;
    let output = cx.output()?;
    let (hidden, cell) = (cx.variable(18)?, cx.variable(19)?);
    for slot in [9, 10, 11, 16, 17, 20, 21, 22, 23] {
        if cx.op.input(slot).is_some() {
            return Err(unsupported(
                "only the standard LSTM is supported (no peephole, projection or layer norm)",
            )
            .expected_found("input absent", format!("input {slot} present")));
        }
    }
    match (cx.dtype(input), cx.dtype(output)) {
        (DType::I8, DType::I8) => {}
        (DType::F32, DType::F32) => return lower_f32(cx, o, input, output, hidden, cell),
        (DType::I16, DType::I16) => return lower_s16(cx, o, input, output, hidden, cell),
        (a, b) => {
            return Err(
                unsupported("unsupported types for UNIDIRECTIONAL_SEQUENCE_LSTM").expected_found(
                    "INT8 -> INT8, INT16 -> INT16 or FLOAT32 -> FLOAT32",
                    types(a, b),
                ),
            );
        }
    }
    let weights: Vec<TensorId> = (1..=8).map(|s| cx.input(s)).collect::<Result<_>>()?;
    let biases: Vec<TensorId> = (12..=15).map(|s| cx.input(s)).collect::<Result<_>>()?;
    let w_data: Vec<&[i8]> = weights
        .iter()
        .map(|&t| cx.need_constant(t).map(bytemuck_i8))
        .collect::<Result<_>>()?;
    let b_data: Vec<Vec<i32>> = biases
        .iter()
        .map(|&t| cx.const_i32(t))
        .collect::<Result<_>>()?;
    let [d0, d1, input_size] = cx.dims::<3>(input)?;
    let (batches, time_steps) = if o.time_major { (d1, d0) } else { (d0, d1) };
    let [_, state_size] = cx.dims::<2>(hidden)?;
    let q = |ts: &[TensorId]| -> Result<[kiln_kernels::quant::QuantParams; 4]> {
        Ok([
            cx.quant(ts[0])?,
            cx.quant(ts[1])?,
            cx.quant(ts[2])?,
            cx.quant(ts[3])?,
        ])
    };
    let config = lstm::LstmConfig {
        time_major: o.time_major,
        batches,
        time_steps,
        input_size,
        state_size,
        cell_clip: o.cell_clip,
        activation: activation(o.activation),
        input: cx.quant(input)?,
        hidden_state: cx.quant(hidden)?,
        cell_state_scale: cx.quant(cell)?.scale,
        input_weights: q(&weights[..4])?,
        recurrent_weights: q(&weights[4..])?,
    };
    let w = lstm::LstmWeights {
        input_to_input: w_data[0],
        input_to_forget: w_data[1],
        input_to_cell: w_data[2],
        input_to_output: w_data[3],
        recurrent_to_input: w_data[4],
        recurrent_to_forget: w_data[5],
        recurrent_to_cell: w_data[6],
        recurrent_to_output: w_data[7],
    };
    let b = lstm::LstmBiases {
        input_gate: &b_data[0],
        forget_gate: &b_data[1],
        cell_gate: &b_data[2],
        output_gate: &b_data[3],
    };
    let mut effective = vec![0; 8 * state_size];
    let p = lstm::prepare_s8(&config, &w, &b, &mut effective).map_err(prepare_error)?;
    cx.check_elements(output, p.output_len())?;
    cx.check_elements(hidden, p.state_len())?;
    cx.check_elements(cell, p.state_len())?;
    let inputs = std::iter::once(input)
        .chain(weights)
        .map(Operand::Tensor)
        .collect();
    let state_size = p.state_size;
    let units = p.batches * p.time_steps;
    let mut step = cx.step(LstmS8(p, effective), inputs, output);
    step.states = vec![hidden, cell];
    // Each row's hidden state over its input row, through a scratch row, where the state is
    // no wider than the rows and there are several (one row is all scratch)
    // (`lstm::lstm_s8_in_place`).
    let width = cx.tensor(input).shape.last().copied().unwrap_or(0);
    if units > 1 && state_size > 0 && state_size <= width {
        step.abilities.narrowing_in_place = Some(Narrowing {
            units,
            scratch_bytes: state_size,
        });
    }
    Ok(step)
}

/// The float LSTM: every weight, bias and state FLOAT32, the weights and biases constant.
fn lower_f32(
    cx: &Cx<'_>,
    o: &LstmOptions,
    input: TensorId,
    output: TensorId,
    hidden: TensorId,
    cell: TensorId,
) -> Result<Step> {
    let constants: Vec<TensorId> = (1..=8)
        .chain(12..=15)
        .map(|s| cx.input(s))
        .collect::<Result<_>>()?;
    for &t in constants.iter().chain([&hidden, &cell]) {
        if cx.dtype(t) != DType::F32 {
            return Err(
                unsupported("a float LSTM needs FLOAT32 weights, biases and states")
                    .expected_found("FLOAT32", format!("{} for tensor {}", cx.dtype(t), t.0)),
            );
        }
    }
    for &t in &constants {
        cx.need_constant(t)?;
    }
    let [d0, d1, input_size] = cx.dims::<3>(input)?;
    let (batches, time_steps) = if o.time_major { (d1, d0) } else { (d0, d1) };
    let [_, state_size] = cx.dims::<2>(hidden)?;
    let p = lstm_f32::prepare_f32(
        o.time_major,
        batches,
        time_steps,
        input_size,
        state_size,
        o.cell_clip,
        activation(o.activation),
    )
    .map_err(|e| {
        prepare_error(e).expected_found(
            "TANH and a cell clip >= 0",
            format!("{:?}, cell clip {}", o.activation, o.cell_clip),
        )
    })?;
    for (k, &t) in constants.iter().enumerate() {
        let want = match k {
            0..4 => state_size * input_size,
            4..8 => state_size * state_size,
            _ => state_size,
        };
        cx.check_elements(t, want)?;
    }
    cx.check_elements(output, p.output_len())?;
    cx.check_elements(hidden, p.state_len())?;
    cx.check_elements(cell, p.state_len())?;
    let inputs = std::iter::once(input)
        .chain(constants)
        .map(Operand::Tensor)
        .collect();
    let mut step = cx.step(LstmF32(p), inputs, output);
    step.states = vec![hidden, cell];
    Ok(step)
}

/// The 16x8 LSTM: int16 input, hidden state and output, INT8 weights, INT64 biases, INT16 cell
/// state; zero points 0.
fn lower_s16(
    cx: &Cx<'_>,
    o: &LstmOptions,
    input: TensorId,
    output: TensorId,
    hidden: TensorId,
    cell: TensorId,
) -> Result<Step> {
    let weights: Vec<TensorId> = (1..=8).map(|s| cx.input(s)).collect::<Result<_>>()?;
    let biases: Vec<TensorId> = (12..=15).map(|s| cx.input(s)).collect::<Result<_>>()?;
    let want = weights
        .iter()
        .map(|&t| (t, DType::I8))
        .chain(biases.iter().map(|&t| (t, DType::I64)))
        .chain([(hidden, DType::I16), (cell, DType::I16)]);
    for (t, d) in want {
        if cx.dtype(t) != d {
            return Err(unsupported(
                "an int16 LSTM needs INT8 weights, INT64 biases and INT16 states",
            )
            .expected_found(d.name(), format!("{} for tensor {}", cx.dtype(t), t.0)));
        }
    }
    let w_data: Vec<&[i8]> = weights
        .iter()
        .map(|&t| cx.need_constant(t).map(bytemuck_i8))
        .collect::<Result<_>>()?;
    let b_data: Vec<Vec<i64>> = biases
        .iter()
        .map(|&t| {
            cx.need_constant(t).map(|b| {
                b.chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect()
            })
        })
        .collect::<Result<_>>()?;
    let [d0, d1, input_size] = cx.dims::<3>(input)?;
    let (batches, time_steps) = if o.time_major { (d1, d0) } else { (d0, d1) };
    let [_, state_size] = cx.dims::<2>(hidden)?;
    let q = |ts: &[TensorId]| -> Result<[kiln_kernels::quant::QuantParams; 4]> {
        Ok([
            cx.quant(ts[0])?,
            cx.quant(ts[1])?,
            cx.quant(ts[2])?,
            cx.quant(ts[3])?,
        ])
    };
    let config = lstm::LstmConfig {
        time_major: o.time_major,
        batches,
        time_steps,
        input_size,
        state_size,
        cell_clip: o.cell_clip,
        activation: activation(o.activation),
        input: cx.quant(input)?,
        hidden_state: cx.quant(hidden)?,
        cell_state_scale: cx.quant(cell)?.scale,
        input_weights: q(&weights[..4])?,
        recurrent_weights: q(&weights[4..])?,
    };
    let w = lstm::LstmWeights {
        input_to_input: w_data[0],
        input_to_forget: w_data[1],
        input_to_cell: w_data[2],
        input_to_output: w_data[3],
        recurrent_to_input: w_data[4],
        recurrent_to_forget: w_data[5],
        recurrent_to_cell: w_data[6],
        recurrent_to_output: w_data[7],
    };
    let b = lstm_s16::Biases {
        input_gate: &b_data[0],
        forget_gate: &b_data[1],
        cell_gate: &b_data[2],
        output_gate: &b_data[3],
    };
    let p = lstm_s16::prepare_s16(&config, &w, &b).map_err(|e| {
        prepare_error(e).expected_found(
            "zero points 0, TANH, a cell clip >= 0 and weight shapes of the state",
            format!(
                "input zero point {}, hidden zero point {}, {:?}",
                config.input.zero_point, config.hidden_state.zero_point, o.activation
            ),
        )
    })?;
    cx.check_elements(output, p.output_len())?;
    cx.check_elements(hidden, p.state_len())?;
    cx.check_elements(cell, p.state_len())?;
    let inputs = std::iter::once(input)
        .chain(weights)
        .chain(biases)
        .map(Operand::Tensor)
        .collect();
    let mut step = cx.step(LstmS16(p), inputs, output);
    step.states = vec![hidden, cell];
    Ok(step)
}

/// The fields of `lstm_s16::Biases`, in operand order (after the weights).
const BIASES: [&str; 4] = ["input_gate", "forget_gate", "cell_gate", "output_gate"];

impl Kernel for LstmS16 {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let p = call.params("lstm", &self.0);
        let [x, rest @ ..] = call.inputs() else {
            return Err(unsupported("LSTM operands are missing"));
        };
        if rest.len() != 12 {
            return Err(unsupported("LSTM operands are missing"));
        }
        let (w, b) = rest.split_at(8);
        let wf = WEIGHTS.map(|f| Ident::new(f, Span::call_site()));
        let bf = BIASES.map(|f| Ident::new(f, Span::call_site()));
        let f = kernel_fn("lstm_s16", "lstm_s16");
        let (states, out) = (call.states(), call.output());
        Ok(quote! {
            #f(
                #p, #x,
                &::kiln::kernels::lstm::LstmWeights { #(#wf: #w),* },
                &::kiln::kernels::lstm_s16::Biases { #(#bf: #b),* },
                #(#states,)* #out
            );
        })
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let input = io.i16(0);
        let w: Vec<&[i8]> = (1..=8).map(|s| i8s(io.input(s))).collect();
        let b: Vec<&[i64]> = (9..=12).map(|s| io.i64(s)).collect();
        let weights = lstm::LstmWeights {
            input_to_input: w[0],
            input_to_forget: w[1],
            input_to_cell: w[2],
            input_to_output: w[3],
            recurrent_to_input: w[4],
            recurrent_to_forget: w[5],
            recurrent_to_cell: w[6],
            recurrent_to_output: w[7],
        };
        let biases = lstm_s16::Biases {
            input_gate: b[0],
            forget_gate: b[1],
            cell_gate: b[2],
            output_gate: b[3],
        };
        let (states, out) = io.states_and_out();
        let [hidden, cell] = states else {
            panic!("LSTM has two states")
        };
        lstm_s16::lstm_s16(
            &self.0,
            input,
            &weights,
            &biases,
            o16(hidden.bytes_mut()),
            o16(cell.bytes_mut()),
            o16(out),
        );
    }
}

/// The fields of `lstm_f32::Weights`, in operand order (after the input).
const WEIGHTS_F32: [&str; 12] = [
    "input_to_input",
    "input_to_forget",
    "input_to_cell",
    "input_to_output",
    "recurrent_to_input",
    "recurrent_to_forget",
    "recurrent_to_cell",
    "recurrent_to_output",
    "input_gate_bias",
    "forget_gate_bias",
    "cell_gate_bias",
    "output_gate_bias",
];

impl Kernel for LstmF32 {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let p = call.params("lstm_f32", &self.0);
        let [x, w @ ..] = call.inputs() else {
            return Err(unsupported("LSTM operands are missing"));
        };
        let fields = WEIGHTS_F32.map(|f| Ident::new(f, Span::call_site()));
        let f = kernel_fn("lstm_f32", "lstm_f32");
        let (states, out) = (call.states(), call.output());
        Ok(quote! {
            #f(
                #p, #x,
                &::kiln::kernels::lstm_f32::Weights { #(#fields: #w),* },
                #(#states,)* #out
            );
        })
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let input = io.f32(0);
        let c: Vec<&[f32]> = (1..=12).map(|s| f32s(io.input(s))).collect();
        let w = lstm_f32::Weights {
            input_to_input: c[0],
            input_to_forget: c[1],
            input_to_cell: c[2],
            input_to_output: c[3],
            recurrent_to_input: c[4],
            recurrent_to_forget: c[5],
            recurrent_to_cell: c[6],
            recurrent_to_output: c[7],
            input_gate_bias: c[8],
            forget_gate_bias: c[9],
            cell_gate_bias: c[10],
            output_gate_bias: c[11],
        };
        let (states, out) = io.states_and_out();
        let [hidden, cell] = states else {
            panic!("LSTM has two states")
        };
        lstm_f32::lstm_f32(
            &self.0,
            input,
            &w,
            of(hidden.bytes_mut()),
            of(cell.bytes_mut()),
            of(out),
        );
    }
}

/// The fields of `lstm::LstmWeights`, in operand order (after the input).
const WEIGHTS: [&str; 8] = [
    "input_to_input",
    "input_to_forget",
    "input_to_cell",
    "input_to_output",
    "recurrent_to_input",
    "recurrent_to_forget",
    "recurrent_to_cell",
    "recurrent_to_output",
];

impl Kernel for LstmS8 {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let p = call.params("lstm", &self.0);
        // The biases with the input and hidden zero points folded in.
        let bias = call.table("BIAS", &self.1);
        let [x, w @ ..] = call.inputs() else {
            return Err(unsupported("LSTM operands are missing"));
        };
        let fields = WEIGHTS.map(|f| Ident::new(f, Span::call_site()));
        let states = call.states();
        if call.in_place().is_some() {
            // (int8: the byte offsets are element offsets.)
            let (data, input_at, output_at) = call.narrowed()?;
            let scratch = call.scratch(false)?;
            let f = kernel_fn("lstm", "lstm_s8_in_place");
            return Ok(quote! {
                #f(
                    #p, #bias, #data, #input_at, #output_at,
                    &::kiln::kernels::lstm::LstmWeights { #(#fields: #w),* },
                    #(#states,)* #scratch
                );
            });
        }
        let f = kernel_fn("lstm", "lstm_s8");
        let out = call.output();
        Ok(quote! {
            #f(
                #p, #bias, #x,
                &::kiln::kernels::lstm::LstmWeights { #(#fields: #w),* },
                #(#states,)* #out
            );
        })
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let input = io.i8(0);
        let weights: Vec<&[i8]> = (1..=8).map(|s| i8s(io.input(s))).collect();
        let w = lstm::LstmWeights {
            input_to_input: weights[0],
            input_to_forget: weights[1],
            input_to_cell: weights[2],
            input_to_output: weights[3],
            recurrent_to_input: weights[4],
            recurrent_to_forget: weights[5],
            recurrent_to_cell: weights[6],
            recurrent_to_output: weights[7],
        };
        let (states, out) = io.states_and_out();
        let [hidden, cell] = states else {
            panic!("LSTM has two states")
        };
        lstm::lstm_s8(
            &self.0,
            &self.1,
            input,
            &w,
            o8(hidden.bytes_mut()),
            o16(cell.bytes_mut()),
            o8(out),
        );
    }
}
