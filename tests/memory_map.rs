//! The memory map (`regions = [...]`): the arena's buffers split over RAM regions, one static
//! per region in its link section, fastest first. Public models compiled with two and three
//! regions run byte-identical with TFLM's goldens, through `take()` and through
//! `with_regions` (buffers of the caller's); the regions' statics are in their sections; the
//! persistent state of a stateful model stays in its own static; debug mode over regions
//! reads every layer, each equal to TFLM's.

mod common;

use kiln::runtime::{Aligned, align::A16};

// Sections without a leading dot: GNU linkers define `__start_`/`__stop_` symbols for them.
mod kws {
    kiln::include_model!(
        "../../shared/models/mlperf_tiny_kws_dscnn_int8.tflite",
        regions = [("kiln_mm_fast", 8192), ("kiln_mm_slow", 16384)]
    );
}
mod person {
    kiln::include_model!(
        "../../shared/models/tflm_person_detect_int8.tflite",
        regions = [
            ("kiln_mm_tcm", 16 * 1024),
            ("kiln_mm_sram", 24 * 1024, 32),
            ("kiln_mm_ext", 64 * 1024)
        ]
    );
}
mod kws_debug {
    kiln::include_model!(
        "../../shared/models/mlperf_tiny_kws_dscnn_int8.tflite",
        preserve_all_tensors = true,
        regions = [("kiln_mm_dbg0", 16 * 1024), ("kiln_mm_dbg1", 256 * 1024)]
    );
}
mod hello_unused_region {
    kiln::include_model!(
        "../../shared/models/tflm_hello_world_int8.tflite",
        regions = [("kiln_mm_h0", 4096), ("kiln_mm_h1", 4096)]
    );
}
mod person_one {
    kiln::include_model!("../../shared/models/tflm_person_detect_int8.tflite");
}
mod scrambled {
    kiln::include_model!(
        "../../shared/models/tflm_keyword_scrambled_int8.tflite",
        regions = [("kiln_mm_s0", 160), ("kiln_mm_s1", 1024)],
        link_section = "kiln_mm_state"
    );
}

fn golden(stem: &str) -> Vec<common::Sample> {
    let s = common::samples(&common::shared_models().join("golden").join(stem));
    assert!(!s.is_empty());
    s
}

/// Writes a sample's inputs, runs, and returns the outputs.
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
fn two_regions_split_the_arena_and_match_tflm() {
    // Each region within its size; the buffers split over both (the one arena would not fit
    // the first).
    const {
        assert!(kws::ARENA0_BYTES <= 8192 && kws::ARENA1_BYTES <= 16384);
        assert!(kws::ARENA0_BYTES > 0 && kws::ARENA1_BYTES > 0);
    };
    assert_eq!(kws::REGIONS[0], ("kiln_mm_fast", kws::ARENA0_BYTES, 8192));
    assert_eq!(kws::REGIONS[1], ("kiln_mm_slow", kws::ARENA1_BYTES, 16384));
    let samples = golden("mlperf_tiny_kws_dscnn_int8");
    let mut m = kws::Model::take().expect("first take");
    assert!(kws::Model::take().is_none());
    for s in &samples {
        assert_eq!(run!(m, kws, s), s.outputs, "sample {}", s.seed);
    }
    // Buffers of the caller's, any number of times.
    for s in &samples {
        let (mut a, mut b) = (Box::new(kws::Arena0::new()), Box::new(kws::Arena1::new()));
        let mut m = kws::ModelIn::with_regions(&mut a, &mut b);
        assert_eq!(run!(m, kws, s), s.outputs, "sample {}", s.seed);
    }
}

#[test]
fn three_regions_person_detect_matches_tflm() {
    const {
        assert!(person::ARENA0_BYTES <= 16 * 1024);
        assert!(person::ARENA1_BYTES <= 24 * 1024);
        assert!(person::ARENA2_BYTES <= 64 * 1024);
        assert!(person::ARENA1_ALIGN == 32);
        // The first region holds less than the model needs at its peak.
        assert!(person_one::ARENA_BYTES > 16 * 1024);
    };
    assert!(person::REGIONS.iter().filter(|r| r.1 > 0).count() >= 2);
    let samples = golden("tflm_person_detect_int8");
    let mut m = person::Model::take().expect("first take");
    for s in &samples {
        assert_eq!(run!(m, person, s), s.outputs, "sample {}", s.seed);
    }
    // Oversized, more aligned buffers will do.
    let mut a = Box::new(Aligned::<kiln::runtime::align::A64, { 16 * 1024 }>::new());
    let mut b = Box::new(Aligned::<kiln::runtime::align::A32, { 24 * 1024 }>::new());
    let mut c = Box::new(Aligned::<A16, { 64 * 1024 }>::new());
    let mut m = person::ModelIn::with_regions(&mut a, &mut b, &mut c);
    assert_eq!(run!(m, person, &samples[0]), samples[0].outputs);
}

