//! `kiln::include_model!`: the proc-macro front end of Kiln.
//!
//! It parses the macro's arguments, resolves the model path, calls the one emitter in
//! `kiln-build`, and turns every diagnostic into a compile error on the argument's span:
//! the path literal for model errors, the option for option errors, the budget expression
//! for budget errors. It never panics on user input, and its messages name the model as the
//! user wrote it, never by an absolute path.

mod cache;
mod memory_x;

use cache::{At, Entry};
use kiln_build::{Budget, ErrorKind, Options};
use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::{ToTokens, quote};
use std::path::{Path, PathBuf};
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, LitStr, Token};

/// Compiles a TensorFlow Lite model into the current module (one model per module).
///
/// ```text
/// mod model {
///     kiln::include_model!("models/hello_world_int8.tflite", ram_budget = 64 * 1024);
/// }
/// let mut m = model::Model::take().unwrap();
/// m.input_mut()[0] = model::INPUT_QUANT.quantize(0.5);
/// m.invoke();
/// let y = model::OUTPUT_QUANT.dequantize(m.output()[0]);
/// ```
///
/// The crate docs of `kiln` list every item the module gets, with compiled examples.
///
/// Options: `ram_budget = <const expr>` (arena + persistent bytes, + `reserved_ram`),
/// `reserved_ram = <const expr>` (RAM the firmware needs besides Kiln: stack, buffers; with
/// it, `ram_budget` is the device's whole RAM), `flash_budget = <const expr>` (weights +
/// constants), `align = <int>` (arena offset alignment, a power of two
/// from 1 to 64, default 16), `optimize = false` (plan as TFLM does: stored order, its greedy
/// offsets; for comparison), `reorder = false` (keep the stored operator order), `alias =
/// false` (a buffer per tensor: no views, in-place operators or concatenation slices),
/// `link_section = ".sram2"` (the arena's and state's bytes in that link section instead of
/// `.bss`; zeroed by `take()`, so a `NOLOAD` section will do), `preserve_all_tensors = true`
/// (debug mode, as TFLM's: every tensor its own bytes, kept after `invoke()`, read with
/// `Model::tensor_bytes(t)`), `preserve_inputs = true` (inputs survive `invoke()`, so they
/// need writing once), `regions = [(".dtcm", 16384), (".sram", 65536, 32)]` (a memory map:
/// RAM regions as `(link section, size in bytes[, alignment])`, fastest first; the arena's
/// buffers are split over them, the most accessed per byte in the fastest region that holds
/// them, each region a static of its used size in its section; a model that does not fit is
/// a compile error naming the region; the persistent state stays in its own static, placed
/// by `link_section` if given; `Model::with_regions` takes one buffer per region),
/// `report = "target/kiln"` (also write the plan reports
/// `<model>.plan.txt`, `.plan.svg` and `.plan.json` into that folder, relative to
/// `CARGO_MANIFEST_DIR`). A relative model path is resolved from the file that calls the
/// macro, else from `CARGO_MANIFEST_DIR`. `tile = false` (never run the first operators in
/// strips of rows; by default Kiln does so only when a `ram_budget` in bytes is not met
/// otherwise, or only with slower kernels), `max_extra_macs = <percent>` (the most recomputation such a tiling may cost,
/// default 20), `memory_x = false` (without a `ram_budget`, the model is checked against the
/// `RAM` region of the crate's `memory.x`, the cortex-m-rt and riscv-rt convention, so that
/// a model too large for the board is this error rather than the linker's; `false` skips
/// that), `streamed_input = true` (the input is never whole in RAM: the first operators run
/// in strips of rows, each strip reads its rows from the `kiln::RowSource` that `invoke`
/// takes; the model then has no `input_mut()`, and `INPUT_ROWS`, `INPUT_ROW_BYTES` and
/// `INPUT_HALO_ROWS` describe the stream).
///
/// The expansion is kept in a plan cache under the target directory (`target/kiln-cache/`,
/// keyed by the model's sha256, the arguments, Kiln's build): the next expansion of the
/// same call only reads it, so `cargo check` and rust-analyzer do not plan again after an
/// edit elsewhere. Safe to delete; `KILN_CACHE=0` turns it off. Named-constant budgets and
/// `report` are not cached.
#[proc_macro]
pub fn include_model(input: TokenStream) -> TokenStream {
    let text = input.to_string();
    let args = syn::parse_macro_input!(input as Args);
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    match expand(&args, &text, &manifest) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

const USAGE: &str = "usage: `include_model!(\"model.tflite\", ram_budget = <bytes>, \
                     reserved_ram = <bytes>, flash_budget = <bytes>, align = <power of two>, \
                     optimize = <bool>, reorder = <bool>, alias = <bool>, \
                     link_section = \"<section>\", preserve_all_tensors = <bool>, \
                     preserve_inputs = <bool>, regions = [(\"<section>\", <bytes>), ...], \
                     report = \"<folder>\", tile = <bool>, max_extra_macs = <percent>, \
                     memory_x = <bool>, streamed_input = <bool>)`";

const OPTIONS: &str = "`ram_budget`, `reserved_ram`, `flash_budget`, `align`, `optimize`, \
                       `reorder`, `alias`, `link_section`, `preserve_all_tensors`, \
                       `preserve_inputs`, `regions`, `report`, `tile`, `max_extra_macs`, \
                       `memory_x` or `streamed_input`";

/// The largest arena alignment the runtime has a type for.
const MAX_ALIGN: usize = 64;

struct Args {
    path: LitStr,
    ram_budget: Option<Expr>,
    flash_budget: Option<Expr>,
    align: Option<usize>,
    optimize: Option<bool>,
    reorder: Option<bool>,
    alias: Option<bool>,
    link_section: Option<String>,
    preserve_all_tensors: Option<bool>,
    preserve_inputs: Option<bool>,
    reserved_ram: Option<(Ident, Expr)>,
    report: Option<LitStr>,
    regions: Option<(Expr, Vec<kiln_build::Region>)>,
    tile: Option<bool>,
    max_extra_macs: Option<usize>,
    memory_x: Option<bool>,
    streamed_input: Option<bool>,
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(syn::Error::new(
                Span::call_site(),
                format!("the model's path is missing; {USAGE}"),
            ));
        }
        let path: LitStr = input.parse().map_err(|_| {
            syn::Error::new(
                input.span(),
                format!(
                    "the first argument must be the model's path as a string literal, \
                     e.g. `\"model.tflite\"`; {USAGE}"
                ),
            )
        })?;
        let mut args = Args {
            path,
            ram_budget: None,
            flash_budget: None,
            align: None,
            optimize: None,
            reorder: None,
            alias: None,
            link_section: None,
            preserve_all_tensors: None,
            preserve_inputs: None,
            reserved_ram: None,
            report: None,
            regions: None,
            tile: None,
            max_extra_macs: None,
            memory_x: None,
            streamed_input: None,
        };
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: Ident = input.parse().map_err(|_| {
                syn::Error::new(input.span(), format!("expected an option: {OPTIONS}"))
            })?;
            let name = key.to_string();
            if !matches!(
                name.as_str(),
                "ram_budget"
                    | "flash_budget"
                    | "align"
                    | "optimize"
                    | "reorder"
                    | "alias"
                    | "link_section"
                    | "preserve_all_tensors"
                    | "preserve_inputs"
                    | "reserved_ram"
                    | "report"
                    | "regions"
                    | "tile"
                    | "max_extra_macs"
                    | "memory_x"
                    | "streamed_input"
            ) {
                return Err(syn::Error::new(
                    key.span(),
                    format!("unknown option `{name}` (expected {OPTIONS})"),
                ));
            }
            if !input.peek(Token![=]) {
                return Err(syn::Error::new(
                    key.span(),
                    format!("`{name}` needs a value: `{name} = ...`"),
                ));
            }
            input.parse::<Token![=]>()?;
            let value: Expr = input.parse()?;
            let given = match name.as_str() {
                "ram_budget" => args.ram_budget.is_some(),
                "flash_budget" => args.flash_budget.is_some(),
                "optimize" => args.optimize.is_some(),
                "reorder" => args.reorder.is_some(),
                "alias" => args.alias.is_some(),
                "link_section" => args.link_section.is_some(),
                "preserve_all_tensors" => args.preserve_all_tensors.is_some(),
                "preserve_inputs" => args.preserve_inputs.is_some(),
                "reserved_ram" => args.reserved_ram.is_some(),
                "report" => args.report.is_some(),
                "regions" => args.regions.is_some(),
                "tile" => args.tile.is_some(),
                "max_extra_macs" => args.max_extra_macs.is_some(),
                "memory_x" => args.memory_x.is_some(),
                "streamed_input" => args.streamed_input.is_some(),
                _ => args.align.is_some(),
            };
            if given {
                return Err(syn::Error::new(
                    key.span(),
                    format!("`{name}` is given twice"),
                ));
            }
            match name.as_str() {
                "ram_budget" => args.ram_budget = Some(value),
                "flash_budget" => args.flash_budget = Some(value),
                "optimize" => args.optimize = Some(boolean(&name, &value)?),
                "reorder" => args.reorder = Some(boolean(&name, &value)?),
                "alias" => args.alias = Some(boolean(&name, &value)?),
                "link_section" => args.link_section = Some(section(&value)?),
                "preserve_all_tensors" => {
                    args.preserve_all_tensors = Some(boolean(&name, &value)?);
                }
                "preserve_inputs" => args.preserve_inputs = Some(boolean(&name, &value)?),
                "reserved_ram" => args.reserved_ram = Some((key, value)),
                "report" => args.report = Some(folder(&value)?),
                "regions" => args.regions = Some((value.clone(), regions(&value)?)),
                "tile" => args.tile = Some(boolean(&name, &value)?),
                "max_extra_macs" => args.max_extra_macs = Some(percent(&value)?),
                "memory_x" => args.memory_x = Some(boolean(&name, &value)?),
                "streamed_input" => args.streamed_input = Some(boolean(&name, &value)?),
                _ => args.align = Some(alignment(&value)?),
            }
        }
        if let (Some((key, _)), None) = (&args.reserved_ram, &args.ram_budget) {
            return Err(syn::Error::new(
                key.span(),
                "`reserved_ram` counts against `ram_budget`, which is not given: add \
                 `ram_budget = <bytes>` (the RAM of the whole device)",
            ));
        }
        Ok(args)
    }
}

