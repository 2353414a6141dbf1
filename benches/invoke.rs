//! Host invoke benchmark: writes the `invoke` section of BENCHMARKS.md.
//!
//! `cargo bench --bench invoke`
//!
//! Every public model Kiln compiles (the list of `tests/e2e_shared.rs`) is compiled here with
//! `kiln::include_model!`; its outputs for golden sample 1 must equal TFLM's, then `invoke()`
//! is timed. TFLM's time for the same models is measured in the same run by
//! `tools/bench_tflm_invoke.py --serve` (the pinned tflite-micro in `.venv/`), whose calls
//! alternate with Kiln's; without the venv the benchmark says so and writes Kiln's numbers
//! only.

mod common;

use common::{
    CLOCK, Tflm, batch_mean, batch_size, machine, median, shared, us, with_tflm, write_section,
};
use std::hint::black_box;

macro_rules! models {
    ($($m:ident: $file:literal, $stem:literal;)*) => {
        $(mod $m {
            kiln::include_model!($file);
        })*

        /// Every compiled model, checked against its golden sample and ready to time.
        fn benches() -> Vec<Bench> {
            vec![$({
                let mut model = $m::Model::take().expect("taken once");
                let (inputs, outputs) = golden($stem);
                assert_eq!(inputs.len(), $m::INPUTS, "{}", $stem);
                assert_eq!(outputs.len(), $m::OUTPUTS, "{}", $stem);
                model.reset();
                for (i, b) in inputs.iter().enumerate() {
                    model.input_bytes_mut(i).copy_from_slice(b);
                }
                model.invoke();
                for (i, want) in outputs.iter().enumerate() {
                    assert!(
                        model.output_bytes(i) == want.as_slice(),
                        "{}: output {i} differs from TFLM's golden output",
                        $stem
                    );
                }
                Bench {
                    stem: $stem,
                    arena: $m::ARENA_BYTES,
                    // Reset, write the sample's inputs and (if asked) invoke, as the Python
                    // script does.
                    call: Box::new(move |invoke: bool| {
                        model.reset();
                        for (i, b) in inputs.iter().enumerate() {
                            model.input_bytes_mut(i).copy_from_slice(black_box(b));
                        }
                        if invoke {
                            model.invoke();
                        }
                    }),
                    n: 0,
                    times: Vec::new(),
                }
            }),*]
        }
    };
}

models! {
    hello_world_int8: "../../shared/models/tflm_hello_world_int8.tflite", "tflm_hello_world_int8";
    hello_world_float: "../../shared/models/tflm_hello_world_float.tflite", "tflm_hello_world_float";
    person_detect: "../../shared/models/tflm_person_detect_int8.tflite", "tflm_person_detect_int8";
    vww: "../../shared/models/mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite", "mlperf_tiny_vww_mobilenetv1_025_96_int8";
    kws_dscnn: "../../shared/models/mlperf_tiny_kws_dscnn_int8.tflite", "mlperf_tiny_kws_dscnn_int8";
    ic_resnet8: "../../shared/models/mlperf_tiny_ic_resnet8_int8.tflite", "mlperf_tiny_ic_resnet8_int8";
    ad_autoencoder: "../../shared/models/mlperf_tiny_ad_autoencoder_int8.tflite", "mlperf_tiny_ad_autoencoder_int8";
    micro_speech: "../../shared/models/tflm_micro_speech_int8.tflite", "tflm_micro_speech_int8";
    simple_add: "../../shared/models/tflm_simple_add.tflite", "tflm_simple_add";
    sww: "../../shared/models/mlperf_tiny_sww_int8.tflite", "mlperf_tiny_sww_int8";
    mnist_lstm: "../../shared/models/tflm_mnist_lstm_int8.tflite", "tflm_mnist_lstm_int8";
    dtln: "../../shared/models/tflm_dtln_noise_suppression.tflite", "tflm_dtln_noise_suppression";
}

const ROUNDS: usize = 30;
const PASSES: usize = 5;
const BATCH_S: f64 = 0.002;

struct Bench {
    stem: &'static str,
    arena: usize,
    call: Box<dyn FnMut(bool)>,
    /// Calls per batch.
    n: usize,
    /// Per round: seconds per invoke.
    times: Vec<f64>,
}

