//! AVERAGE_POOL_2D and MAX_POOL_2D: int8, int16 and float32; L2_POOL_2D: float32 (TFLM's
//! only type) (`kiln_kernels::pooling`; int8 on the `_fast` kernels, the same bytes, except
//! with `reference_kernels`). The windows are placed as the pinned wheel places
//! them, also where they are larger than the input (`pooling`'s module docs); what TFLM
//! leaves undefined is refused naming the output extent or the window and its values.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{
    Call, Cx, Kernel, Operand, Step, activation, padding, positive, prepare_error, types,
    unsupported,
};
use kiln_kernels::pooling as pool;
use kiln_kernels::pooling::Kind;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{DType, OpKind, Pool2dOptions, TensorId};
use proc_macro2::TokenStream;
use quote::quote;

/// The kernels: average, max or L2, by type.
#[derive(Debug)]
struct Pool {
    kind: Kind,
    dtype: DType,
    p: pool::Params,
    /// Int8 on `average_pool_s8_fast` / `max_pool_s8_fast`.
    fast: bool,
}

pub(super) fn lower_average(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Kind::Average)
}

pub(super) fn lower_max(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Kind::Max)
}

pub(super) fn lower_l2(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, Kind::L2)
}

/// The kernels' options from the model's (AVERAGE_POOL_2D and a tiled region's
/// KILN_AVERAGE_FINISH).
pub(super) fn options(o: &Pool2dOptions) -> Result<pool::Options> {
    Ok(pool::Options {
        padding: padding(o.padding),
        stride_height: positive(o.stride_h, "stride")?,
        stride_width: positive(o.stride_w, "stride")?,
        filter_height: positive(o.filter_h, "filter height")?,
        filter_width: positive(o.filter_w, "filter width")?,
        activation: activation(o.activation),
    })
}

/// The padding before the window along an axis of `size` cells (`options`' stride and
/// filter height: the rows', or the columns' put there), which the strip of a tiled pooling
/// keeps: TFLM's `padding` where it is the standard one, else a Kiln bug (`what`: "rows" or
/// "columns").
fn standard_padding(
    cx: &Cx<'_>,
    padding: i32,
    size: usize,
    options: &pool::Options,
    what: &str,
) -> Result<usize> {
    let standard = pool::standard_padding(size, options);
    usize::try_from(padding)
        .ok()
        .filter(|&pad| Some(pad) == standard)
        .ok_or_else(|| {
            Diagnostic::new(
                ErrorKind::InvalidPlan,
                format!(
                    "op {} runs on a strip of its image, but TFLM pads its window by {padding} \
                     {what}",
                    cx.op.id.0
                ),
            )
        })
}

fn lower(cx: &Cx<'_>, kind: Kind) -> Result<Step> {
    let (OpKind::AveragePool2d(o) | OpKind::MaxPool2d(o) | OpKind::L2Pool2d(o)) = &cx.op.kind
    else {
        unreachable!("registered for AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D")
    };
    let (input, output) = (cx.input(0)?, cx.output()?);
    let opts = options(o)?;
    let is = cx.image_shape4(input)?;
    let os = cx.shape4(output)?;
    // The whole image's output height and width (a strip's output holds some of its rows, a
    // patch's some of its columns too).
    let out_hw = match cx.graph.row_window(cx.op.id) {
        Some(w) => [w.output_height, w.output_width],
        None => [os[1], os[2]],
    };
    let dtype = cx.dtype(input);
    let prepared = match (kind, dtype, cx.dtype(output)) {
        (Kind::Average | Kind::Max, DType::I8, DType::I8) => {
            pool::prepare_s8(is, out_hw, &opts, kind, cx.quant(input)?, cx.quant(output)?)
        }
        (Kind::Average | Kind::Max, DType::I16, DType::I16) => {
            pool::prepare_s16(is, out_hw, &opts, kind, cx.quant(input)?, cx.quant(output)?)
        }
        (_, DType::F32, DType::F32) => pool::prepare_f32(is, out_hw, &opts, kind),
        (Kind::L2, a, b) => {
            return Err(unsupported("unsupported types for L2_POOL_2D")
                .expected_found("FLOAT32 (TFLM's only type)", types(a, b)));
        }
        (_, a, b) => {
            return Err(unsupported("unsupported types for pooling")
                .expected_found("INT8, INT16 or FLOAT32", types(a, b)));
        }
    };
    let mut p = prepared.map_err(|e| pool_error(cx, e, kind, input, output, &opts))?;
    if cx.graph.row_window(cx.op.id).is_some() {
        // A strip (or patch): its rows and columns are placed with the padding the tiler
        // computed (TFLite's formula), which is TFLM's only where the narrowing to 16 bits
        // changes nothing (the tiler takes no window taller or wider than 32,767).
        let across = pool::Options {
            stride_height: opts.stride_width,
            filter_height: opts.filter_width,
            ..opts
        };
        let mut pad_h = standard_padding(cx, p.padding_height, is[1], &opts, "rows")?;
        let mut pad_w = standard_padding(cx, p.padding_width, is[2], &across, "columns")?;
        cx.strip_window(
            [&mut p.input_height, &mut p.output_height, &mut pad_h],
            [&mut p.input_width, &mut p.output_width, &mut pad_w],
            [p.stride_height, p.stride_width],
            [p.filter_height, p.filter_width],
        )?;
        let to_i32 = |pad: usize| {
            i32::try_from(pad).map_err(|_| {
                Diagnostic::new(ErrorKind::InvalidPlan, "a strip's padding exceeds an i32")
            })
        };
        p.padding_height = to_i32(pad_h)?;
        p.padding_width = to_i32(pad_w)?;
    }
    cx.check_shape(
        output,
        &[p.batches, p.output_height, p.output_width, p.depth],
    )?;
    let fast = dtype == DType::I8 && kind != Kind::L2 && cx.fast_kernels();
    Ok(cx.step(
        Pool {
            kind,
            dtype,
            p,
            fast,
        },
        vec![Operand::Tensor(input)],
        output,
    ))
}

