//! GATHER, GATHER_ND (float32, int8 params; int32 indices) and EMBEDDING_LOOKUP (float32,
//! int8, and the hybrid int8 -> float32), on `kiln_kernels::gather`.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, types, unsupported};
use kiln_kernels::gather as k;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind, TensorId};
use proc_macro2::TokenStream;

/// The kernels (generic over the element type; `float` picks the host executor's instance).
#[derive(Debug)]
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
enum Indexed {
    Gather { p: k::Params, float: bool },
    Nd { p: k::NdParams, float: bool },
    Embedding { p: k::Params, float: bool },
    Hybrid { p: k::Params, scale: f32 },
}

fn check_inputs(cx: &Cx<'_>, n: usize) -> Result<()> {
    if cx.op.inputs.len() != n {
        return Err(unsupported(format!("the operator must have {n} inputs"))
            .expected_found(format!("{n} inputs"), format!("{}", cx.op.inputs.len())));
    }
    Ok(())
}

fn need_i32(cx: &Cx<'_>, t: TensorId, what: &str) -> Result<()> {
    if cx.dtype(t) != DType::I32 {
        let tensor = cx.tensor(t);
        return Err(unsupported(format!("TFLM takes only INT32 {what}"))
            .at_tensor(t.0, tensor.name.clone())
            .expected_found("INT32", tensor.dtype.name()));
    }
    Ok(())
}

/// Whether the params/output type pair is float32 (else int8); TFLM runs no others.
fn same_type(cx: &Cx<'_>, input: TensorId, output: TensorId, op: &str) -> Result<bool> {
    match (cx.dtype(input), cx.dtype(output)) {
        (DType::F32, DType::F32) => Ok(true),
        (DType::I8, DType::I8) => Ok(false),
        (a, b) => Err(
            unsupported(format!("unsupported types for {op}")).expected_found(
                "FLOAT32 or INT8 (the same for input and output)",
                types(a, b),
            ),
        ),
    }
}

