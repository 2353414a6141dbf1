//! The estimate of code in `kiln plan`'s flash total: the bytes of `invoke()` and the
//! kernels it calls, on a Cortex-M4, from which kernel functions the plan calls.
//!
//! The compiler, not Kiln, decides the code's size, so this is an estimate: a size per
//! distinct kernel function by its kind and a size per operator that calls one, fitted
//! by `tools/fit_insn_rates.py` to the measured firmware (`tools/data/firmware.json`:
//! Kiln's functions in each image) and written to [`rates`](super::rates) with its error
//! on the fitted models. The flash budget checks the exact figures (weights and prepared
//! constants) only.

use super::header::KernelUse;
use super::rates;
use std::collections::BTreeSet;

/// The code's work in the units of [`rates::CODE_KINDS`]: the distinct kernel functions
/// called, by kind (convolutions, depthwise convolutions, the other MAC kernels, the rest),
/// and the operators that call at least one.
pub fn code_work(kernels: &[KernelUse]) -> [u64; 5] {
    let mut w = [0; 5];
    for k in kernels {
        let kind = [
            "conv_2d::",
            "depthwise_conv_2d::",
            "fully_connected::",
            "batch_matmul::",
            "transpose_conv::",
            "svdf::",
            "lstm",
        ]
        .iter()
        .position(|m| k.kernel.starts_with(m))
        .map_or(3, |p| p.min(2));
        w[kind] += 1;
    }
    let ops: BTreeSet<usize> = kernels.iter().flat_map(|k| k.ops.iter().copied()).collect();
    w[4] = ops.len() as u64;
    w
}

/// The code estimate of one compiled model on a Cortex-M4: bytes at opt-level "s" and at
/// opt-level 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeEstimate {
    pub opt_s: u64,
    pub opt_3: u64,
}

impl CodeEstimate {
    /// The estimate for the kernel functions a plan calls.
    pub fn of(kernels: &[KernelUse]) -> CodeEstimate {
        let work = code_work(kernels);
        let at = |rates: &[f64; 5]| {
            let sum: f64 = work.iter().zip(rates).map(|(&w, &r)| w as f64 * r).sum();
            sum.round() as u64
        };
        CodeEstimate {
            opt_s: at(&rates::CODE_M4_S),
            opt_3: at(&rates::CODE_M4_3),
        }
    }

    /// How the estimate is made and how far it was from the measured code, for the reports.
    pub fn basis() -> String {
        let (median, worst, model) = rates::CODE_ERROR;
        format!(
            "estimated from the kernels called, fitted to {} firmware builds: median error \
             {median:.0} %, worst {worst:.0} B ({model}); not in the flash budget",
            rates::CODE_MODELS
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uses(names: &[(&str, &[usize])]) -> Vec<KernelUse> {
        names
            .iter()
            .map(|(k, ops)| KernelUse {
                kernel: k.to_string(),
                ops: ops.to_vec(),
            })
            .collect()
    }

    #[test]
    fn work_counts_kernel_kinds_and_calling_operators() {
        let k = uses(&[
            ("conv_2d::conv_2d_s8_fast", &[0, 2]),
            ("depthwise_conv_2d::depthwise_conv_2d_s8_fast", &[1]),
            ("fully_connected::fully_connected_s8", &[3]),
            ("lstm_s16::lstm_s8", &[4]),
            ("softmax::softmax_s8", &[5]),
            ("quant::requantize", &[5]),
        ]);
        assert_eq!(code_work(&k), [1, 1, 2, 2, 6]);
    }

    #[test]
    fn more_kernels_never_estimate_less() {
        let one = uses(&[("conv_2d::conv_2d_s8_fast", &[0])]);
        let two = uses(&[
            ("conv_2d::conv_2d_s8_fast", &[0]),
            ("softmax::softmax_s8", &[1]),
        ]);
        let (a, b) = (CodeEstimate::of(&one), CodeEstimate::of(&two));
        assert!(a.opt_s > 0 && b.opt_s >= a.opt_s && b.opt_3 >= a.opt_3);
        assert_eq!(CodeEstimate::of(&[]), CodeEstimate { opt_s: 0, opt_3: 0 });
    }
}
