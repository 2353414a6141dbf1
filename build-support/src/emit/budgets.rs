//! The RAM and flash budget checks: a budget in bytes is checked now (a diagnostic naming
//! the bytes over, the smallest arena Kiln reaches and why not less, and the largest tensors
//! live at the peak); a budget given as a constant expression becomes a `const` assertion
//! beside the module, whose panic message the compiler prints on the user's expression,
//! numbers included, and says that Kiln planned without the expression's value.

use super::MODULE;
use crate::op::u;
use crate::options::{Budget, Options, expr_text};
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::Graph;
use kiln_planner::lifetimes::BufferOwner;
use kiln_planner::plan::Plan;
use kiln_planner::report::{CodeEstimate, Header};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;
use std::fmt::Write;

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
pub(super) fn budget_checks(
    options: &Options,
    plan: &Plan,
    graph: &Graph,
    header: &Header,
    reach: Option<&str>,
) -> Result<TokenStream> {
    let mut out = TokenStream::new();
    let prefix = options
        .model_name
        .as_ref()
        .map_or(String::new(), |n| format!("{n}: "));
    let mut peak = peak_summary(plan, graph);
    if let Some(reach) = reach {
        // No plan meets a budget in bytes: the smallest Kiln reaches and why not less.
        peak = format!("{reach}; {peak}");
    }
    // RAM: arena, state and what the firmware reserves, against a budget.
    if let Some(budget) = &options.ram_budget {
        ram_check(options, plan, budget, &prefix, &peak, &mut out)?;
    }
    // Flash: weights and prepared constants, against a budget (the figure of the docs and
    // of `kiln plan`).
    let code = CodeEstimate::of(&header.kernel_variants).opt_s;
    let flash_detail = format!(
        "{}; code not counted: about {code} B on a Cortex-M4 at opt-level \"s\", `kiln plan`'s estimate",
        header.flash.parts()
    );
    let flash = header.flash.total();
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
            // Kiln planned without the expression's value: say so, and how to get the plan
            // it would make for the bytes.
            let unknown = match (budget, reserved) {
                (Budget::Expr(e), _) | (_, Some(Budget::Expr(e))) => expr_text(e),
                _ => String::new(),
            };
            let peak = &format!(
                "{peak}; Kiln planned without knowing `{unknown}` (a macro sees the expression, \
                 not its value), so it took its smallest plan without tiling: with the budget \
                 and reserved RAM as integer literals it runs the first operators in strips of \
                 rows where that meets them (`kiln plan MODEL --min-ram` prints the smallest \
                 arena it reaches)"
            );
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
