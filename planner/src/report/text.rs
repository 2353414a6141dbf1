//! The text report (`<name>.plan.txt`, `kiln plan`): a summary, then one row per step with
//! its operator, its buffers' offsets and what is live.

use super::code::CodeEstimate;
use super::header::Header;
use super::names::{Reasons, group_labels};
use crate::alias::OpMode;
use crate::ir::Graph;
use crate::lifetimes::BufferOwner;
use crate::plan::Plan;
use std::fmt::Write;

/// The text report with the reproducibility header's lines after the title, and the
/// model's flash ([`Header::flash`]) in place of its constant buffers' bytes.
pub fn text_with(graph: &Graph, plan: &Plan, title: &str, header: &Header) -> String {
    let body = summary_and_steps(graph, plan, title, Some(header));
    let (first, rest) = body.split_once('\n').unwrap_or((&body, ""));
    let mut s = format!("{first}\n");
    for (k, v) in header.lines() {
        let _ = writeln!(s, "{k:<16} {v}");
    }
    s.push_str(rest);
    s
}

/// Live buffers listed per step of the text report before the rest is counted.
const LIVE_LISTED: usize = 24;

/// The text report: a summary, then one row per step.
pub fn text(graph: &Graph, plan: &Plan, title: &str) -> String {
    summary_and_steps(graph, plan, title, None)
}

