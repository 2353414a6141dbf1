//! The generated module around the kernel calls: `ModelIn` and `Model`, the consts of the
//! arena, the inputs and outputs (shape, type, quantization, accessors), `take()`,
//! `with_arena`, `reset()`, `invoke()` and `invoke_with()`, all inside one module
//! ([`MODULE`](super::MODULE)) re-exported into the caller's, with the budget checks beside it.

use super::budgets::budget_checks;
use super::docs::model_docs;
use super::model_items::{ModelItems, model_items};
use super::regions::{RegionItems, arena_field, locate, region_items};
use super::tensor_bytes::tensor_bytes_fn;
use super::{Emitter, MODULE, elem, unsupported};
use crate::op::{ints, u};
use crate::options::Options;
use kiln_planner::alias::OpMode;
use kiln_planner::diag::Result;
use kiln_planner::ir::{DType, Quantization, TensorKind};
use kiln_planner::report::Header;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

impl<'a> Emitter<'a> {
    /// The module items around the collected kernel calls.
    pub(super) fn finish(self, options: &Options, header: &Header) -> Result<TokenStream> {
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
                // `kiln::Quant` for int8/int16/uint8 tensors quantized per tensor; a
                // `kiln::NotQuantized` for the others (float32, int32, bool; a per-channel
                // tensor has several scales, and its `*_SCALE` is 0).
                let per_tensor = match (tensor.dtype, &tensor.quant) {
                    (DType::I8 | DType::I16 | DType::U8, Quantization::PerTensor { scale, .. }) => {
                        scale.is_finite() && *scale > 0.0
                    }
                    _ => false,
                };
                let quant_name = format_ident!("{}_QUANT", prefix);
                if per_tensor {
                    let doc = format!(
                        " Quantization of {what}: `quantize` floats into it, `dequantize` its \
                         values, as TFLM's QUANTIZE and DEQUANTIZE do."
                    );
                    io_items.push(quote! {
                        #[doc = #doc]
                        pub const #quant_name: ::kiln::Quant<#ty> = ::kiln::Quant::new(#scale_name, #zp_name);
                    });
                } else {
                    // A const all the same, whose `quantize` is a compile error saying why.
                    let doc = format!(
                        " The {what} is not quantized per tensor: write and read its values as \
                         they are (`quantize` and `dequantize` are compile errors)."
                    );
                    io_items.push(quote! {
                        #[doc = #doc]
                        pub const #quant_name: ::kiln::NotQuantized<#ty> = ::kiln::NotQuantized::new();
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
            String::new(),
            " On a core without atomic compare-and-swap (Cortex-M0/M0+) it needs `kiln`'s"
                .to_string(),
            " feature `single-core` or `critical-section`: without either, a call is a compile"
                .to_string(),
            " error there that says so ([`kiln::runtime::TakeSupported`]).".to_string(),
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
        let budget = budget_checks(options, plan, g, header, self.reach)?;
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
        let model_docs = model_docs(g, plan, options, header, self.program);
        // A streamed input: `invoke` takes the row source the reads read from.
        let (source, stream_items) = match self.streamed.first() {
            None => (quote!(), quote!()),
            Some(&(_, _, row_bytes)) => {
                let rows = self
                    .streamed
                    .iter()
                    .map(|&(f, n, _)| f + n)
                    .max()
                    .unwrap_or(0);
                let halo = self
                    .streamed
                    .windows(2)
                    .map(|w| (w[0].0 + w[0].1).saturating_sub(w[1].0))
                    .max()
                    .unwrap_or(0);
                let (rows, row_bytes, halo) = (u(rows), u(row_bytes), u(halo));
                (
                    quote!(source: &mut (impl ::kiln::RowSource + ?Sized),),
                    quote! {
                        /// The streamed input's rows (`streamed_input`): `invoke` asks its
                        /// [`kiln::RowSource`] for them strip by strip.
                        pub const INPUT_ROWS: usize = #rows;
                        /// Bytes of one row of the streamed input.
                        pub const INPUT_ROW_BYTES: usize = #row_bytes;
                        /// The most rows a request for rows of the streamed input starts
                        /// before the end of the request before it (neighbouring strips
                        /// share their windows' rows).
                        pub const INPUT_HALO_ROWS: usize = #halo;
                    },
                )
            }
        };
        let runs = if self.streamed.is_empty() {
            " Runs the model once: inputs to outputs."
        } else {
            " Runs the model once: the input, read strip by strip from `source`, to the outputs."
        };
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
            /// Bytes of the model's constant buffers (weights, biases) in flash that the
            /// kernels read as stored. The prepared constants (the tables Kiln makes from
            /// the other buffers: per-channel multipliers, folded biases, reordered
            /// filters) are not included; [`ModelIn`]'s docs give both and their total,
            /// the flash budget's figure.
            pub const WEIGHTS_BYTES: usize = #weights_bytes;
            /// The operators `invoke()` runs, in order: (index in the model, name). Views and
            /// slices, which have no code, are not among them.
            pub const OPERATORS: [(usize, &str); #n_ops] = [#((#hook_index, #hook_name)),*];
            /// Number of model inputs.
            pub const INPUTS: usize = #n_in;
            /// Number of model outputs.
            pub const OUTPUTS: usize = #n_out;
            #(#io_items)*
            #stream_items
            #rebuild_marker

            #statics

            #(#items)*

            impl<'a> ModelIn<'a> {
                #(#[doc = #take_doc])*
                pub fn take() -> Option<Model>
                where
                    ModelIn<'a>: ::kiln::runtime::TakeSupported,
                {
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

                #[doc = #runs]
                #(#[doc = #elided_docs])*
                #[allow(unused_doc_comments)]
                pub fn invoke(&mut self, #source) {
                    #arena_binding
                    #(#body)*
                }

                /// [`ModelIn::invoke`] with `hook(op_index, op_name, phase)` called before
                /// and after each operator's kernel ([`OPERATORS`] lists them in this order),
                /// e.g. to read a cycle counter or trace. `invoke()` itself has no hook.
                #[allow(unused_doc_comments)]
                pub fn invoke_with(
                    &mut self,
                    #source
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
        // expression resolves. The module is not `doc(hidden)`: `cargo doc` of a binary
        // crate (private items documented, re-exports never inlined) shows the items only
        // there, under the enclosing `mod model`; a library's `pub mod model` inlines them.
        let inner = Ident::new(MODULE, Span::call_site());
        Ok(quote! {
            /// The compiled model's items, re-exported into the enclosing module: use them
            /// from there (`model::Model`, `model::ARENA_BYTES`, ...). Each `include_model!`
            /// needs a module of its own; this module's name is what a second model in the
            /// same module clashes on.
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
