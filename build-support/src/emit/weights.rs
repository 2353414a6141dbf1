//! The model's constant buffers as statics in flash, `BUFFER_<n>`, one per model buffer:
//! read from the model file with `include_bytes!` where it is known (the compiler then holds
//! the bytes once), as byte-string literals otherwise.

use super::{Emitter, u};
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{TensorId, TensorKind};
use proc_macro2::{Ident, Literal};
use quote::{format_ident, quote};

impl<'a> Emitter<'a> {
    /// The name of a constant tensor's static, `BUFFER_<model buffer>`.
    pub(super) fn weight_name(&self, t: TensorId) -> Result<Ident> {
        let tensor = self.tensor(t);
        match &tensor.kind {
            TensorKind::Constant { buffer, .. } => Ok(format_ident!("BUFFER_{}", buffer)),
            _ => Err(
                Diagnostic::new(ErrorKind::InvalidPlan, "a constant is expected")
                    .at_tensor(t.0, tensor.name.clone()),
            ),
        }
    }

    /// Emits a constant tensor's static (once per model buffer).
    pub(super) fn weight_static(&mut self, t: TensorId) -> Result<Ident> {
        let tensor = self.tensor(t);
        let TensorKind::Constant {
            buffer,
            offset,
            data,
        } = &tensor.kind
        else {
            return Err(
                Diagnostic::new(ErrorKind::InvalidPlan, "a constant is expected")
                    .at_tensor(t.0, tensor.name.clone()),
            );
        };
        if let Some(n) = self.weights.get(buffer) {
            return Ok(n.clone());
        }
        let name = format_ident!("BUFFER_{}", buffer);
        let len = u(data.len());
        let doc = format!(
            " Model buffer {buffer}: `{}` ({} bytes).",
            tensor.name,
            data.len()
        );
        // From the model file where it is known: the bytes never become a literal, so the
        // compiler holds them once however large they are.
        let value = match &self.model_file {
            Some(file) => {
                let at = u(*offset);
                quote!(::kiln::runtime::Weights::from_file(::core::include_bytes!(#file), #at))
            }
            None => {
                let lit = Literal::byte_string(data);
                quote!(::kiln::runtime::Weights(*#lit))
            }
        };
        self.weight_bytes += data.len();
        self.items.push(quote! {
            #[doc = #doc]
            static #name: ::kiln::runtime::Weights<#len> = #value;
        });
        self.weights.insert(*buffer, name.clone());
        Ok(name)
    }
}
