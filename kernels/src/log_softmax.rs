//! LOG_SOFTMAX over the last dimension, float32 (TFLM's `log_softmax.cc`,
//! `reference_ops::LogSoftmax<float>`): per row the maximum (`std::max` from `lowest()`),
//! the sum of `std::exp(x - max)` in order, then `x - max - std::log(sum)`, with glibc's
//! `expf` and `logf` ([`crate::math::expf`], [`crate::libm_f32::logf`]); bit-identical,
//! NaN payloads included.

use crate::libm_f32::logf;
use crate::math::expf;
use crate::util::max_f32;

/// Constant parameters of a LOG_SOFTMAX node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The product of every dimension but the last.
    pub outer: usize,
    /// The last dimension (at least 1).
    pub depth: usize,
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// Build-time parameters from the input's shape (rank at least 1).
pub fn prepare(shape: &[usize]) -> Option<Params> {
    let (&depth, lead) = shape.split_last()?;
    (depth > 0).then(|| Params {
        outer: lead.iter().product(),
        depth,
    })
}

/// `a + b` with x86's NaN rule for the operand order TFLM's C++ has: of two NaNs, the first
/// (`a`) is the result. (LLVM may swap the operands of an addition, which changes which NaN
/// survives: a row holding a NaN and an infinity sums a NaN input and the default NaN of
/// `inf - inf`.)
#[inline]
fn add_in_order(a: f32, b: f32) -> f32 {
    if a.is_nan() { a } else { a + b }
}

/// Float32 LOG_SOFTMAX.
pub fn log_softmax_f32(p: &Params, input: &[f32], output: &mut [f32]) {
    debug_assert_eq!(input.len(), p.outer * p.depth);
    debug_assert_eq!(output.len(), p.outer * p.depth);
    for (row, out) in input
        .chunks_exact(p.depth)
        .zip(output.chunks_exact_mut(p.depth))
    {
        let mut max = f32::MIN;
        for &x in row {
            max = max_f32(max, x);
        }
        let mut sum = 0.0f32;
        for &x in row {
            sum = add_in_order(sum, expf(x - max));
        }
        let log_sum = logf(sum);
        for (o, &x) in out.iter_mut().zip(row) {
            *o = x - max - log_sum;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sum_to_one_in_exp() {
        let p = prepare(&[2, 3]).unwrap();
        let x = [1.0f32, 2.0, 3.0, -5.0, 0.0, 5.0];
        let mut y = [0.0f32; 6];
        log_softmax_f32(&p, &x, &mut y);
        for r in y.chunks(3) {
            let s: f32 = r.iter().map(|v| v.exp()).sum();
            assert!((s - 1.0).abs() < 1e-6);
        }
        assert!(prepare(&[]).is_none() && prepare(&[2, 0]).is_none());
    }
}
