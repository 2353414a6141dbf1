//! MAXIMUM and MINIMUM: float32, int8, int16, int32 and int64 (TFLM's types), broadcasting
//! or not (`kiln_kernels::maximum_minimum`).

use crate::op::{Call, Cx, Elem, Kernel, Operand, Step, elem, unsupported};
#[cfg(feature = "exec")]
use crate::op::{Io, f32s, i8s, i16s, i32s, i64s, o8, o16, o32, of};
use kiln_kernels::broadcast::Broadcast;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The generic kernels: which one, the element type (`None`: int64), the broadcast (`None`:
/// equal shapes).
#[derive(Debug)]
// The element type picks the host executor\'s instance; generated code infers it.
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct MaxMin {
    max: bool,
    elem: Option<Elem>,
    broadcast: Option<Broadcast>,
}

pub(super) fn lower_maximum(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, true)
}

pub(super) fn lower_minimum(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, false)
}

fn lower(cx: &Cx<'_>, max: bool) -> Result<Step> {
    let (a, b, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let dtype = cx.dtype(output);
    if cx.dtype(a) != dtype || cx.dtype(b) != dtype {
        return Err(unsupported("inputs and output must have one type"));
    }
    let kernel = MaxMin {
        max,
        elem: if dtype == DType::I64 {
            None
        } else {
            Some(elem(dtype)?)
        },
        broadcast: cx.broadcast(a, b, output)?,
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(a), Operand::Tensor(b)], output))
}

impl Kernel for MaxMin {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let name = if self.max { "maximum" } else { "minimum" };
        match &self.broadcast {
            None => call.standard("maximum_minimum", name, &[]),
            Some(b) => {
                let pre = [call.broadcast(b)];
                call.standard("maximum_minimum", &format!("{name}_broadcast"), &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use kiln_kernels::maximum_minimum as mm;
        let (max, b) = (self.max, &self.broadcast);
        macro_rules! go {
            ($view:ident, $out:ident) => {{
                let (x, y, o) = ($view(io.input(0)), $view(io.input(1)), $out(io.out()));
                match (max, b) {
                    (true, None) => mm::maximum(x, y, o),
                    (true, Some(b)) => mm::maximum_broadcast(b, x, y, o),
                    (false, None) => mm::minimum(x, y, o),
                    (false, Some(b)) => mm::minimum_broadcast(b, x, y, o),
                }
            }};
        }
        fn o64(b: &mut [u8]) -> &mut [i64] {
            bytemuck::cast_slice_mut(b)
        }
        match self.elem {
            Some(Elem::I8) => go!(i8s, o8),
            Some(Elem::I16) => go!(i16s, o16),
            Some(Elem::I32) => go!(i32s, o32),
            Some(Elem::F32) => go!(f32s, of),
            None => go!(i64s, o64),
        }
    }
}
