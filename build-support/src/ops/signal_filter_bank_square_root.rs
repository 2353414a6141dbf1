//! SignalFilterBankSquareRoot (TFLM's Signal library; a custom operator): uint64 channels of
//! rank 1 to their rounded square roots, shifted right by a runtime int32 scalar of scale bits,
//! as uint32 (`kiln_kernels::signal_filter_bank_square_root`, which says how a shift outside
//! 0..=31 is defined). TFLM reads no options. `reference_kernels` takes TFLM's digit-by-digit
//! loop instead of Newton's iteration (the same outputs).

use super::signal_energy::{check_inputs, check_tensor};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step};
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The uint64 -> uint32 kernel: Newton's iteration, or with `reference` TFLM's digit-by-digit
/// loop (`reference_kernels`).
#[derive(Debug)]
struct SquareRoot {
    reference: bool,
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    check_inputs(cx, 2, "input, scale bits")?;
    let (input, scale_bits, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    check_tensor(cx, input, "input", DType::U64, Some(1))?;
    check_tensor(cx, scale_bits, "scale bits", DType::I32, Some(0))?;
    check_tensor(cx, output, "output", DType::U32, Some(1))?;
    cx.check_same_elements(input, output)?;
    let reference = !cx.fast_kernels();
    Ok(cx.step(
        SquareRoot { reference },
        vec![Operand::Tensor(input), Operand::Tensor(scale_bits)],
        output,
    ))
}

impl Kernel for SquareRoot {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let f = if self.reference {
            "signal_filter_bank_square_root_reference"
        } else {
            "signal_filter_bank_square_root"
        };
        call.standard("signal_filter_bank_square_root", f, &[])
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let (input, bits) = (bytemuck::cast_slice(io.input(0)), io.i32(1));
        let out = bytemuck::cast_slice_mut(io.out());
        use kiln_kernels::signal_filter_bank_square_root as k;
        if self.reference {
            k::signal_filter_bank_square_root_reference(input, bits, out)
        } else {
            k::signal_filter_bank_square_root(input, bits, out)
        }
    }
}