impl Bench {
    /// `k` rounds: a batch of n (reset, inputs, invoke) minus a batch of n (reset, inputs).
    fn rounds(&mut self, k: usize) {
        let call = &mut self.call;
        for _ in 0..k {
            let a = batch_mean(&mut || call(true), self.n);
            let b = batch_mean(&mut || call(false), self.n);
            self.times.push(a - b);
        }
    }
}

/// Inputs and outputs of sample 1 of `../shared/models/golden/<stem>`.
fn golden(stem: &str) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let dir = shared().join("models/golden").join(stem);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("golden.json")).unwrap()).unwrap();
    let s = &json["samples"][0];
    let read = |v: &serde_json::Value| -> Vec<Vec<u8>> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|f| std::fs::read(dir.join(f.as_str().unwrap())).unwrap())
            .collect()
    };
    (read(&s["inputs"]), read(&s["outputs"]))
}

/// The `shared-arena` section: person detection and keyword spotting, run one after another
/// over one buffer of the caller's (`ModelIn::with_arena`), each checked against TFLM's golden
/// output on every run.
fn shared_arena() -> String {
    const SHARED: usize = kiln::max(person_detect::ARENA_BYTES, kws_dscnn::ARENA_BYTES);
    let mut buf = Box::new(kiln::Aligned::<kiln::align::A16, SHARED>::new());
    let (pd_in, pd_out) = golden("tflm_person_detect_int8");
    let (kws_in, kws_out) = golden("mlperf_tiny_kws_dscnn_int8");
    for round in 0..3 {
        let mut pd = person_detect::ModelIn::with_arena(&mut buf);
        pd.input_bytes_mut(0).copy_from_slice(&pd_in[0]);
        pd.invoke();
        assert!(
            pd.output_bytes(0) == pd_out[0].as_slice(),
            "person_detect, round {round}"
        );
        let mut kws = kws_dscnn::ModelIn::with_arena(&mut buf);
        kws.input_bytes_mut(0).copy_from_slice(&kws_in[0]);
        kws.invoke();
        assert!(
            kws.output_bytes(0) == kws_out[0].as_slice(),
            "kws_dscnn, round {round}"
        );
    }
    let (a, b) = (person_detect::ARENA_BYTES, kws_dscnn::ARENA_BYTES);
    format!(
        "## Two models, one arena\n\n\
         Written by `cargo bench --bench invoke`. Person detection and keyword spotting run one \
         after another, three times each, over one buffer the application owns \
         (`kiln::Aligned<A16, {{ kiln::max(person_detect::ARENA_BYTES, kws_dscnn::ARENA_BYTES) }}>`, \
         `ModelIn::with_arena`); every run's output equals TFLM's golden output byte for byte \
         (sample 1 of each model), whatever the other model left in the bytes. With \
         `Model::take()` each model has its own static arena, so the RAM is the sum.\n\n\
         | models | person_detect arena B | kws_dscnn arena B | two static arenas B | one shared arena B | saved B |\n\
         |---|--:|--:|--:|--:|--:|\n\
         | tflm_person_detect_int8 + mlperf_tiny_kws_dscnn_int8 | {a} | {b} | {} | {SHARED} | {} |\n",
        a + b,
        a + b - SHARED
    )
}

