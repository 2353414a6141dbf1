//! Planning benchmark: writes the "Memory plans" section of BENCHMARKS.md.
//!
//! `cargo bench -p kiln-planner --bench planning`
//!
//! For every public model (`../shared/models`) and Kiln test model (`tests/models`): ops,
//! tensors, weight bytes, the lower bound for the stored order, Kiln's arena, TFLM's planned
//! region (head) and minimal arena as measured by `tools/tflm_arena.py` with the pinned
//! tflite-micro build (`tools/data/tflm_arena.json`), and the time to read and plan.

use kiln_planner::{PlanOptions, plan, read_model};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn models(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tflite"))
        .collect();
    v.sort();
    v
}

/// Replaces the text between `<!-- kiln:NAME -->` and `<!-- /kiln:NAME -->` in BENCHMARKS.md
/// (appending the section if it is missing).
pub fn write_section(name: &str, body: &str) {
    let path = root().join("BENCHMARKS.md");
    let old = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        "# Benchmarks\n\nWritten by the benchmarks; do not edit by hand.\n".into()
    });
    let (start, end) = (
        format!("<!-- kiln:{name} -->"),
        format!("<!-- /kiln:{name} -->"),
    );
    let section = format!("{start}\n{body}{end}");
    let new = match (old.find(&start), old.find(&end)) {
        (Some(a), Some(b)) if a < b => format!("{}{section}{}", &old[..a], &old[b + end.len()..]),
        _ => format!("{}\n{section}\n", old.trim_end()),
    };
    std::fs::write(&path, new).unwrap();
}

fn main() {
    let tflm: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tools/data/tflm_arena.json")).unwrap(),
    )
    .unwrap();
    let shared = std::env::var_os("KILN_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared"));
    let mut rows = String::new();
    let all: Vec<PathBuf> = models(&shared.join("models"))
        .into_iter()
        .chain(models(&root().join("tests/models")))
        .collect();
    for path in &all {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        let graph = read_model(&bytes).unwrap();
        let p = plan(&graph, &PlanOptions::default()).unwrap();
        // Median of repeated read + plan runs.
        let mut times: Vec<f64> = (0..21)
            .map(|_| {
                let t = Instant::now();
                let g = read_model(&bytes).unwrap();
                std::hint::black_box(plan(&g, &PlanOptions::default()).unwrap());
                t.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let t = &tflm[&name];
        let num = |k: &str| t[k].as_u64().map_or("n/a".to_string(), |v| v.to_string());
        let head = t["head"].as_u64().unwrap_or(0) as usize;
        let vs = if head > 0 {
            format!("{:.2}", p.arena_bytes as f64 / head as f64)
        } else {
            "n/a".into()
        };
        rows.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {vs} | {} | {} | {:.2} |\n",
            graph.ops.len(),
            graph.tensors.len(),
            graph.weights_bytes(),
            p.lower_bound_bytes,
            p.arena_bytes,
            p.persistent_bytes,
            num("head"),
            num("min_arena_exact"),
            times[times.len() / 2] * 1e3,
        ));
    }
    let body = format!(
        "## Memory plans\n\n\
         Written by `cargo bench -p kiln-planner --bench planning`. Lower bound = most bytes \
         live at one step for the stored order (tensor live from producer to last consumer, \
         inclusive). Kiln arena = the activation arena Kiln emits (16-byte aligned offsets); \
         Kiln has no other RAM overhead besides persistent state (LSTM/SVDF variables). TFLM \
         head = TFLM's planned activation region, TFLM min arena = the smallest arena TFLM runs \
         with (head + tail of interpreter structures, per-op data and state), both measured \
         by `tools/tflm_arena.py` with tflite-micro 0.dev20261023182759 (x86-64). Plan time = \
         median wall time to read, plan and verify (release build).\n\n\
         | model | ops | tensors | weight B | lower bound B | Kiln arena B | Kiln persistent B | arena / TFLM head | TFLM head B | TFLM min arena B | plan ms |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n{rows}\n"
    );
    write_section("planning", &body);
    print!("{body}");
}
