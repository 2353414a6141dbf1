//! One kernel call in `invoke()`: the operands bound to arena slices (or weight statics),
//! the state and scratch slices, the kernel's statement through a [`Call`], the block around
//! it, and the kernel functions it calls (for the reproducibility header).

use super::{Emitter, elem, unsupported};
use crate::op::{Call, Operand, Step, u};
use kiln_planner::alias::OpMode;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::lifetimes::BufferOwner;
use kiln_planner::report::KernelUse;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The kernel functions a statement calls (`::kiln::kernels::<module>::<function>`, a
/// function's name being lower case), as `module::function`.
fn kernel_calls(tokens: &TokenStream, out: &mut Vec<String>) {
    use proc_macro2::TokenTree;
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let ident = |t: Option<&TokenTree>| match t {
        Some(TokenTree::Ident(i)) => Some(i.to_string()),
        _ => None,
    };
    let colon =
        |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == ':');
    for (i, t) in trees.iter().enumerate() {
        match t {
            TokenTree::Group(g) => kernel_calls(&g.stream(), out),
            TokenTree::Ident(k) if *k == "kernels" => {
                let at = |j: usize| trees.get(i + j);
                if let (true, true, Some(m), true, true, Some(f)) = (
                    colon(at(1)),
                    colon(at(2)),
                    ident(at(3)),
                    colon(at(4)),
                    colon(at(5)),
                    ident(at(6)),
                ) && f.starts_with(|c: char| c.is_ascii_lowercase())
                {
                    out.push(format!("{m}::{f}"));
                }
            }
            _ => {}
        }
    }
}

