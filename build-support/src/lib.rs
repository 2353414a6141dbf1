//! `kiln-build`: compile a `.tflite` model from `build.rs`, and the one emitter.
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     kiln_build::Model::new("models/hello_world_int8.tflite")
//!         .ram_budget(64 * 1024)
//!         .compile("hello")?;
//!     Ok(())
//! }
//! ```
//! then, in the crate: `mod hello { include!(concat!(env!("OUT_DIR"), "/hello.rs")); }`.
//!
//! [`Model::compile`] writes `$OUT_DIR/<name>.rs` (formatted, first line `// @generated`),
//! `<name>.plan.txt`, `<name>.plan.svg` and `<name>.plan.json` beside it (and into
//! [`Model::report_dir`] if given), and prints `cargo:rerun-if-changed`.
//! `kiln::include_model!` calls the same [`compile_tokens`], so both front ends emit the same
//! tokens for the same model and options.

pub mod control;
pub mod emit;
#[cfg(feature = "exec")]
pub mod exec;
pub mod lower;
pub mod ops;

pub use emit::Budget;
pub use kiln_planner::PlanOptions;
pub use kiln_planner::alias::AliasOptions;
use kiln_planner::diag::Diagnostic;
pub use kiln_planner::diag::ErrorKind;
pub use kiln_planner::regions::Region;
pub use kiln_planner::report::{Header, KernelUse, RecordedOptions};
use kiln_planner::{Graph, Plan};
use proc_macro2::TokenStream;
use std::path::{Path, PathBuf};

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
}

/// When [`compile_tokens`] runs the model's first operators one strip of rows at a time
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
}

impl Default for TilingOptions {
    fn default() -> Self {
        TilingOptions {
            enabled: true,
            max_extra_macs_percent: 20,
            min_ram: false,
        }
    }
}

/// How a compiled model was tiled: its operators `start..end` (of the model's stored order)
/// run as `patches` strips of rows of tensor `cut`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilingReport {
    pub start: usize,
    pub end: usize,
    pub patches: usize,
    /// The tensor assembled from the strips (the model's index) and its name.
    pub cut: usize,
    pub cut_name: String,
    /// The cut's rows of each strip.
    pub strips: Vec<(usize, usize)>,
    /// Multiply-accumulates computed again for the strips' halos.
    pub extra_macs: u64,
}

/// A model compiled to tokens, with the graph and plan that produced them.
pub struct Compiled {
    pub tokens: TokenStream,
    pub graph: Graph,
    pub plan: Plan,
    /// The arena of the smallest plan (lean scratch, convolutions in place), when it is
    /// smaller than the chosen plan's (see [`compile_tokens`]): the RAM the faster plan costs.
    pub smallest_arena_bytes: Option<usize>,
    /// The reproducibility header (model sha256, Kiln's version, options, kernel variants),
    /// also in the generated module's docs.
    pub header: Header,
    /// The subgraphs control flow runs, each with its plan, and the persistent layout.
    pub program: control::Program,
    /// Multiply-accumulates of one `invoke()` of the model (untiled).
    pub macs: u64,
    /// The tiling, if the plan runs the first operators in strips (`graph` is then the
    /// tiled graph).
    pub tiling: Option<TilingReport>,
}

impl Compiled {
    /// The text report (`<name>.plan.txt`, `kiln plan`): the header, the summary, the steps.
    pub fn report_text(&self, title: &str) -> String {
        let mut s = kiln_planner::report::text_with(&self.graph, &self.plan, title, &self.header);
        if let Some(n) = self.smallest_arena_bytes {
            s.push_str(&format!(
                "\nRAM or speed: {n} bytes of arena with slower kernels (fast convolutions \
                 without their widened pixels, or in place over their inputs); Kiln \
                 takes them only when the RAM budget needs them: --ram-budget {n}\n"
            ));
        }
        s.push_str(&self.tiling_text());
        for (i, g, c, at) in self.callees() {
            s.push_str(&format!(
                "\n## Subgraph {i}: {}\n\n",
                at.map_or("not called".to_string(), |(o, n)| format!(
                    "its arena is at offset {o} of the model's, in the scratch of {n}"
                ))
            ));
            s.push_str(&kiln_planner::report::text(
                g,
                &c.plan,
                &format!("subgraph {i}"),
            ));
        }
        s
    }

