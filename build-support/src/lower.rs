//! Lowering: each operator of a graph to one kernel call, as data.
//!
//! This is where TFLM's `Prepare` happens, at build time: each operator's module in
//! [`crate::ops`] checks the types it accepts and calls the kernels' `prepare*` functions,
//! which turn tensor shapes, scales and options into constant parameters (multipliers, shifts,
//! offsets, activation ranges, tables). The result is a [`Step`] per operator: the
//! [`Kernel`] it chose, with its parameters, and the tensors it reads and writes. The emitter
//! ([`crate::emit`]) asks the kernel for its call in `invoke()` and the host executor
//! (`crate::exec`, feature `exec`, for tests) runs it, so both see exactly the same parameters.
//!
//! This module is the machinery every operator module shares: [`Step`], [`Operand`], the
//! [`Kernel`] interface, the lowering context [`Cx`] with its checks, and the diagnostics.

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::Io;
use kiln_kernels as k;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{self, DType, Graph, Op, OpId, Quantization, TensorId};
use kiln_planner::kernels::{Abilities, Declared};
use kiln_planner::plan::Plan;
use proc_macro2::TokenStream;

/// One kernel call with its constant parameters, as an operator module chose it: how the call
/// is written in `invoke()` and how it runs on the host. Each operator module implements it
/// for its kernels (an operator may choose among several: per type, per shape, per target).
pub trait Kernel: std::fmt::Debug {
    /// The statement calling the kernel in `invoke()`. `call` gives the operands' tokens,
    /// emits constants (parameters, tables) and says whether the plan runs it in place.
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream>;

    /// Runs the ordinary (not in-place) form on the host, on `io`'s operands.
    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>);
}

/// Per-channel requantization tables.
#[derive(Clone, Debug, PartialEq)]
pub struct PerChannel {
    pub multiplier: Vec<i32>,
    pub shift: Vec<i32>,
}

impl PerChannel {
    /// Tables of `channels` entries written by a kernel's `prepare*` (`fill(multiplier,
    /// shift)`), returned with what it returns.
    pub(crate) fn prepare<P>(
        channels: usize,
        fill: impl FnOnce(&mut [i32], &mut [i32]) -> std::result::Result<P, k::quant::PrepareError>,
    ) -> Result<(P, PerChannel)> {
        let (mut multiplier, mut shift) = (vec![0; channels], vec![0; channels]);
        let p = fill(&mut multiplier, &mut shift).map_err(prepare_error)?;
        Ok((p, PerChannel { multiplier, shift }))
    }
}

/// The build-time tables of a fast int8 kernel (`kiln_kernels::gemm`): the folded bias,
/// the multipliers and the right shifts, one per output channel.
#[derive(Debug, Clone)]
pub struct Fast {
    pub bias: Vec<i32>,
    pub multiplier: Vec<i32>,
    pub right_shift: Vec<i32>,
}

