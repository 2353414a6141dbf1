//! The reader's tensors: each tensor of a subgraph checked (type, shape, size within a
//! 32-bit address space, name) with its quantization (scales and zero points within their
//! types, per-channel axes) and its buffer's bytes (bounds, size against the shape).

use super::Reader;
use super::tflite_generated::tflite as fb;
use crate::diag::{Diagnostic, Result};
use crate::ir::*;

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

impl<'a> Reader<'a> {
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

    pub(super) fn tensors(&self, sg: &fb::SubGraph<'a>) -> Result<Vec<Tensor>> {
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
}