/// The names `out0, out1, ...` of a step's `n` outputs.
fn raw_outs_names(n: usize) -> Vec<TokenStream> {
    (0..n)
        .map(|j| {
            let name = format_ident!("out{}", j);
            quote!(#name)
        })
        .collect()
}

impl<'a> Emitter<'a> {
    /// Emits one kernel call: binds its operands to arena slices (or weight statics), asks
    /// the kernel for its statement, and wraps it in a block.
    pub(super) fn step(&mut self, step: &Step) -> Result<()> {
        if let Some(control) = step.control {
            return self.control(step, control);
        }
        let op = self.graph.op(step.op);
        let k = step.op.0;
        let mode = self.plan.mode(step.op);
        if mode.elided() {
            // A view or a concatenation of slices: the bytes are in place already.
            return Ok(());
        }
        // The kernel argument (operand slot) holding the overwritten input.
        let in_place = match mode {
            OpMode::InPlace { input } => {
                let t = op.input(input);
                let slot = step
                    .inputs
                    .iter()
                    .position(|o| o.tensor() == t && t.is_some());
                if slot.is_none() {
                    return Err(Diagnostic::new(
                        ErrorKind::InvalidPlan,
                        format!(
                            "op {k} is planned in place over an input its kernel does not read"
                        ),
                    ));
                }
                slot
            }
            _ => None,
        };
        // Operands: constants from flash, the rest from the arena (bound as in0, in1, ...).
        let mut spans = Vec::new();
        let mut names = Vec::new();
        let mut in_raw = Vec::new();
        let mut raw = Vec::new();
        let mut typed = Vec::new();
        let mut constants = Vec::new();
        for (slot, &input) in step.inputs.iter().enumerate() {
            if in_place == Some(slot) {
                // Overwritten by the output: passed as `out`.
                raw.push(TokenStream::new());
                typed.push(TokenStream::new());
                continue;
            }
            let Some(t) = input.tensor() else {
                raw.push(quote!(None));
                typed.push(quote!(None));
                continue;
            };
            let (_, view, _) = elem(self.tensor(t).dtype)?;
            let bytes = if self.tensor(t).is_constant() {
                let name = self.weight_name(t)?;
                constants.push(t);
                quote!(#name.bytes())
            } else {
                let (off, len) = self.buffer_of(t)?;
                in_raw.push((off, len));
                let (off, len) = (u(off), u(len));
                let name = format_ident!("in{}", names.len());
                spans.push(quote!((#off, #len)));
                names.push(name.clone());
                quote!(#name)
            };
            let view = quote!(::kiln::runtime::#view(#bytes));
            typed.push(match input {
                Operand::Optional(_) => quote!(Some(#view)),
                Operand::Tensor(_) => view,
            });
            raw.push(bytes);
        }
        let Some(output) = step.outputs.first() else {
            return Err(unsupported("an operator without outputs is not supported"));
        };
        let (_, _, out_view) = elem(self.tensor(*output).dtype)?;
        let out = quote!(::kiln::runtime::#out_view(out));
        // Several outputs (SPLIT, UNPACK): bound as out0, out1, ...; never in place.
        let many = step.outputs.len() > 1;
        if many && in_place.is_some() {
            return Err(Diagnostic::new(
                ErrorKind::InvalidPlan,
                format!("op {k} has several outputs and is planned in place"),
            ));
        }
        let mut outs = Vec::new();
        let mut raw_outs = Vec::new();
        let mut out_raw = Vec::new();
        for (j, &t) in step.outputs.iter().enumerate() {
            let (_, _, view) = elem(self.tensor(t).dtype)?;
            let name = if many {
                format_ident!("out{}", j)
            } else {
                format_ident!("out")
            };
            outs.push(quote!(::kiln::runtime::#view(#name)));
            raw_outs.push(quote!(#name));
            out_raw.push(self.buffer_of(t)?);
        }
        // Persistent state: slices of the state region, after the inputs.
        let mut state_views = Vec::new();
        let mut state_spans = Vec::new();
        for (i, &t) in step.states.iter().enumerate() {
            let (_, _, view) = elem(self.tensor(t).dtype)?;
            let p = self.persistent_of(t)?;
            let name = format_ident!("state{}", i);
            state_spans.push((u(p.0), u(p.0 + p.1), u(p.1)));
            state_views.push(quote!(::kiln::runtime::#view(#name)));
        }
        let st = &self.state_expr;
        let state_binding = match state_spans.as_slice() {
            [] => quote!(),
            [(a, b, _)] => quote!(let state0 = &mut #st[#a..#b];),
            [(a, _, la), (c, _, lc)] => quote! {
                let ([], state0, state1) = ::kiln::runtime::split2(&mut #st[..], [], [(#a, #la), (#c, #lc)]);
            },
            _ => {
                return Err(unsupported(
                    "at most two state tensors per operator are supported",
                ));
            }
        };
        let scratch = self
            .plan
            .buffers
            .iter()
            .find(|b| b.owner == BufferOwner::Scratch(step.op))
            .map(|b| (self.arena_base + b.offset, b.size));
        // In place, `out` covers the overwritten input and the output: the same bytes for
        // elementwise operators, the input's for a depthwise convolution (whose output is
        // their first part), both for a pointwise one (its input ends where they end) and for
        // a narrowing one (its output starts at most a few bytes after its input's start).
        let written = match in_place.and_then(|slot| step.inputs.get(slot)) {
            Some(input) => input.tensor().unwrap_or(*output),
            None => *output,
        };
        let (a0, alen) = self.buffer_of(written)?;
        let (c0, clen) = self.buffer_of(*output)?;
        let start = a0.min(c0);
        let written_span = (start, (a0 + alen).max(c0 + clen) - start);
        let call = {
            let mut call = Call {
                items: &mut self.items,
                k,
                op_name: op.kind.name(),
                typed,
                raw,
                out,
                out_view,
                outs,
                raw_outs,
                states: state_views,
                has_scratch: scratch.is_some(),
                in_place,
                in_place_at: (a0 - start, c0 - start),
            };
            step.kernel.emit(&mut call)?
        };
        let mut called = Vec::new();
        kernel_calls(&call, &mut called);
        for f in called {
            match self.kernel_uses.iter_mut().find(|u| u.kernel == f) {
                Some(u) if u.ops.last() != Some(&k) => u.ops.push(k),
                Some(_) => {}
                None => self.kernel_uses.push(KernelUse {
                    kernel: f,
                    ops: vec![k],
                }),
            }
        }
        for t in constants {
            self.weight_static(t)?;
        }
        let (off, len) = (u(written_span.0), u(written_span.1));
        let comment = format!(
            " op {k}: {} ({} -> t{}{})",
            op.kind.name(),
            step.inputs
                .iter()
                .filter_map(|o| o.tensor())
                .map(|t| format!("t{}", t.0))
                .collect::<Vec<_>>()
                .join(", "),
            step.outputs
                .iter()
                .map(|t| t.0.to_string())
                .collect::<Vec<_>>()
                .join(", t"),
            if written == *output {
                String::new()
            } else {
                format!(", in place over t{}", written.0)
            }
        );
        let binding = if !self.plan.regions.is_empty() {
            // The memory map: each operand from its region's arena.
            let ins: Vec<(TokenStream, (usize, usize))> = names
                .iter()
                .zip(&in_raw)
                .map(|(n, &span)| (quote!(#n), span))
                .collect();
            let mut outs: Vec<(TokenStream, (usize, usize))> = if many {
                raw_outs_names(step.outputs.len())
                    .into_iter()
                    .zip(out_raw)
                    .collect()
            } else {
                vec![(quote!(out), written_span)]
            };
            if let Some(span) = scratch {
                outs.push((quote!(scratch), span));
            }
            self.region_binding(&ins, &outs, many)?
        } else {
            match scratch {
                _ if many => {
                    // In address order, as `split_many` takes them.
                    let mut named: Vec<_> = raw_outs_names(step.outputs.len())
                        .into_iter()
                        .zip(out_raw.iter().copied())
                        .collect();
                    if let Some(span) = scratch {
                        named.push((quote!(scratch), span));
                    }
                    named.sort_by_key(|(_, (offset, _))| *offset);
                    let names_out = named.iter().map(|(n, _)| n);
                    let out_spans = named.iter().map(|(_, (o, l))| {
                        let (o, l) = (u(*o), u(*l));
                        quote!((#o, #l))
                    });
                    if named.len() == 2 {
                        // Two outputs: `split2`, as an output and its scratch (a shorter
                        // function than `split_many`'s walk where it is not inlined).
                        quote! {
                            let ([#(#names),*], #(#names_out),*) = ::kiln::runtime::split2(&mut *arena, [#(#spans),*], [#(#out_spans),*]);
                        }
                    } else {
                        quote! {
                            let ([#(#names),*], [#(#names_out),*]) = ::kiln::runtime::split_many(&mut *arena, [#(#spans),*], [#(#out_spans),*]);
                        }
                    }
                }
                None => quote! {
                    let ([#(#names),*], out) = ::kiln::runtime::split(&mut *arena, [#(#spans),*], (#off, #len));
                },
                Some((so, sl)) => {
                    let (so, sl) = (u(so), u(sl));
                    quote! {
                        let ([#(#names),*], out, scratch) = ::kiln::runtime::split2(&mut *arena, [#(#spans),*], [(#off, #len), (#so, #sl)]);
                    }
                }
            }
        };
        self.body_ops.push((k, op.kind.name()));
        self.body.push(quote! {
            #[doc = #comment]
            {
                #binding
                #state_binding
                #call
            }
        });
        Ok(())
    }
}
