//! Patch-based execution as [`crate::compile_tokens`] chooses it: which tiling of the
//! model's first operators (`kiln_planner::tiling`), if any, meets the RAM budget with the
//! fastest kernels, within the MAC cap and a work budget counted in tilings planned.

use crate::choose::{first_fit, fits_budget, plan_variants};
use crate::lower;
use crate::options::Options;
use kiln_planner::diag::{Diagnostic, ErrorKind};
use kiln_planner::{Graph, Plan};

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
pub(crate) fn tile_if_needed(
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
