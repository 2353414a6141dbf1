//! Host invoke benchmark: writes the `invoke` section of BENCHMARKS.md.
//!
//! `cargo bench --bench invoke`
//!
//! Every public model Kiln compiles (the list of `tests/e2e_shared.rs`) is compiled here with
//! `kiln::include_model!`; its outputs for golden sample 1 must equal TFLM's, then `invoke()`
//! is timed. So is every multi-subgraph model of `tests/control_flow/` (IF, WHILE, CALL_ONCE
//! with resource variables), on the inputs of its golden's first call (checked against that
//! call's outputs, and the golden's first call after a `reset()` against its outputs). TFLM's
//! time for the same models is measured in the same run by `tools/bench_tflm_invoke.py
//! --serve` (the pinned tflite-micro in `.venv/`), whose calls alternate with Kiln's, and the
//! outputs of a timed call of each must be equal; without the venv the benchmark says so and
//! writes Kiln's numbers only. The real-world models (`../shared/models/realworld/`, golden
//! sample 1 of `tests/realworld/<stem>/`) get a section of their own (`realworld`): arena
//! against TFLM's minimal arena (`tools/data/tflm_arena.json`), weights, code on the Cortex-M4
//! (`tools/data/firmware.json`, written by `tools/firmware_bench.py`) and host time.

mod common;

use common::{
    CLOCK, Tflm, batch_mean, batch_size, machine, median, root, shared, us, with_tflm,
    write_section,
};
use std::hint::black_box;

/// Where a model and its reference data come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `../shared/models/<stem>.tflite`, golden sample 1 of `../shared/models/golden/<stem>/`.
    Public,
    /// `tests/control_flow/<stem>.tflite`, the first call of `tests/control_flow/<stem>.json`.
    ControlFlow,
    /// `../shared/models/realworld/<stem>.tflite`, golden sample 1 of `tests/realworld/<stem>/`.
    RealWorld,
}

/// What a bench's closure does.
#[derive(Clone, Copy)]
enum Step {
    /// `reset()` and write the inputs.
    SetUp,
    /// `reset()`, write the inputs and `invoke()`.
    Invoke,
    /// Return the outputs' bytes (nothing else).
    Outputs,
}

macro_rules! models {
    ($($m:ident: $kind:ident $file:literal, $stem:literal;)*) => {
        $(mod $m {
            kiln::include_model!($file);
        })*

        /// Every compiled model, checked against its reference data and ready to time.
        fn benches() -> Vec<Bench> {
            vec![$({
                let kind = Kind::$kind;
                let mut model = $m::Model::take().expect("taken once");
                let r = reference(kind, $stem);
                assert_eq!(r.inputs.len(), $m::INPUTS, "{}", $stem);
                assert_eq!(r.outputs.len(), $m::OUTPUTS, "{}", $stem);
                // The public goldens reset the state before each sample; a control-flow
                // golden's first call is on a fresh interpreter (as `take()`'s model is),
                // its later calls follow the protocol of `tests/control_flow/README.md`.
                let mut checks = vec![(kind != Kind::ControlFlow, "the golden", &r.inputs, &r.outputs)];
                if let Some((xs, ys)) = &r.after_reset {
                    checks.push((true, "the golden's first call after reset()", xs, ys));
                }
                for (reset, what, xs, ys) in checks {
                    if reset {
                        model.reset();
                    }
                    for (i, b) in xs.iter().enumerate() {
                        model.input_bytes_mut(i).copy_from_slice(b);
                    }
                    model.invoke();
                    for (i, want) in ys.iter().enumerate() {
                        assert!(
                            model.output_bytes(i) == want.as_slice(),
                            "{}: output {i} differs from TFLM's golden output ({what})",
                            $stem
                        );
                    }
                }
                let inputs = r.inputs;
                Bench {
                    stem: $stem,
                    kind,
                    note: r.note,
                    arena: $m::ARENA_BYTES,
                    persistent: $m::PERSISTENT_BYTES,
                    weights: $m::WEIGHTS_BYTES,
                    // Reset, write the sample's inputs and (if asked) invoke, as the Python
                    // script does.
                    call: Box::new(move |step: Step| {
                        if let Step::Outputs = step {
                            return (0..$m::OUTPUTS)
                                .map(|i| model.output_bytes(i).to_vec())
                                .collect();
                        }
                        model.reset();
                        for (i, b) in inputs.iter().enumerate() {
                            model.input_bytes_mut(i).copy_from_slice(black_box(b));
                        }
                        if let Step::Invoke = step {
                            model.invoke();
                        }
                        Vec::new()
                    }),
                    n: 0,
                    times: Vec::new(),
                }
            }),*]
        }
    };
}

