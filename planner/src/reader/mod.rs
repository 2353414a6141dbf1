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
mod options;
mod tensors;
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
