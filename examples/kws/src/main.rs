//! Keyword spotting on a Cortex-M4 with Kiln: TFLM's micro_speech pipeline, both models
//! compiled into the firmware by `include_model!`, run one after the other over ONE buffer.
//!
//! - The audio preprocessor (`tflm_audio_preprocessor_int8`: 480 int16 samples in, 40 int8
//!   features out, built from TFLM's Signal operators) runs over 49 windows of the clip
//!   (30 ms at a stride of 20 ms, 16 kHz), its `State` (the noise estimates of spectral
//!   subtraction and PCAN) carried from window to window; window k gives feature row k.
//! - micro_speech (`tflm_micro_speech_int8`) then scores the 49x40 features: silence,
//!   unknown, yes, no.
//!
//! RAM: one static buffer of `max(ARENA_BYTES)` of the two models serves both
//! (`ModelIn::with_arena`), the preprocessor's state is its own (outside the buffer, it
//! outlives micro_speech's use of the bytes), and so are the features (the preprocessor's
//! outputs, collected while the buffer is reused). The firmware prints the top category,
//! whether the features and scores equal TFLM's (`golden/`, from `tools/gen_kws_golden.py`
//! with the pinned `tflite-micro` wheel), and the RAM used against an arena per model, over
//! semihosting; it exits 0 only when both are byte-identical.
//!
//! Run: `cargo run --release` (QEMU mps2-an386, see `.cargo/config.toml`). Instruction
//! counts: the semihosting argument `stop=N` exits (code 0) at stop point N: 1 = before the
//! first window, 2 = after the 49 preprocessor calls, 3 = after micro_speech; see
//! `README.md`.
#![no_std]
#![no_main]

mod harness;

use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use kiln::runtime::{
    Arena,
    align::{A4, A16},
    max,
};

use harness::{check_stop, exit};

mod preprocessor {
    kiln::include_model!("../../../../shared/models/tflm_audio_preprocessor_int8.tflite");
}
mod micro_speech {
    kiln::include_model!("../../../../shared/models/tflm_micro_speech_int8.tflite");
}

/// 30 ms windows of 16 kHz audio, 20 ms apart; 49 of them make the 1 s micro_speech sees.
const WINDOW: usize = 480;
const STRIDE: usize = 320;
const ROWS: usize = 49;
/// Features per window.
const ROW: usize = 40;
const FEATURE_BYTES: usize = ROWS * ROW;
/// micro_speech's categories, in the order of its scores.
const LABELS: [&str; 4] = ["silence", "unknown", "yes", "no"];

const _: () = {
    assert!(preprocessor::INPUT_SHAPE[1] == WINDOW && preprocessor::OUTPUT_SHAPE[0] == ROW);
    assert!(micro_speech::INPUT_SHAPE[1] == FEATURE_BYTES);
    assert!(micro_speech::OUTPUT_SHAPE[1] == LABELS.len());
    assert!((ROWS - 1) * STRIDE + WINDOW <= CLIP.len() / 2);
};

/// The one buffer both models run in: the larger of their arenas, not the sum.
const SHARED_BYTES: usize = max(preprocessor::ARENA_BYTES, micro_speech::ARENA_BYTES);
static SHARED: Arena<A16, SHARED_BYTES> = Arena::new();
/// The 49x40 int8 features, row by row, outside the shared buffer.
static FEATURES: Arena<A4, FEATURE_BYTES> = Arena::new();

/// The audio: 1 s, 16000 int16 samples little-endian (as a microphone's DMA buffer would
/// hold them), and TFLM's features and scores for it.
static CLIP: [u8; 32000] = *include_bytes!("../golden/clip.bin");
static TFLM_FEATURES: [u8; FEATURE_BYTES] = *include_bytes!("../golden/features.bin");
static TFLM_SCORES: [u8; 4] = *include_bytes!("../golden/scores.bin");

/// The preprocessor over window `k` of the clip: writes feature row `k`.
#[inline(never)]
fn feature_row(m: &mut preprocessor::ModelIn, k: usize, row: &mut [u8]) {
    let window = CLIP
        .get(2 * k * STRIDE..2 * (k * STRIDE + WINDOW))
        .unwrap_or(&[]);
    for (x, b) in m.input_mut().iter_mut().zip(window.chunks_exact(2)) {
        *x = i16::from_le_bytes([b[0], b[1]]);
    }
    m.invoke();
    for (f, &y) in row.iter_mut().zip(m.output()) {
        *f = y as u8;
    }
}

