//! Operators that write values rather than move their input's (`kiln_kernels::fill`):
//!
//! - FILL: the scalar value input (runtime or constant) repeated; float32, int32, int8, the
//!   types TFLM's kernel has. The dims input must be a constant equal to the output's shape
//!   (TFLM's check): the pinned wheel refuses a runtime dims tensor in `Prepare` ("Non-constant
//!   dims tensor is not supported"), so Kiln does too, although the output's static shape
//!   would decide the result.
//! - ZEROS_LIKE: zeros of the input's type (int64, int32, int8, float32, as TFLM; int8 is
//!   `0`, not the zero point, as TFLM writes).
//! - SHAPE: the input's shape as INT32 (TFLM's kernel writes no other type).
//! - BROADCAST_ARGS: the broadcast of two INT32 or INT64 shapes. Constant shapes: the result
//!   is computed at build time (shapes that do not broadcast are refused: TFLM aborts); runtime
//!   ones: the kernel computes it as TFLM does.
//!
//! SHAPE and BROADCAST_ARGS on constants are known at build time; they are still ordinary
//! kernels that write the values into their output tensor (a constant table copied), so the
//! graph's tensors hold them as in TFLM.

use super::broadcast_to::const_ints;
use super::movement::{Width, same_type};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, kernel_fn, unsupported};
#[cfg(feature = "exec")]
use kiln_kernels::fill;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;
use quote::quote;

/// FILL's kernel (`fill::fill` from the value operand).
#[derive(Debug)]
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct Fill(Width);

/// ZEROS_LIKE's kernel.
#[derive(Debug)]
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct ZerosLike(Width);

/// Build-time values written into the output (SHAPE, constant BROADCAST_ARGS).
#[derive(Debug)]
enum Values {
    I32(Vec<i32>),
    I64(Vec<i64>),
}

/// BROADCAST_ARGS on runtime shapes.
#[derive(Debug)]
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct BroadcastArgs(Width);

pub(super) fn lower_fill(cx: &Cx<'_>) -> Result<Step> {
    let (dims, value, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let (_, w) = same_type(cx, value, output, &[DType::F32, DType::I32, DType::I8])?;
    let vt = cx.tensor(value);
    if !vt.shape.is_empty() {
        return Err(unsupported("FILL's value must be a scalar")
            .at_tensor(value.0, vt.name.clone())
            .expected_found("rank 0", format!("shape {:?}", vt.shape)));
    }
    let dt = cx.tensor(dims);
    if !dt.is_constant() {
        return Err(unsupported(
            "FILL's dims must be a constant (TFLM refuses a runtime dims tensor)",
        )
        .at_tensor(dims.0, dt.name.clone()));
    }
    {
        let out: Vec<i64> = cx.tensor(output).shape.iter().map(|&d| d as i64).collect();
        let values: Vec<i64> = match dt.dtype {
            DType::I8 => dt
                .data()
                .unwrap_or(&[])
                .iter()
                .map(|&b| b as i8 as i64)
                .collect(),
            DType::I16 => dt
                .data()
                .unwrap_or(&[])
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]) as i64)
                .collect(),
            _ => const_ints(cx, dims, "dims")?.unwrap_or_default(),
        };
        if dt.shape.len() != 1 || values != out {
            return Err(unsupported("FILL's dims differ from the output's shape")
                .at_tensor(dims.0, dt.name.clone())
                .expected_found(format!("{out:?}"), format!("{values:?}")));
        }
    }
    Ok(cx.step(Fill(w), vec![Operand::Tensor(value)], output))
}

pub(super) fn lower_zeros_like(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    let types = [DType::I64, DType::I32, DType::I8, DType::F32];
    let (_, w) = same_type(cx, input, output, &types)?;
    cx.check_shape(output, &cx.tensor(input).shape.clone())?;
    Ok(cx.step(ZerosLike(w), vec![Operand::Tensor(input)], output))
}