fn main() {
    let shared_section = shared_arena();
    write_section("shared-arena", &shared_section);
    print!("{shared_section}");
    let mut benches = benches();
    let stems: Vec<&str> = benches.iter().map(|b| b.stem).collect();
    let passes = PASSES.to_string();
    let mut args = vec!["--serve", "--passes", &passes];
    args.extend(&stems);
    eprintln!("starting TFLM: tools/bench_tflm_invoke.py --serve ...");
    let mut server = Tflm::start("bench_tflm_invoke.py", &args);
    // ROUNDS rounds per model spread over PASSES passes through all models (the same rule
    // as the Python script); each slice of Kiln's rounds is followed by the same slice of
    // TFLM's (interleaved in time, so that the load of the shared machine affects both alike).
    for b in &mut benches {
        for _ in 0..3 {
            (b.call)(true);
        }
        let call = &mut b.call;
        b.n = batch_size(&mut || call(true), BATCH_S);
    }
    for p in 0..PASSES {
        for b in &mut benches {
            b.rounds(ROUNDS * (p + 1) / PASSES - ROUNDS * p / PASSES);
            let line = format!("part {} {p}", b.stem);
            with_tflm(&mut server, |t| t.request(&line));
        }
    }
    let tflm = server.and_then(Tflm::finish);
    if let Err(e) = &tflm {
        eprintln!("no TFLM numbers: {e}");
    }
    let mut table = String::from(
        "| model | ops | Kiln arena B | TFLM µs | Kiln µs | Kiln / TFLM | Kiln / (TFLM − empty invoke) |\n\
         |---|--:|--:|--:|--:|--:|--:|\n",
    );
    let floor = tflm
        .as_ref()
        .ok()
        .and_then(|j| j["empty_invoke_us"].as_f64());
    let mut slower = Vec::new();
    let mut parity = Vec::new();
    for b in &mut benches {
        let kiln = median(&mut b.times) * 1e6;
        let bytes =
            std::fs::read(shared().join("models").join(format!("{}.tflite", b.stem))).unwrap();
        let ops = kiln_planner::read_model(&bytes).unwrap().ops.len();
        let t = tflm
            .as_ref()
            .ok()
            .and_then(|j| j["models"][b.stem]["invoke_us"].as_f64());
        let (tf, ratio, net) = match t {
            Some(t) => {
                let net = floor
                    .filter(|&f| t > f)
                    .map_or(f64::NAN, |f| kiln / (t - f));
                if kiln / t > 1.0 || net > 1.0 {
                    slower.push(format!("{} ({:.2})", b.stem, net.max(kiln / t)));
                } else if net > 0.9 {
                    parity.push(format!("{} ({net:.2})", b.stem));
                }
                (us(t), format!("{:.3}", kiln / t), format!("{net:.3}"))
            }
            None => ("n/a".into(), "n/a".into(), "n/a".into()),
        };
        eprintln!("{:42} Kiln {:>10} us  TFLM {:>10} us", b.stem, us(kiln), tf);
        table.push_str(&format!(
            "| {} | {ops} | {} | {tf} | {} | {ratio} | {net} |\n",
            b.stem,
            b.arena,
            us(kiln)
        ));
    }
    let tflm_text = match &tflm {
        Ok(j) => format!(
            "TFLM µs = the pinned PyPI tflite-micro {} (reference kernels as built in the \
             wheel) running the same model, timed in the same run by \
             `tools/bench_tflm_invoke.py --serve` the same way (same clock, batches, rounds and \
             statistic; each slice of TFLM's rounds right after Kiln's slice for the same \
             model); it includes the cost of calling `invoke()` from Python: `invoke()` of a \
             model without operators takes {} µs in this run (last column: the ratio with that \
             floor subtracted from TFLM's time, which favours TFLM).",
            j["tflite_micro"].as_str().unwrap_or("?"),
            us(floor.unwrap_or(f64::NAN))
        ),
        Err(e) => format!("**No TFLM numbers in this run: {e}.** Kiln's numbers only."),
    };
    let mut verdict = match (&tflm, slower.is_empty()) {
        (Err(_), _) => String::new(),
        (Ok(_), true) => "Kiln / TFLM < 1 on every model, also with the empty-invoke floor \
                          subtracted."
            .to_string(),
        (Ok(_), false) => format!("**Kiln is slower than TFLM on: {}.**", slower.join(", ")),
    };
    if !parity.is_empty() {
        verdict.push_str(&format!(
            " Within 10 % of TFLM (parity within this machine's noise): {}.",
            parity.join(", ")
        ));
    }
    if !verdict.is_empty() {
        verdict.push_str("\n\n");
    }
    let body = format!(
        "## Host invoke\n\n\
         Written by `cargo bench --bench invoke` (release profile). Each public model Kiln \
         compiles is compiled into the benchmark with `kiln::include_model!`; golden sample 1 \
         (`../shared/models/golden/<model>/`) must give TFLM's outputs byte for byte. Each \
         round times, in {CLOCK}, a batch of n × (`reset()`, write that sample's inputs, \
         `invoke()`) and a batch of n × (`reset()`, write the inputs), n = about 2 ms of calls \
         (at least 1); µs = median over {ROUNDS} rounds of the difference / n, i.e. one \
         `invoke()` on the same inputs every time, without the set-up or the clock's cost. \
         The rounds are spread over {PASSES} passes through all models. {tflm_text} \
         Kiln / TFLM < 1 means Kiln is faster.\n\n\
         Machine: {}. Medians from one run; the 2 cores are shared with other builds, so \
         single rows can be off by tens of percent.\n\n{verdict}{table}\n",
        machine()
    );
    write_section("invoke", &body);
    print!("{body}");
}
