//! The audio preprocessor's Signal operators one by one, on TFLM's own intermediate tensors:
//! `../shared/models/all_outputs/tflm_audio_preprocessor_int8.tflite` exposes every layer and
//! `golden_all/` holds TFLM's bytes for each. Every Signal operator Kiln compiles is lowered
//! from the real model (its options, its constant tables), run by the host executor on the
//! golden inputs of that layer and compared byte for byte with the golden output, so each is
//! checked in the preprocessor on its own; with the fast kernels and with the reference ones
//! (`reference_kernels`: SignalRfft on TFLM's scalar steps).

mod common;

use kiln_planner::ir::TensorId;
use kiln_planner::read_model;
use std::collections::HashMap;

#[test]
fn every_compiled_signal_layer_of_the_audio_preprocessor_matches_tflm() {
    let models = common::shared_models();
    let bytes =
        std::fs::read(models.join("all_outputs/tflm_audio_preprocessor_int8.tflite")).unwrap();
    let graph = read_model(&bytes).unwrap();
    let dir = models.join("golden_all/tflm_audio_preprocessor_int8");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("golden.json")).unwrap()).unwrap();
    // Golden output position of each exposed tensor, and of the model input.
    let mut slot: HashMap<usize, usize> = HashMap::new();
    for (i, o) in json["outputs"].as_array().unwrap().iter().enumerate() {
        slot.insert(o["tensor_index"].as_u64().unwrap() as usize, i);
    }
    let samples = common::samples(&dir);
    assert!(!samples.is_empty());
    let mut checked = Vec::new();
    for op in &graph.ops {
        let name = op.kind.name();
        if !name.starts_with("Signal") {
            continue;
        }
        // A stateful operator (SignalFilterBankSpectralSubtraction's noise estimate, a tensor
        // the reader adds) runs in the whole model only: `e2e_all_layers` checks it there.
        if op
            .inputs
            .iter()
            .flatten()
            .any(|&t| graph.is_kernel_state(t))
        {
            continue;
        }
        for reference in [false, true] {
            let Ok(step) = kiln_build::lower::lower_op_with(&graph, op, reference) else {
                panic!("op {} ({name}) does not compile", op.id.0);
            };
            let runtime: Vec<TensorId> = op
                .inputs
                .iter()
                .flatten()
                .copied()
                .filter(|&t| !graph.tensor(t).is_constant())
                .collect();
            let mut one = graph.clone();
            one.inputs = runtime.clone();
            for s in &samples {
                let inputs: Vec<&[u8]> = runtime
                    .iter()
                    .map(|t| {
                        if graph.inputs.contains(t) {
                            s.inputs[graph.inputs.iter().position(|i| i == t).unwrap()].as_slice()
                        } else {
                            s.outputs[slot[&t.0]].as_slice()
                        }
                    })
                    .collect();
                let t = kiln_build::exec::run(&one, std::slice::from_ref(&step), &inputs);
                for &o in &op.outputs {
                    let want = &s.outputs[slot[&o.0]];
                    let got = t[o.0].bytes();
                    let at = got.iter().zip(want).position(|(a, b)| a != b);
                    assert!(
                        got == want.as_slice(),
                        "op {} ({name}, reference kernels {reference}), sample {}: output tensor \
                     {} differs at byte {at:?} of {}",
                        op.id.0,
                        s.seed,
                        o.0,
                        want.len()
                    );
                }
            }
        }
        checked.push(format!("op {} {name}", op.id.0));
    }
    // SignalWindow, SignalFftAutoScale, SignalRfft, SignalEnergy, SignalFilterBank,
    // SignalFilterBankSquareRoot, SignalPCAN and SignalFilterBankLog.
    assert!(checked.len() >= 8, "checked only {checked:?}");
    eprintln!("checked {}", checked.join(", "));
}
