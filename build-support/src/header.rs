//! The reproducibility header's parts that Kiln computes: its version, the model's sha256
//! and the options as recorded (`kiln_planner::report::Header` holds them).

use crate::options::{Budget, Options, TilingOptions, expr_text};
use kiln_planner::PlanOptions;
use kiln_planner::alias::AliasOptions;
use kiln_planner::report::RecordedOptions;

/// The version of Kiln, as the reproducibility header records it.
pub const KILN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// sha256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            use std::fmt::Write;
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The options as the header records them.
pub fn recorded_options(options: &Options) -> RecordedOptions {
    let budget = |b: &Option<Budget>| {
        b.as_ref().map(|b| match b {
            Budget::Bytes(n) => n.to_string(),
            Budget::Expr(e) => expr_text(e),
        })
    };
    let p = &options.plan;
    let a = &p.aliasing;
    let alias = if *a == AliasOptions::default() {
        "true".to_string()
    } else if !(a.views || a.in_place || a.concat || a.depthwise || a.pointwise) {
        "false".to_string()
    } else {
        [
            (a.views, "views"),
            (a.in_place, "in_place"),
            (a.concat, "concat"),
            (a.depthwise, "depthwise"),
            (a.pointwise, "pointwise"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join("+")
    };
    RecordedOptions {
        ram_budget: budget(&options.ram_budget),
        flash_budget: budget(&options.flash_budget),
        reserved_ram: budget(&options.reserved_ram),
        align: p.alignment,
        optimize: p.placement != PlanOptions::unoptimised().placement,
        reorder: p.order.reorder,
        alias,
        preserve_all_tensors: p.preserve_all_tensors,
        preserve_inputs: p.preserve_inputs,
        link_section: options.link_section.clone(),
        regions: (!p.regions.is_empty()).then(|| {
            p.regions
                .iter()
                .map(|r| match r.align {
                    1 => format!("{}:{}", r.section, r.size),
                    a => format!("{}:{}:{a}", r.section, r.size),
                })
                .collect::<Vec<_>>()
                .join(" ")
        }),
        tiling: tiling_record(&options.tiling),
    }
}

/// The tiling options that differ from the defaults, as [`RecordedOptions::tiling`] holds them.
fn tiling_record(t: &TilingOptions) -> Option<String> {
    let default = TilingOptions::default();
    let mut parts = Vec::new();
    if !t.enabled {
        parts.push("off".to_string());
    }
    if t.max_extra_macs_percent != default.max_extra_macs_percent {
        parts.push(format!("max_extra_macs:{}", t.max_extra_macs_percent));
    }
    if t.min_ram {
        parts.push("min_ram".to_string());
    }
    if t.streamed_input {
        parts.push("streamed_input".to_string());
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}
