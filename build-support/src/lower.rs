//! Lowering: each operator of a planned graph to one kernel call, as data.
//!
//! This is where TFLM's `Prepare` happens, at build time: the kernels' `prepare*`
//! functions turn tensor shapes, scales and options into constant parameters (multipliers,
//! shifts, offsets, activation ranges, tables). The result is a list of [`Step`]s that
//! [`crate::emit`] renders as Rust and that the host executor ([`crate::exec`], for tests)
//! runs directly, so both see exactly the same parameters.

use kiln_kernels as k;
use kiln_planner::diag::{Diagnostic, Result};
use kiln_planner::ir::{self, DType, Graph, Op, OpId, OpKind, Quantization, TensorId};
use kiln_planner::plan::Plan;

/// Operators Kiln compiles (for at least one dtype combination).
pub const SUPPORTED_OPS: &[&str] = &[
    "ADD",
    "AVERAGE_POOL_2D",
    "CAST",
    "CONCATENATION",
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "DEQUANTIZE",
    "DIV",
    "EXPAND_DIMS",
    "FULLY_CONNECTED",
    "HARD_SWISH",
    "LEAKY_RELU",
    "LOGISTIC",
    "MAXIMUM",
    "MAX_POOL_2D",
    "MEAN",
    "MINIMUM",
    "MUL",
    "PAD",
    "PADV2",
    "QUANTIZE",
    "RELU",
    "RELU6",
    "RESHAPE",
    "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR",
    "SOFTMAX",
    "SQUEEZE",
    "STRIDED_SLICE",
    "SUB",
    "SVDF",
    "TANH",
    "TRANSPOSE",
    "TRANSPOSE_CONV",
    "UNIDIRECTIONAL_SEQUENCE_LSTM",
];

/// Per-channel requantization tables.
#[derive(Clone, Debug, PartialEq)]
pub struct PerChannel {
    pub multiplier: Vec<i32>,
    pub shift: Vec<i32>,
}

impl PerChannel {
    /// Tables of `channels` entries written by a kernel's `prepare*` (`fill(multiplier,
    /// shift)`), returned with what it returns.
    fn prepare<P>(
        channels: usize,
        fill: impl FnOnce(&mut [i32], &mut [i32]) -> std::result::Result<P, k::quant::PrepareError>,
    ) -> Result<(P, PerChannel)> {
        let (mut multiplier, mut shift) = (vec![0; channels], vec![0; channels]);
        let p = fill(&mut multiplier, &mut shift).map_err(prepare_error)?;
        Ok((p, PerChannel { multiplier, shift }))
    }
}

/// Element types the generic kernels are instantiated with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    I8,
    I16,
    I32,
    F32,
}

/// A kernel call with its constant parameters. Each variant is one kernel function.
#[derive(Clone, Debug, PartialEq)]
pub enum Kernel {
    FullyConnectedS8(k::fully_connected::Params),
    FullyConnectedPerChannelS8(k::fully_connected::Params, PerChannel),
    FullyConnectedF32(k::fully_connected::Params),
    Conv2dS8(k::conv_2d::Params, PerChannel),
    Conv2dF32(k::conv_2d::Params),
    DepthwiseConv2dS8(k::depthwise_conv_2d::Params, PerChannel),
    DepthwiseConv2dF32(k::depthwise_conv_2d::Params),
    AveragePoolS8(k::pooling::Params),
    AveragePoolF32(k::pooling::Params),
    MaxPoolS8(k::pooling::Params),
    MaxPoolF32(k::pooling::Params),
    SoftmaxS8(k::softmax::Params),
    SoftmaxS8S16(k::softmax::Params),
    SoftmaxF32(k::softmax::Params),
    AddS8(k::add::Params, Option<k::broadcast::Broadcast>),
    /// Same-shape int8 ADD of at least `add::TABLES_FROM_ELEMENTS` elements, with both inputs'
    /// rescaling precomputed in two 256-entry tables.
    AddS8Tables(k::add::Params, Vec<i32>, Vec<i32>),
    AddS16(k::add::Params, Option<k::broadcast::Broadcast>),
    AddF32(k::add::Params, Option<k::broadcast::Broadcast>),
    SubS8(k::add::Params, Option<k::broadcast::Broadcast>),
    SubF32(k::add::Params, Option<k::broadcast::Broadcast>),
    MulS8(k::mul::Params, Option<k::broadcast::Broadcast>),
    MulF32(k::mul::Params, Option<k::broadcast::Broadcast>),
    LogisticS8(k::logistic::Params),
    TanhS8(k::logistic::Params),
    ReluS8(k::relu::Params),
    Relu6S8(k::relu::Params),
    ReluF32,
    Relu6F32,
    QuantizeF32S8(k::quantize::Params),
    RequantizeS8S8(k::quantize::Params),
    DequantizeS8F32(k::dequantize::Params),
    /// CONCATENATION of inputs of one element type (a copy; quantization must agree).
    Concatenation(k::concatenation::Params, Elem),
    /// PAD with a constant pad value.
    Pad(k::pad::Params, Elem, PadValue),
    /// SVDF with int8 state and time weights.
    SvdfS8(k::svdf::Params),
    /// SVDF with int16 state and time weights.
    SvdfS8S16(k::svdf::Params),
    SvdfF32(k::svdf::Params),
    /// UNIDIRECTIONAL_SEQUENCE_LSTM, int8 with int16 cell state; the folded biases.
    LstmS8(k::lstm::Params, Vec<i32>),
    /// 16x8 CONV_2D with an optional int64 bias, or with an int32 bias.
    Conv2dS16(k::conv_2d::Params, PerChannel),
    Conv2dS16Bias32(k::conv_2d::Params, PerChannel),
    /// 16x8 DEPTHWISE_CONV_2D (int64 bias, required).
    DepthwiseConv2dS16(k::depthwise_conv_2d::Params, PerChannel),
    /// 16x8 FULLY_CONNECTED: per-tensor or per-channel, optional int64 bias or int32 bias.
    FullyConnectedS16(k::fully_connected::Params),
    FullyConnectedS16Bias32(k::fully_connected::Params),
    FullyConnectedPerChannelS16(k::fully_connected::Params, PerChannel),
    FullyConnectedPerChannelS16Bias32(k::fully_connected::Params, PerChannel),
    /// int16 SOFTMAX with its exp and 1/(1+x) tables.
    SoftmaxS16(k::softmax::Params, Vec<i16>, Vec<i16>),
    MeanS8(k::mean::Params),
    MeanS16(k::mean::Params),
    MeanF32(k::mean::Params),
    /// QUANTIZE between integer types (input, output).
    Requantize(k::quantize::Params, Elem, Elem),
    LeakyReluS8(k::leaky_relu::Params),
    LeakyReluS16(k::leaky_relu::Params),
    LeakyReluF32(k::leaky_relu::Params),
    HardSwishS8(k::hard_swish::Params),
    HardSwishF32,
    LogisticF32,
    TanhF32,
    Maximum(Elem, Option<k::broadcast::Broadcast>),
    Minimum(Elem, Option<k::broadcast::Broadcast>),
    DivF32(k::div::Params, Option<k::broadcast::Broadcast>),
    /// CAST from one element type to another.
    Cast(Elem, Elem),
    Transpose(k::transpose::Params, Elem),
    StridedSlice(k::strided_slice::Params, Elem),
    ResizeNearestNeighbor(k::resize_nearest_neighbor::Params, Elem),
    ResizeBilinearS8(k::resize_bilinear::Params),
    ResizeBilinearF32(k::resize_bilinear::Params),
    /// int8 TRANSPOSE_CONV; needs `scratch_bytes` of arena scratch.
    TransposeConvS8(k::transpose_conv::Params, PerChannel),
    TransposeConvF32(k::transpose_conv::Params),
    /// RESHAPE, SQUEEZE, EXPAND_DIMS: the bytes are copied unchanged.
    Copy,
}

/// The value PAD fills with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PadValue {
    I8(i8),
    I16(i16),
    I32(i32),
    F32(f32),
}

/// A tensor argument of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A tensor the kernel always reads.
    Tensor(TensorId),
    /// An optional input (a bias): the kernel takes an `Option`.
    Optional(Option<TensorId>),
}

