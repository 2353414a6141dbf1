//! Patch-based execution as [`crate::compile_tokens`] chooses it: which tiling of the
//! model's first operators (`kiln_planner::tiling`), if any, meets the RAM budget with the
//! fastest kernels, within the MAC cap and a work budget counted in tilings planned; then,
//! for the smallest arena or a budget one region does not meet, further regions around the
//! peak that remains ([`further_regions`]).

use crate::choose::{cheapest_fit, estimate, first_fit, fits_budget, plan_variants};
use crate::lower;
use crate::options::{Budget, Options};
use kiln_planner::diag::{Diagnostic, ErrorKind};
use kiln_planner::ir::OpId;
use kiln_planner::tiling::{MAX_REGION_OPS, Origin, why_not};
use kiln_planner::{Graph, Plan};

/// How a compiled model was tiled: its operators `start..end` (of the model's stored order)
/// run as `patches` strips of rows of tensor `cut`, each in `columns` patches of its columns
/// (1: strips of rows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilingReport {
    pub start: usize,
    pub end: usize,
    pub patches: usize,
    pub columns: usize,
    /// The tensor assembled from the strips (the model's index) and its name; for a region
    /// ending in a sink ([`TilingReport::sink`]), the image whose strips are summed.
    pub cut: usize,
    pub cut_name: String,
    /// For a region ending in a sink (an AVERAGE_POOL_2D over the whole image, finished from
    /// the strips' per-channel sums: the image is never whole), the sink's output (the
    /// model's index).
    pub sink: Option<usize>,
    /// The cut's rows of each strip.
    pub strips: Vec<(usize, usize)>,
    /// Multiply-accumulates computed again for the strips' halos.
    pub extra_macs: u64,
    /// Whether the strips read their rows of the input from `invoke`'s row source
    /// (`streamed_input`).
    pub streamed: bool,
    /// Regions tiled after this one, in order (each a rewrite of the graph tiled before it,
    /// over operators outside the strips: `start..end` are the model's operators, `cut` a
    /// model's tensor, `extra_macs` the region's own; empty in those). `extra_macs` above
    /// counts every region's.
    pub more: Vec<TilingReport>,
}

impl TilingReport {
    /// What the region runs as, in words: "4 strips of rows", or "2 strips of rows (each in
    /// 3 patches of columns)".
    pub fn pieces(&self) -> String {
        match self.columns {
            1 => format!("{} strips of rows", self.patches),
            c => format!(
                "{} strips of rows (each in {c} patches of columns)",
                self.patches
            ),
        }
    }

    /// The report of one region, `tiled` from `graph`, with the MACs its halos compute
    /// again (no further regions yet).
    fn of(
        graph: &Graph,
        tiled: &kiln_planner::tiling::Tiled,
        extra_macs: u64,
        streamed: bool,
    ) -> TilingReport {
        let split = tiled.sink.unwrap_or(tiled.cut);
        TilingReport {
            start: tiled.tiling.start,
            end: tiled.tiling.end,
            patches: tiled.tiling.patches,
            columns: tiled.tiling.columns,
            cut: split.0,
            cut_name: graph.tensor(split).name.clone(),
            sink: tiled.sink.map(|_| tiled.cut.0),
            strips: tiled.strips.clone(),
            extra_macs,
            streamed,
            more: Vec::new(),
        }
    }
}

/// The most tilings [`tile_if_needed`] lowers and plans for one model.
const MAX_TILINGS_PLANNED: usize = 200;

/// The most tilings [`tile_if_needed`] plans, once one meets the budget, in search of one
/// that meets it with fewer estimated instructions ([`crate::cost::estimate`]: faster
/// kernel forms, fewer slow in-place convolutions).
const MAX_TILINGS_AFTER_FIT: usize = 16;

/// Searches planning more tilings than this print a note ([`Options::search_notes`]).
pub(crate) const LONG_SEARCH: usize = 32;

/// A tiled graph with its steps, plans and report.
type TiledPlans = (Graph, Vec<lower::Step>, Vec<(Plan, usize)>, TilingReport);

