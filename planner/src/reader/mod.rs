//! Reader: `.tflite` bytes to a validated [`Graph`].
//!
//! The flatbuffers verifier runs first, then Kiln's own checks (subgraphs and the calls
//! between them, resource variables, indices in range, buffer lengths, dtypes, quantization arrays, operator codes, options). Flatbuffer
//! types never leave this module: everything returned is [`crate::ir`].
//!
//! The schema is Kiln's own subset of TensorFlow Lite's (`planner/schema/tflite_subset.fbs`);
//! `tflite_generated.rs` is generated from it by `tools/regen_schema.sh`.
//!
//! The verifier is the `flatbuffers` crate's, run by the generated code, with one change the
//! generator makes: every field of a table (scalars, enums, offsets, and the vectors of
//! scalars they point to) is checked by `unaligned`, for bounds without the alignment rule.
//! Converters write int64 zero points at 4 mod 8 and TFLM runs such files; the crate reads
//! every scalar by copying, so they read correctly. Everything else is still the crate's:
//! offsets and ranges within the file, vtables, tables, strings (UTF-8, terminator) and vectors
//! of tables aligned, union types, the depth and table-count limits, the apparent size. A file
//! that fails gets a diagnostic naming the check and the field (`verify_error`); only a range
//! or an offset past the end asks whether the file is truncated. `tests/misaligned/` holds
//! models misaligned throughout (`tools/gen_misaligned_models.py`).

#[allow(
    clippy::all,
    clippy::pedantic,
    dead_code,
    unused_imports,
    mismatched_lifetime_syntaxes,
    unsafe_op_in_unsafe_fn,
    non_camel_case_types,
    deprecated
)]
#[rustfmt::skip]
mod tflite_generated;

mod control;
mod flexbuffers;
mod opcodes;
mod unaligned;
mod verify_error;

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::*;
use tflite_generated::tflite as fb;

/// The most subgraphs a model may have (control flow bodies; real models have a handful).
const MAX_SUBGRAPHS: usize = 1024;

/// The TensorFlow Lite file identifier, bytes 4..8 of every model.
const FILE_IDENTIFIER: &[u8; 4] = b"TFL3";

/// Reads and validates a `.tflite` model. Never panics, whatever the bytes.
pub fn read_model(bytes: &[u8]) -> Result<Graph> {
    if bytes.len() < 8 {
        return Err(Diagnostic::new(
            ErrorKind::NotTflite,
            format!(
                "not a TensorFlow Lite model: {} bytes is too short for a flatbuffer",
                bytes.len()
            ),
        ));
    }
    if &bytes[4..8] != FILE_IDENTIFIER {
        return Err(Diagnostic::new(
            ErrorKind::NotTflite,
            "not a TensorFlow Lite model: wrong file identifier",
        )
        .expected_found(
            "b\"TFL3\" at bytes 4..8",
            format!("b\"{}\"", bytes[4..8].escape_ascii()),
        ));
    }
    let opts = flatbuffers::VerifierOptions {
        max_tables: 10_000_000,
        ..Default::default()
    };
    let model = fb::root_as_model_with_opts(&opts, bytes)
        .map_err(|e| verify_error::diagnostic(&e, bytes.len(), &opts))?;
    Reader { bytes, model }.graph()
}

