//! Operator benchmark: writes the `kernels-new` section of BENCHMARKS.md.
//!
//! `cargo bench --bench operators`
//!
//! One row per kernel-case bundle of the operators and types added after the first kernel
//! benchmark (`benches/operators.json`, made by `tools/bench_operators.py select`: the bundle's
//! case with the most input + output bytes). For each, this reads the case's one-operator
//! model from its bundle in `tests/kernel_cases/`, plans and lowers it, runs it with
//! `kiln_build::exec::run` on the case's own inputs, checks every output against the bundle's
//! golden (TFLM's; the Python side re-checks TFLM on the same model and inputs in the same
//! run), and times the lowered kernel call(s) on prepared buffers. TFLM is timed in the same
//! run by `tools/bench_operators.py time --serve`, whose rounds alternate with Kiln's: each
//! row gets one Kiln / TFLM ratio per round, and its verdict (slower, within noise) comes from
//! their median and upper quartile (the method is in the text written to BENCHMARKS.md).
//! Without `.venv/` it says so and writes Kiln's numbers only.
//!
//! For work on a kernel, `KILN_BENCH_ROWS=sin_float32,pack_` times only the rows whose bundle
//! name starts with one of the prefixes and prints them without touching BENCHMARKS.md.

mod common;

use common::{CLOCK, Tflm, batch_mean, batch_size, machine, median, us, with_tflm, write_section};
use kiln_build::exec::Buffer;
use kiln_build::lower::{Step, lower};
use kiln_planner::{PlanOptions, plan, read_model};
use std::hint::black_box;

/// Interleaved rounds per row (each: Kiln's batches, the executor's, then TFLM's), spread
/// over as many passes through all rows; one Kiln / TFLM ratio per round.
const ROUNDS: usize = 12;
/// Kiln's timed batches per round.
const KILN_BATCHES: usize = 3;
/// TFLM's timed rounds (a batch of the one-operator model and one of the K copies) per round.
const TFLM_BATCHES: usize = 3;
/// Batches of the executor's share per round.
const FLOOR_BATCHES: usize = 2;
const BATCH_S: f64 = 0.001;

/// The `p`-quantile (`0..=1`) of a sample, linearly interpolated between order statistics
/// (numpy's default); sorts the sample.
fn quantile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let pos = p * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// One case of a `.kcase` bundle (format: tests/kernel_cases/README.md).
struct KCase {
    model: Vec<u8>,
    inputs: Vec<Vec<u8>>,
    outputs: Vec<Vec<u8>>,
}

/// Case `want` of a bundle.
fn kcase(bytes: &[u8], want: usize) -> KCase {
    assert_eq!(&bytes[..8], b"KCASE1\0\0", "bad magic");
    let mut at = 8;
    let u32_at = |at: &mut usize| {
        let v = u32::from_le_bytes(bytes[*at..*at + 4].try_into().unwrap()) as usize;
        *at += 4;
        v
    };
    let blob = |at: &mut usize| {
        let n = u32_at(at);
        let v = bytes[*at..*at + n].to_vec();
        *at += n;
        v
    };
    let count = u32_at(&mut at);
    assert!(want < count, "case {want} of {count}");
    for i in 0..count {
        let model = blob(&mut at);
        let n_in = u32_at(&mut at);
        let inputs = (0..n_in).map(|_| blob(&mut at)).collect();
        let n_out = u32_at(&mut at);
        let outputs = (0..n_out).map(|_| blob(&mut at)).collect();
        if i == want {
            return KCase {
                model,
                inputs,
                outputs,
            };
        }
    }
    unreachable!()
}