    /// The MAC count and, if the model runs tiled, which operators and strips (the text
    /// report's lines).
    fn tiling_text(&self) -> String {
        let mut s = format!("\nMACs: {} per invoke()", self.macs);
        match &self.tiling {
            None => s.push_str(", not tiled\n"),
            Some(t) => {
                let strips: Vec<String> =
                    t.strips.iter().map(|(a, b)| format!("{a}..{b}")).collect();
                s.push_str(&format!(
                    "; tiled: the model's operators {}..{} run as {} strips of rows of `{}` \
                     (t{}; rows {}), {} MACs computed again for the halos ({:.1} %)\n",
                    t.start,
                    t.end,
                    t.patches,
                    t.cut_name,
                    t.cut,
                    strips.join(", "),
                    t.extra_macs,
                    100.0 * t.extra_macs as f64 / self.macs.max(1) as f64
                ));
            }
        }
        s
    }

    /// The called subgraphs: index, graph, plan, and where their arena is (its offset in
    /// the model's arena and the control flow step whose scratch holds it).
    fn callees(&self) -> Vec<CalleeReport<'_>> {
        let at = control::arena_places(&self.graph, &self.plan, &self.program);
        self.program
            .callees
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let (c, g) = (c.as_ref()?, self.graph.subgraph(i)?);
                Some((i, g, c, at.get(i).cloned().flatten()))
            })
            .collect()
    }

    /// The JSON report (`<name>.plan.json`, `kiln plan --json`), with the header and
    /// `smallest_arena_bytes`.
    pub fn report_json(&self) -> String {
        let mut v = serde_json::to_value(kiln_planner::report::json_with(
            &self.graph,
            &self.plan,
            &self.header,
        ))
        .expect("the report serializes");
        if let Some(obj) = v.as_object_mut() {
            obj.insert(
                "smallest_arena_bytes".into(),
                self.smallest_arena_bytes.into(),
            );
            obj.insert("macs".into(), self.macs.into());
            obj.insert(
                "extra_macs".into(),
                self.tiling.as_ref().map_or(0, |t| t.extra_macs).into(),
            );
            obj.insert(
                "tiling".into(),
                self.tiling.as_ref().map_or(serde_json::Value::Null, |t| {
                    serde_json::json!({
                        "start": t.start,
                        "end": t.end,
                        "patches": t.patches,
                        "cut": t.cut,
                        "cut_name": t.cut_name,
                        "strips": t.strips,
                    })
                }),
            );
            let subgraphs: Vec<serde_json::Value> = self
                .callees()
                .into_iter()
                .map(|(i, g, c, at)| {
                    serde_json::json!({
                        "subgraph": i,
                        "arena_offset": at.as_ref().map(|a| a.0),
                        "in_scratch_of": at.map(|a| a.1),
                        "state_base": c.state_base,
                        "plan": kiln_planner::report::json(g, &c.plan),
                    })
                })
                .collect();
            if !subgraphs.is_empty() {
                obj.insert("subgraphs".into(), subgraphs.into());
            }
        }
        let mut s = serde_json::to_string_pretty(&v).expect("the report serializes");
        s.push('\n');
        s
    }

    /// The SVG of the arena over time (`<name>.plan.svg`, `kiln plan --svg`).
    pub fn report_svg(&self, title: &str) -> String {
        let title = match &self.tiling {
            Some(t) => format!(
                "{title} (operators {}..{} in {} strips of rows)",
                t.start, t.end, t.patches
            ),
            None => title.to_string(),
        };
        kiln_planner::report::svg(&self.graph, &self.plan, &title)
    }

    /// Writes `<name>.plan.txt`, `.plan.svg` and `.plan.json` into `dir` (created if
    /// missing), leaving files whose contents are unchanged alone. Returns their paths.
    pub fn write_reports(
        &self,
        dir: &Path,
        name: &str,
        title: &str,
    ) -> std::io::Result<[PathBuf; 3]> {
        std::fs::create_dir_all(dir)?;
        let files = [
            (format!("{name}.plan.txt"), self.report_text(title)),
            (format!("{name}.plan.svg"), self.report_svg(title)),
            (format!("{name}.plan.json"), self.report_json()),
        ];
        let mut paths = Vec::new();
        for (file, text) in files {
            let path = dir.join(file);
            write_if_changed(&path, &text)?;
            paths.push(path);
        }
        Ok(paths.try_into().expect("three reports"))
    }
}

/// A called subgraph for the reports: index, graph, plan, and its arena's offset and the
/// step whose scratch holds it.
type CalleeReport<'a> = (
    usize,
    &'a Graph,
    &'a control::Callee,
    Option<(usize, String)>,
);

