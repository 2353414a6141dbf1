//! Debug mode: `preserve_all_tensors = true` gives every tensor its own bytes, and
//! `tensor_bytes(t)` of each intermediate tensor after `invoke()` must equal TFLM's value of
//! it (`golden_all/`: TFLM's outputs for the `all_outputs/` variant of each model, which
//! lists every op-produced tensor as an output, by its index in the model); the per-operator
//! hook of `invoke_with` (order, names, before/after); `preserve_inputs = true`.

mod common;

use kiln::runtime::Phase;
use std::path::PathBuf;

/// TFLM's every-layer goldens for `stem`, as (tensor index, name) per output.
fn layer_tensors(stem: &str) -> Vec<(usize, String)> {
    let dir = common::shared_models().join("golden_all").join(stem);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("golden.json")).unwrap()).unwrap();
    json["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["tensor_index"].as_u64().unwrap() as usize,
                // (a model without tensor names has `null` here)
                o["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn model_file(stem: &str) -> PathBuf {
    common::shared_models().join(format!("{stem}.tflite"))
}

macro_rules! every_layer {
    ($name:ident, $file:literal, $stem:literal) => {
        mod $name {
            kiln::include_model!($file, preserve_all_tensors = true);
        }
        #[test]
        fn $name() {
            let stem = $stem;
            let graph =
                kiln_planner::read_model(&std::fs::read(model_file(stem)).unwrap()).unwrap();
            let tensors = layer_tensors(stem);
            // The model's tensors are the all_outputs variant's: the same indices and names.
            for (t, name) in &tensors {
                assert_eq!(&graph.tensors[*t].name, name, "{stem}: tensor {t}");
            }
            assert!(!tensors.is_empty(), "{stem}: no tensors in golden_all");
            let dir = common::shared_models().join("golden_all").join(stem);
            let mut m = $name::Model::take().expect("taken once");
            for s in common::samples(&dir) {
                m.reset();
                for (i, bytes) in s.inputs.iter().enumerate() {
                    m.input_bytes_mut(i).copy_from_slice(bytes);
                }
                m.invoke();
                assert_eq!(s.outputs.len(), tensors.len());
                for ((t, name), want) in tensors.iter().zip(&s.outputs) {
                    let got = m
                        .tensor_bytes(*t)
                        .unwrap_or_else(|| panic!("{stem}: no bytes for tensor {t}"));
                    assert!(
                        got == want.as_slice(),
                        "{stem}: sample {}: tensor {t} `{name}` differs from TFLM",
                        s.seed
                    );
                }
                // The inputs too are kept.
                for (i, (&t, bytes)) in graph.inputs.iter().zip(&s.inputs).enumerate() {
                    assert_eq!(
                        m.tensor_bytes(t.0),
                        Some(bytes.as_slice()),
                        "{stem}: input {i}"
                    );
                }
            }
            // Constants and unknown indices have none.
            let constant = graph.tensors.iter().position(|t| t.is_constant());
            if let Some(c) = constant {
                assert_eq!(m.tensor_bytes(c), None);
            }
            assert_eq!(m.tensor_bytes(graph.tensors.len()), None);
        }
    };
}

every_layer!(
    hello_world_int8,
    "../../shared/models/tflm_hello_world_int8.tflite",
    "tflm_hello_world_int8"
);
every_layer!(
    hello_world_float,
    "../../shared/models/tflm_hello_world_float.tflite",
    "tflm_hello_world_float"
);
every_layer!(
    person_detect,
    "../../shared/models/tflm_person_detect_int8.tflite",
    "tflm_person_detect_int8"
);
every_layer!(
    vww,
    "../../shared/models/mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite",
    "mlperf_tiny_vww_mobilenetv1_025_96_int8"
);
every_layer!(
    kws_dscnn,
    "../../shared/models/mlperf_tiny_kws_dscnn_int8.tflite",
    "mlperf_tiny_kws_dscnn_int8"
);
every_layer!(
    ic_resnet8,
    "../../shared/models/mlperf_tiny_ic_resnet8_int8.tflite",
    "mlperf_tiny_ic_resnet8_int8"
);
every_layer!(
    ad_autoencoder,
    "../../shared/models/mlperf_tiny_ad_autoencoder_int8.tflite",
    "mlperf_tiny_ad_autoencoder_int8"
);
every_layer!(
    sww,
    "../../shared/models/mlperf_tiny_sww_int8.tflite",
    "mlperf_tiny_sww_int8"
);
every_layer!(
    audio_preprocessor,
    "../../shared/models/tflm_audio_preprocessor_int8.tflite",
    "tflm_audio_preprocessor_int8"
);
every_layer!(
    micro_speech,
    "../../shared/models/tflm_micro_speech_int8.tflite",
    "tflm_micro_speech_int8"
);
every_layer!(
    simple_add,
    "../../shared/models/tflm_simple_add.tflite",
    "tflm_simple_add"
);
every_layer!(
    mnist_lstm,
    "../../shared/models/tflm_mnist_lstm_int8.tflite",
    "tflm_mnist_lstm_int8"
);
every_layer!(
    dtln,
    "../../shared/models/tflm_dtln_noise_suppression.tflite",
    "tflm_dtln_noise_suppression"
);
every_layer!(
    keyword_scrambled,
    "../../shared/models/tflm_keyword_scrambled_int8.tflite",
    "tflm_keyword_scrambled_int8"
);

mod kws_plain {
    kiln::include_model!("../../shared/models/mlperf_tiny_kws_dscnn_int8.tflite");
}

#[test]
fn invoke_with_calls_the_hook_around_each_operator_in_plan_order() {
    let stem = "mlperf_tiny_kws_dscnn_int8";
    // The operators with code, in the plan's order, from the compile path itself.
    let bytes = std::fs::read(model_file(stem)).unwrap();
    let c = kiln_build::compile_tokens(&bytes, &Default::default()).unwrap();
    let planned: Vec<(usize, &str)> = c
        .plan
        .order
        .iter()
        .filter(|&&op| !c.plan.mode(op).elided())
        .map(|&op| (op.0, c.graph.op(op).kind.name()))
        .collect();
    assert_eq!(kws_plain::OPERATORS.as_slice(), planned.as_slice());
    assert!(planned.iter().any(|&(_, n)| n == "CONV_2D"));
    let samples = common::samples(&common::shared_models().join("golden").join(stem));
    let mut buf = kws_plain::Arena::new();
    let mut m = kws_plain::ModelIn::with_arena(&mut buf);
    for s in &samples {
        m.input_bytes_mut(0).copy_from_slice(&s.inputs[0]);
        let mut events = Vec::new();
        m.invoke_with(|op, name, phase| events.push((op, name, phase)));
        let want: Vec<_> = planned
            .iter()
            .flat_map(|&(op, name)| [(op, name, Phase::Before), (op, name, Phase::After)])
            .collect();
        assert_eq!(events, want);
        assert_eq!(m.output_bytes(0), s.outputs[0].as_slice());
    }
}

mod add_plain {
    kiln::include_model!("../../shared/models/tflm_simple_add.tflite");
}
mod add_kept {
    kiln::include_model!(
        "../../shared/models/tflm_simple_add.tflite",
        preserve_inputs = true
    );
}

#[test]
fn preserve_inputs_keeps_the_inputs_through_invoke() {
    let samples = common::samples(
        &common::shared_models()
            .join("golden")
            .join("tflm_simple_add"),
    );
    let s = &samples[0];
    // Without the option ADD runs in place over a dying input: an input is overwritten.
    let mut buf = add_plain::Arena::new();
    let mut m = add_plain::ModelIn::with_arena(&mut buf);
    for (i, b) in s.inputs.iter().enumerate() {
        m.input_bytes_mut(i).copy_from_slice(b);
    }
    m.invoke();
    assert_eq!(m.output_bytes(0), s.outputs[0].as_slice());
    assert!(
        (0..add_plain::INPUTS).any(|i| m.input_bytes_mut(i) != s.inputs[i].as_slice()),
        "no input is overwritten without preserve_inputs: the test shows nothing"
    );
    // With it, the inputs survive, and a second invoke() needs no new writes.
    let mut buf = Box::new(add_kept::Arena::new());
    let mut m = add_kept::ModelIn::with_arena(&mut buf);
    for s in &samples {
        for (i, b) in s.inputs.iter().enumerate() {
            m.input_bytes_mut(i).copy_from_slice(b);
        }
        for _ in 0..2 {
            m.invoke();
            assert_eq!(m.output_bytes(0), s.outputs[0].as_slice());
            for (i, b) in s.inputs.iter().enumerate() {
                assert_eq!(m.input_bytes_mut(i), b.as_slice(), "input {i}");
            }
        }
    }
}
