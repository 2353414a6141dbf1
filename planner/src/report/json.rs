//! The JSON report (`<name>.plan.json`, `kiln plan --json`): the plan's summary, every
//! buffer with its pieces, the aliases and why, the regions and the persistent region.

use super::analyze::{Layer, layers};
use super::code::{CodeEstimate, code_work};
use super::header::Header;
use super::names::{Reasons, buffer_name};
use crate::ir::Graph;
use crate::lifetimes::BufferOwner;
use crate::plan::Plan;
use serde::Serialize;

/// One buffer in the JSON report.
#[derive(Serialize)]
pub struct JsonBuffer {
    /// Tensor index, or `null` for scratch.
    pub tensor: Option<usize>,
    /// Operator index for scratch buffers, else `null`.
    pub scratch_of_op: Option<usize>,
    pub name: String,
    pub offset: usize,
    pub size: usize,
    /// First and last operator (by index in the model) at which the buffer is live.
    pub first_op: usize,
    pub last_op: usize,
    /// With a memory map: the link section of its region and its offset there (`offset`
    /// is in the address space where the regions lie one after another).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region_offset: Option<usize>,
    /// Its pieces: the parts of its bytes each live at its own steps (one, the whole buffer,
    /// unless it holds aliases live at different steps).
    pub pieces: Vec<JsonPiece>,
}

/// A piece of a buffer in the JSON report.
#[derive(Serialize)]
pub struct JsonPiece {
    /// Byte offset in the arena.
    pub offset: usize,
    pub size: usize,
    /// First and last step (positions in `order`) at which it is live.
    pub first_step: usize,
    pub last_step: usize,
}

/// A tensor that lives in another tensor's buffer, in the JSON report.
#[derive(Serialize)]
pub struct JsonAlias {
    pub tensor: usize,
    /// The tensor whose buffer holds it.
    pub buffer_tensor: usize,
    /// Byte offset inside that buffer.
    pub offset: usize,
    /// Why: `view`, `in place`, `concatenation slice`, `overwritten in place` (the input of
    /// an in-place operator whose output holds the buffer), or `in the group of a slice` (it
    /// shares bytes with a tensor that became a concatenation slice).
    pub reason: String,
    /// The operator that makes the alias, if one does directly.
    pub op: Option<usize>,
}

/// A region of the memory map in the JSON report.
#[derive(Serialize)]
pub struct JsonRegion {
    /// Its link section.
    pub section: String,
    /// The bytes the user gave it.
    pub size: usize,
    /// The bytes its buffers use.
    pub bytes: usize,
    pub align: usize,
    /// Where it starts in the address space of the buffers' `offset`.
    pub base: usize,
    /// Its buffers (indices in `buffers`).
    pub buffers: Vec<usize>,
}

/// One variable of the persistent region.
#[derive(Serialize)]
pub struct JsonPersistent {
    pub tensor: usize,
    pub name: String,
    pub offset: usize,
    pub size: usize,
}

#[derive(Serialize)]
pub struct JsonReport {
    pub ops: usize,
    pub tensors: usize,
    pub arena_bytes: usize,
    /// Most bytes live at one step for the order used.
    pub lower_bound_bytes: usize,
    /// `arena_bytes - lower_bound_bytes`.
    pub gap_bytes: usize,
    /// The smallest arena any placement of this order could have with this alignment.
    pub aligned_bound_bytes: usize,
    /// Whether no placement of this order has a smaller arena.
    pub placement_optimal: bool,
    /// Most bytes live at one step for the order used with a buffer per tensor.
    pub unaliased_bound_bytes: usize,
    /// Most bytes live at one step for the model's stored order, a buffer per tensor.
    pub stored_order_bound_bytes: usize,
    /// Whether no order has a smaller lower bound.
    pub order_optimal: bool,
    /// How the order was chosen.
    pub order_search: String,
    /// Whether `order` differs from `stored_order`.
    pub reordered: bool,
    pub persistent_bytes: usize,
    /// The persistent region's variables (LSTM/SVDF state, Signal operators' kernel state,
    /// resource variables).
    pub persistent: Vec<JsonPersistent>,
    /// With a header ([`json_with`]): the model's constant buffers the kernels read as
    /// stored (`WEIGHTS_BYTES`, `flash.weights`); without one, all the model file's constant
    /// buffers.
    pub weights_bytes: usize,
    /// The model's flash as the flash budget counts it (with a header): `bytes` = `weights`
    /// + `prepared_constants`; `model_buffers` = the model file's constant buffers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flash: Option<JsonFlash>,
    pub alignment: usize,
    /// The memory map, fastest first (absent without regions: one arena).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<JsonRegion>,
    /// The operator at the step with the most live bytes (index in the model), its name and
    /// that step's live bytes.
    pub peak_op: Option<usize>,
    pub peak_op_name: Option<String>,
    pub peak_live_bytes: Option<usize>,
    pub strategy: String,
    /// Operator indices in execution order.
    pub order: Vec<usize>,
    /// Operator indices in the model's stored order.
    pub stored_order: Vec<usize>,
    pub buffers: Vec<JsonBuffer>,
    /// Tensors without a buffer of their own.
    pub aliases: Vec<JsonAlias>,
    /// The reproducibility header, where the report is made with one ([`json_with`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<Header>,
    /// Each step's MACs, bytes moved and kernels (with a header, which names the kernels;
    /// `kiln plan --layers` prints them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<Layer>,
}