/// Writes `text` to `path` unless it holds it already (so dependants do not rebuild).
fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// The version of Kiln, as the reproducibility header records it.
pub const KILN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// sha256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            use std::fmt::Write;
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The options as the header records them.
pub fn recorded_options(options: &Options) -> RecordedOptions {
    let budget = |b: &Option<Budget>| {
        b.as_ref().map(|b| match b {
            Budget::Bytes(n) => n.to_string(),
            Budget::Expr(e) => emit::expr_text(e),
        })
    };
    let p = &options.plan;
    let a = &p.aliasing;
    let alias = if *a == AliasOptions::default() {
        "true".to_string()
    } else if !(a.views || a.in_place || a.concat || a.depthwise || a.pointwise) {
        "false".to_string()
    } else {
        [
            (a.views, "views"),
            (a.in_place, "in_place"),
            (a.concat, "concat"),
            (a.depthwise, "depthwise"),
            (a.pointwise, "pointwise"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join("+")
    };
    RecordedOptions {
        ram_budget: budget(&options.ram_budget),
        flash_budget: budget(&options.flash_budget),
        reserved_ram: budget(&options.reserved_ram),
        align: p.alignment,
        optimize: p.placement != PlanOptions::unoptimised().placement,
        reorder: p.order.reorder,
        alias,
        preserve_all_tensors: p.preserve_all_tensors,
        preserve_inputs: p.preserve_inputs,
        link_section: options.link_section.clone(),
        regions: (!p.regions.is_empty()).then(|| {
            p.regions
                .iter()
                .map(|r| match r.align {
                    1 => format!("{}:{}", r.section, r.size),
                    a => format!("{}:{}:{a}", r.section, r.size),
                })
                .collect::<Vec<_>>()
                .join(" ")
        }),
    }
}

/// The plans [`compile_tokens`] chooses from, fastest first, as the header names them.
const PLAN_VARIANTS: [&str; 3] = [
    "fastest: declared scratch, no slow in-place forms",
    "lean scratch: fast convolutions without widened pixels",
    "smallest: lean scratch and slow in-place convolutions",
];

/// Reads, plans, verifies and emits a model. The one path behind both front ends.
pub fn compile_tokens(bytes: &[u8], options: &Options) -> Result<Compiled, Diagnostic> {
    let graph = kiln_planner::read_model(bytes)?;
    // Lowering first: the operators' modules declare their kernels' scratch and aliasing
    // abilities, which the planner decides from.
    if options.reserved_ram.is_some() && options.ram_budget.is_none() {
        return Err(Diagnostic::unsupported(
            "`reserved_ram` counts against `ram_budget`, which is not given: give \
             `ram_budget` too (the RAM of the whole device)",
        ));
    }
    // The subgraphs control flow runs, planned first: their arenas are their callers' scratch.
    let mut program = control::compile_callees(&graph, options)?;
    let mut steps = lower::lower_all_with(&graph, options.reference_kernels)?;
    control::prepare_calls(&graph, &mut steps, &graph, &program)?;
    let macs = kiln_planner::tiling::macs(&graph);
    let plans = plan_variants(&graph, &steps, options)?;
    let (graph, steps, plans, tiling) = match tile_if_needed(&graph, &plans, options, macs)? {
        Some((tiled, steps, tiled_plans, report)) => (tiled, steps, tiled_plans, Some(report)),
        None => (graph, steps, plans, None),
    };
    let (mut plan, smallest_arena_bytes, variant) = choose_plan(plans, options);
    plan.persistent_bytes = control::layout_persistent(&graph, &plan, &mut program);
    let mut header = Header {
        model_sha256: sha256_hex(bytes),
        kiln_version: KILN_VERSION.to_string(),
        options: recorded_options(options),
        alignment: plan.alignment,
        plan_variant: PLAN_VARIANTS[variant].to_string(),
        kernel_variants: Vec::new(),
    };
    let tokens = emit::emit_with(&graph, &plan, steps, options, &mut header, &program)?;
    Ok(Compiled {
        tokens,
        graph,
        plan,
        smallest_arena_bytes,
        header,
        program,
        macs,
        tiling,
    })
}

/// The plans a model can have, fastest first, each smaller than the one before, with their
/// [`PLAN_VARIANTS`] index (see [`choose_plan`]).
fn plan_variants(
    graph: &Graph,
    steps: &[lower::Step],
    options: &Options,
) -> Result<Vec<(Plan, usize)>, Diagnostic> {
    // The three declarations: `fast` without the slow in-place forms, `lean` also with the
    // lean scratch, `small` with the lean scratch and the in-place forms.
    let small = lower::declared(steps);
    let (mut fast, mut lean, mut small) = (small.clone(), small.clone(), small);
    for s in steps {
        let i = s.op.0;
        // (strip the slow in-place forms, use the lean scratch)
        for (d, strip, lean_scratch) in [
            (&mut fast, true, false),
            (&mut lean, true, true),
            (&mut small, false, true),
        ] {
            if let Some(Some((scratch, abilities))) = d.ops.get_mut(i) {
                if strip && s.slow_in_place {
                    abilities.conv_in_place = None;
                }
                if let (true, Some(bytes)) = (lean_scratch, s.lean_scratch_bytes) {
                    *scratch = bytes;
                }
            }
        }
    }
    let mut plans = Vec::new();
    let mut region_misfit = None;
    for (i, d) in [&fast, &lean, &small].into_iter().enumerate() {
        if i > 0 && (d == &fast || (i == 2 && d == &lean)) {
            continue;
        }
        let p = match kiln_planner::plan(graph, d, &options.plan) {
            // A memory map the faster plan does not fit: the next, smaller plan may.
            Err(e) if !options.plan.regions.is_empty() && e.kind == ErrorKind::OverRamBudget => {
                region_misfit = Some(e);
                continue;
            }
            p => p?,
        };
        // A later plan is worth keeping only if it is smaller.
        if plans
            .last()
            .is_none_or(|(q, _): &(Plan, usize)| p.arena_bytes < q.arena_bytes)
        {
            plans.push((p, i));
        }
    }
    if let (true, Some(e)) = (plans.is_empty(), region_misfit) {
        return Err(e);
    }
    Ok(plans)
}

/// Whether `plan` meets a RAM budget given in bytes (`None`: no such budget).
fn fits_budget(plan: &Plan, options: &Options) -> Option<bool> {
    let reserved = match &options.reserved_ram {
        None => 0,
        Some(Budget::Bytes(r)) => *r,
        Some(Budget::Expr(_)) => return None,
    };
    match &options.ram_budget {
        Some(Budget::Bytes(b)) => {
            Some((plan.arena_bytes + plan.persistent_bytes).saturating_add(reserved) <= *b)
        }
        _ => None,
    }
}

/// The most tilings [`tile_if_needed`] lowers and plans for one model.
const MAX_TILINGS_PLANNED: usize = 200;

/// The most tilings [`tile_if_needed`] plans, once one meets the budget, in search of one
/// that meets it with faster kernels (a lower [`PLAN_VARIANTS`] index).
const MAX_TILINGS_AFTER_FIT: usize = 16;

/// A tiled graph with its steps, plans and report.
type TiledPlans = (Graph, Vec<lower::Step>, Vec<(Plan, usize)>, TilingReport);

/// Patch-based execution, where it is needed and allowed: with a RAM budget in bytes that
/// no untiled plan meets, or that only a slower untiled plan meets (lean scratch, slow
/// in-place convolutions), the tiling whose plans meet it with the fastest kernels (the
/// lowest [`PLAN_VARIANTS`] index; then the fewest extra MACs, then the fewest strips), and
/// where an untiled plan meets it, only if its kernels are faster than that plan's; with
/// `min_ram`, the tiling with the smallest arena if it is smaller than the untiled one's.
/// Tilings over the MAC cap are not tried. `None`: no tiling.
///
/// The slow in-place convolutions cost more than recomputing halos: on the emulated M4,
/// person_detect under a 40,960-byte budget took 22.1 M instructions untiled with four of
/// them, and takes 18.6 M tiled in two strips with the fastest kernels (0.3 % extra MACs).
/// Work budgets in tilings planned: [`MAX_TILINGS_PLANNED`] in all, and
/// [`MAX_TILINGS_AFTER_FIT`] after the first that meets the budget.
///
/// Tiling is not used with debug mode (every tensor keeps its bytes) or control flow.
fn tile_if_needed(
    graph: &Graph,
    untiled: &[(Plan, usize)],
    options: &Options,
    macs: u64,
) -> Result<Option<TiledPlans>, Diagnostic> {
    use kiln_planner::tiling;
    let t = &options.tiling;
    let budget_unmet = untiled
        .iter()
        .all(|(p, _)| fits_budget(p, options) == Some(false));
    // The variant of the fastest untiled plan that meets the budget.
    let untiled_fit = first_fit(untiled, options);
    let slower = untiled_fit.is_some_and(|v| v > 0);
    if !t.enabled
        || !(t.min_ram || budget_unmet || slower)
        || options.plan.preserve_all_tensors
        || options.plan.preserve_inputs
        || !graph.subgraphs.is_empty()
    {
        return Ok(None);
    }
    let cap = macs.saturating_mul(u64::from(t.max_extra_macs_percent)) / 100;
    let mut candidates: Vec<(u64, tiling::Tiled)> = Vec::new();
    for c in tiling::candidates(graph) {
        let tiled = match tiling::tile(graph, c) {
            Ok(t) => t,
            // A region the rewrite declines; a wrong tiling (a Kiln bug) is an error.
            Err(e) if e.kind == ErrorKind::Unsupported => continue,
            Err(e) => return Err(e),
        };
        let extra = tiling::macs(&tiled.graph).saturating_sub(macs);
        if extra <= cap {
            candidates.push((extra, tiled));
        }
    }
    candidates.sort_by_key(|(extra, t)| (*extra, t.tiling.patches, t.tiling.end, t.tiling.start));
    let smallest = |plans: &[(Plan, usize)]| plans.iter().map(|(p, _)| p.arena_bytes).min();
    let mut best: Option<(usize, TiledPlans)> = None;
    // The fitting tiling with the fastest kernels so far: its variant and plans.
    let mut fit: Option<(usize, TiledPlans)> = None;
    let mut planned_after_fit = 0;
    let floor = smallest(untiled).unwrap_or(0);
    // A work budget counted in tilings planned (fewest extra MACs first), never time.
    for (extra, tiled) in candidates.into_iter().take(MAX_TILINGS_PLANNED) {
        if fit.is_some() {
            if planned_after_fit == MAX_TILINGS_AFTER_FIT {
                break;
            }
            planned_after_fit += 1;
        }
        let steps = lower::lower_all_with(&tiled.graph, options.reference_kernels)?;
        let plans = match plan_variants(&tiled.graph, &steps, options) {
            Ok(plans) => plans,
            // A memory map this tiling does not fit.
            Err(e) if e.kind == ErrorKind::OverRamBudget => continue,
            Err(e) => return Err(e),
        };
        let arena = smallest(&plans).unwrap_or(usize::MAX);
        let report = TilingReport {
            start: tiled.tiling.start,
            end: tiled.tiling.end,
            patches: tiled.tiling.patches,
            cut: tiled.cut.0,
            cut_name: graph.tensor(tiled.cut).name.clone(),
            strips: tiled.strips.clone(),
            extra_macs: extra,
        };
        let variant = first_fit(&plans, options);
        let entry = (tiled.graph, steps, plans, report);
        match variant {
            // Faster kernels than the fitting tilings before (which have fewer extra MACs).
            Some(v) if !t.min_ram && fit.as_ref().is_none_or(|(f, _)| v < *f) => {
                fit = Some((v, entry));
                if v == 0 {
                    break;
                }
            }
            Some(_) if !t.min_ram => {}
            // The smallest so far (`min_ram`, or for the budget error if nothing fits).
            _ if arena < floor && best.as_ref().is_none_or(|(b, _)| arena < *b) => {
                best = Some((arena, entry));
            }
            _ => {}
        }
    }
    if let Some((v, entry)) = fit {
        // Where an untiled plan meets the budget, only faster kernels are worth the halos.
        return Ok(untiled_fit.is_none_or(|u| v < u).then_some(entry));
    }
    if slower {
        return Ok(None);
    }
    // With a budget no tiling meets either, the smallest plan, whose budget error says what
    // Kiln can do at least.
    Ok(best.map(|(_, entry)| entry))
}

/// The [`PLAN_VARIANTS`] index of the first (fastest) of `plans` that meets a RAM budget
/// given in bytes, if one does.
fn first_fit(plans: &[(Plan, usize)], options: &Options) -> Option<usize> {
    plans
        .iter()
        .find(|(p, _)| fits_budget(p, options) == Some(true))
        .map(|&(_, v)| v)
}

/// The plan to emit among `plans` (see [`plan_variants`]), the arena of the smallest plan if
/// that one is smaller, and which of [`PLAN_VARIANTS`] it is.
///
/// The fast int8 convolution kernels trade RAM for speed twice: they widen pixels into a
/// larger scratch than they need (`Step::lean_scratch_bytes`), and their forms in place over
/// their input (which lower the arena) work one pixel or channel plane at a time, several
/// times slower (`Step::slow_in_place`). So up to three plans are made, fastest first: as
/// declared; with the lean scratch; with the lean scratch and in place. The first that
/// meets a RAM budget given in bytes is taken (without a budget, the fastest; with a budget
/// given as a constant expression, unknown here, the smallest; with `min_ram`, the
/// smallest).
fn choose_plan(mut plans: Vec<(Plan, usize)>, options: &Options) -> (Plan, Option<usize>, usize) {
    let smallest = plans.iter().map(|(p, _)| p.arena_bytes).min().unwrap_or(0);
    let fits = |(p, _): &(Plan, usize)| match (&options.ram_budget, fits_budget(p, options)) {
        _ if options.tiling.min_ram => p.arena_bytes == smallest,
        (None, _) => true,
        (Some(_), Some(fits)) => fits,
        (Some(_), None) => p.arena_bytes == smallest,
    };
    // The fastest plan that fits, else the smallest (whose budget error says what Kiln can
    // do at least).
    let chosen = plans.iter().position(fits).unwrap_or_else(|| {
        plans
            .iter()
            .position(|(p, _)| p.arena_bytes == smallest)
            .unwrap_or(0)
    });
    let (plan, variant) = plans.swap_remove(chosen);
    let smaller = (smallest < plan.arena_bytes).then_some(smallest);
    (plan, smaller, variant)
}

/// Formats emitted tokens as a Rust file with a `// @generated` first line.
pub fn format_file(tokens: &TokenStream, source: &str) -> String {
    let file: syn::File = syn::parse2(tokens.clone()).expect("the emitter produces valid Rust");
    format!(
        "// @generated by kiln-build from {source}. Do not edit.\n{}",
        prettyplease::unparse(&file)
    )
}

/// The message of a model's diagnostic as both front ends print it: the model's file name,
/// then the diagnostic on one line (`model.tflite: the model needs ... bytes of RAM, ...`).
pub fn message(model_name: &str, d: &Diagnostic) -> String {
    let text = d.to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    format!("{model_name}: {}", lines.join(" "))
}

/// The file name of a model path, as messages name the model.
fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// An error of the build.rs front end.
///
/// Its `Debug` is its `Display`, the message `include_model!` gives for the same model: a
/// build script's `fn main() -> Result<(), Box<dyn Error>>` prints the error's `Debug`.
pub enum Error {
    /// The model file could not be read.
    Io(PathBuf, std::io::Error),
    /// The model cannot be compiled.
    Model(PathBuf, Diagnostic),
    /// Kiln panicked on the model: a bug in Kiln (the message of the panic).
    Internal(PathBuf, String),
    /// `OUT_DIR` is not set (not running in a build script) and no directory was given.
    NoOutDir,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io(p, e) => write!(f, "cannot read {}: {e}", p.display()),
            Error::Model(p, d) => f.write_str(&message(&file_name(p), d)),
            Error::Internal(p, m) => write!(
                f,
                "{}: internal error in Kiln, please report it with the model: {m}",
                file_name(p)
            ),
            Error::NoOutDir => f.write_str("OUT_DIR is not set: call compile() from build.rs"),
        }
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(_, e) => Some(e),
            Error::Model(_, d) => Some(d),
            _ => None,
        }
    }
}

