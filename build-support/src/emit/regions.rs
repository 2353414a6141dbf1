//! The memory map: where each region's arena is bound (`arena0`, `arena1`, ...), how a
//! step's operands are bound to slices of their regions' arenas, and the items of the
//! generated module that differ with regions (arena fields, consts and types, `take()`,
//! `with_regions`). Without regions, one arena, `arena`.

use super::{Emitter, unsupported};
use crate::op::u;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::plan::Plan;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use std::collections::BTreeMap;

impl<'a> Emitter<'a> {
    /// With a memory map: the region holding `(offset, len)` of the plan's address space
    /// and the offset in that region.
    pub(super) fn locate(&self, span: (usize, usize)) -> Result<(usize, usize)> {
        locate(self.plan, span)
    }

    /// With a memory map: binds inputs (shared) and outputs (exclusive, scratch included)
    /// to slices of their regions' arenas (`arena0`, `arena1`, ...): operands of one region
    /// as without regions (`split`, `split2`, `split_many`), of several by one `split_many`
    /// per region.
    pub(super) fn region_binding(
        &mut self,
        ins: &[(TokenStream, (usize, usize))],
        outs: &[(TokenStream, (usize, usize))],
        many: bool,
    ) -> Result<TokenStream> {
        // Inputs' names and spans, outputs' names and spans with their offsets (the outputs
        // in address order, as `split_many` takes them).
        type Group = (
            Vec<TokenStream>,
            Vec<TokenStream>,
            Vec<(usize, TokenStream, TokenStream)>,
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
                g.2.push((o, name.clone(), spanned));
            }
        }
        let mut out = TokenStream::new();
        let single = groups.len() == 1;
        for (r, (in_names, in_spans, mut outs)) in groups {
            outs.sort_by_key(|(offset, ..)| *offset);
            let out_names: Vec<_> = outs.iter().map(|(_, n, _)| n).collect();
            let out_spans: Vec<_> = outs.iter().map(|(_, _, s)| s).collect();
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
}

/// The region of `plan`'s memory map holding `(offset, len)` of its address space, and the
/// offset in that region; without regions, region 0 at the same offset.
pub(super) fn locate(plan: &Plan, (off, len): (usize, usize)) -> Result<(usize, usize)> {
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
pub(super) fn arena_field(plan: &Plan, r: usize) -> Ident {
    if plan.regions.is_empty() {
        format_ident!("arena")
    } else {
        format_ident!("arena{}", r)
    }
}

/// The `kiln::runtime::align` type of an alignment (4 to 64 bytes).
pub(super) fn align_ident(bytes: usize) -> Ident {
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

/// The parts of the generated module that differ with a memory map: `ModelIn`'s arena
/// fields, the consts and types of the arena (per region with regions), the arena fields'
/// values in `take()`, and the signature and body of `with_arena` (`with_regions` with
/// regions, one buffer per region).
pub(super) struct RegionItems {
    pub(super) fields: TokenStream,
    pub(super) consts: TokenStream,
    pub(super) take: TokenStream,
    pub(super) with: TokenStream,
}

pub(super) fn region_items(
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
