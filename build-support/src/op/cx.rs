//! [`Cx`]: the lowering context of one operator (the graph and the operator) with the
//! checks every operator module uses, each failure a diagnostic naming the tensor and the
//! value, and the constructors of the operator's [`Step`].

use super::diag::{prepare_error, unsupported};
use super::kernel::Kernel;
use super::operand::Operand;
use super::step::{Control, ControlKernel, Step};
use kiln_kernels as k;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{self, DType, Graph, Op, Quantization, TensorId};
use kiln_planner::kernels::Abilities;

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
    /// image's, also where the graph was tiled and `t` holds a strip of its rows (or a patch
    /// of its rows and columns).
    pub(crate) fn image_shape4(&self, t: TensorId) -> Result<[usize; 4]> {
        let mut shape = self.shape4(t)?;
        if let Some(w) = self.graph.row_window(self.op.id) {
            shape[1] = w.input_height;
            shape[2] = w.input_width;
        }
        Ok(shape)
    }

    /// Restricts a convolution's or pooling's parameters, computed for the whole image, to
    /// the strip of rows (or patch of rows and columns) it runs on where the graph was tiled
    /// ([`ir::RowWindow`]): `[input, output, padding before]` of the rows and of the
    /// columns become the strip's sizes and the padding before its first row and column
    /// (`stride` and `extent`, the window's, rows then columns; a strip of rows keeps every
    /// column). The kernel then reads the same input rows and columns and treats the same
    /// ones as padding as over the whole image, so it computes the same sums. Refuses (a
    /// Kiln bug: the tiling is wrong) a strip that lacks a row or column the output reads,
    /// or whose first one is not their first real one.
    pub(crate) fn strip_window(
        &self,
        rows: [&mut usize; 3],
        cols: [&mut usize; 3],
        stride: [usize; 2],
        extent: [usize; 2],
    ) -> Result<()> {
        self.strip_along(1, rows, stride[0], extent[0])?;
        self.strip_along(2, cols, stride[1], extent[1])
    }

    /// [`Self::strip_window`] along `axis` of the NHWC images (1: rows, 2: columns).
    fn strip_along(
        &self,
        axis: usize,
        [input_size, output_size, padding]: [&mut usize; 3],
        stride: usize,
        filter_extent: usize,
    ) -> Result<()> {
        let Some(w) = self.graph.row_window(self.op.id) else {
            return Ok(());
        };
        let (input, output) = (self.input(0)?, self.output()?);
        let (n_in, n_out) = (self.shape4(input)?[axis], self.shape4(output)?[axis]);
        let [in_at, in_full, out_at, out_full] = w.along(axis);
        let first = (out_at * stride).saturating_sub(*padding);
        let end = ((out_at + n_out).saturating_sub(1) * stride + filter_extent)
            .saturating_sub(*padding)
            .min(in_full);
        let ok = *input_size == in_full
            && *output_size == out_full
            && n_out > 0
            && out_at + n_out <= out_full
            && in_at == first
            && in_at + n_in <= in_full
            && in_at + n_in >= end;
        if !ok {
            let what = if axis == 1 { "rows" } else { "columns" };
            return Err(Diagnostic::new(
                ErrorKind::InvalidPlan,
                format!(
                    "the strip of op {} does not hold the {what} it reads: input {what} \
                     {in_at}..{} of {in_full}, output {what} {out_at}..{} of {out_full} (it \
                     reads {what} {first}..{end})",
                    self.op.id.0,
                    in_at + n_in,
                    out_at + n_out,
                ),
            ));
        }
        *padding = *padding + in_at - out_at * stride;
        *input_size = n_in;
        *output_size = n_out;
        Ok(())
    }

    /// Restricts a PAD's paddings of the rows (`[before, after]`, for the whole image) to the
    /// strip of rows it runs on where the graph was tiled ([`ir::RowWindow`]): the padding
    /// rows before and after the strip's input rows within its output rows. Refuses (a Kiln
    /// bug: the tiling is wrong) a strip whose input rows are not the ones its output rows
    /// hold, or that pads rows the whole image does not. Along `axis` 2, the columns of a
    /// patch of rows and columns.
    pub(crate) fn strip_pad(&self, axis: usize, pair: &mut [usize; 2]) -> Result<()> {
        let Some(w) = self.graph.row_window(self.op.id) else {
            return Ok(());
        };
        let (input, output) = (self.input(0)?, self.output()?);
        let (n_in, n_out) = (self.shape4(input)?[axis], self.shape4(output)?[axis]);
        let [in_at, in_full, out_at, out_full] = w.along(axis);
        let [before, after] = *pair;
        let top = (in_at + before).checked_sub(out_at);
        let bottom = top.and_then(|t| n_out.checked_sub(t + n_in));
        let ok = match (top, bottom) {
            (Some(top), Some(bottom)) => {
                in_full + before + after == out_full
                    && n_in > 0
                    && in_at + n_in <= in_full
                    && out_at + n_out <= out_full
                    && (top == 0 || in_at == 0)
                    && (bottom == 0 || in_at + n_in == in_full)
            }
            _ => false,
        };
        if !ok {
            let what = if axis == 1 { "rows" } else { "columns" };
            return Err(Diagnostic::new(
                ErrorKind::InvalidPlan,
                format!(
                    "the strip of PAD op {} does not hold the {what} it pads: input {what} \
                     {in_at}..{} of {in_full}, output {what} {out_at}..{} of {out_full}, \
                     padding {before} and {after}",
                    self.op.id.0,
                    in_at + n_in,
                    out_at + n_out,
                ),
            ));
        }
        *pair = [top.unwrap_or(0), bottom.unwrap_or(0)];
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
            without_scratch: None,
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
            without_scratch: None,
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