/// The message of a caught panic.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// A model to compile from `build.rs`.
#[derive(Clone, Debug)]
pub struct Model {
    path: PathBuf,
    options: Options,
    out_dir: Option<PathBuf>,
    report_dir: Option<PathBuf>,
}

impl Model {
    /// A model file; a relative path is resolved from `CARGO_MANIFEST_DIR`.
    pub fn new(path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let path = match std::env::var_os("CARGO_MANIFEST_DIR") {
            Some(dir) if path.is_relative() => Path::new(&dir).join(path),
            _ => path.to_path_buf(),
        };
        let options = Options {
            model_name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
            model_file: Some(path.canonicalize().unwrap_or_else(|_| path.clone())),
            ..Options::default()
        };
        Model {
            path,
            options,
            out_dir: None,
            report_dir: None,
        }
    }

    /// Fail the build if arena + persistent state (+ [`Model::reserved_ram`]) exceeds
    /// `bytes`.
    #[must_use]
    pub fn ram_budget(mut self, bytes: usize) -> Self {
        self.options.ram_budget = Some(Budget::Bytes(bytes));
        self
    }

    /// RAM the firmware needs besides Kiln (stack, capture buffers, other state), counted
    /// against [`Model::ram_budget`], which then is the device's whole RAM: the model fits
    /// if arena + persistent + `bytes` <= budget.
    #[must_use]
    pub fn reserved_ram(mut self, bytes: usize) -> Self {
        self.options.reserved_ram = Some(Budget::Bytes(bytes));
        self
    }