/// Patch-based execution, where it is needed and allowed: with a RAM budget in bytes that
/// no untiled plan meets, or that only a slower untiled plan meets (lean scratch, slow
/// in-place convolutions), the tiling whose plans meet it with the fewest estimated
/// instructions ([`crate::cost::estimate`]: the kernel forms its plan needs, the MACs its
/// halos compute again, its strips' calls; of equal ones, the fewest extra MACs, then the
/// fewest strips), and where an untiled plan meets it, only if that estimate is lower than
/// the untiled plan's; with `min_ram`, the tiling with the smallest arena if it is smaller
/// than the untiled one's. Tilings over the MAC cap are not tried. `None`: no tiling.
///
/// The slow in-place convolutions cost more than recomputing halos: on the emulated M4,
/// person_detect under a 40,960-byte budget took 22.1 M instructions untiled with four of
/// them (before the current kernels), and takes 14.2 M tiled in two strips with the fastest
/// kernels (0.3 % extra MACs; 13.5 M untiled without a budget).
/// Work budgets in tilings planned: [`MAX_TILINGS_PLANNED`] in all, and
/// [`MAX_TILINGS_AFTER_FIT`] after the first that meets the budget; then at most 15 of the
/// smallest's region (or of the fitting one's, where it needs slower kernel forms) in
/// patches of rows and columns (`kiln_planner::tiling::in_columns`).
///
/// Tiling is not used with debug mode (every tensor keeps its bytes) or control flow.
///
/// With a RAM budget no plan meets, also what the budget error says is reachable: the
/// smallest arena and why Kiln cannot go lower ([`Reach`]).
pub(crate) fn tile_if_needed(
    graph: &Graph,
    steps: &[lower::Step],
    untiled: &[(Plan, usize)],
    options: &Options,
    macs: u64,
) -> Result<(Option<TiledPlans>, Option<String>), Diagnostic> {
    use kiln_planner::tiling;
    let t = &options.tiling;
    let budget_unmet = untiled
        .iter()
        .all(|(p, _)| fits_budget(p, options) == Some(false));
    // The variant of the fastest untiled plan that meets the budget.
    let untiled_fit = first_fit(untiled, options);
    let slower = untiled_fit.is_some_and(|v| v > 0);
    let untiled_cost = cheapest_fit(untiled, graph, steps, options);
    let mut reach = Reach {
        graph,
        macs,
        percent: t.max_extra_macs_percent,
        extras: Vec::new(),
        planned: Vec::new(),
    };
    let off = if !t.enabled {
        Some("tiling is off (`tile = false` or `optimize = false`; `kiln plan --no-tile`)")
    } else if options.plan.preserve_all_tensors || options.plan.preserve_inputs {
        Some("debug mode keeps every tensor, so nothing is tiled")
    } else if !graph.subgraphs.is_empty() {
        Some("models with control flow are not tiled")
    } else {
        None
    };
    let streamed = t.streamed_input;
    if let (true, Some(off)) = (streamed, off) {
        return Err(Diagnostic::unsupported(format!(
            "a streamed input (`streamed_input`) runs the first operators in strips of rows, \
             but {off}"
        )));
    }
    if off.is_some() || !(t.min_ram || budget_unmet || slower || streamed) {
        let note = budget_unmet
            .then(|| smallest_plan(untiled))
            .flatten()
            .map(|p| reach.untiled(p, off));
        return Ok((None, note));
    }
    let cap = macs.saturating_mul(u64::from(t.max_extra_macs_percent)) / 100;
    let mut candidates: Vec<(u64, tiling::Tiled)> = Vec::new();
    // Why the first tiling that could not stream the input could not.
    let mut not_streamed: Option<Diagnostic> = None;
    for c in tiling::candidates(graph) {
        let tiled = match tiling::tile(graph, c) {
            Ok(t) => t,
            // A region the rewrite declines; a wrong tiling (a Kiln bug) is an error.
            Err(e) if e.kind == ErrorKind::Unsupported => continue,
            Err(e) => return Err(e),
        };
        let tiled = if streamed {
            match tiling::stream_input(&tiled) {
                Ok(s) => s,
                Err(e) if e.kind == ErrorKind::Unsupported => {
                    not_streamed.get_or_insert(e);
                    continue;
                }
                Err(e) => return Err(e),
            }
        } else {
            tiled
        };
        let extra = tiling::macs(&tiled.graph).saturating_sub(macs);
        reach.extras.push((c.start, c.end, extra));
        if extra <= cap {
            candidates.push((extra, tiled));
        }
    }
    candidates.sort_by_key(|(extra, t)| (*extra, t.tiling.patches, t.tiling.end, t.tiling.start));
    let to_plan = candidates.len().min(MAX_TILINGS_PLANNED);
    if options.search_notes && to_plan > LONG_SEARCH {
        let model = options
            .model_name
            .as_ref()
            .map_or(String::new(), |n| format!("{n}: "));
        let goal = match &options.ram_budget {
            _ if t.min_ram => "the smallest arena".to_string(),
            None if streamed => "the fastest plan with a streamed input".to_string(),
            Some(Budget::Bytes(b)) => format!("a plan within the RAM budget of {b} bytes"),
            _ => "a faster plan".to_string(),
        };
        eprintln!(
            "note: kiln: {model}searching {goal}: planning up to {to_plan} of {} tilings of \
             the first operators (a work budget of {MAX_TILINGS_PLANNED})",
            candidates.len()
        );
    }
    let smallest = |plans: &[(Plan, usize)]| plans.iter().map(|(p, _)| p.arena_bytes).min();
    let mut best: Option<(usize, TiledPlans, Vec<Origin>)> = None;
    // The [`SEEDS`] tilings whose strips peak lowest (then fewest extra MACs), from which
    // more regions may reach lower than from the smallest.
    let mut seeds: Vec<(usize, u64, Graph, TilingReport, Vec<Origin>)> = Vec::new();
    // The tilings planned.
    let mut tried: Vec<tiling::Tiling> = Vec::new();
    // The fitting tiling with the fewest estimated instructions so far: its estimate and
    // plans.
    let mut fit: Option<(f64, TiledPlans)> = None;
    let mut planned_after_fit = 0;
    // (A streamed input has no untiled plan to be smaller than.)
    let floor = if streamed {
        usize::MAX
    } else {
        smallest(untiled).unwrap_or(0)
    };
    // Without a budget or `min_ram`, a streamed input takes the fastest plan of the tiling
    // with the fewest estimated instructions.
    let fastest = streamed && !t.min_ram && options.ram_budget.is_none();
    // A work budget counted in tilings planned (fewest extra MACs first), never time.
    for (extra, tiled) in candidates.into_iter().take(MAX_TILINGS_PLANNED) {
        if fit.is_some() {
            if planned_after_fit == MAX_TILINGS_AFTER_FIT {
                break;
            }
            planned_after_fit += 1;
        }
        reach.planned.push((tiled.tiling.start, tiled.tiling.end));
        let Some((steps, plans)) = lower_and_plan(&tiled.graph, options)? else {
            continue;
        };
        tried.push(tiled.tiling);
        let arena = smallest(&plans).unwrap_or(usize::MAX);
        let report = TilingReport::of(graph, &tiled, extra, streamed);
        let (variant, cost) = if fastest {
            let first = plans.first();
            (
                first.map(|&(_, v)| v),
                first.map(|(p, v)| estimate(&tiled.graph, &steps, p, *v)),
            )
        } else {
            (
                first_fit(&plans, options),
                cheapest_fit(&plans, &tiled.graph, &steps, options),
            )
        };
        let origin = tiled.op_origin;
        // The peak within the strips of its smallest plan: what more regions after this one
        // cannot lower.
        let strip_peak = smallest_plan(&plans).map_or(usize::MAX, |p| {
            p.order
                .iter()
                .zip(&p.live_bytes)
                .filter(|(op, _)| !matches!(origin.get(op.0), Some(Origin::Op(_))))
                .map(|(_, &b)| b)
                .max()
                .unwrap_or(0)
        });
        let entry = (tiled.graph, steps, plans, report);
        if (t.min_ram || budget_unmet)
            && (seeds.len() < SEEDS
                || seeds
                    .last()
                    .is_some_and(|(p, e, ..)| (strip_peak, extra) < (*p, *e)))
        {
            let at = seeds.partition_point(|(p, e, ..)| (*p, *e) <= (strip_peak, extra));
            seeds.insert(
                at,
                (
                    strip_peak,
                    extra,
                    entry.0.clone(),
                    entry.3.clone(),
                    origin.clone(),
                ),
            );
            seeds.truncate(SEEDS);
        }
        match (variant, cost) {
            // Fewer instructions than the fitting tilings before (which have fewer extra
            // MACs). With the fastest kernels, the tilings after it (more extra MACs) cannot
            // do better.
            (Some(v), Some(c)) if !t.min_ram && fit.as_ref().is_none_or(|(f, _)| c < *f) => {
                fit = Some((c, entry));
                if v == 0 {
                    break;
                }
            }
            (Some(_), _) if !t.min_ram => {}
            // The smallest so far (`min_ram`, or for the budget error if nothing fits).
            _ if arena < floor && best.as_ref().is_none_or(|(b, ..)| arena < *b) => {
                best = Some((arena, entry, origin));
            }
            _ => {}
        }
    }
    // Patches of rows and columns (`tiling::in_columns`): the region of the smallest tiling
    // (`min_ram`, or a budget no strips of rows meet), or of the tiling that meets the budget
    // only with slower kernel forms, in as many strips of rows or fewer, each split across
    // into patches, whose buffers are narrower (the halos of both axes computed again): the
    // smallest, or the one meeting the budget with the fewest estimated instructions. A
    // work budget of 15 tilings planned.
    let slow_fit = fit
        .as_ref()
        .filter(|(_, entry)| first_fit(&entry.2, options).is_some_and(|v| v > 0));
    let of = match (&fit, slow_fit, &best) {
        (None, _, Some((_, entry, _))) if t.min_ram || budget_unmet => Some(&entry.3),
        (Some(_), Some((_, entry)), _) => Some(&entry.3),
        _ => None,
    };
    let region = of
        .filter(|r| !streamed && t.columns && r.columns == 1)
        .map(|r| tiling::Tiling {
            start: r.start,
            end: r.end,
            patches: r.patches,
            columns: 1,
        });
    for c in region
        .map(|r| tiling::in_columns(graph, r))
        .unwrap_or_default()
    {
        let tiled = match tiling::tile(graph, c) {
            Ok(t) => t,
            Err(e) if e.kind == ErrorKind::Unsupported => continue,
            Err(e) => return Err(e),
        };
        let extra = tiling::macs(&tiled.graph).saturating_sub(macs);
        if extra > cap {
            continue;
        }
        let Some((steps, plans)) = lower_and_plan(&tiled.graph, options)? else {
            continue;
        };
        let arena = smallest(&plans).unwrap_or(usize::MAX);
        let cost = (!t.min_ram)
            .then(|| cheapest_fit(&plans, &tiled.graph, &steps, options))
            .flatten();
        let report = TilingReport::of(graph, &tiled, extra, streamed);
        let entry = (tiled.graph, steps, plans, report);
        match cost {
            Some(c) if fit.as_ref().is_none_or(|(f, _)| c < *f) => fit = Some((c, entry)),
            Some(_) => {}
            None if arena < floor && best.as_ref().is_none_or(|(b, ..)| arena < *b) => {
                best = Some((arena, entry, tiled.op_origin));
            }
            None => {}
        }
    }
    // More regions where the peak of the smallest tiled plan still is (`min_ram`, or a
    // budget no tiling of one region meets).
    if fit.is_none() && (t.min_ram || budget_unmet) {
        // The seeds planned again (their steps are not kept), but for the smallest.
        let mut starts: Vec<Smallest> = best.take().into_iter().collect();
        // And, with a streamed input (no input whose bytes the strips must outlive), the
        // smallest's region in the most strips planned: chained to regions after it, the
        // smallest strips may make the smallest arena.
        let most_strips = starts.first().filter(|_| streamed).and_then(|b| {
            let r = &b.1.3;
            tried
                .iter()
                .filter(|c| (c.start, c.end) == (r.start, r.end) && c.patches > r.patches)
                .max_by_key(|c| c.patches)
                .copied()
        });
        let most_strips = match most_strips {
            Some(c) => Some(again(graph, c, streamed, macs)?),
            None => None,
        };
        for (.., g, report, origin) in seeds.into_iter().chain(most_strips) {
            if starts.iter().any(|b| b.1.3 == report) {
                continue;
            }
            let steps = lower::lower_all_with(&g, options.reference_kernels)?;
            let plans = plan_variants(&g, &steps, options)?;
            let arena = smallest(&plans).unwrap_or(usize::MAX);
            starts.push((arena, (g, steps, plans, report), origin));
        }
        let seeds = starts;
        for start in seeds {
            let (more, more_fit) = further_regions(start, options, macs, cap)?;
            if let Some((c, entry)) = more_fit
                && fit.as_ref().is_none_or(|(f, _)| c < *f)
            {
                fit = Some((c, entry));
            }
            let key = |s: &Smallest| (s.0, s.1.3.extra_macs);
            if more.0 < floor && best.as_ref().is_none_or(|b| key(&more) < key(b)) {
                best = Some(more);
            }
        }
    }
    if let Some((c, entry)) = fit {
        // Where an untiled plan meets the budget, the halos are worth it only if the tiling
        // runs faster.
        return Ok((
            (streamed || untiled_cost.is_none_or(|u| c < u)).then_some(entry),
            None,
        ));
    }
    if slower && !streamed {
        return Ok((None, None));
    }
    if streamed && best.is_none() {
        // The operator that reads the input, if it cannot run in strips at all.
        let reader = graph.inputs.first().and_then(|&x| {
            let op = graph
                .ops
                .iter()
                .find(|op| op.present_inputs().any(|t| t == x))?;
            Some((op, why_not(graph, op.id)?))
        });
        let why = not_streamed.map_or_else(
            || match &reader {
                Some((op, why)) => format!(
                    "op {} ({}) reads it and does not run in strips of rows: {why}",
                    op.id.0,
                    op.kind.name()
                ),
                None => format!(
                    "no run of the first operators runs in strips of rows within {} % extra \
                     MACs (`max_extra_macs`)",
                    t.max_extra_macs_percent
                ),
            },
            |e| e.message.clone(),
        );
        return Err(Diagnostic::unsupported(format!(
            "the input cannot be streamed (`streamed_input`): {why}"
        )));
    }
    // With a budget no tiling meets either, the smallest plan, whose budget error says what
    // Kiln can do at least, and why not less.
    let note = |entry: &TiledPlans, origin: &[Origin]| {
        smallest_plan(&entry.2).map(|p| reach.tiled(p, &entry.0, origin))
    };
    Ok(match best {
        Some((_, entry, origin)) => {
            let note = if budget_unmet {
                note(&entry, &origin)
            } else {
                None
            };
            (Some(entry), note)
        }
        None => (
            None,
            budget_unmet
                .then(|| smallest_plan(untiled))
                .flatten()
                .map(|p| reach.untiled(p, None)),
        ),
    })
}

