//! SignalIrfft (TFLM's Signal library; a custom operator with options `T` and `fft_length`):
//! the inverse real FFT of each innermost frame of `fft_length / 2 + 1` complex values into
//! `fft_length` samples, through KISS FFT's `kiss_fftri` (`kiln_kernels::signal_rfft`'s
//! inverse kernels, with the inverse transform's tables from `super::signal_rfft`): int16
//! and int32 in fixed point, float32.
//!
//! Refused where TFLM's kernel is undefined or crashes: `fft_length` odd, below 4 or with
//! `fft_length / 2` having a prime factor above 5 (as SignalRfft), input frames of other than
//! `fft_length + 2` values (TFLM reads `fft_length / 2 + 1` complex values per frame at the
//! input frame's stride, past the input) or output frames of other than `fft_length`
//! samples (it writes `fft_length` at the output frame's stride), a `T` other than the
//! tensors' type.

use super::signal_rfft::{Rfft, tables, tensor_type};
use crate::lower::{Cx, Operand, Step, unsupported};
use kiln_kernels::signal_rfft;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, OpKind};

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    if cx.op.inputs.len() != 1 {
        return Err(unsupported("SignalIrfft has one input")
            .expected_found("1 input", format!("{} inputs", cx.op.inputs.len())));
    }
    let (input, output) = (cx.input(0)?, cx.output()?);
    let dtype = cx.dtype(input);
    for t in [input, output] {
        let tensor = cx.tensor(t);
        if !matches!(tensor.dtype, DType::I16 | DType::I32 | DType::F32) || tensor.dtype != dtype {
            return Err(unsupported(
                "SignalIrfft runs on INT16, INT32 or FLOAT32 tensors, both of one type",
            )
            .at_tensor(t.0, tensor.name.clone())
            .expected_found(
                "INT16, INT32 or FLOAT32 (as the input)",
                tensor.dtype.name(),
            ));
        }
    }
    let (xs, ys) = (&cx.tensor(input).shape, &cx.tensor(output).shape);
    if xs.is_empty() || xs.len() != ys.len() {
        return Err(unsupported(
            "SignalIrfft needs an input of rank >= 1 and an output of the same rank",
        )
        .at_tensor(output.0, cx.tensor(output).name.clone())
        .expected_found(format!("rank {}", xs.len()), format!("shape {ys:?}")));
    }
    let OpKind::Custom { options, .. } = &cx.op.kind else {
        return Err(unsupported("SignalIrfft must be a custom operator"));
    };
    let opt = |k: &str| options.as_ref().and_then(|o| o.int(k));
    let (ty, fft_length) = (opt("T"), opt("fft_length"));
    if ty != Some(tensor_type(dtype)) {
        return Err(
            unsupported("SignalIrfft's `T` option must name the tensors' type").expected_found(
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
            unsupported("SignalIrfft needs an integer `fft_length` option").expected_found(
                "fft_length",
                "no integer `fft_length` in the custom options",
            ),
        );
    };
    let in_frame = xs[xs.len() - 1];
    let frames = cx.tensor(input).elements() / in_frame.max(1);
    let p = usize::try_from(fft_length)
        .ok()
        .and_then(|n| signal_rfft::prepare(fft_length, n, frames))
        .ok_or_else(|| {
            unsupported(
                "SignalIrfft's `fft_length` must be even, 4..=2^20, and fft_length / 2 must have \
                 no prime factor but 2, 3 and 5 (TFLM crashes in kiss_fft's generic butterfly)",
            )
            .at_tensor(input.0, cx.tensor(input).name.clone())
            .expected_found(
                "an even fft_length with fft_length / 2 = 2^a 3^b 5^c",
                format!("fft_length {fft_length}"),
            )
        })?;
    let n = p.fft_length;
    for (t, shape, want) in [(input, xs, n + 2), (output, ys, n)] {
        if shape[shape.len() - 1] != want || shape[..shape.len() - 1] != xs[..xs.len() - 1] {
            let mut expected = xs.clone();
            *expected.last_mut().expect("rank >= 1") = want;
            return Err(unsupported(
                "SignalIrfft's frames must be fft_length / 2 + 1 complex values in and fft_length samples out",
            )
            .at_tensor(t.0, cx.tensor(t).name.clone())
            .expected_found(format!("{expected:?}"), format!("{shape:?}")));
        }
    }
    let mut f = [0u32; 64];
    let len = signal_rfft::factors(n / 2, &mut f)
        .ok_or_else(|| unsupported("SignalIrfft's fft_length has too many factors"))?;
    let bytes = dtype.size();
    let mut step = cx.step(
        Rfft {
            p,
            factors: f[..len].to_vec(),
            tables: tables(dtype, n, true),
            inverse: true,
        },
        vec![Operand::Tensor(input)],
        output,
    );
    step.scratch_bytes = signal_rfft::inverse_scratch_elements(&p) * bytes;
    Ok(step)
}
