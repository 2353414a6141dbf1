//! `kiln::include_model!`: the proc-macro front end of Kiln.
//!
//! It parses the macro's arguments, resolves the model path, calls the one emitter in
//! `kiln-build`, and turns every diagnostic into a compile error on the argument's span.
//! It never panics on user input.

use kiln_build::{Budget, Options};
use proc_macro::TokenStream;
use quote::{quote, quote_spanned};
use std::path::{Path, PathBuf};
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, LitInt, LitStr, Token};

/// Compiles a TensorFlow Lite model into the current module.
///
/// ```ignore
/// mod model {
///     kiln::include_model!("models/hello_world_int8.tflite", ram_budget = 64 * 1024);
/// }
/// let mut m = model::Model::take().unwrap();
/// m.input_mut()[0] = 3;
/// m.invoke();
/// let y = m.output()[0];
/// ```
///
/// Options: `ram_budget = <const expr>` (arena + persistent bytes), `flash_budget = <const
/// expr>` (weights + constants), `align = <int>` (arena offset alignment, default 16).
/// A relative path is resolved from the file that calls the macro, else from
/// `CARGO_MANIFEST_DIR`.
#[proc_macro]
pub fn include_model(input: TokenStream) -> TokenStream {
    let args = syn::parse_macro_input!(input as Args);
    match expand(&args) {
        Ok(t) | Err(t) => t.into(),
    }
}

struct Args {
    path: LitStr,
    ram_budget: Option<Expr>,
    flash_budget: Option<Expr>,
    align: Option<LitInt>,
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let path: LitStr = input.parse()?;
        let mut args = Args {
            path,
            ram_budget: None,
            flash_budget: None,
            align: None,
        };
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let dup = || syn::Error::new(key.span(), format!("`{key}` is given twice"));
            match key.to_string().as_str() {
                "ram_budget" => {
                    if args.ram_budget.replace(input.parse()?).is_some() {
                        return Err(dup());
                    }
                }
                "flash_budget" => {
                    if args.flash_budget.replace(input.parse()?).is_some() {
                        return Err(dup());
                    }
                }
                "align" => {
                    if args.align.replace(input.parse()?).is_some() {
                        return Err(dup());
                    }
                }
                other => {
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "unknown option `{other}` (expected `ram_budget`, `flash_budget` or `align`)"
                        ),
                    ));
                }
            }
        }
        Ok(args)
    }
}

/// Evaluates integer literals joined by `*`, `+`, `-` and parentheses; `None` otherwise.
fn literal_value(e: &Expr) -> Option<usize> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        Expr::Paren(p) => literal_value(&p.expr),
        Expr::Group(g) => literal_value(&g.expr),
        Expr::Binary(b) => {
            let (l, r) = (literal_value(&b.left)?, literal_value(&b.right)?);
            match b.op {
                syn::BinOp::Mul(_) => l.checked_mul(r),
                syn::BinOp::Add(_) => l.checked_add(r),
                syn::BinOp::Sub(_) => l.checked_sub(r),
                _ => None,
            }
        }
        _ => None,
    }
}

fn budget(e: &Option<Expr>) -> Option<Budget> {
    e.as_ref().map(|e| match literal_value(e) {
        Some(n) => Budget::Bytes(n),
        None => Budget::Expr(quote!(#e)),
    })
}

/// Where the model is: relative to the calling file, else to `CARGO_MANIFEST_DIR`.
fn resolve(lit: &LitStr) -> PathBuf {
    let given = PathBuf::from(lit.value());
    if given.is_absolute() {
        return given;
    }
    let from_caller = lit
        .span()
        .unwrap()
        .local_file()
        .and_then(|f| f.parent().map(Path::to_path_buf))
        .map(|dir| dir.join(&given))
        .filter(|p| p.exists());
    from_caller.unwrap_or_else(|| {
        let dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
        Path::new(&dir).join(&given)
    })
}

fn expand(args: &Args) -> Result<proc_macro2::TokenStream, proc_macro2::TokenStream> {
    let span = args.path.span();
    let err = |msg: String| {
        let e = syn::Error::new(span, msg).to_compile_error();
        quote_spanned!(span=> #e)
    };
    let path = resolve(&args.path);
    let bytes = std::fs::read(&path)
        .map_err(|e| err(format!("cannot read model `{}`: {e}", path.display())))?;
    let alignment = match &args.align {
        Some(a) => a.base10_parse::<usize>().map_err(|e| {
            syn::Error::new(a.span(), format!("`align` must be an integer: {e}")).to_compile_error()
        })?,
        None => Options::default().alignment,
    };
    let options = Options {
        ram_budget: budget(&args.ram_budget),
        flash_budget: budget(&args.flash_budget),
        alignment,
    };
    let compiled = kiln_build::compile_tokens(&bytes, &options).map_err(|d| {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        err(format!("{name}: {d}"))
    })?;
    let tokens = compiled.tokens;
    let abs = path.canonicalize().unwrap_or(path);
    let abs = abs.to_string_lossy();
    Ok(quote! {
        // Rebuild when the model changes.
        const _: &[u8] = ::core::include_bytes!(#abs);
        #tokens
    })
}