/// Tiling `c` of `graph` made again (streamed if `streamed`), as a seed of
/// [`further_regions`].
fn again(
    graph: &Graph,
    c: kiln_planner::tiling::Tiling,
    streamed: bool,
    macs: u64,
) -> Result<(usize, u64, Graph, TilingReport, Vec<Origin>), Diagnostic> {
    use kiln_planner::tiling;
    let mut tiled = tiling::tile(graph, c)?;
    if streamed {
        tiled = tiling::stream_input(&tiled)?;
    }
    let extra = tiling::macs(&tiled.graph).saturating_sub(macs);
    let report = TilingReport::of(graph, &tiled, extra, streamed);
    Ok((0, extra, tiled.graph, report, tiled.op_origin))
}

/// How many tilings of the first region, those whose strips peak lowest, [`tile_if_needed`]
/// tiles further ([`further_regions`]) besides the smallest.
const SEEDS: usize = 1;

/// The most regions one model is tiled in ([`further_regions`]).
const MAX_REGIONS: usize = 4;

/// The most tilings [`further_regions`] lowers and plans for each region after the first.
const MAX_FURTHER_PLANNED: usize = 32;

/// A tiled graph's smallest arena, its plans and report, and its operators' origins in the
/// model.
type Smallest = (usize, TiledPlans, Vec<Origin>);

