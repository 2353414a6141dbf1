//! LOGICAL_AND, LOGICAL_OR (broadcasting or not) and LOGICAL_NOT on BOOL tensors
//! (`kiln_kernels::logical`).
//!
//! TFLM's `logical.cc` does not check types (the pinned wheel runs LOGICAL_AND/OR on any
//! type, reading the bytes as `bool`); only BOOL has a meaning, and Kiln accepts only BOOL.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::broadcast::Broadcast;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, TensorId};
use proc_macro2::TokenStream;

/// LOGICAL_AND (`and`) or LOGICAL_OR, with the broadcast (`None`: equal shapes).
#[derive(Debug)]
struct Binary {
    and: bool,
    broadcast: Option<Broadcast>,
}

/// LOGICAL_NOT.
#[derive(Debug)]
struct Not;

fn check_bool(cx: &Cx<'_>, tensors: &[TensorId], what: &str) -> Result<()> {
    for &t in tensors {
        if cx.dtype(t) != DType::Bool {
            return Err(unsupported(format!("{what} works on BOOL tensors only"))
                .at_tensor(t.0, cx.tensor(t).name.clone())
                .expected_found("BOOL", cx.dtype(t).name()));
        }
    }
    Ok(())
}

pub(super) fn lower_and(cx: &Cx<'_>) -> Result<Step> {
    lower_binary(cx, true)
}

pub(super) fn lower_or(cx: &Cx<'_>) -> Result<Step> {
    lower_binary(cx, false)
}

fn lower_binary(cx: &Cx<'_>, and: bool) -> Result<Step> {
    let (a, b, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let what = if and { "LOGICAL_AND" } else { "LOGICAL_OR" };
    check_bool(cx, &[a, b, output], what)?;
    let kernel = Binary {
        and,
        broadcast: cx.broadcast(a, b, output)?,
    };
    Ok(cx.step(kernel, vec![Operand::Tensor(a), Operand::Tensor(b)], output))
}

pub(super) fn lower_not(cx: &Cx<'_>) -> Result<Step> {
    let (input, output) = (cx.input(0)?, cx.output()?);
    check_bool(cx, &[input, output], "LOGICAL_NOT")?;
    cx.check_same_elements(input, output)?;
    // No in-place ability declared: the planner's restatement of the declarations
    // (`kiln_planner::synthetic`) does not list LOGICAL_NOT among the in-place operators.
    Ok(cx.step(Not, vec![Operand::Tensor(input)], output))
}

impl Kernel for Binary {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let name = if self.and {
            "logical_and"
        } else {
            "logical_or"
        };
        match &self.broadcast {
            None => call.standard("logical", name, &[]),
            Some(b) => {
                let pre = [call.broadcast(b)];
                call.standard("logical", &format!("{name}_broadcast"), &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use kiln_kernels::logical as l;
        let (x, y) = (io.input(0), io.input(1));
        let out = io.out_u8();
        match (self.and, &self.broadcast) {
            (true, None) => l::logical_and(x, y, out),
            (true, Some(b)) => l::logical_and_broadcast(b, x, y, out),
            (false, None) => l::logical_or(x, y, out),
            (false, Some(b)) => l::logical_or_broadcast(b, x, y, out),
        }
    }
}

impl Kernel for Not {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        call.elementwise("logical", "logical_not", &[])
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let x = io.input(0);
        kiln_kernels::logical::logical_not(x, io.out_u8())
    }
}