models! {
    hello_world_int8: Public "../../shared/models/tflm_hello_world_int8.tflite", "tflm_hello_world_int8";
    hello_world_float: Public "../../shared/models/tflm_hello_world_float.tflite", "tflm_hello_world_float";
    person_detect: Public "../../shared/models/tflm_person_detect_int8.tflite", "tflm_person_detect_int8";
    vww: Public "../../shared/models/mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite", "mlperf_tiny_vww_mobilenetv1_025_96_int8";
    kws_dscnn: Public "../../shared/models/mlperf_tiny_kws_dscnn_int8.tflite", "mlperf_tiny_kws_dscnn_int8";
    ic_resnet8: Public "../../shared/models/mlperf_tiny_ic_resnet8_int8.tflite", "mlperf_tiny_ic_resnet8_int8";
    ad_autoencoder: Public "../../shared/models/mlperf_tiny_ad_autoencoder_int8.tflite", "mlperf_tiny_ad_autoencoder_int8";
    micro_speech: Public "../../shared/models/tflm_micro_speech_int8.tflite", "tflm_micro_speech_int8";
    simple_add: Public "../../shared/models/tflm_simple_add.tflite", "tflm_simple_add";
    sww: Public "../../shared/models/mlperf_tiny_sww_int8.tflite", "mlperf_tiny_sww_int8";
    mnist_lstm: Public "../../shared/models/tflm_mnist_lstm_int8.tflite", "tflm_mnist_lstm_int8";
    dtln: Public "../../shared/models/tflm_dtln_noise_suppression.tflite", "tflm_dtln_noise_suppression";
    audio_preprocessor: Public "../../shared/models/tflm_audio_preprocessor_int8.tflite", "tflm_audio_preprocessor_int8";
    if_float: ControlFlow "../tests/control_flow/if_float.tflite", "if_float";
    if_int8: ControlFlow "../tests/control_flow/if_int8.tflite", "if_int8";
    if_int8_direct: ControlFlow "../tests/control_flow/if_int8_direct.tflite", "if_int8_direct";
    while_counted: ControlFlow "../tests/control_flow/while_counted.tflite", "while_counted";
    while_data: ControlFlow "../tests/control_flow/while_data.tflite", "while_data";
    while_int8: ControlFlow "../tests/control_flow/while_int8.tflite", "while_int8";
    while_if_float: ControlFlow "../tests/control_flow/while_if_float.tflite", "while_if_float";
    call_once_var: ControlFlow "../tests/control_flow/call_once_var.tflite", "call_once_var";
    call_once_var_float: ControlFlow "../tests/control_flow/call_once_var_float.tflite", "call_once_var_float";
    var_read_first_int8: ControlFlow "../tests/control_flow/var_read_first_int8.tflite", "var_read_first_int8";
    rw_anomaly_detection: RealWorld "../../shared/models/realworld/siliconlabs_anomaly_detection.tflite", "siliconlabs_anomaly_detection";
    rw_fingerprint: RealWorld "../../shared/models/realworld/siliconlabs_fingerprint_signature_generator.tflite", "siliconlabs_fingerprint_signature_generator";
    rw_image_example1: RealWorld "../../shared/models/realworld/siliconlabs_image_example1.tflite", "siliconlabs_image_example1";
    rw_kws_on_off_v3: RealWorld "../../shared/models/realworld/siliconlabs_keyword_spotting_on_off_v3.tflite", "siliconlabs_keyword_spotting_on_off_v3";
    rw_kws_pacman_v3: RealWorld "../../shared/models/realworld/siliconlabs_keyword_spotting_pacman_v3.tflite", "siliconlabs_keyword_spotting_pacman_v3";
    rw_rock_paper_scissors: RealWorld "../../shared/models/realworld/siliconlabs_rock_paper_scissors.tflite", "siliconlabs_rock_paper_scissors";
    rw_tflite_micro_speech: RealWorld "../../shared/models/realworld/siliconlabs_tflite_micro_speech.tflite", "siliconlabs_tflite_micro_speech";
    rw_blazeface: RealWorld "../../shared/models/realworld/openmv_blazeface_front_128.tflite", "openmv_blazeface_front_128";
    rw_movenet: RealWorld "../../shared/models/realworld/openmv_movenet_singlepose_192.tflite", "openmv_movenet_singlepose_192";
}

const ROUNDS: usize = 30;
const PASSES: usize = 5;
const BATCH_S: f64 = 0.002;

