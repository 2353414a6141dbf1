//! SELECT_V2: a BOOL condition and two value inputs of one type (float32, int8, int16 as
//! TFLM's `select.cc`), broadcast together (`kiln_kernels::select`). Values are copied
//! unchanged (TFLM does not requantize, whatever the tensors' quantizations).

use crate::op::{Call, Cx, Kernel, Operand, Step, prepare_error, unsupported};
#[cfg(feature = "exec")]
use crate::op::{Io, f32s, i8s, i16s, o8, o16, of};
use kiln_kernels::select::Broadcast3;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The select kernel: the value type and the broadcast (`None`: three equal shapes).
#[derive(Debug)]
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct Select {
    dtype: DType,
    broadcast: Option<Broadcast3>,
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (c, x, y, output) = (cx.input(0)?, cx.input(1)?, cx.input(2)?, cx.output()?);
    if cx.dtype(c) != DType::Bool {
        return Err(unsupported("the condition of SELECT_V2 must be BOOL")
            .at_tensor(c.0, cx.tensor(c).name.clone())
            .expected_found("BOOL", cx.dtype(c).name()));
    }
    let dtype = cx.dtype(x);
    if !matches!(dtype, DType::F32 | DType::I8 | DType::I16) {
        return Err(unsupported("SELECT_V2 does not support this value type")
            .at_tensor(x.0, cx.tensor(x).name.clone())
            .expected_found("FLOAT32, INT8 or INT16", dtype.name()));
    }
    if cx.dtype(y) != dtype || cx.dtype(output) != dtype {
        return Err(
            unsupported("both values and the output must have one type").expected_found(
                format!("BOOL, {dtype}, {dtype} -> {dtype}"),
                format!("BOOL, {dtype}, {} -> {}", cx.dtype(y), cx.dtype(output)),
            ),
        );
    }
    let (sc, sx, sy) = (
        &cx.tensor(c).shape,
        &cx.tensor(x).shape,
        &cx.tensor(y).shape,
    );
    let broadcast = if sc == sx && sx == sy {
        cx.check_elements(output, cx.tensor(x).elements())?;
        None
    } else {
        let b = Broadcast3::new(sc, sx, sy).map_err(|e| {
            prepare_error(e).expected_found(
                "shapes that broadcast together (at most 6-D)",
                format!("{sc:?}, {sx:?}, {sy:?}"),
            )
        })?;
        cx.check_elements(output, b.output_size())?;
        Some(b)
    };
    let kernel = Select { dtype, broadcast };
    Ok(cx.step(
        kernel,
        vec![Operand::Tensor(c), Operand::Tensor(x), Operand::Tensor(y)],
        output,
    ))
}

impl Kernel for Select {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        match &self.broadcast {
            None => call.standard("select", "select", &[]),
            Some(b) => {
                let pre = [call.params_as(quote::quote!(::kiln::kernels::select::Broadcast3), b)];
                call.standard("select", "select_broadcast", &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use kiln_kernels::select as s;
        let (c, x, y) = (io.input(0), io.input(1), io.input(2));
        let b = &self.broadcast;
        macro_rules! go {
            ($view:ident, $out:ident) => {{
                let (x, y, o) = ($view(x), $view(y), $out(io.out()));
                match b {
                    None => s::select(c, x, y, o),
                    Some(b) => s::select_broadcast(b, c, x, y, o),
                }
            }};
        }
        match self.dtype {
            DType::I8 => go!(i8s, o8),
            DType::I16 => go!(i16s, o16),
            _ => go!(f32s, of),
        }
    }
}
