//! Graph IR: the model as Kiln sees it after reading, free of flatbuffer types.
//!
//! Tensors and operators are addressed by typed ids ([`TensorId`], [`OpId`]) that equal their
//! index in the model. Operators keep the model's stored order; a plan may choose another.
//! Builtin options are decoded into one typed struct per operator family.

use std::fmt;

/// Index of a tensor in the (single) subgraph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TensorId(pub usize);

/// Index of an operator in the model's stored order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(pub usize);

impl fmt::Display for TensorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

impl fmt::Display for OpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op{}", self.0)
    }
}

/// Element type of a tensor. Only the types Kiln accepts exist here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    I8,
    U8,
    I16,
    I32,
    I64,
    Bool,
    U16,
    U32,
    U64,
    /// A resource handle (the output of VAR_HANDLE): no bytes at run time, the variable it
    /// names is resolved at build time.
    Resource,
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::I64 | DType::U64 => 8,
            DType::Resource => 0,
        }
    }

    /// TensorFlow Lite's name for the type.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "FLOAT32",
            DType::I8 => "INT8",
            DType::U8 => "UINT8",
            DType::I16 => "INT16",
            DType::I32 => "INT32",
            DType::I64 => "INT64",
            DType::Bool => "BOOL",
            DType::U16 => "UINT16",
            DType::U32 => "UINT32",
            DType::U64 => "UINT64",
            DType::Resource => "RESOURCE",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Affine quantization of a tensor: `real = scale * (q - zero_point)`.
#[derive(Clone, Debug, PartialEq)]
pub enum Quantization {
    /// Not quantized (float tensors, shapes, indices).
    None,
    /// One scale and zero point for the whole tensor.
    PerTensor { scale: f32, zero_point: i64 },
    /// One scale and zero point per slice along `axis` (per-channel weights).
    PerChannel {
        scales: Vec<f32>,
        zero_points: Vec<i64>,
        axis: usize,
    },
}

/// What kind of storage a tensor needs.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorKind {
    /// Weights and other constants: bytes held in flash. Tensors may share a buffer.
    /// `offset` is where the bytes start in the model file (the emitter reads them from
    /// there at compile time).
    Constant {
        buffer: usize,
        offset: usize,
        data: Vec<u8>,
    },
    /// State that survives `invoke()` (LSTM/SVDF): planned outside the reused region.
    Variable,
    /// Produced and consumed during one `invoke()`: planned in the arena.
    Activation,
}

/// A tensor of the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub id: TensorId,
    pub name: String,
    /// Dimensions, outermost first. Empty for a scalar.
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub quant: Quantization,
    pub kind: TensorKind,
}

/// The end of the name of a variable tensor the reader adds for a kernel's own state (TFLM
/// keeps it outside the model's tensors; see `reader::add_kernel_state`). Only for reading:
/// [`Graph::kernel_state`] is what tells these tensors apart.
pub const KERNEL_STATE_SUFFIX: &str = " (kernel state)";

impl Tensor {
    /// Number of elements (1 for a scalar).
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }

    /// Bytes the tensor occupies.
    pub fn bytes(&self) -> usize {
        self.elements() * self.dtype.size()
    }

    /// Whether the tensor's bytes are in the model.
    pub fn is_constant(&self) -> bool {
        matches!(self.kind, TensorKind::Constant { .. })
    }

    /// The constant bytes, if any.
    pub fn data(&self) -> Option<&[u8]> {
        match &self.kind {
            TensorKind::Constant { data, .. } => Some(data),
            _ => None,
        }
    }
}

/// Padding mode of convolutions and pooling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Padding {
    Same,
    Valid,
}

/// Activation fused into an operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activation {
    None,
    Relu,
    ReluN1To1,
    Relu6,
    Tanh,
    SignBit,
}

/// Options of CONV_2D.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2dOptions {
    pub padding: Padding,
    pub stride_w: i32,
    pub stride_h: i32,
    pub dilation_w: i32,
    pub dilation_h: i32,
    pub activation: Activation,
}