/// The lowered steps on prepared buffers, each writing its own output buffers: the calls
/// that are timed (one step for almost every operator), through the executor's entry for
/// benchmarks, `run_step` (`run_step_outputs` where a step has several outputs).
fn call(steps: &[Step], t: &[Buffer], outs: &mut [(Buffer, Vec<Buffer>)]) {
    for (step, (out, more)) in steps.iter().zip(outs) {
        if more.is_empty() {
            kiln_build::exec::run_step(step, t, &mut [], out.bytes_mut());
        } else {
            kiln_build::exec::run_step_outputs(step, t, &mut [], out.bytes_mut(), more);
        }
    }
}

/// An upper estimate of the host executor's own share of [`call`]: collecting each step's
/// operand slices (in an array of 8, on the heap beyond) and, for several outputs, the
/// output slices (likewise, as `Io::with_outs`), without the kernel. `run_step_outputs` now
/// looks each operand up only when the kernel asks for it, so this collection is more than
/// it does. Generated code has neither.
fn executor_floor(steps: &[Step], t: &[Buffer], outs: &mut [(Buffer, Vec<Buffer>)]) {
    for (step, (out, more)) in steps.iter().zip(outs) {
        let slices = step
            .inputs
            .iter()
            .map(|o| o.tensor().map(|id| t[id.0].bytes()));
        if step.inputs.len() <= 8 {
            let mut few: [Option<&[u8]>; 8] = [None; 8];
            for (slot, s) in few.iter_mut().zip(slices) {
                *slot = s;
            }
            black_box(&few);
        } else {
            let inputs: Vec<Option<&[u8]>> = slices.collect();
            black_box(&inputs);
        }
        if !more.is_empty() {
            let n = 1 + more.len();
            let all =
                std::iter::once(out.bytes_mut()).chain(more.iter_mut().map(Buffer::bytes_mut));
            if n <= 8 {
                let mut few: [&mut [u8]; 8] = Default::default();
                for (slot, o) in few.iter_mut().zip(all) {
                    *slot = o;
                }
                black_box(&few);
            } else {
                let v: Vec<&mut [u8]> = all.collect();
                black_box(&v);
            }
        }
    }
}

/// A row read, lowered, checked against the golden and ready to time.
struct Row {
    name: String,
    meta: serde_json::Value,
    steps: Vec<Step>,
    tensors: Vec<Buffer>,
    outs: Vec<(Buffer, Vec<Buffer>)>,
    batch: usize,
    times: Vec<f64>,
    ratios: Vec<f64>,
    floor_batch: usize,
    floors: Vec<f64>,
    floor: f64,
}

fn prepare(r: &serde_json::Value) -> Row {
    let name = r["name"].as_str().unwrap().to_string();
    let path = common::root()
        .join("tests/kernel_cases")
        .join(r["file"].as_str().unwrap());
    let case = kcase(
        &std::fs::read(&path).unwrap(),
        r["case"].as_u64().unwrap() as usize,
    );
    let graph = read_model(&case.model).unwrap_or_else(|d| panic!("{name}: {d}"));
    let p = plan(
        &graph,
        &kiln_build::lower::kernels(&graph),
        &PlanOptions::default(),
    )
    .unwrap_or_else(|d| panic!("{name}: {d}"));
    let steps = lower(&graph, &p).unwrap_or_else(|d| panic!("{name}: {d}"));
    assert!(!steps.is_empty(), "{name}: no kernel call to time");
    for s in &steps {
        assert!(
            s.states.is_empty(),
            "{name}: stateful operators are left out"
        );
    }
    let refs: Vec<&[u8]> = case.inputs.iter().map(Vec::as_slice).collect();
    // The pipeline's own executor, checked against the bundle's golden (TFLM's).
    let tensors = kiln_build::exec::run(&graph, &steps, &refs);
    assert_eq!(graph.outputs.len(), case.outputs.len(), "{name}: outputs");
    for (i, (&t, want)) in graph.outputs.iter().zip(&case.outputs).enumerate() {
        assert_eq!(
            tensors[t.0].bytes(),
            want.as_slice(),
            "{name}: Kiln's output {i} differs from TFLM's"
        );
    }
    // The timed calls: each step writes its own buffers (cleared here), reading the others'
    // results from `tensors`.
    let zeroed = |id: kiln_planner::ir::TensorId| {
        let mut b = tensors[id.0].clone();
        b.bytes_mut().fill(0);
        b
    };
    let mut outs: Vec<(Buffer, Vec<Buffer>)> = steps
        .iter()
        .map(|s| {
            (
                zeroed(s.outputs[0]),
                s.outputs[1..].iter().map(|&o| zeroed(o)).collect(),
            )
        })
        .collect();
    call(&steps, &tensors, &mut outs);
    for (s, (out, more)) in steps.iter().zip(&outs) {
        for (&id, b) in s.outputs.iter().zip(std::iter::once(out).chain(more)) {
            assert_eq!(
                b.bytes(),
                tensors[id.0].bytes(),
                "{name}: the timed call differs from exec::run"
            );
        }
    }
    Row {
        name,
        meta: r.clone(),
        steps,
        tensors,
        outs,
        batch: 0,
        times: Vec::new(),
        ratios: Vec::new(),
        floor_batch: 0,
        floors: Vec::new(),
        floor: 0.0,
    }
}

