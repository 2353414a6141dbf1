//! The options both front ends compile a model with: budgets, planning, tiling, link
//! sections. `kiln_build::Model`'s builder and `include_model!`'s arguments fill them in.

use kiln_planner::PlanOptions;
use proc_macro2::TokenStream;
use quote::quote;
use std::path::PathBuf;

/// Options shared by both front ends.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Fail if arena + persistent state + [`Options::reserved_ram`] exceeds this.
    pub ram_budget: Option<Budget>,
    /// RAM the firmware needs besides Kiln (stack, capture buffers, other state), counted
    /// against `ram_budget`: "fits" means arena + persistent + reserved <= budget. Only
    /// with a `ram_budget`.
    pub reserved_ram: Option<Budget>,
    /// Fail if weights + constants exceed this.
    pub flash_budget: Option<Budget>,
    /// How the arena is planned: alignment (a power of two, at most 64), operator order
    /// search and offset search. Every optimisation is on by default.
    pub plan: PlanOptions,
    /// The model's file name, for messages that the compiler prints (budget assertions).
    pub model_name: Option<String>,
    /// The model's file (an absolute path). With it, the generated code reads each weight
    /// buffer from the file with `include_bytes!` (which also rebuilds the crate when the
    /// file changes); without it, weights are emitted as byte-string literals.
    pub model_file: Option<PathBuf>,
    /// The link section of the arena's and the state's bytes (e.g. `.sram2`, `.dtcm`),
    /// instead of `.bss`. The section need not be initialised by the startup code: `take()`
    /// zeroes the bytes; its take-once flags stay in `.bss`. With a memory map
    /// ([`PlanOptions::regions`], each region's static in its own section) it places the
    /// persistent state alone.
    pub link_section: Option<String>,
    /// Patch-based execution: when and how far the first operators may run in strips.
    pub tiling: TilingOptions,
    /// Lower every operator with its reference kernel (TFLM's loops), never a fast one
    /// (folded-bias convolutions, the fast ADD): the same outputs, more instructions. For
    /// comparison only (`tools/firmware_bench.py` measures it as a stand-in for TFLM's
    /// reference kernels); off by default.
    pub reference_kernels: bool,
    /// Print a one-line note on stderr before a long search (more than 32 tilings to plan
    /// for a RAM budget): what is searched and its work budget. `include_model!` and `kiln
    /// plan` set it, so that a user waiting on `cargo check` sees why; off by default.
    pub search_notes: bool,
}

/// When [`compile_tokens`](crate::compile_tokens) runs the model's first operators one strip of rows at a time
/// (`kiln_planner::tiling`): only when a RAM budget (in bytes) is not met otherwise, or
/// only with slower kernels (then only with faster ones), or for the smallest arena
/// (`min_ram`), and never for more than `max_extra_macs_percent` %
/// more multiply-accumulates than the model has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TilingOptions {
    /// Whether tiling may be used at all (`tile = false` in the macro).
    pub enabled: bool,
    /// The most recomputation a tiling may cost, in percent of the model's MACs.
    pub max_extra_macs_percent: u32,
    /// Plan for the smallest arena (untiled or tiled within the cap) rather than the
    /// fastest plan that fits (`kiln plan --min-ram`).
    pub min_ram: bool,
    /// Stream the model's input (`streamed_input = true`, `kiln plan --streamed-input`):
    /// the first operators always run in strips, each strip reads its rows of the input
    /// from the `kiln::RowSource` that `invoke` takes, and the input is never whole in the
    /// arena (`kiln_planner::tiling::stream_input`).
    pub streamed_input: bool,
    /// Whether a region may also run in patches of rows and columns where that makes the
    /// arena smaller or meets a budget strips of rows do not (`kiln plan --strips-only`
    /// turns it off, to compare).
    pub columns: bool,
}

impl Default for TilingOptions {
    fn default() -> Self {
        TilingOptions {
            enabled: true,
            max_extra_macs_percent: 20,
            min_ram: false,
            streamed_input: false,
            columns: true,
        }
    }
}

/// A RAM or flash budget: a number, or a constant expression checked by the compiler.
#[derive(Clone, Debug)]
pub enum Budget {
    Bytes(usize),
    Expr(TokenStream),
}

/// An expression as a user would write it (`crate::BUDGET`, not `crate :: BUDGET`).
pub fn expr_text(expr: &TokenStream) -> String {
    let item = quote!(const _: usize = #expr;);
    syn::parse2::<syn::File>(item)
        .ok()
        .map(|f| prettyplease::unparse(&f))
        .and_then(|t| {
            let t = t.trim().strip_prefix("const _: usize = ")?;
            Some(t.strip_suffix(';')?.to_string())
        })
        .filter(|t| !t.contains('\n'))
        .unwrap_or_else(|| expr.to_string())
}