    /// Fail the build if weights + constants exceed `bytes`.
    #[must_use]
    pub fn flash_budget(mut self, bytes: usize) -> Self {
        self.options.flash_budget = Some(Budget::Bytes(bytes));
        self
    }

    /// Alignment of arena offsets in bytes (a power of two, at most 64; default 16).
    #[must_use]
    pub fn align(mut self, bytes: usize) -> Self {
        self.options.plan.alignment = bytes;
        self
    }

    /// With `false`, plan as TFLM does (stored order, its greedy offsets), for comparison.
    #[must_use]
    pub fn optimize(mut self, on: bool) -> Self {
        let alignment = self.options.plan.alignment;
        let (preserve_all_tensors, preserve_inputs) = (
            self.options.plan.preserve_all_tensors,
            self.options.plan.preserve_inputs,
        );
        let regions = std::mem::take(&mut self.options.plan.regions);
        self.options.plan = if on {
            PlanOptions::default()
        } else {
            PlanOptions::unoptimised()
        };
        self.options.plan.alignment = alignment;
        self.options.plan.preserve_all_tensors = preserve_all_tensors;
        self.options.plan.preserve_inputs = preserve_inputs;
        self.options.plan.regions = regions;
        self.options.tiling.enabled = on;
        self
    }

    /// With `true`, every operator runs its reference kernel (TFLM's loops), never a fast
    /// one ([`Options::reference_kernels`]): for comparison only.
    #[must_use]
    pub fn reference_kernels(mut self, on: bool) -> Self {
        self.options.reference_kernels = on;
        self
    }

