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

use super::signal_rfft::{Rfft, checked, tables};
use crate::op::{Cx, Operand, Step, unsupported};
use kiln_kernels::signal_rfft;
use kiln_planner::diag::Result;

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output, dtype, fft_length) = checked(cx, "SignalIrfft")?;
    let (xs, ys) = (&cx.tensor(input).shape, &cx.tensor(output).shape);
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
            reference: false,
        },
        vec![Operand::Tensor(input)],
        output,
    );
    step.scratch_bytes = signal_rfft::inverse_scratch_elements(&p) * bytes;
    Ok(step)
}