/// A `true` or `false` literal.
fn boolean(name: &str, e: &Expr) -> syn::Result<bool> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Ok(b.value),
        _ => Err(syn::Error::new_spanned(
            e,
            format!("`{name}` must be `true` or `false`"),
        )),
    }
}

/// The value of `link_section = ".sram2"`: a string literal naming a section.
fn section(e: &Expr) -> syn::Result<String> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) if !s.value().trim().is_empty() && !s.value().contains(char::is_whitespace) => {
            Ok(s.value())
        }
        _ => Err(syn::Error::new_spanned(
            e,
            "`link_section` must be a string literal naming a section, e.g. `\".sram2\"`",
        )),
    }
}

/// The value of `regions = [(".dtcm", 16384), (".sram", 65536, 32)]`: an array of
/// `(section, size)` or `(section, size, alignment)` tuples of literals (sizes may be
/// literal arithmetic such as `64 * 1024`), at least one. The planner needs the numbers
/// while the macro expands, so they cannot be named constants.
fn regions(e: &Expr) -> syn::Result<Vec<kiln_build::Region>> {
    let usage = "`regions` must be an array of `(\"<link section>\", <size in bytes>)` or \
                 `(\"<link section>\", <size>, <alignment>)` with literal values, fastest first, \
                 e.g. `[(\".dtcm\", 16384), (\".sram\", 64 * 1024)]`";
    let Expr::Array(list) = e else {
        return Err(syn::Error::new_spanned(e, usage));
    };
    if list.elems.is_empty() {
        return Err(syn::Error::new_spanned(e, format!("{usage}: it is empty")));
    }
    let mut out: Vec<kiln_build::Region> = Vec::new();
    for item in &list.elems {
        let Expr::Tuple(t) = item else {
            return Err(syn::Error::new_spanned(item, usage));
        };
        let parts: Vec<&Expr> = t.elems.iter().collect();
        let (sec, size, align) = match parts.as_slice() {
            [s, n] => (*s, *n, None),
            [s, n, a] => (*s, *n, Some(*a)),
            _ => return Err(syn::Error::new_spanned(item, usage)),
        };
        let section = match sec {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) if !s.value().trim().is_empty() && !s.value().contains(char::is_whitespace) => {
                s.value()
            }
            _ => {
                return Err(syn::Error::new_spanned(
                    sec,
                    "a region's link section must be a string literal naming a section, \
                     e.g. `\".dtcm\"`",
                ));
            }
        };
        let Some(bytes) = literal_value(size).filter(|&n| n > 0) else {
            return Err(syn::Error::new_spanned(
                size,
                format!(
                    "the size of region `{section}` must be a positive integer literal in bytes \
                     (found `{}`)",
                    size.to_token_stream()
                ),
            ));
        };
        let mut region = kiln_build::Region::new(section.clone(), bytes);
        if let Some(a) = align {
            match literal_value(a) {
                Some(n) if n.is_power_of_two() && n <= MAX_ALIGN => region.align = n,
                _ => {
                    return Err(syn::Error::new_spanned(
                        a,
                        format!(
                            "the alignment of region `{section}` must be a power of two from 1 \
                             to {MAX_ALIGN} (found `{}`)",
                            a.to_token_stream()
                        ),
                    ));
                }
            }
        }
        if out.iter().any(|r| r.section == section) {
            return Err(syn::Error::new_spanned(
                sec,
                format!("region `{section}` is given twice"),
            ));
        }
        out.push(region);
    }
    Ok(out)
}