/// Regions after the first: while the smallest plan's peak is at an operator of the model
/// outside the strips, the graph tiled so far is tiled again by a region holding it
/// ([`kiln_planner::tiling::candidates_through`]; each rewrite checked against the graph
/// it rewrites, so by induction against the model), if that makes the arena smaller within
/// the MAC cap. With a streamed input, each region is chained to the one before
/// ([`kiln_planner::tiling::tile_chained`]: the cut between them is never whole), and a
/// peak in the strips is tiled around the operator reading the last region's cut. A work budget counted in tilings planned: [`MAX_FURTHER_PLANNED`] per
/// region (fewest extra MACs first), at most [`MAX_REGIONS`] regions. Returns the smallest,
/// and with a RAM budget in bytes (not `min_ram`), the tiling met it with the fewest
/// estimated instructions among those planned in the first region that meets it, if any.
fn further_regions(
    mut current: Smallest,
    options: &Options,
    macs: u64,
    cap: u64,
) -> Result<(Smallest, Option<(f64, TiledPlans)>), Diagnostic> {
    use kiln_planner::tiling;
    let min_ram = options.tiling.min_ram;
    for _ in 1..MAX_REGIONS {
        let (arena, (g, _, plans, report), origin) = &current;
        let Some(peak) = smallest_plan(plans).and_then(|p| Some(p.order[p.peak_step()?].0)) else {
            break;
        };
        // At a peak in the strips, with a streamed input, the operator reading the last
        // region's cut: a region from there, chained to it, takes its strips as they come
        // (the cut is never whole).
        let peak = match origin.get(peak) {
            Some(Origin::Op(_)) => peak,
            _ if !report.streamed => break,
            _ => {
                let Some(cut) = (0..g.ops.len())
                    .rev()
                    .find(|&i| origin.get(i) == Some(&Origin::Assemble))
                    .map(|i| g.ops[i].outputs[0])
                else {
                    break;
                };
                let Some(reader) = g.ops.iter().position(|op| {
                    matches!(origin.get(op.id.0), Some(Origin::Op(_)))
                        && op.present_inputs().any(|t| t == cut)
                }) else {
                    break;
                };
                reader
            }
        };
        // Regions of the model's operators, in their order (their report says which).
        let model_ops = |c: &tiling::Tiling| {
            let Some(&Origin::Op(first)) = origin.get(c.start) else {
                return None;
            };
            (c.start..c.end)
                .all(|i| origin.get(i) == Some(&Origin::Op(OpId(first.0 + i - c.start))))
                .then_some(first.0)
        };
        let mut candidates = Vec::new();
        for c in tiling::candidates_through(g, peak) {
            let Some(first) = model_ops(&c) else { continue };
            // With a streamed input, chained to the region before (its cut never whole):
            // without the input's bytes, what is left is the strips' and the cuts'.
            let tiled = if report.streamed {
                tiling::tile_chained(g, c)
            } else {
                tiling::tile(g, c)
            };
            let tiled = match tiled {
                Ok(t) => t,
                Err(e) if e.kind == ErrorKind::Unsupported => continue,
                Err(e) => return Err(e),
            };
            let extra = tiling::macs(&tiled.graph).saturating_sub(macs);
            if extra <= cap {
                candidates.push((extra, first, tiled));
            }
        }
        // The smallest cut first (the region's input dies strip by strip as the cut is
        // written: a cut as large as it keeps the peak), then the fewest extra MACs, then
        // the most strips (the smallest strips).
        candidates.sort_by_key(|(extra, _, t)| {
            (
                t.graph.tensor(t.cut).bytes(),
                *extra,
                std::cmp::Reverse(t.tiling.patches),
                t.tiling.end,
                t.tiling.start,
            )
        });
        let mut smallest: Option<Smallest> = None;
        let mut fit: Option<(f64, TiledPlans)> = None;
        for (extra, first, tiled) in candidates.into_iter().take(MAX_FURTHER_PLANNED) {
            let Some((steps, plans)) = lower_and_plan(&tiled.graph, options)? else {
                continue;
            };
            let a = plans
                .iter()
                .map(|(p, _)| p.arena_bytes)
                .min()
                .unwrap_or(usize::MAX);
            let cost = (!min_ram)
                .then(|| cheapest_fit(&plans, &tiled.graph, &steps, options))
                .flatten();
            // Origins in the model: an operator of the graph tiled before is what it was.
            let composed: Vec<Origin> = tiled
                .op_origin
                .iter()
                .map(|o| match *o {
                    Origin::Op(x) => origin[x.0],
                    Origin::Strip(x) => match origin[x.0] {
                        Origin::Op(m) => Origin::Strip(m),
                        other => other,
                    },
                    other => other,
                })
                .collect();
            let mut r = report.clone();
            r.extra_macs = extra;
            let split = tiled.sink.unwrap_or(tiled.cut);
            r.more.push(TilingReport {
                start: first,
                end: first + tiled.tiling.end - tiled.tiling.start,
                patches: tiled.tiling.patches,
                columns: tiled.tiling.columns,
                cut: split.0,
                cut_name: g.tensor(split).name.clone(),
                sink: tiled.sink.map(|_| tiled.cut.0),
                strips: tiled.strips.clone(),
                extra_macs: extra - report.extra_macs.min(extra),
                streamed: false,
                more: Vec::new(),
            });
            let entry = (tiled.graph, steps, plans, r);
            match cost {
                Some(c) if fit.as_ref().is_none_or(|(f, _)| c < *f) => fit = Some((c, entry)),
                Some(_) => {}
                None if a < *arena && smallest.as_ref().is_none_or(|(b, ..)| a < *b) => {
                    smallest = Some((a, entry, composed));
                }
                None => {}
            }
        }
        if fit.is_some() {
            return Ok((current, fit));
        }
        match smallest {
            Some(s) => current = s,
            None => break,
        }
    }
    Ok((current, None))
}

