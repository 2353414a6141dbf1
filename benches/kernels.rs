//! Kernel benchmark: writes the `kernels` section of BENCHMARKS.md.
//!
//! `cargo bench --bench kernels`
//!
//! Each case of `benches/models/` is one int8 operator cut out of a public model (same shapes,
//! quantization, options, weights; made by `tools/bench_kernels.py generate`). For each, this
//! reads the model with `kiln_planner::read_model`, plans and lowers it with
//! `kiln_build::lower::lower`, runs it with `kiln_build::exec::run`, checks the output against
//! TFLM's (hash in the manifest, which the Python side re-checks with TFLM in the same run),
//! and times the one lowered kernel call on prepared buffers. TFLM is timed in the same run by
//! `tools/bench_kernels.py time --serve`, whose rounds alternate with Kiln's. Without `.venv/`
//! it says so and writes Kiln's numbers only.

mod common;

use common::{CLOCK, Tflm, batch_mean, batch_size, machine, median, us, with_tflm, write_section};
use kiln_build::exec::Buffer;
use kiln_build::lower::{Step, lower};
use kiln_planner::{PlanOptions, plan, read_model};
use std::hint::black_box;

const ROUNDS: usize = 50;
const PASSES: usize = 5;
const BATCH_S: f64 = 0.002;

/// `n` bytes of splitmix64 seeded with `seed` (8 little-endian bytes per step), as
/// `splitmix64_bytes` in `tools/bench_kernels.py`.
fn splitmix64_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        out.extend_from_slice(&z.to_le_bytes());
    }
    out.truncate(n);
    out
}

fn fnv1a64(b: &[u8]) -> String {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for &x in b {
        h = (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01B3);
    }
    format!("{h:016x}")
}

/// One lowered step on prepared buffers (no copies): the call that is timed.
fn call(step: &Step, t: &[Buffer], out: &mut [u8]) {
    kiln_build::exec::run_step(step, t, &mut [], out);
}

/// A case read, lowered, checked against TFLM and ready to time.
struct Case {
    name: String,
    meta: serde_json::Value,
    steps: Vec<Step>,
    tensors: Vec<Buffer>,
    out: Buffer,
    batch: usize,
    times: Vec<f64>,
}

fn prepare(dir: &std::path::Path, c: &serde_json::Value) -> Case {
    let name = c["name"].as_str().unwrap().to_string();
    let bytes = std::fs::read(dir.join(c["file"].as_str().unwrap())).unwrap();
    let graph = read_model(&bytes).unwrap_or_else(|d| panic!("{name}: {d}"));
    let p = plan(
        &graph,
        &kiln_build::lower::kernels(&graph),
        &PlanOptions::default(),
    )
    .unwrap();
    let steps = lower(&graph, &p).unwrap_or_else(|d| panic!("{name}: {d}"));
    assert_eq!(steps.len(), 1, "{name}: one operator");
    let seed = c["input_seed"].as_u64().unwrap();
    let inputs: Vec<Vec<u8>> = graph
        .inputs
        .iter()
        .enumerate()
        .map(|(i, &t)| splitmix64_bytes(seed + i as u64, graph.tensor(t).bytes()))
        .collect();
    let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    // The pipeline's own executor, checked against TFLM's output.
    let tensors = kiln_build::exec::run(&graph, &steps, &refs);
    let want = c["output_fnv1a64"].as_array().unwrap();
    for (i, &t) in graph.outputs.iter().enumerate() {
        assert_eq!(
            fnv1a64(tensors[t.0].bytes()),
            want[i].as_str().unwrap(),
            "{name}: Kiln's output {i} differs from TFLM's"
        );
    }
    // The timed call: the one step on prepared buffers, output written in place.
    let out_id = steps[0].outputs[0];
    let mut out = tensors[out_id.0].clone();
    out.bytes_mut().fill(0);
    call(&steps[0], &tensors, out.bytes_mut());
    assert_eq!(
        out.bytes(),
        tensors[out_id.0].bytes(),
        "{name}: the timed call differs from exec::run"
    );
    Case {
        name,
        meta: c.clone(),
        steps,
        tensors,
        out,
        batch: 0,
        times: Vec::new(),
    }
}

struct Row {
    op: String,
    source: String,
    shape: String,
    macs: u64,
    kiln_us: f64,
    tflm: Option<(f64, f64, u64)>, // (invoke µs, kernel µs, K)
}

