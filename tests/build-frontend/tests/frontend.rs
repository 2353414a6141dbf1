//! The build.rs front end: generated files, reports, and golden outputs.

use kiln_build_frontend_test::*;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn golden(dir: &Path, seed: u32) -> (Vec<u8>, Vec<u8>) {
    (
        std::fs::read(dir.join(format!("s{seed}_in0.bin"))).unwrap(),
        std::fs::read(dir.join(format!("s{seed}_out0.bin"))).unwrap(),
    )
}

macro_rules! run_golden {
    ($m:ident, $dir:expr) => {{
        let mut m = $m::Model::take().unwrap();
        for seed in 1..=3 {
            let (input, want) = golden(&$dir, seed);
            m.reset();
            m.input_bytes_mut(0).copy_from_slice(&input);
            m.invoke();
            assert_eq!(
                m.output_bytes(0),
                want.as_slice(),
                "{} seed {seed}",
                stringify!($m)
            );
        }
    }};
}

#[test]
fn generated_files_are_written_beside_each_other() {
    for name in ["hello", "person", "cnn_float"] {
        let rs = std::fs::read_to_string(Path::new(OUT_DIR).join(format!("{name}.rs"))).unwrap();
        assert!(rs.starts_with("// @generated"), "{name}.rs");
        let txt =
            std::fs::read_to_string(Path::new(OUT_DIR).join(format!("{name}.plan.txt"))).unwrap();
        assert!(txt.contains("arena bytes"), "{name}.plan.txt");
        let svg =
            std::fs::read_to_string(Path::new(OUT_DIR).join(format!("{name}.plan.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("lower bound"),
            "{name}.plan.svg"
        );
    }
}

#[test]
fn models_from_build_rs_match_tflm() {
    let shared = root().join("../shared/models/golden");
    run_golden!(person, shared.join("tflm_person_detect_int8"));
    run_golden!(cnn_float, root().join("tests/models/golden/cnn_float"));
}

/// Each model is a singleton (`take()` succeeds once per process), so hello_world is checked
/// here only.
#[test]
fn both_front_ends_agree() {
    assert_eq!(hello::ARENA_BYTES, hello_macro::ARENA_BYTES);
    assert_eq!(hello::WEIGHTS_BYTES, hello_macro::WEIGHTS_BYTES);
    assert_eq!(hello::INPUT_SHAPE, hello_macro::INPUT_SHAPE);
    let mut a = hello::Model::take().unwrap();
    let mut b = hello_macro::Model::take().unwrap();
    for x in -128..=127i8 {
        a.input_mut()[0] = x;
        b.input_mut()[0] = x;
        a.invoke();
        b.invoke();
        assert_eq!(a.output(), b.output());
    }
    let dir = root().join("../shared/models/golden/tflm_hello_world_int8");
    for seed in 1..=3 {
        let (input, want) = golden(&dir, seed);
        a.input_bytes_mut(0).copy_from_slice(&input);
        a.invoke();
        assert_eq!(a.output_bytes(0), want.as_slice(), "hello seed {seed}");
    }
}

/// Every sample of every model compiled by `build.rs`, byte for byte with TFLM.
#[test]
fn every_model_from_build_rs_matches_tflm() {
    macro_rules! all {
        ($dir:expr; $($name:ident),* $(,)?) => {
            all!($dir; $($name => stringify!($name)),*)
        };
        ($dir:expr; $($name:ident => $stem:expr),* $(,)?) => {$({
            let dir = $dir.join($stem);
            let mut m = $name::Model::take().unwrap();
            let json = std::fs::read_to_string(dir.join("golden.json")).unwrap();
            let seeds = json.matches("\"seed\"").count() as u32;
            assert!(seeds >= 1, "{}", stringify!($name));
            for seed in 1..=seeds {
                m.reset();
                for i in 0..$name::INPUTS {
                    let input = std::fs::read(dir.join(format!("s{seed}_in{i}.bin"))).unwrap();
                    m.input_bytes_mut(i).copy_from_slice(&input);
                }
                m.invoke();
                for i in 0..$name::OUTPUTS {
                    let want = std::fs::read(dir.join(format!("s{seed}_out{i}.bin"))).unwrap();
                    assert_eq!(m.output_bytes(i), want.as_slice(), "{} seed {seed} output {i}", stringify!($name));
                }
            }
        })*};
    }
    all!(root().join("../shared/models/golden");
        tflm_hello_world_float,
        mlperf_tiny_vww_mobilenetv1_025_96_int8,
        mlperf_tiny_kws_dscnn_int8,
        mlperf_tiny_ic_resnet8_int8,
        mlperf_tiny_ad_autoencoder_int8,
        mlperf_tiny_sww_int8,
        tflm_micro_speech_int8,
        tflm_simple_add,
        tflm_mnist_lstm_int8,
        tflm_dtln_noise_suppression,
        tflm_keyword_scrambled_int8,
    );
    all!(root().join("tests/models/golden");
        mlp_int8,
        mlp_float,
        cnn_int8,
        branches_int8,
        branches_float,
        svdf_int8,
        lstm_int8,
        aliasing_int8,
        aliasing_float,
        depthwise_int8,
        depthwise_float,
        pointwise_int8,
        pointwise_float,
        features_int8,
        features_float,
        lstm_float,
        math_float,
    );
    // Every layer: the `all_outputs/` variants against TFLM's `golden_all/`.
    all!(root().join("tests/models/golden_all");
        features_int8_all => "features_int8",
        features_float_all => "features_float",
        lstm_float_all => "lstm_float",
        math_float_all => "math_float",
    );
}