/// The index of the first largest score (as `std::max_element` in TFLM's example).
fn top(scores: &[i8]) -> usize {
    (0..scores.len()).fold(0, |t, i| if scores[i] > scores[t] { i } else { t })
}

/// Prints whether `got` equals TFLM's `want` and, if not, the first byte that differs (its
/// row and place in it, for rows of `row` bytes).
fn report(what: &str, got: &[u8], want: &[u8], row: usize) -> bool {
    match got.iter().zip(want).position(|(a, b)| a != b) {
        None if got.len() == want.len() => {
            hprintln!("{}: match TFLM ({} bytes)", what, got.len());
            true
        }
        None => {
            hprintln!(
                "{}: MISMATCH: {} bytes, TFLM {}",
                what,
                got.len(),
                want.len()
            );
            false
        }
        Some(i) => {
            let n = got.iter().zip(want).filter(|(a, b)| a != b).count();
            hprintln!(
                "{}: MISMATCH at row {} byte {}: {}, TFLM {} ({} bytes differ)",
                what,
                i / row,
                i % row,
                got[i] as i8,
                want[i] as i8,
                n
            );
            false
        }
    }
}

#[entry]
fn main() -> ! {
    let stop = harness::stop_point();
    // Each taken once; `None` cannot happen here (and would fail the run).
    let (Some(buffer), Some(features), Some(state)) = (
        SHARED.take(),
        FEATURES.take(),
        cortex_m::singleton!(: preprocessor::State = preprocessor::State::new()),
    ) else {
        exit(false)
    };
    let features = &mut features.bytes;
    hprintln!("kiln-kws: audio preprocessor + micro_speech over one arena (Cortex-M4)");

    let sp = harness::paint_stack();
    check_stop(stop, 1);
    for (k, row) in features.chunks_exact_mut(ROW).enumerate() {
        // The model over the shared buffer, with its own state: made per window, since
        // another model may have used the bytes in between (a streaming device would score
        // here); the state carries over.
        let mut m = preprocessor::ModelIn::with_arena(buffer, state);
        feature_row(&mut m, k, row);
    }
    check_stop(stop, 2);
    let mut m = micro_speech::ModelIn::with_arena(buffer);
    m.input_bytes_mut(0).copy_from_slice(features);
    m.invoke();
    check_stop(stop, 3);
    let scores = *m.output();
    let (low, overflow) = harness::stack_low(sp);

    let mut ok = report("features", features, &TFLM_FEATURES, ROW);
    let bytes = scores.map(|s| s as u8);
    ok &= report("scores", &bytes, &TFLM_SCORES, LABELS.len());
    for (label, &s) in LABELS.iter().zip(&scores) {
        hprintln!(
            "  {:8} {:5} ({:.4})",
            label,
            s,
            micro_speech::OUTPUT_QUANT.dequantize(s)
        );
    }
    let tflm_top = top(&TFLM_SCORES.map(|s| s as i8));
    hprintln!(
        "top category: {} (TFLM: {})",
        LABELS[top(&scores)],
        LABELS[tflm_top]
    );

    let (a, b) = (preprocessor::ARENA_BYTES, micro_speech::ARENA_BYTES);
    let state_bytes = preprocessor::PERSISTENT_BYTES;
    let used = SHARED_BYTES + state_bytes + FEATURE_BYTES;
    hprintln!(
        "RAM: buffer {} (max of the arenas {}, {}) + state {} + features {} = {} B; sum of the two arenas {} B ({} B with state and features)",
        SHARED_BYTES,
        a,
        b,
        state_bytes,
        FEATURE_BYTES,
        used,
        a + b,
        a + b + state_bytes + FEATURE_BYTES
    );
    hprintln!(
        "statics in RAM (.data + .bss) {} B; stack {} B for the pipeline, {} B in all{}",
        harness::static_ram(),
        sp - low,
        harness::stack_top() - low,
        if overflow { " OVERFLOW" } else { "" }
    );
    ok &= !overflow;
    hprintln!("{}", if ok { "RESULT PASS" } else { "RESULT FAIL" });
    exit(ok)
}
