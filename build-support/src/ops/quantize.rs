//! QUANTIZE: float32 -> int8 and int16 (`kiln_kernels::quantize`), int8 -> int8
//! (`quantize::requantize_s8_s8`) and the other requantizations TFLM's `quantize_common.cc`
//! has between int8, int16 and int32 (`kiln_kernels::requantize`: int8/int16 -> int8, int16,
//! int32; int32 -> int8, int16) and between int8 and uint8 (`requantize_s8_u8`,
//! `requantize_u8_s8`); int8 -> int8 and int16 -> int16 also run in place, and so do the
//! narrowing ones (float32 -> int8 and int16, int16 -> int8, int32 -> int8 and int16:
//! `quantize::*_in_place`, the output written front to back over the input's start), and,
//! with the fast kernels, uint8 <-> int8 (a camera's uint8 image made int8 where it lies:
//! the top bit flipped, four bytes per word).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Elem, Kernel, Operand, Step, elem, prepare_error, types, unsupported};
use kiln_kernels::{quantize, requantize};
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use kiln_planner::kernels::Narrowing;
use proc_macro2::TokenStream;

/// The kernels, by types.
#[derive(Debug)]
enum Quantize {
    F32S8(quantize::Params),
    F32S16(quantize::Params),
    S8S8(quantize::Params),
    /// Between integer types (input, output).
    Requantize(quantize::Params, Elem, Elem),
    S8U8(quantize::Params),
    U8S8(quantize::Params),
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    cx.check_same_elements(input, output)?;
    let kernel = match (cx.dtype(input), cx.dtype(output)) {
        (DType::F32, DType::I8) => {
            Quantize::F32S8(quantize::prepare_f32_s8(cx.quant(output)?).map_err(prepare_error)?)
        }
        (DType::F32, DType::I16) => {
            Quantize::F32S16(quantize::prepare_f32_s16(cx.quant(output)?).map_err(prepare_error)?)
        }
        (DType::I8, DType::I8) => Quantize::S8S8(
            quantize::prepare_s8_s8(cx.quant(input)?, cx.quant(output)?).map_err(prepare_error)?,
        ),
        (DType::I8, DType::U8) => Quantize::S8U8(
            requantize::prepare(cx.quant(input)?, cx.quant(output)?).map_err(prepare_error)?,
        ),
        (DType::U8, DType::I8) => Quantize::U8S8(
            requantize::prepare(cx.quant(input)?, cx.quant(output)?).map_err(prepare_error)?,
        ),
        (a @ (DType::I8 | DType::I16), b @ (DType::I8 | DType::I16 | DType::I32))
        | (a @ DType::I32, b @ (DType::I8 | DType::I16)) => Quantize::Requantize(
            requantize::prepare(cx.quant(input)?, cx.quant(output)?).map_err(prepare_error)?,
            elem(a)?,
            elem(b)?,
        ),
        (a, b) => {
            return Err(
                unsupported("unsupported types for QUANTIZE").expected_found(
                    "FLOAT32 -> INT8 or INT16, INT8/INT16 -> INT8/INT16/INT32, INT32 -> INT8/INT16, \
                     INT8 -> UINT8, UINT8 -> INT8",
                    types(a, b),
                ),
            );
        }
    };
    // int8 -> int8 and int16 -> int16 have in-place forms over the input.
    let in_place = matches!(
        kernel,
        Quantize::S8S8(_) | Quantize::Requantize(_, Elem::I16, Elem::I16)
    );
    // Uint8 <-> int8 in place only with the fast kernels: TFLM's reference kernel copies
    // (and `reference_kernels` builds measure it).
    let narrowing = kernel.narrowing_in_place().is_some()
        && (cx.fast_kernels() || !matches!(kernel, Quantize::S8U8(_) | Quantize::U8S8(_)));
    let mut step = cx.step(kernel, vec![Operand::Tensor(input)], output);
    if in_place {
        step.abilities.in_place = vec![0];
    }
    step.abilities.narrowing_in_place = narrowing.then(|| Narrowing {
        units: cx.tensor(output).elements(),
        scratch_bytes: 0,
    });
    Ok(step)
}