fn main() {
    let dir = common::root().join("benches/models");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    // Prepare and check every case, then time them in passes (rounds spread over the run),
    // each case's Kiln rounds followed by as many TFLM rounds (interleaved in time, so that
    // the load of the shared machine affects both alike).
    let mut cases: Vec<Case> = manifest["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| prepare(&dir, c))
        .collect();
    eprintln!("starting TFLM: tools/bench_kernels.py time --serve");
    let mut server = Tflm::start("bench_kernels.py", &["time", "--serve"]);
    for _ in 0..PASSES {
        for c in &mut cases {
            let step = &c.steps[0];
            let (tensors, out) = (&c.tensors, &mut c.out);
            let mut f = || {
                call(
                    black_box(step),
                    black_box(tensors),
                    black_box(out.bytes_mut()),
                )
            };
            if c.batch == 0 {
                for _ in 0..3 {
                    f();
                }
                c.batch = batch_size(&mut f, BATCH_S);
            }
            for _ in 0..ROUNDS / PASSES {
                c.times.push(batch_mean(&mut f, c.batch));
            }
            let line = format!("rounds {} {}", c.name, ROUNDS / PASSES);
            with_tflm(&mut server, |t| t.request(&line));
        }
    }
    let tflm = server.and_then(Tflm::finish);
    if let Err(e) = &tflm {
        eprintln!("no TFLM numbers: {e}");
    }
    let mut rows = Vec::new();
    for c in &mut cases {
        let kiln_s = median(&mut c.times);
        let t = tflm.as_ref().ok().map(|j| {
            let r = &j["cases"][&c.name];
            (
                r["invoke_us"].as_f64().unwrap(),
                r["kernel_us"].as_f64().unwrap(),
                r["k"].as_u64().unwrap(),
            )
        });
        eprintln!(
            "{:20} Kiln {:>10} us  TFLM kernel {:>10} us",
            c.name,
            us(kiln_s * 1e6),
            t.map_or("-".into(), |t| us(t.1))
        );
        let s = |k: &str| c.meta[k].as_str().unwrap().to_string();
        rows.push(Row {
            op: s("op"),
            source: s("source"),
            shape: s("shape"),
            macs: c.meta["macs"].as_u64().unwrap(),
            kiln_us: kiln_s * 1e6,
            tflm: t,
        });
    }
    let mut table = String::from(
        "| op | shape | from | MACs | TFLM µs | Kiln µs | Kiln / TFLM | TFLM invoke µs |\n\
         |---|---|---|--:|--:|--:|--:|--:|\n",
    );
    let mut slower = Vec::new();
    let mut parity = Vec::new();
    for r in &rows {
        let (tf, ratio, inv) = match r.tflm {
            Some((inv, kern, _)) => {
                let ratio = r.kiln_us / kern;
                let what = format!("{} {} ({}): {ratio:.2}", r.op, r.shape, r.source);
                if ratio > 1.0 {
                    slower.push(what);
                } else if ratio > 0.9 {
                    parity.push(what);
                }
                let mark = if ratio > 1.0 { " **slower**" } else { "" };
                (us(kern), format!("{ratio:.2}{mark}"), us(inv))
            }
            None => ("n/a".into(), "n/a".into(), "n/a".into()),
        };
        table.push_str(&format!(
            "| {} | {} | {} | {} | {tf} | {} | {ratio} | {inv} |\n",
            r.op,
            r.shape,
            r.source,
            r.macs,
            us(r.kiln_us),
        ));
    }
    let ks = rows.iter().filter_map(|r| r.tflm.map(|t| t.2));
    let k_range = (ks.clone().min().unwrap_or(0), ks.max().unwrap_or(0));
    let tflm_text = match &tflm {
        Ok(j) => format!(
            "TFLM = the pinned PyPI tflite-micro {} (its reference kernels, as built in the \
             wheel), timed by `tools/bench_kernels.py time --serve` in the same run: TFLM µs is the \
             operator alone, from a second model holding K copies of the operator (K = {}–{}: \
             the copies take about 1 ms; same inputs and weights, own outputs), (t_K − t_1)/(K − 1) per round (batches of about \
             2 ms), median over {} rounds, each right after Kiln's rounds of the same row, which removes Python's and the \
             interpreter's per-invoke cost; TFLM invoke µs is the whole `invoke()` of the \
             one-operator model from Python, for reference: `invoke()` of a model without \
             operators takes {} µs in this run, which dominates the smallest rows.",
            j["tflite_micro"].as_str().unwrap_or("?"),
            k_range.0,
            k_range.1,
            ROUNDS,
            us(j["empty_invoke_us"].as_f64().unwrap_or(f64::NAN)),
        ),
        Err(e) => format!("**No TFLM numbers in this run: {e}.** Kiln's numbers only."),
    };
    let mut verdict = match (&tflm, slower.is_empty()) {
        (Err(_), _) => String::new(),
        (Ok(_), true) => {
            "Kiln is not slower than TFLM on any row (Kiln / TFLM ≤ 1.00).".to_string()
        }
        (Ok(_), false) => format!(
            "**Kiln is slower than TFLM on {} row(s)**: {}.",
            slower.len(),
            slower.join("; ")
        ),
    };
    if !parity.is_empty() {
        verdict.push_str(&format!(
            " Within 10 % of TFLM (parity within this machine's noise): {}.",
            parity.join("; ")
        ));
    }
    if !verdict.is_empty() {
        verdict.push_str("\n\n");
    }
    let body = format!(
        "## Kernels\n\n\
         Written by `cargo bench --bench kernels` (release profile). Each row is one int8 \
         operator cut out of a public model (same shapes, quantization, options, weights and \
         biases) into a one-operator model in `benches/models/` (made by \
         `tools/bench_kernels.py generate`); input: seeded random int8 over the full range. \
         Kiln µs = one call of the lowered kernel (`kiln_build::lower::lower` of the planned \
         model, parameters from the kernels' `prepare*`) on prepared buffers, median over {ROUNDS} \
         batches of about 2 ms (mean per call in a batch; after warm-up; spread over {PASSES} \
         passes through all rows), in {CLOCK}, on both sides; before timing, the \
         output of `kiln_build::exec::run` and of the timed call must equal TFLM's byte for \
         byte. The kernel is called with runtime parameters here; generated code passes them \
         as constants. {tflm_text} MACs = multiply-accumulates (pooling: accumulated inputs; \
         ADD and SOFTMAX: elements). Kiln / TFLM < 1 means Kiln is faster.\n\n\
         Machine: {}. Medians from one run; the 2 cores are shared with other builds, so \
         single rows can be off by tens of percent.\n\n{verdict}{table}\n",
        machine()
    );
    write_section("kernels", &body);
    print!("{body}");
}
