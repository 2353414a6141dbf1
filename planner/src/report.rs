//! The plan report: a summary and per-step table (text), JSON, and an SVG of the arena.

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

/// The JSON report (`kiln plan --json`).
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
    pub weights_bytes: usize,
    pub alignment: usize,
    pub peak_op: Option<usize>,
    pub strategy: String,
    /// Operator indices in execution order.
    pub order: Vec<usize>,
    /// Operator indices in the model's stored order.
    pub stored_order: Vec<usize>,
    pub buffers: Vec<JsonBuffer>,
    /// Tensors without a buffer of their own.
    pub aliases: Vec<JsonAlias>,
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

/// A buffer's display name: the tensor's name, or `scratch(op N)`.
pub fn buffer_name(graph: &Graph, owner: BufferOwner) -> String {
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
        weights_bytes: graph.weights_bytes(),
        alignment: plan.alignment,
        peak_op: plan.peak_step().map(|s| plan.order[s].0),
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
    // The buffers live at each step, by a sweep: those starting there join, those that
    // ended before leave (in buffer order, as listed).
    let labels = group_labels(plan);
    let mut starting = vec![Vec::new(); plan.order.len()];
    for (i, b) in plan.buffers.iter().enumerate() {
        if let Some(v) = starting.get_mut(b.first) {
            v.push(i);
        }
    }
    let mut live_set = std::collections::BTreeSet::new();
    for (step, &id) in plan.order.iter().enumerate() {
        let op = graph.op(id);
        live_set.extend(starting[step].iter().copied());
        live_set.retain(|&i| plan.buffers[i].last >= step);
        let live: Vec<String> = live_set
            .iter()
            .map(|&i| match plan.buffers[i].owner {
                BufferOwner::Tensor(t) => labels
                    .get(&t)
                    .cloned()
                    .unwrap_or_else(|| format!("t{}", t.0)),
                BufferOwner::Scratch(o) => format!("scratch{}", o.0),
            })
            .collect();
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

/// The last two path segments of a tensor name (`Conv2d_3_pointwise/Relu6`).
fn short_name(name: &str) -> &str {
    let mut cut = name.len();
    for _ in 0..2 {
        match name[..cut].rfind('/') {
            Some(i) => cut = i,
            None => return name,
        }
    }
    &name[cut + 1..]
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The arena over time as SVG: x is the step, y the offset; one labelled rectangle per
/// buffer, the peak step marked, a dashed line at the lower bound (and one at the stored
/// order's bound when it is higher), and the operator run at each step.
pub fn svg(graph: &Graph, plan: &Plan, title: &str) -> String {
    let steps = plan.order.len().max(1);
    let (left, top, width, height) = (70.0, 40.0, 900.0_f64, 500.0_f64);
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
        top + height + 50.0
    );
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="16" font-size="14">{}: arena {} B, lower bound {} B (gap {} B{}), persistent {} B</text>"#,
        escape(title),
        plan.arena_bytes,
        plan.lower_bound_bytes,
        plan.gap_bytes(),
        if plan.placement_optimal {
            ", optimal"
        } else {
            ""
        },
        plan.persistent_bytes
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
    let _ = writeln!(
        s,
        r##"<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" stroke="#888"/>"##
    );
    if let Some(p) = plan.peak_step() {
        let _ = writeln!(
            s,
            r##"<rect x="{:.1}" y="{top}" width="{col:.1}" height="{height}" fill="#fdd"/><text x="{:.1}" y="{}" fill="#c00">peak</text>"##,
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
    for (i, b) in plan.buffers.iter().enumerate() {
        let x = left + b.first as f64 * col;
        let w = (b.last - b.first + 1) as f64 * col;
        let y1 = y(b.offset + b.size);
        let h = (y(b.offset) - y1).max(0.5);
        let hue = (i * 47) % 360;
        let mut name = buffer_name(graph, b.owner);
        if let BufferOwner::Tensor(t) = b.owner {
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
            r##"<g><title>{} [{}..{}) steps {}..={}</title><rect x="{x:.1}" y="{y1:.1}" width="{w:.1}" height="{h:.1}" {fill} stroke="#333" stroke-width="0.5"/>"##,
            escape(&name),
            b.offset,
            b.offset + b.size,
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
        if h >= 11.0 && w >= 30.0 {
            // Tensor names are paths (`MobilenetV1/.../Conv2d_3_pointwise/Relu6`): label the
            // rectangle with the tensor index and the end of the name, which tells layers apart.
            let full = match b.owner {
                BufferOwner::Tensor(t) => format!(
                    "{} {}",
                    labels
                        .get(&t)
                        .cloned()
                        .unwrap_or_else(|| format!("t{}", t.0)),
                    short_name(&buffer_name(graph, b.owner))
                ),
                BufferOwner::Scratch(_) => name.clone(),
            };
            let label: String = full.chars().take((w / 6.0) as usize).collect();
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                x + 2.0,
                y1 + 10.0,
                escape(&label)
            );
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
    if col >= 12.0 {
        for (step, id) in plan.order.iter().enumerate() {
            let moved = id.0 != step;
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="8"{}>{}</text>"##,
                left + (step as f64 + 0.5) * col,
                top + height + 12.0,
                if moved { r##" fill="#c60""## } else { "" },
                id.0
            );
        }
    }
    for k in 0..=4 {
        let bytes = (ymax as usize) * k / 4;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{bytes}</text>"#,
            left - 4.0,
            y(bytes) + 3.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">step (operator in execution order; moved operators in orange)</text>"#,
        left + width / 2.0,
        top + height + 30.0
    );
    s.push_str("</svg>\n");
    s
}
