//! [`compile_tokens`]: read, lower, plan (choosing among the plans and tilings), verify
//! and emit. The one path behind both front ends.

use crate::choose::{PLAN_VARIANTS, WITHOUT_SCRATCH, choose_plan, plan_variants, without_scratch};
use crate::compiled::Compiled;
use crate::header::{KILN_VERSION, recorded_options, sha256_hex};
use crate::options::Options;
use crate::tile::tile_if_needed;
use crate::{control, emit, lower};
use kiln_planner::diag::Diagnostic;
use kiln_planner::report::Header;

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
    // `reach`: with a RAM budget no plan meets, what the error says Kiln can reach.
    let (tiled, reach) = tile_if_needed(&graph, &steps, &plans, options, macs)?;
    let (graph, steps, plans, tiling) = match tiled {
        Some((tiled, steps, tiled_plans, report)) => (tiled, steps, tiled_plans, Some(report)),
        None => (graph, steps, plans, None),
    };
    let (mut plan, smallest_arena_bytes, variant) = choose_plan(plans, &graph, &steps, options);
    // The plan made for the convolutions' reference kernels runs them.
    let steps = if variant == WITHOUT_SCRATCH {
        without_scratch(steps)
    } else {
        steps
    };
    plan.persistent_bytes = control::layout_persistent(&graph, &plan, &mut program);
    let mut header = Header {
        model_sha256: sha256_hex(bytes),
        kiln_version: KILN_VERSION.to_string(),
        options: recorded_options(options),
        alignment: plan.alignment,
        plan_variant: PLAN_VARIANTS[variant].to_string(),
        kernel_variants: Vec::new(),
        flash: Default::default(),
    };
    let tokens = emit::emit_with(
        &graph,
        &plan,
        steps,
        options,
        &mut header,
        &program,
        reach.as_deref(),
    )?;
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
