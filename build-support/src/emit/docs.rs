//! The docs of the generated `ModelIn`: what it is, the plan's summary (arena, regions,
//! peak, persistent bytes, flash, subgraphs, RAM against the budget) and the
//! reproducibility header.

use crate::control::Program;
use crate::options::{Budget, Options};
use kiln_planner::ir::Graph;
use kiln_planner::plan::Plan;
use kiln_planner::report::{CodeEstimate, Header};

/// The docs of `ModelIn`: what it is, the plan's summary and the reproducibility header.
pub(super) fn model_docs(
    g: &Graph,
    plan: &Plan,
    options: &Options,
    header: &Header,
    program: &Program,
) -> Vec<String> {
    let mut d: Vec<String> = [
        " The compiled model over an arena it borrows for `'a`: its own static one",
        " ([`Model`], from [`Model::take`]) or a buffer of the caller's",
        " ([`ModelIn::with_arena`]).",
        "",
        " # Plan",
        "",
    ]
    .iter()
    .map(|l| l.to_string())
    .collect();
    if !plan.regions.is_empty() {
        d[0] = " The compiled model over arenas it borrows for `'a`, one per region of the memory"
            .to_string();
        d[1] = " map: its own static ones ([`Model`], from [`Model::take`]) or buffers of the"
            .to_string();
        d[2] = " caller's ([`ModelIn::with_regions`]).".to_string();
    }
    d.push(format!(
        " - arena: {} bytes ([`ARENA_BYTES`]); lower bound {} bytes (the most bytes live at \
         one step), gap {} bytes{}",
        plan.arena_bytes,
        plan.lower_bound_bytes,
        plan.gap_bytes(),
        if plan.placement_optimal {
            ", placement optimal"
        } else {
            ""
        }
    ));
    for (r, region) in plan.regions.iter().enumerate() {
        let n = plan.buffers.iter().filter(|b| b.region == r).count();
        d.push(format!(
            " - region {r} `{}`: {} of {} bytes ([`ARENA{r}_BYTES`]), {n} buffer{}",
            region.section,
            region.bytes,
            region.size,
            if n == 1 { "" } else { "s" }
        ));
    }
    if let Some(step) = plan.peak_step() {
        let op = g.op(plan.order[step]);
        d.push(format!(
            " - peak: op {} ({}) at step {step}, {} bytes live",
            op.id.0,
            op.kind.name(),
            plan.live_bytes[step]
        ));
    }
    d.push(format!(
        " - persistent: {} bytes ([`PERSISTENT_BYTES`])",
        plan.persistent_bytes
    ));
    let f = header.flash;
    d.push(format!(
        " - flash: {} bytes = weights {} ([`WEIGHTS_BYTES`]) + prepared constants {} \
         (Kiln's tables), the figure of the flash budget and of `kiln plan`; code not included",
        f.total(),
        f.weights,
        f.prepared_constants
    ));
    let code = CodeEstimate::of(&header.kernel_variants);
    d.push(format!(
        " - code: about {} bytes on a Cortex-M4 at opt-level \"s\" ({} at 3), `kiln plan`'s \
         estimate from the kernels called (the compiler decides)",
        code.opt_s, code.opt_3
    ));
    let called: Vec<String> = (1..=g.subgraphs.len())
        .filter_map(|s| {
            let c = program.callee(s)?;
            Some(format!(
                "{s} ({} ops, arena {} B)",
                c.steps.len(),
                c.plan.arena_bytes
            ))
        })
        .collect();
    if !called.is_empty() {
        d.push(format!(
            " - subgraphs run by control flow, each in its caller's scratch: {}",
            called.join(", ")
        ));
    }
    let ram = plan.arena_bytes + plan.persistent_bytes;
    match (&options.ram_budget, &options.reserved_ram) {
        (Some(Budget::Bytes(b)), Some(Budget::Bytes(r))) => d.push(format!(
            " - RAM: arena + persistent + reserved = {ram} + {r} = {} of the budget's {b} bytes",
            ram + r
        )),
        (Some(Budget::Bytes(b)), None) => {
            d.push(format!(" - RAM: {ram} of the budget's {b} bytes"));
        }
        _ => {}
    }
    d.extend(["", " # Reproducibility", ""].map(String::from));
    d.push(format!(" - model sha256: `{}`", header.model_sha256));
    d.push(format!(" - Kiln {}", header.kiln_version));
    d.push(format!(" - options: `{}`", header.options.line()));
    d.push(format!(" - alignment: {} bytes", header.alignment));
    d.push(format!(" - plan: {}", header.plan_variant));
    d.push(" - kernels:".to_string());
    for k in &header.kernel_variants {
        d.push(format!(
            "   - `{}` x{} (op{} {})",
            k.kernel,
            k.ops.len(),
            if k.ops.len() > 1 { "s" } else { "" },
            k.ops
                .iter()
                .map(|o| o.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    d
}