/// The summary (with the flash of `header`, if given) and the steps.
fn summary_and_steps(graph: &Graph, plan: &Plan, title: &str, header: Option<&Header>) -> String {
    let mut s = String::new();
    let peak = plan.peak_step();
    let _ = writeln!(s, "model            {title}");
    let _ = writeln!(s, "ops              {}", graph.ops.len());
    let _ = writeln!(s, "tensors          {}", graph.tensors.len());
    let stored = graph.weights_bytes();
    match header {
        Some(h) => {
            let f = h.flash;
            let code = CodeEstimate::of(&h.kernel_variants);
            let _ = writeln!(
                s,
                "flash bytes      {} ({}; the flash budget's figure)",
                f.total(),
                f.parts()
            );
            let _ = writeln!(
                s,
                "model buffers    {stored} bytes of constants in the model file: weights are \
                 those the kernels read as stored (WEIGHTS_BYTES), prepared constants the \
                 tables Kiln makes from the rest at build time"
            );
            let _ = writeln!(
                s,
                "code estimate    {} B: invoke() and its kernels on a Cortex-M4 at opt-level \
                 \"s\" ({} B at 3), {}",
                code.opt_s,
                code.opt_3,
                CodeEstimate::basis()
            );
            let _ = writeln!(
                s,
                "flash with code  {} B (estimated: flash bytes + code estimate at \"s\")",
                f.total() as u64 + code.opt_s
            );
        }
        None => {
            let _ = writeln!(s, "weight bytes     {stored}");
        }
    }
    let _ = writeln!(
        s,
        "arena bytes      {} (alignment {}, {})",
        plan.arena_bytes, plan.alignment, plan.strategy
    );
    for (r, region) in plan.regions.iter().enumerate() {
        let mine: Vec<String> = plan
            .buffers
            .iter()
            .filter(|b| b.region == r)
            .map(|b| {
                let at = b.offset - region.base;
                match b.owner {
                    BufferOwner::Tensor(t) => format!("t{} {} B at +{at}", t.0, b.size),
                    BufferOwner::Scratch(o) => {
                        format!("scratch of op {} {} B at +{at}", o.0, b.size)
                    }
                }
            })
            .collect();
        let _ = writeln!(
            s,
            "region {r}         `{}`: {} of {} bytes (alignment {}){}{}",
            region.section,
            region.bytes,
            region.size,
            region.align,
            if mine.is_empty() { "" } else { ": " },
            mine.join(", ")
        );
    }
    let _ = writeln!(
        s,
        "lower bound      {} (gap {} bytes, {}; {})",
        plan.lower_bound_bytes,
        plan.gap_bytes(),
        percent(plan.gap_bytes(), plan.lower_bound_bytes),
        if plan.placement_optimal {
            "placement optimal".to_string()
        } else {
            format!(
                "placement not proved optimal, aligned bound {}",
                plan.aligned_bound_bytes
            )
        }
    );
    let _ = writeln!(
        s,
        "no aliasing      {} (bound of this order with a buffer per tensor, {})",
        plan.unaliased_bound_bytes,
        match plan.unaliased_bound_bytes - plan.lower_bound_bytes.min(plan.unaliased_bound_bytes) {
            0 => "the same".to_string(),
            d => format!("{d} bytes above"),
        }
    );
    let _ = writeln!(
        s,
        "stored bound     {} (lower bound of the stored order without aliasing, {})",
        plan.stored_order_bound_bytes,
        match plan.stored_order_bound_bytes.cmp(&plan.lower_bound_bytes) {
            std::cmp::Ordering::Equal => "the same".to_string(),
            std::cmp::Ordering::Greater => format!(
                "{} bytes above",
                plan.stored_order_bound_bytes - plan.lower_bound_bytes
            ),
            std::cmp::Ordering::Less => format!(
                "{} bytes below",
                plan.lower_bound_bytes - plan.stored_order_bound_bytes
            ),
        }
    );
    let _ = writeln!(
        s,
        "order            {} ({}; {})",
        if plan.reordered() {
            "reordered"
        } else {
            "stored order kept"
        },
        plan.order_search,
        if plan.order_optimal {
            "no order has a smaller bound"
        } else {
            "not proved optimal"
        }
    );
    if plan.reordered() {
        let ids = |v: &mut dyn Iterator<Item = usize>| {
            v.map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
        };
        let _ = writeln!(
            s,
            "chosen order     {}",
            ids(&mut plan.order.iter().map(|o| o.0))
        );
        let _ = writeln!(s, "stored order     {}", ids(&mut (0..graph.ops.len())));
    }
    let _ = writeln!(s, "persistent bytes {}", plan.persistent_bytes);
    for p in &plan.persistent {
        let _ = writeln!(
            s,
            "persistent       t{} `{}`: {} B at +{}",
            p.tensor.0,
            graph.tensor(p.tensor).name,
            p.size,
            p.offset
        );
    }
    if plan.aliases.is_empty() {
        let _ = writeln!(s, "aliases          none (every tensor has its own buffer)");
    }
    let reasons = Reasons::new(graph, plan);
    for a in &plan.aliases {
        let (reason, op) = reasons.of(a.tensor);
        let _ = writeln!(
            s,
            "alias            t{} in the buffer of t{} at +{} ({reason}{})",
            a.tensor.0,
            a.buffer.0,
            a.offset,
            op.map_or(String::new(), |o| format!(
                ", op {o} {}",
                graph.op(crate::ir::OpId(o)).kind.name()
            ))
        );
    }
    if let Some(p) = peak {
        let op = graph.op(plan.order[p]);
        let _ = writeln!(
            s,
            "peak op          {} {} ({} bytes live)",
            op.id.0,
            op.kind.name(),
            plan.live_bytes[p]
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:>4}  {:>4}  {:<28} {:>10}  live tensors",
        "step", "op", "name", "live bytes"
    );
    // The buffers live at each step, by a sweep: those starting there join, those whose
    // last step it was leave after it (in buffer order, as listed; at most `LIVE_LISTED`
    // per step, then how many more, so that the report stays linear in the steps).
    let labels = group_labels(plan);
    let steps = plan.order.len();
    let (mut starting, mut ending) = (vec![Vec::new(); steps], vec![Vec::new(); steps]);
    for (i, b) in plan.buffers.iter().enumerate() {
        if let Some(v) = starting.get_mut(b.first) {
            v.push(i);
            ending[b.last.min(steps - 1)].push(i);
        }
    }
    let mut live_set = std::collections::BTreeSet::new();
    for (step, &id) in plan.order.iter().enumerate() {
        let op = graph.op(id);
        live_set.extend(starting[step].iter().copied());
        let mut live: Vec<String> = live_set
            .iter()
            .take(LIVE_LISTED)
            .map(|&i| match plan.buffers[i].owner {
                BufferOwner::Tensor(t) => labels
                    .get(&t)
                    .cloned()
                    .unwrap_or_else(|| format!("t{}", t.0)),
                BufferOwner::Scratch(o) => format!("scratch{}", o.0),
            })
            .collect();
        if live_set.len() > LIVE_LISTED {
            live.push(format!("(+{} more)", live_set.len() - LIVE_LISTED));
        }
        for i in &ending[step] {
            live_set.remove(i);
        }
        let mark = if Some(step) == peak { " <- peak" } else { "" };
        let name = match plan.mode(id) {
            OpMode::Normal => op.kind.name().to_string(),
            mode => format!("{} ({})", op.kind.name(), mode.name()),
        };
        let _ = writeln!(
            s,
            "{:>4}  {:>4}  {:<28} {:>10}  {}{}",
            step,
            id.0,
            name,
            plan.live_bytes[step],
            live.join(" "),
            mark
        );
    }
    s
}

/// `part / whole` as a percentage with two decimals.
fn percent(part: usize, whole: usize) -> String {
    if whole == 0 {
        return if part == 0 {
            "0.00 %".into()
        } else {
            "n/a".into()
        };
    }
    format!("{:.2} %", part as f64 * 100.0 / whole as f64)
}
