//! SLICE with constant begin and size (INT32 or INT64): float32, int8, int16, int32 and
//! bool (`kiln_kernels::slice`, STRIDED_SLICE's loops). With a runtime begin or size only an
//! output as large as the input is accepted (then the box is the whole input).

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::{Io, Slices, SlicesMut, unary_generic};
use crate::lower::{Cx, Elem, Kernel, Operand, Step, prepare_error, unsupported};
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
        DType::I8 | DType::Bool => Elem::I8,
        DType::I16 => Elem::I16,
        DType::I32 => Elem::I32,
        other => {
            return Err(unsupported("unsupported type for SLICE")
                .expected_found("FLOAT32, INT8, INT16, INT32 or BOOL", other.name()));
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
    Ok(cx.step(Slice(p, e), vec![Operand::Tensor(input)], output))
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
