//! RESHAPE, SQUEEZE and EXPAND_DIMS: the bytes unchanged. Usually a view (the planner gives
//! the output its input's bytes and the operator emits nothing); otherwise a copy.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_planner::diag::Result;
use proc_macro2::TokenStream;
use quote::quote;

/// A copy of the input's bytes.
#[derive(Debug)]
struct Copy;

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    if cx.tensor(input).bytes() != cx.tensor(output).bytes() {
        return Err(unsupported("input and output sizes differ").expected_found(
            format!("{} bytes", cx.tensor(output).bytes()),
            format!("{} bytes", cx.tensor(input).bytes()),
        ));
    }
    let mut step = cx.step(Copy, vec![Operand::Tensor(input)], output);
    step.abilities.view = true;
    Ok(step)
}

impl Kernel for Copy {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let src = call.raw_input(0);
        Ok(quote!(out.copy_from_slice(#src);))
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let src = io.input(0);
        io.out().copy_from_slice(src)
    }
}