pub(super) fn lower_shape(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    if cx.dtype(output) != DType::I32 {
        return Err(
            unsupported("SHAPE's output must be INT32 (TFLM's kernel writes no other)")
                .at_tensor(output.0, cx.tensor(output).name.clone())
                .expected_found("INT32", cx.dtype(output).name()),
        );
    }
    let shape = &cx.tensor(input).shape;
    cx.check_shape(output, &[shape.len()])?;
    let values = shape
        .iter()
        .map(|&d| i32::try_from(d).map_err(|_| unsupported("a dimension does not fit in INT32")))
        .collect::<Result<Vec<i32>>>()?;
    Ok(cx.step(Values::I32(values), vec![Operand::Tensor(input)], output))
}

pub(super) fn lower_broadcast_args(cx: &Cx<'_>) -> Result<Step> {
    let (a, b, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let (dtype, w) = same_type(cx, a, output, &[DType::I32, DType::I64])?;
    same_type(cx, b, output, &[DType::I32, DType::I64])?;
    for t in [a, b, output] {
        let s = &cx.tensor(t).shape;
        if s.len() != 1 {
            return Err(unsupported("BROADCAST_ARGS' shapes must be 1-D")
                .at_tensor(t.0, cx.tensor(t).name.clone())
                .expected_found("rank 1", format!("shape {s:?}")));
        }
    }
    let n = cx.tensor(output).shape[0];
    let (va, vb) = (const_ints(cx, a, "shape")?, const_ints(cx, b, "shape")?);
    let (Some(va), Some(vb)) = (va, vb) else {
        return Ok(cx.step(
            BroadcastArgs(w),
            vec![Operand::Tensor(a), Operand::Tensor(b)],
            output,
        ));
    };
    // TFLM writes 1 past both shapes' length; a constant result longer than both is refused
    // (no model has one, and it bounds the table by the model's own constants).
    if n > va.len().max(vb.len()) {
        return Err(
            unsupported("the output is longer than both constant shapes")
                .at_tensor(output.0, cx.tensor(output).name.clone())
                .expected_found(
                    format!("at most {} elements", va.len().max(vb.len())),
                    format!("{n}"),
                ),
        );
    }
    // TFLM compares and writes the extents as 32-bit ints.
    let at = |s: &[i64], i: usize| s.len().checked_sub(1 + i).map_or(1, |j| s[j] as i32);
    let mut out = vec![0i64; n];
    for i in 0..n {
        let (x, y) = (at(&va, i), at(&vb, i));
        if x != 1 && y != 1 && x != y {
            return Err(unsupported("the shapes do not broadcast (TFLM aborts)")
                .at_tensor(b.0, cx.tensor(b).name.clone())
                .expected_found(format!("1 or {x}"), y.to_string()));
        }
        out[n - 1 - i] = i64::from(if x == 1 { y } else { x });
    }
    let values = match dtype {
        DType::I32 => Values::I32(out.iter().map(|&v| v as i32).collect()),
        _ => Values::I64(out),
    };
    Ok(cx.step(values, vec![Operand::Tensor(a)], output))
}

impl Kernel for Fill {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        call.standard("fill", "fill", &[])
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        super::movement::by_width!(self.0, io, |x, o| fill::fill(x, o))
    }
}

impl Kernel for ZerosLike {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        call.standard("fill", "zeros_like", &[])
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        super::movement::by_width!(self.0, io, |x, o| fill::zeros_like(x, o))
    }
}

impl Kernel for Values {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let table = match self {
            Values::I32(v) => call.table("VALUES", v),
            Values::I64(v) => call.table("VALUES", v),
        };
        let f = kernel_fn("fill", "write");
        let (x, out) = (call.input(0), call.output());
        Ok(quote!(#f(#table, #x, #out);))
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let x = io.u8(0);
        match self {
            Values::I32(v) => fill::write(v, x, io.out_i32()),
            Values::I64(v) => fill::write(v, x, io.out_i64()),
        }
    }
}

impl Kernel for BroadcastArgs {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        call.standard("fill", "broadcast_args", &[])
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self.0 {
            Width::W4 => fill::broadcast_args(io.i32(0), io.i32(1), io.out_i32()),
            _ => fill::broadcast_args(io.i64(0), io.i64(1), io.out_i64()),
        }
    }
}