pub(super) fn lower_gather(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Gather { axis, batch_dims } = cx.op.kind else {
        unreachable!("registered for GATHER")
    };
    check_inputs(cx, 2)?;
    let (input, positions, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    need_i32(cx, positions, "positions")?;
    let float = same_type(cx, input, output, "GATHER")?;
    let (shape, pshape) = (&cx.tensor(input).shape, &cx.tensor(positions).shape);
    let p = k::prepare(shape, pshape, axis, batch_dims).ok_or_else(|| {
        unsupported("GATHER's axis or batch_dims do not fit the shapes").expected_found(
            "0 <= batch_dims <= axis < rank, leading dims of input and positions equal",
            format!("axis {axis}, batch_dims {batch_dims}, input {shape:?}, positions {pshape:?}"),
        )
    })?;
    let rank = shape.len() as i32;
    let a = if axis < 0 { axis + rank } else { axis } as usize;
    let bd = if batch_dims < 0 {
        batch_dims + pshape.len() as i32
    } else {
        batch_dims
    } as usize;
    let mut want = shape[..a].to_vec();
    want.extend_from_slice(&pshape[bd..]);
    want.extend_from_slice(&shape[a + 1..]);
    cx.check_shape(output, &want)?;
    let ops = vec![Operand::Tensor(input), Operand::Tensor(positions)];
    Ok(cx.step(Indexed::Gather { p, float }, ops, output))
}

pub(super) fn lower_gather_nd(cx: &Cx<'_>) -> Result<Step> {
    check_inputs(cx, 2)?;
    let (params, indices, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    need_i32(cx, indices, "indices")?;
    let float = same_type(cx, params, output, "GATHER_ND")?;
    let (shape, ishape) = (&cx.tensor(params).shape, &cx.tensor(indices).shape);
    let p = k::prepare_nd(shape, ishape).ok_or_else(|| {
        unsupported("GATHER_ND's indices do not fit the params").expected_found(
            "indices of rank >= 1 whose last dim is 1..=min(5, params rank)",
            format!("params {shape:?}, indices {ishape:?}"),
        )
    })?;
    let mut want = ishape[..ishape.len() - 1].to_vec();
    want.extend_from_slice(&shape[p.nd..]);
    cx.check_shape(output, &want)?;
    let ops = vec![Operand::Tensor(params), Operand::Tensor(indices)];
    Ok(cx.step(Indexed::Nd { p, float }, ops, output))
}

pub(super) fn lower_embedding_lookup(cx: &Cx<'_>) -> Result<Step> {
    check_inputs(cx, 2)?;
    let (ids, value, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    need_i32(cx, ids, "lookup ids")?;
    let (ishape, vshape) = (&cx.tensor(ids).shape, &cx.tensor(value).shape);
    if ishape.len() != 1 || vshape.len() < 2 {
        return Err(
            unsupported("EMBEDDING_LOOKUP needs 1-D ids and a value tensor of rank >= 2")
                .expected_found(
                    "ids rank 1, value rank >= 2",
                    format!("ids {ishape:?}, value {vshape:?}"),
                ),
        );
    }
    let p = k::prepare(vshape, ishape, 0, 0)
        .ok_or_else(|| unsupported("EMBEDDING_LOOKUP's shapes do not fit"))?;
    let mut want = vec![ishape[0]];
    want.extend_from_slice(&vshape[1..]);
    cx.check_shape(output, &want)?;
    let kernel = match (cx.dtype(value), cx.dtype(output)) {
        (DType::F32, DType::F32) => Indexed::Embedding { p, float: true },
        (DType::I8, DType::I8) => Indexed::Embedding { p, float: false },
        (DType::I8, DType::F32) => {
            let q = cx.quant(value)?;
            if q.zero_point != 0 {
                let t = cx.tensor(value);
                return Err(unsupported(
                    "the hybrid EMBEDDING_LOOKUP needs a zero point of 0 (TFLM)",
                )
                .at_tensor(value.0, t.name.clone())
                .expected_found("0", q.zero_point.to_string()));
            }
            Indexed::Hybrid { p, scale: q.scale }
        }
        (a, b) => {
            return Err(
                unsupported("unsupported types for EMBEDDING_LOOKUP").expected_found(
                    "FLOAT32 -> FLOAT32, INT8 -> INT8 or INT8 -> FLOAT32",
                    types(a, b),
                ),
            );
        }
    };
    let ops = vec![Operand::Tensor(ids), Operand::Tensor(value)];
    Ok(cx.step(kernel, ops, output))
}

impl Kernel for Indexed {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let ty = |name: &str| {
            let n = proc_macro2::Ident::new(name, proc_macro2::Span::call_site());
            quote::quote!(::kiln::kernels::gather::#n)
        };
        match self {
            Indexed::Gather { p, .. } => {
                let pre = [call.params("gather", p)];
                call.standard("gather", "gather", &pre)
            }
            Indexed::Nd { p, .. } => {
                let pre = [call.params_as(ty("NdParams"), p)];
                call.standard("gather", "gather_nd", &pre)
            }
            Indexed::Embedding { p, .. } => {
                let pre = [call.params("gather", p)];
                call.standard("gather", "embedding_lookup", &pre)
            }
            Indexed::Hybrid { p, scale } => {
                let scale = proc_macro2::Literal::f32_suffixed(*scale);
                let pre = [call.params("gather", p), quote::quote!(#scale)];
                call.standard("gather", "embedding_lookup_hybrid", &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match *self {
            Indexed::Gather { ref p, float: true } => {
                k::gather(p, io.f32(0), io.i32(1), io.out_f32())
            }
            Indexed::Gather {
                ref p,
                float: false,
            } => k::gather(p, io.i8(0), io.i32(1), io.out_i8()),
            Indexed::Nd { ref p, float: true } => {
                k::gather_nd(p, io.f32(0), io.i32(1), io.out_f32())
            }
            Indexed::Nd {
                ref p,
                float: false,
            } => k::gather_nd(p, io.i8(0), io.i32(1), io.out_i8()),
            Indexed::Embedding { ref p, float: true } => {
                k::embedding_lookup(p, io.i32(0), io.f32(1), io.out_f32())
            }
            Indexed::Embedding {
                ref p,
                float: false,
            } => k::embedding_lookup(p, io.i32(0), io.i8(1), io.out_i8()),
            Indexed::Hybrid { ref p, scale } => {
                k::embedding_lookup_hybrid(p, scale, io.i32(0), io.i8(1), io.out_f32())
            }
        }
    }
}