impl Operand {
    /// The tensor, if present.
    pub fn tensor(self) -> Option<TensorId> {
        match self {
            Operand::Tensor(t) => Some(t),
            Operand::Optional(t) => t,
        }
    }
}

/// One operator lowered to one kernel call.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub op: OpId,
    pub kernel: Kernel,
    /// Tensors the kernel reads, in argument order.
    pub inputs: Vec<Operand>,
    /// Variable tensors (persistent state) the kernel reads and writes, before the output.
    pub states: Vec<TensorId>,
    /// Tensors the kernel writes, in argument order.
    pub outputs: Vec<TensorId>,
}

/// The byte a variable tensor is reset to: TFLM fills int8 state with its zero point and
/// every other type with zeros.
pub fn reset_byte(graph: &Graph, t: TensorId) -> u8 {
    let tensor = graph.tensor(t);
    match (&tensor.quant, tensor.dtype) {
        (Quantization::PerTensor { zero_point, .. }, DType::I8) => *zero_point as i8 as u8,
        _ => 0,
    }
}

/// Lowers every operator of `graph` in plan order.
pub fn lower(graph: &Graph, plan: &Plan) -> Result<Vec<Step>> {
    plan.order
        .iter()
        .map(|&id| {
            let op = graph.op(id);
            Lower { graph, op }
                .lower()
                .map_err(|d| locate_scale(graph, op, d).at_op(op.id.0, op.kind.name()))
        })
        .collect()
}

/// For a multiplier out of range: names the operator's tensor with the most extreme scale
/// (furthest from 1, the usual culprit) and lists the scales the multiplier came from.
fn locate_scale(graph: &Graph, op: &Op, mut d: Diagnostic) -> Diagnostic {
    if d.message != SHIFT_OUT_OF_RANGE || d.tensor.is_some() {
        return d;
    }
    let scales = |t: TensorId| -> Vec<f32> {
        match &graph.tensor(t).quant {
            Quantization::PerTensor { scale, .. } => vec![*scale],
            Quantization::PerChannel { scales, .. } => scales.clone(),
            Quantization::None => Vec::new(),
        }
    };
    let tensors: Vec<TensorId> = op
        .present_inputs()
        .chain(op.outputs.iter().copied())
        .collect();
    let extremity = |s: f32| (s as f64).log2().abs();
    let worst = tensors
        .iter()
        .filter_map(|&t| {
            let e = scales(t)
                .into_iter()
                .map(extremity)
                .fold(f64::NAN, f64::max);
            (!e.is_nan()).then_some((t, e))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let listed: Vec<String> = tensors
        .iter()
        .filter_map(|&t| {
            let s = scales(t);
            let (lo, hi) = s.iter().fold((f32::INFINITY, 0.0f32), |(lo, hi), &x| {
                (lo.min(x), hi.max(x))
            });
            let shown = match s.len() {
                0 => return None,
                1 => number(lo as f64),
                n if lo == hi => format!("{} ({n} channels)", number(lo as f64)),
                n => format!(
                    "{}..{} ({n} channels)",
                    number(lo as f64),
                    number(hi as f64)
                ),
            };
            Some(format!("tensor {} {shown}", t.0))
        })
        .collect();
    d.message = format!("{SHIFT_OUT_OF_RANGE} (scales: {})", listed.join(", "));
    match worst {
        Some((t, _)) => d.at_tensor(t.0, graph.tensor(t).name.clone()),
        None => d,
    }
}

/// A number as a person writes it: `0.5`, `1e-45`, `3.4e38`, `3.5681e42` (the shortest `f32`
/// form where `f32` holds it).
fn number(x: f64) -> String {
    let f = x as f32;
    if !f.is_finite() && x.is_finite() {
        format!("{x:.4e}")
    } else if x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{f:e}")
    } else {
        format!("{f}")
    }
}

fn unsupported(message: impl Into<String>) -> Diagnostic {
    Diagnostic::unsupported(message)
}

/// The message of a requantization multiplier out of a kernel's range; [`lower`] adds the
/// tensor whose scale is the most extreme and the scales of the operator's tensors.
const SHIFT_OUT_OF_RANGE: &str =
    "a requantization multiplier is out of the range the kernel can apply";

fn prepare_error(e: k::quant::PrepareError) -> Diagnostic {
    use k::quant::PrepareError as P;
    if let P::ShiftOutOfRange {
        multiplier,
        shift,
        range,
    } = e
    {
        let found = match shift {
            Some(s) => format!("multiplier {} with exponent {s}", number(multiplier)),
            None => format!("multiplier {multiplier}"),
        };
        return unsupported(SHIFT_OUT_OF_RANGE).expected_found(
            format!("a power-of-two exponent in {}..={}", range.min, range.max),
            found,
        );
    }
    unsupported(match e {
        P::ShiftOutOfRange { .. } => unreachable!("handled above"),
        P::MultiplierOutOfRange => "a requantization multiplier is out of the range TFLM accepts",
        P::ActivationRangeOverflow => "the fused activation's range overflows the output type",
        P::InvalidShape => "the tensor shapes do not fit the operator",
        P::UnsupportedQuantization => {
            "the quantization parameters are not supported by TFLM's kernel"
        }
    })
}

fn activation(a: ir::Activation) -> k::quant::Activation {
    match a {
        ir::Activation::None => k::quant::Activation::None,
        ir::Activation::Relu => k::quant::Activation::Relu,
        ir::Activation::ReluN1To1 => k::quant::Activation::ReluN1To1,
        ir::Activation::Relu6 => k::quant::Activation::Relu6,
        ir::Activation::Tanh => k::quant::Activation::Tanh,
        ir::Activation::SignBit => k::quant::Activation::SignBit,
    }
}

fn padding(p: ir::Padding) -> k::quant::Padding {
    match p {
        ir::Padding::Same => k::quant::Padding::Same,
        ir::Padding::Valid => k::quant::Padding::Valid,
    }
}

fn positive(s: i32, what: &str) -> Result<usize> {
    usize::try_from(s).ok().filter(|&s| s > 0).ok_or_else(|| {
        unsupported(format!("the {what} must be positive")).expected_found(">= 1", s.to_string())
    })
}

/// Bytes as `i8` (same size and alignment, so a plain reinterpretation).
fn bytemuck_i8(bytes: &[u8]) -> &[i8] {
    bytemuck::cast_slice(bytes)
}

fn elem(dtype: DType) -> Result<Elem> {
    Ok(match dtype {
        DType::I8 => Elem::I8,
        DType::I16 => Elem::I16,
        DType::I32 => Elem::I32,
        DType::F32 => Elem::F32,
        other => {
            return Err(unsupported(format!(
                "{other} tensors are not supported here"
            )));
        }
    })
}

fn types(a: DType, b: DType) -> String {
    format!("{a} -> {b}")
}

/// The elementwise binary operators that share a lowering.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Binary {
    Add,
    Sub,
    Mul,
}

struct Lower<'a> {
    graph: &'a Graph,
    op: &'a Op,
}