/// A graph's steps and plans.
type Lowered = (Vec<lower::Step>, Vec<(Plan, usize)>);

/// A tiled graph's steps and plans; `None` where some operator's kernel does not take its
/// strips (as the model's operator) or a memory map does not fit the tiling.
fn lower_and_plan(graph: &Graph, options: &Options) -> Result<Option<Lowered>, Diagnostic> {
    let steps = match lower::lower_all_with(graph, options.reference_kernels) {
        Ok(steps) => steps,
        Err(e) if e.kind == ErrorKind::Unsupported => return Ok(None),
        Err(e) => return Err(e),
    };
    match plan_variants(graph, &steps, options) {
        Ok(plans) => Ok(Some((steps, plans))),
        Err(e) if e.kind == ErrorKind::OverRamBudget => Ok(None),
        Err(e) => Err(e),
    }
}

/// The plan with the smallest arena (the one emitted when no plan meets the budget).
fn smallest_plan(plans: &[(Plan, usize)]) -> Option<&Plan> {
    plans.iter().map(|(p, _)| p).min_by_key(|p| p.arena_bytes)
}

/// What a budget error says is reachable: the smallest arena, and why no tiling makes it
/// smaller, from the operator at its peak.
struct Reach<'a> {
    /// The model as read (untiled).
    graph: &'a Graph,
    macs: u64,
    /// `max_extra_macs`.
    percent: u32,
    /// Every tiling made: its operators and the MACs it computes again.
    extras: Vec<(usize, usize, u64)>,
    /// The operators of every tiling planned (within the cap and the work budget).
    planned: Vec<(usize, usize)>,
}

