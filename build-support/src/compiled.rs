//! A compiled model ([`Compiled`]): the tokens with the graph, the plan and the program
//! that produced them, and the reports written from them (text, JSON, SVG).

use crate::control;
use crate::tile::TilingReport;
use kiln_planner::report::Header;
use kiln_planner::{Graph, Plan};
use proc_macro2::TokenStream;
use std::path::{Path, PathBuf};

/// A model compiled to tokens, with the graph and plan that produced them.
pub struct Compiled {
    pub tokens: TokenStream,
    pub graph: Graph,
    pub plan: Plan,
    /// The arena of the smallest plan (lean scratch, convolutions in place), when it is
    /// smaller than the chosen plan's (see [`compile_tokens`](crate::compile_tokens)): the RAM the faster plan costs.
    pub smallest_arena_bytes: Option<usize>,
    /// The reproducibility header (model sha256, Kiln's version, options, kernel variants),
    /// also in the generated module's docs.
    pub header: Header,
    /// The subgraphs control flow runs, each with its plan, and the persistent layout.
    pub program: control::Program,
    /// Multiply-accumulates of one `invoke()` of the model (untiled).
    pub macs: u64,
    /// The tiling, if the plan runs the first operators in strips (`graph` is then the
    /// tiled graph).
    pub tiling: Option<TilingReport>,
}

impl Compiled {
    /// The text report (`<name>.plan.txt`, `kiln plan`): the header, the summary, the steps.
    pub fn report_text(&self, title: &str) -> String {
        let mut s = kiln_planner::report::text_with(&self.graph, &self.plan, title, &self.header);
        if let Some(n) = self.smallest_arena_bytes {
            s.push_str(&format!(
                "\nRAM or speed: {n} bytes of arena with slower kernels (fast convolutions \
                 without their widened pixels, or in place over their inputs); Kiln \
                 takes them only when the RAM budget needs them: --ram-budget {n}\n"
            ));
        }
        s.push_str(&self.tiling_text());
        for (i, g, c, at) in self.callees() {
            s.push_str(&format!(
                "\n## Subgraph {i}: {}\n\n",
                at.map_or("not called".to_string(), |(o, n)| format!(
                    "its arena is at offset {o} of the model's, in the scratch of {n}"
                ))
            ));
            s.push_str(&kiln_planner::report::text(
                g,
                &c.plan,
                &format!("subgraph {i}"),
            ));
        }
        s
    }

    /// The MAC count and, if the model runs tiled, which operators and strips (the text
    /// report's lines).
    fn tiling_text(&self) -> String {
        let mut s = format!("\nMACs: {} per invoke()", self.macs);
        match &self.tiling {
            None => s.push_str(", not tiled\n"),
            Some(t) => {
                let strips: Vec<String> =
                    t.strips.iter().map(|(a, b)| format!("{a}..{b}")).collect();
                s.push_str(&format!(
                    "; tiled: the model's operators {}..{} run as {} of `{}` (t{}; rows {}), \
                     {} MACs computed again for the halos ({:.1} %)\n",
                    t.start,
                    t.end,
                    t.pieces(),
                    t.cut_name,
                    t.cut,
                    strips.join(", "),
                    t.extra_macs,
                    100.0 * t.extra_macs as f64 / self.macs.max(1) as f64
                ));
                s.push_str(&self.sink_text(t));
                for m in &t.more {
                    let strips: Vec<String> =
                        m.strips.iter().map(|(a, b)| format!("{a}..{b}")).collect();
                    s.push_str(&format!(
                        "then the model's operators {}..{} run as {} of `{}` (t{}; rows {}), {} \
                         MACs computed again\n",
                        m.start,
                        m.end,
                        m.pieces(),
                        m.cut_name,
                        m.cut,
                        strips.join(", "),
                        m.extra_macs,
                    ));
                    s.push_str(&self.sink_text(m));
                }
                if t.streamed {
                    s.push_str(
                        "input streamed: each strip reads its rows of the input from the row \
                         source `invoke` takes; the input has no bytes in the arena\n",
                    );
                }
            }
        }
        s
    }

    /// For a region ending in a sink, the line saying so (empty otherwise).
    fn sink_text(&self, t: &TilingReport) -> String {
        let Some(sink) = t.sink else {
            return String::new();
        };
        let name = self.graph.tensors.get(sink).map_or("", |x| x.name.as_str());
        format!(
            "  ending in a sink: each strip's sums accumulate, and `{name}` (t{sink}) is \
             finished from them; `{}` is never whole\n",
            t.cut_name
        )
    }

