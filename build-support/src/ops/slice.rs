//! SLICE with constant begin and size (INT32 or INT64): float32, int8, uint8, int16, int32
//! and bool (`kiln_kernels::slice`, STRIDED_SLICE's loops). With a runtime begin or size only an
//! output as large as the input is accepted (then the box is the whole input).

use crate::op::{Call, Cx, Elem, Kernel, Operand, Step, prepare_error, unsupported};
#[cfg(feature = "exec")]
use crate::op::{Io, Slices, SlicesMut, unary_generic};
use kiln_kernels::{slice, strided_slice};
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, TensorId};
use proc_macro2::TokenStream;

/// The generic kernel (bool runs as bytes on the host).
#[derive(Debug)]
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct Slice(strided_slice::Params, Elem);

/// A constant INT32 or INT64 vector.
fn const_ints(cx: &Cx<'_>, t: TensorId) -> Result<Option<Vec<i64>>> {
    let tensor = cx.tensor(t);
    let Some(data) = tensor.data() else {
        return Ok(None);
    };
    Ok(Some(match tensor.dtype {
        DType::I32 => data
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64)
            .collect(),
        DType::I64 => data
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
        other => {
            return Err(unsupported("SLICE's begin and size must be INT32 or INT64")
                .at_tensor(t.0, tensor.name.clone())
                .expected_found("INT32 or INT64", other.name()));
        }
    }))
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    if cx.op.inputs.len() != 3 {
        return Err(unsupported("SLICE needs three inputs (input, begin, size)"));
    }
    let (input, begin, size, output) = (cx.input(0)?, cx.input(1)?, cx.input(2)?, cx.output()?);
    let dtype = cx.dtype(input);
    let e = match dtype {
        DType::F32 => Elem::F32,
        DType::I8 | DType::U8 | DType::Bool => Elem::I8,
        DType::I16 => Elem::I16,
        DType::I32 => Elem::I32,
        other => {
            return Err(unsupported("unsupported type for SLICE")
                .expected_found("FLOAT32, INT8, UINT8, INT16, INT32 or BOOL", other.name()));
        }
    };
    if cx.dtype(output) != dtype {
        return Err(unsupported("SLICE keeps the type")
            .expected_found(dtype.name(), cx.dtype(output).name()));
    }
    if cx.dtype(begin) != cx.dtype(size) {
        return Err(unsupported("SLICE's begin and size must have one type")
            .expected_found(cx.dtype(begin).name(), cx.dtype(size).name()));
    }
    let shape = &cx.tensor(input).shape;
    let (b, s) = match (const_ints(cx, begin)?, const_ints(cx, size)?) {
        (Some(b), Some(s)) => (b, s),
        _ if cx.tensor(output).shape == *shape => (vec![0; shape.len()], vec![-1; shape.len()]),
        _ => {
            return Err(unsupported(
                "SLICE's begin and size are not constants and the output is smaller than the \
                 input: the static shapes do not determine the box",
            ));
        }
    };
    let p = slice::prepare(shape, &b, &s).map_err(|e| {
        prepare_error(e).expected_found(
            "0 <= begin <= dim, 0 <= size <= dim - begin (or -1), rank 1..=5",
            format!("input {shape:?}, begin {b:?}, size {s:?}"),
        )
    })?;
    cx.check_elements(output, p.output_size())?;
    let view = contiguous_offset(shape, &b, &s).map(|at| (0, vec![at * dtype.size()]));
    let mut step = cx.step(Slice(p, e), vec![Operand::Tensor(input)], output);
    step.abilities.split_slices = view;
    Ok(step)
}

/// The element offset of the box `begin`/`size` (a size of -1: to the end) in the input, if
/// its elements are contiguous there: every axis after the last partial one is whole and
/// every axis before it has extent 1. The planner may then make the output a view.
fn contiguous_offset(shape: &[usize], begin: &[i64], size: &[i64]) -> Option<usize> {
    let mut boxes = Vec::with_capacity(shape.len());
    for ((&d, &b), &s) in shape.iter().zip(begin).zip(size) {
        let b = usize::try_from(b).ok()?;
        let e = if s < 0 {
            d.checked_sub(b)?
        } else {
            usize::try_from(s).ok()?
        };
        boxes.push((b, e));
    }
    let partial = (0..shape.len()).rev().find(|&i| boxes[i] != (0, shape[i]));
    if let Some(k) = partial
        && boxes[..k].iter().any(|&(_, e)| e != 1)
    {
        return None;
    }
    let mut at = 0usize;
    for (i, &(b, _)) in boxes.iter().enumerate() {
        let stride: usize = shape[i + 1..].iter().product();
        at = at.checked_add(b.checked_mul(stride)?)?;
    }
    Some(at)
}

impl Kernel for Slice {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("strided_slice", &self.0)];
        call.standard("slice", "slice", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let (x, p) = (io.input(0), &self.0);
        unary_generic(self.1, x, io.out(), |x, o| match (x, o) {
            (Slices::I8(x), SlicesMut::I8(o)) => slice::slice(p, x, o),
            (Slices::I16(x), SlicesMut::I16(o)) => slice::slice(p, x, o),
            (Slices::I32(x), SlicesMut::I32(o)) => slice::slice(p, x, o),
            (Slices::F32(x), SlicesMut::F32(o)) => slice::slice(p, x, o),
            _ => unreachable!("one element type"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::contiguous_offset;

    #[test]
    fn contiguous_boxes_are_views_at_their_offset() {
        // Rows 1..3 of a [4, 5] tensor: elements 5..15.
        assert_eq!(contiguous_offset(&[4, 5], &[1, 0], &[2, -1]), Some(5));
        // One row of the second plane of [2, 3, 4]: extent 1 before the partial axis.
        assert_eq!(
            contiguous_offset(&[2, 3, 4], &[1, 2, 0], &[1, 1, 4]),
            Some(20)
        );
        // The whole input.
        assert_eq!(contiguous_offset(&[2, 3], &[0, 0], &[-1, 3]), Some(0));
        // Part of a row of an inner axis with more than one outer row: not contiguous.
        assert_eq!(contiguous_offset(&[2, 3], &[0, 1], &[2, 2]), None);
        assert_eq!(contiguous_offset(&[2, 3], &[0, 0], &[2, 2]), None);
        // A partial inner axis after one outer row is contiguous.
        assert_eq!(contiguous_offset(&[2, 3], &[1, 1], &[1, 2]), Some(4));
    }
}
