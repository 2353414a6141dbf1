//! A stateful Signal operator end to end: SignalFilterBankSpectralSubtraction's noise
//! estimate (TFLM keeps it outside the tensors; Kiln plans it as a variable tensor in the
//! persistent region) carries over between `invoke()` calls of the code `include_model!`
//! emits, and `reset()` zeroes it, as in TFLM. The model is the bundle's e2e model; the
//! inputs and TFLM's outputs of consecutive invokes, then of one after `reset()`, are in
//! `e2e_signal_state/golden.rs` (`tools/kcases_signal_fft.py`, `sequences()`).

mod spectral_subtraction {
    kiln::include_model!(
        "kernel_cases/models/signal_filter_bank_spectral_subtraction_uint32.tflite"
    );
}

include!("e2e_signal_state/golden.rs");

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn noise_estimate_carries_over_and_resets_like_tflm() {
    let mut m = spectral_subtraction::Model::take().expect("the model is taken once");
    m.reset();
    let last = INPUTS.len() - 1;
    for (k, x) in INPUTS.iter().enumerate() {
        if k == last {
            m.reset();
        }
        let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
        m.input_bytes_mut(0).copy_from_slice(&bytes);
        m.invoke();
        assert_eq!(words(m.output_bytes(0)), OUTPUTS[k], "invoke {k}: output");
        assert_eq!(
            words(m.output_bytes(1)),
            NOISE[k],
            "invoke {k}: noise estimate"
        );
    }
    // The estimate changed between invokes (the sequence tests the state).
    assert_ne!(NOISE[0], NOISE[last - 1]);
    assert_eq!(OUTPUTS[last], OUTPUTS[0]);
}
