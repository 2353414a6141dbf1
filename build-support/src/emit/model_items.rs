//! The statics that own the model's memory: the arena (one per region with a memory map)
//! and the persistent state, in a link section if given; the `State` type of a stateful
//! model; and the state's part of `ModelIn` (field, `take()`, `with_arena`, `reset()`).

use super::regions::align_ident;
use super::unsupported;
use crate::control::Program;
use crate::lower;
use crate::op::u;
use crate::options::Options;
use kiln_planner::diag::Result;
use kiln_planner::ir::Graph;
use kiln_planner::plan::Plan;
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

/// The pieces of the generated module that own the arena and the state.
pub(super) struct ModelItems {
    /// `static ARENA` (and `STATE`), in the link section if one is given, and `State`.
    pub(super) statics: TokenStream,
    /// `ModelIn`'s state field, its value in `take()`, `with_arena`'s parameter and value.
    pub(super) state_field: TokenStream,
    pub(super) state_take: TokenStream,
    pub(super) state_param: TokenStream,
    pub(super) state_borrow: TokenStream,
    /// The body of `reset()`.
    pub(super) reset_body: TokenStream,
}

/// The arena and state statics (in `options.link_section` if given: their bytes in that
/// section, zeroed when taken, the take-once flags in ordinary RAM), the `State` type of a
/// stateful model, and the state's part of `ModelIn`.
pub(super) fn model_items(
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
