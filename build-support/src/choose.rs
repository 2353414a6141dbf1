//! The budget choice: the plans a model can have with its kernels' RAM-for-speed trades
//! (declared scratch; lean scratch; lean scratch and slow in-place convolutions; reference
//! kernels without scratch), fastest first, and which of them to emit for the options' RAM
//! budget.

use crate::cost;
use crate::lower;
use crate::options::{Budget, Options};
use kiln_planner::diag::{Diagnostic, ErrorKind};
use kiln_planner::{Graph, Plan};

/// The plans [`compile_tokens`] chooses from, fastest first, as the header names them.
pub(crate) const PLAN_VARIANTS: [&str; 4] = [
    "fastest: declared scratch, no slow in-place forms",
    "lean scratch: fast convolutions without widened pixels",
    "smallest: lean scratch and slow in-place convolutions",
    "smallest without scratch: reference convolutions, in place",
];

/// The [`PLAN_VARIANTS`] index of the plan whose fast convolutions run on their reference
/// kernels ([`Step::without_scratch`](crate::op::Step::without_scratch)): its steps are
/// [`without_scratch`]'s.
pub(crate) const WITHOUT_SCRATCH: usize = 3;

/// `steps` with every step that has a form without scratch replaced by it (the steps of
/// the [`WITHOUT_SCRATCH`] plan).
pub(crate) fn without_scratch(steps: Vec<lower::Step>) -> Vec<lower::Step> {
    steps
        .into_iter()
        .map(|s| match s.without_scratch {
            Some(reference) => *reference,
            None => s,
        })
        .collect()
}

/// The plans a model can have, fastest first, each smaller than the one before, with their
/// [`PLAN_VARIANTS`] index (see [`choose_plan`]).
pub(crate) fn plan_variants(
    graph: &Graph,
    steps: &[lower::Step],
    options: &Options,
) -> Result<Vec<(Plan, usize)>, Diagnostic> {
    // The four declarations: `fast` without the slow in-place forms, `lean` also with the
    // lean scratch, `small` with the lean scratch and the in-place forms, `bare` as `small`
    // with the steps' forms without scratch.
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
    let mut bare = small.clone();
    for s in steps {
        if let (Some(r), Some(Some((scratch, abilities)))) =
            (&s.without_scratch, bare.ops.get_mut(s.op.0))
        {
            *scratch = r.lean_scratch_bytes.unwrap_or(r.scratch_bytes);
            *abilities = r.abilities.clone();
        }
    }
    let mut plans = Vec::new();
    let mut region_misfit = None;
    for (i, d) in [&fast, &lean, &small, &bare].into_iter().enumerate() {
        // A declaration the one before makes too adds no plan.
        if i > 0 && (d == &fast || (i >= 2 && d == &lean) || (i == 3 && d == &small)) {
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
pub(crate) fn fits_budget(plan: &Plan, options: &Options) -> Option<bool> {
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

/// The [`PLAN_VARIANTS`] index of the first (fastest) of `plans` that meets a RAM budget
/// given in bytes, if one does.
pub(crate) fn first_fit(plans: &[(Plan, usize)], options: &Options) -> Option<usize> {
    plans
        .iter()
        .find(|(p, _)| fits_budget(p, options) == Some(true))
        .map(|&(_, v)| v)
}

/// The plan to emit among `plans` (see [`plan_variants`]; made for `graph` from `steps`),
/// the arena of the smallest plan if that one is smaller, and which of [`PLAN_VARIANTS`] it
/// is.
///
/// The fast int8 convolution kernels trade RAM for speed twice: they widen pixels into a
/// larger scratch than they need (`Step::lean_scratch_bytes`), and their forms in place over
/// their input (which lower the arena) work one pixel or channel plane at a time, several
/// times slower (`Step::slow_in_place`); and their reference kernels, slower still, need no
/// scratch at all (`Step::without_scratch`). So up to four plans are made, fastest first: as
/// declared; with the lean scratch; with the lean scratch and in place; with the reference
/// kernels where they need less, in place (so that the smallest untiled plan reaches the
/// live-bytes bound where the fast kernels' scratch sits at the peak). With a RAM budget
/// given in bytes, the plan that meets it with the fewest estimated instructions
/// ([`cost::estimate`]) is taken; without a budget, the fastest; with a budget given as a
/// constant expression, unknown here, the smallest; with `min_ram`, the smallest.
pub(crate) fn choose_plan(
    mut plans: Vec<(Plan, usize)>,
    graph: &Graph,
    steps: &[lower::Step],
    options: &Options,
) -> (Plan, Option<usize>, usize) {
    let smallest = plans.iter().map(|(p, _)| p.arena_bytes).min().unwrap_or(0);
    let fits = |(p, _): &(Plan, usize)| match (&options.ram_budget, fits_budget(p, options)) {
        _ if options.tiling.min_ram => p.arena_bytes == smallest,
        (None, _) => true,
        (Some(_), Some(fits)) => fits,
        (Some(_), None) => p.arena_bytes == smallest,
    };
    let by_cost = !options.tiling.min_ram
        && plans
            .first()
            .is_some_and(|(p, _)| fits_budget(p, options).is_some());
    // The fastest plan that fits (by the estimate, under a budget in bytes), else the
    // smallest (whose budget error says what Kiln can do at least).
    let fitting = plans.iter().enumerate().filter(|(_, p)| fits(p));
    let chosen = if by_cost {
        cheapest(fitting.map(|(i, (p, v))| (i, estimate(graph, steps, p, *v))))
    } else {
        fitting.map(|(i, _)| i).next()
    };
    let chosen = chosen.unwrap_or_else(|| {
        plans
            .iter()
            .position(|(p, _)| p.arena_bytes == smallest)
            .unwrap_or(0)
    });
    let (plan, variant) = plans.swap_remove(chosen);
    let smaller = (smallest < plan.arena_bytes).then_some(smallest);
    (plan, smaller, variant)
}

/// The key of the smallest cost (the first of equal ones).
pub(crate) fn cheapest<K>(costs: impl Iterator<Item = (K, f64)>) -> Option<K> {
    costs
        .fold(None, |best: Option<(K, f64)>, (k, c)| match best {
            Some((_, b)) if b <= c => best,
            _ => Some((k, c)),
        })
        .map(|(k, _)| k)
}

/// The fewest estimated instructions ([`cost::estimate`]) among `plans` (made for `graph`
/// from `steps`) that meet a RAM budget given in bytes, if one does.
pub(crate) fn cheapest_fit(
    plans: &[(Plan, usize)],
    graph: &Graph,
    steps: &[lower::Step],
    options: &Options,
) -> Option<f64> {
    plans
        .iter()
        .filter(|(p, _)| fits_budget(p, options) == Some(true))
        .map(|(p, v)| estimate(graph, steps, p, *v))
        .min_by(f64::total_cmp)
}

/// [`cost::estimate`] of `plan`, the plan of [`PLAN_VARIANTS`] index `variant`.
pub(crate) fn estimate(graph: &Graph, steps: &[lower::Step], plan: &Plan, variant: usize) -> f64 {
    cost::estimate(graph, steps, plan, variant > 0, variant == WITHOUT_SCRATCH)
}