impl Fast {
    /// The tables, if the kernel's `prepare_fast_*` (`kiln_kernels::gemm::prepare_layer`:
    /// `accept(filter, bias, multiplier, shift, folded, multiplier_out, right_shift)`)
    /// accepts the layer: the filter and the bias (if any) must be constants.
    pub(crate) fn prepare_layer(
        cx: &Cx<'_>,
        filter: TensorId,
        bias: Option<TensorId>,
        t: &PerChannel,
        accept: impl FnOnce(
            &[i8],
            Option<&[i32]>,
            &[i32],
            &[i32],
            &mut [i32],
            &mut [i32],
            &mut [i32],
        ) -> bool,
    ) -> Option<Fast> {
        if !cx.fast_kernels() {
            return None;
        }
        let filter = bytemuck_i8(cx.tensor(filter).data()?);
        let bias = match bias {
            Some(b) => Some(cx.const_i32(b).ok()?),
            None => None,
        };
        let n = t.multiplier.len();
        let (mut folded, mut multiplier, mut right_shift) = (vec![0; n], vec![0; n], vec![0; n]);
        accept(
            filter,
            bias.as_deref(),
            &t.multiplier,
            &t.shift,
            &mut folded,
            &mut multiplier,
            &mut right_shift,
        )
        .then_some(Fast {
            bias: folded,
            multiplier,
            right_shift,
        })
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
#[derive(Debug)]
pub struct Step {
    pub op: OpId,
    pub kernel: Box<dyn Kernel>,
    /// Arena scratch bytes the kernel needs in its ordinary form.
    pub scratch_bytes: usize,
    /// What the kernel can do with memory (views, in-place forms, slices): the planner
    /// decides aliasing from these alone.
    pub abilities: Abilities,
    /// Tensors the kernel reads, in argument order.
    pub inputs: Vec<Operand>,
    /// Variable tensors (persistent state) the kernel reads and writes, before the output.
    pub states: Vec<TensorId>,
    /// Tensors the kernel writes, in argument order.
    pub outputs: Vec<TensorId>,
    /// Whether its in-place convolution form (`abilities.conv_in_place`) is much slower than
    /// its ordinary kernel (a fast kernel's): then it is planned in place only when the RAM
    /// budget needs it (`compile_tokens`).
    pub slow_in_place: bool,
    /// A smaller scratch the kernel also runs with, more slowly (a fast convolution without
    /// its widened pixels): planned only when the RAM budget needs it (`compile_tokens`).
    pub lean_scratch_bytes: Option<usize>,
    /// Control flow or a resource variable access: written by the emitter itself
    /// (`emit::control`), not by a kernel; `kernel` is then [`ControlKernel`].
    pub control: Option<Control>,
}

/// What a control flow or resource variable step does (see `crate::control`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Runs one of two subgraphs on the condition (input 0); the scratch holds either's arena.
    If {
        then_subgraph: usize,
        else_subgraph: usize,
    },
    /// Runs `body` while `cond` says so; the loop variables live in the outputs, the scratch
    /// holds either subgraph's arena.
    While { cond: usize, body: usize },
    /// Runs `init` once, at the first `invoke()` after a reset.
    CallOnce { init: usize },
    /// Names a resource variable: no code.
    VarHandle,
    /// Copies a resource variable (the state) to the output.
    ReadVariable,
    /// Copies the input to a resource variable (the state).
    AssignVariable,
}

/// The kernel of a [`Control`] step. Such steps are written by the emitter (control flow
/// runs other subgraphs' steps, which no kernel knows) and only run in generated code:
/// the host executor runs single subgraphs.
#[derive(Debug)]
pub struct ControlKernel;

impl Kernel for ControlKernel {
    fn emit(&self, _call: &mut Call<'_, '_>) -> Result<TokenStream> {
        Err(Diagnostic::new(
            ErrorKind::InvalidPlan,
            "a control flow step is written by the emitter's control flow path, not as a \
             kernel call",
        ))
    }

