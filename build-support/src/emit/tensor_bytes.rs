//! Debug mode (`preserve_all_tensors`, as TFLM's): the generated `tensor_bytes(t)`, which
//! reads any activation's or variable's bytes after `invoke()`.

use super::regions::{arena_field, locate};
use crate::op::u;
use kiln_planner::diag::Result;
use kiln_planner::ir::{Graph, TensorKind};
use kiln_planner::plan::Plan;
use proc_macro2::TokenStream;
use quote::quote;

/// `tensor_bytes(t)` of debug mode (`preserve_all_tensors`): every activation's bytes in the
/// arena (each its own, kept to the end of the run) and every variable's in the state.
pub(super) fn tensor_bytes_fn(
    g: &Graph,
    plan: &Plan,
    places: &[Option<(usize, usize)>],
) -> Result<TokenStream> {
    let mut arms = Vec::new();
    for t in &g.tensors {
        let (field, place) = match t.kind {
            TensorKind::Activation => match places.get(t.id.0).copied().flatten() {
                Some(span) => {
                    let (r, off) = locate(plan, span)?;
                    let field = arena_field(plan, r);
                    (quote!(#field), Some((off, span.1)))
                }
                None => (quote!(arena), None),
            },
            TensorKind::Variable => (
                quote!(state),
                plan.persistent
                    .iter()
                    .find(|p| p.tensor == t.id)
                    .map(|p| (p.offset, p.size)),
            ),
            TensorKind::Constant { .. } => continue,
        };
        if let Some((off, len)) = place {
            let (i, a, b) = (u(t.id.0), u(off), u(off + len));
            arms.push(quote!(#i => Some(&self.#field[#a..#b]),));
        }
    }
    Ok(quote! {
        /// The bytes of tensor `t` (its index in the model) after `invoke()`, little-endian:
        /// every activation, each with its own bytes in this debug build
        /// (`preserve_all_tensors`), and the state; `None` for constants and indices the
        /// model does not have.
        pub fn tensor_bytes(&self, t: usize) -> Option<&[u8]> {
            match t {
                #(#arms)*
                _ => None,
            }
        }
    })
}
