//! SignalPCAN (TFLM's Signal library; a custom operator): per-channel energy normalization
//! of uint32 filter bank channels by gains looked up from their uint32 noise estimates in an
//! int16 gain table (`kiln_kernels::signal_pcan`). TFLM's Prepare computes nothing from the
//! table; the table must hold the 125 entries the largest estimates read (TFLM does not
//! check, and reads past a shorter one).

use super::signal_energy::{check_inputs, check_tensor, int_options};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::signal_pcan;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The uint32 kernel.
#[derive(Debug)]
struct Pcan(signal_pcan::Params);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    check_inputs(cx, 3, "input, noise estimate, gain table")?;
    let (input, noise, lut) = (cx.input(0)?, cx.input(1)?, cx.input(2)?);
    let output = cx.output()?;
    check_tensor(cx, input, "input", DType::U32, Some(1))?;
    check_tensor(cx, noise, "noise estimate", DType::U32, Some(1))?;
    check_tensor(cx, lut, "gain table", DType::I16, Some(1))?;
    check_tensor(cx, output, "output", DType::U32, Some(1))?;
    cx.check_same_elements(input, noise)?;
    cx.check_same_elements(input, output)?;
    let entries = cx.tensor(lut).elements();
    if entries < signal_pcan::GAIN_LUT_LEN {
        return Err(unsupported(
            "SignalPCAN's gain table must hold 125 entries (a noise estimate of 2^31 or more reads entry 124)",
        )
        .at_tensor(lut.0, cx.tensor(lut).name.clone())
        .expected_found(
            format!("at least {} entries", signal_pcan::GAIN_LUT_LEN),
            format!("{entries} entries"),
        ));
    }
    let [shift] = int_options(cx, ["snr_shift"])?;
    let p = signal_pcan::prepare(shift).ok_or_else(|| {
        unsupported("SignalPCAN's `snr_shift` must be in 0..=63 (the C++ shifts a uint64 by it)")
            .expected_found("snr_shift in 0..=63", format!("snr_shift {shift}"))
    })?;
    Ok(cx.step(
        Pcan(p),
        vec![
            Operand::Tensor(input),
            Operand::Tensor(noise),
            Operand::Tensor(lut),
        ],
        output,
    ))
}

impl Kernel for Pcan {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("signal_pcan", &self.0)];
        call.standard("signal_pcan", "signal_pcan", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let (x, noise) = (
            bytemuck::cast_slice(io.input(0)),
            bytemuck::cast_slice(io.input(1)),
        );
        let lut = io.i16(2);
        signal_pcan::signal_pcan(&self.0, x, noise, lut, bytemuck::cast_slice_mut(io.out()))
    }
}