/// The value of `report = "target/kiln"`: a string literal naming a folder.
fn folder(e: &Expr) -> syn::Result<LitStr> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) if !s.value().trim().is_empty() => Ok(s.clone()),
        _ => Err(syn::Error::new_spanned(
            e,
            "`report` must be a string literal naming a folder for the plan reports, \
             relative to the crate's `Cargo.toml`, e.g. `\"target/kiln\"`",
        )),
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

/// The value of `align = ...`: an integer literal, a power of two from 1 to 64. The planner
/// needs it while the macro expands, so it cannot be a named constant.
fn alignment(e: &Expr) -> syn::Result<usize> {
    let Some(n) = literal_value(e) else {
        return Err(syn::Error::new_spanned(
            e,
            format!(
                "`align` must be an integer literal, a power of two from 1 to {MAX_ALIGN} \
                 (found `{}`)",
                e.to_token_stream()
            ),
        ));
    };
    if n == 0 || !n.is_power_of_two() || n > MAX_ALIGN {
        return Err(syn::Error::new_spanned(
            e,
            format!(
                "`align` must be a power of two from 1 to {MAX_ALIGN} \
                 (expected 1, 2, 4, 8, 16, 32 or 64, found {n})"
            ),
        ));
    }
    Ok(n)
}

/// The value of `max_extra_macs = 20`: an integer literal, a percentage.
fn percent(e: &Expr) -> syn::Result<usize> {
    literal_value(e)
        .filter(|&n| n <= u32::MAX as usize)
        .ok_or_else(|| {
            syn::Error::new_spanned(
                e,
                format!(
                    "`max_extra_macs` must be an integer literal, a percentage (found `{}`)",
                    e.to_token_stream()
                ),
            )
        })
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

/// The text of a panic payload.
fn panic_text(p: &(dyn std::any::Any + Send)) -> &str {
    p.downcast_ref::<&str>()
        .copied()
        .or_else(|| p.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// The expansion of the call `args` (written as `text`) in the crate at `manifest` (its
/// `memory.x`).
fn expand(args: &Args, text: &str, manifest: &Path) -> syn::Result<proc_macro2::TokenStream> {
    let span = args.path.span();
    let written = args.path.value();
    let path = resolve(&args.path);
    let bytes = std::fs::read(&path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            _ => e.to_string(),
        };
        syn::Error::new(
            span,
            format!(
                "cannot read model `{written}`: {why} (a relative path is resolved from the \
                 directory of the file that calls `include_model!`, else from \
                 `CARGO_MANIFEST_DIR`)"
            ),
        )
    })?;
    // The model's file name, as in "model.tflite: op 3 (CONV_2D): ...".
    let name = Path::new(&written)
        .file_name()
        .map_or_else(|| written.clone(), |n| n.to_string_lossy().into_owned());
    let mut plan = match args.optimize {
        Some(false) => kiln_build::PlanOptions::unoptimised(),
        _ => kiln_build::PlanOptions::default(),
    };
    if let Some(a) = args.align {
        plan.alignment = a;
    }
    if let Some(r) = args.reorder {
        plan.order.reorder = r;
    }
    if args.alias == Some(false) {
        plan.aliasing = kiln_build::AliasOptions::none();
    }
    plan.preserve_all_tensors = args.preserve_all_tensors == Some(true);
    plan.preserve_inputs = args.preserve_inputs == Some(true);
    plan.regions = args
        .regions
        .as_ref()
        .map_or_else(Vec::new, |(_, r)| r.clone());
    let options = Options {
        ram_budget: budget(&args.ram_budget),
        reserved_ram: budget(&args.reserved_ram.as_ref().map(|(_, e)| e.clone())),
        flash_budget: budget(&args.flash_budget),
        plan,
        model_name: Some(name.clone()),
        model_file: Some(path.canonicalize().unwrap_or_else(|_| path.clone())),
        link_section: args.link_section.clone(),
        tiling: kiln_build::TilingOptions {
            enabled: args.tile != Some(false) && args.optimize != Some(false),
            max_extra_macs_percent: args
                .max_extra_macs
                .map_or(20, |n| u32::try_from(n).unwrap_or(u32::MAX)),
            min_ram: false,
            streamed_input: args.streamed_input == Some(true),
            columns: true,
        },
        reference_kernels: false,
        search_notes: true,
    };
    // The plan cache (`cache.rs`): not for named-constant budgets (their checks carry the
    // user's spans) nor for calls that write reports.
    let exprs = [&args.ram_budget, &args.flash_budget]
        .into_iter()
        .chain([&args.reserved_ram.as_ref().map(|(_, e)| e.clone())])
        .flatten()
        .any(|e| literal_value(e).is_none());
    // The RAM of the crate's `memory.x`, checked when no budget is given (`memory_x.rs`).
    let memory = (args.ram_budget.is_none()
        && args.memory_x != Some(false)
        && args.regions.is_none()
        && args.link_section.is_none())
    .then(|| memory_x::ram_of_crate(manifest))
    .flatten();
    let cached = (!exprs && args.report.is_none())
        .then(cache::dir)
        .flatten()
        .map(|dir| {
            let memory = memory.as_ref().map_or(0, |m| m.bytes);
            let key = cache::key(&bytes, &format!("{text}\0memory.x RAM {memory}"), &path);
            (dir, key)
        });
    let entry = match cached.as_ref().and_then(|(dir, key)| cache::load(dir, key)) {
        Some(entry) => entry,
        None => {
            let produced = compile(args, &bytes, &options, &name, memory.as_ref())?;
            if let Some((dir, key)) = &cached {
                let entry = match &produced {
                    Ok(tokens) => Entry::Tokens(tokens.to_string()),
                    Err((at, message)) => Entry::Error(*at, message.clone()),
                };
                cache::store(dir, key, &entry);
            }
            match produced {
                // The tokens themselves (with the spans of a named-constant budget).
                Ok(tokens) => return Ok(tokens),
                Err((at, message)) => Entry::Error(at, message),
            }
        }
    };
    match entry {
        Entry::Tokens(code) => code.parse().map_err(|e| {
            syn::Error::new(
                span,
                format!("{name}: internal error in Kiln, please report it: {e}"),
            )
        }),
        Entry::Error(at, message) => {
            let target = match at {
                At::Path => None,
                At::RamBudget => args.ram_budget.as_ref(),
                At::ReservedRam => args.reserved_ram.as_ref().map(|(_, e)| e),
                At::Regions => args.regions.as_ref().map(|(e, _)| e),
                At::FlashBudget => args.flash_budget.as_ref(),
            };
            Err(match target {
                Some(expr) => syn::Error::new_spanned(expr, message),
                None => syn::Error::new(span, message),
            })
        }
    }
}

/// What [`compile`] gives: the generated tokens, or a compile error's message with the
/// argument it points at.
type Produced = Result<proc_macro2::TokenStream, (At, String)>;

/// Plans and emits the model (the work the cache saves): its tokens, or the compile error
/// with the argument it points at; then the check against `memory.x`'s RAM.
fn compile(
    args: &Args,
    bytes: &[u8],
    options: &Options,
    name: &str,
    memory: Option<&memory_x::Ram>,
) -> syn::Result<Produced> {
    let span = args.path.span();
    // A bug in Kiln must still be a compile error, not a proc-macro panic.
    let run = |options: &Options| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            kiln_build::compile_tokens(bytes, options)
        }))
        .map_err(|p| {
            syn::Error::new(
                span,
                format!(
                    "{name}: internal error in Kiln, please report it with the model: {}",
                    panic_text(p.as_ref())
                ),
            )
        })
    };
    let compiled = match run(options)? {
        Ok(c) => c,
        Err(d) => {
            let message = kiln_build::message(name, &d);
            let at = match d.kind {
                // A memory map that does not fit: on the regions.
                ErrorKind::OverRamBudget if d.message.contains("memory map") => At::Regions,
                // On the reserved bytes when only they are a constant expression.
                ErrorKind::OverRamBudget => match (&args.ram_budget, &args.reserved_ram) {
                    (Some(b), Some((_, r)))
                        if literal_value(b).is_some() && literal_value(r).is_none() =>
                    {
                        At::ReservedRam
                    }
                    _ => At::RamBudget,
                },
                ErrorKind::OverFlashBudget => At::FlashBudget,
                _ => At::Path,
            };
            let at = match at {
                At::RamBudget if args.ram_budget.is_none() => At::Path,
                At::ReservedRam if args.reserved_ram.is_none() => At::Path,
                At::Regions if args.regions.is_none() => At::Path,
                At::FlashBudget if args.flash_budget.is_none() => At::Path,
                at => at,
            };
            return Ok(Err((at, message)));
        }
    };
    if let Some(dir) = &args.report {
        let root = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
        let folder = Path::new(&root).join(dir.value());
        let stem = Path::new(name)
            .file_stem()
            .map_or_else(|| name.to_string(), |s| s.to_string_lossy().into_owned());
        compiled.write_reports(&folder, &stem, name).map_err(|e| {
            syn::Error::new(
                dir.span(),
                format!(
                    "{name}: cannot write the plan reports into `{}`: {e}",
                    dir.value()
                ),
            )
        })?;
    }
    let needs = compiled.plan.arena_bytes + compiled.plan.persistent_bytes;
    if let Some(ram) = memory.filter(|m| needs > m.bytes) {
        // What a budget of the whole RAM would give: a leaner plan, or the smallest
        // reachable (the budget error says which).
        let mut within = options.clone();
        within.ram_budget = Some(Budget::Bytes(ram.bytes));
        let reach = match run(&within)? {
            Ok(c) => format!(
                "with `ram_budget = {}` Kiln plans it in {} bytes (leaner kernels or \
                 operators run in strips of rows, a little slower): give the RAM left for \
                 the model as `ram_budget`",
                ram.bytes,
                c.plan.arena_bytes + c.plan.persistent_bytes
            ),
            Err(d) => format!("no plan fits it: {}", d.message),
        };
        return Ok(Err((
            At::Path,
            format!(
                "{name}: needs {needs} bytes of RAM (arena {} B + persistent {} B, the fastest \
                 plan), more than the RAM region of the crate's `memory.x` (line {}: LENGTH \
                 = {} bytes) by {} bytes; {reach}; or `memory_x = false` to leave the check \
                 to the linker",
                compiled.plan.arena_bytes,
                compiled.plan.persistent_bytes,
                ram.line,
                ram.bytes,
                needs - ram.bytes
            ),
        )));
    }
    Ok(Ok(compiled.tokens))
}