    /// With `false`, never run the first operators in strips of rows (patch-based execution,
    /// which Kiln uses only when the RAM budget is not met otherwise, or only with slower
    /// kernels).
    #[must_use]
    pub fn tile(mut self, on: bool) -> Self {
        self.options.tiling.enabled = on;
        self
    }

    /// The most recomputation a tiling may cost, in percent of the model's multiply-
    /// accumulates (default 20).
    #[must_use]
    pub fn max_extra_macs(mut self, percent: u32) -> Self {
        self.options.tiling.max_extra_macs_percent = percent;
        self
    }

    /// With `false`, keep the model's stored operator order (offsets are still optimised).
    #[must_use]
    pub fn reorder(mut self, on: bool) -> Self {
        self.options.plan.order.reorder = on;
        self
    }

    /// With `false`, every tensor gets its own buffer: no views, in-place operators or
    /// concatenation slices (see [`AliasOptions`] for each kind).
    #[must_use]
    pub fn alias(mut self, on: bool) -> Self {
        self.options.plan.aliasing = if on {
            AliasOptions::default()
        } else {
            AliasOptions::none()
        };
        self
    }

    /// Which kinds of aliasing the plan may use.
    #[must_use]
    pub fn aliasing(mut self, aliasing: AliasOptions) -> Self {
        self.options.plan.aliasing = aliasing;
        self
    }

