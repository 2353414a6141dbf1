//! A host executor for lowered steps, for tests only (feature `exec`).
//!
//! It runs the same [`Step`]s the emitter renders, calling the same kernels with the same
//! parameters, with each tensor in its own aligned host buffer. Kernel tests use it to run
//! thousands of single-operator models against TFLM without generating code for each.
//! Generated firmware never contains it.

use crate::lower::{Elem, Kernel, Operand, PadValue, Step};
use kiln_kernels as k;
use kiln_planner::ir::{Graph, TensorId};

/// Tensor bytes, 16-byte aligned (stored as `u128`s).
#[derive(Clone, Debug, Default)]
pub struct Buffer {
    words: Vec<u128>,
    len: usize,
}

impl Buffer {
    fn zeroed(len: usize) -> Self {
        Buffer {
            words: vec![0; len.div_ceil(16)],
            len,
        }
    }

    fn from_bytes(bytes: &[u8]) -> Self {
        let mut b = Self::zeroed(bytes.len());
        b.bytes_mut().copy_from_slice(bytes);
        b
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len]
    }

    /// The bytes, mutable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.words)[..self.len]
    }
}

/// Runs `steps` of `graph` with the given graph inputs; returns every tensor's bytes
/// (constants, inputs, and everything the steps wrote), indexed by tensor.
pub fn run(graph: &Graph, steps: &[Step], inputs: &[&[u8]]) -> Vec<Buffer> {
    let mut t: Vec<Buffer> = graph
        .tensors
        .iter()
        .map(|x| match x.data() {
            Some(d) => Buffer::from_bytes(d),
            None => Buffer::zeroed(x.bytes()),
        })
        .collect();
    for (i, x) in graph.tensors.iter().enumerate() {
        if x.kind == kiln_planner::ir::TensorKind::Variable {
            t[i].bytes_mut()
                .fill(crate::lower::reset_byte(graph, TensorId(i)));
        }
    }
    for (&id, bytes) in graph.inputs.iter().zip(inputs) {
        t[id.0].bytes_mut().copy_from_slice(bytes);
    }
    for step in steps {
        let out_id = step.outputs[0];
        let mut out = std::mem::take(&mut t[out_id.0]);
        let mut states: Vec<Buffer> = step
            .states
            .iter()
            .map(|s| std::mem::take(&mut t[s.0]))
            .collect();
        exec(step, &t, &mut states, out.bytes_mut());
        for (s, b) in step.states.iter().zip(states) {
            t[s.0] = b;
        }
        t[out_id.0] = out;
    }
    t
}

fn i8s(b: &[u8]) -> &[i8] {
    bytemuck::cast_slice(b)
}
fn i16s(b: &[u8]) -> &[i16] {
    bytemuck::cast_slice(b)
}
fn i32s(b: &[u8]) -> &[i32] {
    bytemuck::cast_slice(b)
}
fn f32s(b: &[u8]) -> &[f32] {
    bytemuck::cast_slice(b)
}

fn o8(b: &mut [u8]) -> &mut [i8] {
    bytemuck::cast_slice_mut(b)
}
fn o16(b: &mut [u8]) -> &mut [i16] {
    bytemuck::cast_slice_mut(b)
}
fn o32(b: &mut [u8]) -> &mut [i32] {
    bytemuck::cast_slice_mut(b)
}
fn of(b: &mut [u8]) -> &mut [f32] {
    bytemuck::cast_slice_mut(b)
}