struct Bench {
    stem: &'static str,
    kind: Kind,
    /// What the timed call does (the control-flow golden's note on its first call).
    note: String,
    arena: usize,
    persistent: usize,
    weights: usize,
    call: Box<dyn FnMut(Step) -> Tensors>,
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
            let a = batch_mean(&mut || drop(call(Step::Invoke)), self.n);
            let b = batch_mean(&mut || drop(call(Step::SetUp)), self.n);
            self.times.push(a - b);
        }
    }

    /// The model's name for `tools/bench_tflm_invoke.py`.
    fn key(&self) -> String {
        match self.kind {
            Kind::Public => self.stem.to_string(),
            Kind::ControlFlow => format!("control_flow/{}", self.stem),
            Kind::RealWorld => format!("realworld/{}", self.stem),
        }
    }

    /// The model file.
    fn path(&self) -> std::path::PathBuf {
        match self.kind {
            Kind::Public => shared()
                .join("models")
                .join(format!("{}.tflite", self.stem)),
            Kind::ControlFlow => control_flow_dir().join(format!("{}.tflite", self.stem)),
            Kind::RealWorld => shared()
                .join("models/realworld")
                .join(format!("{}.tflite", self.stem)),
        }
    }
}

/// The bytes of a call's input or output tensors, in order.
type Tensors = Vec<Vec<u8>>;

/// A model's reference data: the timed call's inputs and TFLM's outputs for them, and (for
/// the control-flow models) the golden's first call after a `reset()`.
struct Reference {
    inputs: Tensors,
    outputs: Tensors,
    after_reset: Option<(Tensors, Tensors)>,
    note: String,
}

fn reference(kind: Kind, stem: &str) -> Reference {
    match kind {
        Kind::Public | Kind::RealWorld => {
            let dir = match kind {
                Kind::Public => shared().join("models/golden").join(stem),
                _ => root().join("tests/realworld").join(stem),
            };
            let (inputs, outputs) = golden_in(&dir);
            Reference {
                inputs,
                outputs,
                after_reset: None,
                note: String::new(),
            }
        }
        Kind::ControlFlow => control_flow_golden(stem),
    }
}

/// Inputs and outputs of sample 1 of `../shared/models/golden/<stem>`.
fn golden(stem: &str) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    golden_in(&shared().join("models/golden").join(stem))
}

/// Inputs and outputs of sample 1 of a golden directory.
fn golden_in(dir: &std::path::Path) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
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

fn control_flow_dir() -> std::path::PathBuf {
    root().join("tests/control_flow")
}

fn hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd number of hex digits");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn hex_list(v: &serde_json::Value) -> Tensors {
    v.as_array()
        .expect("a list of hex strings")
        .iter()
        .map(|x| hex(x.as_str().expect("hex")))
        .collect()
}

