//! A 2,000-operator model (`tests/models/scale_chain_2000.tflite`, made by
//! `tools/gen_scale_models.py`) through `include_model!`: it compiles in seconds and its
//! outputs are TFLM's, byte for byte.

mod common;

mod chain {
    kiln::include_model!("models/scale_chain_2000.tflite");
}

#[test]
fn two_thousand_operators_compile_and_match_tflm() {
    check_golden!(
        chain,
        common::repo_root().join("tests/models/golden/scale_chain_2000")
    );
}