impl<'a> Lower<'a> {
    fn tensor(&self, t: TensorId) -> &'a ir::Tensor {
        self.graph.tensor(t)
    }

    fn input(&self, slot: usize) -> Result<TensorId> {
        self.op
            .input(slot)
            .ok_or_else(|| unsupported(format!("input {slot} is missing")))
    }

    fn output(&self) -> Result<TensorId> {
        match self.op.outputs.as_slice() {
            [t] => Ok(*t),
            other => Err(unsupported("the operator must have exactly one output")
                .expected_found("1 output", format!("{} outputs", other.len()))),
        }
    }

    fn dtype(&self, t: TensorId) -> DType {
        self.tensor(t).dtype
    }

    fn quant(&self, t: TensorId) -> Result<k::quant::QuantParams> {
        let tensor = self.tensor(t);
        let at = |d: Diagnostic| d.at_tensor(t.0, tensor.name.clone());
        match &tensor.quant {
            Quantization::PerTensor { scale, zero_point } => Ok(k::quant::QuantParams {
                scale: *scale,
                zero_point: i32::try_from(*zero_point)
                    .map_err(|_| at(unsupported("the zero point does not fit in 32 bits")))?,
            }),
            _ => Err(at(unsupported(
                "a per-tensor quantized tensor is expected here",
            ))),
        }
    }

    /// Scales of symmetric weights (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV), one per
    /// output channel (`channels`) if the tensor is per-tensor. TFLM's kernels for these
    /// ignore the weights' zero point, so a non-zero one would make the model compute
    /// something other than it says: it is refused.
    fn scales(&self, t: TensorId, channels: usize) -> Result<Vec<f32>> {
        let tensor = self.tensor(t);
        let at = |d: Diagnostic| d.at_tensor(t.0, tensor.name.clone());
        let (scales, zero_points) = match &tensor.quant {
            Quantization::PerTensor { scale, zero_point } => {
                (vec![*scale; channels], std::slice::from_ref(zero_point))
            }
            Quantization::PerChannel {
                scales,
                zero_points,
                ..
            } => (scales.clone(), zero_points.as_slice()),
            Quantization::None => {
                return Err(at(unsupported("quantized weights are expected here")));
            }
        };
        if let Some(z) = zero_points.iter().find(|&&z| z != 0) {
            return Err(at(unsupported(
                "the weights' zero point must be 0: TFLM's kernel ignores it (symmetric weights)",
            )
            .expected_found("zero point 0", format!("zero point {z}"))));
        }
        Ok(scales)
    }

    fn shape4(&self, t: TensorId) -> Result<[usize; 4]> {
        let tensor = self.tensor(t);
        <[usize; 4]>::try_from(tensor.shape.as_slice()).map_err(|_| {
            unsupported("a 4-D tensor is expected")
                .at_tensor(t.0, tensor.name.clone())
                .expected_found("rank 4", format!("shape {:?}", tensor.shape))
        })
    }

    fn check_shape(&self, t: TensorId, want: &[usize]) -> Result<()> {
        let tensor = self.tensor(t);
        if tensor.shape == want {
            Ok(())
        } else {
            Err(
                unsupported("the tensor's shape does not match the operator's parameters")
                    .at_tensor(t.0, tensor.name.clone())
                    .expected_found(format!("{want:?}"), format!("{:?}", tensor.shape)),
            )
        }
    }

    fn need_constant(&self, t: TensorId) -> Result<&'a [u8]> {
        let tensor = self.tensor(t);
        tensor.data().ok_or_else(|| {
            unsupported("this input must be a constant").at_tensor(t.0, tensor.name.clone())
        })
    }

    fn step(&self, kernel: Kernel, inputs: Vec<Operand>, output: TensorId) -> Step {
        Step {
            op: self.op.id,
            kernel,
            inputs,
            states: Vec::new(),
            outputs: vec![output],
        }
    }

    fn lower(&self) -> Result<Step> {
        match &self.op.kind {
            OpKind::FullyConnected(o) => self.fully_connected(o),
            OpKind::Conv2d(o) => self.conv_2d(o),
            OpKind::DepthwiseConv2d(o) => self.depthwise_conv_2d(o),
            OpKind::AveragePool2d(o) => self.pool(o, false),
            OpKind::MaxPool2d(o) => self.pool(o, true),
            OpKind::Softmax { beta } => self.softmax(*beta),
            OpKind::Add(o) => self.binary(o.activation, Binary::Add),
            OpKind::Sub(o) => self.binary(o.activation, Binary::Sub),
            OpKind::Mul { activation } => self.binary(*activation, Binary::Mul),
            OpKind::Logistic => self.logistic(),
            OpKind::Tanh => self.tanh(),
            OpKind::Relu => self.relu(false),
            OpKind::Relu6 => self.relu(true),
            OpKind::Quantize => self.quantize(),
            OpKind::Dequantize => self.dequantize(),
            OpKind::Concatenation(o) => self.concatenation(o),
            OpKind::Pad | OpKind::PadV2 => self.pad(),
            OpKind::Reshape | OpKind::Squeeze { .. } | OpKind::ExpandDims => self.copy(),
            OpKind::Svdf(o) => self.svdf(o),
            OpKind::UnidirectionalSequenceLstm(o) => self.lstm(o),
            OpKind::Mean { .. } => self.mean(),
            OpKind::LeakyRelu { alpha } => self.leaky_relu(*alpha),
            OpKind::HardSwish => self.hard_swish(),
            OpKind::Maximum => self.max_min(true),
            OpKind::Minimum => self.max_min(false),
            OpKind::Div { activation } => self.div(*activation),
            OpKind::Cast => self.cast(),
            OpKind::Transpose => self.transpose(),
            OpKind::StridedSlice(o) => self.strided_slice(o),
            OpKind::ResizeNearestNeighbor(o) => self.resize(o, true),
            OpKind::ResizeBilinear(o) => self.resize(o, false),
            OpKind::TransposeConv(o) => self.transpose_conv(o),
            other => Err(unsupported(format!(
                "Kiln has no kernel for {} (supported: {})",
                other.name(),
                SUPPORTED_OPS.join(", ")
            ))),
        }
    }

    fn variable(&self, slot: usize) -> Result<TensorId> {
        let t = self.input(slot)?;
        let tensor = self.tensor(t);
        if tensor.kind != ir::TensorKind::Variable {
            return Err(unsupported("this input must be a variable (state) tensor")
                .at_tensor(t.0, tensor.name.clone()));
        }
        Ok(t)
    }

    fn dims<const N: usize>(&self, t: TensorId) -> Result<[usize; N]> {
        let tensor = self.tensor(t);
        <[usize; N]>::try_from(tensor.shape.as_slice()).map_err(|_| {
            unsupported(format!("a {N}-D tensor is expected"))
                .at_tensor(t.0, tensor.name.clone())
                .expected_found(format!("rank {N}"), format!("shape {:?}", tensor.shape))
        })
    }

    fn svdf(&self, o: &ir::SvdfOptions) -> Result<Step> {
        let (input, wf, wt, bias) = (
            self.input(0)?,
            self.input(1)?,
            self.input(2)?,
            self.op.input(3),
        );
        let state = self.variable(4)?;
        let output = self.output()?;
        self.need_constant(wf)?;
        self.need_constant(wt)?;
        let [batches, input_size] = self.dims::<2>(input)?;
        let [num_filters, wf_in] = self.dims::<2>(wf)?;
        let [wt_filters, memory_size] = self.dims::<2>(wt)?;
        if wf_in != input_size || wt_filters != num_filters {
            return Err(unsupported("SVDF weight shapes do not match the input"));
        }
        let rank = positive(o.rank, "rank")?;
        let mut step = match (self.dtype(input), self.dtype(wt), self.dtype(state)) {
            (DType::I8, wt_type @ (DType::I8 | DType::I16), s) if s == wt_type => {
                let p = k::svdf::prepare_s8(
                    batches,
                    input_size,
                    num_filters,
                    rank,
                    memory_size,
                    self.quant(input)?,
                    self.quant(wf)?.scale,
                    self.quant(wt)?.scale,
                    bias.map(|b| self.quant(b).map(|q| q.scale)).transpose()?,
                    self.quant(state)?,
                    self.quant(output)?,
                )
                .map_err(prepare_error)?;
                let kernel = if wt_type == DType::I8 {
                    Kernel::SvdfS8(p)
                } else {
                    Kernel::SvdfS8S16(p)
                };
                self.step(kernel, vec![], output)
            }
            (DType::F32, DType::F32, DType::F32) => self.step(
                Kernel::SvdfF32(
                    k::svdf::prepare_f32(
                        batches,
                        input_size,
                        num_filters,
                        rank,
                        memory_size,
                        activation(o.activation),
                    )
                    .map_err(prepare_error)?,
                ),
                vec![],
                output,
            ),
            (a, w, st) => {
                return Err(unsupported("unsupported types for SVDF").expected_found(
                    "INT8 input with INT8 or INT16 time weights and state, or FLOAT32",
                    format!("input {a}, time weights {w}, state {st}"),
                ));
            }
        };
        step.inputs = vec![
            Operand::Tensor(input),
            Operand::Tensor(wf),
            Operand::Tensor(wt),
            Operand::Optional(bias),
        ];
        step.states = vec![state];
        Ok(step)
    }

    fn lstm(&self, o: &ir::LstmOptions) -> Result<Step> {
        let input = self.input(0)?;
        let output = self.output()?;
        let (hidden, cell) = (self.variable(18)?, self.variable(19)?);
        for slot in [9, 10, 11, 16, 17, 20, 21, 22, 23] {
            if self.op.input(slot).is_some() {
                return Err(unsupported(
                    "only the standard LSTM is supported (no peephole, projection or layer norm)",
                )
                .expected_found("input absent", format!("input {slot} present")));
            }
        }
        if (self.dtype(input), self.dtype(output)) != (DType::I8, DType::I8) {
            return Err(
                unsupported("unsupported types for UNIDIRECTIONAL_SEQUENCE_LSTM")
                    .expected_found("INT8 -> INT8", types(self.dtype(input), self.dtype(output))),
            );
        }
        let weights: Vec<TensorId> = (1..=8).map(|s| self.input(s)).collect::<Result<_>>()?;
        let biases: Vec<TensorId> = (12..=15).map(|s| self.input(s)).collect::<Result<_>>()?;
        let w_data: Vec<&[i8]> = weights
            .iter()
            .map(|&t| self.need_constant(t).map(bytemuck_i8))
            .collect::<Result<_>>()?;
        let b_data: Vec<Vec<i32>> = biases
            .iter()
            .map(|&t| self.const_i32(t))
            .collect::<Result<_>>()?;
        let [d0, d1, input_size] = self.dims::<3>(input)?;
        let (batches, time_steps) = if o.time_major { (d1, d0) } else { (d0, d1) };
        let [_, state_size] = self.dims::<2>(hidden)?;
        let q = |ts: &[TensorId]| -> Result<[k::quant::QuantParams; 4]> {
            Ok([
                self.quant(ts[0])?,
                self.quant(ts[1])?,
                self.quant(ts[2])?,
                self.quant(ts[3])?,
            ])
        };
        let config = k::lstm::LstmConfig {
            time_major: o.time_major,
            batches,
            time_steps,
            input_size,
            state_size,
            cell_clip: o.cell_clip,
            activation: activation(o.activation),
            input: self.quant(input)?,
            hidden_state: self.quant(hidden)?,
            cell_state_scale: self.quant(cell)?.scale,
            input_weights: q(&weights[..4])?,
            recurrent_weights: q(&weights[4..])?,
        };
        let w = k::lstm::LstmWeights {
            input_to_input: w_data[0],
            input_to_forget: w_data[1],
            input_to_cell: w_data[2],
            input_to_output: w_data[3],
            recurrent_to_input: w_data[4],
            recurrent_to_forget: w_data[5],
            recurrent_to_cell: w_data[6],
            recurrent_to_output: w_data[7],
        };
        let b = k::lstm::LstmBiases {
            input_gate: &b_data[0],
            forget_gate: &b_data[1],
            cell_gate: &b_data[2],
            output_gate: &b_data[3],
        };
        let mut effective = vec![0; 8 * state_size];
        let p = k::lstm::prepare_s8(&config, &w, &b, &mut effective).map_err(prepare_error)?;
        let mut step = self.step(Kernel::LstmS8(p, effective), vec![], output);
        step.inputs = std::iter::once(input)
            .chain(weights)
            .map(Operand::Tensor)
            .collect();
        step.states = vec![hidden, cell];
        Ok(step)
    }

    /// A constant int32 tensor's values (axes, permutations, shapes, slice bounds).
    fn const_i32(&self, t: TensorId) -> Result<Vec<i32>> {
        if self.dtype(t) != DType::I32 {
            let tensor = self.tensor(t);
            return Err(unsupported("this input must be an INT32 constant")
                .at_tensor(t.0, tensor.name.clone())
                .expected_found("INT32", tensor.dtype.name()));
        }
        Ok(self
            .need_constant(t)?
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    fn check_elements(&self, t: TensorId, want: usize) -> Result<()> {
        let tensor = self.tensor(t);
        if tensor.elements() == want {
            Ok(())
        } else {
            Err(
                unsupported("the tensor's size does not match the operator's parameters")
                    .at_tensor(t.0, tensor.name.clone())
                    .expected_found(
                        format!("{want} elements"),
                        format!("shape {:?}", tensor.shape),
                    ),
            )
        }
    }

    fn mean(&self) -> Result<Step> {
        let (input, axis, output) = (self.input(0)?, self.input(1)?, self.output()?);
        let axes = self.const_i32(axis)?;
        let shape = &self.tensor(input).shape;
        let kernel = match (self.dtype(input), self.dtype(output)) {
            (DType::I8, DType::I8) => Kernel::MeanS8(
                k::mean::prepare_s8(shape, &axes, self.quant(input)?, self.quant(output)?)
                    .map_err(prepare_error)?,
            ),
            (DType::I16, DType::I16) => Kernel::MeanS16(
                k::mean::prepare_s16(shape, &axes, self.quant(input)?, self.quant(output)?)
                    .map_err(prepare_error)?,
            ),
            (DType::F32, DType::F32) => {
                Kernel::MeanF32(k::mean::prepare_f32(shape, &axes).map_err(prepare_error)?)
            }
            (a, b) => {
                return Err(unsupported("unsupported types for MEAN")
                    .expected_found("INT8, INT16 or FLOAT32", types(a, b)));
            }
        };
        let (Kernel::MeanS8(p) | Kernel::MeanS16(p) | Kernel::MeanF32(p)) = &kernel else {
            unreachable!("built above")
        };
        self.check_elements(output, p.output_size())?;
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    fn leaky_relu(&self, alpha: f32) -> Result<Step> {
        let (input, output) = (self.input(0)?, self.output()?);
        let kernel = match (self.dtype(input), self.dtype(output)) {
            (DType::I8, DType::I8) => Kernel::LeakyReluS8(
                k::leaky_relu::prepare_s8(self.quant(input)?, self.quant(output)?, alpha)
                    .map_err(prepare_error)?,
            ),
            (DType::I16, DType::I16) => Kernel::LeakyReluS16(
                k::leaky_relu::prepare_s16(self.quant(input)?, self.quant(output)?, alpha)
                    .map_err(prepare_error)?,
            ),
            (DType::F32, DType::F32) => Kernel::LeakyReluF32(k::leaky_relu::prepare_f32(alpha)),
            (a, b) => {
                return Err(unsupported("unsupported types for LEAKY_RELU")
                    .expected_found("INT8, INT16 or FLOAT32", types(a, b)));
            }
        };
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    fn hard_swish(&self) -> Result<Step> {
        let (input, output) = (self.input(0)?, self.output()?);
        let kernel = match (self.dtype(input), self.dtype(output)) {
            (DType::I8, DType::I8) => Kernel::HardSwishS8(
                k::hard_swish::prepare_s8(self.quant(input)?, self.quant(output)?)
                    .map_err(prepare_error)?,
            ),
            (DType::F32, DType::F32) => Kernel::HardSwishF32,
            (a, b) => {
                return Err(unsupported("unsupported types for HARD_SWISH")
                    .expected_found("INT8 or FLOAT32", types(a, b)));
            }
        };
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    /// The broadcast of a binary operator's inputs, `None` when the shapes are equal.
    fn broadcast(
        &self,
        a: TensorId,
        b: TensorId,
        output: TensorId,
    ) -> Result<Option<k::broadcast::Broadcast>> {
        let (sa, sb) = (&self.tensor(a).shape, &self.tensor(b).shape);
        if sa == sb {
            self.check_elements(output, self.tensor(a).elements())?;
            return Ok(None);
        }
        let bc = k::broadcast::Broadcast::new(sa, sb).map_err(prepare_error)?;
        self.check_elements(output, bc.output_size())?;
        Ok(Some(bc))
    }

    fn max_min(&self, max: bool) -> Result<Step> {
        let (a, b, output) = (self.input(0)?, self.input(1)?, self.output()?);
        let dtype = self.dtype(output);
        if self.dtype(a) != dtype || self.dtype(b) != dtype {
            return Err(unsupported("inputs and output must have one type"));
        }
        let e = elem(dtype)?;
        let bc = self.broadcast(a, b, output)?;
        let kernel = if max {
            Kernel::Maximum(e, bc)
        } else {
            Kernel::Minimum(e, bc)
        };
        Ok(self.step(kernel, vec![Operand::Tensor(a), Operand::Tensor(b)], output))
    }

    fn div(&self, act: ir::Activation) -> Result<Step> {
        let (a, b, output) = (self.input(0)?, self.input(1)?, self.output()?);
        if [a, b, output].iter().any(|&t| self.dtype(t) != DType::F32) {
            return Err(unsupported("DIV is supported for FLOAT32")
                .expected_found("FLOAT32", types(self.dtype(a), self.dtype(output))));
        }
        let bc = self.broadcast(a, b, output)?;
        let p = k::div::prepare_f32(activation(act));
        Ok(self.step(
            Kernel::DivF32(p, bc),
            vec![Operand::Tensor(a), Operand::Tensor(b)],
            output,
        ))
    }

    fn cast(&self) -> Result<Step> {
        let (input, output) = (self.input(0)?, self.output()?);
        self.check_elements(output, self.tensor(input).elements())?;
        let kernel = Kernel::Cast(elem(self.dtype(input))?, elem(self.dtype(output))?);
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    fn transpose(&self) -> Result<Step> {
        let (input, perm, output) = (self.input(0)?, self.input(1)?, self.output()?);
        let perm = self.const_i32(perm)?;
        let p = k::transpose::prepare(&self.tensor(input).shape, &perm).map_err(prepare_error)?;
        let dtype = self.dtype(output);
        if self.dtype(input) != dtype {
            return Err(unsupported("TRANSPOSE keeps the type"));
        }
        self.check_elements(output, self.tensor(input).elements())?;
        Ok(self.step(
            Kernel::Transpose(p, elem(dtype)?),
            vec![Operand::Tensor(input)],
            output,
        ))
    }

    fn strided_slice(&self, o: &ir::StridedSliceOptions) -> Result<Step> {
        let input = self.input(0)?;
        let (begin, end, strides) = (
            self.const_i32(self.input(1)?)?,
            self.const_i32(self.input(2)?)?,
            self.const_i32(self.input(3)?)?,
        );
        let output = self.output()?;
        let opts = k::strided_slice::Options {
            begin_mask: o.begin_mask,
            end_mask: o.end_mask,
            ellipsis_mask: o.ellipsis_mask,
            new_axis_mask: o.new_axis_mask,
            shrink_axis_mask: o.shrink_axis_mask,
            offset: o.offset,
        };
        let shape = &self.tensor(input).shape;
        let p = k::strided_slice::prepare(shape, &begin, &end, &strides, &opts)
            .map_err(prepare_error)?;
        let (dims, rank) = k::strided_slice::output_dims(&p, shape.len(), &opts);
        self.check_elements(output, dims[..rank].iter().product())?;
        let dtype = self.dtype(output);
        if self.dtype(input) != dtype {
            return Err(unsupported("STRIDED_SLICE keeps the type"));
        }
        Ok(self.step(
            Kernel::StridedSlice(p, elem(dtype)?),
            vec![Operand::Tensor(input)],
            output,
        ))
    }

    fn resize(&self, o: &ir::ResizeOptions, nearest: bool) -> Result<Step> {
        let (input, size, output) = (self.input(0)?, self.input(1)?, self.output()?);
        let size = self.const_i32(size)?;
        let size: [i32; 2] = size
            .try_into()
            .map_err(|_| unsupported("the size input must hold 2 values"))?;
        let is = self.shape4(input)?;
        let dtype = self.dtype(output);
        if self.dtype(input) != dtype {
            return Err(unsupported("resizing keeps the type"));
        }
        let kernel = if nearest {
            let opts = k::resize_nearest_neighbor::Options {
                align_corners: o.align_corners,
                half_pixel_centers: o.half_pixel_centers,
            };
            let p = k::resize_nearest_neighbor::prepare(is, size, &opts).map_err(prepare_error)?;
            self.check_shape(
                output,
                &[p.batches, p.output_height, p.output_width, p.depth],
            )?;
            Kernel::ResizeNearestNeighbor(p, elem(dtype)?)
        } else {
            let opts = k::resize_bilinear::Options {
                align_corners: o.align_corners,
                half_pixel_centers: o.half_pixel_centers,
            };
            let p = k::resize_bilinear::prepare(is, size, &opts).map_err(prepare_error)?;
            self.check_shape(
                output,
                &[p.batches, p.output_height, p.output_width, p.depth],
            )?;
            match dtype {
                DType::I8 => Kernel::ResizeBilinearS8(p),
                DType::F32 => Kernel::ResizeBilinearF32(p),
                other => {
                    return Err(unsupported("unsupported type for RESIZE_BILINEAR")
                        .expected_found("INT8 or FLOAT32", other.name()));
                }
            }
        };
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    fn transpose_conv(&self, o: &ir::TransposeConvOptions) -> Result<Step> {
        let (shape_t, filter, input, bias) = (
            self.input(0)?,
            self.input(1)?,
            self.input(2)?,
            self.op.input(3),
        );
        let output = self.output()?;
        self.need_constant(filter)?;
        let out_shape: [usize; 4] = self
            .const_i32(shape_t)?
            .iter()
            .map(|&d| usize::try_from(d).map_err(|_| unsupported("negative output dimension")))
            .collect::<Result<Vec<_>>>()?
            .try_into()
            .map_err(|_| unsupported("the output shape must have 4 dimensions"))?;
        self.check_shape(output, &out_shape)?;
        let opts = k::transpose_conv::Options {
            padding: padding(o.padding),
            stride_height: positive(o.stride_h, "stride")?,
            stride_width: positive(o.stride_w, "stride")?,
            activation: activation(o.activation),
        };
        let (is, fs) = (self.shape4(input)?, self.shape4(filter)?);
        let kernel = match (self.dtype(input), self.dtype(filter), self.dtype(output)) {
            (DType::I8, DType::I8, DType::I8) => {
                let scales = self.scales(filter, fs[0])?;
                let q_input = self.quant(input)?;
                let q_output = self.quant(output)?;
                let (p, t) = PerChannel::prepare(fs[0], |m, s| {
                    k::transpose_conv::prepare_s8(
                        is, fs, out_shape, &opts, q_input, &scales, q_output, m, s,
                    )
                })?;
                Kernel::TransposeConvS8(p, t)
            }
            (DType::F32, DType::F32, DType::F32) => Kernel::TransposeConvF32(
                k::transpose_conv::prepare_f32(is, fs, out_shape, &opts).map_err(prepare_error)?,
            ),
            (a, w, b) => {
                return Err(
                    unsupported("unsupported types for TRANSPOSE_CONV").expected_found(
                        "INT8 or FLOAT32 input, filter and output",
                        format!("{a}, {w} -> {b}"),
                    ),
                );
            }
        };
        Ok(self.step(
            kernel,
            vec![
                Operand::Tensor(input),
                Operand::Tensor(filter),
                Operand::Optional(bias),
            ],
            output,
        ))
    }

    fn copy(&self) -> Result<Step> {
        let (input, output) = (self.input(0)?, self.output()?);
        if self.tensor(input).bytes() != self.tensor(output).bytes() {
            return Err(unsupported("input and output sizes differ").expected_found(
                format!("{} bytes", self.tensor(output).bytes()),
                format!("{} bytes", self.tensor(input).bytes()),
            ));
        }
        Ok(self.step(Kernel::Copy, vec![Operand::Tensor(input)], output))
    }

    fn fully_connected(&self, o: &ir::FullyConnectedOptions) -> Result<Step> {
        let (input, weights, bias) = (self.input(0)?, self.input(1)?, self.op.input(2));
        let output = self.output()?;
        self.need_constant(weights)?;
        let wshape = &self.tensor(weights).shape;
        let [output_depth, accum_depth] =
            <[usize; 2]>::try_from(wshape.as_slice()).map_err(|_| {
                unsupported("FULLY_CONNECTED weights must be 2-D")
                    .expected_found("[outputs, inputs]", format!("{wshape:?}"))
            })?;
        let elements = self.tensor(input).elements();
        if accum_depth == 0 || !elements.is_multiple_of(accum_depth) {
            return Err(
                unsupported("the input size is not a multiple of the weights' depth")
                    .expected_found(format!("a multiple of {accum_depth}"), elements.to_string()),
            );
        }
        let batches = elements / accum_depth;
        if self.tensor(output).elements() != batches * output_depth {
            return Err(
                unsupported("the output size does not match batches x outputs").expected_found(
                    (batches * output_depth).to_string(),
                    self.tensor(output).elements().to_string(),
                ),
            );
        }
        let act = activation(o.activation);
        let mut inputs = vec![
            Operand::Tensor(input),
            Operand::Tensor(weights),
            Operand::Optional(bias),
        ];
        let kernel = match (self.dtype(input), self.dtype(weights), self.dtype(output)) {
            (DType::I16, DType::I8, DType::I16) => {
                let bias32 = match bias.map(|b| self.dtype(b)) {
                    None | Some(DType::I64) => false,
                    Some(DType::I32) => true,
                    Some(other) => {
                        return Err(unsupported(
                            "the bias of a 16x8 FULLY_CONNECTED must be INT64 or INT32",
                        )
                        .expected_found("INT64 or INT32", other.name()));
                    }
                };
                if let (true, Some(b)) = (bias32, bias) {
                    inputs[2] = Operand::Tensor(b);
                }
                let (iq, oq) = (self.quant(input)?, self.quant(output)?);
                match &self.tensor(weights).quant {
                    Quantization::PerChannel { scales, .. } => {
                        let (p, t) = PerChannel::prepare(output_depth, |m, s| {
                            k::fully_connected::prepare_per_channel_s16(
                                batches,
                                accum_depth,
                                output_depth,
                                iq,
                                scales,
                                oq,
                                act,
                                m,
                                s,
                            )
                        })?;
                        if bias32 {
                            Kernel::FullyConnectedPerChannelS16Bias32(p, t)
                        } else {
                            Kernel::FullyConnectedPerChannelS16(p, t)
                        }
                    }
                    _ => {
                        let bias_scale = match bias {
                            Some(b) => Some(self.quant(b)?.scale),
                            None => None,
                        };
                        let p = k::fully_connected::prepare_s16(
                            batches,
                            accum_depth,
                            output_depth,
                            iq,
                            self.quant(weights)?,
                            bias_scale,
                            oq,
                            act,
                        )
                        .map_err(prepare_error)?;
                        if bias32 {
                            Kernel::FullyConnectedS16Bias32(p)
                        } else {
                            Kernel::FullyConnectedS16(p)
                        }
                    }
                }
            }
            (DType::I8, DType::I8, DType::I8) => {
                if let Some(b) = bias
                    && self.dtype(b) != DType::I32
                {
                    return Err(unsupported("the bias must be INT32")
                        .expected_found("INT32", self.dtype(b).name()));
                }
                let (iq, oq) = (self.quant(input)?, self.quant(output)?);
                match &self.tensor(weights).quant {
                    Quantization::PerChannel { scales, .. } => {
                        let (p, t) = PerChannel::prepare(output_depth, |m, s| {
                            k::fully_connected::prepare_per_channel_s8(
                                batches,
                                accum_depth,
                                output_depth,
                                iq,
                                scales,
                                oq,
                                act,
                                m,
                                s,
                            )
                        })?;
                        Kernel::FullyConnectedPerChannelS8(p, t)
                    }
                    _ => {
                        let wq = self.quant(weights)?;
                        let bias_scale = match bias {
                            Some(b) => Some(self.quant(b)?.scale),
                            None => None,
                        };
                        Kernel::FullyConnectedS8(
                            k::fully_connected::prepare_s8(
                                batches,
                                accum_depth,
                                output_depth,
                                iq,
                                wq,
                                bias_scale,
                                oq,
                                act,
                            )
                            .map_err(prepare_error)?,
                        )
                    }
                }
            }
            (DType::F32, DType::F32, DType::F32) => Kernel::FullyConnectedF32(
                k::fully_connected::prepare_f32(batches, accum_depth, output_depth, act)
                    .map_err(prepare_error)?,
            ),
            (a, w, b) => {
                return Err(
                    unsupported("unsupported types for FULLY_CONNECTED").expected_found(
                        "INT8 or FLOAT32 input, weights and output",
                        format!("{a}, {w} -> {b}"),
                    ),
                );
            }
        };
        Ok(self.step(kernel, inputs, output))
    }

    fn conv_2d(&self, o: &ir::Conv2dOptions) -> Result<Step> {
        let (input, filter, bias) = (self.input(0)?, self.input(1)?, self.op.input(2));
        let output = self.output()?;
        self.need_constant(filter)?;
        let opts = k::conv_2d::Options {
            padding: padding(o.padding),
            stride_height: positive(o.stride_h, "stride")?,
            stride_width: positive(o.stride_w, "stride")?,
            dilation_height_factor: positive(o.dilation_h, "dilation")?,
            dilation_width_factor: positive(o.dilation_w, "dilation")?,
            activation: activation(o.activation),
        };
        let (is, fs) = (self.shape4(input)?, self.shape4(filter)?);
        let kernel = match (self.dtype(input), self.dtype(filter), self.dtype(output)) {
            (DType::I8, DType::I8, DType::I8) => {
                let scales = self.scales(filter, fs[0])?;
                let q_input = self.quant(input)?;
                let q_output = self.quant(output)?;
                let (p, t) = PerChannel::prepare(fs[0], |m, s| {
                    k::conv_2d::prepare_s8(is, fs, &opts, q_input, &scales, q_output, m, s)
                })?;
                Kernel::Conv2dS8(p, t)
            }
            (DType::I16, DType::I8, DType::I16) => {
                let scales = self.scales(filter, fs[0])?;
                let q_input = self.quant(input)?;
                let q_output = self.quant(output)?;
                let (p, t) = PerChannel::prepare(fs[0], |m, s| {
                    k::conv_2d::prepare_s16(is, fs, &opts, q_input, &scales, q_output, m, s)
                })?;
                match bias.map(|b| self.dtype(b)) {
                    None | Some(DType::I64) => Kernel::Conv2dS16(p, t),
                    Some(DType::I32) => Kernel::Conv2dS16Bias32(p, t),
                    Some(other) => {
                        return Err(unsupported(
                            "the bias of a 16x8 CONV_2D must be INT64 or INT32",
                        )
                        .expected_found("INT64 or INT32", other.name()));
                    }
                }
            }
            (DType::F32, DType::F32, DType::F32) => {
                Kernel::Conv2dF32(k::conv_2d::prepare_f32(is, fs, &opts).map_err(prepare_error)?)
            }
            (a, w, b) => {
                return Err(unsupported("unsupported types for CONV_2D").expected_found(
                    "INT8 or FLOAT32 input, filter and output",
                    format!("{a}, {w} -> {b}"),
                ));
            }
        };
        let p = match &kernel {
            Kernel::Conv2dS8(p, _)
            | Kernel::Conv2dS16(p, _)
            | Kernel::Conv2dS16Bias32(p, _)
            | Kernel::Conv2dF32(p) => *p,
            _ => unreachable!("built above"),
        };
        self.check_shape(
            output,
            &[p.batches, p.output_height, p.output_width, p.output_depth],
        )?;
        let bias = match (&kernel, bias) {
            (Kernel::Conv2dS16Bias32(..), Some(b)) => Operand::Tensor(b),
            _ => Operand::Optional(bias),
        };
        Ok(self.step(
            kernel,
            vec![Operand::Tensor(input), Operand::Tensor(filter), bias],
            output,
        ))
    }

    fn depthwise_conv_2d(&self, o: &ir::DepthwiseConv2dOptions) -> Result<Step> {
        let (input, filter, bias) = (self.input(0)?, self.input(1)?, self.op.input(2));
        let output = self.output()?;
        self.need_constant(filter)?;
        let opts = k::depthwise_conv_2d::Options {
            padding: padding(o.padding),
            stride_height: positive(o.stride_h, "stride")?,
            stride_width: positive(o.stride_w, "stride")?,
            dilation_height_factor: positive(o.dilation_h, "dilation")?,
            dilation_width_factor: positive(o.dilation_w, "dilation")?,
            depth_multiplier: positive(o.depth_multiplier, "depth multiplier")?,
            activation: activation(o.activation),
        };
        let (is, fs) = (self.shape4(input)?, self.shape4(filter)?);
        let kernel = match (self.dtype(input), self.dtype(filter), self.dtype(output)) {
            (DType::I8, DType::I8, DType::I8) => {
                let channels = fs[3];
                let scales = self.scales(filter, channels)?;
                let q_input = self.quant(input)?;
                let q_output = self.quant(output)?;
                let (p, t) = PerChannel::prepare(channels, |m, s| {
                    k::depthwise_conv_2d::prepare_s8(
                        is, fs, &opts, q_input, &scales, q_output, m, s,
                    )
                })?;
                Kernel::DepthwiseConv2dS8(p, t)
            }
            (DType::I16, DType::I8, DType::I16) => {
                if bias.map(|b| self.dtype(b)) != Some(DType::I64) {
                    return Err(unsupported("a 16x8 DEPTHWISE_CONV_2D needs an INT64 bias")
                        .expected_found(
                            "INT64 bias",
                            format!("{:?}", bias.map(|b| self.dtype(b))),
                        ));
                }
                let channels = fs[3];
                let scales = self.scales(filter, channels)?;
                let q_input = self.quant(input)?;
                let q_output = self.quant(output)?;
                let (p, t) = PerChannel::prepare(channels, |m, s| {
                    k::depthwise_conv_2d::prepare_s16(
                        is, fs, &opts, q_input, &scales, q_output, m, s,
                    )
                })?;
                Kernel::DepthwiseConv2dS16(p, t)
            }
            (DType::F32, DType::F32, DType::F32) => Kernel::DepthwiseConv2dF32(
                k::depthwise_conv_2d::prepare_f32(is, fs, &opts).map_err(prepare_error)?,
            ),
            (a, w, b) => {
                return Err(
                    unsupported("unsupported types for DEPTHWISE_CONV_2D").expected_found(
                        "INT8 or FLOAT32 input, filter and output",
                        format!("{a}, {w} -> {b}"),
                    ),
                );
            }
        };
        let p = match &kernel {
            Kernel::DepthwiseConv2dS8(p, _)
            | Kernel::DepthwiseConv2dS16(p, _)
            | Kernel::DepthwiseConv2dF32(p) => *p,
            _ => unreachable!("built above"),
        };
        self.check_shape(
            output,
            &[p.batches, p.output_height, p.output_width, p.output_depth],
        )?;
        let bias = match (&kernel, bias) {
            (Kernel::DepthwiseConv2dS16(..), Some(b)) => Operand::Tensor(b),
            _ => Operand::Optional(bias),
        };
        Ok(self.step(
            kernel,
            vec![Operand::Tensor(input), Operand::Tensor(filter), bias],
            output,
        ))
    }

    fn pool(&self, o: &ir::Pool2dOptions, max: bool) -> Result<Step> {
        let (input, output) = (self.input(0)?, self.output()?);
        let opts = k::pooling::Options {
            padding: padding(o.padding),
            stride_height: positive(o.stride_h, "stride")?,
            stride_width: positive(o.stride_w, "stride")?,
            filter_height: positive(o.filter_h, "filter height")?,
            filter_width: positive(o.filter_w, "filter width")?,
            activation: activation(o.activation),
        };
        let is = self.shape4(input)?;
        let kernel = match (self.dtype(input), self.dtype(output), max) {
            (DType::I8, DType::I8, _) => {
                let p = k::pooling::prepare_s8(is, &opts, self.quant(input)?, self.quant(output)?)
                    .map_err(prepare_error)?;
                if max {
                    Kernel::MaxPoolS8(p)
                } else {
                    Kernel::AveragePoolS8(p)
                }
            }
            (DType::F32, DType::F32, _) => {
                let p = k::pooling::prepare_f32(is, &opts).map_err(prepare_error)?;
                if max {
                    Kernel::MaxPoolF32(p)
                } else {
                    Kernel::AveragePoolF32(p)
                }
            }
            (a, b, _) => {
                return Err(unsupported("unsupported types for pooling")
                    .expected_found("INT8 or FLOAT32", types(a, b)));
            }
        };
        let (Kernel::MaxPoolS8(p)
        | Kernel::AveragePoolS8(p)
        | Kernel::MaxPoolF32(p)
        | Kernel::AveragePoolF32(p)) = &kernel
        else {
            unreachable!("built above")
        };
        self.check_shape(
            output,
            &[p.batches, p.output_height, p.output_width, p.depth],
        )?;
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    fn softmax(&self, beta: f32) -> Result<Step> {
        let (input, output) = (self.input(0)?, self.output()?);
        let shape = &self.tensor(input).shape;
        let depth = *shape
            .last()
            .filter(|&&d| d > 0)
            .ok_or_else(|| unsupported("SOFTMAX needs a non-empty last dimension"))?;
        let outer = self.tensor(input).elements() / depth;
        let kernel = match (self.dtype(input), self.dtype(output)) {
            (DType::I8, DType::I8) => Kernel::SoftmaxS8(
                k::softmax::prepare_s8(outer, depth, self.quant(input)?, self.quant(output)?, beta)
                    .map_err(prepare_error)?,
            ),
            (DType::I8, DType::I16) => Kernel::SoftmaxS8S16(
                k::softmax::prepare_s8_s16(
                    outer,
                    depth,
                    self.quant(input)?,
                    self.quant(output)?,
                    beta,
                )
                .map_err(prepare_error)?,
            ),
            (DType::I16, DType::I16) => {
                let mut exp = vec![0; k::softmax::LUT_SIZE];
                let mut recip = vec![0; k::softmax::LUT_SIZE];
                let p = k::softmax::prepare_s16(
                    outer,
                    depth,
                    self.quant(input)?,
                    self.quant(output)?,
                    beta,
                    &mut exp,
                    &mut recip,
                )
                .map_err(prepare_error)?;
                Kernel::SoftmaxS16(p, exp, recip)
            }
            (DType::F32, DType::F32) => Kernel::SoftmaxF32(
                k::softmax::prepare_f32(outer, depth, beta).map_err(prepare_error)?,
            ),
            (a, b) => {
                return Err(unsupported("unsupported types for SOFTMAX")
                    .expected_found("INT8 -> INT8, INT8 -> INT16 or FLOAT32", types(a, b)));
            }
        };
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    fn binary(&self, act: ir::Activation, which: Binary) -> Result<Step> {
        let (a, b, output) = (self.input(0)?, self.input(1)?, self.output()?);
        let dtype = self.dtype(output);
        if self.dtype(a) != dtype || self.dtype(b) != dtype {
            return Err(
                unsupported("inputs and output must have one type").expected_found(
                    format!("{dtype}, {dtype} -> {dtype}"),
                    format!("{}, {} -> {dtype}", self.dtype(a), self.dtype(b)),
                ),
            );
        }
        let (sa, sb) = (&self.tensor(a).shape, &self.tensor(b).shape);
        let broadcast = if sa == sb {
            None
        } else {
            let bc = k::broadcast::Broadcast::new(sa, sb).map_err(prepare_error)?;
            if bc.output_size() != self.tensor(output).elements() {
                return Err(unsupported("the output shape is not the broadcast shape"));
            }
            Some(bc)
        };
        let act = activation(act);
        let kernel = match (which, dtype) {
            (Binary::Add, DType::I8) => {
                let p =
                    k::add::prepare_s8(self.quant(a)?, self.quant(b)?, self.quant(output)?, act)
                        .map_err(prepare_error)?;
                if broadcast.is_none()
                    && self.tensor(output).elements() >= k::add::TABLES_FROM_ELEMENTS
                {
                    let (mut t1, mut t2) = ([0; 256], [0; 256]);
                    k::add::rescale_tables_s8(&p, &mut t1, &mut t2);
                    Kernel::AddS8Tables(p, t1.to_vec(), t2.to_vec())
                } else {
                    Kernel::AddS8(p, broadcast)
                }
            }
            (Binary::Add, DType::I16) => Kernel::AddS16(
                k::add::prepare_s16(self.quant(a)?, self.quant(b)?, self.quant(output)?, act)
                    .map_err(prepare_error)?,
                broadcast,
            ),
            (Binary::Add, DType::F32) => Kernel::AddF32(k::add::prepare_f32(act), broadcast),
            (Binary::Sub, DType::I8) => Kernel::SubS8(
                k::sub::prepare_s8(self.quant(a)?, self.quant(b)?, self.quant(output)?, act)
                    .map_err(prepare_error)?,
                broadcast,
            ),
            (Binary::Sub, DType::F32) => Kernel::SubF32(k::sub::prepare_f32(act), broadcast),
            (Binary::Mul, DType::I8) => Kernel::MulS8(
                k::mul::prepare_s8(self.quant(a)?, self.quant(b)?, self.quant(output)?, act)
                    .map_err(prepare_error)?,
                broadcast,
            ),
            (Binary::Mul, DType::F32) => Kernel::MulF32(k::mul::prepare_f32(act), broadcast),
            (_, other) => {
                return Err(unsupported("unsupported type for this operator")
                    .expected_found("INT8 or FLOAT32 (ADD also INT16)", other.name()));
            }
        };
        Ok(self.step(kernel, vec![Operand::Tensor(a), Operand::Tensor(b)], output))
    }

    fn logistic(&self) -> Result<Step> {
        let (input, output) = (self.input(0)?, self.output()?);
        let kernel = match (self.dtype(input), self.dtype(output)) {
            (DType::I8, DType::I8) => Kernel::LogisticS8(
                k::logistic::prepare_s8(self.quant(input)?, self.quant(output)?)
                    .map_err(prepare_error)?,
            ),
            (DType::F32, DType::F32) => Kernel::LogisticF32,
            (a, b) => {
                return Err(unsupported("unsupported types for LOGISTIC")
                    .expected_found("INT8 -> INT8", types(a, b)));
            }
        };
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    fn tanh(&self) -> Result<Step> {
        let (input, output) = (self.input(0)?, self.output()?);
        let kernel = match (self.dtype(input), self.dtype(output)) {
            (DType::I8, DType::I8) => {
                Kernel::TanhS8(k::tanh::prepare_s8(self.quant(input)?).map_err(prepare_error)?)
            }
            (DType::F32, DType::F32) => Kernel::TanhF32,
            (a, b) => {
                return Err(unsupported("unsupported types for TANH")
                    .expected_found("INT8 -> INT8", types(a, b)));
            }
        };
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    fn relu(&self, six: bool) -> Result<Step> {
        let (input, output) = (self.input(0)?, self.output()?);
        let kernel = match (self.dtype(input), self.dtype(output), six) {
            (DType::I8, DType::I8, false) => Kernel::ReluS8(
                k::relu::prepare_relu_s8(self.quant(input)?, self.quant(output)?)
                    .map_err(prepare_error)?,
            ),
            (DType::I8, DType::I8, true) => Kernel::Relu6S8(
                k::relu::prepare_relu6_s8(self.quant(input)?).map_err(prepare_error)?,
            ),
            (DType::F32, DType::F32, false) => Kernel::ReluF32,
            (DType::F32, DType::F32, true) => Kernel::Relu6F32,
            (a, b, _) => {
                return Err(unsupported("unsupported types for RELU")
                    .expected_found("INT8 -> INT8 or FLOAT32", types(a, b)));
            }
        };
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    fn quantize(&self) -> Result<Step> {
        let (input, output) = (self.input(0)?, self.output()?);
        let kernel = match (self.dtype(input), self.dtype(output)) {
            (DType::F32, DType::I8) => Kernel::QuantizeF32S8(
                k::quantize::prepare_f32_s8(self.quant(output)?).map_err(prepare_error)?,
            ),
            (DType::I8, DType::I8) => Kernel::RequantizeS8S8(
                k::quantize::prepare_s8_s8(self.quant(input)?, self.quant(output)?)
                    .map_err(prepare_error)?,
            ),
            (a @ (DType::I8 | DType::I16), b @ (DType::I8 | DType::I16 | DType::I32)) => {
                Kernel::Requantize(
                    k::requantize::prepare(self.quant(input)?, self.quant(output)?)
                        .map_err(prepare_error)?,
                    elem(a)?,
                    elem(b)?,
                )
            }
            (a, b) => {
                return Err(
                    unsupported("unsupported types for QUANTIZE").expected_found(
                        "FLOAT32 -> INT8, or between INT8, INT16 and INT32",
                        types(a, b),
                    ),
                );
            }
        };
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    fn dequantize(&self) -> Result<Step> {
        let (input, output) = (self.input(0)?, self.output()?);
        let kernel = match (self.dtype(input), self.dtype(output)) {
            (DType::I8, DType::F32) => Kernel::DequantizeS8F32(
                k::dequantize::prepare_s8_f32(self.quant(input)?).map_err(prepare_error)?,
            ),
            (a, b) => {
                return Err(unsupported("unsupported types for DEQUANTIZE")
                    .expected_found("INT8 -> FLOAT32", types(a, b)));
            }
        };
        Ok(self.step(kernel, vec![Operand::Tensor(input)], output))
    }

    fn concatenation(&self, o: &ir::ConcatenationOptions) -> Result<Step> {
        let output = self.output()?;
        if o.activation != ir::Activation::None {
            return Err(unsupported(
                "CONCATENATION with a fused activation is not supported",
            ));
        }
        let rank = self.tensor(output).shape.len() as i32;
        let axis = if o.axis < 0 { o.axis + rank } else { o.axis };
        let axis = usize::try_from(axis)
            .ok()
            .filter(|&a| a < rank as usize)
            .ok_or_else(|| {
                unsupported("the axis is not a dimension of the output")
                    .expected_found(format!("-{rank}..{rank}"), o.axis.to_string())
            })?;
        let inputs: Vec<TensorId> = self.op.present_inputs().collect();
        let dtype = self.dtype(output);
        if inputs.iter().any(|&t| self.dtype(t) != dtype) {
            return Err(unsupported("all inputs must have the output's type"));
        }
        let total: usize = inputs.iter().map(|&t| self.tensor(t).elements()).sum();
        if total != self.tensor(output).elements() {
            return Err(unsupported("the inputs do not add up to the output"));
        }
        if dtype == DType::I8 {
            let qs: Vec<_> = inputs
                .iter()
                .map(|&t| self.quant(t))
                .collect::<Result<_>>()?;
            k::concatenation::check_quantization_s8(&qs, self.quant(output)?)
                .map_err(prepare_error)?;
        }
        let p =
            k::concatenation::prepare(&self.tensor(output).shape, axis).map_err(prepare_error)?;
        Ok(self.step(
            Kernel::Concatenation(p, elem(dtype)?),
            inputs.into_iter().map(Operand::Tensor).collect(),
            output,
        ))
    }

    fn pad(&self) -> Result<Step> {
        let (input, paddings, output) = (self.input(0)?, self.input(1)?, self.output()?);
        let values: Vec<i64> = match self.dtype(paddings) {
            DType::I32 => self
                .const_i32(paddings)?
                .into_iter()
                .map(i64::from)
                .collect(),
            DType::I64 => self
                .need_constant(paddings)?
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
            other => {
                return Err(unsupported("PAD's paddings must be INT32 or INT64")
                    .expected_found("INT32 or INT64", other.name()));
            }
        };
        let pairs: Vec<[usize; 2]> = values
            .chunks_exact(2)
            .map(|c| {
                Ok([
                    usize::try_from(c[0]).map_err(|_| unsupported("negative padding"))?,
                    usize::try_from(c[1]).map_err(|_| unsupported("negative padding"))?,
                ])
            })
            .collect::<Result<_>>()?;
        let p = k::pad::prepare(&self.tensor(input).shape, &pairs).map_err(prepare_error)?;
        self.check_shape(
            output,
            &p.output_dims[5 - self.tensor(output).shape.len()..],
        )?;
        let dtype = self.dtype(output);
        let value = self.op.input(2);
        let pad_value = match dtype {
            DType::I8 => {
                let v = match value {
                    Some(v) => self.need_constant(v)?.first().map_or(0, |&b| b as i8),
                    None => self.quant(output)?.zero_point as i8,
                };
                PadValue::I8(v)
            }
            DType::F32 => {
                let v = match value {
                    Some(v) => {
                        let d = self.need_constant(v)?;
                        d.get(..4)
                            .map_or(0.0, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    }
                    None => 0.0,
                };
                PadValue::F32(v)
            }
            other => {
                return Err(unsupported("unsupported type for PAD")
                    .expected_found("INT8 or FLOAT32", other.name()));
            }
        };
        Ok(self.step(
            Kernel::Pad(p, elem(dtype)?, pad_value),
            vec![Operand::Tensor(input)],
            output,
        ))
    }
}
