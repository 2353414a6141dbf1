//! SignalRfft (TFLM's Signal library; a custom operator with options `T` and `fft_length`):
//! the real FFT of each innermost frame, zero-padded to `fft_length`, through KISS FFT's
//! `kiss_fftr` (`kiln_kernels::signal_rfft`): int16 and int32 in fixed point, float32. The twiddle
//! tables `kiss_fft_alloc` and `kiss_fftr_alloc` compute in TFLM's `Init` are computed
//! here, in double precision, and emitted as statics.
//!
//! Refused where TFLM's kernel is undefined or crashes: an odd `fft_length`
//! (`kiss_fftr_alloc` returns null and TFLM uses it), `fft_length / 2` with a prime factor
//! above 5, or 1 (the wheel crashes in kiss_fft's generic butterfly), frames longer than
//! `fft_length` (the copy into the work area overruns it), an output frame of other than
//! `fft_length + 2` values (TFLM writes `fft_length / 2 + 1` complex values per frame at a
//! stride of the output's frame, past the output or leaving values unwritten), a `T` other
//! than the tensors' type. Float32 twiddles are emitted as their bits (tables are integers).

#[cfg(feature = "exec")]
use crate::op::{Buffer, Io};
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::signal_rfft;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind, TensorId};
use proc_macro2::TokenStream;

/// The kernel with its build-time tables, int16, int32 or float32; the inverse transform
/// (SignalIrfft, `super::signal_irfft`) too.
#[derive(Debug)]
pub(super) struct Rfft {
    pub(super) p: signal_rfft::Params,
    pub(super) factors: Vec<u32>,
    pub(super) tables: Tables,
    pub(super) inverse: bool,
    /// int16 forward transform on TFLM's scalar steps (`reference_kernels`:
    /// `signal_rfft_s16_reference`); the other forms have only those.
    pub(super) reference: bool,
}

#[derive(Debug)]
pub(super) enum Tables {
    I16 {
        tw: Vec<i16>,
        stw: Vec<i16>,
    },
    I32 {
        tw: Vec<i32>,
        stw: Vec<i32>,
    },
    /// `f32` bits.
    F32 {
        tw: Vec<u32>,
        stw: Vec<u32>,
    },
}

/// TFLite's `TensorType` numbers of the types the `T` option names.
pub(super) fn tensor_type(d: DType) -> i64 {
    match d {
        DType::F32 => 0,
        DType::I32 => 2,
        DType::I16 => 7,
        _ => -1,
    }
}

/// `kf_cexp` of `phase` in fixed point with `max` (`SAMP_MAX`): `floor(.5 + max * cos)`.
fn cexp(phase: f64, max: f64) -> (f64, f64) {
    (
        (0.5 + max * phase.cos()).floor(),
        (0.5 + max * phase.sin()).floor(),
    )
}

/// The phases of `kiss_fft_alloc(ncfft)`'s twiddles and of `kiss_fftr_alloc`'s super
/// twiddles, negated for the inverse transform (`phase *= -1`).
fn phases(ncfft: usize, inverse: bool) -> (Vec<f64>, Vec<f64>) {
    let pi = std::f64::consts::PI;
    let sign = |phase: f64| if inverse { -phase } else { phase };
    let tw = (0..ncfft)
        .map(|i| sign(-2.0 * pi * i as f64 / ncfft as f64))
        .collect();
    let stw = (0..ncfft / 2)
        .map(|i| sign(-pi * ((i + 1) as f64 / ncfft as f64 + 0.5)))
        .collect();
    (tw, stw)
}

/// The fixed-point twiddles and super twiddles, interleaved.
fn twiddles(ncfft: usize, max: f64, inverse: bool) -> (Vec<f64>, Vec<f64>) {
    let (tw, stw) = phases(ncfft, inverse);
    let c = |phase: &f64| {
        let (r, i) = cexp(*phase, max);
        [r, i]
    };
    (
        tw.iter().flat_map(c).collect(),
        stw.iter().flat_map(c).collect(),
    )
}

/// The float twiddles: `(float) cos(phase)`, `(float) sin(phase)` of the same phases.
fn float_twiddles(ncfft: usize, inverse: bool) -> (Vec<f32>, Vec<f32>) {
    let (tw, stw) = phases(ncfft, inverse);
    let c = |phase: &f64| [phase.cos() as f32, phase.sin() as f32];
    (
        tw.iter().flat_map(c).collect(),
        stw.iter().flat_map(c).collect(),
    )
}

