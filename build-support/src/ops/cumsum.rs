//! CUMSUM: float32 and int8 with a constant axis (`kiln_kernels::cumsum`). A runtime axis
//! is refused: the output shape (always the input's) does not determine it.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, types, unsupported};
use kiln_kernels::cumsum as k;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};
use proc_macro2::TokenStream;

/// The kernels: float32 or int8.
#[derive(Debug)]
struct Cumsum {
    p: k::Params,
    float: bool,
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Cumsum { exclusive, reverse } = cx.op.kind else {
        unreachable!("registered for CUMSUM")
    };
    if cx.op.inputs.len() != 2 {
        return Err(unsupported("CUMSUM needs two inputs (input, axis)"));
    }
    let (input, axis, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let values = cx.const_i32(axis)?;
    let [a] = values[..] else {
        let t = cx.tensor(axis);
        return Err(unsupported("CUMSUM's axis must have one element")
            .at_tensor(axis.0, t.name.clone())
            .expected_found("1 element", format!("{} elements", values.len())));
    };
    let shape = &cx.tensor(input).shape;
    cx.check_shape(output, shape)?;
    let bad_axis = |e| {
        prepare_error(e).expected_found(format!("an axis in -{0}..{0}", shape.len()), a.to_string())
    };
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::F32, DType::F32) => Cumsum {
            p: k::prepare_f32(shape, a, exclusive, reverse).map_err(bad_axis)?,
            float: true,
        },
        (DType::I8, DType::I8) => {
            k::prepare_f32(shape, a, exclusive, reverse).map_err(bad_axis)?;
            let p = k::prepare_s8(
                shape,
                a,
                exclusive,
                reverse,
                cx.quant(input)?,
                cx.quant(output)?,
            )
            .map_err(prepare_error)?;
            Cumsum { p, float: false }
        }
        (a, b) => {
            return Err(unsupported("unsupported types for CUMSUM").expected_found(
                "FLOAT32 or INT8 (the same for input and output)",
                types(a, b),
            ));
        }
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(input)], output))
}

impl Kernel for Cumsum {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("cumsum", &self.p)];
        let f = if self.float {
            "cumsum_f32"
        } else {
            "cumsum_s8"
        };
        call.standard("cumsum", f, &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        if self.float {
            k::cumsum_f32(&self.p, io.f32(0), io.out_f32())
        } else {
            k::cumsum_s8(&self.p, io.i8(0), io.out_i8())
        }
    }
}
