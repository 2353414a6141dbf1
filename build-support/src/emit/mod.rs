//! The emitter: lowered steps to Rust tokens. The only one; both front ends call it.
//!
//! Each [`Step`] becomes one kernel call with constant parameters and arena slices at
//! constant offsets; weights become aligned statics read from the model file with
//! `include_bytes!` (byte-string literals when no file is given). The output is
//! deterministic: names come from indices, and items are emitted in plan order.
//!
//! Its parts: this file holds the entry points and the `Emitter` state; `calls` writes one
//! step's kernel call (operand bindings, the kernel's statement through
//! [`Call`](crate::op::Call)), `weights` the model's buffers as statics, `regions` the
//! memory map's arenas and bindings, `control` the control flow steps and subgraph
//! functions; `module` writes the module around the calls, with `model_items` (arena and
//! state statics), `docs` (`ModelIn`'s docs), `tensor_bytes` (debug mode) and `budgets`
//! (the RAM and flash checks).

use crate::control::Program;
use crate::op::{Items, Step, u};
use crate::options::Options;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{DType, Graph, TensorId};
use kiln_planner::plan::Plan;
use kiln_planner::report::{Flash, Header, KernelUse};
use proc_macro2::{Ident, TokenStream};
use quote::quote;
use std::collections::BTreeMap;

mod budgets;
mod calls;
mod control;
mod docs;
mod model_items;
mod module;
mod regions;
mod tensor_bytes;
mod weights;

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
        flash: Default::default(),
    };
    emit_with(
        graph,
        plan,
        steps,
        options,
        &mut header,
        &Program::default(),
        None,
    )
}

/// Lowers and emits a planned graph; fills `header.kernel_variants` with the kernel
/// functions the code calls and writes the header and the plan's summary into the docs of
/// `ModelIn`.
///
/// The shared part of every kernel call (operand bindings to arena slices and weight statics,
/// state and scratch slices, the block around the call) is written here; each kernel writes
/// its own statement through a [`Call`](crate::op::Call).
///
/// `reach`: with a RAM budget no plan meets, what the budget error says Kiln can reach (the
/// smallest arena, and why not less).
pub fn emit_with(
    graph: &Graph,
    plan: &Plan,
    steps: Vec<Step>,
    options: &Options,
    header: &mut Header,
    program: &Program,
    reach: Option<&str>,
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
        reach,
        streamed: steps
            .iter()
            .filter_map(|s| {
                let (first, rows) = s.kernel.streamed_rows()?;
                let bytes = graph.tensor(s.outputs[0]).bytes();
                Some((first, rows, bytes / rows.max(1)))
            })
            .collect(),
    };
    for step in &steps {
        e.step(step)?;
    }
    header.kernel_variants = std::mem::take(&mut e.kernel_uses);
    header.flash = Flash {
        weights: e.weight_bytes,
        prepared_constants: e.items.constant_bytes,
    };
    e.finish(options, header)
}

struct Emitter<'a> {
    graph: &'a Graph,
    /// What a RAM budget error says is reachable (see [`emit_with`]).
    reach: Option<&'a str>,
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
    /// A streamed input's reads, in order: first row, rows, bytes per row (empty: the
    /// input is in the arena).
    streamed: Vec<(usize, usize, usize)>,
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

impl<'a> Emitter<'a> {
    fn tensor(&self, t: TensorId) -> &'a kiln_planner::ir::Tensor {
        self.graph.tensor(t)
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
}

/// The module the generated items live in (re-exported into the caller's module).
pub const MODULE: &str = "kiln_model_put_each_include_model_in_its_own_module";