/// Options of DEPTHWISE_CONV_2D.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepthwiseConv2dOptions {
    pub padding: Padding,
    pub stride_w: i32,
    pub stride_h: i32,
    pub depth_multiplier: i32,
    pub dilation_w: i32,
    pub dilation_h: i32,
    pub activation: Activation,
}

/// Options of TRANSPOSE_CONV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransposeConvOptions {
    pub padding: Padding,
    pub stride_w: i32,
    pub stride_h: i32,
    pub activation: Activation,
}

/// Options of AVERAGE_POOL_2D and MAX_POOL_2D.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool2dOptions {
    pub padding: Padding,
    pub stride_w: i32,
    pub stride_h: i32,
    pub filter_w: i32,
    pub filter_h: i32,
    pub activation: Activation,
}

/// Options of FULLY_CONNECTED.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FullyConnectedOptions {
    pub activation: Activation,
    pub keep_num_dims: bool,
}

/// Options of ADD and SUB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddSubOptions {
    pub activation: Activation,
    /// int16 only: whether scales are powers of two (TFLite's `pot_scale_int16`).
    pub pot_scale_int16: bool,
}

/// Options of CONCATENATION.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConcatenationOptions {
    /// Axis as stored; may be negative (counted from the end).
    pub axis: i32,
    pub activation: Activation,
}

/// Options of STRIDED_SLICE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StridedSliceOptions {
    pub begin_mask: i32,
    pub end_mask: i32,
    pub ellipsis_mask: i32,
    pub new_axis_mask: i32,
    pub shrink_axis_mask: i32,
    pub offset: bool,
}

/// Options of RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResizeOptions {
    pub align_corners: bool,
    pub half_pixel_centers: bool,
}

/// Options of SVDF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SvdfOptions {
    pub rank: i32,
    pub activation: Activation,
    pub asymmetric_quantize_inputs: bool,
}

/// Options of UNIDIRECTIONAL_SEQUENCE_LSTM.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LstmOptions {
    pub activation: Activation,
    pub cell_clip: f32,
    pub proj_clip: f32,
    pub time_major: bool,
    pub asymmetric_quantize_inputs: bool,
    pub diagonal_recurrent_tensors: bool,
}

