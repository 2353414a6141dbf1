//! The emitter: lowered steps to Rust tokens. The only one; both front ends call it.
//!
//! Each [`Step`] becomes one kernel call with constant parameters and arena slices at
//! constant offsets; weights become aligned statics read from the model file with
//! `include_bytes!` (byte-string literals when no file is given). The output is
//! deterministic: names come from indices, and items are emitted in plan order.

use crate::control::Program;
use crate::lower;
use crate::op::{Call, Items, Operand, Step, ints, u};
use crate::options::{Budget, Options, expr_text};
use kiln_planner::alias::OpMode;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{DType, Graph, Quantization, TensorId, TensorKind};
use kiln_planner::lifetimes::BufferOwner;
use kiln_planner::plan::Plan;
use kiln_planner::report::{Header, KernelUse};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::BTreeMap;
use std::fmt::Write;

mod control;

/// Lowers and emits a planned graph, with a reproducibility header that does not know the
/// model's bytes (its sha256 reads `unknown`); [`crate::compile_tokens`] uses [`emit_with`].
pub fn emit(
    graph: &Graph,
    plan: &Plan,
    steps: Vec<Step>,
    options: &Options,
) -> Result<TokenStream> {
    let mut header = Header {
        model_sha256: "unknown".to_string(),
        kiln_version: crate::header::KILN_VERSION.to_string(),
        options: crate::header::recorded_options(options),
        alignment: plan.alignment,
        plan_variant: "as given".to_string(),
        kernel_variants: Vec::new(),
    };
    emit_with(
        graph,
        plan,
        steps,
        options,
        &mut header,
        &Program::default(),
    )
}

/// Lowers and emits a planned graph; fills `header.kernel_variants` with the kernel
/// functions the code calls and writes the header and the plan's summary into the docs of
/// `ModelIn`.
///
/// The shared part of every kernel call (operand bindings to arena slices and weight statics,
/// state and scratch slices, the block around the call) is written here; each kernel writes
/// its own statement through a [`Call`].
pub fn emit_with(
    graph: &Graph,
    plan: &Plan,
    steps: Vec<Step>,
    options: &Options,
    header: &mut Header,
    program: &Program,
) -> Result<TokenStream> {
    // The steps as lowered (any order), in plan order.
    let mut by_op: Vec<Option<Step>> = (0..graph.ops.len()).map(|_| None).collect();
    for s in steps {
        let i = s.op.0;
        by_op[i] = Some(s);
    }
    let steps: Vec<Step> = plan
        .order
        .iter()
        .map(|&id| {
            by_op[id.0].take().ok_or_else(|| {
                Diagnostic::new(
                    ErrorKind::InvalidPlan,
                    format!("op {} was not lowered", id.0),
                )
            })
        })
        .collect::<Result<_>>()?;
    let mut e = Emitter {
        graph,
        plan,
        model_file: options
            .model_file
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned()),
        items: Items::default(),
        body: Vec::new(),
        body_ops: Vec::new(),
        weights: BTreeMap::new(),
        weight_bytes: 0,
        places: places(graph, plan),
        kernel_uses: Vec::new(),
        program,
        subgraph: 0,
        arena_base: 0,
        emitted_subgraphs: Vec::new(),
        main: graph,
        state_expr: quote!(self.state),
        has_state: plan.persistent_bytes > 0,
        used_regions: vec![false; plan.regions.len()],
    };
    for step in &steps {
        e.step(step)?;
    }
    header.kernel_variants = std::mem::take(&mut e.kernel_uses);
    e.finish(options, header)
}

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

struct Emitter<'a> {
    graph: &'a Graph,
    plan: &'a Plan,
    /// The model file weights are read from (`include_bytes!`), if known.
    model_file: Option<String>,
    /// Consts and statics, in emission order, with the tables and their bytes.
    items: Items,
    /// Statements of `invoke()`.
    body: Vec<TokenStream>,
    /// Per statement of `body`: the operator's index in the model and its name.
    body_ops: Vec<(usize, &'a str)>,
    /// Weight statics emitted so far, by model buffer index.
    weights: BTreeMap<usize, Ident>,
    /// Bytes of the model's buffers emitted (`BUFFER_*`): those a kernel reads as they are
    /// (a fast kernel's folded bias or reordered filter replaces the model's buffer).
    weight_bytes: usize,
    /// Per tensor: its arena offset and size, if it has arena bytes.
    places: Vec<Option<(usize, usize)>>,
    /// The kernel functions called so far, each with its operators, in order of first call.
    kernel_uses: Vec<KernelUse>,
    /// The subgraphs control flow runs and the model's persistent layout.
    program: &'a Program,
    /// The subgraph being emitted (0: the main one) and where its arena starts in the
    /// model's (a control flow step's scratch); its items' names start with `items.prefix`.
    subgraph: usize,
    arena_base: usize,
    /// Subgraphs whose items (parameters, tables) are emitted already.
    emitted_subgraphs: Vec<usize>,
    /// The main graph (which holds the others).
    main: &'a Graph,
    /// The persistent region in statements: `self.state` in `invoke()`, `state` in a
    /// subgraph's function; whether the model has one.
    state_expr: TokenStream,
    has_state: bool,
    /// With a memory map: which regions' arenas the steps bind (`arena0`, `arena1`, ...).
    used_regions: Vec<bool>,
}

/// Where each tensor lives in the arena ([`Plan::tensor_places`]); a tensor without elements
/// has no buffer, and its (empty) bytes are anywhere.
fn places(graph: &Graph, plan: &Plan) -> Vec<Option<(usize, usize)>> {
    let mut place = plan.tensor_places(graph);
    for (p, t) in place.iter_mut().zip(&graph.tensors) {
        if p.is_none() && t.bytes() == 0 {
            *p = Some((0, 0));
        }
    }
    place
}

fn unsupported(message: impl Into<String>) -> Diagnostic {
    Diagnostic::unsupported(message)
}

