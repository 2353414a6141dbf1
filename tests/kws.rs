//! Keyword spotting on one arena, on the host: TFLM's micro_speech pipeline (the audio
//! preprocessor over 49 windows of a 1 s clip, its state carried from window to window, then
//! micro_speech on the 49x40 features), both models compiled by `include_model!` and run
//! through `ModelIn::with_arena` over ONE buffer of the larger arena's size; the features
//! live outside it. Features and scores are compared byte for byte with the pinned TFLM's
//! (`examples/kws/golden/`, written by `tools/gen_kws_golden.py`). `examples/kws/` runs the
//! same on a Cortex-M4 under QEMU.

use kiln::runtime::{Aligned, align::A16, max};

mod preprocessor {
    kiln::include_model!("../../shared/models/tflm_audio_preprocessor_int8.tflite");
}
mod micro_speech {
    kiln::include_model!("../../shared/models/tflm_micro_speech_int8.tflite");
}

/// The clip: 16000 int16 samples (16 kHz, little-endian).
static CLIP: &[u8; 32000] = include_bytes!("../examples/kws/golden/clip.bin");
/// TFLM's 49x40 int8 features (row k = the preprocessor's output for window k).
static FEATURES: &[u8; 1960] = include_bytes!("../examples/kws/golden/features.bin");
/// TFLM's micro_speech scores: silence, unknown, yes, no.
static SCORES: &[u8; 4] = include_bytes!("../examples/kws/golden/scores.bin");
/// What `tools/gen_kws_golden.py` recorded: the labels, TFLM's top category, the scores.
static GOLDEN_JSON: &str = include_str!("../examples/kws/golden/golden.json");

/// 30 ms windows at a stride of 20 ms (16 kHz), 49 of them, 40 features each.
const WINDOW: usize = 480;
const STRIDE: usize = 320;
const ROWS: usize = 49;
const ROW: usize = 40;

/// One buffer for both models: the larger arena, not the sum.
const SHARED: usize = max(preprocessor::ARENA_BYTES, micro_speech::ARENA_BYTES);
type Shared = Aligned<A16, SHARED>;

/// The bytes of window `k` of the clip.
fn window(k: usize) -> &'static [u8] {
    &CLIP[2 * k * STRIDE..2 * (k * STRIDE + WINDOW)]
}

/// The preprocessor over window `k`, its state carried in `state`: the 40 features.
fn features_of(buf: &mut Shared, state: &mut preprocessor::State, k: usize) -> [u8; ROW] {
    let mut m = preprocessor::ModelIn::with_arena(buf, state);
    m.input_bytes_mut(0).copy_from_slice(window(k));
    m.invoke();
    let mut row = [0; ROW];
    row.copy_from_slice(m.output_bytes(0));
    row
}

/// micro_speech over the features: the 4 scores.
fn scores_of(buf: &mut Shared, features: &[u8; ROWS * ROW]) -> [u8; 4] {
    let mut m = micro_speech::ModelIn::with_arena(buf);
    m.input_bytes_mut(0).copy_from_slice(features);
    m.invoke();
    let mut s = [0; 4];
    s.copy_from_slice(m.output_bytes(0));
    s
}

/// The first row (and byte in it) where `got` differs from TFLM's features.
fn first_difference(got: &[u8; ROWS * ROW]) -> Option<(usize, usize)> {
    let i = got.iter().zip(FEATURES.iter()).position(|(a, b)| a != b)?;
    Some((i / ROW, i % ROW))
}

#[test]
fn shapes_and_sizes_are_micro_speechs() {
    assert_eq!(preprocessor::INPUT_SHAPE.iter().product::<usize>(), WINDOW);
    assert_eq!(preprocessor::OUTPUT_SHAPE.iter().product::<usize>(), ROW);
    assert_eq!(
        micro_speech::INPUT_SHAPE.iter().product::<usize>(),
        ROWS * ROW
    );
    assert_eq!(micro_speech::OUTPUT_SHAPE.iter().product::<usize>(), 4);
    assert_eq!((ROWS - 1) * STRIDE + WINDOW, 15840);
    const { assert!(preprocessor::PERSISTENT_BYTES > 0) };
    const { assert!(SHARED < preprocessor::ARENA_BYTES + micro_speech::ARENA_BYTES) };
}

#[test]
fn preprocessor_then_micro_speech_on_one_buffer_match_tflm() {
    let mut buf = Box::new(Shared::new());
    let mut state = preprocessor::State::new();
    let mut features = [0u8; ROWS * ROW];
    for (k, row) in features.chunks_exact_mut(ROW).enumerate() {
        row.copy_from_slice(&features_of(&mut buf, &mut state, k));
    }
    assert_eq!(
        first_difference(&features),
        None,
        "features differ from TFLM's (row, byte)"
    );
    let scores = scores_of(&mut buf, &features);
    assert_eq!(&scores, SCORES, "micro_speech scores");
    // The top category as micro_speech_test.cc picks it (the first largest score), as the
    // generator recorded it.
    let top = (0..4).fold(0, |t, i| {
        if (scores[i] as i8) > (scores[t] as i8) {
            i
        } else {
            t
        }
    });
    let json: serde_json::Value = serde_json::from_str(GOLDEN_JSON).unwrap();
    assert_eq!(json["labels"][top], json["top"], "the top category");
    let recorded: Vec<i64> = SCORES.iter().map(|&s| i64::from(s as i8)).collect();
    assert_eq!(json["scores"], serde_json::json!(recorded));

    // Run again from a reset state over the same buffer (micro_speech's bytes now in it):
    // the same features and scores.
    let mut state = preprocessor::State::new();
    let mut again = [0u8; ROWS * ROW];
    for (k, row) in again.chunks_exact_mut(ROW).enumerate() {
        row.copy_from_slice(&features_of(&mut buf, &mut state, k));
    }
    assert_eq!(again, features);
    assert_eq!(&scores_of(&mut buf, &again), SCORES);
}

#[test]
fn the_state_survives_micro_speech_running_between_windows() {
    // A streaming device scores after every window: micro_speech runs over the shared bytes
    // between preprocessor calls, and the preprocessor's state (outside the buffer) must
    // carry over untouched.
    let mut buf = Box::new(Shared::new());
    let mut state = preprocessor::State::new();
    let mut features = [0u8; ROWS * ROW];
    for k in 0..ROWS {
        let row = features_of(&mut buf, &mut state, k);
        features[k * ROW..(k + 1) * ROW].copy_from_slice(&row);
        scores_of(&mut buf, &features);
    }
    assert_eq!(first_difference(&features), None, "(row, byte)");
    assert_eq!(&scores_of(&mut buf, &features), SCORES);
}

#[test]
fn the_goldens_need_the_state_carried() {
    // A preprocessor reset before every window (the state dropped) gives other features:
    // the comparison above would catch a state lost between calls.
    let mut buf = Box::new(Shared::new());
    let mut features = [0u8; ROWS * ROW];
    for (k, row) in features.chunks_exact_mut(ROW).enumerate() {
        let mut state = preprocessor::State::new();
        row.copy_from_slice(&features_of(&mut buf, &mut state, k));
    }
    assert_eq!(
        features[..ROW],
        FEATURES[..ROW],
        "the first window has no history"
    );
    assert!(first_difference(&features).is_some());
}
