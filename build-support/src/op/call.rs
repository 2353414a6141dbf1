//! [`Call`]: what a kernel's `emit` writes its statement through: the operands of its call
//! as tokens, the constants it needs (parameter structs, tables), the in-place form the
//! plan chose; and [`Items`], the generated module's items the emitter keeps, which calls
//! add their constants to.

use super::tokens::{debug_expr, ints, kernel_fn, u};
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::BTreeMap;

/// The generated module's consts and statics, in emission order: weight statics, the
/// parameters and tables of kernel calls (added through [`Call`], named `<prefix>OP<k>...`),
/// subgraph functions. An equal table is emitted once.
#[derive(Default)]
pub(crate) struct Items {
    /// Consts and statics, in emission order.
    pub(crate) list: Vec<TokenStream>,
    /// Tables emitted so far, by element type and values: an equal table is emitted once
    /// (a tiled model's strips of one operator share their tables).
    tables: BTreeMap<(&'static str, Vec<i64>), TokenStream>,
    /// Bytes of per-channel tables and other emitted constants.
    pub(crate) constant_bytes: usize,
    /// The start of the names of the items of the subgraph being emitted (`SG<s>_`; none in
    /// the main graph).
    pub(crate) prefix: String,
}

impl Items {
    /// Adds an item.
    pub(crate) fn push(&mut self, item: TokenStream) {
        self.list.push(item);
    }

