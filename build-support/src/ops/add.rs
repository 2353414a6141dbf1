//! ADD: int8 (the fast kernels where `add::prepare_fast_s8` accepts the layer, else the
//! reference; with both inputs' rescaling in build-time tables from
//! `add::TABLES_FROM_ELEMENTS` elements on), int16, int32 and float32, broadcasting or not; without
//! broadcasting it runs in place over either input (`kiln_kernels::add`).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, activation, prepare_error, unsupported};
use kiln_kernels::add;
use kiln_kernels::broadcast::Broadcast;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels, by type; `None`: the inputs have the output's shape.
#[derive(Debug)]
enum Add {
    S8(add::Params, Option<Broadcast>),
    /// Same-shape int8 ADD with both inputs' rescaling precomputed in two 256-entry tables.
    S8Tables(add::Params, Vec<i32>, Vec<i32>),
    /// Int8 on the fast element function (`add_s8_fast`, `add_broadcast_s8_fast`).
    S8Fast(add::FastParams, Option<Broadcast>),
    /// Same-shape fast int8 ADD with the inputs' rescaling in two 256-entry tables.
    S8FastTables(add::FastParams, Vec<i32>, Vec<i32>),
    S16(add::Params, Option<Broadcast>),
    /// Int32 (no quantization; wrapping sums; the wheel applies no fused activation).
    S32(add::Params, Option<Broadcast>),
    F32(add::Params, Option<Broadcast>),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Add(o) = &cx.op.kind else {
        unreachable!("registered for ADD")
    };
    let (a, b, output, broadcast) = cx.binary_operands()?;
    let act = activation(o.activation);
    let kernel = match cx.dtype(output) {
        DType::I8 => {
            let p = add::prepare_s8(cx.quant(a)?, cx.quant(b)?, cx.quant(output)?, act)
                .map_err(prepare_error)?;
            // `reference_kernels`: TFLM's loop (`add_s8`), no fast form or tables.
            let fast = cx.fast_kernels();
            let tables = fast
                && broadcast.is_none()
                && cx.tensor(output).elements() >= add::TABLES_FROM_ELEMENTS;
            match (prepare_fast_s8(&p).filter(|_| fast), tables) {
                (Some(f), true) => {
                    let (mut t1, mut t2) = ([0; 256], [0; 256]);
                    add::fast_tables_s8(&f, &mut t1, &mut t2);
                    Add::S8FastTables(f, t1.to_vec(), t2.to_vec())
                }
                (Some(f), false) => Add::S8Fast(f, broadcast),
                (None, true) => {
                    let (mut t1, mut t2) = ([0; 256], [0; 256]);
                    add::rescale_tables_s8(&p, &mut t1, &mut t2);
                    Add::S8Tables(p, t1.to_vec(), t2.to_vec())
                }
                (None, false) => Add::S8(p, broadcast),
            }
        }
        DType::I16 => Add::S16(
            add::prepare_s16(cx.quant(a)?, cx.quant(b)?, cx.quant(output)?, act)
                .map_err(prepare_error)?,
            broadcast,
        ),
        DType::F32 => Add::F32(add::prepare_f32(act), broadcast),
        DType::I32 => Add::S32(add::prepare_s32(), broadcast),
        other => {
            return Err(unsupported("unsupported type for this operator")
                .expected_found("INT8, INT16, INT32 or FLOAT32", other.name()));
        }
    };
    // Without broadcasting, the kernels have in-place forms over either input.
    let in_place = !matches!(
        kernel,
        Add::S8(_, Some(_))
            | Add::S8Fast(_, Some(_))
            | Add::S16(_, Some(_))
            | Add::S32(_, Some(_))
            | Add::F32(_, Some(_))
    );
    let mut step = cx.step(kernel, vec![Operand::Tensor(a), Operand::Tensor(b)], output);
    if in_place {
        step.abilities.in_place = vec![0, 1];
    }
    Ok(step)
}

/// Emits `const OP<k>: add::FastParams` and returns `&OP<k>`.
fn fast_params(call: &mut Call<'_, '_>, f: &add::FastParams) -> TokenStream {
    call.params_as(quote::quote!(::kiln::kernels::add::FastParams), f)
}

