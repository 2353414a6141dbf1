//! KILN_READ_ROWS (`kiln_planner::tiling::READ_ROWS`): rows of a streamed input, read from
//! the `kiln::RowSource` that `invoke` takes, into a strip's tensor. Kiln makes these
//! operators when it streams a model's input (`kiln_planner::tiling::stream_input`); no
//! model has one, and a custom operator of that name is refused.

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Step, u, unsupported};
use kiln_planner::diag::Result;
use kiln_planner::ir::OpKind;
use proc_macro2::TokenStream;
use quote::quote;

/// The name of `invoke`'s row-source parameter in generated code.
pub const SOURCE: &str = "source";

/// Reads rows `first..first + n` of the input into the output.
#[derive(Debug)]
struct ReadRows {
    first: usize,
    rows: usize,
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    if !matches!(cx.op.kind, OpKind::Other { .. }) {
        return Err(unsupported(
            "KILN_READ_ROWS is Kiln's own operator for a streamed input; a custom operator \
             of that name is not it",
        ));
    }
    let Some((first, rows)) = kiln_planner::tiling::read_rows(cx.graph, cx.op) else {
        return Err(unsupported(
            "KILN_READ_ROWS needs its first row and row count",
        ));
    };
    let output = cx.output()?;
    let shape = &cx.tensor(output).shape;
    if shape.len() != 4 || shape[0] != 1 || shape[1] != rows {
        return Err(
            unsupported("KILN_READ_ROWS writes rows of an NHWC image of batch 1")
                .expected_found(format!("[1, {rows}, W, C]"), format!("{shape:?}")),
        );
    }
    Ok(cx.step(ReadRows { first, rows }, Vec::new(), output))
}

impl Kernel for ReadRows {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let out = &call.raw_outputs()[0];
        let source = proc_macro2::Ident::new(SOURCE, proc_macro2::Span::call_site());
        let first = u(self.first);
        Ok(quote!(::kiln::RowSource::read_rows(&mut *#source, #first, #out);))
    }

    fn streamed_rows(&self) -> Option<(usize, usize)> {
        Some((self.first, self.rows))
    }

    /// The host executor fills the output itself from the whole input it is given
    /// (`exec::run`), through [`Kernel::streamed_rows`].
    #[cfg(feature = "exec")]
    fn run(&self, _: &mut Io<'_>) {}
}
