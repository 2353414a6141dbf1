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
        run_step(step, &t, &mut states, out.bytes_mut());
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
fn i64s(b: &[u8]) -> &[i64] {
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

/// Runs one lowered step: reads its inputs from `t` (indexed by tensor), updates `states`
/// (its variable tensors, in order) and writes `out`. Benchmarks time this call.
pub fn run_step(step: &Step, t: &[Buffer], states: &mut [Buffer], out: &mut [u8]) {
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
        Kernel::AddS8Tables(p, t1, t2) => add::add_s8_tables(
            p,
            t1.as_slice().try_into().expect("256 entries"),
            t2.as_slice().try_into().expect("256 entries"),
            i8s(get(0)),
            i8s(get(1)),
            o8(out),
        ),
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
        Kernel::Conv2dS16(p, c) => conv_2d::conv_2d_s16(
            p,
            &c.multiplier,
            &c.shift,
            i16s(get(0)),
            i8s(get(1)),
            opt(2).map(i64s),
            o16(out),
        ),
        Kernel::Conv2dS16Bias32(p, c) => conv_2d::conv_2d_s16_bias32(
            p,
            &c.multiplier,
            &c.shift,
            i16s(get(0)),
            i8s(get(1)),
            i32s(get(2)),
            o16(out),
        ),
        Kernel::DepthwiseConv2dS16(p, c) => depthwise_conv_2d::depthwise_conv_2d_s16(
            p,
            &c.multiplier,
            &c.shift,
            i16s(get(0)),
            i8s(get(1)),
            i64s(get(2)),
            o16(out),
        ),
        Kernel::FullyConnectedS16(p) => fully_connected::fully_connected_s16(
            p,
            i16s(get(0)),
            i8s(get(1)),
            opt(2).map(i64s),
            o16(out),
        ),
        Kernel::FullyConnectedS16Bias32(p) => fully_connected::fully_connected_s16_bias32(
            p,
            i16s(get(0)),
            i8s(get(1)),
            i32s(get(2)),
            o16(out),
        ),
        Kernel::FullyConnectedPerChannelS16(p, c) => {
            fully_connected::fully_connected_per_channel_s16(
                p,
                &c.multiplier,
                &c.shift,
                i16s(get(0)),
                i8s(get(1)),
                opt(2).map(i64s),
                o16(out),
            )
        }
        Kernel::FullyConnectedPerChannelS16Bias32(p, c) => {
            fully_connected::fully_connected_per_channel_s16_bias32(
                p,
                &c.multiplier,
                &c.shift,
                i16s(get(0)),
                i8s(get(1)),
                i32s(get(2)),
                o16(out),
            )
        }
        Kernel::SoftmaxS16(p, e, r) => softmax::softmax_s16(p, e, r, i16s(get(0)), o16(out)),
        Kernel::MeanS8(p) => mean::mean_s8(p, i8s(get(0)), o8(out)),
        Kernel::MeanS16(p) => mean::mean_s16(p, i16s(get(0)), o16(out)),
        Kernel::MeanF32(p) => mean::mean_f32(p, f32s(get(0)), of(out)),
        Kernel::Requantize(p, a, b) => match (a, b) {
            (Elem::I16, Elem::I8) => requantize::requantize_s16_s8(p, i16s(get(0)), o8(out)),
            (Elem::I8, Elem::I16) => requantize::requantize_s8_s16(p, i8s(get(0)), o16(out)),
            (Elem::I16, Elem::I16) => requantize::requantize_s16_s16(p, i16s(get(0)), o16(out)),
            (Elem::I16, Elem::I32) => requantize::requantize_s16_s32(p, i16s(get(0)), o32(out)),
            (Elem::I8, Elem::I32) => requantize::requantize_s8_s32(p, i8s(get(0)), o32(out)),
            other => panic!("no requantize kernel for {other:?}"),
        },
        Kernel::LeakyReluS8(p) => leaky_relu::leaky_relu_s8(p, i8s(get(0)), o8(out)),
        Kernel::LeakyReluS16(p) => leaky_relu::leaky_relu_s16(p, i16s(get(0)), o16(out)),
        Kernel::LeakyReluF32(p) => leaky_relu::leaky_relu_f32(p, f32s(get(0)), of(out)),
        Kernel::HardSwishS8(p) => hard_swish::hard_swish_s8(p, i8s(get(0)), o8(out)),
        Kernel::HardSwishF32 => hard_swish::hard_swish_f32(f32s(get(0)), of(out)),
        Kernel::LogisticF32 => activations_f32::logistic_f32(f32s(get(0)), of(out)),
        Kernel::TanhF32 => activations_f32::tanh_f32(f32s(get(0)), of(out)),
        Kernel::Maximum(e, b) | Kernel::Minimum(e, b) => {
            let max = matches!(step.kernel, Kernel::Maximum(..));
            macro_rules! go {
                ($view:ident, $out:ident) => {{
                    let (x, y, o) = ($view(get(0)), $view(get(1)), $out(out));
                    match (max, b) {
                        (true, None) => maximum_minimum::maximum(x, y, o),
                        (true, Some(b)) => maximum_minimum::maximum_broadcast(b, x, y, o),
                        (false, None) => maximum_minimum::minimum(x, y, o),
                        (false, Some(b)) => maximum_minimum::minimum_broadcast(b, x, y, o),
                    }
                }};
            }
            match e {
                Elem::I8 => go!(i8s, o8),
                Elem::I16 => go!(i16s, o16),
                Elem::I32 => go!(i32s, o32),
                Elem::F32 => go!(f32s, of),
            }
        }
        Kernel::DivF32(p, None) => div::div_f32(p, f32s(get(0)), f32s(get(1)), of(out)),
        Kernel::DivF32(p, Some(b)) => {
            div::div_broadcast_f32(p, b, f32s(get(0)), f32s(get(1)), of(out))
        }
        Kernel::Cast(a, b) => {
            macro_rules! to {
                ($x:expr) => {
                    match b {
                        Elem::I8 => cast::cast($x, o8(out)),
                        Elem::I16 => cast::cast($x, o16(out)),
                        Elem::I32 => cast::cast($x, o32(out)),
                        Elem::F32 => cast::cast($x, of(out)),
                    }
                };
            }
            match a {
                Elem::I8 => to!(i8s(get(0))),
                Elem::I16 => to!(i16s(get(0))),
                Elem::I32 => to!(i32s(get(0))),
                Elem::F32 => to!(f32s(get(0))),
            }
        }
        Kernel::Transpose(p, e) => unary_generic(*e, get(0), out, |x, o| match (x, o) {
            (Slices::I8(x), SlicesMut::I8(o)) => transpose::transpose(p, x, o),
            (Slices::I16(x), SlicesMut::I16(o)) => transpose::transpose(p, x, o),
            (Slices::I32(x), SlicesMut::I32(o)) => transpose::transpose(p, x, o),
            (Slices::F32(x), SlicesMut::F32(o)) => transpose::transpose(p, x, o),
            _ => unreachable!("one element type"),
        }),
        Kernel::StridedSlice(p, e) => unary_generic(*e, get(0), out, |x, o| match (x, o) {
            (Slices::I8(x), SlicesMut::I8(o)) => strided_slice::strided_slice(p, x, o),
            (Slices::I16(x), SlicesMut::I16(o)) => strided_slice::strided_slice(p, x, o),
            (Slices::I32(x), SlicesMut::I32(o)) => strided_slice::strided_slice(p, x, o),
            (Slices::F32(x), SlicesMut::F32(o)) => strided_slice::strided_slice(p, x, o),
            _ => unreachable!("one element type"),
        }),
        Kernel::ResizeNearestNeighbor(p, e) => {
            unary_generic(*e, get(0), out, |x, o| match (x, o) {
                (Slices::I8(x), SlicesMut::I8(o)) => {
                    resize_nearest_neighbor::resize_nearest_neighbor(p, x, o)
                }
                (Slices::I16(x), SlicesMut::I16(o)) => {
                    resize_nearest_neighbor::resize_nearest_neighbor(p, x, o)
                }
                (Slices::I32(x), SlicesMut::I32(o)) => {
                    resize_nearest_neighbor::resize_nearest_neighbor(p, x, o)
                }
                (Slices::F32(x), SlicesMut::F32(o)) => {
                    resize_nearest_neighbor::resize_nearest_neighbor(p, x, o)
                }
                _ => unreachable!("one element type"),
            })
        }
        Kernel::ResizeBilinearS8(p) => resize_bilinear::resize_bilinear_s8(p, i8s(get(0)), o8(out)),
        Kernel::ResizeBilinearF32(p) => {
            resize_bilinear::resize_bilinear_f32(p, f32s(get(0)), of(out))
        }
        Kernel::TransposeConvS8(p, c) => {
            let mut scratch = Buffer::zeroed(transpose_conv::scratch_bytes(p));
            transpose_conv::transpose_conv_s8(
                p,
                &c.multiplier,
                &c.shift,
                i8s(get(0)),
                i8s(get(1)),
                opt(2).map(i32s),
                o8(out),
                scratch.bytes_mut(),
            )
        }
        Kernel::TransposeConvF32(p) => transpose_conv::transpose_conv_f32(
            p,
            f32s(get(0)),
            f32s(get(1)),
            opt(2).map(f32s),
            of(out),
        ),
        Kernel::Copy => out.copy_from_slice(get(0)),
    }
}

/// A typed view of input bytes, for the generic kernels.
enum Slices<'a> {
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    F32(&'a [f32]),
}

/// A typed view of output bytes, for the generic kernels.
enum SlicesMut<'a> {
    I8(&'a mut [i8]),
    I16(&'a mut [i16]),
    I32(&'a mut [i32]),
    F32(&'a mut [f32]),
}

/// Runs a generic one-input kernel on `input` and `out` viewed as `e`.
fn unary_generic(e: Elem, input: &[u8], out: &mut [u8], f: impl FnOnce(Slices, SlicesMut)) {
    match e {
        Elem::I8 => f(Slices::I8(i8s(input)), SlicesMut::I8(o8(out))),
        Elem::I16 => f(Slices::I16(i16s(input)), SlicesMut::I16(o16(out))),
        Elem::I32 => f(Slices::I32(i32s(input)), SlicesMut::I32(o32(out))),
        Elem::F32 => f(Slices::F32(f32s(input)), SlicesMut::F32(of(out))),
    }
}