/// What an operator computes, with its decoded options.
#[derive(Clone, Debug, PartialEq)]
pub enum OpKind {
    Conv2d(Conv2dOptions),
    DepthwiseConv2d(DepthwiseConv2dOptions),
    FullyConnected(FullyConnectedOptions),
    TransposeConv(TransposeConvOptions),
    AveragePool2d(Pool2dOptions),
    MaxPool2d(Pool2dOptions),
    Mean {
        keep_dims: bool,
    },
    Add(AddSubOptions),
    Sub(AddSubOptions),
    Mul {
        activation: Activation,
    },
    Div {
        activation: Activation,
    },
    Maximum,
    Minimum,
    Softmax {
        beta: f32,
    },
    Logistic,
    Tanh,
    Relu,
    Relu6,
    LeakyRelu {
        alpha: f32,
    },
    HardSwish,
    Concatenation(ConcatenationOptions),
    Reshape,
    Squeeze {
        dims: Vec<i32>,
    },
    ExpandDims,
    Pad,
    PadV2,
    StridedSlice(StridedSliceOptions),
    Transpose,
    ResizeNearestNeighbor(ResizeOptions),
    ResizeBilinear(ResizeOptions),
    Quantize,
    Dequantize,
    Cast,
    Svdf(SvdfOptions),
    UnidirectionalSequenceLstm(LstmOptions),
    L2Pool2d(Pool2dOptions),
    L2Normalization {
        activation: Activation,
    },
    Sum {
        keep_dims: bool,
    },
    ReduceMax {
        keep_dims: bool,
    },
    ReduceMin {
        keep_dims: bool,
    },
    ReduceAll {
        keep_dims: bool,
    },
    Cumsum {
        exclusive: bool,
        reverse: bool,
    },
    Gather {
        axis: i32,
        batch_dims: i32,
    },
    Split {
        num_splits: i32,
    },
    SplitV {
        num_splits: i32,
    },
    Pack {
        values_count: i32,
        axis: i32,
    },
    Unpack {
        num: i32,
        axis: i32,
    },
    SpaceToDepth {
        block_size: i32,
    },
    DepthToSpace {
        block_size: i32,
    },
    MirrorPad {
        /// SYMMETRIC (the border is repeated) rather than REFLECT.
        symmetric: bool,
    },
    BatchMatMul {
        adj_x: bool,
        adj_y: bool,
        asymmetric_quantize_inputs: bool,
    },
    /// Runs subgraph `then_subgraph` if the condition (input 0) is true, else `else_subgraph`;
    /// the other inputs are the branch's inputs, the outputs the branch's outputs.
    If {
        then_subgraph: usize,
        else_subgraph: usize,
    },
    /// Runs `body_subgraph` while `cond_subgraph` is true; inputs, outputs and both
    /// subgraphs' inputs (and the body's outputs) are the loop variables.
    While {
        cond_subgraph: usize,
        body_subgraph: usize,
    },
    /// Runs `init_subgraph` at the first `invoke()` (and after a reset).
    CallOnce {
        init_subgraph: usize,
    },
    /// Names resource variable `resource` (an index into [`Graph::resources`]).
    VarHandle {
        resource: usize,
    },
    /// Reads resource variable `resource` (input 0 is its handle; the reader appends the
    /// variable tensor holding it as input 1).
    ReadVariable {
        resource: usize,
    },
    /// Writes input 1 to resource variable `resource` (input 0 is its handle; the reader
    /// appends the variable tensor holding it as input 2).
    AssignVariable {
        resource: usize,
    },
    /// Kiln's own (a tiling's accumulating end, [`crate::tiling`]; no model holds it, the
    /// reader never makes it): adds the per-channel sums of the pixels of a strip of an int8
    /// NHWC image (input 0) to an INT32 accumulator of one value per channel (input 1; absent
    /// for the first strip: the sums start at zero), writing the new accumulator.
    KilnRowSum,
    /// Kiln's own (as [`OpKind::KilnRowSum`]): the output of an int8 AVERAGE_POOL_2D with
    /// `options` whose one output pixel's window covers the whole `height` x `width` image,
    /// from that image's per-channel sums (input 0, the last [`OpKind::KilnRowSum`]).
    KilnAverageFinish {
        options: Pool2dOptions,
        height: usize,
        width: usize,
    },
    /// Kiln's own (as [`OpKind::KilnRowSum`]): adds a strip's slice of an int8
    /// FULLY_CONNECTED's dot products to an INT32 accumulator of one value per output: the
    /// strip (input 0, rows of an NHWC image of batch 1 whose flattening is the layer's
    /// input) holds the flattened input's elements from `first`; input 1 is the accumulator
    /// (absent for the first strip), input 2 the layer's weights.
    KilnDotSum {
        first: usize,
    },
    /// Kiln's own (as [`OpKind::KilnRowSum`]): an int8 FULLY_CONNECTED with `options` from
    /// its accumulated dot products (input 0): adds the bias (input 2, if present) and
    /// requantizes; input 1 is the layer's weights (for their quantization).
    KilnDenseFinish(FullyConnectedOptions),
    /// Kiln's own (as [`OpKind::KilnRowSum`]): adds a strip's part of an int8
    /// DEPTHWISE_CONV_2D whose one output pixel's window is its whole input image (VALID,
    /// depth multiplier 1) to an INT32 accumulator of one value per channel: the strip
    /// (input 0, rows of the NHWC image of batch 1) holds the image's pixels from pixel
    /// `first`; input 1 is the accumulator (absent for the first strip), input 2 the layer's
    /// filter.
    KilnDepthwiseSum {
        first: usize,
    },
    /// Kiln's own (as [`OpKind::KilnRowSum`]): that int8 DEPTHWISE_CONV_2D with `options`
    /// from its accumulated per-channel sums (input 0): adds the bias (input 2, if present)
    /// and requantizes per channel; input 1 is the layer's filter (for its quantization and
    /// the image's size).
    KilnDepthwiseFinish(DepthwiseConv2dOptions),
    /// A builtin without options. Planned like any other operator; the operator modules
    /// dispatch it by name (and refuse it if Kiln has no kernel).
    Other {
        name: String,
    },
    /// A custom operator (TFLM's Signal library, ...) with its options, decoded from the
    /// model's flexbuffer (`None` if they are not a map of scalars).
    Custom {
        name: String,
        options: Option<CustomOptions>,
    },
}