/// `kiss_fft_alloc`'s twiddles (interleaved) in the order the kernel's butterflies read
/// them (`signal_rfft::stage_twiddles`, stage by stage).
fn by_stage<X: Copy + Default>(tw: Vec<X>, ncfft: usize) -> Vec<X> {
    let mut f = [0u32; 64];
    let len = signal_rfft::factors(ncfft, &mut f).expect("checked by prepare");
    let mut out = vec![[X::default(); 2]; signal_rfft::stage_twiddles_len(&f[..len])];
    signal_rfft::stage_twiddles(tw.as_chunks().0, &f[..len], &mut out)
        .expect("a table of ncfft twiddles");
    out.into_iter().flatten().collect()
}

/// The tables of an `fft_length`-point real transform of `dtype` (forward or inverse): the
/// twiddles by stage ([`by_stage`]) and the super twiddles.
pub(super) fn tables(dtype: DType, n: usize, inverse: bool) -> Tables {
    match dtype {
        DType::I16 => {
            let (tw, stw) = twiddles(n / 2, i16::MAX as f64, inverse);
            Tables::I16 {
                tw: by_stage(tw.into_iter().map(|v| v as i16).collect(), n / 2),
                stw: stw.into_iter().map(|v| v as i16).collect(),
            }
        }
        DType::I32 => {
            let (tw, stw) = twiddles(n / 2, i32::MAX as f64, inverse);
            Tables::I32 {
                tw: by_stage(tw.into_iter().map(|v| v as i32).collect(), n / 2),
                stw: stw.into_iter().map(|v| v as i32).collect(),
            }
        }
        _ => {
            let (tw, stw) = float_twiddles(n / 2, inverse);
            Tables::F32 {
                tw: by_stage(tw.into_iter().map(f32::to_bits).collect(), n / 2),
                stw: stw.into_iter().map(f32::to_bits).collect(),
            }
        }
    }
}

