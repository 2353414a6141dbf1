//! The streaming Signal operators end to end (SignalFramer, SignalStacker, SignalDelay,
//! SignalOverlapAdd): their circular buffers, which TFLM keeps outside the tensors, are
//! variable tensors in Kiln's persistent region. The code `include_model!` emits for each
//! bundle's e2e model runs the case's whole sequence of invokes (the state carried over),
//! then `reset()` and the whole sequence again: both runs must give TFLM's outputs of every
//! invoke, so `reset()` restores TFLM's reset state (`tests/e2e_kernel_cases.rs` runs each
//! sequence once).

mod common;

macro_rules! stream {
    ($($module:ident = ($bundle:literal, $path:literal)),* $(,)?) => {
        $(
            mod $module {
                kiln::include_model!($path);
            }
        )*

        #[test]
        fn sequences_match_tflm_before_and_after_reset() {
            $(
                let bytes = std::fs::read(
                    common::repo_root().join(concat!("tests/kernel_cases/", $bundle, ".kcase")),
                )
                .unwrap();
                let cases = common::parse_kcase(&bytes);
                let case = &cases[0];
                assert!(case.later.len() >= 2, "{}: a sequence of invokes", $bundle);
                let mut m = $module::Model::take().expect("the model is taken once");
                for run in 0..2 {
                    m.reset();
                    for (k, (inputs, outputs)) in case.invokes().into_iter().enumerate() {
                        for (i, x) in inputs.iter().enumerate() {
                            m.input_bytes_mut(i).copy_from_slice(x);
                        }
                        m.invoke();
                        for (i, want) in outputs.iter().enumerate() {
                            assert_eq!(
                                m.output_bytes(i),
                                want.as_slice(),
                                "{} run {run} invoke {k} output {i}",
                                $bundle
                            );
                        }
                    }
                }
            )*
        }
    };
}

stream! {
    framer = ("signal_framer_int16", "kernel_cases/models/signal_framer_int16.tflite"),
    stacker = ("signal_stacker_int16", "kernel_cases/models/signal_stacker_int16.tflite"),
    delay = ("signal_delay_int16", "kernel_cases/models/signal_delay_int16.tflite"),
    overlap_add_int16 = (
        "signal_overlap_add_int16",
        "kernel_cases/models/signal_overlap_add_int16.tflite"
    ),
    overlap_add_float32 = (
        "signal_overlap_add_float32",
        "kernel_cases/models/signal_overlap_add_float32.tflite"
    ),
}