/// The first call of `tests/control_flow/<stem>.json` (on a fresh interpreter), and its first
/// call after a `reset()` (format: `tests/control_flow/README.md`).
fn control_flow_golden(stem: &str) -> Reference {
    let path = control_flow_dir().join(format!("{stem}.json"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let calls = json["calls"].as_array().expect("calls");
    let first = &calls[0];
    assert!(
        first["reset_before"].as_bool() != Some(true),
        "{stem}: the golden's first call follows a reset()"
    );
    let after = calls
        .iter()
        .find(|c| c["reset_before"].as_bool() == Some(true))
        .unwrap_or_else(|| panic!("{stem}: the golden has no call after a reset()"));
    Reference {
        inputs: hex_list(&first["inputs"]),
        outputs: hex_list(&first["outputs"]),
        after_reset: Some((hex_list(&after["inputs"]), hex_list(&after["outputs"]))),
        note: first["note"].as_str().unwrap_or("").to_string(),
    }
}

/// TFLM's arena head (x86-64, `print_allocations`) as recorded in the control-flow golden.
fn control_flow_tflm_head(stem: &str) -> Option<u64> {
    let path = control_flow_dir().join(format!("{stem}.json"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    json["arena"]["head"].as_u64()
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
    let keys: Vec<String> = benches.iter().map(Bench::key).collect();
    let passes = PASSES.to_string();
    let mut args = vec!["--serve", "--passes", &passes];
    args.extend(keys.iter().map(String::as_str));
    eprintln!("starting TFLM: tools/bench_tflm_invoke.py --serve ...");
    let mut server = Tflm::start("bench_tflm_invoke.py", &args);
    // ROUNDS rounds per model spread over PASSES passes through all models (the same rule
    // as the Python script); each slice of Kiln's rounds is followed by the same slice of
    // TFLM's (interleaved in time, so that the load of the shared machine affects both alike).
    for b in &mut benches {
        for _ in 0..3 {
            (b.call)(Step::Invoke);
        }
        let call = &mut b.call;
        b.n = batch_size(&mut || drop(call(Step::Invoke)), BATCH_S);
    }
    for p in 0..PASSES {
        for b in &mut benches {
            b.rounds(ROUNDS * (p + 1) / PASSES - ROUNDS * p / PASSES);
            let line = format!("part {} {p}", b.key());
            with_tflm(&mut server, |t| t.request(&line));
        }
    }
    let tflm = server.and_then(Tflm::finish);
    if let Err(e) = &tflm {
        eprintln!("no TFLM numbers: {e}");
    }
    // A timed call of Kiln's and of TFLM's compute the same outputs from the same state.
    if let Ok(j) = &tflm {
        for b in &mut benches {
            let key = b.key();
            let want = hex_list(&j["models"][&key]["timed_outputs"]);
            (b.call)(Step::Invoke);
            let got = (b.call)(Step::Outputs);
            assert!(
                got == want,
                "{key}: Kiln's outputs of a timed call differ from TFLM's"
            );
        }
    }
    let mut public = String::from(
        "| model | ops | Kiln arena B | Kiln persistent B | TFLM µs | Kiln µs | Kiln / TFLM | \
         Kiln / (TFLM − empty invoke) |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    let mut control = String::from(
        "| model | subgraphs | ops | timed call (golden's note) | Kiln arena B | \
         Kiln persistent B | TFLM arena head B (x86-64) | TFLM µs | Kiln µs | Kiln / TFLM | \
         Kiln / (TFLM − empty invoke) |\n\
         |---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    let mut realworld = String::from(
        "| model | ops | I/O | Kiln arena + persistent B | TFLM min arena B (x86-64) | \
         Kiln / TFLM arena | Kiln weights B | Kiln code B, M4 (Os / O3) | TFLM µs | Kiln µs | \
         Kiln / TFLM |\n\
         |---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    let arena_json = read_json("tools/data/tflm_arena.json");
    let firmware_json = read_json("tools/data/firmware.json");
    let floor = tflm
        .as_ref()
        .ok()
        .and_then(|j| j["empty_invoke_us"].as_f64());
    let mut slower = Vec::new();
    let mut parity = Vec::new();
    for b in &mut benches {
        let kiln = median(&mut b.times) * 1e6;
        let bytes = std::fs::read(b.path()).unwrap();
        let graph = kiln_planner::read_model(&bytes).unwrap();
        let ops = graph.ops.len() + graph.subgraphs.iter().map(|g| g.ops.len()).sum::<usize>();
        let t = tflm
            .as_ref()
            .ok()
            .and_then(|j| j["models"][b.key().as_str()]["invoke_us"].as_f64());
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
        eprintln!(
            "{:42} Kiln {:>10} us  TFLM {:>10} us",
            b.key(),
            us(kiln),
            tf
        );
        match b.kind {
            Kind::Public => public.push_str(&format!(
                "| {} | {ops} | {} | {} | {tf} | {} | {ratio} | {net} |\n",
                b.stem,
                b.arena,
                b.persistent,
                us(kiln)
            )),
            Kind::RealWorld => {
                let types = |ts: &[kiln_planner::ir::TensorId]| {
                    let t: Vec<String> = ts
                        .iter()
                        .map(|t| format!("{:?}", graph.tensors[t.0].dtype).to_lowercase())
                        .collect();
                    t.join(", ")
                };
                let kiln_ram = b.arena + b.persistent;
                let tflm_arena = arena_json[b.stem]["min_arena"].as_u64();
                let code = m4_code(&firmware_json, b.stem);
                realworld.push_str(&format!(
                    "| {} | {ops} | {} → {} | {kiln_ram} | {} | {} | {} | {code} | {tf} | {} | \
                     {ratio} |\n",
                    b.stem,
                    types(&graph.inputs),
                    types(&graph.outputs),
                    tflm_arena.map_or("n/a".into(), |a| a.to_string()),
                    tflm_arena.map_or("n/a".into(), |a| format!(
                        "{:.3}",
                        kiln_ram as f64 / a as f64
                    )),
                    b.weights,
                    us(kiln)
                ));
            }
            Kind::ControlFlow => control.push_str(&format!(
                "| {} | {} | {ops} | {} | {} | {} | {} | {tf} | {} | {ratio} | {net} |\n",
                b.stem,
                1 + graph.subgraphs.len(),
                // A `|` in the note (as in `max|x|`) would end the table cell.
                if b.note.is_empty() {
                    "-".to_string()
                } else {
                    b.note.replace('|', "\\|")
                },
                b.arena,
                b.persistent,
                control_flow_tflm_head(b.stem).map_or("n/a".into(), |h| h.to_string()),
                us(kiln)
            )),
        }
    }
    let tflm_text = match &tflm {
        Ok(j) => format!(
            "TFLM µs = the pinned PyPI tflite-micro {} (reference kernels as built in the \
             wheel) running the same model, timed in the same run by \
             `tools/bench_tflm_invoke.py --serve` the same way (same clock, batches, rounds and \
             statistic; each slice of TFLM's rounds right after Kiln's slice for the same \
             model), and the outputs of one more timed call of each are equal byte for byte; \
             it includes the cost of calling `invoke()` from Python: `invoke()` of a \
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
         State: every timed call starts from the state `reset()` leaves, the same in every \
         call and for Kiln and TFLM alike. That matters for the stateful models \
         (Kiln persistent B > 0, bytes of `State` besides the arena): the LSTM's and DTLN's \
         state, and the audio preprocessor's PCAN and spectral-subtraction noise estimates, \
         so its timed call is always the first frame after a reset.\n\n\
         Machine: {}. Medians from one run; the 2 cores are shared with other builds, so \
         single rows can be off by tens of percent.\n\n{verdict}{public}\n\
         ### Control-flow models\n\n\
         The multi-subgraph models of `tests/control_flow/` (IF, WHILE, CALL_ONCE with \
         resource variables; what each exercises: `tests/control_flow/README.md`), timed the \
         same way on the inputs of the first call of their TFLM golden \
         (`tests/control_flow/<model>.json`). Before timing, Kiln (from `Model::take()`) and \
         TFLM (a fresh interpreter) must give that call's outputs, then, after `reset()`, the \
         outputs of the golden's first call after a reset. Neither Kiln's `reset()` nor \
         TFLM's re-arms CALL_ONCE (its has-run byte is kept), so in every timed call \
         CALL_ONCE's init subgraph is skipped and the resource variables start from their \
         fill value (0, or the int8 zero point), in both; what is timed is subgraph 0 and the \
         subgraphs it runs (the IF branch or WHILE trips in the note column; \
         `while_counted`'s 5 trips every call). ops = operators over all subgraphs. Kiln \
         arena B = `ARENA_BYTES`, the maximum over the subgraphs active at the same time; \
         Kiln persistent B = `PERSISTENT_BYTES` (resource variables and CALL_ONCE's has-run \
         byte); TFLM arena head B = the wheel's planned non-persistent bytes from the golden \
         (64-bit pointers; TFLM keeps IF's copy buffers and the variables in its tail).\n\n\
         {control}\n",
        machine()
    );
    write_section("invoke", &body);
    print!("{body}");
    let rw = format!(
        "## Real-world models\n\n\
         Written by `cargo bench --bench invoke`, in the same run and the same way as Host \
         invoke. The models of `../shared/models/realworld/`, as their vendors ship them \
         (Silicon Labs MLTK, OpenMV; `SOURCES.md` there), each compiled by `include_model!` \
         with no options (Kiln's fastest plan); golden sample 1 of `tests/realworld/<model>/` \
         (TFLM's, `tools/gen_realworld_golden.py`) must give TFLM's outputs, float32 bit for \
         bit. *Kiln arena + persistent* = `ARENA_BYTES + PERSISTENT_BYTES`, all the RAM the \
         model needs besides the stack; *TFLM min arena* = the smallest `arena_size` the pinned \
         wheel runs the model with (`tools/tflm_arena.py`, x86-64: TFLM's persistent part is \
         smaller on a 32-bit core); *Kiln weights* = `WEIGHTS_BYTES` (flash the kernels read, \
         prepared tables included); *code* = the Cortex-M4 firmware's code without weights \
         (`tools/firmware_bench.py`, BENCHMARKS' firmware section; `-` where not measured). \
         {tflm_text}\n\n{realworld}\n"
    );
    write_section("realworld", &rw);
    print!("{rw}");
}

/// A JSON file of the repository, or `null` if it is missing.
fn read_json(path: &str) -> serde_json::Value {
    std::fs::read_to_string(root().join(path))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// The Cortex-M4 firmware's code bytes without weights at opt-levels s and 3, from
/// `tools/data/firmware.json` (`models.<stem>.m4.<opt>.code_bytes`).
fn m4_code(firmware: &serde_json::Value, stem: &str) -> String {
    let code = |opt: &str| {
        firmware["models"][stem]["m4"][opt]["code_bytes"]
            .as_u64()
            .map_or("-".to_string(), |c| c.to_string())
    };
    format!("{} / {}", code("s"), code("3"))
}