    /// The called subgraphs: index, graph, plan, and where their arena is (its offset in
    /// the model's arena and the control flow step whose scratch holds it).
    fn callees(&self) -> Vec<CalleeReport<'_>> {
        let at = control::arena_places(&self.graph, &self.plan, &self.program);
        self.program
            .callees
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let (c, g) = (c.as_ref()?, self.graph.subgraph(i)?);
                Some((i, g, c, at.get(i).cloned().flatten()))
            })
            .collect()
    }

    /// The JSON report (`<name>.plan.json`, `kiln plan --json`), with the header and
    /// `smallest_arena_bytes`.
    pub fn report_json(&self) -> String {
        let mut v = serde_json::to_value(kiln_planner::report::json_with(
            &self.graph,
            &self.plan,
            &self.header,
        ))
        .expect("the report serializes");
        if let Some(obj) = v.as_object_mut() {
            obj.insert(
                "smallest_arena_bytes".into(),
                self.smallest_arena_bytes.into(),
            );
            obj.insert("macs".into(), self.macs.into());
            obj.insert(
                "extra_macs".into(),
                self.tiling.as_ref().map_or(0, |t| t.extra_macs).into(),
            );
            obj.insert(
                "tiling".into(),
                self.tiling.as_ref().map_or(serde_json::Value::Null, |t| {
                    serde_json::json!({
                        "start": t.start,
                        "end": t.end,
                        "patches": t.patches,
                        "columns": t.columns,
                        "cut": t.cut,
                        "cut_name": t.cut_name,
                        "strips": t.strips,
                        "sink": t.sink,
                        "streamed": t.streamed,
                        "more": t.more.iter().map(|m| serde_json::json!({
                            "start": m.start,
                            "end": m.end,
                            "patches": m.patches,
                            "columns": m.columns,
                            "cut": m.cut,
                            "cut_name": m.cut_name,
                            "strips": m.strips,
                            "sink": m.sink,
                        })).collect::<Vec<_>>(),
                    })
                }),
            );
            let subgraphs: Vec<serde_json::Value> = self
                .callees()
                .into_iter()
                .map(|(i, g, c, at)| {
                    serde_json::json!({
                        "subgraph": i,
                        "arena_offset": at.as_ref().map(|a| a.0),
                        "in_scratch_of": at.map(|a| a.1),
                        "state_base": c.state_base,
                        "plan": kiln_planner::report::json(g, &c.plan),
                    })
                })
                .collect();
            if !subgraphs.is_empty() {
                obj.insert("subgraphs".into(), subgraphs.into());
            }
        }
        let mut s = serde_json::to_string_pretty(&v).expect("the report serializes");
        s.push('\n');
        s
    }

    /// The SVG of the arena over time (`<name>.plan.svg`, `kiln plan --svg`).
    pub fn report_svg(&self, title: &str) -> String {
        let title = match &self.tiling {
            Some(t) => format!(
                "{title} (operators {}..{} in {})",
                t.start,
                t.end,
                t.pieces()
            ),
            None => title.to_string(),
        };
        kiln_planner::report::svg(&self.graph, &self.plan, &title)
    }

    /// Writes `<name>.plan.txt`, `.plan.svg` and `.plan.json` into `dir` (created if
    /// missing), leaving files whose contents are unchanged alone. Returns their paths.
    pub fn write_reports(
        &self,
        dir: &Path,
        name: &str,
        title: &str,
    ) -> std::io::Result<[PathBuf; 3]> {
        std::fs::create_dir_all(dir)?;
        let files = [
            (format!("{name}.plan.txt"), self.report_text(title)),
            (format!("{name}.plan.svg"), self.report_svg(title)),
            (format!("{name}.plan.json"), self.report_json()),
        ];
        let mut paths = Vec::new();
        for (file, text) in files {
            let path = dir.join(file);
            write_if_changed(&path, &text)?;
            paths.push(path);
        }
        Ok(paths.try_into().expect("three reports"))
    }
}

/// A called subgraph for the reports: index, graph, plan, and its arena's offset and the
/// step whose scratch holds it.
type CalleeReport<'a> = (
    usize,
    &'a Graph,
    &'a control::Callee,
    Option<(usize, String)>,
);

/// Writes `text` to `path` unless it holds it already (so dependants do not rebuild).
pub(crate) fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text)?;
    }
    Ok(())
}