/// The model's flash in the JSON report ([`Header::flash`]).
#[derive(Serialize)]
pub struct JsonFlash {
    /// `weights` + `prepared_constants`: the flash budget's figure.
    pub bytes: usize,
    pub weights: usize,
    pub prepared_constants: usize,
    /// The model file's constant buffers (some are replaced by prepared constants).
    pub model_buffers: usize,
    /// The estimated code of `invoke()` and its kernels on a Cortex-M4 at opt-level "s"
    /// and 3 ([`CodeEstimate`]; not in `bytes`, which is exact).
    pub code_estimate_m4_s: u64,
    pub code_estimate_m4_3: u64,
    /// What the code estimate multiplies ([`code_work`], in the units of
    /// [`rates::CODE_KINDS`](super::rates::CODE_KINDS)).
    pub code_work: [u64; 5],
}

/// The JSON report with a reproducibility header and the model's flash.
pub fn json_with(graph: &Graph, plan: &Plan, header: &Header) -> JsonReport {
    let f = header.flash;
    let code = CodeEstimate::of(&header.kernel_variants);
    JsonReport {
        header: Some(header.clone()),
        weights_bytes: f.weights,
        flash: Some(JsonFlash {
            bytes: f.total(),
            weights: f.weights,
            prepared_constants: f.prepared_constants,
            model_buffers: graph.weights_bytes(),
            code_estimate_m4_s: code.opt_s,
            code_estimate_m4_3: code.opt_3,
            code_work: code_work(&header.kernel_variants),
        }),
        layers: layers(graph, plan, header),
        ..json(graph, plan)
    }
}

/// Builds the JSON report.
pub fn json(graph: &Graph, plan: &Plan) -> JsonReport {
    let reasons = Reasons::new(graph, plan);
    JsonReport {
        ops: graph.ops.len(),
        tensors: graph.tensors.len(),
        arena_bytes: plan.arena_bytes,
        lower_bound_bytes: plan.lower_bound_bytes,
        gap_bytes: plan.gap_bytes(),
        aligned_bound_bytes: plan.aligned_bound_bytes,
        placement_optimal: plan.placement_optimal,
        unaliased_bound_bytes: plan.unaliased_bound_bytes,
        stored_order_bound_bytes: plan.stored_order_bound_bytes,
        order_optimal: plan.order_optimal,
        order_search: plan.order_search.to_string(),
        reordered: plan.reordered(),
        persistent_bytes: plan.persistent_bytes,
        persistent: plan
            .persistent
            .iter()
            .map(|p| JsonPersistent {
                tensor: p.tensor.0,
                name: graph.tensor(p.tensor).name.clone(),
                offset: p.offset,
                size: p.size,
            })
            .collect(),
        weights_bytes: graph.weights_bytes(),
        flash: None,
        alignment: plan.alignment,
        regions: plan
            .regions
            .iter()
            .enumerate()
            .map(|(r, region)| JsonRegion {
                section: region.section.clone(),
                size: region.size,
                bytes: region.bytes,
                align: region.align,
                base: region.base,
                buffers: (0..plan.buffers.len())
                    .filter(|&i| plan.buffers[i].region == r)
                    .collect(),
            })
            .collect(),
        peak_op: plan.peak_step().map(|s| plan.order[s].0),
        peak_op_name: plan
            .peak_step()
            .map(|s| graph.op(plan.order[s]).kind.name().to_string()),
        peak_live_bytes: plan.peak_step().map(|s| plan.live_bytes[s]),
        strategy: plan.strategy.to_string(),
        order: plan.order.iter().map(|o| o.0).collect(),
        stored_order: (0..graph.ops.len()).collect(),
        buffers: plan
            .buffers
            .iter()
            .map(|b| JsonBuffer {
                tensor: match b.owner {
                    BufferOwner::Tensor(t) => Some(t.0),
                    BufferOwner::Scratch(_) => None,
                },
                scratch_of_op: match b.owner {
                    BufferOwner::Scratch(o) => Some(o.0),
                    BufferOwner::Tensor(_) => None,
                },
                name: buffer_name(graph, b.owner),
                offset: b.offset,
                size: b.size,
                first_op: plan.order.get(b.first).map_or(0, |o| o.0),
                last_op: plan.order.get(b.last).map_or(0, |o| o.0),
                region: plan.regions.get(b.region).map(|r| r.section.clone()),
                region_offset: plan.regions.get(b.region).map(|r| b.offset - r.base),
                pieces: b
                    .pieces
                    .iter()
                    .map(|p| JsonPiece {
                        offset: b.offset + p.offset,
                        size: p.size,
                        first_step: p.first,
                        last_step: p.last,
                    })
                    .collect(),
            })
            .collect(),
        aliases: plan
            .aliases
            .iter()
            .map(|a| {
                let (reason, op) = reasons.of(a.tensor);
                JsonAlias {
                    tensor: a.tensor.0,
                    buffer_tensor: a.buffer.0,
                    offset: a.offset,
                    reason: reason.to_string(),
                    op,
                }
            })
            .collect(),
        header: None,
        layers: Vec::new(),
    }
}