    #[cfg(feature = "exec")]
    fn run(&self, _io: &mut Io<'_>) {
        panic!(
            "control flow and resource variables run only in generated code: the host \
             executor runs single subgraphs"
        );
    }
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
        .map(|&id| lower_op(graph, graph.op(id)))
        .collect()
}

/// Lowers every operator of `graph` in the stored order (`steps[i].op == OpId(i)`). If
/// operators are unsupported (no kernel, or types, shapes or options its kernels do not
/// take), the diagnostic names every one of them with its types, not only the first; any
/// other failure is returned as it is.
pub fn lower_all(graph: &Graph) -> Result<Vec<Step>> {
    lower_all_with(graph, false)
}

/// [`lower_all`], with `reference`: every operator on its reference kernel, never a fast
/// one (`Options::reference_kernels`, for comparison).
pub fn lower_all_with(graph: &Graph, reference: bool) -> Result<Vec<Step>> {
    let mut steps = Vec::with_capacity(graph.ops.len());
    let mut refused = Vec::new();
    for op in &graph.ops {
        match lower_op_with(graph, op, reference) {
            Ok(step) => steps.push(step),
            Err(d) if d.kind == ErrorKind::Unsupported => refused.push((op, d)),
            Err(d) => return Err(d),
        }
    }
    match refused.len() {
        0 => Ok(steps),
        1 => Err(refused.pop().expect("one refusal").1),
        _ => Err(all_refused(graph, refused)),
    }
}

/// One diagnostic for several unsupported operators, an entry for each (index, name, types,
/// reason), then, once, the operators Kiln compiles.
fn all_refused(graph: &Graph, refused: Vec<(&Op, Diagnostic)>) -> Diagnostic {
    let n = refused.len();
    let list: Vec<String> = refused
        .into_iter()
        .map(|(op, mut d)| {
            d.op = None;
            let reason = if d.message == NO_KERNEL {
                "no kernel".to_string()
            } else {
                d.to_string()
            };
            format!(
                "op {} ({}, {}): {reason}",
                op.id.0,
                op.kind.name(),
                op_types(graph, op)
            )
        })
        .collect();
    unsupported(format!(
        "{n} operators of the model cannot be compiled: {}; Kiln compiles {}",
        list.join("; "),
        crate::ops::names().collect::<Vec<_>>().join(", ")
    ))
}

/// The message of the diagnostic for an operator without a kernel module.
const NO_KERNEL: &str = "Kiln has no kernel for this operator";

/// An operator's input and output types, `INT8, INT32 -> INT8` (an omitted input as `-`).
pub fn op_types(graph: &Graph, op: &Op) -> String {
    let names = |ts: &mut dyn Iterator<Item = Option<TensorId>>| -> String {
        ts.map(|t| t.map_or("-", |t| graph.tensor(t).dtype.name()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{} -> {}",
        names(&mut op.inputs.iter().copied()),
        names(&mut op.outputs.iter().map(|&t| Some(t)))
    )
}

/// What the lowered steps declare to the planner, by operator.
pub fn declared(steps: &[Step]) -> Declared {
    let mut ops = Vec::new();
    for s in steps {
        if ops.len() <= s.op.0 {
            ops.resize(s.op.0 + 1, None);
        }
        ops[s.op.0] = Some((s.scratch_bytes, s.abilities.clone()));
    }
    Declared { ops }
}

/// What Kiln's kernels declare for every operator of `graph` that lowers; the others declare
/// nothing (for planning models Kiln cannot compile, e.g. in tests and reports).
pub fn kernels(graph: &Graph) -> Declared {
    let steps: Vec<Step> = graph
        .ops
        .iter()
        .filter_map(|op| lower_op(graph, op).ok())
        .collect();
    declared(&steps)
}

/// Lowers one operator through its module (the table in [`crate::ops`]); a diagnostic names
/// the operator.
pub fn lower_op(graph: &Graph, op: &Op) -> Result<Step> {
    lower_op_with(graph, op, false)
}

/// [`lower_op`], on the reference kernel if `reference` (see [`lower_all_with`]).
pub fn lower_op_with(graph: &Graph, op: &Op, reference: bool) -> Result<Step> {
    let cx = Cx {
        graph,
        op,
        reference,
    };
    let lowered = match crate::ops::lowering(op.kind.name()) {
        Some(lower) => lower(&cx),
        None => Err(unsupported(NO_KERNEL).expected_found(
            format!(
                "one of {}",
                crate::ops::names().collect::<Vec<_>>().join(", ")
            ),
            format!("{} ({})", op.kind.name(), op_types(graph, op)),
        )),
    };
    lowered
        .and_then(|step| check_not_empty(graph, step))
        .map_err(|d| locate_scale(graph, op, d).at_op(op.id.0, op.kind.name()))
}

/// Refuses a step that reads or writes an activation without elements (a dimension of 0):
/// it would have no bytes in the arena.
fn check_not_empty(graph: &Graph, step: Step) -> Result<Step> {
    let tensors = step.inputs.iter().filter_map(|o| o.tensor());
    for t in tensors
        .chain(step.states.iter().copied())
        .chain(step.outputs.iter().copied())
    {
        let tensor = graph.tensor(t);
        if !tensor.is_constant() && tensor.elements() == 0 {
            return Err(unsupported("tensors without elements are not supported")
                .at_tensor(t.0, tensor.name.clone())
                .expected_found("at least one element", format!("shape {:?}", tensor.shape)));
        }
    }
    Ok(step)
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
pub(crate) fn number(x: f64) -> String {
    let f = x as f32;
    if !f.is_finite() && x.is_finite() {
        format!("{x:.4e}")
    } else if x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{f:e}")
    } else {
        format!("{f}")
    }
}

pub(crate) fn unsupported(message: impl Into<String>) -> Diagnostic {
    Diagnostic::unsupported(message)
}

/// The message of a requantization multiplier out of a kernel's range; [`lower`] adds the
/// tensor whose scale is the most extreme and the scales of the operator's tensors.
pub(crate) const SHIFT_OUT_OF_RANGE: &str =
    "a requantization multiplier is out of the range the kernel can apply";

pub(crate) fn prepare_error(e: k::quant::PrepareError) -> Diagnostic {
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

pub(crate) fn activation(a: ir::Activation) -> k::quant::Activation {
    match a {
        ir::Activation::None => k::quant::Activation::None,
        ir::Activation::Relu => k::quant::Activation::Relu,
        ir::Activation::ReluN1To1 => k::quant::Activation::ReluN1To1,
        ir::Activation::Relu6 => k::quant::Activation::Relu6,
        ir::Activation::Tanh => k::quant::Activation::Tanh,
        ir::Activation::SignBit => k::quant::Activation::SignBit,
    }
}

pub(crate) fn padding(p: ir::Padding) -> k::quant::Padding {
    match p {
        ir::Padding::Same => k::quant::Padding::Same,
        ir::Padding::Valid => k::quant::Padding::Valid,
    }
}

pub(crate) fn positive(s: i32, what: &str) -> Result<usize> {
    usize::try_from(s).ok().filter(|&s| s > 0).ok_or_else(|| {
        unsupported(format!("the {what} must be positive")).expected_found(">= 1", s.to_string())
    })
}

/// Bytes as `i8` (same size and alignment, so a plain reinterpretation).
pub(crate) fn bytemuck_i8(bytes: &[u8]) -> &[i8] {
    bytemuck::cast_slice(bytes)
}

pub(crate) fn elem(dtype: DType) -> Result<Elem> {
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

pub(crate) fn types(a: DType, b: DType) -> String {
    format!("{a} -> {b}")
}

/// The lowering context of one operator: the graph, the operator, and the checks every
/// operator module uses (each failure a diagnostic naming the tensor and the value).
pub struct Cx<'a> {
    pub graph: &'a Graph,
    pub op: &'a Op,
    /// Only reference kernels (`Options::reference_kernels`): no fast kernel is chosen.
    pub reference: bool,
}

impl<'a> Cx<'a> {
    /// Whether the operator may choose a fast kernel (not with `Options::reference_kernels`).
    pub(crate) fn fast_kernels(&self) -> bool {
        !self.reference
    }

    pub(crate) fn tensor(&self, t: TensorId) -> &'a ir::Tensor {
        self.graph.tensor(t)
    }

    pub(crate) fn input(&self, slot: usize) -> Result<TensorId> {
        self.op
            .input(slot)
            .ok_or_else(|| unsupported(format!("input {slot} is missing")))
    }

    pub(crate) fn output(&self) -> Result<TensorId> {
        match self.op.outputs.as_slice() {
            [t] => Ok(*t),
            other => Err(unsupported("the operator must have exactly one output")
                .expected_found("1 output", format!("{} outputs", other.len()))),
        }
    }

    pub(crate) fn dtype(&self, t: TensorId) -> DType {
        self.tensor(t).dtype
    }

    pub(crate) fn quant(&self, t: TensorId) -> Result<k::quant::QuantParams> {
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
    pub(crate) fn scales(&self, t: TensorId, channels: usize) -> Result<Vec<f32>> {
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

    pub(crate) fn shape4(&self, t: TensorId) -> Result<[usize; 4]> {
        let tensor = self.tensor(t);
        <[usize; 4]>::try_from(tensor.shape.as_slice()).map_err(|_| {
            unsupported("a 4-D tensor is expected")
                .at_tensor(t.0, tensor.name.clone())
                .expected_found("rank 4", format!("shape {:?}", tensor.shape))
        })
    }

    /// The shape of image input `t` (NHWC) as the operator's parameters see it: the whole
    /// image's, also where the graph was tiled and `t` holds a strip of its rows.
    pub(crate) fn image_shape4(&self, t: TensorId) -> Result<[usize; 4]> {
        let mut shape = self.shape4(t)?;
        if let Some(w) = self.graph.row_window(self.op.id) {
            shape[1] = w.input_height;
        }
        Ok(shape)
    }

    /// Restricts a convolution's or pooling's parameters, computed for the whole image, to
    /// the strip of rows it runs on where the graph was tiled ([`ir::RowWindow`]): the
    /// strip's heights, and the padding rows before the strip's first row. The kernel then
    /// reads the same input rows and treats the same rows as padding as over the whole
    /// image, so it computes the same sums. Refuses (a Kiln bug: the tiling is wrong) a strip
    /// that lacks a row the output rows read, or whose first row is not their first real one.
    pub(crate) fn strip_rows(
        &self,
        [input_height, output_height, padding_height]: [&mut usize; 3],
        stride: usize,
        filter_extent: usize,
    ) -> Result<()> {
        let Some(w) = self.graph.row_window(self.op.id) else {
            return Ok(());
        };
        let (input, output) = (self.input(0)?, self.output()?);
        let (h_in, h_out) = (self.shape4(input)?[1], self.shape4(output)?[1]);
        let first = (w.output_row * stride).saturating_sub(*padding_height);
        let end = ((w.output_row + h_out).saturating_sub(1) * stride + filter_extent)
            .saturating_sub(*padding_height)
            .min(w.input_height);
        let ok = *input_height == w.input_height
            && *output_height == w.output_height
            && h_out > 0
            && w.output_row + h_out <= w.output_height
            && w.input_row == first
            && w.input_row + h_in <= w.input_height
            && w.input_row + h_in >= end;
        if !ok {
            return Err(Diagnostic::new(
                ErrorKind::InvalidPlan,
                format!(
                    "the strip of rows of op {} does not hold the rows it reads: input rows \
                     {}..{} of {}, output rows {}..{} of {} (it reads rows {first}..{end})",
                    self.op.id.0,
                    w.input_row,
                    w.input_row + h_in,
                    w.input_height,
                    w.output_row,
                    w.output_row + h_out,
                    w.output_height,
                ),
            ));
        }
        *padding_height = *padding_height + w.input_row - w.output_row * stride;
        *input_height = h_in;
        *output_height = h_out;
        Ok(())
    }

    pub(crate) fn check_shape(&self, t: TensorId, want: &[usize]) -> Result<()> {
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

    pub(crate) fn need_constant(&self, t: TensorId) -> Result<&'a [u8]> {
        let tensor = self.tensor(t);
        tensor.data().ok_or_else(|| {
            unsupported("this input must be a constant").at_tensor(t.0, tensor.name.clone())
        })
    }

    /// A step of this operator: `kernel` reading `inputs` and writing `output`.
    pub(crate) fn step(
        &self,
        kernel: impl Kernel + 'static,
        inputs: Vec<Operand>,
        output: TensorId,
    ) -> Step {
        Step {
            op: self.op.id,
            kernel: Box::new(kernel),
            scratch_bytes: 0,
            abilities: Abilities::default(),
            inputs,
            states: Vec::new(),
            outputs: vec![output],
            slow_in_place: false,
            lean_scratch_bytes: None,
            control: None,
        }
    }

    /// A control flow or resource variable step (written by the emitter).
    pub(crate) fn control_step(
        &self,
        control: Control,
        inputs: Vec<Operand>,
        states: Vec<TensorId>,
        outputs: Vec<TensorId>,
    ) -> Step {
        Step {
            op: self.op.id,
            kernel: Box::new(ControlKernel),
            scratch_bytes: 0,
            abilities: Abilities::default(),
            inputs,
            states,
            outputs,
            slow_in_place: false,
            lean_scratch_bytes: None,
            control: Some(control),
        }
    }

    pub(crate) fn variable(&self, slot: usize) -> Result<TensorId> {
        let t = self.input(slot)?;
        let tensor = self.tensor(t);
        if tensor.kind != ir::TensorKind::Variable {
            return Err(unsupported("this input must be a variable (state) tensor")
                .at_tensor(t.0, tensor.name.clone()));
        }
        Ok(t)
    }

    pub(crate) fn dims<const N: usize>(&self, t: TensorId) -> Result<[usize; N]> {
        let tensor = self.tensor(t);
        <[usize; N]>::try_from(tensor.shape.as_slice()).map_err(|_| {
            unsupported(format!("a {N}-D tensor is expected"))
                .at_tensor(t.0, tensor.name.clone())
                .expected_found(format!("rank {N}"), format!("shape {:?}", tensor.shape))
        })
    }

    /// A constant int32 tensor's values (axes, permutations, shapes, slice bounds).
    pub(crate) fn const_i32(&self, t: TensorId) -> Result<Vec<i32>> {
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

    pub(crate) fn check_elements(&self, t: TensorId, want: usize) -> Result<()> {
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

    /// Checks that an elementwise operator's output has as many elements as its input.
    pub(crate) fn check_same_elements(&self, input: TensorId, output: TensorId) -> Result<()> {
        self.check_elements(output, self.tensor(input).elements())
    }

    /// Checks an optional bias: one element per output channel, of one of `types`.
    pub(crate) fn check_bias(
        &self,
        bias: Option<TensorId>,
        channels: usize,
        types: &[DType],
    ) -> Result<()> {
        let Some(b) = bias else { return Ok(()) };
        let tensor = self.tensor(b);
        if !types.contains(&tensor.dtype) {
            let names: Vec<&str> = types.iter().map(|t| t.name()).collect();
            return Err(unsupported("the bias has the wrong type")
                .at_tensor(b.0, tensor.name.clone())
                .expected_found(names.join(" or "), tensor.dtype.name()));
        }
        self.check_elements(b, channels)
    }

    /// The operands of ADD, SUB and MUL: two inputs and an output of one type, and the
    /// inputs' broadcast (`None` when their shapes are equal).
    pub(crate) fn binary_operands(
        &self,
    ) -> Result<(
        TensorId,
        TensorId,
        TensorId,
        Option<k::broadcast::Broadcast>,
    )> {
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
            self.check_same_elements(a, output)?;
            None
        } else {
            let bc = k::broadcast::Broadcast::new(sa, sb).map_err(prepare_error)?;
            if bc.output_size() != self.tensor(output).elements() {
                return Err(unsupported("the output shape is not the broadcast shape"));
            }
            Some(bc)
        };
        Ok((a, b, output, broadcast))
    }

    /// The broadcast of a binary operator's inputs, `None` when the shapes are equal.
    pub(crate) fn broadcast(
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
}
