//! The plan report: a summary and per-step table (text), JSON, and an SVG of the arena.
//!
//! A [`Header`] (filled in by `kiln-build`, which knows the model's bytes, the options and
//! the kernels chosen) adds the reproducibility fields to each: the model's sha256, Kiln's
//! version, the options, the alignment and the kernel variants.

use crate::alias::OpMode;
use crate::ir::{Graph, TensorId};
use crate::lifetimes::BufferOwner;
use crate::plan::Plan;
use serde::Serialize;
use std::fmt::Write;

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
    pub weights_bytes: usize,
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
}

/// The options a model was compiled with, as the reproducibility header records them.
/// Budgets are the text the user gave: bytes, or a constant expression (`crate::BUDGET`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecordedOptions {
    pub ram_budget: Option<String>,
    pub flash_budget: Option<String>,
    /// Bytes of RAM the firmware needs besides Kiln, counted against `ram_budget`.
    pub reserved_ram: Option<String>,
    pub align: usize,
    /// `false`: planned as TFLM does (its greedy offsets).
    pub optimize: bool,
    pub reorder: bool,
    /// `true`, `false`, or the kinds of aliasing allowed (`views+in_place`).
    pub alias: String,
    pub preserve_all_tensors: bool,
    pub preserve_inputs: bool,
    pub link_section: Option<String>,
    /// The memory map, fastest first: `section:size[:align]` each, separated by spaces
    /// (absent without regions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regions: Option<String>,
}

impl RecordedOptions {
    /// `name = value` pairs in a fixed order (`none` for an option not given).
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "none".to_string());
        let mut pairs = vec![
            ("ram_budget", opt(&self.ram_budget)),
            ("flash_budget", opt(&self.flash_budget)),
            ("reserved_ram", opt(&self.reserved_ram)),
            ("align", self.align.to_string()),
            ("optimize", self.optimize.to_string()),
            ("reorder", self.reorder.to_string()),
            ("alias", self.alias.clone()),
            (
                "preserve_all_tensors",
                self.preserve_all_tensors.to_string(),
            ),
            ("preserve_inputs", self.preserve_inputs.to_string()),
            (
                "link_section",
                self.link_section
                    .as_ref()
                    .map_or_else(|| "none".to_string(), |s| format!("{s:?}")),
            ),
        ];
        // Recorded only when given, so that headers without a memory map stay as they were.
        if let Some(r) = &self.regions {
            pairs.push(("regions", r.clone()));
        }
        pairs
    }

    /// The options on one line: `ram_budget = 98304, flash_budget = none, ...`.
    pub fn line(&self) -> String {
        self.pairs()
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One kernel function the generated code calls, and the operators that call it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelUse {
    /// `module::function` in `kiln::kernels`, e.g. `conv_2d::conv_2d_s8_fast`.
    pub kernel: String,
    /// Operator indices in the model, in execution order.
    pub ops: Vec<usize>,
}

/// What makes a compiled model reproducible: the model's bytes, the compiler, the options
/// and the choices made from them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Header {
    /// sha256 of the `.tflite` file, lowercase hex.
    pub model_sha256: String,
    /// The version of Kiln that compiled it.
    pub kiln_version: String,
    pub options: RecordedOptions,
    /// Alignment of the arena and of its offsets, in bytes.
    pub alignment: usize,
    /// Which of the plans (fastest first) was taken: `fast kernels`, `lean scratch` or
    /// `lean scratch, in place`.
    pub plan_variant: String,
    /// The kernel functions called, each with its operators, in order of first call.
    pub kernel_variants: Vec<KernelUse>,
}

impl Header {
    /// The header as `key: value` lines, for the text report and the generated docs.
    pub fn lines(&self) -> Vec<(&'static str, String)> {
        vec![
            ("model sha256", self.model_sha256.clone()),
            ("kiln version", self.kiln_version.clone()),
            ("options", self.options.line()),
            ("alignment", format!("{} bytes", self.alignment)),
            ("plan variant", self.plan_variant.clone()),
            ("kernels", self.kernels_line()),
        ]
    }