impl Kernel for Add {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let (params, bc, suffix) = match self {
            Add::S8(p, bc) => (call.params("add", p), bc, "s8"),
            Add::S8Fast(f, bc) => (fast_params(call, f), bc, "s8_fast"),
            Add::S16(p, bc) => (call.params("add", p), bc, "s16"),
            Add::S32(p, bc) => (call.params("add", p), bc, "s32"),
            Add::F32(p, bc) => (call.params("add", p), bc, "f32"),
            Add::S8Tables(p, t1, t2) => {
                let pre = [
                    call.params("add", p),
                    call.table("INPUT1_TABLE", t1),
                    call.table("INPUT2_TABLE", t2),
                ];
                return call.elementwise("add", "add_s8_tables", &pre);
            }
            Add::S8FastTables(f, t1, t2) => {
                let pre = [
                    fast_params(call, f),
                    call.table("INPUT1_TABLE", t1),
                    call.table("INPUT2_TABLE", t2),
                ];
                return call.elementwise("add", "add_s8_fast_tables", &pre);
            }
        };
        let mut pre = vec![params];
        match bc {
            None => call.elementwise("add", &format!("add_{suffix}"), &pre),
            Some(b) => {
                pre.push(call.broadcast(b));
                call.standard("add", &format!("add_broadcast_{suffix}"), &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Add::S8(p, None) => add::add_s8(p, io.i8(0), io.i8(1), io.out_i8()),
            Add::S8(p, Some(b)) => add::add_broadcast_s8(p, b, io.i8(0), io.i8(1), io.out_i8()),
            Add::S8Tables(p, t1, t2) => add::add_s8_tables(
                p,
                t1.as_slice().try_into().expect("256 entries"),
                t2.as_slice().try_into().expect("256 entries"),
                io.i8(0),
                io.i8(1),
                io.out_i8(),
            ),
            Add::S8Fast(f, None) => add::add_s8_fast(f, io.i8(0), io.i8(1), io.out_i8()),
            Add::S8Fast(f, Some(b)) => {
                add::add_broadcast_s8_fast(f, b, io.i8(0), io.i8(1), io.out_i8())
            }
            Add::S8FastTables(f, t1, t2) => add::add_s8_fast_tables(
                f,
                t1.as_slice().try_into().expect("256 entries"),
                t2.as_slice().try_into().expect("256 entries"),
                io.i8(0),
                io.i8(1),
                io.out_i8(),
            ),
            Add::S16(p, None) => add::add_s16(p, io.i16(0), io.i16(1), io.out_i16()),
            Add::S16(p, Some(b)) => {
                add::add_broadcast_s16(p, b, io.i16(0), io.i16(1), io.out_i16())
            }
            Add::S32(p, None) => add::add_s32(p, io.i32(0), io.i32(1), io.out_i32()),
            Add::S32(p, Some(b)) => {
                add::add_broadcast_s32(p, b, io.i32(0), io.i32(1), io.out_i32())
            }
            Add::F32(p, None) => add::add_f32(p, io.f32(0), io.f32(1), io.out_f32()),
            Add::F32(p, Some(b)) => {
                add::add_broadcast_f32(p, b, io.f32(0), io.f32(1), io.out_f32())
            }
        }
    }
}

/// `add::prepare_fast_s8`, remembered per parameter set for the life of the process (the
/// compiler's, for the macro): it checks the fast kernel on all 65,536 input pairs, about
/// 1 ms, and a model may have thousands of ADDs with the same parameters (10,000 of them
/// took 12 s to lower). The function is pure, so the answer is the same.
fn prepare_fast_s8(p: &add::Params) -> Option<add::FastParams> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static SEEN: RefCell<HashMap<[i32; 12], Option<add::FastParams>>> =
            RefCell::new(HashMap::new());
    }
    // Every field `prepare_fast_s8` reads (the float clamps are not among them).
    let key = [
        p.input1_offset,
        p.input2_offset,
        p.output_offset,
        p.left_shift,
        p.input1_multiplier,
        p.input1_shift,
        p.input2_multiplier,
        p.input2_shift,
        p.output_multiplier,
        p.output_shift,
        p.quantized_activation_min,
        p.quantized_activation_max,
    ];
    SEEN.with(|seen| {
        *seen
            .borrow_mut()
            .entry(key)
            .or_insert_with(|| add::prepare_fast_s8(p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The remembered answer is the function's, for accepted and refused layers alike, the
    /// second time as the first.
    #[test]
    fn remembered_fast_parameters_are_the_kernels_own() {
        use kiln_kernels::quant::{Activation, QuantParams};
        let q = |scale: f32, zero_point: i32| QuantParams { scale, zero_point };
        for (s1, s2, so) in [(0.05, 0.05, 0.1), (0.02, 0.07, 0.05), (1e-3, 0.5, 0.2)] {
            let p = add::prepare_s8(q(s1, 3), q(s2, -7), q(so, 1), Activation::None).unwrap();
            for _ in 0..2 {
                assert_eq!(prepare_fast_s8(&p), add::prepare_fast_s8(&p));
            }
        }
    }
}
