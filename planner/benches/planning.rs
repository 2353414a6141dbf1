//! Planning benchmark: writes the "Memory plans", "Synthetic plans", "Planning time at
//! scale" and "Order search that knows aliasing" sections of BENCHMARKS.md.
//!
//! `cargo bench -p kiln-planner --bench planning`
//!
//! For every public model (`../shared/models`) and Kiln test model (`tests/models`): ops,
//! tensors, weight bytes, TFLM's planned region (head) and minimal arena as measured by
//! `tools/tflm_arena.py` with the pinned tflite-micro build (`tools/data/tflm_arena.json`),
//! the lower bound for the stored order and for the best order, Kiln's arena with every
//! optimisation off and all on, and the time to read and plan.
//!
//! For synthetic graphs of 100, 500 and 2,000 operators (`kiln_planner::synthetic`): the
//! bounds, the arena, the gap and the planning time ("Synthetic plans"); and for chains,
//! fan-outs, independent branches, random DAGs and one input read by many ADDs, of 1,000
//! and 10,000 operators, the planning time, the arena and the bound ("Planning time at
//! scale"). Then the alias-aware order search against the views-only one on the models and
//! seeded synthetic graphs ("Order search that knows aliasing").

use kiln_planner::alias::AliasOptions;
use kiln_planner::synthetic::{self, Spec};
use kiln_planner::{Graph, Plan, PlanOptions, read_model};

/// `kiln_planner::plan` for the kernels Kiln declares (restated by
/// `kiln_planner::synthetic::declared` for graphs without lowering, checked against the
/// operator modules by kiln-build's tests).
fn plan(g: &Graph, o: &PlanOptions) -> kiln_planner::diag::Result<Plan> {
    kiln_planner::plan(g, &synthetic::declared(g), o)
}
use std::path::{Path, PathBuf};
use std::time::Instant;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn models(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tflite"))
        .collect();
    v.sort();
    v
}

/// Replaces the text between `<!-- kiln:NAME -->` and `<!-- /kiln:NAME -->` in BENCHMARKS.md
/// (appending the section if it is missing).
pub fn write_section(name: &str, body: &str) {
    write_section_after(name, body, None);
}

/// [`write_section`], a missing section going right after section `after` if there is one.
pub fn write_section_after(name: &str, body: &str, after: Option<&str>) {
    let path = root().join("BENCHMARKS.md");
    let old = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        "# Benchmarks\n\nWritten by the benchmarks; do not edit by hand.\n".into()
    });
    let (start, end) = (
        format!("<!-- kiln:{name} -->"),
        format!("<!-- /kiln:{name} -->"),
    );
    let section = format!("{start}\n{body}{end}");
    let anchor = after
        .map(|a| format!("<!-- /kiln:{a} -->"))
        .and_then(|a| old.find(&a).map(|at| at + a.len()));
    let new = match (old.find(&start), old.find(&end), anchor) {
        (Some(a), Some(b), _) if a < b => {
            format!("{}{section}{}", &old[..a], &old[b + end.len()..])
        }
        (_, _, Some(at)) => format!("{}\n{section}{}", &old[..at], &old[at..]),
        _ => format!("{}\n{section}\n", old.trim_end()),
    };
    std::fs::write(&path, new).unwrap();
}

/// Median wall time of `runs` calls, in milliseconds.
fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// A bound, marked `*` when the plan does not prove it is the best over all orders.
fn best_bound(p: &Plan) -> String {
    if p.order_optimal {
        p.lower_bound_bytes.to_string()
    } else {
        format!("{}*", p.lower_bound_bytes)
    }
}

fn gap(p: &Plan) -> String {
    let pct = if p.lower_bound_bytes == 0 {
        0.0
    } else {
        p.gap_bytes() as f64 * 100.0 / p.lower_bound_bytes as f64
    };
    let proof = if p.placement_optimal { "" } else { "*" };
    format!("{} ({pct:.2} %){proof}", p.gap_bytes())
}

/// How many tensors share a buffer, by kind: `2 (1 view, 1 in place)`.
fn alias_summary(graph: &Graph, p: &Plan) -> String {
    if p.aliases.is_empty() {
        return "0".into();
    }
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for a in &p.aliases {
        let (kind, _) = kiln_planner::report::alias_reason(graph, p, a.tensor);
        match kinds.iter_mut().find(|k| k.0 == kind) {
            Some(k) => k.1 += 1,
            None => kinds.push((kind, 1)),
        }
    }
    let parts: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    format!("{} ({})", p.aliases.len(), parts.join(", "))
}

