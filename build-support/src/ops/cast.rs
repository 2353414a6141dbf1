//! CAST between bool, int8, int16, int32, uint32 and float32, every pair the pinned wheel
//! runs (`kiln_kernels::cast`; uint32 is the audio preprocessor's). A cast that keeps every
//! bit (int32 <-> uint32, a type to itself) is usually a view, as RESHAPE is.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, types, unsupported};
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The element types CAST converts between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Bool,
    I8,
    I16,
    I32,
    U32,
    F32,
}

fn ty(dtype: DType) -> Option<Ty> {
    Some(match dtype {
        DType::Bool => Ty::Bool,
        DType::I8 => Ty::I8,
        DType::I16 => Ty::I16,
        DType::I32 => Ty::I32,
        DType::U32 => Ty::U32,
        DType::F32 => Ty::F32,
        _ => return None,
    })
}

/// The generic kernel from one element type to another (`cast`, or `cast_to_bool`).
#[derive(Debug)]
// The element types pick the host executor's instance; generated code infers them.
#[cfg_attr(not(feature = "exec"), allow(dead_code))]
struct Cast(Ty, Ty);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_elements(output, cx.tensor(input).elements())?;
    let (a, b) = (cx.dtype(input), cx.dtype(output));
    let (Some(from), Some(to)) = (ty(a), ty(b)) else {
        return Err(unsupported("unsupported types for CAST").expected_found(
            "BOOL, INT8, INT16, INT32, UINT32 or FLOAT32 on both sides",
            types(a, b),
        ));
    };
    let mut step = cx.step(Cast(from, to), vec![Operand::Tensor(input)], output);
    // A cast that keeps every bit (a type to itself, int32 <-> uint32) is a view: the planner
    // gives the output its input's bytes and nothing runs. BOOL to BOOL is not: it maps any
    // nonzero byte to 1.
    step.abilities.view = from == to && from != Ty::Bool
        || matches!((from, to), (Ty::I32, Ty::U32) | (Ty::U32, Ty::I32));
    Ok(step)
}

impl Kernel for Cast {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let f = if self.1 == Ty::Bool {
            "cast_to_bool"
        } else {
            "cast"
        };
        call.standard("cast", f, &[])
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use bytemuck::{cast_slice as r, cast_slice_mut as w};
        use kiln_kernels::cast::{cast, cast_to_bool};
        let (x, out) = (io.input(0), io.out());
        macro_rules! to {
            ($t:ty) => {{
                let x: &[$t] = r(x);
                match self.1 {
                    Ty::Bool => cast_to_bool(x, out),
                    Ty::I8 => cast(x, w::<u8, i8>(out)),
                    Ty::I16 => cast(x, w::<u8, i16>(out)),
                    Ty::I32 => cast(x, w::<u8, i32>(out)),
                    Ty::U32 => cast(x, w::<u8, u32>(out)),
                    Ty::F32 => cast(x, w::<u8, f32>(out)),
                }
            }};
        }
        match self.0 {
            // BOOL bytes: read as `u8` (nonzero is true).
            Ty::Bool => to!(u8),
            Ty::I8 => to!(i8),
            Ty::I16 => to!(i16),
            Ty::I32 => to!(i32),
            Ty::U32 => to!(u32),
            Ty::F32 => to!(f32),
        }
    }
}
