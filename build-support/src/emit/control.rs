//! The emitter's control flow path: IF as `if`, WHILE as `loop`, CALL_ONCE behind a has-run
//! byte of the state, resource variables as copies to and from the state. A called subgraph
//! is one function, `subgraph_<s>(arena, state)`, written once however many places call it:
//! its steps over its own arena (offsets from 0), which a caller passes as the slice of its
//! arena the step's scratch is. Copies between the caller's tensors and the callee's inputs
//! and outputs are `copy_within` on the caller's arena (or from a weight static) around the
//! call: TFLM copies the same bytes.

use super::{Emitter, u};
use crate::op::{Control, Step};
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{Graph, TensorId};
use kiln_planner::lifetimes::BufferOwner;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

fn invalid(message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(ErrorKind::InvalidPlan, message)
}

/// Where a tensor's bytes are: in the arena (offset, size) or a weight static.
enum Place {
    Arena(usize, usize),
    Weights(TokenStream, usize),
    /// No bytes (a tensor nothing reads: its copy is skipped).
    Nowhere,
}

impl<'a> Emitter<'a> {
    /// A tensor of the subgraph being emitted.
    fn place(&mut self, t: TensorId) -> Result<Place> {
        let tensor = self.tensor(t);
        if tensor.is_constant() {
            let name = self.weight_static(t)?;
            return Ok(Place::Weights(quote!(#name.bytes()), tensor.bytes()));
        }
        Ok(match self.places.get(t.0).copied().flatten() {
            Some((_, 0)) | None => Place::Nowhere,
            Some((o, n)) => Place::Arena(self.arena_base + o, n),
        })
    }

    /// The statement copying `from`'s bytes to the arena at `to` (`to` of `n` bytes).
    fn copy(from: &Place, to: (usize, usize)) -> Result<TokenStream> {
        let (dst, n) = to;
        Ok(match *from {
            Place::Arena(src, m) => {
                if m != n {
                    return Err(invalid("a control flow copy between tensors of two sizes"));
                }
                if src == dst {
                    quote!()
                } else {
                    let (a, b, d) = (u(src), u(src + n), u(dst));
                    quote!(arena.copy_within(#a..#b, #d);)
                }
            }
            Place::Weights(ref w, m) => {
                if m != n {
                    return Err(invalid("a control flow copy between tensors of two sizes"));
                }
                let (a, b) = (u(dst), u(dst + n));
                quote!(arena[#a..#b].copy_from_slice(#w);)
            }
            Place::Nowhere => quote!(),
        })
    }

    /// The callee's tensors' places (at `base`): its inputs or outputs.
    fn callee_places(&self, s: usize, base: usize, list: &[TensorId]) -> Result<Vec<Place>> {
        let (g, c) = self.callee(s)?;
        let places = super::places(g, &c.plan);
        list.iter()
            .map(|&t| {
                let tensor = g.tensor(t);
                if tensor.is_constant() {
                    return Err(Diagnostic::unsupported(
                        "a subgraph input or output that is a constant is not supported",
                    )
                    .at_tensor(t.0, tensor.name.clone())
                    .in_subgraph(s));
                }
                Ok(match places.get(t.0).copied().flatten() {
                    Some((_, 0)) | None => Place::Nowhere,
                    Some((o, n)) => Place::Arena(base + o, n),
                })
            })
            .collect()
    }

    fn callee(&self, s: usize) -> Result<(&'a Graph, &'a crate::control::Callee)> {
        let (program, main) = (self.program, self.main);
        match (main.subgraph(s), program.callee(s)) {
            (Some(g), Some(c)) => Ok((g, c)),
            _ => Err(invalid(format!("subgraph {s} was not compiled"))),
        }
    }

    /// The function running subgraph `s`'s steps, written into the module the first time.
    fn callee_fn(&mut self, s: usize) -> Result<Ident> {
        let name = format_ident!("subgraph_{}", s);
        if self.emitted_subgraphs.contains(&s) {
            return Ok(name);
        }
        self.emitted_subgraphs.push(s);
        let (g, c) = self.callee(s)?;
        let prefix = std::mem::replace(&mut self.items.prefix, format!("SG{s}_"));
        let mut sub = Emitter {
            graph: g,
            plan: &c.plan,
            model_file: self.model_file.clone(),
            items: std::mem::take(&mut self.items),
            body: Vec::new(),
            body_ops: Vec::new(),
            weights: std::mem::take(&mut self.weights),
            weight_bytes: self.weight_bytes,
            places: super::places(g, &c.plan),
            kernel_uses: std::mem::take(&mut self.kernel_uses),
            program: self.program,
            subgraph: s,
            arena_base: 0,
            emitted_subgraphs: std::mem::take(&mut self.emitted_subgraphs),
            main: self.main,
            state_expr: quote!(state),
            has_state: self.has_state,
            used_regions: Vec::new(),
            reach: None,
            streamed: Vec::new(),
        };
        let result = c.steps.iter().try_for_each(|st| sub.step(st));
        self.items = std::mem::take(&mut sub.items);
        self.items.prefix = prefix;
        self.weights = std::mem::take(&mut sub.weights);
        self.weight_bytes = sub.weight_bytes;
        self.kernel_uses = std::mem::take(&mut sub.kernel_uses);
        self.emitted_subgraphs = std::mem::take(&mut sub.emitted_subgraphs);
        result?;
        let body = sub.body;
        let doc = format!(
            " Subgraph {s} ({} operators): its arena ({} bytes) is the scratch of the step \
             that calls it.",
            g.ops.len(),
            c.plan.arena_bytes
        );
        let state = if self.has_state {
            quote!(, state: &mut [u8])
        } else {
            quote!()
        };
        self.items.push(quote! {
            #[doc = #doc]
            #[allow(unused_variables, unused_doc_comments)]
            fn #name(arena: &mut [u8] #state) {
                #(#body)*
            }
        });
        Ok(name)
    }

    /// Runs subgraph `s` with its arena at `base` of the caller's on the caller's `inputs`,
    /// then copies its outputs to the caller's `outputs` (either list may be empty).
    fn call(
        &mut self,
        s: usize,
        base: usize,
        inputs: &[Place],
        outputs: &[(usize, usize)],
    ) -> Result<TokenStream> {
        let (g, c) = self.callee(s)?;
        let mut code = Vec::new();
        let to = self.callee_places(s, base, &g.inputs)?;
        for (from, to) in inputs.iter().zip(&to) {
            if let Place::Arena(o, n) = *to {
                code.push(Self::copy(from, (o, n))?);
            }
        }
        let f = self.callee_fn(s)?;
        let (a, b) = (u(base), u(base + c.plan.arena_bytes));
        let st = &self.state_expr;
        code.push(if self.has_state {
            quote!(#f(&mut arena[#a..#b], &mut #st[..]);)
        } else {
            quote!(#f(&mut arena[#a..#b]);)
        });
        let from = self.callee_places(s, base, &g.outputs)?;
        for (from, &to) in from.iter().zip(outputs) {
            code.push(Self::copy(from, to)?);
        }
        Ok(quote!(#(#code)*))
    }

    /// The arena bytes a `bool` lives at, as a condition (`arena[o] != 0`).
    fn condition(place: &Place) -> Result<TokenStream> {
        Ok(match place {
            Place::Arena(o, _) => {
                let o = u(*o);
                quote!(arena[#o] != 0)
            }
            Place::Weights(w, _) => quote!(#w[0] != 0),
            Place::Nowhere => return Err(invalid("a condition without bytes")),
        })
    }

    /// Writes a control flow or resource variable step.
    pub(super) fn control(&mut self, step: &Step, control: Control) -> Result<()> {
        let op = self.graph.op(step.op);
        let k = step.op.0;
        let scratch = self
            .plan
            .buffers
            .iter()
            .find(|b| b.owner == BufferOwner::Scratch(step.op))
            .map_or(0, |b| self.arena_base + b.offset);
        let mut inputs = Vec::new();
        for o in &step.inputs {
            let t = o
                .tensor()
                .ok_or_else(|| invalid("a control flow operand is missing"))?;
            inputs.push(self.place(t)?);
        }
        let mut outputs = Vec::new();
        for &t in &step.outputs {
            outputs.push(match self.place(t)? {
                Place::Arena(o, n) => (o, n),
                _ => (0, 0),
            });
        }
        let state = |e: &Self, i: usize| -> Result<(usize, usize)> {
            let t = *step
                .states
                .get(i)
                .ok_or_else(|| invalid("a variable is missing"))?;
            e.persistent_of(t)
        };
        let code = match control {
            Control::VarHandle => return Ok(()),
            Control::ReadVariable => {
                let (s, n) = state(self, 0)?;
                let (o, m) = outputs[0];
                if m != n {
                    return Err(invalid(
                        "READ_VARIABLE's output and variable differ in size",
                    ));
                }
                let (a, b, c, d) = (u(o), u(o + n), u(s), u(s + n));
                let st = &self.state_expr;
                quote!(arena[#a..#b].copy_from_slice(&#st[#c..#d]);)
            }
            Control::AssignVariable => {
                let (s, n) = state(self, 0)?;
                let (c, d) = (u(s), u(s + n));
                let st = &self.state_expr;
                match &inputs[0] {
                    Place::Arena(o, m) if *m == n => {
                        let (a, b) = (u(*o), u(o + n));
                        quote!(#st[#c..#d].copy_from_slice(&arena[#a..#b]);)
                    }
                    Place::Weights(w, m) if *m == n => {
                        quote!(#st[#c..#d].copy_from_slice(#w);)
                    }
                    _ => {
                        return Err(invalid(
                            "ASSIGN_VARIABLE's value and variable differ in size",
                        ));
                    }
                }
            }
            Control::If {
                then_subgraph,
                else_subgraph,
            } => {
                let cond = Self::condition(&inputs[0])?;
                let yes = self.call(then_subgraph, scratch, &inputs[1..], &outputs)?;
                let no = self.call(else_subgraph, scratch, &inputs[1..], &outputs)?;
                quote!(if #cond { #yes } else { #no })
            }
            Control::While { cond, body } => {
                // The loop variables live in the outputs: inputs first, then each round
                // the condition and the body read them and the body's outputs replace them.
                let mut init = Vec::new();
                for (from, &to) in inputs.iter().zip(&outputs) {
                    init.push(Self::copy(from, to)?);
                }
                let vars: Vec<Place> = outputs
                    .iter()
                    .map(|&(o, n)| {
                        if n == 0 {
                            Place::Nowhere
                        } else {
                            Place::Arena(o, n)
                        }
                    })
                    .collect();
                let run_cond = self.call(cond, scratch, &vars, &[])?;
                let (cg, _) = self.callee(cond)?;
                let flag = self.callee_places(cond, scratch, &cg.outputs)?;
                let go = Self::condition(&flag[0])?;
                let run_body = self.call(body, scratch, &vars, &outputs)?;
                quote! {
                    #(#init)*
                    loop {
                        #run_cond
                        if !(#go) {
                            break;
                        }
                        #run_body
                    }
                }
            }
            Control::CallOnce { init } => {
                let flag = self
                    .program
                    .once_flags
                    .iter()
                    .find(|f| f.0 == (self.subgraph, step.op))
                    .map(|f| u(f.1))
                    .ok_or_else(|| invalid("CALL_ONCE has no has-run byte"))?;
                let run = self.call(init, scratch, &[], &[])?;
                let st = &self.state_expr;
                quote! {
                    if #st[#flag] == 0 {
                        #run
                        #st[#flag] = 1;
                    }
                }
            }
        };
        let comment = format!(
            " op {k}: {} ({} -> {})",
            op.kind.name(),
            op.present_inputs()
                .map(|t| format!("t{}", t.0))
                .collect::<Vec<_>>()
                .join(", "),
            op.outputs
                .iter()
                .map(|t| format!("t{}", t.0))
                .collect::<Vec<_>>()
                .join(", "),
        );
        self.body_ops.push((k, op.kind.name()));
        self.body.push(quote! {
            #[doc = #comment]
            {
                #code
            }
        });
        Ok(())
    }
}