    /// Put the arena's and the state's bytes in link section `section` (e.g. `".sram2"`)
    /// instead of `.bss` (see [`Options::link_section`]).
    #[must_use]
    pub fn link_section(mut self, section: impl Into<String>) -> Self {
        self.options.link_section = Some(section.into());
        self
    }

    /// Adds a RAM region to the memory map (`link_section`, size in bytes; call once per
    /// region, fastest first): the arena's buffers are split over the regions, the hottest
    /// in the first that holds them, one static per region in its section
    /// ([`kiln_planner::regions`]). The persistent state stays in its own static
    /// ([`Model::link_section`] places it).
    #[must_use]
    pub fn region(mut self, section: impl Into<String>, bytes: usize) -> Self {
        let region = kiln_planner::regions::Region::new(section, bytes);
        self.options.plan.regions.push(region);
        self
    }

    /// [`Model::region`] with an alignment for the region's start and offsets (a power of
    /// two of at most 64 bytes; the plan's alignment when smaller).
    #[must_use]
    pub fn region_aligned(
        mut self,
        section: impl Into<String>,
        bytes: usize,
        align: usize,
    ) -> Self {
        let mut region = kiln_planner::regions::Region::new(section, bytes);
        region.align = align;
        self.options.plan.regions.push(region);
        self
    }