/// A custom operator's options: the keys and scalar values of its flexbuffer map, sorted
/// by key (as FlexBuffers stores them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CustomOptions {
    pub entries: Vec<(String, CustomValue)>,
}

/// One value of [`CustomOptions`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CustomValue {
    Int(i64),
    UInt(u64),
    Float(f64),
    Bool(bool),
}

impl CustomOptions {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<CustomValue> {
        self.entries.iter().find(|(k, _)| k == key).map(|&(_, v)| v)
    }

    /// The integer value of `key` (signed or unsigned, as an `i64`; bools are not integers).
    pub fn int(&self, key: &str) -> Option<i64> {
        match self.get(key)? {
            CustomValue::Int(v) => Some(v),
            CustomValue::UInt(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The bool value of `key`.
    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.get(key)? {
            CustomValue::Bool(v) => Some(v),
            _ => None,
        }
    }
}

impl OpKind {
    /// The subgraphs a control flow operator runs (IF: then, else; WHILE: cond, body;
    /// CALL_ONCE: init); none for the others.
    pub fn called_subgraphs(&self) -> Vec<usize> {
        match *self {
            OpKind::If {
                then_subgraph,
                else_subgraph,
            } => vec![then_subgraph, else_subgraph],
            OpKind::While {
                cond_subgraph,
                body_subgraph,
            } => vec![cond_subgraph, body_subgraph],
            OpKind::CallOnce { init_subgraph } => vec![init_subgraph],
            _ => Vec::new(),
        }
    }

    /// TensorFlow Lite's name for the operator (`CONV_2D`, or the custom code).
    pub fn name(&self) -> &str {
        match self {
            OpKind::Conv2d(_) => "CONV_2D",
            OpKind::DepthwiseConv2d(_) => "DEPTHWISE_CONV_2D",
            OpKind::FullyConnected(_) => "FULLY_CONNECTED",
            OpKind::TransposeConv(_) => "TRANSPOSE_CONV",
            OpKind::AveragePool2d(_) => "AVERAGE_POOL_2D",
            OpKind::MaxPool2d(_) => "MAX_POOL_2D",
            OpKind::Mean { .. } => "MEAN",
            OpKind::Add(_) => "ADD",
            OpKind::Sub(_) => "SUB",
            OpKind::Mul { .. } => "MUL",
            OpKind::Div { .. } => "DIV",
            OpKind::Maximum => "MAXIMUM",
            OpKind::Minimum => "MINIMUM",
            OpKind::Softmax { .. } => "SOFTMAX",
            OpKind::Logistic => "LOGISTIC",
            OpKind::Tanh => "TANH",
            OpKind::Relu => "RELU",
            OpKind::Relu6 => "RELU6",
            OpKind::LeakyRelu { .. } => "LEAKY_RELU",
            OpKind::HardSwish => "HARD_SWISH",
            OpKind::Concatenation(_) => "CONCATENATION",
            OpKind::Reshape => "RESHAPE",
            OpKind::Squeeze { .. } => "SQUEEZE",
            OpKind::ExpandDims => "EXPAND_DIMS",
            OpKind::Pad => "PAD",
            OpKind::PadV2 => "PADV2",
            OpKind::StridedSlice(_) => "STRIDED_SLICE",
            OpKind::Transpose => "TRANSPOSE",
            OpKind::ResizeNearestNeighbor(_) => "RESIZE_NEAREST_NEIGHBOR",
            OpKind::ResizeBilinear(_) => "RESIZE_BILINEAR",
            OpKind::Quantize => "QUANTIZE",
            OpKind::Dequantize => "DEQUANTIZE",
            OpKind::Cast => "CAST",
            OpKind::Svdf(_) => "SVDF",
            OpKind::UnidirectionalSequenceLstm(_) => "UNIDIRECTIONAL_SEQUENCE_LSTM",
            OpKind::L2Pool2d(_) => "L2_POOL_2D",
            OpKind::L2Normalization { .. } => "L2_NORMALIZATION",
            OpKind::Sum { .. } => "SUM",
            OpKind::ReduceMax { .. } => "REDUCE_MAX",
            OpKind::ReduceMin { .. } => "REDUCE_MIN",
            OpKind::ReduceAll { .. } => "REDUCE_ALL",
            OpKind::Cumsum { .. } => "CUMSUM",
            OpKind::Gather { .. } => "GATHER",
            OpKind::Split { .. } => "SPLIT",
            OpKind::SplitV { .. } => "SPLIT_V",
            OpKind::Pack { .. } => "PACK",
            OpKind::Unpack { .. } => "UNPACK",
            OpKind::SpaceToDepth { .. } => "SPACE_TO_DEPTH",
            OpKind::DepthToSpace { .. } => "DEPTH_TO_SPACE",
            OpKind::MirrorPad { .. } => "MIRROR_PAD",
            OpKind::BatchMatMul { .. } => "BATCH_MATMUL",
            OpKind::If { .. } => "IF",
            OpKind::While { .. } => "WHILE",
            OpKind::CallOnce { .. } => "CALL_ONCE",
            OpKind::VarHandle { .. } => "VAR_HANDLE",
            OpKind::ReadVariable { .. } => "READ_VARIABLE",
            OpKind::AssignVariable { .. } => "ASSIGN_VARIABLE",
            OpKind::KilnRowSum => "KILN_ROW_SUM",
            OpKind::KilnAverageFinish { .. } => "KILN_AVERAGE_FINISH",
            OpKind::KilnDotSum { .. } => "KILN_DOT_SUM",
            OpKind::KilnDenseFinish(_) => "KILN_DENSE_FINISH",
            OpKind::KilnDepthwiseSum { .. } => "KILN_DEPTHWISE_SUM",
            OpKind::KilnDepthwiseFinish(_) => "KILN_DEPTHWISE_FINISH",
            OpKind::Other { name } | OpKind::Custom { name, .. } => name,
        }
    }
}

/// An operator of the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    pub id: OpId,
    pub kind: OpKind,
    /// Inputs in the operator's own order; `None` where an optional input is omitted.
    pub inputs: Vec<Option<TensorId>>,
    pub outputs: Vec<TensorId>,
    /// Intermediate tensors some kernels use (LSTM); planned as scratch by TFLM.
    pub intermediates: Vec<TensorId>,
}

impl Op {
    /// The inputs that are present.
    pub fn present_inputs(&self) -> impl Iterator<Item = TensorId> + '_ {
        self.inputs.iter().flatten().copied()
    }