/// The checks SignalRfft and SignalIrfft (`name`) share: one input; input and output of one
/// type among INT16, INT32 and FLOAT32, of the same rank >= 1; a custom operator whose `T`
/// option names that type and with an integer `fft_length`. Returns the input, the output,
/// their type and `fft_length`.
pub(super) fn checked(cx: &Cx<'_>, name: &str) -> Result<(TensorId, TensorId, DType, i64)> {
    if cx.op.inputs.len() != 1 {
        return Err(unsupported(format!("{name} has one input"))
            .expected_found("1 input", format!("{} inputs", cx.op.inputs.len())));
    }
    let (input, output) = (cx.input(0)?, cx.output()?);
    let dtype = cx.dtype(input);
    for t in [input, output] {
        let tensor = cx.tensor(t);
        if !matches!(tensor.dtype, DType::I16 | DType::I32 | DType::F32) || tensor.dtype != dtype {
            return Err(unsupported(format!(
                "{name} runs on INT16, INT32 or FLOAT32 tensors, both of one type"
            ))
            .at_tensor(t.0, tensor.name.clone())
            .expected_found(
                "INT16, INT32 or FLOAT32 (as the input)",
                tensor.dtype.name(),
            ));
        }
    }
    let (xs, ys) = (&cx.tensor(input).shape, &cx.tensor(output).shape);
    if xs.is_empty() || xs.len() != ys.len() {
        return Err(unsupported(format!(
            "{name} needs an input of rank >= 1 and an output of the same rank"
        ))
        .at_tensor(output.0, cx.tensor(output).name.clone())
        .expected_found(format!("rank {}", xs.len()), format!("shape {ys:?}")));
    }
    let OpKind::Custom { options, .. } = &cx.op.kind else {
        return Err(unsupported(format!("{name} must be a custom operator")));
    };
    let opt = |k: &str| options.as_ref().and_then(|o| o.int(k));
    let (ty, fft_length) = (opt("T"), opt("fft_length"));
    if ty != Some(tensor_type(dtype)) {
        return Err(
            unsupported(format!("{name}'s `T` option must name the tensors' type")).expected_found(
                format!("T {} ({dtype})", tensor_type(dtype)),
                match ty {
                    Some(t) => format!("T {t}"),
                    None => "no integer `T` in the custom options".into(),
                },
            ),
        );
    }
    let Some(fft_length) = fft_length else {
        return Err(
            unsupported(format!("{name} needs an integer `fft_length` option")).expected_found(
                "fft_length",
                "no integer `fft_length` in the custom options",
            ),
        );
    };
    Ok((input, output, dtype, fft_length))
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output, dtype, fft_length) = checked(cx, "SignalRfft")?;
    let (xs, ys) = (&cx.tensor(input).shape, &cx.tensor(output).shape);
    let input_length = xs[xs.len() - 1];
    let frames = cx.tensor(input).elements() / input_length.max(1);
    let p = signal_rfft::prepare(fft_length, input_length, frames).ok_or_else(|| {
        unsupported(
            "SignalRfft's `fft_length` must be even, 4..=2^20, at least the input frame's length, \
             and fft_length / 2 must have no prime factor but 2, 3 and 5 (TFLM crashes in \
             kiss_fft's generic butterfly)",
        )
        .at_tensor(input.0, cx.tensor(input).name.clone())
        .expected_found(
            format!("an even fft_length >= {input_length} with fft_length / 2 = 2^a 3^b 5^c"),
            format!("fft_length {fft_length}"),
        )
    })?;
    let n = p.fft_length;
    if ys[ys.len() - 1] != n + 2 || ys[..ys.len() - 1] != xs[..xs.len() - 1] {
        let mut want = xs.clone();
        *want.last_mut().expect("rank >= 1") = n + 2;
        return Err(unsupported(
            "SignalRfft's output frame must hold fft_length / 2 + 1 complex values",
        )
        .at_tensor(output.0, cx.tensor(output).name.clone())
        .expected_found(format!("{want:?}"), format!("{ys:?}")));
    }
    let mut f = [0u32; 64];
    let len = signal_rfft::factors(n / 2, &mut f)
        .ok_or_else(|| unsupported("SignalRfft's fft_length has too many factors"))?;
    let tables = tables(dtype, n, false);
    let bytes = cx.tensor(input).dtype.size();
    let mut step = cx.step(
        Rfft {
            p,
            factors: f[..len].to_vec(),
            tables,
            inverse: false,
            reference: !cx.fast_kernels(),
        },
        vec![Operand::Tensor(input)],
        output,
    );
    step.scratch_bytes = signal_rfft::scratch_bytes(&p, bytes);
    // Frames of an even length read where they are, without the zero-padded copy: a
    // little slower, taken only where the RAM budget needs it.
    // (Not for the reference kernel, which copies as TFLM's.)
    let lean = signal_rfft::lean_scratch_elements(&p) * bytes;
    if lean < step.scratch_bytes && cx.fast_kernels() {
        step.lean_scratch_bytes = Some(lean);
    }
    Ok(step)
}

#[cfg(feature = "exec")]
impl Rfft {
    /// Scratch elements of the kernel (the lowering's `scratch_bytes` in samples).
    fn scratch_elements(&self) -> usize {
        if self.inverse {
            signal_rfft::inverse_scratch_elements(&self.p)
        } else {
            signal_rfft::scratch_elements(&self.p)
        }
    }
}