fn corpus() -> String {
    let tflm: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tools/data/tflm_arena.json")).unwrap(),
    )
    .unwrap();
    let shared = std::env::var_os("KILN_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared"));
    let mut rows = String::new();
    let all: Vec<PathBuf> = models(&shared.join("models"))
        .into_iter()
        .chain(models(&root().join("tests/models")))
        .collect();
    let (mut met, mut total, mut at_or_below, mut below) = (0, 0, 0, 0);
    for path in &all {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        let graph = read_model(&bytes).unwrap();
        let p = plan(&graph, &PlanOptions::default()).unwrap();
        let off = plan(&graph, &PlanOptions::unoptimised()).unwrap();
        let no_alias = plan(
            &graph,
            &PlanOptions {
                aliasing: AliasOptions::none(),
                ..PlanOptions::default()
            },
        )
        .unwrap();
        let ms = median_ms(21, || {
            let g = read_model(&bytes).unwrap();
            std::hint::black_box(plan(&g, &PlanOptions::default()).unwrap());
        });
        let t = &tflm[&name];
        let num = |k: &str| t[k].as_u64().map_or("n/a".to_string(), |v| v.to_string());
        let head = t["head"].as_u64().unwrap_or(0) as usize;
        let vs = if head > 0 {
            format!("{:.2}", p.arena_bytes as f64 / head as f64)
        } else {
            "n/a".into()
        };
        total += 1;
        met += usize::from(p.arena_bytes == p.lower_bound_bytes);
        at_or_below += usize::from(p.arena_bytes <= no_alias.lower_bound_bytes);
        below += usize::from(p.arena_bytes < no_alias.lower_bound_bytes);
        rows.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {vs} | {} | {ms:.2} |\n",
            graph.ops.len(),
            graph.tensors.len(),
            graph.weights_bytes(),
            num("head"),
            num("min_arena_exact"),
            p.stored_order_bound_bytes,
            best_bound(&no_alias),
            off.arena_bytes,
            no_alias.arena_bytes,
            p.lower_bound_bytes,
            p.arena_bytes,
            alias_summary(&graph, &p),
            gap(&p),
            p.persistent_bytes,
        ));
    }
    format!(
        "## Memory plans\n\n\
         Written by `cargo bench -p kiln-planner --bench planning`. Bound = most bytes live \
         at one step (tensor live from producer to last consumer, inclusive; inputs from the \
         first step, outputs to the last; scratch at its operator's step) for the stored \
         operator order, and for the best order Kiln finds (`*`: not proved the best of all \
         orders), both with a buffer per tensor. Kiln arena = the activation arena the planner \
         makes for the kernels' declarations (`synthetic::declared`, the fast int8 kernels' \
         scratch included; 16-byte aligned offsets), with every optimisation off (stored order, TFLM's greedy \
         rule, a buffer per tensor: `PlanOptions::unoptimised()`, `kiln plan --unoptimised`), \
         with everything on but aliasing (`--no-alias`, `alias = false`), and all on (the \
         default). Bound with aliasing = the bound of the plan's order when tensors share \
         buffers (views, in-place operators, concatenation slices, in-place depthwise \
         convolutions); aliases = tensors without a buffer of their own, by kind. Gap = Kiln \
         arena (all on) - bound with aliasing (`*`: not proved the smallest arena for that \
         order; any gap here is alignment: byte-aligned plans meet the bound). Kiln has \
         no other RAM overhead besides persistent state (LSTM/SVDF variables). TFLM head = \
         TFLM's planned activation region, TFLM min arena = the smallest arena TFLM runs \
         with (head + tail of interpreter structures, per-op data and state), both measured \
         by `tools/tflm_arena.py` with tflite-micro 0.dev20261023182759 (x86-64). Plan time \
         = median wall time to read, plan and verify (release build, one thread). What a \
         model compiles to by default can differ: `kiln_build::compile_tokens` also plans \
         without the slow in-place forms of the fast convolutions and with their lean scratch, \
         and takes the fastest plan that fits the RAM budget (without a budget kws_dscnn's \
         arena is larger than shown here, its convolutions not in place); `kiln plan` prints \
         both arenas.\n\n\
         Kiln arena <= best-order bound on {at_or_below} of {total} models (below it, \
         through aliasing, on {below}); Kiln arena = its own bound with aliasing on {met} of \
         {total}.\n\n\
         | model | ops | tensors | weight B | TFLM head B | TFLM min arena B | bound stored order B | bound best order B | Kiln arena, optimisations off B | Kiln arena, no aliasing B | bound with aliasing B | Kiln arena B | aliases | gap B | arena / TFLM head | Kiln persistent B | plan ms |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|\n{rows}\n"
    )
}

