//! The SVG report (`<name>.plan.svg`, `kiln plan --svg`): the arena over time, one
//! rectangle per buffer labelled with the distinctive end of its tensor's name.

use super::names::{Reasons, buffer_name, group_labels, persistent_names};
use crate::ir::{Graph, TensorId};
use crate::lifetimes::BufferOwner;
use crate::plan::Plan;
use std::fmt::Write;

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