impl Kernel for Pool {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let function = match (self.kind, self.dtype) {
            (Kind::Average, DType::I8) if self.fast => "average_pool_s8_fast",
            (Kind::Max, DType::I8) if self.fast => "max_pool_s8_fast",
            (Kind::Average, DType::I8) => "average_pool_s8",
            (Kind::Average, DType::I16) => "average_pool_s16",
            (Kind::Average, _) => "average_pool_f32",
            (Kind::Max, DType::I8) => "max_pool_s8",
            (Kind::Max, DType::I16) => "max_pool_s16",
            (Kind::Max, _) => "max_pool_f32",
            (Kind::L2, _) => "l2_pool_f32",
        };
        let pre = [call.params("pooling", &self.p)];
        let statement = call.standard("pooling", function, &pre)?;
        // The average and L2 pools return `false` for a window without input cells, which
        // the prepare step rules out.
        Ok(if self.kind == Kind::Max {
            statement
        } else {
            quote!(let _ = #statement)
        })
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let p = &self.p;
        match (self.kind, self.dtype) {
            (Kind::Average, DType::I8) if self.fast => {
                pool::average_pool_s8_fast(p, io.i8(0), io.out_i8());
            }
            (Kind::Max, DType::I8) if self.fast => pool::max_pool_s8_fast(p, io.i8(0), io.out_i8()),
            (Kind::Average, DType::I8) => {
                pool::average_pool_s8(p, io.i8(0), io.out_i8());
            }
            (Kind::Average, DType::I16) => {
                pool::average_pool_s16(p, io.i16(0), io.out_i16());
            }
            (Kind::Average, _) => {
                pool::average_pool_f32(p, io.f32(0), io.out_f32());
            }
            (Kind::Max, DType::I8) => pool::max_pool_s8(p, io.i8(0), io.out_i8()),
            (Kind::Max, DType::I16) => pool::max_pool_s16(p, io.i16(0), io.out_i16()),
            (Kind::Max, _) => pool::max_pool_f32(p, io.f32(0), io.out_f32()),
            (Kind::L2, _) => {
                pool::l2_pool_f32(p, io.f32(0), io.out_f32());
            }
        }
    }
}

/// A pooling node's refusal: its quantization as for every operator, its windows naming the
/// output tensor (its extents) or the input (its windows) and the values.
fn pool_error(
    cx: &Cx<'_>,
    e: pool::PoolError,
    kind: Kind,
    input: TensorId,
    output: TensorId,
    opts: &pool::Options,
) -> Diagnostic {
    use pool::WindowError as W;
    let e = match e {
        pool::PoolError::Prepare(e) => return prepare_error(e),
        pool::PoolError::Window(e) => e,
    };
    let dim = |axis: usize| ["height", "width"][axis];
    let line = |axis: usize| ["row", "column"][axis];
    let filter = |axis: usize| [opts.filter_height, opts.filter_width][axis];
    let at = |t: TensorId, d: Diagnostic| d.at_tensor(t.0, cx.tensor(t).name.clone());
    match e {
        W::OutputSize {
            axis,
            computed,
            declared,
        } => at(
            output,
            unsupported(format!(
                "the output {} is not the one TFLM computes for this window",
                dim(axis)
            ))
            .expected_found(computed.to_string(), declared.to_string()),
        ),
        W::NoOutput { axis, computed } => at(
            output,
            unsupported(format!(
                "TFLM computes no output {} for a window of {} on this input (its L2_POOL_2D \
                 refuses it)",
                dim(axis),
                filter(axis)
            ))
            .expected_found("a positive output size", computed.to_string()),
        ),
        W::EmptyWindow {
            axis,
            index,
            padding,
        } => at(
            input,
            unsupported(format!(
                "the window of output {} {index} holds no input cell (filter {} {}, TFLM's \
                 padding {padding}): {}",
                line(axis),
                dim(axis),
                filter(axis),
                if kind == Kind::L2 {
                    "TFLM's L2_POOL_2D writes NaN there"
                } else {
                    "TFLM's AVERAGE_POOL_2D leaves that output and the ones after it unwritten"
                }
            ))
            .expected_found("a window over the input", "an empty window"),
        ),
        W::Overflow {
            axis,
            index,
            stride,
            padding,
        } => at(
            input,
            unsupported(format!(
                "TFLM's int arithmetic overflows placing the window of output {} {index} \
                 (stride {stride}, padding {padding}): undefined behaviour",
                line(axis)
            ))
            .expected_found(
                "window positions within i32",
                format!("{index} * {stride} - {padding}"),
            ),
        ),
    }
}
