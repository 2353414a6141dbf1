//! SignalFilterBankLog (TFLM's Signal library; a custom operator): uint32 channels of rank 1
//! to their scaled fixed-point logarithms, int16 (`kiln_kernels::signal_filter_bank_log`).

use super::signal_energy::{check_inputs, check_tensor, int_options};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::signal_filter_bank_log as log;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The uint32 -> int16 kernel.
#[derive(Debug)]
struct FilterBankLog(log::Params);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    check_inputs(cx, 1, "input")?;
    let (input, output) = (cx.input(0)?, cx.output()?);
    check_tensor(cx, input, "input", DType::U32, Some(1))?;
    check_tensor(cx, output, "output", DType::I16, Some(1))?;
    cx.check_same_elements(input, output)?;
    let [bits, scale] = int_options(cx, ["input_correction_bits", "output_scale"])?;
    let p = log::prepare(bits, scale).ok_or_else(|| {
        unsupported("SignalFilterBankLog's `input_correction_bits` must be in 0..=31 (the C++ shifts a uint32 by it)")
            .expected_found("input_correction_bits in 0..=31", format!("input_correction_bits {bits}"))
    })?;
    Ok(cx.step(FilterBankLog(p), vec![Operand::Tensor(input)], output))
}

impl Kernel for FilterBankLog {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("signal_filter_bank_log", &self.0)];
        call.standard("signal_filter_bank_log", "signal_filter_bank_log", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let input = bytemuck::cast_slice(io.input(0));
        log::signal_filter_bank_log(&self.0, input, io.out_i16())
    }
}