    /// Debug mode, as TFLM's `preserve_all_tensors`: every tensor gets its own bytes, kept
    /// to the end of the run, and the generated `tensor_bytes(t)` reads any of them after
    /// `invoke()` (the arena grows to the sum of the activations).
    #[must_use]
    pub fn preserve_all_tensors(mut self, on: bool) -> Self {
        self.options.plan.preserve_all_tensors = on;
        self
    }

    /// With `true`, the inputs keep their bytes through `invoke()`, so they need writing only
    /// when they change.
    #[must_use]
    pub fn preserve_inputs(mut self, on: bool) -> Self {
        self.options.plan.preserve_inputs = on;
        self
    }

    /// Write into `dir` instead of `$OUT_DIR`.
    #[must_use]
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Also write the plan reports (`<name>.plan.txt`, `.plan.svg`, `.plan.json`) into
    /// `dir`, a folder you know (e.g. `target/kiln`), not only into the hashed `$OUT_DIR`.
    /// A relative `dir` is resolved from `CARGO_MANIFEST_DIR`; it is created if missing.
    #[must_use]
    pub fn report_dir(mut self, dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        self.report_dir = Some(match std::env::var_os("CARGO_MANIFEST_DIR") {
            Some(root) if dir.is_relative() => Path::new(&root).join(dir),
            _ => dir.to_path_buf(),
        });
        self
    }

    /// The tokens for this model, exactly as `include_model!` would emit them.
    pub fn tokens(&self) -> Result<TokenStream, Error> {
        Ok(self.compiled()?.tokens)
    }

    fn compiled(&self) -> Result<Compiled, Error> {
        let bytes = std::fs::read(&self.path).map_err(|e| Error::Io(self.path.clone(), e))?;
        // A bug in Kiln must still be an error the build script reports, not a panic.
        std::panic::catch_unwind(|| compile_tokens(&bytes, &self.options))
            .map_err(|p| Error::Internal(self.path.clone(), panic_text(p.as_ref())))?
            .map_err(|d| Error::Model(self.path.clone(), d))
    }

    /// Compiles the model into `<out>/<name>.rs`, with `<name>.plan.txt`, `<name>.plan.svg`
    /// and `<name>.plan.json` beside it (and in [`Model::report_dir`] if given). Returns the
    /// path of the `.rs` file.
    pub fn compile(&self, name: &str) -> Result<PathBuf, Error> {
        let dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => PathBuf::from(std::env::var_os("OUT_DIR").ok_or(Error::NoOutDir)?),
        };
        println!("cargo:rerun-if-changed={}", self.path.display());
        let c = self.compiled()?;
        let source = file_name(&self.path);
        for d in std::iter::once(&dir).chain(&self.report_dir) {
            c.write_reports(d, name, &source)
                .map_err(|e| Error::Io(d.clone(), e))?;
        }
        let file = dir.join(format!("{name}.rs"));
        write_if_changed(&file, &format_file(&c.tokens, &source))
            .map_err(|e| Error::Io(file.clone(), e))?;
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build script's `main() -> Result<(), Box<dyn Error>>` prints `Error: {:?}`: that is
    /// the message `include_model!` gives for the same model and budget (the UI test's).
    #[test]
    fn a_build_script_error_prints_the_macros_message() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let e = Model::new(root.join("../shared/models/tflm_person_detect_int8.tflite"))
            .ram_budget(16 * 1024)
            .tokens()
            .unwrap_err();
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        let debug = format!("{boxed:?}");
        assert_eq!(debug, boxed.to_string());
        assert!(!debug.contains("Diagnostic"), "{debug}");
        let ui =
            std::fs::read_to_string(root.join("tests/ui/ram_over_budget_literal.stderr")).unwrap();
        let first = ui.lines().next().unwrap();
        assert_eq!(first.strip_prefix("error: "), Some(debug.as_str()));

        let e = Model::new(root.join("tests/ui/fixtures/not_a_model.tflite"))
            .tokens()
            .unwrap_err();
        assert_eq!(format!("{e:?}"), e.to_string());
        assert!(e.to_string().starts_with("not_a_model.tflite: "), "{e}");
    }
}