#[cfg(test)]
mod tests {
    //! The macro and the build.rs builder are two front ends over one emitter: for the same
    //! model and options they must produce the same tokens.

    use super::*;

    fn shared(name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/models")
            .join(name);
        p.canonicalize().unwrap().to_string_lossy().into_owned()
    }

    /// The macro's expansion.
    fn macro_tokens(input: proc_macro2::TokenStream) -> String {
        let text = input.to_string();
        let args: Args = syn::parse2(input).unwrap();
        expand(&args, &text, Path::new(env!("CARGO_MANIFEST_DIR")))
            .unwrap()
            .to_string()
    }

    /// A second expansion of the same call reads the plan cache, and gives the same tokens
    /// (text back to tokens and to text again); so does an error.
    #[test]
    fn the_plan_cache_gives_what_planning_gave() {
        let path = shared("tflm_person_detect_int8.tflite");
        let bytes = std::fs::read(&path).unwrap();
        for input in [
            quote!(#path, ram_budget = 40 * 1024),
            quote!(#path, ram_budget = 1024, tile = false),
        ] {
            let text = input.to_string();
            let key = cache::key(&bytes, &format!("{text}\0memory.x RAM 0"), Path::new(&path));
            let dir = cache::dir().expect("a cache directory in the workspace");
            let _ = std::fs::remove_file(dir.join(format!("{key}.txt")));
            let args: Args = syn::parse2(input).unwrap();
            let here = Path::new(env!("CARGO_MANIFEST_DIR"));
            let first = expand(&args, &text, here).map(|t| t.to_string());
            let stored = cache::load(&dir, &key).expect("stored by the first expansion");
            let second = expand(&args, &text, here).map(|t| t.to_string());
            match (&first, &second) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b);
                    assert!(matches!(stored, Entry::Tokens(_)));
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a.to_string(), b.to_string());
                    assert!(a.to_string().contains("over the RAM budget"), "{a}");
                    assert!(matches!(stored, Entry::Error(At::RamBudget, _)));
                }
                _ => panic!("{first:?} then {second:?}"),
            }
        }
    }

    /// A crate whose `memory.x` has less RAM than the fastest plan: Kiln's error names the
    /// file, the line and the lengths, and what a `ram_budget` would reach; with room, or
    /// with `memory_x = false`, it compiles.
    #[test]
    fn a_memory_x_too_small_is_kilns_error() {
        let path = shared("tflm_person_detect_int8.tflite");
        let dir = std::env::temp_dir().join(format!("kiln-memory-x-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let expand_with = |ram: &str, input: proc_macro2::TokenStream| {
            std::fs::write(
                dir.join("memory.x"),
                format!(
                    "MEMORY\n{{\n  FLASH : ORIGIN = 0x08000000, LENGTH = 512K\n  \
                     RAM : ORIGIN = 0x20000000, LENGTH = {ram}\n}}\n"
                ),
            )
            .unwrap();
            let text = input.to_string();
            let args: Args = syn::parse2(input).unwrap();
            expand(&args, &text, &dir).map_err(|e| e.to_string())
        };
        // The fastest plan needs 55,296 B; 48 KiB is reached by leaner kernels or tiling.
        let e = expand_with("48K", quote!(#path)).unwrap_err();
        for part in [
            "needs 55296 bytes of RAM",
            "`memory.x` (line 4: LENGTH = 49152 bytes) by 6144 bytes",
            "with `ram_budget = 49152` Kiln plans it in",
            "`memory_x = false`",
        ] {
            assert!(e.contains(part), "{part:?} not in {e}");
        }
        // 4 KiB: no plan fits; the budget error's reason is given.
        let e = expand_with("4K", quote!(#path)).unwrap_err();
        assert!(e.contains("no plan fits it"), "{e}");
        assert!(expand_with("64K", quote!(#path)).is_ok());
        assert!(expand_with("48K", quote!(#path, memory_x = false)).is_ok());
        // A budget given: it is the check, not memory.x.
        assert!(expand_with("4K", quote!(#path, ram_budget = 60 * 1024)).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn macro_and_builder_emit_the_same_tokens() {
        for model in [
            "tflm_hello_world_int8.tflite",
            "tflm_person_detect_int8.tflite",
        ] {
            let path = shared(model);
            let m = macro_tokens(
                quote!(#path, ram_budget = 96 * 1024, flash_budget = 400_000, align = 8),
            );
            let b = kiln_build::Model::new(&path)
                .ram_budget(96 * 1024)
                .flash_budget(400_000)
                .align(8)
                .tokens()
                .unwrap()
                .to_string();
            assert_eq!(m, b, "{model}");
            let m = macro_tokens(quote!(#path));
            let b = kiln_build::Model::new(&path).tokens().unwrap().to_string();
            assert_eq!(m, b, "{model} with default options");
            let m = macro_tokens(quote!(#path, optimize = false, align = 4));
            let b = kiln_build::Model::new(&path)
                .optimize(false)
                .align(4)
                .tokens()
                .unwrap()
                .to_string();
            assert_eq!(m, b, "{model} unoptimised");
            let m = macro_tokens(quote!(#path, reorder = false));
            let b = kiln_build::Model::new(&path)
                .reorder(false)
                .tokens()
                .unwrap()
                .to_string();
            assert_eq!(m, b, "{model} without reordering");
            let m = macro_tokens(quote!(#path, alias = false));
            let b = kiln_build::Model::new(&path)
                .alias(false)
                .tokens()
                .unwrap()
                .to_string();
            assert_eq!(m, b, "{model} without aliasing");
            let m = macro_tokens(quote!(#path, link_section = ".sram2"));
            let b = kiln_build::Model::new(&path)
                .link_section(".sram2")
                .tokens()
                .unwrap()
                .to_string();
            assert_eq!(m, b, "{model} in a link section");
            assert!(m.contains("link_section"), "{model}: no link section");
            let m = macro_tokens(quote!(#path, preserve_all_tensors = true));
            let b = kiln_build::Model::new(&path)
                .preserve_all_tensors(true)
                .tokens()
                .unwrap()
                .to_string();
            assert_eq!(m, b, "{model} preserving every tensor");
            assert!(m.contains("tensor_bytes"), "{model}: no tensor_bytes");
            let m = macro_tokens(quote!(#path, ram_budget = 96 * 1024, reserved_ram = 8 * 1024));
            let b = kiln_build::Model::new(&path)
                .ram_budget(96 * 1024)
                .reserved_ram(8 * 1024)
                .tokens()
                .unwrap()
                .to_string();
            assert_eq!(m, b, "{model} with reserved RAM");
            assert!(
                m.contains("reserved_ram = 8192"),
                "{model}: options not recorded"
            );
            let m = macro_tokens(quote!(#path, preserve_inputs = true, optimize = false));
            let b = kiln_build::Model::new(&path)
                .preserve_inputs(true)
                .optimize(false)
                .tokens()
                .unwrap()
                .to_string();
            assert_eq!(m, b, "{model} preserving the inputs");
        }
    }
}