    /// The input at `slot`, if present.
    pub fn input(&self, slot: usize) -> Option<TensorId> {
        self.inputs.get(slot).copied().flatten()
    }
}

/// A model with one subgraph, validated: every id is in range, every tensor an operator
/// reads is a constant, a variable, a graph input, or produced by an earlier operator.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    pub tensors: Vec<Tensor>,
    /// Operators in the model's stored order (`ops[i].id == OpId(i)`).
    pub ops: Vec<Op>,
    pub inputs: Vec<TensorId>,
    pub outputs: Vec<TensorId>,
    /// The model's other subgraphs, which control flow operators run: `subgraphs[i - 1]` is
    /// the model's subgraph `i` (see [`Graph::subgraph`]). Empty in those subgraphs.
    pub subgraphs: Vec<Graph>,
    /// The model's resource variables (`container/shared_name` of their VAR_HANDLE), in
    /// order of first appearance; only in the main graph.
    pub resources: Vec<String>,
    /// Per resource variable this subgraph reads or writes: the variable tensor the reader
    /// added for it (its bytes are the model's one copy, shared by all subgraphs).
    pub resource_vars: Vec<(usize, TensorId)>,
    /// The variable tensors the reader added for kernels' own state (TFLM keeps it outside the
    /// model's tensors; see `reader::add_kernel_state`), in the order added.
    pub kernel_state: Vec<TensorId>,
    /// Operators that run on a strip of rows (or a patch of rows and columns) of their image
    /// ([`crate::tiling`]): a convolution, pooling or PAD whose input and output tensors hold
    /// rows (and columns) of larger images.
    /// Empty unless the graph was tiled; sorted by operator.
    pub row_windows: Vec<(OpId, RowWindow)>,
}