fn main() {
    let t0 = std::time::Instant::now();
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("benches/operators.json")).unwrap(),
    )
    .unwrap();
    let only: Option<Vec<String>> = std::env::var("KILN_BENCH_ROWS")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    let wanted = |r: &&serde_json::Value| {
        only.as_ref().is_none_or(|o| {
            let name = r["name"].as_str().unwrap();
            o.iter().any(|p| name.starts_with(p.as_str()))
        })
    };
    let mut rows: Vec<Row> = manifest["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(wanted)
        .map(prepare)
        .collect();
    eprintln!("starting TFLM: tools/bench_operators.py time --serve");
    let mut server = Tflm::start("bench_operators.py", &["time", "--serve"]);
    // Round by round through all rows; in each, a row's Kiln batches are timed right before
    // its TFLM rounds, and their medians give one ratio.
    for _ in 0..ROUNDS {
        for r in &mut rows {
            let (steps, tensors, outs) = (&r.steps, &r.tensors, &mut r.outs);
            let mut f = || call(black_box(steps), black_box(tensors), black_box(&mut *outs));
            if r.batch == 0 {
                for _ in 0..3 {
                    f();
                }
                r.batch = batch_size(&mut f, BATCH_S);
            }
            let mut kiln: Vec<f64> = (0..KILN_BATCHES)
                .map(|_| batch_mean(&mut f, r.batch))
                .collect();
            r.times.extend_from_slice(&kiln);
            let kiln = median(&mut kiln) * 1e6;
            let mut g =
                || executor_floor(black_box(steps), black_box(tensors), black_box(&mut *outs));
            if r.floor_batch == 0 {
                r.floor_batch = batch_size(&mut g, BATCH_S);
            }
            for _ in 0..FLOOR_BATCHES {
                r.floors.push(batch_mean(&mut g, r.floor_batch));
            }
            let line = format!("rounds {} {TFLM_BATCHES}", r.name);
            let ratios = &mut r.ratios;
            with_tflm(&mut server, |t| {
                ratios.push(kiln / t.request_value(&line)?);
                Ok(())
            });
        }
    }
    let tflm = server.and_then(Tflm::finish);
    for r in &mut rows {
        r.floor = median(&mut r.floors) * 1e6;
    }
    if let Err(e) = &tflm {
        eprintln!("no TFLM numbers: {e}");
    }
    /// A row's verdict from its per-round ratios.
    #[derive(Clone, Copy, PartialEq)]
    enum Verdict {
        /// Median ratio >= 1.00.
        Slower,
        /// Median below 1.00, upper quartile at or above.
        WithinNoise,
        Faster,
    }
    struct Line {
        cells: String,
        /// Median, lower and upper quartile, min and max of the per-round ratios.
        ratio: Option<[f64; 5]>,
        verdict: Option<Verdict>,
        net: Option<f64>,
        what: String,
        short: String,
        k: u64,
    }
    let mut lines = Vec::new();
    for r in &mut rows {
        let kiln = median(&mut r.times) * 1e6;
        let t = tflm.as_ref().ok().map(|j| {
            let x = &j["cases"][&r.name];
            (
                x["invoke_us"].as_f64().unwrap(),
                x["kernel_us"].as_f64().unwrap(),
                x["k"].as_u64().unwrap(),
            )
        });
        let s = |k: &str| r.meta[k].as_str().unwrap().to_string();
        let calls = if r.steps.len() > 1 {
            format!(" ({} calls)", r.steps.len())
        } else {
            String::new()
        };
        let ratio = (t.is_some() && r.ratios.len() == ROUNDS).then(|| {
            let v = &mut r.ratios;
            [
                quantile(v, 0.5),
                quantile(v, 0.25),
                quantile(v, 0.75),
                quantile(v, 0.0),
                quantile(v, 1.0),
            ]
        });
        let verdict = ratio.map(|[m, _, q3, _, _]| {
            if m >= 1.0 {
                Verdict::Slower
            } else if q3 >= 1.0 {
                Verdict::WithinNoise
            } else {
                Verdict::Faster
            }
        });
        let (tf, net, inv) = match t {
            Some((inv, kern, _)) => (us(kern), Some((kiln - r.floor) / kern), us(inv)),
            None => ("n/a".into(), None, "n/a".into()),
        };
        let (rc, spread) = match (ratio, verdict) {
            (Some([m, q1, q3, lo, hi]), Some(v)) => (
                format!(
                    "{m:.2}{}",
                    match v {
                        Verdict::Slower => " **slower**",
                        Verdict::WithinNoise => " *within noise*",
                        Verdict::Faster => "",
                    }
                ),
                format!("{q1:.2}–{q3:.2} ({lo:.2}–{hi:.2})"),
            ),
            _ => ("n/a".into(), "n/a".into()),
        };
        eprintln!(
            "{:36} Kiln {:>9} us  TFLM kernel {:>9} us  {rc}  [{spread}]",
            r.name,
            us(kiln),
            tf
        );
        let m = ratio.map_or(f64::NAN, |x| x[0]);
        lines.push(Line {
            cells: format!(
                "| {} | {} | {} | {} | {} | {tf} | {}{calls} | {} | {rc} | {spread} | {inv} |\n",
                s("op"),
                s("types"),
                s("shape"),
                r.meta["io_bytes"],
                s("name"),
                us(kiln),
                us(r.floor),
            ),
            ratio,
            verdict,
            net,
            what: format!(
                "{} {} ({}): {m:.2} (Kiln {} µs, TFLM {tf} µs)",
                s("op"),
                s("types"),
                s("shape"),
                us(kiln)
            ),
            short: format!(
                "{} {m:.2} ({:.2}–{:.2})",
                s("name"),
                ratio.map_or(f64::NAN, |x| x[1]),
                ratio.map_or(f64::NAN, |x| x[2])
            ),
            k: t.map_or(0, |t| t.2),
        });
    }
    let mut table = String::from(
        "| op | types | shapes (inputs → outputs) | I/O bytes | bundle | TFLM µs | Kiln µs | \
         of which executor µs | Kiln / TFLM | per round: q1–q3 (min–max) | TFLM invoke µs |\n\
         |---|---|---|--:|---|--:|--:|--:|--:|--:|--:|\n",
    );
    for l in &lines {
        table.push_str(&l.cells);
    }
    let median_of = |l: &&Line| l.ratio.unwrap()[0];
    let q3_of = |l: &&Line| l.ratio.unwrap()[2];
    let mut slower: Vec<&Line> = lines
        .iter()
        .filter(|l| l.verdict == Some(Verdict::Slower))
        .collect();
    slower.sort_by(|a, b| median_of(b).total_cmp(&median_of(a)));
    let mut noise: Vec<&Line> = lines
        .iter()
        .filter(|l| l.verdict == Some(Verdict::WithinNoise))
        .collect();
    noise.sort_by(|a, b| q3_of(b).total_cmp(&q3_of(a)));
    let mut ratios: Vec<f64> = lines.iter().filter_map(|l| l.ratio.map(|x| x[0])).collect();
    let largest = |i: usize| {
        lines
            .iter()
            .filter_map(|l| l.ratio.map(|x| x[i]))
            .fold(0.0, f64::max)
    };
    let (largest_median, largest_q3, largest_max) = (largest(0), largest(2), largest(4));
    let ks = lines.iter().filter(|l| l.ratio.is_some()).map(|l| l.k);
    let k_range = (ks.clone().min().unwrap_or(0), ks.max().unwrap_or(0));
    let tflm_text = match &tflm {
        Ok(j) => format!(
            "TFLM = the pinned PyPI tflite-micro {} (its reference kernels, as built in the \
             wheel), timed by `tools/bench_operators.py time --serve` in the same run on the \
             same model and inputs, after checking that it still produces the golden outputs: \
             TFLM µs is the operator alone, from a second model holding K copies of the \
             operator (K = {}–{}, the copies take about 0.5 ms; same inputs and constants, own \
             outputs, each checked against the golden), (t_K − t_1)/(K − 1) per TFLM round (a \
             batch of about 1 ms of each model), median over {} rounds ({TFLM_BATCHES} right \
             after each of Kiln's rounds of the same row), which removes Python's and the \
             interpreter's per-invoke cost; TFLM invoke µs is the whole `invoke()` of the \
             one-operator model from Python, for reference (`invoke()` of a model without \
             operators takes {} µs in this run).",
            j["tflite_micro"].as_str().unwrap_or("?"),
            k_range.0,
            k_range.1,
            ROUNDS * TFLM_BATCHES,
            us(j["empty_invoke_us"].as_f64().unwrap_or(f64::NAN)),
        ),
        Err(e) => format!("**No TFLM numbers in this run: {e}.** Kiln's numbers only."),
    };
    let mut verdict = String::new();
    if tflm.is_ok() {
        let names = |ls: &[&Line]| {
            if ls.is_empty() {
                "none".to_string()
            } else {
                ls.iter()
                    .map(|l| l.short.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        let noise_text = format!(
            "**{} more rows within noise** (median below 1.00, upper quartile at or above: \
             Kiln may be slower there), largest upper quartile first: {}",
            noise.len(),
            names(&noise),
        );
        verdict = if slower.is_empty() {
            format!(
                "Kiln is not slower than TFLM on any of the {} rows (every median per-round \
                 ratio below 1.00; median over all rows {:.2}, largest {largest_median:.2}); \
                 {noise_text}. Largest upper quartile {largest_q3:.2}, largest single round \
                 {largest_max:.2}.",
                lines.len(),
                median(&mut ratios),
            )
        } else {
            let much: Vec<&str> = slower
                .iter()
                .filter(|l| median_of(l) > 1.5)
                .map(|l| l.what.as_str())
                .collect();
            let still: Vec<String> = slower
                .iter()
                .filter_map(|l| {
                    let net = l.net.filter(|&x| x >= 1.0)?;
                    Some(format!(
                        "{} {net:.2}",
                        l.short.split(' ').next().unwrap_or("")
                    ))
                })
                .collect();
            format!(
                "**Kiln is slower than TFLM on {} of the {} rows** (median per-round ratio at \
                 or above 1.00; median over all rows {:.2}), worst first: {}; {noise_text}. \
                 Slower by more than 1.5×: {}. With the host executor's own share (column \
                 \"of which executor µs\") taken off Kiln's median time, {} of the slower rows \
                 {} at or above 1.00 (ratio of medians): {}.",
                slower.len(),
                lines.len(),
                median(&mut ratios),
                names(&slower),
                if much.is_empty() {
                    "none".into()
                } else {
                    much.join("; ")
                },
                still.len(),
                if still.len() == 1 { "stays" } else { "stay" },
                if still.is_empty() {
                    "none".into()
                } else {
                    still.join(", ")
                },
            )
        };
        verdict.push_str("\n\n");
    }
    let left_out = manifest["stateful_left_out"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let body = format!(
        "## Kernels: the newer operators\n\n\
         Written by `cargo bench --bench operators` (release profile). One row per kernel-case \
         bundle (`tests/kernel_cases/`) of the operators and types added after the Kernels table \
         (every bundle not in its first set, listed in `tools/bench_operators.py`; new types of \
         older operators count as new; left out: the stateful {left_out}, whose K copies would \
         share one state). Each row is the bundle's case with the most input + output bytes, \
         with its own inputs (`benches/operators.json`, made by `tools/bench_operators.py \
         select`). These cases are small (a few hundred bytes), so **per-call cost dominates \
         both columns**: they compare the fixed cost of one operator call (argument handling, \
         loop setup) more than throughput. Kiln µs = the lowered kernel call(s) \
         (`kiln_build::lower::lower`, parameters from the kernels' `prepare*`) on prepared \
         buffers, median over {} batches of about 1 ms (mean per call in a batch; after \
         warm-up), in {CLOCK}, on both sides; \
         before timing, the output of `kiln_build::exec::run` and of the timed call must equal \
         the bundle's golden output byte for byte (float32 too). The kernel is called with \
         runtime parameters through the host executor's dispatch (`Kernel::run`, entered by \
         `kiln_build::exec::run_step`, or `run_step_outputs` for several outputs); generated \
         code calls it directly with constants. \
         Of which executor µs = an upper estimate of the host executor's own share of that \
         call (collecting every operand slice for `Kernel::run`, and for several outputs the \
         output slices, each in an array of 8 or a `Vec` beyond; the executor itself now \
         looks each operand up only when the kernel reads it, which costs less; timed \
         right after Kiln's batches in each round, median of {} batches; rough, and \
         it can come out a little above Kiln µs): generated \
         code has none of it, but it is counted in Kiln µs and in the ratio. {tflm_text}\n\n\
         **Noise-aware verdict.** Each row is timed in {ROUNDS} rounds, one per pass through \
         all rows (so a row's rounds are spread over the whole run): in a round, \
         {KILN_BATCHES} batches of Kiln, then {TFLM_BATCHES} TFLM rounds, back to back, and the \
         round's ratio is the median of its Kiln batches over the median of its TFLM rounds \
         (both sides measured within a few ms of each other, so a load change between rounds \
         moves both). Kiln / TFLM = the median of the {ROUNDS} per-round ratios (< 1 means \
         Kiln is faster); per round = their lower and upper quartiles (q1–q3, linear \
         interpolation) and their minimum and maximum. A row is **slower** when its median \
         ratio is at or above 1.00, and *within noise* when the median is below 1.00 but the \
         upper quartile reaches 1.00 (Kiln was at least as slow in a quarter of the rounds); \
         the summary counts both, and a claim \"not slower\" holds only for rows whose upper \
         quartile stays below 1.00.\n\n\
         Machine: {}. One run (this benchmark took {:.0} s); the 2 cores are \
         shared with other builds, so single rows can be off by tens of percent, and rows \
         below 0.1 µs by more.\n\n{verdict}{table}\n",
        ROUNDS * KILN_BATCHES,
        ROUNDS * FLOOR_BATCHES,
        machine(),
        t0.elapsed().as_secs_f64(),
    );
    if only.is_some() {
        eprintln!("KILN_BENCH_ROWS is set: BENCHMARKS.md left as it is");
        return;
    }
    write_section("kernels-new", &body);
    print!("{body}");
}