fn exec(step: &Step, t: &[Buffer], states: &mut [Buffer], out: &mut [u8]) {
    let get = |i: usize| -> &[u8] {
        let id: TensorId = step.inputs[i].tensor().expect("a present input");
        t[id.0].bytes()
    };
    let opt = |i: usize| -> Option<&[u8]> {
        match step.inputs.get(i) {
            Some(Operand::Optional(Some(id))) | Some(Operand::Tensor(id)) => Some(t[id.0].bytes()),
            _ => None,
        }
    };
    use k::*;
    match &step.kernel {
        Kernel::FullyConnectedS8(p) => fully_connected::fully_connected_s8(
            p,
            i8s(get(0)),
            i8s(get(1)),
            opt(2).map(i32s),
            o8(out),
        ),
        Kernel::FullyConnectedPerChannelS8(p, c) => {
            fully_connected::fully_connected_per_channel_s8(
                p,
                &c.multiplier,
                &c.shift,
                i8s(get(0)),
                i8s(get(1)),
                opt(2).map(i32s),
                o8(out),
            )
        }
        Kernel::FullyConnectedF32(p) => fully_connected::fully_connected_f32(
            p,
            f32s(get(0)),
            f32s(get(1)),
            opt(2).map(f32s),
            of(out),
        ),
        Kernel::Conv2dS8(p, c) => conv_2d::conv_2d_s8(
            p,
            &c.multiplier,
            &c.shift,
            i8s(get(0)),
            i8s(get(1)),
            opt(2).map(i32s),
            o8(out),
        ),
        Kernel::Conv2dF32(p) => {
            conv_2d::conv_2d_f32(p, f32s(get(0)), f32s(get(1)), opt(2).map(f32s), of(out))
        }
        Kernel::DepthwiseConv2dS8(p, c) => depthwise_conv_2d::depthwise_conv_2d_s8(
            p,
            &c.multiplier,
            &c.shift,
            i8s(get(0)),
            i8s(get(1)),
            opt(2).map(i32s),
            o8(out),
        ),
        Kernel::DepthwiseConv2dF32(p) => depthwise_conv_2d::depthwise_conv_2d_f32(
            p,
            f32s(get(0)),
            f32s(get(1)),
            opt(2).map(f32s),
            of(out),
        ),
        Kernel::AveragePoolS8(p) => {
            pooling::average_pool_s8(p, i8s(get(0)), o8(out));
        }
        Kernel::AveragePoolF32(p) => {
            pooling::average_pool_f32(p, f32s(get(0)), of(out));
        }
        Kernel::MaxPoolS8(p) => pooling::max_pool_s8(p, i8s(get(0)), o8(out)),
        Kernel::MaxPoolF32(p) => pooling::max_pool_f32(p, f32s(get(0)), of(out)),
        Kernel::SoftmaxS8(p) => softmax::softmax_s8(p, i8s(get(0)), o8(out)),
        Kernel::SoftmaxS8S16(p) => softmax::softmax_s8_s16(p, i8s(get(0)), o16(out)),
        Kernel::SoftmaxF32(p) => softmax::softmax_f32(p, f32s(get(0)), of(out)),
        Kernel::AddS8(p, None) => add::add_s8(p, i8s(get(0)), i8s(get(1)), o8(out)),
        Kernel::AddS8(p, Some(b)) => add::add_broadcast_s8(p, b, i8s(get(0)), i8s(get(1)), o8(out)),
        Kernel::AddS16(p, None) => add::add_s16(p, i16s(get(0)), i16s(get(1)), o16(out)),
        Kernel::AddS16(p, Some(b)) => {
            add::add_broadcast_s16(p, b, i16s(get(0)), i16s(get(1)), o16(out))
        }
        Kernel::AddF32(p, None) => add::add_f32(p, f32s(get(0)), f32s(get(1)), of(out)),
        Kernel::AddF32(p, Some(b)) => {
            add::add_broadcast_f32(p, b, f32s(get(0)), f32s(get(1)), of(out))
        }
        Kernel::SubS8(p, None) => sub::sub_s8(p, i8s(get(0)), i8s(get(1)), o8(out)),
        Kernel::SubS8(p, Some(b)) => sub::sub_broadcast_s8(p, b, i8s(get(0)), i8s(get(1)), o8(out)),
        Kernel::SubF32(p, None) => sub::sub_f32(p, f32s(get(0)), f32s(get(1)), of(out)),
        Kernel::SubF32(p, Some(b)) => {
            sub::sub_broadcast_f32(p, b, f32s(get(0)), f32s(get(1)), of(out))
        }
        Kernel::MulS8(p, None) => mul::mul_s8(p, i8s(get(0)), i8s(get(1)), o8(out)),
        Kernel::MulS8(p, Some(b)) => mul::mul_broadcast_s8(p, b, i8s(get(0)), i8s(get(1)), o8(out)),
        Kernel::MulF32(p, None) => mul::mul_f32(p, f32s(get(0)), f32s(get(1)), of(out)),
        Kernel::MulF32(p, Some(b)) => {
            mul::mul_broadcast_f32(p, b, f32s(get(0)), f32s(get(1)), of(out))
        }
        Kernel::LogisticS8(p) => logistic::logistic_s8(p, i8s(get(0)), o8(out)),
        Kernel::TanhS8(p) => tanh::tanh_s8(p, i8s(get(0)), o8(out)),
        Kernel::ReluS8(p) => relu::relu_s8(p, i8s(get(0)), o8(out)),
        Kernel::Relu6S8(p) => relu::relu6_s8(p, i8s(get(0)), o8(out)),
        Kernel::ReluF32 => relu::relu_f32(f32s(get(0)), of(out)),
        Kernel::Relu6F32 => relu::relu6_f32(f32s(get(0)), of(out)),
        Kernel::QuantizeF32S8(p) => quantize::quantize_f32_s8(p, f32s(get(0)), o8(out)),
        Kernel::RequantizeS8S8(p) => quantize::requantize_s8_s8(p, i8s(get(0)), o8(out)),
        Kernel::DequantizeS8F32(p) => dequantize::dequantize_s8_f32(p, i8s(get(0)), of(out)),
        Kernel::Concatenation(p, e) => {
            let n = step.inputs.len();
            let raw: Vec<&[u8]> = (0..n).map(get).collect();
            match e {
                Elem::I8 => {
                    let v: Vec<&[i8]> = raw.iter().map(|b| i8s(b)).collect();
                    concatenation::concatenation(p, &v, o8(out));
                }
                Elem::I16 => {
                    let v: Vec<&[i16]> = raw.iter().map(|b| i16s(b)).collect();
                    concatenation::concatenation(p, &v, o16(out));
                }
                Elem::I32 => {
                    let v: Vec<&[i32]> = raw.iter().map(|b| i32s(b)).collect();
                    concatenation::concatenation(p, &v, o32(out));
                }
                Elem::F32 => {
                    let v: Vec<&[f32]> = raw.iter().map(|b| f32s(b)).collect();
                    concatenation::concatenation(p, &v, of(out));
                }
            }
        }
        Kernel::Pad(p, _, v) => match *v {
            PadValue::I8(v) => pad::pad(p, i8s(get(0)), v, o8(out)),
            PadValue::I16(v) => pad::pad(p, i16s(get(0)), v, o16(out)),
            PadValue::I32(v) => pad::pad(p, i32s(get(0)), v, o32(out)),
            PadValue::F32(v) => pad::pad(p, f32s(get(0)), v, of(out)),
        },
        Kernel::SvdfS8(p) => svdf::svdf_s8(
            p,
            i8s(get(0)),
            i8s(get(1)),
            i8s(get(2)),
            opt(3).map(i32s),
            o8(states[0].bytes_mut()),
            o8(out),
        ),
        Kernel::SvdfS8S16(p) => svdf::svdf_s8_s16(
            p,
            i8s(get(0)),
            i8s(get(1)),
            i16s(get(2)),
            opt(3).map(i32s),
            o16(states[0].bytes_mut()),
            o8(out),
        ),
        Kernel::SvdfF32(p) => svdf::svdf_f32(
            p,
            f32s(get(0)),
            f32s(get(1)),
            f32s(get(2)),
            opt(3).map(f32s),
            of(states[0].bytes_mut()),
            of(out),
        ),
        Kernel::LstmS8(p, bias) => {
            let w = lstm::LstmWeights {
                input_to_input: i8s(get(1)),
                input_to_forget: i8s(get(2)),
                input_to_cell: i8s(get(3)),
                input_to_output: i8s(get(4)),
                recurrent_to_input: i8s(get(5)),
                recurrent_to_forget: i8s(get(6)),
                recurrent_to_cell: i8s(get(7)),
                recurrent_to_output: i8s(get(8)),
            };
            let [hidden, cell] = states else {
                panic!("LSTM has two states")
            };
            lstm::lstm_s8(
                p,
                bias,
                i8s(get(0)),
                &w,
                o8(hidden.bytes_mut()),
                o16(cell.bytes_mut()),
                o8(out),
            );
        }
        Kernel::Copy => out.copy_from_slice(get(0)),
    }
}
