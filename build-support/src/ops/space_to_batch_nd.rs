//! SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND with constant block shape and paddings / crops
//! (`kiln_kernels::space_to_batch_nd`): 3-D (NHC) and 4-D (NHWC) int8 and float32, the types
//! and ranks TFLM's kernels have. int8 is a plain move (TFLM does not requantize).
//!
//! SPACE_TO_BATCH_ND's padding: TFLM's reference kernel `memset`s it with
//! `SpaceToBatchParams::output_offset`, which TFLM's `Prepare` never sets (the parameters
//! are a persistent buffer of its arena, zero in the pinned wheel): int8 pads with `0`, not
//! with the output zero point as TensorFlow Lite does, and float32 with `0.0`. The kernel
//! cases draw zero points over the whole int8 range and agree with the wheel on this. (Older
//! TFLM sources set the offset to the zero point; the wheel wins.)
//!
//! TFLM reads the block shape and the paddings / crops as int32 and checks neither against the
//! shapes (its output shape is the model's); Kiln wants them constant, INT32, with `rank - 2`
//! block entries of at least 1 and non-negative pairs, and the output shape they determine.

use super::movement::{Width, same_type};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, kernel_fn, prepare_error, unsupported};
use kiln_kernels::space_to_batch_nd as sb;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, TensorId};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// The types TFLM's two kernels accept.
const TYPES: &[DType] = &[DType::F32, DType::I8];

/// BATCH_TO_SPACE_ND's kernel.
#[derive(Debug)]
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct BatchToSpace(sb::Params, Width);

/// SPACE_TO_BATCH_ND's kernel with its padding value.
#[derive(Debug)]
struct SpaceToBatch(sb::Params, PadValue);

/// The value SPACE_TO_BATCH_ND pads with.
#[derive(Clone, Copy, Debug, PartialEq)]
enum PadValue {
    I8(i8),
    F32(f32),
}

/// The checked operands of either operator.
struct Operands {
    input: TensorId,
    output: TensorId,
    dtype: DType,
    width: Width,
    block: Vec<i32>,
    pairs: Vec<i32>,
}

/// Checks the operands: types, ranks, and the constant block shape and pairs.
fn operands(cx: &Cx<'_>, pairs_name: &str) -> Result<Operands> {
    let (input, block, pairs, output) = (cx.input(0)?, cx.input(1)?, cx.input(2)?, cx.output()?);
    let (dtype, width) = same_type(cx, input, output, TYPES)?;
    let shape = &cx.tensor(input).shape;
    let rank = shape.len();
    if !(3..=4).contains(&rank) || cx.tensor(output).shape.len() != rank {
        return Err(unsupported(
            "input and output must both be 3-D (NHC) or 4-D (NHWC), as TFLM's kernel",
        )
        .at_tensor(input.0, cx.tensor(input).name.clone())
        .expected_found(
            "rank 3 or 4",
            format!("shapes {shape:?} -> {:?}", cx.tensor(output).shape),
        ));
    }
    let block_values = cx.const_i32(block)?;
    let pair_values = cx.const_i32(pairs)?;
    let m = rank - 2;
    if block_values.len() != m {
        return Err(
            unsupported("the block shape needs one entry per spatial dimension")
                .at_tensor(block.0, cx.tensor(block).name.clone())
                .expected_found(format!("{m} values"), format!("{block_values:?}")),
        );
    }
    if pair_values.len() != 2 * m {
        return Err(unsupported(format!(
            "the {pairs_name} need a pair per spatial dimension"
        ))
        .at_tensor(pairs.0, cx.tensor(pairs).name.clone())
        .expected_found(format!("{} values", 2 * m), format!("{pair_values:?}")));
    }
    if let Some(b) = block_values.iter().find(|&&b| b < 1) {
        return Err(unsupported("the block shape must be positive")
            .at_tensor(block.0, cx.tensor(block).name.clone())
            .expected_found(">= 1", b.to_string()));
    }
    if let Some(v) = pair_values.iter().find(|&&v| v < 0) {
        return Err(
            unsupported(format!("the {pairs_name} must not be negative"))
                .at_tensor(pairs.0, cx.tensor(pairs).name.clone())
                .expected_found(">= 0", v.to_string()),
        );
    }
    Ok(Operands {
        input,
        output,
        dtype,
        width,
        block: block_values,
        pairs: pair_values,
    })
}

/// The output shape of the kernel's 4-D one, at the tensors' rank.
fn at_rank(out: [usize; 4], rank: usize) -> Vec<usize> {
    if rank == 3 {
        vec![out[0], out[1], out[3]]
    } else {
        out.to_vec()
    }
}

pub(super) fn lower_batch_to_space(cx: &Cx<'_>) -> Result<Step> {
    let Operands {
        input,
        output,
        width,
        block,
        pairs: crops,
        ..
    } = operands(cx, "crops")?;
    let shape = &cx.tensor(input).shape;
    let (p, out) = sb::prepare_batch_to_space(shape, &block, &crops).map_err(|e| {
        prepare_error(e)
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found(
                "a batch that is a multiple of the block size and crops within the blocks",
                format!("shape {shape:?}, block shape {block:?}, crops {crops:?}"),
            )
    })?;
    cx.check_shape(output, &at_rank(out, shape.len()))?;
    Ok(cx.step(BatchToSpace(p, width), vec![Operand::Tensor(input)], output))
}

pub(super) fn lower_space_to_batch(cx: &Cx<'_>) -> Result<Step> {
    let Operands {
        input,
        output,
        dtype,
        block,
        pairs: paddings,
        ..
    } = operands(cx, "paddings")?;
    let shape = &cx.tensor(input).shape;
    let (p, out) = sb::prepare_space_to_batch(shape, &block, &paddings).map_err(|e| {
        prepare_error(e)
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found(
                "padded spatial dimensions that are multiples of the block shape",
                format!("shape {shape:?}, block shape {block:?}, paddings {paddings:?}"),
            )
    })?;
    cx.check_shape(output, &at_rank(out, shape.len()))?;
    let value = match dtype {
        DType::I8 => PadValue::I8(0),
        _ => PadValue::F32(0.0),
    };
    Ok(cx.step(SpaceToBatch(p, value), vec![Operand::Tensor(input)], output))
}

impl Kernel for BatchToSpace {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("space_to_batch_nd", &self.0)];
        call.standard("space_to_batch_nd", "batch_to_space_nd", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.0;
        super::movement::by_width!(self.1, io, |x, o| sb::batch_to_space_nd(p, x, o))
    }
}

impl Kernel for SpaceToBatch {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let p = call.params("space_to_batch_nd", &self.0);
        let v = match self.1 {
            PadValue::I8(v) => quote!(#v),
            PadValue::F32(v) => {
                let v = Literal::f32_suffixed(v);
                quote!(#v)
            }
        };
        let f = kernel_fn("space_to_batch_nd", "space_to_batch_nd");
        let (x, out) = (call.input(0), call.output());
        Ok(quote!(#f(#p, #x, #v, #out);))
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self.1 {
            PadValue::I8(v) => sb::space_to_batch_nd(&self.0, io.i8(0), v, io.out_i8()),
            PadValue::F32(v) => sb::space_to_batch_nd(&self.0, io.f32(0), v, io.out_f32()),
        }
    }
}