impl Kernel for Rfft {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let mut pre = vec![
            call.params("signal_rfft", &self.p),
            call.table("FACTORS", &self.factors),
        ];
        let function = match &self.tables {
            Tables::I16 { tw, stw } => {
                pre.push(call.table("TWIDDLES", tw));
                pre.push(call.table("SUPER_TWIDDLES", stw));
                if self.inverse {
                    "signal_irfft_s16"
                } else if self.reference {
                    "signal_rfft_s16_reference"
                } else {
                    "signal_rfft_s16"
                }
            }
            Tables::I32 { tw, stw } => {
                pre.push(call.table("TWIDDLES", tw));
                pre.push(call.table("SUPER_TWIDDLES", stw));
                if self.inverse {
                    "signal_irfft_s32"
                } else {
                    "signal_rfft_s32"
                }
            }
            Tables::F32 { tw, stw } => {
                pre.push(call.table("TWIDDLES", tw));
                pre.push(call.table("SUPER_TWIDDLES", stw));
                if self.inverse {
                    "signal_irfft_f32"
                } else {
                    "signal_rfft_f32"
                }
            }
        };
        match call.scratch(false) {
            Ok(scratch) => call.standard_with("signal_rfft", function, &pre, &[scratch]),
            // The lean form, without scratch: the forward transform of frames of an even
            // length, read where they are.
            // (Generic over the sample type, which the operands give.)
            Err(_) if !self.inverse && !self.reference => {
                call.standard("signal_rfft", "signal_rfft_unpadded", &pre)
            }
            Err(e) => Err(e),
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use crate::op::{o16, o32};
        let (p, f) = (&self.p, &self.factors);
        match &self.tables {
            Tables::I16 { tw, stw } => {
                let mut scratch = Buffer::zeroed(self.scratch_elements() * 2);
                let x = io.i16(0);
                let f16 = if self.inverse {
                    signal_rfft::signal_irfft_s16
                } else if self.reference {
                    signal_rfft::signal_rfft_s16_reference
                } else {
                    signal_rfft::signal_rfft_s16
                };
                f16(p, f, tw, stw, x, io.out_i16(), o16(scratch.bytes_mut()));
            }
            Tables::I32 { tw, stw } => {
                let mut scratch = Buffer::zeroed(self.scratch_elements() * 4);
                let x = io.i32(0);
                let f32_ = if self.inverse {
                    signal_rfft::signal_irfft_s32
                } else {
                    signal_rfft::signal_rfft_s32
                };
                f32_(p, f, tw, stw, x, io.out_i32(), o32(scratch.bytes_mut()));
            }
            Tables::F32 { tw, stw } => {
                let mut scratch = Buffer::zeroed(self.scratch_elements() * 4);
                let x = io.f32(0);
                let ff = if self.inverse {
                    signal_rfft::signal_irfft_f32
                } else {
                    signal_rfft::signal_rfft_f32
                };
                ff(
                    p,
                    f,
                    tw,
                    stw,
                    x,
                    io.out_f32(),
                    crate::op::of(scratch.bytes_mut()),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `signal/micro/kernels/fft_test.cc`, RfftTestSize64Int16, RfftTestSize64Int32 and
    /// RfftTestSize64Float: an impulse of 16384 gives 256 in every bin in fixed point (six
    /// stages, each halving), 16384 in floating point.
    #[test]
    fn tflm_impulse_vectors() {
        let p = signal_rfft::prepare(64, 64, 1).unwrap();
        let mut f = [0u32; 64];
        let len = signal_rfft::factors(32, &mut f).unwrap();
        let mut want = [0i32; 66];
        want.iter_mut().step_by(2).for_each(|v| *v = 256);

        let Tables::I16 { tw, stw } = tables(DType::I16, 64, false) else {
            unreachable!()
        };
        let mut x = [0i16; 64];
        x[0] = 16384;
        let (mut y, mut scratch) = ([0i16; 66], [0i16; 128]);
        signal_rfft::signal_rfft_s16(&p, &f[..len], &tw, &stw, &x, &mut y, &mut scratch);
        assert!(y.iter().zip(&want).all(|(&a, &b)| a as i32 == b), "{y:?}");

        let Tables::I32 { tw, stw } = tables(DType::I32, 64, false) else {
            unreachable!()
        };
        let mut x = [0i32; 64];
        x[0] = 16384;
        let (mut y, mut scratch) = ([0i32; 66], [0i32; 128]);
        signal_rfft::signal_rfft_s32(&p, &f[..len], &tw, &stw, &x, &mut y, &mut scratch);
        assert_eq!(y, want);

        // RfftTestSize64Float: in floating point (no scaling) every bin is 16384.
        let Tables::F32 { tw, stw } = tables(DType::F32, 64, false) else {
            unreachable!()
        };
        let mut x = [0f32; 64];
        x[0] = 16384.0;
        let (mut y, mut scratch) = ([0f32; 66], [0f32; 128]);
        signal_rfft::signal_rfft_f32(&p, &f[..len], &tw, &stw, &x, &mut y, &mut scratch);
        let want: Vec<f32> = (0..66)
            .map(|i| if i % 2 == 0 { 16384.0 } else { 0.0 })
            .collect();
        assert_eq!(y.to_vec(), want);
    }
}