/// Where the strips of rows (or the patches of rows and columns) a tiled convolution,
/// pooling or PAD reads and writes sit in the images of the untiled graph (NHWC, batch 1):
/// its input tensor holds rows `input_row..input_row + h` of an image `input_height` rows
/// high and columns `input_col..input_col + w` of its `input_width`, its output rows
/// `output_row..` of one `output_height` rows high and columns `output_col..` of its
/// `output_width` (a strip of rows: every column, from 0). Padding, strides and the kernel's
/// bounds are those of the whole image, so the strip or patch computes the same sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowWindow {
    pub input_row: usize,
    pub input_height: usize,
    pub output_row: usize,
    pub output_height: usize,
    pub input_col: usize,
    pub input_width: usize,
    pub output_col: usize,
    pub output_width: usize,
}

impl RowWindow {
    /// `[input first, input whole, output first, output whole]` along `axis` of the NHWC
    /// images: 1 the rows, 2 the columns.
    pub fn along(&self, axis: usize) -> [usize; 4] {
        if axis == 1 {
            [
                self.input_row,
                self.input_height,
                self.output_row,
                self.output_height,
            ]
        } else {
            [
                self.input_col,
                self.input_width,
                self.output_col,
                self.output_width,
            ]
        }
    }
}

impl Graph {
    /// The model's subgraph `i` (1 and up), called by a control flow operator.
    pub fn subgraph(&self, i: usize) -> Option<&Graph> {
        i.checked_sub(1).and_then(|i| self.subgraphs.get(i))
    }

    /// Whether the reader added tensor `id` for a kernel's state (it is not in the model).
    pub fn is_kernel_state(&self, id: TensorId) -> bool {
        self.kernel_state.contains(&id)
    }

    /// The strip of rows operator `op` runs on, if the graph was tiled there.
    pub fn row_window(&self, op: OpId) -> Option<RowWindow> {
        // Sorted by operator (`tiling::tile` keeps them so): lowering asks for every operator.
        self.row_windows
            .binary_search_by_key(&op, |&(o, _)| o)
            .ok()
            .map(|i| self.row_windows[i].1)
    }

    /// The tensor with this id.
    pub fn tensor(&self, id: TensorId) -> &Tensor {
        &self.tensors[id.0]
    }

    /// The operator with this id.
    pub fn op(&self, id: OpId) -> &Op {
        &self.ops[id.0]
    }

    /// Bytes of all constant buffers (weights, biases, shapes...), each shared buffer once.
    pub fn weights_bytes(&self) -> usize {
        let mut seen = std::collections::BTreeMap::new();
        for t in &self.tensors {
            if let TensorKind::Constant { buffer, data, .. } = &t.kind {
                seen.insert(*buffer, data.len());
            }
        }
        seen.values().sum()
    }

    /// Bytes of all variable (state) tensors.
    pub fn variable_bytes(&self) -> usize {
        self.tensors
            .iter()
            .filter(|t| t.kind == TensorKind::Variable)
            .map(Tensor::bytes)
            .sum()
    }
}