impl Quantize {
    /// The in-place form of a narrowing kernel (output elements narrower than the input's),
    /// in `kiln_kernels::quantize`.
    fn narrowing_in_place(&self) -> Option<&'static str> {
        Some(match self {
            Quantize::F32S8(_) => "quantize_f32_s8_in_place",
            Quantize::F32S16(_) => "quantize_f32_s16_in_place",
            Quantize::Requantize(_, Elem::I16, Elem::I8) => "requantize_s16_s8_in_place",
            Quantize::Requantize(_, Elem::I32, Elem::I8) => "requantize_s32_s8_in_place",
            Quantize::Requantize(_, Elem::I32, Elem::I16) => "requantize_s32_s16_in_place",
            Quantize::U8S8(_) => "requantize_u8_s8_in_place",
            Quantize::S8U8(_) => "requantize_s8_u8_in_place",
            _ => return None,
        })
    }
}

/// `s8`, `s16`, `s32`: kernel name suffixes of the integer element types.
fn suffix(e: Elem) -> &'static str {
    match e {
        Elem::I8 => "s8",
        Elem::I16 => "s16",
        Elem::I32 | Elem::F32 => "s32",
    }
}

impl Kernel for Quantize {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if let (Some(f), Some(_)) = (self.narrowing_in_place(), call.in_place()) {
            let pre = match self {
                Quantize::F32S8(p) | Quantize::F32S16(p) => [call.params("quantize", p)],
                Quantize::Requantize(p, ..) | Quantize::U8S8(p) | Quantize::S8U8(p) => {
                    [call.params("requantize", p)]
                }
                _ => return Err(call.no_in_place_form()),
            };
            return call.narrowing_in_place("quantize", f, &pre);
        }
        match self {
            Quantize::F32S8(p) => {
                let pre = [call.params("quantize", p)];
                call.standard("quantize", "quantize_f32_s8", &pre)
            }
            Quantize::F32S16(p) => {
                let pre = [call.params("quantize", p)];
                call.standard("quantize", "quantize_f32_s16", &pre)
            }
            Quantize::S8S8(p) => {
                let pre = [call.params("quantize", p)];
                call.elementwise("quantize", "requantize_s8_s8", &pre)
            }
            Quantize::S8U8(p) => {
                let pre = [call.params("requantize", p)];
                call.standard("requantize", "requantize_s8_u8", &pre)
            }
            Quantize::U8S8(p) => {
                let pre = [call.params("requantize", p)];
                call.standard("requantize", "requantize_u8_s8", &pre)
            }
            Quantize::Requantize(p, a, b) => {
                let pre = [call.params("requantize", p)];
                let f = format!("requantize_{}_{}", suffix(*a), suffix(*b));
                if (a, b) == (&Elem::I16, &Elem::I16) {
                    call.elementwise("requantize", &f, &pre)
                } else {
                    call.standard("requantize", &f, &pre)
                }
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            Quantize::F32S8(p) => quantize::quantize_f32_s8(p, io.f32(0), io.out_i8()),
            Quantize::F32S16(p) => quantize::quantize_f32_s16(p, io.f32(0), io.out_i16()),
            Quantize::S8S8(p) => quantize::requantize_s8_s8(p, io.i8(0), io.out_i8()),
            Quantize::S8U8(p) => requantize::requantize_s8_u8(p, io.i8(0), io.out_u8()),
            Quantize::U8S8(p) => requantize::requantize_u8_s8(p, io.u8(0), io.out_i8()),
            Quantize::Requantize(p, a, b) => match (a, b) {
                (Elem::I16, Elem::I8) => requantize::requantize_s16_s8(p, io.i16(0), io.out_i8()),
                (Elem::I8, Elem::I16) => requantize::requantize_s8_s16(p, io.i8(0), io.out_i16()),
                (Elem::I16, Elem::I16) => {
                    requantize::requantize_s16_s16(p, io.i16(0), io.out_i16())
                }
                (Elem::I16, Elem::I32) => {
                    requantize::requantize_s16_s32(p, io.i16(0), io.out_i32())
                }
                (Elem::I8, Elem::I32) => requantize::requantize_s8_s32(p, io.i8(0), io.out_i32()),
                (Elem::I32, Elem::I8) => requantize::requantize_s32_s8(p, io.i32(0), io.out_i8()),
                (Elem::I32, Elem::I16) => {
                    requantize::requantize_s32_s16(p, io.i32(0), io.out_i16())
                }
                other => panic!("no requantize kernel for {other:?}"),
            },
        }
    }
}