/// Custom operators whose TFLM kernel keeps state outside the model's tensors (allocated in
/// `Init`/`Prepare`, zeroed by `Reset`) get it as one more input, a variable tensor appended to
/// the graph's tensors and listed in [`Graph::kernel_state`], so that the planner places it in
/// the persistent region and `reset()` zeroes it as TFLM does. The state is added only when
/// the options and the input give it a size; otherwise nothing is added and the operator
/// module refuses the options (it checks the state's size against its kernel's).
///
/// - SignalFilterBankSpectralSubtraction: the noise estimate (`uint32`, `num_channels`
///   values, when that option matches its input's size).
/// - SignalFramer, SignalStacker, SignalDelay: their circular buffers as int16 histories
///   (`kiln_kernels::signal_framer::state_len` and the others give the sizes used here).
/// - SignalOverlapAdd: one frame-sized buffer per row, of the input's type.
fn add_kernel_state(graph: &mut Graph) {
    for i in 0..graph.ops.len() {
        let op = &graph.ops[i];
        let OpKind::Custom { name, options } = &op.kind else {
            continue;
        };
        if op.inputs.len() != 1 {
            continue;
        }
        let Some(input) = op.inputs[0].map(|t| &graph.tensors[t.0]) else {
            continue;
        };
        let int = |k: &str| options.as_ref().and_then(|o| o.int(k));
        let shape = &input.shape;
        let elements = input.elements();
        let innermost = shape.last().copied().filter(|&n| n > 0);
        let rows = innermost.map(|n| elements / n);
        let state = match name.as_str() {
            "SignalFilterBankSpectralSubtraction" => int("num_channels")
                .and_then(|c| usize::try_from(c).ok())
                .filter(|&c| c > 0 && c == elements)
                .map(|c| ("noise estimate", DType::U32, c)),
            "SignalFramer" => (|| {
                let size = usize::try_from(int("frame_size")?)
                    .ok()
                    .filter(|&s| s > 0)?;
                let step = usize::try_from(int("frame_step")?)
                    .ok()
                    .filter(|&s| s > 0)?;
                let prefill = match options.as_ref()?.get("prefill")? {
                    crate::ir::CustomValue::Bool(b) => b,
                    crate::ir::CustomValue::Int(v) => v != 0,
                    crate::ir::CustomValue::UInt(v) => v != 0,
                    crate::ir::CustomValue::Float(_) => return None,
                };
                let history = if prefill {
                    size.checked_sub(step)?
                } else {
                    size.div_ceil(step).checked_mul(step)? - step
                };
                let n = rows?.checked_mul(history)?.checked_add(2)?;
                Some(("framer history", DType::I16, n))
            })(),
            "SignalStacker" => (|| {
                let nc = usize::try_from(int("num_channels")?)
                    .ok()
                    .filter(|&n| n > 0)?;
                let left = usize::try_from(int("stacker_left_context")?).ok()?;
                let right = usize::try_from(int("stacker_right_context")?).ok()?;
                let n = nc.checked_mul(left.checked_add(right)?)?.checked_add(2)?;
                Some(("stacker history", DType::I16, n))
            })(),
            "SignalDelay" => (|| {
                let delay = usize::try_from(int("delay_length")?).ok()?;
                let n = rows?.checked_mul(delay)?.max(1);
                Some(("delay history", DType::I16, n))
            })(),
            "SignalOverlapAdd" => (|| {
                let n_frames = shape
                    .len()
                    .checked_sub(2)
                    .map(|d| shape[d])
                    .filter(|&n| n > 0)?;
                innermost?;
                matches!(input.dtype, DType::I16 | DType::F32)
                    .then(|| ("overlap-add buffer", input.dtype, elements / n_frames))
            })(),
            _ => None,
        };
        let Some((what, dtype, n)) = state.filter(|s| s.2 > 0) else {
            continue;
        };
        let id = TensorId(graph.tensors.len());
        graph.tensors.push(crate::ir::Tensor {
            id,
            name: format!("op {i} {what}{KERNEL_STATE_SUFFIX}"),
            shape: vec![n],
            dtype,
            quant: crate::ir::Quantization::None,
            kind: TensorKind::Variable,
        });
        graph.ops[i].inputs.push(Some(id));
        graph.kernel_state.push(id);
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    model: fb::Model<'a>,
}

fn tensor_type(t: fb::TensorType) -> Option<DType> {
    Some(match t {
        fb::TensorType::FLOAT32 => DType::F32,
        fb::TensorType::INT8 => DType::I8,
        fb::TensorType::UINT8 => DType::U8,
        fb::TensorType::INT16 => DType::I16,
        fb::TensorType::INT32 => DType::I32,
        fb::TensorType::INT64 => DType::I64,
        fb::TensorType::BOOL => DType::Bool,
        fb::TensorType::UINT16 => DType::U16,
        fb::TensorType::UINT32 => DType::U32,
        fb::TensorType::UINT64 => DType::U64,
        fb::TensorType::RESOURCE => DType::Resource,
        _ => return None,
    })
}

fn padding(p: fb::Padding) -> Result<Padding> {
    match p {
        fb::Padding::SAME => Ok(Padding::Same),
        fb::Padding::VALID => Ok(Padding::Valid),
        other => Err(Diagnostic::malformed("unknown padding mode")
            .expected_found("SAME (0) or VALID (1)", other.0.to_string())),
    }
}

fn activation(a: fb::ActivationFunctionType) -> Result<Activation> {
    Ok(match a {
        fb::ActivationFunctionType::NONE => Activation::None,
        fb::ActivationFunctionType::RELU => Activation::Relu,
        fb::ActivationFunctionType::RELU_N1_TO_1 => Activation::ReluN1To1,
        fb::ActivationFunctionType::RELU6 => Activation::Relu6,
        fb::ActivationFunctionType::TANH => Activation::Tanh,
        fb::ActivationFunctionType::SIGN_BIT => Activation::SignBit,
        other => {
            return Err(Diagnostic::malformed("unknown fused activation")
                .expected_found("a value in 0..=5", other.0.to_string()));
        }
    })
}

impl<'a> Reader<'a> {
    /// The main subgraph, with the model's other subgraphs (control flow bodies) and
    /// resource variables.
    fn graph(&self) -> Result<Graph> {
        let subgraphs = self
            .model
            .subgraphs()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Diagnostic::malformed("the model has no subgraphs"))?;
        if subgraphs.len() > MAX_SUBGRAPHS {
            return Err(Diagnostic::unsupported("the model has too many subgraphs")
                .expected_found(
                    format!("at most {MAX_SUBGRAPHS}"),
                    subgraphs.len().to_string(),
                ));
        }
        let codes = self.operator_codes()?;
        let mut resources = Vec::new();
        let mut graphs = Vec::with_capacity(subgraphs.len());
        for (s, sg) in subgraphs.iter().enumerate() {
            let g = self
                .subgraph(&sg, &codes, &mut resources)
                .map_err(|d| d.in_subgraph(s))?;
            graphs.push(g);
        }
        control::check_calls(&graphs)?;
        control::link_resources(&mut graphs);
        control::check_resources(&graphs, &resources)?;
        control::resource_defaults(&mut graphs, &resources)?;
        let mut main = graphs.remove(0);
        main.subgraphs = graphs;
        main.resources = resources;
        Ok(main)
    }

    /// One subgraph, validated; `resources` collects the resource variables it names.
    fn subgraph(
        &self,
        sg: &fb::SubGraph<'a>,
        codes: &[OpCode],
        resources: &mut Vec<String>,
    ) -> Result<Graph> {
        let tensors = self.tensors(sg)?;
        let index = |what: &str, i: i32| -> Result<TensorId> {
            usize::try_from(i)
                .ok()
                .filter(|&i| i < tensors.len())
                .map(TensorId)
                .ok_or_else(|| {
                    Diagnostic::malformed(format!("{what} names a tensor that does not exist"))
                        .expected_found(format!("an index in 0..{}", tensors.len()), i.to_string())
                })
        };
        let inputs = sg
            .inputs()
            .map(|v| v.iter().map(|i| index("a subgraph input", i)).collect())
            .transpose()?
            .unwrap_or_default();
        let outputs = sg
            .outputs()
            .map(|v| v.iter().map(|i| index("a subgraph output", i)).collect())
            .transpose()?
            .unwrap_or_default();
        let mut ops = Vec::new();
        if let Some(fops) = sg.operators() {
            for (i, op) in fops.iter().enumerate() {
                ops.push(self.op(i, &op, codes, &index, resources)?);
            }
        }
        let mut graph = Graph {
            tensors,
            ops,
            inputs,
            outputs,
            subgraphs: Vec::new(),
            resources: Vec::new(),
            resource_vars: Vec::new(),
            kernel_state: Vec::new(),
            row_windows: Vec::new(),
        };
        add_kernel_state(&mut graph);
        control::add_resource_vars(&mut graph)?;
        crate::validate::validate(&graph)?;
        Ok(graph)
    }

    /// The bytes of buffer `index` and where they start in the file, if it has any.
    fn buffer_data(
        &self,
        index: u32,
        tensor: usize,
        name: &str,
    ) -> Result<Option<(usize, Vec<u8>)>> {
        let buffers = self.model.buffers();
        let count = buffers.map_or(0, |b| b.len());
        let at = |d: Diagnostic| d.at_tensor(tensor, name);
        let Some(buffer) = buffers.filter(|_| (index as usize) < count) else {
            return Err(at(Diagnostic::malformed(
                "the tensor names a buffer that does not exist",
            )
            .expected_found(format!("an index in 0..{count}"), index.to_string())));
        };
        let buffer = buffer.get(index as usize);
        let data = buffer.data().filter(|d| !d.is_empty());
        // Models over 2 GB keep buffer bytes after the flatbuffer, addressed by `offset` and
        // `size`. The pinned TFLM reads only `data`: such a tensor has no bytes there, and
        // TFLM runs the model without its values (other outputs than the model's), so Kiln
        // refuses it rather than compute what TFLM does not.
        let (offset, size) = (buffer.offset(), buffer.size());
        if data.is_none() && offset > 1 {
            return Err(at(Diagnostic::unsupported(
                "the tensor's bytes are outside the flatbuffer (a buffer with `offset` and \
                 `size`, the format of models over 2 GB), which TFLM does not read; convert \
                 the model without external buffers",
            )
            .expected_found(
                "the bytes in the buffer's `data`",
                format!("offset {offset}, size {size}"),
            )));
        }
        Ok(data.map(|d| {
            let bytes = d.bytes();
            // The verifier proved the vector lies inside `self.bytes`.
            let offset = bytes.as_ptr() as usize - self.bytes.as_ptr() as usize;
            (offset, bytes.to_vec())
        }))
    }

    fn tensors(&self, sg: &fb::SubGraph<'a>) -> Result<Vec<Tensor>> {
        let Some(fts) = sg.tensors() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(fts.len());
        for (i, t) in fts.iter().enumerate() {
            let name = t.name().unwrap_or("").to_string();
            let at = |d: Diagnostic| d.at_tensor(i, name.clone());
            let dtype =
                tensor_type(t.type_()).ok_or_else(|| {
                    let found = t
                        .type_()
                        .variant_name()
                        .unwrap_or("an unknown type")
                        .to_string();
                    at(Diagnostic::unsupported("unsupported tensor type").expected_found(
                    "FLOAT32, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, BOOL or RESOURCE",
                    found,
                ))
                })?;
            if t.sparsity().is_some() {
                return Err(at(Diagnostic::unsupported(
                    "sparse tensors are not supported",
                )));
            }
            let mut shape = Vec::new();
            for d in t.shape().iter().flat_map(|s| s.iter()) {
                match usize::try_from(d) {
                    Ok(d) => shape.push(d),
                    Err(_) => {
                        return Err(at(Diagnostic::unsupported(
                            "dynamic or negative dimensions are not supported",
                        )
                        .expected_found("dimensions >= 0", format!("{d}"))));
                    }
                }
            }
            // As `Tensor::elements` multiplies (left to right), so that a zero dimension after
            // huge ones cannot overflow there either.
            let bytes = shape
                .iter()
                .try_fold(1usize, |acc, &d| acc.checked_mul(d))
                .and_then(|n| n.checked_mul(dtype.size()));
            let Some(bytes) = bytes.filter(|&b| b <= crate::plan::MAX_OBJECT_BYTES) else {
                let found = match bytes {
                    Some(b) => format!("{b} bytes (shape {shape:?} of {dtype})"),
                    None => format!("shape {shape:?} of {dtype}"),
                };
                return Err(at(Diagnostic::unsupported(
                    "the tensor does not fit a 32-bit address space",
                )
                .expected_found(
                    format!(
                        "at most {} bytes, the largest object on a 32-bit core",
                        crate::plan::MAX_OBJECT_BYTES
                    ),
                    found,
                )));
            };
            let quant = self.quantization(&t, &shape, dtype).map_err(at)?;
            let data = self.buffer_data(t.buffer(), i, &name)?;
            let kind = match (data, t.is_variable()) {
                (Some(_), true) => {
                    return Err(at(Diagnostic::unsupported(
                        "variable tensors with initial values are not supported",
                    )));
                }
                (Some(_), false) if dtype == DType::Resource => {
                    return Err(at(Diagnostic::malformed(
                        "a RESOURCE tensor (a variable's handle) cannot hold data",
                    )));
                }
                (Some((offset, d)), false) => {
                    if d.len() != bytes {
                        return Err(at(Diagnostic::malformed(
                            "the buffer's length does not match the tensor's shape and type",
                        )
                        .expected_found(
                            format!(
                                "{bytes} bytes ({} elements x {} bytes of {})",
                                bytes / dtype.size(),
                                dtype.size(),
                                dtype
                            ),
                            format!("{} bytes", d.len()),
                        )));
                    }
                    TensorKind::Constant {
                        buffer: t.buffer() as usize,
                        offset,
                        data: d,
                    }
                }
                (None, true) => TensorKind::Variable,
                (None, false) => TensorKind::Activation,
            };
            out.push(Tensor {
                id: TensorId(i),
                name,
                shape,
                dtype,
                quant,
                kind,
            });
        }
        Ok(out)
    }

    fn quantization(
        &self,
        t: &fb::Tensor<'a>,
        shape: &[usize],
        dtype: DType,
    ) -> Result<Quantization> {
        let Some(q) = t.quantization() else {
            return Ok(Quantization::None);
        };
        if q.details_type() != fb::QuantizationDetails::NONE {
            return Err(Diagnostic::unsupported(
                "custom, blockwise or multi-axis quantization is not supported",
            ));
        }
        let scales: Vec<f32> = q.scale().map(|v| v.iter().collect()).unwrap_or_default();
        let zps: Vec<i64> = q
            .zero_point()
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        if scales.is_empty() {
            if !zps.is_empty() {
                return Err(Diagnostic::malformed("zero points without scales")
                    .expected_found("0 zero points", zps.len().to_string()));
            }
            return Ok(Quantization::None);
        }
        if let Some(bad) = scales.iter().find(|s| !s.is_finite() || **s <= 0.0) {
            return Err(
                Diagnostic::malformed("a quantization scale is not a positive number")
                    .expected_found("scale > 0", bad.to_string()),
            );
        }
        let zero_points = if zps.is_empty() {
            vec![0; scales.len()]
        } else {
            zps
        };
        // The quantization spec: a zero point is a value of the tensor's integer type (TFLM's
        // kernels do not all check, and compute with whatever they are given).
        let range = match dtype {
            DType::I8 => Some((i8::MIN as i64, i8::MAX as i64)),
            DType::U8 => Some((0, u8::MAX as i64)),
            DType::I16 => Some((i16::MIN as i64, i16::MAX as i64)),
            DType::I32 => Some((i32::MIN as i64, i32::MAX as i64)),
            _ => None,
        };
        if let Some((lo, hi)) = range
            && let Some(bad) = zero_points.iter().find(|z| !(lo..=hi).contains(*z))
        {
            return Err(Diagnostic::malformed(format!(
                "a zero point lies outside the range of the tensor's type, {dtype}"
            ))
            .expected_found(format!("a zero point in {lo}..={hi}"), bad.to_string()));
        }
        if zero_points.len() != scales.len() {
            return Err(Diagnostic::malformed(
                "quantization has different numbers of scales and zero points",
            )
            .expected_found(
                format!("{} zero points", scales.len()),
                zero_points.len().to_string(),
            ));
        }
        if scales.len() == 1 {
            return Ok(Quantization::PerTensor {
                scale: scales[0],
                zero_point: zero_points[0],
            });
        }
        // Some converters store the weights' quantized dimension (3) on 1-D per-channel
        // biases too; TFLM ignores it there. A 1-D tensor can only be quantized along axis 0.
        let stored = usize::try_from(q.quantized_dimension()).ok();
        let axis = stored
            .filter(|&a| a < shape.len())
            .or((shape.len() == 1).then_some(0))
            .ok_or_else(|| {
                Diagnostic::malformed("the quantized dimension is not a dimension of the tensor")
                    .expected_found(
                        format!("0..{}", shape.len()),
                        q.quantized_dimension().to_string(),
                    )
            })?;
        if shape[axis] != scales.len() {
            return Err(Diagnostic::malformed(
                "per-channel quantization does not match the quantized dimension",
            )
            .expected_found(
                format!("{} scales (dimension {axis} of {shape:?})", shape[axis]),
                format!("{} scales", scales.len()),
            ));
        }
        Ok(Quantization::PerChannel {
            scales,
            zero_points,
            axis,
        })
    }

    /// Decodes every operator code into a name, or `None` for known builtins Kiln reads.
    fn operator_codes(&self) -> Result<Vec<OpCode>> {
        let Some(codes) = self.model.operator_codes() else {
            return Ok(Vec::new());
        };
        codes
            .iter()
            .enumerate()
            .map(|(i, c)| {
                // TensorFlow Lite's rule: the larger of the two fields is the code.
                let code = i32::from(c.deprecated_builtin_code()).max(c.builtin_code().0);
                if code == opcodes::CUSTOM {
                    let name = c.custom_code().unwrap_or("").to_string();
                    return Ok(OpCode::Custom(name));
                }
                match opcodes::name(code) {
                    Some(name) => Ok(OpCode::Builtin(code, name)),
                    None => Err(Diagnostic::malformed(format!(
                        "operator code {i} is not a known TensorFlow Lite builtin"
                    ))
                    .expected_found(
                        format!("a builtin code in 0..={}", opcodes::MAX),
                        code.to_string(),
                    )),
                }
            })
            .collect()
    }

    fn op(
        &self,
        i: usize,
        op: &fb::Operator<'a>,
        codes: &[OpCode],
        index: &dyn Fn(&str, i32) -> Result<TensorId>,
        resources: &mut Vec<String>,
    ) -> Result<Op> {
        let code = codes.get(op.opcode_index() as usize).ok_or_else(|| {
            Diagnostic::malformed("the operator names an operator code that does not exist")
                .at_op(i, "?")
                .expected_found(
                    format!("an index in 0..{}", codes.len()),
                    op.opcode_index().to_string(),
                )
        })?;
        let name = code.name();
        let at = |d: Diagnostic| d.at_op(i, name);
        let mut inputs = Vec::new();
        for t in op.inputs().iter().flat_map(|v| v.iter()) {
            inputs.push(if t == -1 {
                None
            } else {
                Some(index("an operator input", t).map_err(at)?)
            });
        }
        let mut outputs = Vec::new();
        for t in op.outputs().iter().flat_map(|v| v.iter()) {
            outputs.push(index("an operator output", t).map_err(at)?);
        }
        let mut intermediates = Vec::new();
        for t in op.intermediates().iter().flat_map(|v| v.iter()) {
            intermediates.push(index("an operator intermediate", t).map_err(at)?);
        }
        let kind = match code {
            OpCode::Custom(name) => OpKind::Custom {
                name: name.clone(),
                options: match op.custom_options() {
                    Some(bytes) => flexbuffers::decode(bytes.bytes()),
                    None => Some(CustomOptions::default()),
                },
            },
            OpCode::Builtin(c, name) => self.kind(*c, name, op, resources).map_err(at)?,
        };
        Ok(Op {
            id: OpId(i),
            kind,
            inputs,
            outputs,
            intermediates,
        })
    }

    /// Decodes an operator's builtin options into its [`OpKind`].
    fn kind(
        &self,
        code: i32,
        name: &str,
        op: &fb::Operator<'a>,
        resources: &mut Vec<String>,
    ) -> Result<OpKind> {
        use fb::BuiltinOptions as O;
        use opcodes as c;
        let ty = op.builtin_options_type();
        // Checks the options' type tag: NONE (defaults) or the one this operator takes.
        let expect = |want: O| -> Result<bool> {
            if ty == O::NONE {
                Ok(false)
            } else if ty == want {
                Ok(true)
            } else {
                Err(
                    Diagnostic::malformed("the operator carries options of another operator")
                        .expected_found(
                            want.variant_name().unwrap_or("?"),
                            ty.variant_name()
                                .map_or_else(|| format!("options type {}", ty.0), str::to_string),
                        ),
                )
            }
        };
        Ok(match code {
            c::CONV_2D => {
                expect(O::Conv2DOptions)?;
                match op.builtin_options_as_conv_2_doptions() {
                    Some(o) => OpKind::Conv2d(Conv2dOptions {
                        padding: padding(o.padding())?,
                        stride_w: o.stride_w(),
                        stride_h: o.stride_h(),
                        dilation_w: o.dilation_w_factor(),
                        dilation_h: o.dilation_h_factor(),
                        activation: activation(o.fused_activation_function())?,
                    }),
                    None => return Err(missing_options()),
                }
            }
            c::DEPTHWISE_CONV_2D => {
                expect(O::DepthwiseConv2DOptions)?;
                match op.builtin_options_as_depthwise_conv_2_doptions() {
                    Some(o) => OpKind::DepthwiseConv2d(DepthwiseConv2dOptions {
                        padding: padding(o.padding())?,
                        stride_w: o.stride_w(),
                        stride_h: o.stride_h(),
                        depth_multiplier: o.depth_multiplier(),
                        dilation_w: o.dilation_w_factor(),
                        dilation_h: o.dilation_h_factor(),
                        activation: activation(o.fused_activation_function())?,
                    }),
                    None => return Err(missing_options()),
                }
            }
            c::TRANSPOSE_CONV => {
                expect(O::TransposeConvOptions)?;
                match op.builtin_options_as_transpose_conv_options() {
                    Some(o) => OpKind::TransposeConv(TransposeConvOptions {
                        padding: padding(o.padding())?,
                        stride_w: o.stride_w(),
                        stride_h: o.stride_h(),
                        activation: activation(o.fused_activation_function())?,
                    }),
                    None => return Err(missing_options()),
                }
            }
            c::AVERAGE_POOL_2D | c::MAX_POOL_2D | c::L2_POOL_2D => {
                expect(O::Pool2DOptions)?;
                let Some(o) = op.builtin_options_as_pool_2_doptions() else {
                    return Err(missing_options());
                };
                let p = Pool2dOptions {
                    padding: padding(o.padding())?,
                    stride_w: o.stride_w(),
                    stride_h: o.stride_h(),
                    filter_w: o.filter_width(),
                    filter_h: o.filter_height(),
                    activation: activation(o.fused_activation_function())?,
                };
                match code {
                    c::MAX_POOL_2D => OpKind::MaxPool2d(p),
                    c::L2_POOL_2D => OpKind::L2Pool2d(p),
                    _ => OpKind::AveragePool2d(p),
                }
            }
            c::FULLY_CONNECTED => {
                let (act, keep, shuffled) = if expect(O::FullyConnectedOptions)? {
                    let o = op.builtin_options_as_fully_connected_options();
                    let o = o.ok_or_else(missing_options)?;
                    (
                        o.fused_activation_function(),
                        o.keep_num_dims(),
                        o.weights_format() != fb::FullyConnectedOptionsWeightsFormat::DEFAULT,
                    )
                } else {
                    (fb::ActivationFunctionType::NONE, false, false)
                };
                if shuffled {
                    return Err(Diagnostic::unsupported(
                        "shuffled FULLY_CONNECTED weights are not supported",
                    ));
                }
                OpKind::FullyConnected(FullyConnectedOptions {
                    activation: activation(act)?,
                    keep_num_dims: keep,
                })
            }
            c::MEAN | c::SUM | c::REDUCE_MAX | c::REDUCE_MIN | c::REDUCE_ALL => {
                let keep_dims = expect(O::ReducerOptions)?
                    && op
                        .builtin_options_as_reducer_options()
                        .is_some_and(|o| o.keep_dims());
                match code {
                    c::MEAN => OpKind::Mean { keep_dims },
                    c::SUM => OpKind::Sum { keep_dims },
                    c::REDUCE_MAX => OpKind::ReduceMax { keep_dims },
                    c::REDUCE_ALL => OpKind::ReduceAll { keep_dims },
                    _ => OpKind::ReduceMin { keep_dims },
                }
            }
            c::ADD | c::SUB => {
                let o = if code == c::ADD {
                    expect(O::AddOptions)?;
                    op.builtin_options_as_add_options()
                        .map(|o| (o.fused_activation_function(), o.pot_scale_int16()))
                } else {
                    expect(O::SubOptions)?;
                    op.builtin_options_as_sub_options()
                        .map(|o| (o.fused_activation_function(), o.pot_scale_int16()))
                };
                let (act, pot) = o.unwrap_or((fb::ActivationFunctionType::NONE, true));
                let o = AddSubOptions {
                    activation: activation(act)?,
                    pot_scale_int16: pot,
                };
                if code == c::ADD {
                    OpKind::Add(o)
                } else {
                    OpKind::Sub(o)
                }
            }
            c::MUL => {
                expect(O::MulOptions)?;
                let act = op
                    .builtin_options_as_mul_options()
                    .map_or(fb::ActivationFunctionType::NONE, |o| {
                        o.fused_activation_function()
                    });
                OpKind::Mul {
                    activation: activation(act)?,
                }
            }
            c::DIV => {
                expect(O::DivOptions)?;
                let act = op
                    .builtin_options_as_div_options()
                    .map_or(fb::ActivationFunctionType::NONE, |o| {
                        o.fused_activation_function()
                    });
                OpKind::Div {
                    activation: activation(act)?,
                }
            }
            c::MAXIMUM | c::MINIMUM => {
                expect(O::MaximumMinimumOptions)?;
                if code == c::MAXIMUM {
                    OpKind::Maximum
                } else {
                    OpKind::Minimum
                }
            }
            c::SOFTMAX => {
                expect(O::SoftmaxOptions)?;
                let beta = op
                    .builtin_options_as_softmax_options()
                    .map_or(1.0, |o| o.beta());
                OpKind::Softmax { beta }
            }
            c::LOGISTIC => OpKind::Logistic,
            c::TANH => OpKind::Tanh,
            c::RELU => OpKind::Relu,
            c::RELU6 => OpKind::Relu6,
            c::LEAKY_RELU => {
                expect(O::LeakyReluOptions)?;
                let alpha = op
                    .builtin_options_as_leaky_relu_options()
                    .map_or(0.0, |o| o.alpha());
                OpKind::LeakyRelu { alpha }
            }
            c::HARD_SWISH => OpKind::HardSwish,
            c::CONCATENATION => {
                expect(O::ConcatenationOptions)?;
                let o = op.builtin_options_as_concatenation_options();
                let o = o.ok_or_else(missing_options)?;
                OpKind::Concatenation(ConcatenationOptions {
                    axis: o.axis(),
                    activation: activation(o.fused_activation_function())?,
                })
            }
            c::RESHAPE => {
                expect(O::ReshapeOptions)?;
                OpKind::Reshape
            }
            c::SQUEEZE => {
                expect(O::SqueezeOptions)?;
                let dims = op
                    .builtin_options_as_squeeze_options()
                    .and_then(|o| o.squeeze_dims())
                    .map(|v| v.iter().collect())
                    .unwrap_or_default();
                OpKind::Squeeze { dims }
            }
            c::EXPAND_DIMS => OpKind::ExpandDims,
            c::PAD => OpKind::Pad,
            c::PADV2 => OpKind::PadV2,
            c::STRIDED_SLICE => {
                expect(O::StridedSliceOptions)?;
                let o = op.builtin_options_as_strided_slice_options();
                let o = o.ok_or_else(missing_options)?;
                OpKind::StridedSlice(StridedSliceOptions {
                    begin_mask: o.begin_mask(),
                    end_mask: o.end_mask(),
                    ellipsis_mask: o.ellipsis_mask(),
                    new_axis_mask: o.new_axis_mask(),
                    shrink_axis_mask: o.shrink_axis_mask(),
                    offset: o.offset(),
                })
            }
            c::TRANSPOSE => OpKind::Transpose,
            c::RESIZE_NEAREST_NEIGHBOR => {
                expect(O::ResizeNearestNeighborOptions)?;
                let o = op.builtin_options_as_resize_nearest_neighbor_options();
                OpKind::ResizeNearestNeighbor(ResizeOptions {
                    align_corners: o.is_some_and(|o| o.align_corners()),
                    half_pixel_centers: o.is_some_and(|o| o.half_pixel_centers()),
                })
            }
            c::RESIZE_BILINEAR => {
                expect(O::ResizeBilinearOptions)?;
                let o = op.builtin_options_as_resize_bilinear_options();
                OpKind::ResizeBilinear(ResizeOptions {
                    align_corners: o.is_some_and(|o| o.align_corners()),
                    half_pixel_centers: o.is_some_and(|o| o.half_pixel_centers()),
                })
            }
            c::QUANTIZE => OpKind::Quantize,
            c::DEQUANTIZE => OpKind::Dequantize,
            c::CAST => OpKind::Cast,
            c::SVDF => {
                expect(O::SVDFOptions)?;
                let o = op.builtin_options_as_svdfoptions();
                let o = o.ok_or_else(missing_options)?;
                OpKind::Svdf(SvdfOptions {
                    rank: o.rank(),
                    activation: activation(o.fused_activation_function())?,
                    asymmetric_quantize_inputs: o.asymmetric_quantize_inputs(),
                })
            }
            c::UNIDIRECTIONAL_SEQUENCE_LSTM => {
                expect(O::UnidirectionalSequenceLSTMOptions)?;
                let o = op.builtin_options_as_unidirectional_sequence_lstmoptions();
                let o = o.ok_or_else(missing_options)?;
                OpKind::UnidirectionalSequenceLstm(LstmOptions {
                    activation: activation(o.fused_activation_function())?,
                    cell_clip: o.cell_clip(),
                    proj_clip: o.proj_clip(),
                    time_major: o.time_major(),
                    asymmetric_quantize_inputs: o.asymmetric_quantize_inputs(),
                    diagonal_recurrent_tensors: o.diagonal_recurrent_tensors(),
                })
            }
            c::L2_NORMALIZATION => {
                expect(O::L2NormOptions)?;
                let act = op
                    .builtin_options_as_l2_norm_options()
                    .map_or(fb::ActivationFunctionType::NONE, |o| {
                        o.fused_activation_function()
                    });
                OpKind::L2Normalization {
                    activation: activation(act)?,
                }
            }
            c::CUMSUM => {
                expect(O::CumsumOptions)?;
                let o = op.builtin_options_as_cumsum_options();
                OpKind::Cumsum {
                    exclusive: o.is_some_and(|o| o.exclusive()),
                    reverse: o.is_some_and(|o| o.reverse()),
                }
            }
            c::GATHER => {
                expect(O::GatherOptions)?;
                let o = op.builtin_options_as_gather_options();
                OpKind::Gather {
                    axis: o.map_or(0, |o| o.axis()),
                    batch_dims: o.map_or(0, |o| o.batch_dims()),
                }
            }
            c::SPLIT => {
                expect(O::SplitOptions)?;
                let o = op.builtin_options_as_split_options();
                OpKind::Split {
                    num_splits: o.ok_or_else(missing_options)?.num_splits(),
                }
            }
            c::SPLIT_V => {
                expect(O::SplitVOptions)?;
                let o = op.builtin_options_as_split_voptions();
                OpKind::SplitV {
                    num_splits: o.ok_or_else(missing_options)?.num_splits(),
                }
            }
            c::PACK => {
                expect(O::PackOptions)?;
                let o = op.builtin_options_as_pack_options();
                let o = o.ok_or_else(missing_options)?;
                OpKind::Pack {
                    values_count: o.values_count(),
                    axis: o.axis(),
                }
            }
            c::UNPACK => {
                expect(O::UnpackOptions)?;
                let o = op.builtin_options_as_unpack_options();
                let o = o.ok_or_else(missing_options)?;
                OpKind::Unpack {
                    num: o.num(),
                    axis: o.axis(),
                }
            }
            c::SPACE_TO_DEPTH => {
                expect(O::SpaceToDepthOptions)?;
                let o = op.builtin_options_as_space_to_depth_options();
                OpKind::SpaceToDepth {
                    block_size: o.ok_or_else(missing_options)?.block_size(),
                }
            }
            c::DEPTH_TO_SPACE => {
                expect(O::DepthToSpaceOptions)?;
                let o = op.builtin_options_as_depth_to_space_options();
                OpKind::DepthToSpace {
                    block_size: o.ok_or_else(missing_options)?.block_size(),
                }
            }
            c::MIRROR_PAD => {
                expect(O::MirrorPadOptions)?;
                let mode = op
                    .builtin_options_as_mirror_pad_options()
                    .map_or(fb::MirrorPadMode::REFLECT, |o| o.mode());
                OpKind::MirrorPad {
                    symmetric: match mode {
                        fb::MirrorPadMode::REFLECT => false,
                        fb::MirrorPadMode::SYMMETRIC => true,
                        m => {
                            return Err(Diagnostic::malformed("unknown MIRROR_PAD mode")
                                .expected_found("REFLECT or SYMMETRIC", m.0.to_string()));
                        }
                    },
                }
            }
            c::BATCH_MATMUL => {
                expect(O::BatchMatMulOptions)?;
                let o = op.builtin_options_as_batch_mat_mul_options();
                OpKind::BatchMatMul {
                    adj_x: o.is_some_and(|o| o.adj_x()),
                    adj_y: o.is_some_and(|o| o.adj_y()),
                    asymmetric_quantize_inputs: o.is_some_and(|o| o.asymmetric_quantize_inputs()),
                }
            }
            c::IF => {
                expect(O::IfOptions)?;
                let o = op
                    .builtin_options_as_if_options()
                    .ok_or_else(missing_options)?;
                OpKind::If {
                    then_subgraph: subgraph_index("then_subgraph_index", o.then_subgraph_index())?,
                    else_subgraph: subgraph_index("else_subgraph_index", o.else_subgraph_index())?,
                }
            }
            c::WHILE => {
                expect(O::WhileOptions)?;
                let o = op
                    .builtin_options_as_while_options()
                    .ok_or_else(missing_options)?;
                OpKind::While {
                    cond_subgraph: subgraph_index("cond_subgraph_index", o.cond_subgraph_index())?,
                    body_subgraph: subgraph_index("body_subgraph_index", o.body_subgraph_index())?,
                }
            }
            c::CALL_ONCE => {
                expect(O::CallOnceOptions)?;
                let o = op
                    .builtin_options_as_call_once_options()
                    .ok_or_else(missing_options)?;
                OpKind::CallOnce {
                    init_subgraph: subgraph_index("init_subgraph_index", o.init_subgraph_index())?,
                }
            }
            c::VAR_HANDLE => {
                expect(O::VarHandleOptions)?;
                let o = op.builtin_options_as_var_handle_options();
                let name = format!(
                    "{}/{}",
                    o.and_then(|o| o.container()).unwrap_or(""),
                    o.and_then(|o| o.shared_name()).unwrap_or("")
                );
                let resource = match resources.iter().position(|r| *r == name) {
                    Some(r) => r,
                    None => {
                        resources.push(name);
                        resources.len() - 1
                    }
                };
                OpKind::VarHandle { resource }
            }
            // The variable is resolved from the handle's VAR_HANDLE by `control`.
            c::READ_VARIABLE => OpKind::ReadVariable {
                resource: usize::MAX,
            },
            c::ASSIGN_VARIABLE => OpKind::AssignVariable {
                resource: usize::MAX,
            },
            _ => OpKind::Other {
                name: name.to_string(),
            },
        })
    }
}

/// A subgraph index of a control flow operator's options (checked against the model's
/// subgraphs by `control::check_calls`).
fn subgraph_index(what: &str, i: i32) -> Result<usize> {
    usize::try_from(i).map_err(|_| {
        Diagnostic::malformed(format!("the operator's {what} is negative"))
            .expected_found("a subgraph index >= 1", i.to_string())
    })
}

fn missing_options() -> Diagnostic {
    Diagnostic::malformed("the operator's options are missing")
}

/// An entry of the model's operator-code table.
enum OpCode {
    Builtin(i32, &'static str),
    Custom(String),
}

impl OpCode {
    fn name(&self) -> &str {
        match self {
            OpCode::Builtin(_, n) => n,
            OpCode::Custom(n) => n,
        }
    }
}

#[cfg(test)]
mod misaligned_tests;
#[cfg(test)]
mod tests;