impl Reach<'_> {
    /// The note for the smallest untiled plan `plan`; `off`: why tiling was not tried.
    fn untiled(&self, plan: &Plan, off: Option<&str>) -> String {
        let why = match (off, plan.peak_step()) {
            (Some(off), _) => off.to_string(),
            (None, Some(step)) => self.why_peak(plan.order[step], None),
            (None, None) => "the model has no operators".into(),
        };
        let tried = if off.is_some() {
            String::new()
        } else {
            format!(
                ": no tiling within {} % extra MACs is smaller",
                self.percent
            )
        };
        format!(
            "{} B is the smallest arena Kiln reaches{tried}; {why}",
            plan.arena_bytes
        )
    }

    /// The note for the smallest tiled plan `plan` of `tiled` (`origin`: what its operators
    /// are in the model).
    fn tiled(&self, plan: &Plan, tiled: &Graph, origin: &[Origin]) -> String {
        let why = plan.peak_step().map_or_else(String::new, |step| {
            let op = plan.order[step];
            match origin.get(op.0) {
                Some(Origin::Op(o)) => self.why_peak(*o, Some(op)),
                _ => format!(
                    "the peak is in the strips (op {}, {}): more strips or a longer region \
                     recompute more than {} % of the MACs",
                    op.0,
                    tiled.op(op).kind.name(),
                    self.percent
                ),
            }
        });
        format!(
            "{} B is the smallest arena Kiln reaches within {} % extra MACs \
             (`max_extra_macs`), with the first operators run in strips of rows; {why}",
            plan.arena_bytes, self.percent
        )
    }

    /// Why the peak at model operator `op` (`renumbered`: its id in the tiled model) is not
    /// lowered by tiling.
    fn why_peak(&self, op: OpId, renumbered: Option<OpId>) -> String {
        let g = self.graph;
        let name = |o: OpId| format!("op {} ({})", o.0, g.op(o).kind.name());
        let at = match renumbered {
            Some(r) if r != op => format!("{} of the model (op {} tiled)", name(op), r.0),
            _ => name(op),
        };
        if let Some(reason) = why_not(g, op) {
            return format!("tiling stops at {at}, at the peak: {reason}");
        }
        let through = |(start, end): (usize, usize)| (start..end).contains(&op.0);
        let cheapest = self
            .extras
            .iter()
            .filter(|&&(start, end, _)| through((start, end)))
            .map(|&(.., extra)| extra)
            .min();
        match cheapest {
            Some(extra) if extra.saturating_mul(100) > self.macs * u64::from(self.percent) => {
                format!(
                    "tiling stops before {at}, at the peak: running it in strips recomputes at \
                     least {extra} MACs, {} % of the model's {}, over `max_extra_macs = {}`",
                    extra.saturating_mul(100).div_ceil(self.macs.max(1)),
                    self.macs,
                    self.percent
                )
            }
            Some(_) if self.planned.iter().any(|&r| through(r)) => format!(
                "the tilings through {at}, at the peak, are not smaller (their strips' halos \
                 or the tensors leaving them are larger)"
            ),
            Some(_) => format!(
                "the tilings through {at}, at the peak, lie past the search's work budget \
                 ({MAX_TILINGS_PLANNED} tilings planned, fewest extra MACs first)"
            ),
            None => {
                // The run of operators that can run in strips up to the peak.
                let run_start = (0..op.0)
                    .rev()
                    .find(|&i| why_not(g, OpId(i)).is_some())
                    .map_or(0, |i| i + 1);
                if run_start >= MAX_REGION_OPS {
                    let before = OpId(run_start - 1);
                    format!(
                        "no tiling reaches {at}, at the peak: tiled regions start within the \
                         first {MAX_REGION_OPS} operators, and {} before it does not run in \
                         strips",
                        name(before)
                    )
                } else if op.0 - run_start >= MAX_REGION_OPS {
                    format!(
                        "no tiling reaches {at}, at the peak: a tiled region holds at most \
                         {MAX_REGION_OPS} operators"
                    )
                } else {
                    format!(
                        "no tiling reaches {at}, at the peak: every run of operators through it \
                         from op {run_start} hands more than one tensor to the rest of the model \
                         (a tiled region has one tensor leaving it), or its strips are declined"
                    )
                }
            }
        }
    }
}