fn synthetic_section() -> String {
    type Family = (&'static str, fn(usize, u64) -> Graph);
    let families: [Family; 3] = [
        ("cells", synthetic::cells),
        ("windowed", |n, s| synthetic::graph(&Spec::nn_like(n, s))),
        ("random DAG", |n, s| synthetic::graph(&Spec::random(n, s))),
    ];
    let mut rows = String::new();
    for (family, make) in families {
        for ops in [100usize, 500, 2000] {
            for seed in 0..3u64 {
                let g = make(ops, seed);
                let p = plan(&g, &PlanOptions::default()).unwrap();
                let off = plan(&g, &PlanOptions::unoptimised()).unwrap();
                let runs = if ops >= 2000 { 5 } else { 11 };
                let ms = median_ms(runs, || {
                    std::hint::black_box(plan(&g, &PlanOptions::default()).unwrap());
                });
                rows.push_str(&format!(
                    "| {family} | {ops} | {seed} | {} | {} | {} | {} | {} | {} | {} | {ms:.1} |\n",
                    p.buffers.len(),
                    p.stored_order_bound_bytes,
                    best_bound(&p),
                    off.arena_bytes,
                    p.arena_bytes,
                    p.aligned_bound_bytes,
                    gap(&p),
                ));
            }
        }
    }
    format!(
        "## Synthetic plans\n\n\
         Written by `cargo bench -p kiln-planner --bench planning`, on graphs from \
         `kiln_planner::synthetic` (seeded, reproducible). *cells*: multi-branch cells as \
         in NAS or Inception networks (1-4 branches of 1-4 operators, skip connections, \
         512 B - 64 KiB tensors in 16-byte steps). *windowed*: each operator reads 1-4 of the \
         6 most recent tensors (sizes as cells). *random DAG*: operators read any earlier \
         tensors (fan-in and fan-out up to 4, 1 B - 4 KiB tensors, some two-output \
         operators), the hard case for both the order and the offsets. Columns as in Memory \
         plans; aligned bound = the smallest arena any placement of the chosen order can have \
         with 16-byte offsets (per step, each live buffer but the top one rounded up to 16). \
         Plan time = median wall time to plan and verify (release build, one thread).\n\n\
         | graph | ops | seed | buffers | bound stored order B | bound best order B | Kiln arena, optimisations off B | Kiln arena B | aligned bound B | gap B | plan ms |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n{rows}\n"
    )
}

fn scale_section() -> String {
    use synthetic::Flavor::{InPlace, Plain};
    use synthetic::{Addend, Sums};
    type Family = (&'static str, fn(usize) -> Graph);
    let families: [Family; 13] = [
        ("chain of RELUs (in place)", |n| {
            synthetic::chain(n, InPlace, 0)
        }),
        ("chain (plain)", |n| synthetic::chain(n, Plain, 0)),
        ("fan-out, ADD merges (in place)", |n| {
            synthetic::fan_out(n, InPlace, 0)
        }),
        ("fan-out, one merge (plain)", |n| {
            synthetic::fan_out(n, Plain, 0)
        }),
        ("independent branches (in place)", |n| {
            synthetic::branches(n, InPlace, 0)
        }),
        ("random DAG (in place)", |n| synthetic::dag(n, InPlace, 0)),
        ("random DAG (plain)", |n| synthetic::dag(n, Plain, 0)),
        ("random DAG, any earlier tensor (plain)", |n| {
            synthetic::graph(&Spec::random(n, 0))
        }),
        ("one input read by ADDs: x + x, sums are outputs", |n| {
            synthetic::shared_adds(n, Addend::Itself, Sums::Outputs, 0)
        }),
        ("one input read by ADDs: x + c, sums are outputs", |n| {
            synthetic::shared_adds(n, Addend::Constant, Sums::Outputs, 0)
        }),
        ("one input read by ADDs: x + c, one concatenation", |n| {
            synthetic::shared_adds(n, Addend::Constant, Sums::Concatenated, 0)
        }),
        ("one input read by ADDs: x + c, added up", |n| {
            synthetic::shared_adds(n, Addend::Constant, Sums::Added, 0)
        }),
        ("one input read by ADDs: x + previous sum", |n| {
            synthetic::shared_adds(n, Addend::Previous, Sums::Added, 0)
        }),
    ];
    let mut rows = String::new();
    for (family, make) in families {
        for ops in [1000usize, 10_000] {
            let g = make(ops);
            let p = plan(&g, &PlanOptions::default()).unwrap();
            let runs = if ops >= 10_000 { 5 } else { 11 };
            let ms = median_ms(runs, || {
                std::hint::black_box(plan(&g, &PlanOptions::default()).unwrap());
            });
            rows.push_str(&format!(
                "| {family} | {ops} | {} | {} | {ms:.1} | {} | {} | {:.4} |\n",
                p.buffers.len(),
                p.aliases.len(),
                p.arena_bytes,
                best_bound(&p),
                p.arena_bytes as f64 / p.lower_bound_bytes.max(1) as f64,
            ));
        }
    }
    let order = kiln_planner::schedule::OrderOptions::default();
    let aliasing = AliasOptions::default();
    let placement = kiln_planner::offsets::PlacementOptions::default();
    format!(
        "## Planning time at scale\n\n\
         Written by `cargo bench -p kiln-planner --bench planning`, on graphs from \
         `kiln_planner::synthetic` (seed 0). *In place*: int8 NHWC tensors of one shape (2 \
         to 18 KiB) and operators that can overwrite a dying input: RELU, ADD; the random DAGs \
         also have RESHAPE views and concatenations. *Plain*: `Other` operators over 512 B - \
         64 KiB tensors, nothing aliases. Chain: each operator reads the previous one's output. \
         Fan-out: the graph input read by half the operators, their outputs summed by a chain \
         of ADDs (in place), or read by all but one, which reads all their outputs (plain). \
         Independent branches: chains of 1-16 operators, each from its own graph input to its \
         own graph output. Random DAG: each operator reads a recent tensor (or, one time in 5, \
         any earlier one), one in 4 a second one; unread tensors are graph outputs; *any \
         earlier tensor*: the random DAG of Synthetic plans (the hard case: thousands of \
         tensors live at once). One input read by ADDs (`synthetic::shared_adds`, issue 27): \
         the graph input `x` read by every ADD, int8 NHWC as *in place*; each ADD adds `x` \
         to itself, to a constant `c` or to the previous ADD's sum (a chain), and the sums \
         are graph outputs, or one CONCATENATION reads them all, or half the operators are \
         ADDs of `x` whose sums a chain of ADDs adds up. Plan ms = \
         median wall time to plan and verify with the default options (release build, one \
         thread); bound = the plan's lower bound (`*`: the order is not proved the best). Every \
         search has a work budget counted in steps, never time, and keeps its best plan when \
         it runs out: the order search {} steps (`OrderOptions::work_budget`), aliasing {} \
         (`AliasOptions::work_budget`), placement {} buffer visits for the portfolio after \
         TFLM's rule, {} for hill climbing and {} for the branch and bound, per placement \
         (`PlacementOptions`).\n\n\
         | graph | ops | buffers | aliases | plan ms | Kiln arena B | bound B | arena / bound |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|\n{rows}\n",
        order.work_budget,
        aliasing.work_budget,
        placement.portfolio_work,
        placement.hill_climb_work,
        placement.exact_budget,
    )
}

/// The alias-aware order search ([`kiln_planner::schedule::schedule_aliased`]) against the
/// views-only one alone (`OrderOptions::alias_aware = false`), on graphs where aliasing has
/// work: the models and seeded synthetic families.
fn alias_aware_section() -> String {
    use synthetic::Flavor::InPlace;
    let with_aliases = |mut spec: Spec| {
        spec.alias_percent = 40;
        synthetic::graph(&spec)
    };
    let shared = std::env::var_os("KILN_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared"));
    let model_graphs: Vec<Graph> = models(&shared.join("models"))
        .into_iter()
        .chain(models(&root().join("tests/models")))
        .map(|p| read_model(&std::fs::read(p).unwrap()).unwrap())
        .collect();
    let mut families: Vec<(String, usize, Vec<Graph>)> =
        vec![("the models of Memory plans".into(), 0, model_graphs)];
    for ops in [100usize, 500] {
        let seeds = 0..20u64;
        let windowed = seeds.clone().map(|s| with_aliases(Spec::nn_like(ops, s)));
        families.push((
            "windowed, 40 % aliasing operators".into(),
            ops,
            windowed.collect(),
        ));
        let random = seeds.clone().map(|s| with_aliases(Spec::random(ops, s)));
        families.push((
            "random DAG, 40 % aliasing operators".into(),
            ops,
            random.collect(),
        ));
        let dags = seeds.map(|s| synthetic::dag(ops, InPlace, s));
        families.push(("random DAG (in place)".into(), ops, dags.collect()));
    }
    let mut rows = String::new();
    for (family, ops, graphs) in families {
        let (mut kept, mut smaller, mut best) = (0usize, 0usize, 0f64);
        let (mut before, mut after) = (0usize, 0usize);
        let (mut ms_off, mut ms_on) = (0f64, 0f64);
        let mut views_only = PlanOptions::default();
        views_only.order.alias_aware = false;
        for g in &graphs {
            let t = Instant::now();
            let q = plan(g, &views_only).unwrap();
            ms_off += t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let p = plan(g, &PlanOptions::default()).unwrap();
            ms_on += t.elapsed().as_secs_f64() * 1e3;
            assert!(p.arena_bytes <= q.arena_bytes, "never larger");
            kept += usize::from(p.order_search == "alias-aware search");
            smaller += usize::from(p.arena_bytes < q.arena_bytes);
            best = best.max(1.0 - p.arena_bytes as f64 / q.arena_bytes.max(1) as f64);
            before += q.arena_bytes;
            after += p.arena_bytes;
        }
        let ops = if ops == 0 {
            "-".into()
        } else {
            ops.to_string()
        };
        rows.push_str(&format!(
            "| {family} | {ops} | {} | {kept} | {smaller} | {before} | {after} | {:.2} % | {:.1} % | {ms_off:.0} | {ms_on:.0} |\n",
            graphs.len(),
            (before - after) as f64 * 100.0 / before.max(1) as f64,
            best * 100.0,
        ));
    }
    format!(
        "## Order search that knows aliasing\n\n\
         Written by `cargo bench -p kiln-planner --bench planning`. The default plan runs the \
         order search twice: counting views only, and counting also what in-place operators \
         (over an input they read last) and concatenation slices save at each step \
         (`schedule::schedule_aliased`); the second order is kept where its aliased plan packs \
         smaller. Here each graph is planned with the default options and with the second \
         search off (`OrderOptions::alias_aware = false`, the plan before it existed). Kept = \
         plans whose order came from the alias-aware search; arenas are sums over the graphs \
         of the family; largest saving = the most one graph's arena went down. Synthetic \
         graphs: seeds 0-19 of `kiln_planner::synthetic` (*windowed* and *random DAG* as in \
         Synthetic plans with 40 % of the operators RESHAPE, RELU or CONCATENATION; *random \
         DAG (in place)* as in Planning time at scale). Plan ms = wall time to plan and \
         verify all graphs of the row once (release build, one thread).\n\n\
         | graphs | ops | count | kept | smaller | arena, views-only search B | arena B | saved | largest saving | plan ms, views only | plan ms |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n{rows}\n"
    )
}

fn main() {
    let body = corpus();
    write_section("planning", &body);
    print!("{body}");
    let body = synthetic_section();
    write_section("planning-synthetic", &body);
    print!("{body}");
    let body = scale_section();
    write_section_after("planning-scale", &body, Some("planning-synthetic"));
    print!("{body}");
    let body = alias_aware_section();
    write_section_after("planning-alias-aware", &body, Some("planning-scale"));
    print!("{body}");
}
