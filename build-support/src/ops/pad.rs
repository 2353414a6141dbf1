//! PAD and PADV2: int8, int16, int32 and float32 (TFLM's types) with a constant pad value
//! (`kiln_kernels::pad`). Without a value input TFLM pads int8 with the output zero point and
//! int16, int32 and float32 with 0 (int16 with `0`, not its zero point, as TFLM's `Eval`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, kernel_fn, prepare_error, unsupported};
use kiln_kernels::pad;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// The generic kernel with the value it pads with (its element type is the tensors'), and
/// whether it is TFLM's element-by-element loop (`reference_kernels`: `pad_reference`).
#[derive(Debug)]
struct Pad(pad::Params, PadValue, bool);

/// The value PAD fills with.
#[derive(Clone, Copy, Debug, PartialEq)]
enum PadValue {
    I8(i8),
    I16(i16),
    I32(i32),
    F32(f32),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, paddings, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let values: Vec<i64> = match cx.dtype(paddings) {
        DType::I32 => cx.const_i32(paddings)?.into_iter().map(i64::from).collect(),
        DType::I64 => cx
            .need_constant(paddings)?
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
        other => {
            return Err(unsupported("PAD's paddings must be INT32 or INT64")
                .expected_found("INT32 or INT64", other.name()));
        }
    };
    let mut pairs: Vec<[usize; 2]> = values
        .chunks_exact(2)
        .map(|c| {
            Ok([
                usize::try_from(c[0]).map_err(|_| unsupported("negative padding"))?,
                usize::try_from(c[1]).map_err(|_| unsupported("negative padding"))?,
            ])
        })
        .collect::<Result<_>>()?;
    // Where the graph was tiled, the rows (and columns) padded around this strip (patch).
    if let [_, rows, cols, _] = &mut pairs[..] {
        cx.strip_pad(1, rows)?;
        cx.strip_pad(2, cols)?;
    }
    let p = pad::prepare(&cx.tensor(input).shape, &pairs).map_err(prepare_error)?;
    // `prepare` refuses inputs of rank above 5; the output keeps the input's rank.
    let rank = cx.tensor(input).shape.len();
    cx.check_shape(output, &p.output_dims[5 - rank..])?;
    let value = cx.op.input(2);
    // The value's first element as little-endian bytes of the output's type (TFLM reads the
    // value tensor's first element).
    let first = |n: usize| -> Result<Option<Vec<u8>>> {
        let Some(v) = value else { return Ok(None) };
        if cx.dtype(v) != cx.dtype(output) {
            return Err(unsupported("PADV2's value must have the output's type")
                .at_tensor(v.0, cx.tensor(v).name.clone())
                .expected_found(cx.dtype(output).name(), cx.dtype(v).name()));
        }
        let d = cx.need_constant(v)?;
        Ok(Some(d.get(..n).map_or(vec![0; n], <[u8]>::to_vec)))
    };
    let pad_value = match cx.dtype(output) {
        DType::I8 => PadValue::I8(match first(1)? {
            Some(b) => b[0] as i8,
            None => cx.quant(output)?.zero_point as i8,
        }),
        DType::I16 => PadValue::I16(first(2)?.map_or(0, |b| i16::from_le_bytes([b[0], b[1]]))),
        DType::I32 => {
            PadValue::I32(first(4)?.map_or(0, |b| i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        }
        DType::F32 => {
            PadValue::F32(first(4)?.map_or(0.0, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        }
        other => {
            return Err(unsupported("unsupported type for PAD")
                .expected_found("INT8, INT16, INT32 or FLOAT32", other.name()));
        }
    };
    if cx.dtype(input) != cx.dtype(output) {
        return Err(unsupported("PAD keeps the type")
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found(cx.dtype(output).name(), cx.dtype(input).name()));
    }
    let reference = !cx.fast_kernels();
    Ok(cx.step(
        Pad(p, pad_value, reference),
        vec![Operand::Tensor(input)],
        output,
    ))
}

impl Kernel for Pad {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let p = call.params("pad", &self.0);
        let v = match self.1 {
            PadValue::I8(v) => quote!(#v),
            PadValue::I16(v) => quote!(#v),
            PadValue::I32(v) => quote!(#v),
            PadValue::F32(v) => {
                let v = Literal::f32_suffixed(v);
                quote!(#v)
            }
        };
        let f = kernel_fn("pad", if self.2 { "pad_reference" } else { "pad" });
        let (x, out) = (call.input(0), call.output());
        Ok(quote!(#f(#p, #x, #v, #out);))
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        macro_rules! run {
            ($f:ident) => {
                match self.1 {
                    PadValue::I8(v) => pad::$f(&self.0, io.i8(0), v, io.out_i8()),
                    PadValue::I16(v) => pad::$f(&self.0, io.i16(0), v, io.out_i16()),
                    PadValue::I32(v) => pad::$f(&self.0, io.i32(0), v, io.out_i32()),
                    PadValue::F32(v) => pad::$f(&self.0, io.f32(0), v, io.out_f32()),
                }
            };
        }
        if self.2 {
            run!(pad_reference)
        } else {
            run!(pad)
        }
    }
}