/// Element type tokens and the byte-view functions for a dtype.
fn elem(dtype: DType) -> Result<(TokenStream, TokenStream, TokenStream)> {
    Ok(match dtype {
        DType::I8 => (quote!(i8), quote!(i8s), quote!(i8s_mut)),
        DType::I16 => (quote!(i16), quote!(i16s), quote!(i16s_mut)),
        DType::I32 => (quote!(i32), quote!(i32s), quote!(i32s_mut)),
        DType::F32 => (quote!(f32), quote!(f32s), quote!(f32s_mut)),
        DType::I64 => (quote!(i64), quote!(i64s), quote!(i64s_mut)),
        DType::U8 | DType::Bool => (quote!(u8), quote!(u8s), quote!(u8s_mut)),
        DType::U32 => (quote!(u32), quote!(u32s), quote!(u32s_mut)),
        DType::U64 => (quote!(u64), quote!(u64s), quote!(u64s_mut)),
        other => return Err(unsupported(format!("{other} tensors are not supported"))),
    })
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
    fn tensor(&self, t: TensorId) -> &'a kiln_planner::ir::Tensor {
        self.graph.tensor(t)
    }

    /// The name of a constant tensor's static, `BUFFER_<model buffer>`.
    fn weight_name(&self, t: TensorId) -> Result<Ident> {
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
    fn weight_static(&mut self, t: TensorId) -> Result<Ident> {
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

    /// Where variable `t` lives in the model's persistent region, and its size.
    fn persistent_of(&self, t: TensorId) -> Result<(usize, usize)> {
        let size = self.tensor(t).bytes();
        self.program
            .state_offset(self.subgraph, self.graph, self.plan, t)
            .map(|o| (o, size))
            .ok_or_else(|| {
                Diagnostic::new(
                    ErrorKind::InvalidPlan,
                    format!("variable {} has no place", t.0),
                )
            })
    }

    /// Where tensor `t` lives in the arena (its own buffer or its place in another's).
    fn buffer_of(&self, t: TensorId) -> Result<(usize, usize)> {
        let base = self.arena_base;
        self.places
            .get(t.0)
            .copied()
            .flatten()
            .map(|(o, n)| (base + o, n))
            .ok_or_else(|| {
                Diagnostic::new(
                    ErrorKind::InvalidPlan,
                    format!("tensor {} has no buffer", t.0),
                )
            })
    }

    /// With a memory map: the region holding `(offset, len)` of the plan's address space
    /// and the offset in that region.
    fn locate(&self, span: (usize, usize)) -> Result<(usize, usize)> {
        locate(self.plan, span)
    }

    /// With a memory map: binds inputs (shared) and outputs (exclusive, scratch included)
    /// to slices of their regions' arenas (`arena0`, `arena1`, ...): operands of one region
    /// as without regions (`split`, `split2`, `split_many`), of several by one `split_many`
    /// per region.
    fn region_binding(
        &mut self,
        ins: &[(TokenStream, (usize, usize))],
        outs: &[(TokenStream, (usize, usize))],
        many: bool,
    ) -> Result<TokenStream> {
        type Group = (
            Vec<TokenStream>,
            Vec<TokenStream>,
            Vec<TokenStream>,
            Vec<TokenStream>,
        );
        let mut groups: BTreeMap<usize, Group> = BTreeMap::new();
        for (i, (name, span)) in ins.iter().chain(outs).enumerate() {
            let (r, o) = self.locate(*span)?;
            let g = groups.entry(r).or_default();
            let spanned = {
                let (o, n) = (u(o), u(span.1));
                quote!((#o, #n))
            };
            if i < ins.len() {
                g.0.push(name.clone());
                g.1.push(spanned);
            } else {
                g.2.push(name.clone());
                g.3.push(spanned);
            }
        }
        let mut out = TokenStream::new();
        let single = groups.len() == 1;
        for (r, (in_names, in_spans, out_names, out_spans)) in groups {
            self.used_regions[r] = true;
            let arena = format_ident!("arena{}", r);
            out.extend(match out_names.len() {
                1 if single && !many => quote! {
                    let ([#(#in_names),*], #(#out_names)*) = ::kiln::runtime::split(&mut *#arena, [#(#in_spans),*], #(#out_spans)*);
                },
                2 if single && !many => quote! {
                    let ([#(#in_names),*], #(#out_names),*) = ::kiln::runtime::split2(&mut *#arena, [#(#in_spans),*], [#(#out_spans),*]);
                },
                _ => quote! {
                    let ([#(#in_names),*], [#(#out_names),*]) = ::kiln::runtime::split_many(&mut *#arena, [#(#in_spans),*], [#(#out_spans),*]);
                },
            });
        }
        Ok(out)
    }

    /// Emits one kernel call: binds its operands to arena slices (or weight statics), asks
    /// the kernel for its statement, and wraps it in a block.
    fn step(&mut self, step: &Step) -> Result<()> {
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
        let mut out_spans = Vec::new();
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
            let (off, len) = self.buffer_of(t)?;
            out_raw.push((off, len));
            let (off, len) = (u(off), u(len));
            out_spans.push(quote!((#off, #len)));
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
        // In place, `out` covers the overwritten input and the output: the same bytes for
        // elementwise operators, the input's for a depthwise convolution (whose output is
        // their first part), both for a pointwise one (its input ends where they end).
        let written = match in_place.and_then(|slot| step.inputs.get(slot)) {
            Some(input) => input.tensor().unwrap_or(*output),
            None => *output,
        };
        let (a0, alen) = self.buffer_of(written)?;
        let (c0, clen) = self.buffer_of(*output)?;
        let start = a0.min(c0);
        let written_span = (start, (a0 + alen).max(c0 + clen) - start);
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
                    let mut names_out = raw_outs_names(step.outputs.len());
                    if let Some((so, sl)) = scratch {
                        let (so, sl) = (u(so), u(sl));
                        out_spans.push(quote!((#so, #sl)));
                        names_out.push(quote!(scratch));
                    }
                    quote! {
                        let ([#(#names),*], [#(#names_out),*]) = ::kiln::runtime::split_many(&mut *arena, [#(#spans),*], [#(#out_spans),*]);
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

    /// The module items around the collected kernel calls.
    fn finish(self, options: &Options, header: &Header) -> Result<TokenStream> {
        // Flash for constants: the model's buffers emitted plus the tables of the steps.
        let flash_bytes = self.weight_bytes + self.items.constant_bytes;
        let g = self.graph;
        let plan = self.plan;
        let arena_bytes = u(plan.arena_bytes);
        let persistent_bytes = u(plan.persistent_bytes);
        let weights_bytes = u(self.weight_bytes);
        let n_in = u(g.inputs.len());
        let n_out = u(g.outputs.len());
        let align = format_ident!(
            "A{}",
            match plan.alignment {
                0..=4 => 4usize,
                5..=8 => 8,
                9..=16 => 16,
                17..=32 => 32,
                _ => 64,
            }
        );
        if plan.alignment > 64 {
            return Err(unsupported("alignments above 64 bytes are not supported")
                .expected_found("at most 64", plan.alignment.to_string()));
        }
        let mut io_items = Vec::new();
        let mut accessors = Vec::new();
        let mut in_arms = Vec::new();
        let mut out_arms = Vec::new();
        for (kind, list) in [("INPUT", &g.inputs), ("OUTPUT", &g.outputs)] {
            for (i, &t) in list.iter().enumerate() {
                let tensor = g.tensor(t);
                if tensor.kind != TensorKind::Activation {
                    // Constants live in flash and variables in the state region: neither
                    // is a model input or output in the arena.
                    return Err(unsupported(format!(
                        "a model {} must be an activation tensor, not a constant or a variable",
                        kind.to_lowercase()
                    ))
                    .at_tensor(t.0, tensor.name.clone()));
                }
                let (ty, view, view_mut) = elem(tensor.dtype)?;
                let (off, len) = self.buffer_of(t)?;
                let n = u(tensor.elements());
                let prefix = if list.len() == 1 {
                    kind.to_string()
                } else {
                    format!("{kind}{i}")
                };
                let shape_name = format_ident!("{}_SHAPE", prefix);
                let dtype_name = format_ident!("{}_DTYPE", prefix);
                let scale_name = format_ident!("{}_SCALE", prefix);
                let zp_name = format_ident!("{}_ZERO_POINT", prefix);
                let rank = u(tensor.shape.len());
                let dims: Vec<Literal> = tensor.shape.iter().map(|&d| u(d)).collect();
                let dtype = Ident::new(
                    match tensor.dtype {
                        DType::F32 => "F32",
                        DType::I8 => "I8",
                        DType::U8 => "U8",
                        DType::I16 => "I16",
                        DType::I32 => "I32",
                        DType::I64 => "I64",
                        DType::U32 => "U32",
                        DType::U64 => "U64",
                        _ => "Bool",
                    },
                    Span::call_site(),
                );
                let (scale, zp) = match &tensor.quant {
                    Quantization::PerTensor { scale, zero_point } => (*scale, *zero_point as i32),
                    _ => (0.0, 0),
                };
                let scale = Literal::f32_unsuffixed(scale);
                let zp = &ints(&[zp])[0];
                let what = format!(
                    "{} {i} `{}` (tensor {})",
                    kind.to_lowercase(),
                    tensor.name,
                    t.0
                );
                let docs = [
                    format!(" Shape of {what}."),
                    format!(" Element type of {what}."),
                    format!(
                        " Quantization scale of {what} (0 if not quantized, or quantized per channel)."
                    ),
                    format!(" Quantization zero point of {what}."),
                ];
                let [d0, d1, d2, d3] = &docs;
                io_items.push(quote! {
                    #[doc = #d0]
                    pub const #shape_name: [usize; #rank] = [#(#dims),*];
                    #[doc = #d1]
                    pub const #dtype_name: ::kiln::DType = ::kiln::DType::#dtype;
                    #[doc = #d2]
                    pub const #scale_name: f32 = #scale;
                    #[doc = #d3]
                    pub const #zp_name: i32 = #zp;
                });
                // `kiln::Quant` for int8/int16/uint8 tensors quantized per tensor (a
                // per-channel tensor has several scales: no `*_QUANT`, and `*_SCALE` is 0).
                let per_tensor = match (tensor.dtype, &tensor.quant) {
                    (DType::I8 | DType::I16 | DType::U8, Quantization::PerTensor { scale, .. }) => {
                        scale.is_finite() && *scale > 0.0
                    }
                    _ => false,
                };
                if per_tensor {
                    let quant_name = format_ident!("{}_QUANT", prefix);
                    let doc = format!(
                        " Quantization of {what}: `quantize` floats into it, `dequantize` its \
                         values, as TFLM's QUANTIZE and DEQUANTIZE do."
                    );
                    io_items.push(quote! {
                        #[doc = #doc]
                        pub const #quant_name: ::kiln::Quant<#ty> = ::kiln::Quant::new(#scale_name, #zp_name);
                    });
                }
                let lower = prefix.to_lowercase();
                let (r, off) = locate(plan, (off, len))?;
                let field = arena_field(plan, r);
                let (off, end) = (u(off), u(off + len));
                let index = u(i);
                if kind == "INPUT" {
                    let f = format_ident!("{}_mut", lower);
                    let doc = format!(
                        " Input {i}: `{}`, shape {:?}. Write it before every `invoke()`: the \
                         arena reuses its bytes once the model has read them.",
                        tensor.name, tensor.shape
                    );
                    accessors.push(quote! {
                        #[doc = #doc]
                        pub fn #f(&mut self) -> &mut [#ty; #n] {
                            ::kiln::runtime::#view_mut(&mut self.#field[#off..#end]).try_into().expect("planned size")
                        }
                    });
                    in_arms.push(quote!(#index => &mut self.#field[#off..#end],));
                } else {
                    let f = format_ident!("{}", lower);
                    let doc = format!(" Output {i}: `{}`, shape {:?}.", tensor.name, tensor.shape);
                    accessors.push(quote! {
                        #[doc = #doc]
                        pub fn #f(&self) -> &[#ty; #n] {
                            ::kiln::runtime::#view(&self.#field[#off..#end]).try_into().expect("planned size")
                        }
                    });
                    out_arms.push(quote!(#index => &self.#field[#off..#end],));
                }
            }
        }
        let items = &self.items.list;
        let body = &self.body;
        let model_items = model_items(options, plan, g, &align, self.program)?;
        let take_doc = [
            " The model over its static arena, the first time only, with its state".to_string(),
            " reset. (Host tests that make a model in every test, and firmware that".to_string(),
            format!(
                " shares one arena between models, use [`ModelIn::{}`].)",
                if plan.regions.is_empty() {
                    "with_arena"
                } else {
                    "with_regions"
                }
            ),
        ];
        let mut with_arena_doc = vec![
            " The model over `arena`, a buffer of the caller's: at least [`ARENA_BYTES`] long,",
            " aligned at least like [`Arena`] ([`ARENA_ALIGN`] bytes); both are checked when the",
            " program is built, by the buffer's type (`cargo build`; `cargo check` does not).",
            " One buffer can serve several models run one after another, sized by",
            " `kiln::max` of their `ARENA_BYTES`; the arena holds nothing between",
            " `invoke()` calls, so write the inputs after making the model. Works on the host",
            " too, as many times as tests want.",
        ];
        if !plan.regions.is_empty() {
            with_arena_doc = vec![
                " The model over `arena0`, `arena1`, ...: buffers of the caller's, one per region",
                " of the memory map ([`REGIONS`]), each at least its [`ARENA0_BYTES`], ... long and",
                " aligned at least as its [`ARENA0_ALIGN`], ... (the [`Arena0`], ... types are),",
                " checked when the program is built. Which memory each buffer is in is the",
                " caller's choice (e.g. statics with `#[link_section]`). The arenas hold nothing",
                " between `invoke()` calls, so write the inputs after making the model. Works on",
                " the host too, as many times as tests want.",
            ];
        }
        if plan.persistent_bytes > 0 {
            with_arena_doc.extend([
                "",
                " `state` is this model's own (never another model's): used as it is, so that",
                " it carries over between models made over it; [`State::new`] is reset, and so",
                " is [`ModelIn::reset`].",
            ]);
        }
        let ModelItems {
            statics,
            state_field,
            state_take,
            state_param,
            state_borrow,
            reset_body,
        } = &model_items;
        // Operators without code: views, and concatenations whose inputs are written in place.
        let mut elided_docs = Vec::new();
        for op in &g.ops {
            let what = match plan.mode(op.id) {
                OpMode::View => "a view: its output is its input's bytes",
                OpMode::ConcatSlices => "its inputs were written into their slices of its output",
                OpMode::SplitSlices => "its outputs are slices of its input's bytes",
                _ => continue,
            };
            if elided_docs.is_empty() {
                elided_docs.push(String::new());
                elided_docs.push(" Operators without code here:".to_string());
            }
            elided_docs.push(format!(" - op {} ({}): {what}.", op.id.0, op.kind.name()));
        }
        let budget = budget_checks(options, plan, g, flash_bytes, self.weight_bytes)?;
        // The weight statics read the model file, so the crate rebuilds when it changes; a
        // model without weights gets a marker that does (its length only: a `&[u8]` const of
        // a large file costs the compiler several copies of it).
        let rebuild_marker = match &self.model_file {
            Some(file) if self.weights.is_empty() => quote! {
                const _: usize = ::core::include_bytes!(#file).len();
            },
            _ => quote!(),
        };
        let hook_index: Vec<Literal> = self.body_ops.iter().map(|&(k, _)| u(k)).collect();
        let hook_name: Vec<&str> = self.body_ops.iter().map(|&(_, n)| n).collect();
        let n_ops = u(self.body_ops.len());
        let tensor_bytes = if options.plan.preserve_all_tensors {
            tensor_bytes_fn(g, plan, &self.places)?
        } else {
            quote!()
        };
        let arena_binding = if body.is_empty() {
            quote!()
        } else if plan.regions.is_empty() {
            quote!(let arena = &mut self.arena[..];)
        } else {
            let used = (0..plan.regions.len()).filter(|&r| self.used_regions[r]);
            let fields: Vec<Ident> = used.map(|r| format_ident!("arena{}", r)).collect();
            quote!(#(let #fields = &mut self.#fields[..];)*)
        };
        let regions = region_items(plan, state_param, state_borrow)?;
        let RegionItems {
            fields: arena_fields,
            consts: arena_consts,
            take: arena_take,
            with: with_arena_fn,
        } = &regions;
        let model_docs = model_docs(
            g,
            plan,
            options,
            header,
            self.weight_bytes,
            flash_bytes,
            self.program,
        );
        let module = quote! {
            #(#[doc = #model_docs])*
            pub struct ModelIn<'a> {
                #arena_fields
                #state_field
            }

            /// The compiled model over its static arena: there is one, [`Model::take`] hands
            /// it out once.
            pub type Model = ModelIn<'static>;

            /// Bytes of the activation arena (scratch included).
            pub const ARENA_BYTES: usize = #arena_bytes;
            /// Bytes of state kept between `invoke()` calls (LSTM/SVDF variables).
            pub const PERSISTENT_BYTES: usize = #persistent_bytes;
            #arena_consts
            /// Bytes of the model's constant buffers (weights, biases) in flash, as the
            /// kernels read them; the tables Kiln derives from them (per-channel
            /// multipliers, folded biases, reordered filters) are not included.
            pub const WEIGHTS_BYTES: usize = #weights_bytes;
            /// The operators `invoke()` runs, in order: (index in the model, name). Views and
            /// slices, which have no code, are not among them.
            pub const OPERATORS: [(usize, &str); #n_ops] = [#((#hook_index, #hook_name)),*];
            /// Number of model inputs.
            pub const INPUTS: usize = #n_in;
            /// Number of model outputs.
            pub const OUTPUTS: usize = #n_out;
            #(#io_items)*
            #rebuild_marker

            #statics

            #(#items)*

            impl Model {
                #(#[doc = #take_doc])*
                pub fn take() -> Option<Model> {
                    let mut model = ModelIn {
                        #arena_take
                        #state_take
                    };
                    model.reset();
                    Some(model)
                }
            }

            impl<'a> ModelIn<'a> {
                #(#[doc = #with_arena_doc])*
                #with_arena_fn

                /// Resets the state kept between calls, as TFLM does: int8 state to its zero
                /// point, other state to zero (a no-op for stateless models).
                pub fn reset(&mut self) {
                    #reset_body
                }

                /// Runs the model once: inputs to outputs.
                #(#[doc = #elided_docs])*
                #[allow(unused_doc_comments)]
                pub fn invoke(&mut self) {
                    #arena_binding
                    #(#body)*
                }

                /// [`ModelIn::invoke`] with `hook(op_index, op_name, phase)` called before
                /// and after each operator's kernel ([`OPERATORS`] lists them in this order),
                /// e.g. to read a cycle counter or trace. `invoke()` itself has no hook.
                #[allow(unused_doc_comments)]
                pub fn invoke_with(
                    &mut self,
                    mut hook: impl FnMut(usize, &'static str, ::kiln::runtime::Phase),
                ) {
                    #arena_binding
                    #(
                        hook(#hook_index, #hook_name, ::kiln::runtime::Phase::Before);
                        #body
                        hook(#hook_index, #hook_name, ::kiln::runtime::Phase::After);
                    )*
                }

                #tensor_bytes

                #(#accessors)*

                /// The raw bytes of input `i` (little-endian). Panics if `i >= INPUTS`.
                pub fn input_bytes_mut(&mut self, i: usize) -> &mut [u8] {
                    match i {
                        #(#in_arms)*
                        _ => panic!("no such input"),
                    }
                }

                /// The raw bytes of output `i` (little-endian). Panics if `i >= OUTPUTS`.
                pub fn output_bytes(&self, i: usize) -> &[u8] {
                    match i {
                        #(#out_arms)*
                        _ => panic!("no such output"),
                    }
                }
            }
        };
        // Every item in one module whose name says what a clash means: two models in one
        // module give one error ("the name `...` is defined multiple times") instead of one
        // per item. Its items are re-exported; a firmware that uses only some of them gets
        // no dead-code warnings. The budget checks stay outside, where the user's budget
        // expression resolves.
        let inner = Ident::new(MODULE, Span::call_site());
        Ok(quote! {
            #[doc(hidden)]
            #[allow(dead_code)]
            mod #inner {
                #module
            }
            #[allow(unused_imports)]
            pub use self::#inner::*;
            #budget
        })
    }
}

/// The docs of `ModelIn`: what it is, the plan's summary and the reproducibility header.
fn model_docs(
    g: &Graph,
    plan: &Plan,
    options: &Options,
    header: &Header,
    weights: usize,
    flash: usize,
    program: &Program,
) -> Vec<String> {
    let mut d: Vec<String> = [
        " The compiled model over an arena it borrows for `'a`: its own static one",
        " ([`Model`], from [`Model::take`]) or a buffer of the caller's",
        " ([`ModelIn::with_arena`]).",
        "",
        " # Plan",
        "",
    ]
    .iter()
    .map(|l| l.to_string())
    .collect();
    if !plan.regions.is_empty() {
        d[0] = " The compiled model over arenas it borrows for `'a`, one per region of the memory"
            .to_string();
        d[1] = " map: its own static ones ([`Model`], from [`Model::take`]) or buffers of the"
            .to_string();
        d[2] = " caller's ([`ModelIn::with_regions`]).".to_string();
    }
    d.push(format!(
        " - arena: {} bytes ([`ARENA_BYTES`]); lower bound {} bytes (the most bytes live at \
         one step), gap {} bytes{}",
        plan.arena_bytes,
        plan.lower_bound_bytes,
        plan.gap_bytes(),
        if plan.placement_optimal {
            ", placement optimal"
        } else {
            ""
        }
    ));
    for (r, region) in plan.regions.iter().enumerate() {
        let n = plan.buffers.iter().filter(|b| b.region == r).count();
        d.push(format!(
            " - region {r} `{}`: {} of {} bytes ([`ARENA{r}_BYTES`]), {n} buffer{}",
            region.section,
            region.bytes,
            region.size,
            if n == 1 { "" } else { "s" }
        ));
    }
    if let Some(step) = plan.peak_step() {
        let op = g.op(plan.order[step]);
        d.push(format!(
            " - peak: op {} ({}) at step {step}, {} bytes live",
            op.id.0,
            op.kind.name(),
            plan.live_bytes[step]
        ));
    }
    d.push(format!(
        " - persistent: {} bytes ([`PERSISTENT_BYTES`]); weights: {weights} bytes \
         ([`WEIGHTS_BYTES`]), {flash} bytes of flash with Kiln's tables",
        plan.persistent_bytes
    ));
    let called: Vec<String> = (1..=g.subgraphs.len())
        .filter_map(|s| {
            let c = program.callee(s)?;
            Some(format!(
                "{s} ({} ops, arena {} B)",
                c.steps.len(),
                c.plan.arena_bytes
            ))
        })
        .collect();
    if !called.is_empty() {
        d.push(format!(
            " - subgraphs run by control flow, each in its caller's scratch: {}",
            called.join(", ")
        ));
    }
    let ram = plan.arena_bytes + plan.persistent_bytes;
    match (&options.ram_budget, &options.reserved_ram) {
        (Some(Budget::Bytes(b)), Some(Budget::Bytes(r))) => d.push(format!(
            " - RAM: arena + persistent + reserved = {ram} + {r} = {} of the budget's {b} bytes",
            ram + r
        )),
        (Some(Budget::Bytes(b)), None) => {
            d.push(format!(" - RAM: {ram} of the budget's {b} bytes"));
        }
        _ => {}
    }
    d.extend(["", " # Reproducibility", ""].map(String::from));
    d.push(format!(" - model sha256: `{}`", header.model_sha256));
    d.push(format!(" - Kiln {}", header.kiln_version));
    d.push(format!(" - options: `{}`", header.options.line()));
    d.push(format!(" - alignment: {} bytes", header.alignment));
    d.push(format!(" - plan: {}", header.plan_variant));
    d.push(" - kernels:".to_string());
    for k in &header.kernel_variants {
        d.push(format!(
            "   - `{}` x{} (op{} {})",
            k.kernel,
            k.ops.len(),
            if k.ops.len() > 1 { "s" } else { "" },
            k.ops
                .iter()
                .map(|o| o.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    d
}

/// The region of `plan`'s memory map holding `(offset, len)` of its address space, and the
/// offset in that region; without regions, region 0 at the same offset.
fn locate(plan: &Plan, (off, len): (usize, usize)) -> Result<(usize, usize)> {
    if plan.regions.is_empty() {
        return Ok((0, off));
    }
    plan.regions
        .iter()
        .position(|r| r.base <= off && off + len <= r.base + r.bytes)
        .map(|r| (r, off - plan.regions[r].base))
        .ok_or_else(|| {
            Diagnostic::new(
                ErrorKind::InvalidPlan,
                format!("bytes [{off}, {}) lie in no region", off + len),
            )
        })
}

/// The arena field holding region `r`: `arena` without regions, `arena<r>` with them.
fn arena_field(plan: &Plan, r: usize) -> Ident {
    if plan.regions.is_empty() {
        format_ident!("arena")
    } else {
        format_ident!("arena{}", r)
    }
}

/// The `kiln::runtime::align` type of an alignment (4 to 64 bytes).
fn align_ident(bytes: usize) -> Ident {
    format_ident!(
        "A{}",
        match bytes {
            0..=4 => 4usize,
            5..=8 => 8,
            9..=16 => 16,
            17..=32 => 32,
            _ => 64,
        }
    )
}

/// The module the generated items live in (re-exported into the caller's module).
pub const MODULE: &str = "kiln_model_put_each_include_model_in_its_own_module";

/// `tensor_bytes(t)` of debug mode (`preserve_all_tensors`): every activation's bytes in the
/// arena (each its own, kept to the end of the run) and every variable's in the state.
fn tensor_bytes_fn(
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

/// The parts of the generated module that differ with a memory map: `ModelIn`'s arena
/// fields, the consts and types of the arena (per region with regions), the arena fields'
/// values in `take()`, and the signature and body of `with_arena` (`with_regions` with
/// regions, one buffer per region).
struct RegionItems {
    fields: TokenStream,
    consts: TokenStream,
    take: TokenStream,
    with: TokenStream,
}

fn region_items(
    plan: &Plan,
    state_param: &TokenStream,
    state_borrow: &TokenStream,
) -> Result<RegionItems> {
    let align = align_ident(plan.alignment);
    let align_bytes = u(plan.alignment.next_power_of_two().clamp(4, 64));
    if plan.regions.is_empty() {
        return Ok(RegionItems {
            fields: quote!(arena: &'a mut [u8; ARENA_BYTES],),
            consts: quote! {
                /// Alignment in bytes of the arena (and of its offsets): the least a buffer
                /// given to [`ModelIn::with_arena`] needs.
                pub const ARENA_ALIGN: usize = #align_bytes;
                /// A buffer for this model's arena, for [`ModelIn::with_arena`].
                pub type Arena = ::kiln::runtime::Aligned<::kiln::runtime::align::#align, ARENA_BYTES>;
            },
            take: quote!(arena: &mut ARENA.take()?.bytes,),
            with: quote! {
                pub fn with_arena<A: ::kiln::runtime::Alignment, const N: usize>(
                    arena: &'a mut ::kiln::runtime::Aligned<A, N>,
                    #state_param
                ) -> Self {
                    ModelIn {
                        arena: arena.lend::<ARENA_BYTES, ARENA_ALIGN>(),
                        #state_borrow
                    }
                }
            },
        });
    }
    let mut fields = TokenStream::new();
    let mut consts = TokenStream::new();
    let mut take = TokenStream::new();
    let mut params = Vec::new();
    let mut lends = Vec::new();
    let mut generics = Vec::new();
    let mut listed = Vec::new();
    for (r, region) in plan.regions.iter().enumerate() {
        if region.align > 64 {
            return Err(unsupported("alignments above 64 bytes are not supported")
                .expected_found("at most 64", region.align.to_string()));
        }
        let field = format_ident!("arena{}", r);
        let bytes = format_ident!("ARENA{}_BYTES", r);
        let align_c = format_ident!("ARENA{}_ALIGN", r);
        let ty = format_ident!("Arena{}", r);
        let stat = format_ident!("ARENA{}", r);
        let (a_ty, n) = (format_ident!("A{}", r), format_ident!("N{}", r));
        let a = align_ident(region.align);
        let (used, size, al) = (
            u(region.bytes),
            u(region.size),
            u(region.align.clamp(4, 64)),
        );
        let sec = &region.section;
        let docs = [
            format!(
                " Bytes of region {r} (`{sec}`, fastest first) the plan uses, of the {} given.",
                region.size
            ),
            format!(" Alignment in bytes of region {r} (`{sec}`) and of its offsets."),
            format!(" A buffer for region {r} (`{sec}`), for [`ModelIn::with_regions`]."),
        ];
        let [d0, d1, d2] = &docs;
        fields.extend(quote!(#field: &'a mut [u8; #bytes],));
        consts.extend(quote! {
            #[doc = #d0]
            pub const #bytes: usize = #used;
            #[doc = #d1]
            pub const #align_c: usize = #al;
            #[doc = #d2]
            pub type #ty = ::kiln::runtime::Aligned<::kiln::runtime::align::#a, #bytes>;
        });
        take.extend(quote!(#field: &mut #stat.take()?.bytes,));
        generics.push(quote!(#a_ty: ::kiln::runtime::Alignment, const #n: usize));
        params.push(quote!(#field: &'a mut ::kiln::runtime::Aligned<#a_ty, #n>,));
        lends.push(quote!(#field: #field.lend::<#bytes, #align_c>(),));
        listed.push(quote!((#sec, #used, #size)));
    }
    let n_regions = u(plan.regions.len());
    consts.extend(quote! {
        /// The memory map, fastest first: per region its link section, the bytes the plan
        /// uses of it ([`ARENA0_BYTES`], ...) and the bytes it was given.
        pub const REGIONS: [(&str, usize, usize); #n_regions] = [#(#listed),*];
    });
    Ok(RegionItems {
        fields,
        consts,
        take,
        with: quote! {
            pub fn with_regions<#(#generics),*>(
                #(#params)*
                #state_param
            ) -> Self {
                ModelIn {
                    #(#lends)*
                    #state_borrow
                }
            }
        },
    })
}

/// The pieces of the generated module that own the arena and the state.
struct ModelItems {
    /// `static ARENA` (and `STATE`), in the link section if one is given, and `State`.
    statics: TokenStream,
    /// `ModelIn`'s state field, its value in `take()`, `with_arena`'s parameter and value.
    state_field: TokenStream,
    state_take: TokenStream,
    state_param: TokenStream,
    state_borrow: TokenStream,
    /// The body of `reset()`.
    reset_body: TokenStream,
}

/// The arena and state statics (in `options.link_section` if given: their bytes in that
/// section, zeroed when taken, the take-once flags in ordinary RAM), the `State` type of a
/// stateful model, and the state's part of `ModelIn`.
fn model_items(
    options: &Options,
    plan: &Plan,
    g: &Graph,
    align: &Ident,
    program: &Program,
) -> Result<ModelItems> {
    let a = quote!(::kiln::runtime::align::#align);
    let section = match options.link_section.as_deref() {
        Some(s) if s.trim().is_empty() || s.contains(char::is_whitespace) => {
            return Err(unsupported("`link_section` must name a section")
                .expected_found("a section name such as `.sram2`", format!("{s:?}")));
        }
        s => s,
    };
    let placed_in = |name: Ident, size: TokenStream, section: Option<&str>, a: &TokenStream| {
        match section {
            None => quote! {
                static #name: ::kiln::runtime::Arena<#a, #size> = ::kiln::runtime::Arena::new();
            },
            Some(sec) => quote! {
                static #name: ::kiln::runtime::PlacedArena<#a, #size> = {
                    #[unsafe(link_section = #sec)]
                    static CELL: ::kiln::runtime::ArenaCell<#a, #size> = ::kiln::runtime::ArenaCell::new();
                    // SAFETY: the one arena over `CELL`, which nothing outside this block names.
                    unsafe { ::kiln::runtime::PlacedArena::new(&CELL) }
                };
            },
        }
    };
    let placed = |name: Ident, size: TokenStream| placed_in(name, size, section, &a);
    // With a memory map, one static per region in its section (`link_section`, if given,
    // places the state alone).
    let arena = if plan.regions.is_empty() {
        placed(format_ident!("ARENA"), quote!(ARENA_BYTES))
    } else {
        let mut all = TokenStream::new();
        for (r, region) in plan.regions.iter().enumerate() {
            let ra = align_ident(region.align);
            all.extend(placed_in(
                format_ident!("ARENA{}", r),
                {
                    let bytes = format_ident!("ARENA{}_BYTES", r);
                    quote!(#bytes)
                },
                Some(&region.section),
                &quote!(::kiln::runtime::align::#ra),
            ));
        }
        all
    };
    if plan.persistent_bytes == 0 {
        return Ok(ModelItems {
            statics: arena,
            state_field: quote!(),
            state_take: quote!(),
            state_param: quote!(),
            state_borrow: quote!(),
            reset_body: quote!(),
        });
    }
    let state = placed(format_ident!("STATE"), quote!(PERSISTENT_BYTES));
    let fills: Vec<_> = plan
        .persistent
        .iter()
        .map(|p| {
            (
                u(p.offset),
                u(p.offset + p.size),
                Literal::u8_unsuffixed(lower::reset_byte(g, p.tensor)),
            )
        })
        .chain(
            program
                .fills
                .iter()
                .map(|&(o, n, v)| (u(o), u(o + n), Literal::u8_unsuffixed(v))),
        )
        .collect();
    let resets = fills
        .iter()
        .map(|(a, b, v)| quote!(self.state[#a..#b].fill(#v);));
    let const_fills = fills
        .iter()
        .map(|(a, b, v)| quote!(::kiln::runtime::fill(&mut s.bytes, #a, #b, #v);));
    Ok(ModelItems {
        statics: quote! {
            #arena
            #state
            /// The state a model kept between `invoke()` calls (LSTM/SVDF variables), for
            /// [`ModelIn::with_arena`]: one per model, never shared with another model.
            pub struct State(::kiln::runtime::Aligned<#a, PERSISTENT_BYTES>);

            impl State {
                /// A reset state, as [`ModelIn::reset`] leaves it.
                #[allow(clippy::new_without_default)]
                pub const fn new() -> State {
                    let mut s = ::kiln::runtime::Aligned::new();
                    #(#const_fills)*
                    State(s)
                }
            }
        },
        state_field: quote!(state: &'a mut [u8; PERSISTENT_BYTES],),
        state_take: quote!(state: &mut STATE.take()?.bytes,),
        state_param: quote!(state: &'a mut State,),
        state_borrow: quote!(state: &mut state.0.bytes,),
        reset_body: quote!(#(#resets)*),
    })
}

/// The largest tensors live at the peak step, for budget messages.
fn peak_summary(plan: &Plan, graph: &Graph) -> String {
    let Some(step) = plan.peak_step() else {
        return String::new();
    };
    let op = graph.op(plan.order[step]);
    let mut live: Vec<_> = plan
        .buffers
        .iter()
        .filter(|b| b.first <= step && step <= b.last)
        .collect();
    live.sort_by_key(|b| std::cmp::Reverse(b.size));
    let mut s = format!("peak at op {} ({}): ", op.id.0, op.kind.name());
    for (i, b) in live.iter().take(3).enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let name = match b.owner {
            BufferOwner::Tensor(t) => format!("`{}`", graph.tensor(t).name),
            BufferOwner::Scratch(o) => format!("scratch of op {}", o.0),
        };
        let _ = write!(s, "{name} {} B", b.size);
    }
    s
}

/// One piece of a budget message: text, or a number the compiler computes.
enum Part {
    Text(String),
    Number(TokenStream),
}

/// Budget checks: literal budgets are checked now; others become `const` assertions.
///
/// RAM counts `options.reserved_ram` (the firmware's own RAM) with the arena and the state.
fn budget_checks(
    options: &Options,
    plan: &Plan,
    graph: &Graph,
    flash: usize,
    weights: usize,
) -> Result<TokenStream> {
    let mut out = TokenStream::new();
    let prefix = options
        .model_name
        .as_ref()
        .map_or(String::new(), |n| format!("{n}: "));
    let mut peak = peak_summary(plan, graph);
    if !graph.row_windows.is_empty() {
        // The smallest plan Kiln found is tiled: say so, and how much recomputation it
        // allowed itself.
        peak = format!(
            "the smallest plan within {} % extra MACs, with the first operators run in strips \
             of rows; {peak}",
            options.tiling.max_extra_macs_percent
        );
    }
    // RAM: arena, state and what the firmware reserves, against a budget.
    if let Some(budget) = &options.ram_budget {
        ram_check(options, plan, budget, &prefix, &peak, &mut out)?;
    }
    // Flash: weights and constants, against a budget.
    let flash_detail = format!("weights {weights} B + constants {} B", flash - weights);
    match &options.flash_budget {
        None => {}
        Some(Budget::Bytes(b)) if flash > *b => {
            return Err(Diagnostic::new(
                ErrorKind::OverFlashBudget,
                format!(
                    "the model needs {flash} bytes of flash, over the flash budget of {b} bytes \
                     by {} bytes ({flash_detail})",
                    flash - b
                ),
            ));
        }
        Some(Budget::Bytes(_)) => {}
        Some(Budget::Expr(expr)) => {
            let need = u(flash);
            out.extend(const_budget_check(
                expr,
                &quote!(#need),
                vec![
                    Part::Text(format!(
                        "{prefix}the model needs {flash} bytes of flash, over the flash \
                         budget `{}` of ",
                        expr_text(expr)
                    )),
                    Part::Number(quote!(__KILN_BUDGET)),
                    Part::Text(" bytes by ".into()),
                    Part::Number(quote!(__KILN_NEED - __KILN_BUDGET)),
                    Part::Text(format!(" bytes ({flash_detail})")),
                ],
            ));
        }
    }
    Ok(out)
}

/// The RAM budget's check (see [`budget_checks`]), appended to `out` when it is left to the
/// compiler.
fn ram_check(
    options: &Options,
    plan: &Plan,
    budget: &Budget,
    prefix: &str,
    peak: &str,
    out: &mut TokenStream,
) -> Result<()> {
    let ram = plan.arena_bytes + plan.persistent_bytes;
    let inner = Ident::new(MODULE, Span::call_site());
    let ram_detail = format!(
        "arena {} B + persistent {} B",
        plan.arena_bytes, plan.persistent_bytes
    );
    match (budget, &options.reserved_ram) {
        (Budget::Bytes(b), None) if ram > *b => Err(Diagnostic::new(
            ErrorKind::OverRamBudget,
            format!(
                "the model needs {ram} bytes of RAM, over the RAM budget of {b} bytes by {} \
                 bytes ({ram_detail}; {peak})",
                ram - b
            ),
        )),
        (Budget::Bytes(b), Some(Budget::Bytes(r))) if ram.saturating_add(*r) > *b => {
            let need = ram.saturating_add(*r);
            Err(Diagnostic::new(
                ErrorKind::OverRamBudget,
                format!(
                    "the model and the reserved RAM need {need} bytes, over the RAM budget of \
                     {b} bytes by {} bytes ({ram_detail} + reserved_ram {r} B; the model's \
                     {ram} B leave {} B of the budget for the firmware; {peak})",
                    need - b,
                    b.saturating_sub(ram)
                ),
            ))
        }
        (Budget::Bytes(_), None | Some(Budget::Bytes(_))) => Ok(()),
        (budget, reserved) => {
            let model_need = quote!(self::#inner::ARENA_BYTES + self::#inner::PERSISTENT_BYTES);
            let budget_expr = match budget {
                Budget::Bytes(b) => {
                    let b = u(*b);
                    quote!(#b)
                }
                Budget::Expr(e) => e.clone(),
            };
            let budget_text = match budget {
                Budget::Bytes(_) => String::new(),
                Budget::Expr(e) => format!(" `{}`", expr_text(e)),
            };
            let parts = match reserved {
                None => vec![
                    Part::Text(format!(
                        "{prefix}the model needs {ram} bytes of RAM, over the RAM budget\
                         {budget_text} of "
                    )),
                    Part::Number(quote!(__KILN_BUDGET)),
                    Part::Text(" bytes by ".into()),
                    Part::Number(quote!(__KILN_NEED - __KILN_BUDGET)),
                    Part::Text(format!(" bytes ({ram_detail}; {peak})")),
                ],
                Some(r) => {
                    let r_text = match r {
                        Budget::Bytes(_) => String::new(),
                        Budget::Expr(e) => format!(" `{}`", expr_text(e)),
                    };
                    vec![
                        Part::Text(format!("{prefix}the model and the reserved RAM need ")),
                        Part::Number(quote!(__KILN_NEED)),
                        Part::Text(format!(" bytes, over the RAM budget{budget_text} of ")),
                        Part::Number(quote!(__KILN_BUDGET)),
                        Part::Text(" bytes by ".into()),
                        Part::Number(quote!(__KILN_NEED - __KILN_BUDGET)),
                        Part::Text(format!(" bytes ({ram_detail} + reserved_ram{r_text} ")),
                        Part::Number(quote!(__KILN_NEED - #model_need)),
                        Part::Text(format!(" B; {peak})")),
                    ]
                }
            };
            let need = match reserved {
                None => model_need,
                Some(Budget::Bytes(r)) => {
                    let r = u(*r);
                    quote!(#model_need + #r)
                }
                Some(Budget::Expr(e)) => quote!(#model_need + (#e)),
            };
            // The error is reported on the budget, or on the reserved bytes where only they
            // are an expression.
            let at = match (budget, reserved) {
                (Budget::Bytes(_), Some(Budget::Expr(e))) => e.clone(),
                _ => budget_expr.clone(),
            };
            out.extend(const_budget_check_at(&at, &budget_expr, &need, parts));
            Ok(())
        }
    }
}

/// The check of a budget given as a constant expression, which only the compiler can
/// evaluate: if `need` exceeds it, a `const` panic with the whole message, numbers included
/// (`parts`, whose numbers may use `__KILN_NEED` and `__KILN_BUDGET`), written into a byte
/// array by a `const fn` (a const panic can print a `&str`, not format numbers). The
/// compiler reports it on the user's expression.
fn const_budget_check(expr: &TokenStream, need: &TokenStream, parts: Vec<Part>) -> TokenStream {
    const_budget_check_at(expr, expr, need, parts)
}

/// [`const_budget_check`] of budget `expr`, reported on `at`.
fn const_budget_check_at(
    at: &TokenStream,
    expr: &TokenStream,
    need: &TokenStream,
    parts: Vec<Part>,
) -> TokenStream {
    // Numbers of at most 20 digits each.
    let len = u(parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => t.len(),
            Part::Number(_) => 20,
        })
        .sum::<usize>());
    let writes = parts.iter().map(|p| match p {
        Part::Text(t) => {
            let lit = Literal::byte_string(t.as_bytes());
            quote!(at = __kiln_put(&mut buf, at, #lit);)
        }
        Part::Number(n) => quote!(at = __kiln_decimal(&mut buf, at, #n);),
    });
    let panic = spanned_macro("panic", at, quote!("{}", __kiln_message));
    quote! {
        const _: () = {
            const __KILN_NEED: usize = #need;
            const __KILN_BUDGET: usize = #expr;
            const fn __kiln_put(buf: &mut [u8; #len], mut at: usize, s: &[u8]) -> usize {
                let mut i = 0;
                while i < s.len() {
                    buf[at] = s[i];
                    at += 1;
                    i += 1;
                }
                at
            }
            const fn __kiln_decimal(buf: &mut [u8; #len], mut at: usize, mut v: usize) -> usize {
                let mut digits = [0u8; 20];
                let mut n = 0;
                loop {
                    digits[n] = b'0' + (v % 10) as u8;
                    v /= 10;
                    n += 1;
                    if v == 0 {
                        break;
                    }
                }
                while n > 0 {
                    n -= 1;
                    buf[at] = digits[n];
                    at += 1;
                }
                at
            }
            if __KILN_NEED > __KILN_BUDGET {
                let mut buf = [0u8; #len];
                let mut at = 0;
                #(#writes)*
                let __kiln_message = match ::core::str::from_utf8(buf.split_at(at).0) {
                    Ok(s) => s,
                    Err(_) => "the model is over its budget",
                };
                #panic
            }
        };
    }
}

/// `name!(args);` whose failure the compiler reports on `expr` (the user's budget
/// expression): a macro call takes the span of its first token, its arguments the span of
/// its last, so the error underlines the expression.
fn spanned_macro(name: &str, expr: &TokenStream, args: TokenStream) -> TokenStream {
    let mut trees = expr.clone().into_iter();
    let first = trees.next().map_or_else(Span::call_site, |t| t.span());
    let last = trees.last().map_or(first, |t| t.span());
    let name = Ident::new(name, first);
    let mut bang = proc_macro2::Punct::new('!', proc_macro2::Spacing::Alone);
    bang.set_span(first);
    let mut group = proc_macro2::Group::new(proc_macro2::Delimiter::Parenthesis, args);
    group.set_span(last);
    quote!(#name #bang #group;)
}
