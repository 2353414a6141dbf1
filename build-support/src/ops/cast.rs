//! CAST between int8, int16, int32 and float32 (`kiln_kernels::cast`).

use crate::emit::Call;
#[cfg(feature = "exec")]
use crate::exec::{Io, f32s, i8s, i16s, i32s, o8, o16, o32, of};
use crate::lower::{Cx, Elem, Kernel, Operand, Step, elem};
use kiln_planner::diag::Result;
use proc_macro2::TokenStream;

/// The generic kernel from one element type to another.
#[derive(Debug)]
// The element type picks the host executor\'s instance; generated code infers it.
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct Cast(Elem, Elem);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_elements(output, cx.tensor(input).elements())?;
    let kernel = Cast(elem(cx.dtype(input))?, elem(cx.dtype(output))?);
    Ok(cx.step(kernel, vec![Operand::Tensor(input)], output))
}

impl Kernel for Cast {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        call.standard("cast", "cast", &[])
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use kiln_kernels::cast::cast;
        let (x, out) = (io.input(0), io.out());
        macro_rules! to {
            ($x:expr) => {
                match self.1 {
                    Elem::I8 => cast($x, o8(out)),
                    Elem::I16 => cast($x, o16(out)),
                    Elem::I32 => cast($x, o32(out)),
                    Elem::F32 => cast($x, of(out)),
                }
            };
        }
        match self.0 {
            Elem::I8 => to!(i8s(x)),
            Elem::I16 => to!(i16s(x)),
            Elem::I32 => to!(i32s(x)),
            Elem::F32 => to!(f32s(x)),
        }
    }
}
