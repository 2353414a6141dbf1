//! Tokens of the generated code that calls and the emitter share: unsuffixed literals,
//! parameter structs from their `Debug` form, kernel function paths.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

/// An unsuffixed integer literal, so generated code reads `16`, not `16usize`.
pub(crate) fn u(n: usize) -> Literal {
    Literal::usize_unsuffixed(n)
}

/// Unsuffixed integer literals (negative ones as `-` and a literal).
pub(crate) fn ints<T: Copy + Into<i64>>(values: &[T]) -> Vec<TokenStream> {
    values
        .iter()
        .map(|&v| {
            let v: i64 = v.into();
            let lit = Literal::i64_unsuffixed(v.abs());
            if v < 0 { quote!(-#lit) } else { quote!(#lit) }
        })
        .collect()
}

/// Turns a `Debug`-printed parameter struct into an expression at `path`.
///
/// Parameter structs of the kernels hold only integers, floats and arrays of them, so their
/// derived `Debug` output is Rust syntax but for non-finite floats, which become constants.
pub(crate) fn debug_expr(path: &TokenStream, debug: &str) -> TokenStream {
    let fields = debug
        .split_once('{')
        .map_or("", |(_, rest)| rest.trim_end().trim_end_matches('}'));
    let fixed = fields
        .replace("-inf", "f32::NEG_INFINITY")
        .replace("inf", "f32::INFINITY")
        .replace("NaN", "f32::NAN");
    let fields: TokenStream = fixed
        .parse()
        .expect("kernel parameters print as Rust syntax");
    quote!(#path { #fields })
}

/// `::kiln::kernels::<module>::<function>`.
pub fn kernel_fn(module: &str, function: &str) -> TokenStream {
    let (m, f) = (
        Ident::new(module, Span::call_site()),
        Ident::new(function, Span::call_site()),
    );
    quote!(::kiln::kernels::#m::#f)
}
