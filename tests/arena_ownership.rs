//! Who owns the arena: `Model::take()` (the static arena, once), `ModelIn::with_arena` (a
//! buffer of the caller's, any number of times, one buffer shared by models run one after
//! another, each model's state its own), and `link_section` (the static arena's bytes in a
//! section of the user's choice). Every run is compared byte for byte with TFLM's goldens.

mod common;

use kiln::runtime::{Aligned, align::A16, max, max_of};

mod kws {
    kiln::include_model!("../../shared/models/mlperf_tiny_kws_dscnn_int8.tflite");
}
mod scrambled {
    kiln::include_model!("../../shared/models/tflm_keyword_scrambled_int8.tflite");
}
mod dtln {
    kiln::include_model!("../../shared/models/tflm_dtln_noise_suppression.tflite");
}
mod hello {
    kiln::include_model!("../../shared/models/tflm_hello_world_int8.tflite");
}
mod placed {
    // No leading dot: GNU linkers then define `__start_`/`__stop_` symbols for the section.
    kiln::include_model!(
        "../../shared/models/tflm_hello_world_int8.tflite",
        link_section = "kiln_test_arena"
    );
}

/// One buffer for both models: the larger arena, not the sum.
const SHARED: usize = max(kws::ARENA_BYTES, scrambled::ARENA_BYTES);
type Shared = Aligned<A16, SHARED>;
const SCRAMBLED: &str = "tflm_keyword_scrambled_int8";
const DTLN: &str = "tflm_dtln_noise_suppression";

fn golden(stem: &str) -> Vec<common::Sample> {
    let s = common::samples(&common::shared_models().join("golden").join(stem));
    assert!(!s.is_empty());
    s
}

/// Writes a sample's inputs, runs, and returns the outputs (a macro: each module has its own
/// `ModelIn` type).
macro_rules! run {
    ($m:expr, $module:ident, $sample:expr) => {{
        let m = &mut $m;
        for (i, bytes) in $sample.inputs.iter().enumerate() {
            m.input_bytes_mut(i).copy_from_slice(bytes);
        }
        m.invoke();
        (0..$module::OUTPUTS)
            .map(|i| m.output_bytes(i).to_vec())
            .collect::<Vec<_>>()
    }};
}

#[test]
fn two_models_share_one_arena_and_each_matches_tflm() {
    const {
        assert!(
            scrambled::PERSISTENT_BYTES > 0,
            "the test needs a stateful model"
        )
    };
    assert_eq!(SHARED, max_of(&[kws::ARENA_BYTES, scrambled::ARENA_BYTES]));
    const { assert!(SHARED < kws::ARENA_BYTES + scrambled::ARENA_BYTES) };
    let (kws_golden, scr_golden) = (golden("mlperf_tiny_kws_dscnn_int8"), golden(SCRAMBLED));
    let mut buf = Box::new(Shared::new());
    let mut state = scrambled::State::new();
    for (k, s) in kws_golden.iter().zip(&scr_golden) {
        // Alternately, each model over the same bytes; the other's leftovers are in them.
        let mut a = kws::ModelIn::with_arena(&mut buf);
        assert_eq!(run!(a, kws, k), k.outputs, "kws sample {}", k.seed);
        let mut b = scrambled::ModelIn::with_arena(&mut buf, &mut state);
        b.reset();
        assert_eq!(
            run!(b, scrambled, s),
            s.outputs,
            "scrambled sample {}",
            s.seed
        );
    }
}

#[test]
fn state_survives_another_model_in_the_shared_arena() {
    const {
        assert!(
            dtln::PERSISTENT_BYTES > 0,
            "the test needs a stateful model"
        )
    };
    let samples = golden(DTLN);
    let kws_sample = &golden("mlperf_tiny_kws_dscnn_int8")[0];
    // Reference: the samples one after another without reset, over an arena of its own.
    let mut own = Box::new(dtln::Arena::new());
    let mut own_state = dtln::State::new();
    let mut reference = dtln::ModelIn::with_arena(&mut own, &mut own_state);
    let want: Vec<_> = samples.iter().map(|s| run!(reference, dtln, s)).collect();
    // The state matters: without a reset, later samples differ from TFLM's fresh runs.
    assert!(
        want.iter()
            .zip(&samples)
            .skip(1)
            .any(|(w, s)| *w != s.outputs),
        "the state has no effect on this model's outputs"
    );
    // The same sequence with the other model run in between over the same bytes.
    let mut buf = Box::new(Aligned::<A16, { max(kws::ARENA_BYTES, dtln::ARENA_BYTES) }>::new());
    let mut state = dtln::State::new();
    for (s, want) in samples.iter().zip(&want) {
        let mut other = kws::ModelIn::with_arena(&mut buf);
        assert_eq!(run!(other, kws, kws_sample), kws_sample.outputs);
        let mut m = dtln::ModelIn::with_arena(&mut buf, &mut state);
        assert_eq!(&run!(m, dtln, s), want, "sample {}", s.seed);
    }
}

#[test]
fn take_hands_out_the_static_arena_once_with_arena_any_number_of_times() {
    let samples = golden("tflm_hello_world_int8");
    let mut m = hello::Model::take().expect("first take");
    assert!(hello::Model::take().is_none());
    assert_eq!(run!(m, hello, &samples[0]), samples[0].outputs);
    for s in &samples {
        for _ in 0..3 {
            let mut buf = hello::Arena::new();
            let mut m = hello::ModelIn::with_arena(&mut buf);
            assert_eq!(run!(m, hello, s), s.outputs);
        }
    }
    // A larger, more aligned buffer than the model needs will do.
    let mut big = Aligned::<kiln::runtime::align::A64, 4096>::new();
    let mut m = hello::ModelIn::with_arena(&mut big);
    assert_eq!(run!(m, hello, &samples[1]), samples[1].outputs);
    assert_eq!(hello::ARENA_ALIGN, 16);
}

#[cfg(target_os = "linux")]
#[test]
fn link_section_puts_the_arena_in_that_section() {
    unsafe extern "C" {
        static __start_kiln_test_arena: u8;
        static __stop_kiln_test_arena: u8;
    }
    let (start, stop) = (
        &raw const __start_kiln_test_arena as usize,
        &raw const __stop_kiln_test_arena as usize,
    );
    let samples = golden("tflm_hello_world_int8");
    let mut m = placed::Model::take().expect("first take");
    assert!(placed::Model::take().is_none());
    let at = m.input_bytes_mut(0).as_ptr() as usize;
    assert!(
        start <= at && at < stop && stop - start >= placed::ARENA_BYTES,
        "the arena at {at:#x} is not in the section [{start:#x}, {stop:#x})"
    );
    for s in &samples {
        assert_eq!(run!(m, placed, s), s.outputs);
    }
}