#[test]
fn a_stateful_model_keeps_its_state_apart() {
    const { assert!(scrambled::PERSISTENT_BYTES > 0) };
    let samples = golden("tflm_keyword_scrambled_int8");
    let (mut a, mut b) = (scrambled::Arena0::new(), scrambled::Arena1::new());
    let mut state = scrambled::State::new();
    for s in &samples {
        let mut m = scrambled::ModelIn::with_regions(&mut a, &mut b, &mut state);
        m.reset();
        assert_eq!(run!(m, scrambled, s), s.outputs, "sample {}", s.seed);
    }
    // Its statics: the regions' and the state's (in `link_section`).
    let mut m = scrambled::Model::take().expect("first take");
    assert_eq!(run!(m, scrambled, &samples[0]), samples[0].outputs);
}

#[cfg(target_os = "linux")]
#[test]
fn each_region_is_in_its_section() {
    unsafe extern "C" {
        static __start_kiln_mm_fast: u8;
        static __stop_kiln_mm_fast: u8;
        static __start_kiln_mm_slow: u8;
        static __stop_kiln_mm_slow: u8;
        static __start_kiln_mm_state: u8;
        static __stop_kiln_mm_state: u8;
    }
    let span = |a: *const u8, b: *const u8| (a as usize, b as usize);
    let fast = span(
        &raw const __start_kiln_mm_fast,
        &raw const __stop_kiln_mm_fast,
    );
    let slow = span(
        &raw const __start_kiln_mm_slow,
        &raw const __stop_kiln_mm_slow,
    );
    let state = span(
        &raw const __start_kiln_mm_state,
        &raw const __stop_kiln_mm_state,
    );
    assert!(fast.1 - fast.0 >= kws::ARENA0_BYTES);
    assert!(slow.1 - slow.0 >= kws::ARENA1_BYTES);
    assert!(state.1 - state.0 >= scrambled::PERSISTENT_BYTES);
    // The sections do not overlap.
    assert!(fast.1 <= slow.0 || slow.1 <= fast.0);
}

#[test]
fn debug_mode_over_regions_reads_every_layer_as_tflm() {
    const { assert!(kws_debug::ARENA0_BYTES > 0 && kws_debug::ARENA1_BYTES > 0) };
    let stem = "mlperf_tiny_kws_dscnn_int8";
    let dir = common::shared_models().join("golden_all").join(stem);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("golden.json")).unwrap()).unwrap();
    let tensors: Vec<usize> = json["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["tensor_index"].as_u64().unwrap() as usize)
        .collect();
    assert!(tensors.len() > 5);
    let mut m = kws_debug::Model::take().expect("taken once");
    for s in common::samples(&dir) {
        for (i, bytes) in s.inputs.iter().enumerate() {
            m.input_bytes_mut(i).copy_from_slice(bytes);
        }
        m.invoke();
        for (t, want) in tensors.iter().zip(&s.outputs) {
            let got = m.tensor_bytes(*t).expect("an activation");
            assert!(got == want.as_slice(), "sample {}: tensor {t}", s.seed);
        }
    }
}

#[test]
fn a_region_left_empty_is_a_zero_byte_static() {
    const { assert!(hello_unused_region::ARENA0_BYTES > 0 && hello_unused_region::ARENA1_BYTES == 0) };
    let samples = golden("tflm_hello_world_int8");
    let mut m = hello_unused_region::Model::take().expect("first take");
    for s in &samples {
        assert_eq!(
            run!(m, hello_unused_region, s),
            s.outputs,
            "sample {}",
            s.seed
        );
    }
    let (mut a, mut b) = (
        hello_unused_region::Arena0::new(),
        hello_unused_region::Arena1::new(),
    );
    let mut m = hello_unused_region::ModelIn::with_regions(&mut a, &mut b);
    assert_eq!(
        run!(m, hello_unused_region, &samples[0]),
        samples[0].outputs
    );
}