    /// The kernels on one line: `conv_2d::conv_2d_s8_fast x14, ...`.
    pub fn kernels_line(&self) -> String {
        if self.kernel_variants.is_empty() {
            return "none".to_string();
        }
        self.kernel_variants
            .iter()
            .map(|k| format!("{} x{}", k.kernel, k.ops.len()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The JSON report with a reproducibility header.
pub fn json_with(graph: &Graph, plan: &Plan, header: &Header) -> JsonReport {
    JsonReport {
        header: Some(header.clone()),
        ..json(graph, plan)
    }
}

/// The text report with the reproducibility header's lines after the title.
pub fn text_with(graph: &Graph, plan: &Plan, title: &str, header: &Header) -> String {
    let body = text(graph, plan, title);
    let (first, rest) = body.split_once('\n').unwrap_or((&body, ""));
    let mut s = format!("{first}\n");
    for (k, v) in header.lines() {
        let _ = writeln!(s, "{k:<16} {v}");
    }
    s.push_str(rest);
    s
}

/// Why tensor `t` shares another's buffer: the kind and the operator that makes it.
pub fn alias_reason(graph: &Graph, plan: &Plan, t: TensorId) -> (&'static str, Option<usize>) {
    Reasons::new(graph, plan).of(t)
}

/// Why each aliased tensor shares another's buffer, found in one pass over the operators.
struct Reasons {
    /// Per tensor: the first reason an operator gives, if any.
    direct: Vec<Option<(&'static str, usize)>>,
    /// Per tensor: the in-place operator that overwrites it, if any.
    overwritten: Vec<Option<usize>>,
}

impl Reasons {
    fn new(graph: &Graph, plan: &Plan) -> Reasons {
        let n = graph.tensors.len();
        let (mut direct, mut overwritten) = (vec![None; n], vec![None; n]);
        for op in &graph.ops {
            let mode = plan.mode(op.id);
            if let Some(&o) = op.outputs.first()
                && matches!(mode, OpMode::View | OpMode::InPlace { .. })
            {
                direct[o.0].get_or_insert((mode.name(), op.id.0));
            }
            if mode == OpMode::ConcatSlices {
                for i in op.present_inputs() {
                    direct[i.0].get_or_insert(("concatenation slice", op.id.0));
                }
            }
            if mode == OpMode::SplitSlices {
                for &o in &op.outputs {
                    direct[o.0].get_or_insert(("split slice", op.id.0));
                }
            }
            if let OpMode::InPlace { input } = mode
                && let Some(i) = op.input(input)
            {
                overwritten[i.0].get_or_insert(op.id.0);
            }
        }
        Reasons {
            direct,
            overwritten,
        }
    }

    fn of(&self, t: TensorId) -> (&'static str, Option<usize>) {
        if let Some((reason, op)) = self.direct[t.0] {
            return (reason, Some(op));
        }
        // The input of an in-place operator whose output is the root (a wider pointwise
        // convolution's input sits at the end of its output's bytes).
        match self.overwritten[t.0] {
            Some(op) => ("overwritten in place", Some(op)),
            None => ("in the group of a slice", None),
        }
    }
}

/// Members shown in a group's label before the rest is counted.
const LABEL_MEMBERS: usize = 8;

/// Live buffers listed per step of the text report before the rest is counted.
const LIVE_LISTED: usize = 24;

/// The members of each tensor buffer's group, by root: `t3=t4=t9` (long groups end with the
/// number of members not shown).
fn group_labels(plan: &Plan) -> std::collections::HashMap<TensorId, String> {
    let mut members: std::collections::HashMap<TensorId, Vec<TensorId>> = Default::default();
    for a in &plan.aliases {
        members.entry(a.buffer).or_default().push(a.tensor);
    }
    members
        .into_iter()
        .map(|(root, ms)| {
            let mut label = format!("t{}", root.0);
            for m in ms.iter().take(LABEL_MEMBERS) {
                let _ = write!(label, "=t{}", m.0);
            }
            if ms.len() > LABEL_MEMBERS {
                let _ = write!(label, "=...(+{})", ms.len() - LABEL_MEMBERS);
            }
            (root, label)
        })
        .collect()
}

/// ` (name n B, ...)` of the persistent region's variables, or nothing.
fn persistent_names(graph: &Graph, plan: &Plan) -> String {
    if plan.persistent.is_empty() {
        return String::new();
    }
    let names: Vec<String> = plan
        .persistent
        .iter()
        .map(|p| format!("{} {} B", graph.tensor(p.tensor).name, p.size))
        .collect();
    format!(" ({})", names.join(", "))
}

/// A buffer's display name: the tensor's name, or `scratch(op N)` (a control flow
/// operator's scratch holds the subgraphs it runs: `subgraphs 1, 2 (op N IF)`).
pub fn buffer_name(graph: &Graph, owner: BufferOwner) -> String {
    if let BufferOwner::Scratch(op) = owner {
        let called: Vec<String> = graph
            .op(op)
            .kind
            .called_subgraphs()
            .iter()
            .map(ToString::to_string)
            .collect();
        let called = match called.len() {
            0 => String::new(),
            1 => format!("subgraph {}", called[0]),
            _ => format!("subgraphs {}", called.join(", ")),
        };
        if !called.is_empty() {
            return format!("{called} (op {} {})", op.0, graph.op(op).kind.name());
        }
    }
    match owner {
        BufferOwner::Tensor(t) => {
            let n = &graph.tensor(t).name;
            if n.is_empty() {
                format!("t{}", t.0)
            } else {
                n.clone()
            }
        }
        BufferOwner::Scratch(op) => format!("scratch(op {})", op.0),
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
    }
}

/// The text report: a summary, then one row per step.
pub fn text(graph: &Graph, plan: &Plan, title: &str) -> String {
    let mut s = String::new();
    let peak = plan.peak_step();
    let _ = writeln!(s, "model            {title}");
    let _ = writeln!(s, "ops              {}", graph.ops.len());
    let _ = writeln!(s, "tensors          {}", graph.tensors.len());
    let _ = writeln!(s, "weight bytes     {}", graph.weights_bytes());
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

/// The part of a tensor name that tells it apart from the others, from its end: the
/// shortest run of trailing path segments no other name ends with
/// (`Conv2d_3_pointwise/Relu6` among `MobilenetV1/MobilenetV1/Conv2d_*/Relu6`). Of a name
/// that joins several (`a/Relu;a/BiasAdd;...`) the first is used.
fn distinctive_names(names: &[&str]) -> Vec<String> {
    let segments: Vec<Vec<&str>> = names
        .iter()
        .map(|n| {
            let first = n.split(';').next().unwrap_or(n);
            first.split('/').filter(|s| !s.is_empty()).collect()
        })
        .collect();
    // How many names end with each run of trailing segments.
    let mut ends: std::collections::HashMap<&[&str], usize> = Default::default();
    for s in &segments {
        for k in 1..=s.len() {
            *ends.entry(&s[s.len() - k..]).or_default() += 1;
        }
    }
    segments
        .iter()
        .zip(names)
        .map(|(s, name)| {
            let k = (1..=s.len())
                .find(|&k| ends.get(&s[s.len() - k..]) == Some(&1))
                .unwrap_or(s.len());
            if s.is_empty() {
                name.to_string()
            } else {
                s[s.len() - k..].join("/")
            }
        })
        .collect()
}

/// `text` in lines of at most `width` characters, broken after `/`, `_` or `;` where
/// possible; at most `max_lines`, keeping the end (a cut start is marked `…`).
fn wrap_end(text: &str, width: usize, max_lines: usize) -> Vec<String> {
    if width == 0 || max_lines == 0 {
        return Vec::new();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut lines = Vec::new();
    let mut start = 0;
    while start < chars.len() {
        let mut end = (start + width).min(chars.len());
        if end < chars.len()
            && let Some(b) = chars[start..end]
                .iter()
                .rposition(|c| matches!(c, '/' | '_' | ';' | ' '))
            && b > 0
        {
            end = start + b + 1;
        }
        lines.push(chars[start..end].iter().collect::<String>());
        start = end;
    }
    if lines.len() > max_lines {
        lines.drain(..lines.len() - max_lines);
        let first: String = lines[0].chars().skip(1).collect();
        lines[0] = format!("…{first}");
    }
    lines
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A tick step in KiB for an axis up to `max_kib`: 1, 2 or 5 times a power of ten, at most
/// ten ticks.
fn kib_step(max_kib: f64) -> f64 {
    let mut base = 0.1;
    loop {
        for m in [1.0, 2.0, 5.0] {
            if max_kib / (base * m) <= 10.0 {
                return base * m;
            }
        }
        base *= 10.0;
    }
}

/// The arena over time as SVG: x is the step (each labelled with its operator's name and
/// index), y the offset in KiB; one rectangle per buffer, labelled with the distinctive end
/// of its tensor's name, the peak step marked, a dashed line at the lower bound (and one at
/// the stored order's bound when it is higher). Each rectangle's tooltip has the full name,
/// its bytes and steps.
pub fn svg(graph: &Graph, plan: &Plan, title: &str) -> String {
    let steps = plan.order.len().max(1);
    let (left, top, width, height) = (80.0, 40.0, 1100.0_f64, 560.0_f64);
    // Operator names under the axis, written upwards.
    let bottom = 150.0;
    let col = width / steps as f64;
    let ymax = plan
        .arena_bytes
        .max(plan.lower_bound_bytes)
        .max(plan.stored_order_bound_bytes)
        .max(1) as f64;
    let y = |bytes: usize| top + height - bytes as f64 / ymax * height;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="10">"#,
        left + width + 20.0,
        top + height + bottom
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="#fff"/>"##);
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="16" font-size="14">{}: arena {} B, lower bound {} B (gap {} B{}), persistent {} B{}</text>"#,
        escape(title),
        plan.arena_bytes,
        plan.lower_bound_bytes,
        plan.gap_bytes(),
        if plan.placement_optimal {
            ", optimal"
        } else {
            ""
        },
        plan.persistent_bytes,
        escape(&persistent_names(graph, plan))
    );
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="30">order: {} ({}; {}); stored-order bound {} B; {} tensors share a buffer (bound {} B without aliasing)</text>"#,
        if plan.reordered() {
            "reordered"
        } else {
            "stored order kept"
        },
        escape(plan.order_search),
        if plan.order_optimal {
            "no order has a smaller bound"
        } else {
            "not proved optimal"
        },
        plan.stored_order_bound_bytes,
        plan.aliases.len(),
        plan.unaliased_bound_bytes
    );
    // The y axis: KiB, with grid lines.
    let max_kib = ymax / 1024.0;
    let step_kib = kib_step(max_kib);
    for tick in 0.. {
        let k = tick as f64 * step_kib;
        if k > max_kib + 1e-9 {
            break;
        }
        let yy = y((k * 1024.0) as usize);
        let label = if step_kib < 1.0 {
            format!("{k:.1}")
        } else {
            format!("{k:.0}")
        };
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{yy:.1}" x2="{}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{label}</text>"##,
            left + width,
            left - 4.0,
            yy + 3.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text transform="translate({},{}) rotate(-90)" text-anchor="middle" font-size="12">arena offset (KiB)</text>"#,
        left - 48.0,
        top + height / 2.0
    );
    let _ = writeln!(
        s,
        r##"<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" stroke="#888"/>"##
    );
    if let Some(p) = plan.peak_step() {
        let _ = writeln!(
            s,
            r##"<rect x="{:.1}" y="{top}" width="{col:.1}" height="{height}" fill="#fdd" fill-opacity="0.6"/><text x="{:.1}" y="{}" fill="#c00">peak</text>"##,
            left + p as f64 * col,
            left + p as f64 * col,
            top - 4.0
        );
    }
    let reasons = Reasons::new(graph, plan);
    let labels = group_labels(plan);
    let mut members: std::collections::HashMap<TensorId, Vec<&crate::alias::Alias>> =
        Default::default();
    for a in &plan.aliases {
        members.entry(a.buffer).or_default().push(a);
    }
    let full_names: Vec<String> = plan
        .buffers
        .iter()
        .map(|b| buffer_name(graph, b.owner))
        .collect();
    let short = distinctive_names(&full_names.iter().map(String::as_str).collect::<Vec<_>>());
    // Characters per line at font size 9.
    let char_w = 5.2;
    for (i, b) in plan.buffers.iter().enumerate() {
        let x = left + b.first as f64 * col;
        let w = (b.last - b.first + 1) as f64 * col;
        let y1 = y(b.offset + b.size);
        let h = (y(b.offset) - y1).max(0.5);
        let hue = (i * 47) % 360;
        let mut name = full_names[i].clone();
        if let BufferOwner::Tensor(t) = b.owner {
            let _ = write!(
                name,
                " ({})",
                labels
                    .get(&t)
                    .cloned()
                    .unwrap_or_else(|| format!("t{}", t.0))
            );
            for a in members.get(&t).into_iter().flatten() {
                let (reason, _) = reasons.of(a.tensor);
                let _ = write!(name, "; t{} at +{} ({reason})", a.tensor.0, a.offset);
            }
        }
        // A buffer of one piece is a filled rectangle; one of several pieces is its outline
        // (dashed) with the pieces filled inside.
        let fill = if b.pieces.len() > 1 {
            r##"fill="none" stroke-dasharray="3,2""##.to_string()
        } else {
            format!("fill=\"hsl({hue},60%,75%)\"")
        };
        let _ = writeln!(
            s,
            r##"<g><title>{} [{}..{}) {} B, steps {}..={}</title><rect x="{x:.1}" y="{y1:.1}" width="{w:.1}" height="{h:.1}" {fill} stroke="#333" stroke-width="0.5"/>"##,
            escape(&name),
            b.offset,
            b.offset + b.size,
            b.size,
            b.first,
            b.last
        );
        if b.pieces.len() > 1 {
            let mut d = String::new();
            for p in &b.pieces {
                let px = left + p.first as f64 * col;
                let pw = (p.last - p.first + 1) as f64 * col;
                let py = y(b.offset + p.offset + p.size);
                let ph = (y(b.offset + p.offset) - py).max(0.5);
                let _ = write!(d, "M{px:.1},{py:.1}h{pw:.1}v{ph:.1}h{:.1}Z", -pw);
            }
            let _ = writeln!(
                s,
                r##"<path d="{d}" fill="hsl({hue},60%,75%)" stroke="#333" stroke-width="0.3"/>"##
            );
        }
        // The label: the distinctive end of the tensor's name (`Conv2d_3_pointwise/Relu6`
        // among MobileNet's `.../Conv2d_*/Relu6`), wrapped to the rectangle, then its index
        // where it fits.
        let per_line = ((w - 4.0) / char_w) as usize;
        let max_lines = ((h - 2.0) / 10.0) as usize;
        if per_line >= 4 && max_lines >= 1 {
            // Whole if it fits; else the segment that tells it apart (`Conv2d_3_pointwise`);
            // else that segment's end.
            let candidates = match b.owner {
                BufferOwner::Tensor(t) => {
                    let first = short[i].split('/').next().unwrap_or(&short[i]);
                    vec![
                        format!("{} t{}", short[i], t.0),
                        format!("{first} t{}", t.0),
                    ]
                }
                BufferOwner::Scratch(o) => vec![format!("scratch op {}", o.0)],
            };
            let lines = candidates
                .iter()
                .map(|c| wrap_end(c, per_line, usize::MAX))
                .find(|l| l.len() <= max_lines)
                .unwrap_or_else(|| {
                    wrap_end(&candidates[candidates.len() - 1], per_line, max_lines)
                });
            let _ = write!(s, r#"<text font-size="9">"#);
            for (j, line) in lines.iter().enumerate() {
                let _ = write!(
                    s,
                    r#"<tspan x="{:.1}" y="{:.1}">{}</tspan>"#,
                    x + 2.0,
                    y1 + 9.5 + j as f64 * 10.0,
                    escape(line)
                );
            }
            s.push_str("</text>\n");
        }
        s.push_str("</g>\n");
    }
    let lb = y(plan.lower_bound_bytes);
    let _ = writeln!(
        s,
        r##"<line x1="{left}" y1="{lb:.1}" x2="{}" y2="{lb:.1}" stroke="#06c" stroke-dasharray="6,4"/><text x="{}" y="{:.1}" fill="#06c" text-anchor="end">lower bound</text>"##,
        left + width,
        left + width - 2.0,
        lb - 3.0
    );
    if plan.stored_order_bound_bytes > plan.lower_bound_bytes {
        let sb = y(plan.stored_order_bound_bytes);
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{sb:.1}" x2="{}" y2="{sb:.1}" stroke="#c60" stroke-dasharray="2,3"/><text x="{}" y="{:.1}" fill="#c60" text-anchor="end">stored-order bound</text>"##,
            left + width,
            left + width - 2.0,
            sb - 3.0
        );
    }
    // The x axis: each step's operator, name and index (every k-th when they are dense).
    let every = (9.0 / col).ceil().max(1.0) as usize;
    for (step, id) in plan.order.iter().enumerate() {
        if step % every != 0 {
            continue;
        }
        let moved = id.0 != step;
        let (cx, cy) = (left + (step as f64 + 0.5) * col + 3.0, top + height + 4.0);
        let _ = writeln!(
            s,
            r##"<text transform="translate({cx:.1},{cy:.1}) rotate(-90)" text-anchor="end" font-size="9"{}>{} {}</text>"##,
            if moved { r##" fill="#c60""## } else { "" },
            graph.op(*id).kind.name(),
            id.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="12">operator and its index, in execution order{}</text>"#,
        left + width / 2.0,
        top + height + bottom - 12.0,
        if plan.reordered() {
            " (moved operators in orange)"
        } else {
            ""
        }
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinctive_names_keep_the_end_that_tells_them_apart() {
        let names = [
            "MobilenetV1/MobilenetV1/Conv2d_1_pointwise/Relu6",
            "MobilenetV1/MobilenetV1/Conv2d_1_depthwise/Relu6",
            "MobilenetV1/MobilenetV1/Conv2d_2_pointwise/Relu6",
            "MobilenetV1/Logits/AvgPool_1a/AvgPool",
            "input",
            "a/x/Relu;a/x/BiasAdd",
            "b/x/Relu",
            "",
        ];
        assert_eq!(
            distinctive_names(&names),
            [
                "Conv2d_1_pointwise/Relu6",
                "Conv2d_1_depthwise/Relu6",
                "Conv2d_2_pointwise/Relu6",
                "AvgPool",
                "input",
                "a/x/Relu",
                "b/x/Relu",
                "",
            ]
        );
    }

    #[test]
    fn labels_wrap_at_separators_and_keep_their_end() {
        assert_eq!(
            wrap_end("Conv2d_1_pointwise/Relu6 t54", 10, 5),
            ["Conv2d_1_", "pointwise/", "Relu6 t54"]
        );
        assert_eq!(
            wrap_end("Conv2d_1_pointwise/Relu6 t54", 10, 2),
            ["…ointwise/", "Relu6 t54"]
        );
        assert_eq!(wrap_end("abc", 10, 1), ["abc"]);
        assert!(wrap_end("abc", 0, 1).is_empty());
    }

    #[test]
    fn kib_ticks_are_round() {
        assert_eq!(kib_step(54.0), 10.0);
        assert_eq!(kib_step(0.03), 0.1);
        assert_eq!(kib_step(15.0), 2.0);
        assert_eq!(kib_step(300.0), 50.0);
    }
}