    /// Emits `static OP<k>_<WHAT>: [T; N]` (per-channel or lookup table, in flash) and
    /// returns `&OP<k>_<WHAT>`.
    pub(crate) fn table<T: Copy + Into<i64>>(
        &mut self,
        k: usize,
        what: &str,
        values: &[T],
    ) -> TokenStream {
        let key = (
            std::any::type_name::<T>(),
            values.iter().map(|&v| v.into()).collect::<Vec<i64>>(),
        );
        if let Some(name) = self.tables.get(&key) {
            return name.clone();
        }
        let name = format_ident!("{}OP{}_{}", self.prefix, k, what);
        let n = u(values.len());
        let ty = Ident::new(key.0, Span::call_site());
        self.constant_bytes += std::mem::size_of_val(values);
        let literals = ints(values);
        self.list.push(quote! {
            static #name: [#ty; #n] = [#(#literals),*];
        });
        self.tables.insert(key, quote!(&#name));
        quote!(&#name)
    }
}

/// What a kernel's [`emit`](super::Kernel::emit) works with: the operands of its call
/// as tokens (arena slices and weights already bound, viewed as their element types), and
/// the emitter, for the constants the call needs (parameter structs and tables, emitted as
/// `OP<k>...` items in flash).
pub struct Call<'e, 'a> {
    pub(crate) items: &'e mut Items,
    pub(crate) k: usize,
    pub(crate) op_name: &'a str,
    /// Per operand slot: the typed view (`Some(..)`/`None` for optional operands), empty for
    /// the input the output overwrites.
    pub(crate) typed: Vec<TokenStream>,
    /// Per operand slot: the bytes (`in0`, `BUFFER_3.bytes()`).
    pub(crate) raw: Vec<TokenStream>,
    /// The output, viewed as its element type.
    pub(crate) out: TokenStream,
    /// The view function of the output's element type (`i8s_mut`, ...).
    pub(crate) out_view: TokenStream,
    /// Every output, viewed as its element type (`out` alone, or `out0, out1, ...`).
    pub(crate) outs: Vec<TokenStream>,
    /// Every output's bytes.
    pub(crate) raw_outs: Vec<TokenStream>,
    pub(crate) states: Vec<TokenStream>,
    pub(crate) has_scratch: bool,
    pub(crate) in_place: Option<usize>,
    /// In place: the byte offsets of the overwritten input and of the output in `out` (the
    /// bytes of both).
    pub(crate) in_place_at: (usize, usize),
}

impl Call<'_, '_> {
    /// Emits `const OP<k>: <ty> = <p>;` (from `p`'s `Debug` form) and returns `&OP<k>`.
    pub fn params_as(&mut self, ty: TokenStream, p: &impl std::fmt::Debug) -> TokenStream {
        let name = format_ident!("{}OP{}", self.items.prefix, self.k);
        let value = debug_expr(&ty, &format!("{p:?}"));
        let doc = format!(" Parameters of op {} ({}).", self.k, self.op_name);
        self.items.push(quote! {
            #[doc = #doc]
            const #name: #ty = #value;
        });
        quote!(&#name)
    }

    /// [`Call::params_as`] with `::kiln::kernels::<module>::Params`.
    pub fn params(&mut self, module: &str, p: &impl std::fmt::Debug) -> TokenStream {
        let m = Ident::new(module, Span::call_site());
        self.params_as(quote!(::kiln::kernels::#m::Params), p)
    }

    /// Emits `static OP<k>_<WHAT>: [T; N]` and returns `&OP<k>_<WHAT>`.
    pub fn table<T: Copy + Into<i64>>(&mut self, what: &str, values: &[T]) -> TokenStream {
        self.items.table(self.k, what, values)
    }

    /// Emits `const OP<k>_BROADCAST` and returns `&OP<k>_BROADCAST`.
    pub fn broadcast(&mut self, b: &kiln_kernels::broadcast::Broadcast) -> TokenStream {
        let name = format_ident!("{}OP{}_BROADCAST", self.items.prefix, self.k);
        let ty = quote!(::kiln::kernels::broadcast::Broadcast);
        let value = debug_expr(&ty, &format!("{b:?}"));
        self.items.push(quote! {
            const #name: #ty = #value;
        });
        quote!(&#name)
    }

    /// Operand `slot` viewed as its element type (`Some(..)` or `None` if optional).
    pub fn input(&self, slot: usize) -> TokenStream {
        self.typed[slot].clone()
    }

    /// Every operand, typed, in slot order.
    pub fn inputs(&self) -> &[TokenStream] {
        &self.typed
    }

    /// Operand `slot`'s bytes.
    pub fn raw_input(&self, slot: usize) -> TokenStream {
        self.raw[slot].clone()
    }

    /// The output, viewed as its element type.
    pub fn output(&self) -> TokenStream {
        self.out.clone()
    }

    /// Every output, viewed as its element type, in order (operators with several outputs).
    pub fn outputs(&self) -> &[TokenStream] {
        &self.outs
    }

    /// Every output's bytes, in order.
    pub fn raw_outputs(&self) -> &[TokenStream] {
        &self.raw_outs
    }

    /// The state slices, viewed as their element types.
    pub fn states(&self) -> &[TokenStream] {
        &self.states
    }

    /// The operator's scratch slice, viewed as the output's element type (`raw`: as bytes).
    pub fn scratch(&self, raw: bool) -> Result<TokenStream> {
        if !self.has_scratch {
            return Err(Diagnostic::new(
                ErrorKind::InvalidPlan,
                format!("op {} ({}) has no scratch buffer", self.k, self.op_name),
            ));
        }
        let view = &self.out_view;
        Ok(if raw {
            quote!(scratch)
        } else {
            quote!(::kiln::runtime::#view(scratch))
        })
    }

    /// The operand slot the output overwrites, if the plan runs the operator in place.
    pub fn in_place(&self) -> Option<usize> {
        self.in_place
    }

    /// The diagnostic for a plan that runs in place a kernel without an in-place form (a bug
    /// in Kiln: the operator module declared an ability its kernel lacks).
    pub fn no_in_place_form(&self) -> Diagnostic {
        Diagnostic::new(
            ErrorKind::InvalidPlan,
            format!(
                "op {} ({}) is planned in place, but its kernel has no in-place form",
                self.k, self.op_name
            ),
        )
    }

    /// A kernel over its own input 0 through a scratch slice (the convolutions):
    /// `<module>::<function>(pre.., out, other operands.., scratch);`.
    pub fn over_input_with_scratch(
        &self,
        module: &str,
        function: &str,
        pre: &[TokenStream],
    ) -> Result<TokenStream> {
        if self.in_place != Some(0) {
            return Err(self.no_in_place_form());
        }
        let f = kernel_fn(module, function);
        let mut args = self.typed.clone();
        args[0] = self.out.clone();
        let scratch = self.scratch(false)?;
        Ok(quote!(#f(#(#pre,)* #(#args,)* #scratch);))
    }

    /// A narrowing kernel over its own input 0 (QUANTIZE float32 -> int8, ...):
    /// `<module>::<function>(pre.., out, input_at, output_at);`, `out` the bytes holding the
    /// input (from `input_at` to their end) and the output (from `output_at`), as the plan
    /// placed them.
    pub fn narrowing_in_place(
        &self,
        module: &str,
        function: &str,
        pre: &[TokenStream],
    ) -> Result<TokenStream> {
        if self.in_place != Some(0) || self.typed.len() != 1 {
            return Err(self.no_in_place_form());
        }
        let f = kernel_fn(module, function);
        let (input_at, output_at) = (u(self.in_place_at.0), u(self.in_place_at.1));
        let out = &self.raw_outs[0];
        Ok(quote!(#f(#(#pre,)* #out, #input_at, #output_at);))
    }

    /// For a narrowing kernel over its own input 0 that takes more operands than the input
    /// (the int8 LSTM): the output's view of the bytes of both, and the byte offsets of the
    /// input and of the output in them.
    pub fn narrowed(&self) -> Result<(TokenStream, TokenStream, TokenStream)> {
        if self.in_place != Some(0) {
            return Err(self.no_in_place_form());
        }
        let (input_at, output_at) = (u(self.in_place_at.0), u(self.in_place_at.1));
        Ok((self.out.clone(), quote!(#input_at), quote!(#output_at)))
    }

    /// `<module>::<function>(pre.., operands.., states.., out);`: the ordinary form.
    pub fn standard(
        &self,
        module: &str,
        function: &str,
        pre: &[TokenStream],
    ) -> Result<TokenStream> {
        self.standard_with(module, function, pre, &[])
    }

    /// [`Call::standard`] with more arguments after the output (e.g. a scratch slice).
    pub fn standard_with(
        &self,
        module: &str,
        function: &str,
        pre: &[TokenStream],
        after: &[TokenStream],
    ) -> Result<TokenStream> {
        if self.in_place.is_some() {
            return Err(self.no_in_place_form());
        }
        let f = kernel_fn(module, function);
        let (args, states, out) = (&self.typed, &self.states, &self.out);
        Ok(quote!(#f(#(#pre,)* #(#args,)* #(#states,)* #out #(, #after)*);))
    }

    /// An elementwise kernel: the ordinary form, or, in place, `<function>_in_place` (one
    /// input) or `<function>_in_place<slot + 1>` (two inputs) with the overwritten input's
    /// slice, mutable, in its place and no separate output.
    pub fn elementwise(
        &self,
        module: &str,
        function: &str,
        pre: &[TokenStream],
    ) -> Result<TokenStream> {
        let Some(slot) = self.in_place else {
            return self.standard(module, function, pre);
        };
        let name = if self.typed.len() == 1 {
            format!("{function}_in_place")
        } else {
            format!("{function}_in_place{}", slot + 1)
        };
        let f = kernel_fn(module, &name);
        let mut args = self.typed.clone();
        args[slot] = self.out.clone();
        Ok(quote!(#f(#(#pre,)* #(#args),*);))
    }
}
