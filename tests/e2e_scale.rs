//! 2,000-operator models (`tests/models/scale_*_2000.tflite`, made by
//! `tools/gen_scale_models.py`) through `include_model!`: they compile in seconds and their
//! outputs are TFLM's, byte for byte. The RELU chain is the worst case of in-place grouping
//! (every RELU overwrites its input: one buffer for 2,001 tensors).

mod common;

mod chain {
    kiln::include_model!("models/scale_chain_2000.tflite");
}

mod relus {
    kiln::include_model!("models/scale_relu_2000.tflite");
}

#[test]
fn two_thousand_operators_compile_and_match_tflm() {
    check_golden!(
        chain,
        common::repo_root().join("tests/models/golden/scale_chain_2000")
    );
}

#[test]
fn two_thousand_relus_run_in_one_buffer_and_match_tflm() {
    check_golden!(
        relus,
        common::repo_root().join("tests/models/golden/scale_relu_2000")
    );
    const { assert!(relus::ARENA_BYTES == 64) };
}
