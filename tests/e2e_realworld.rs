//! Real-world models, as their vendors ship them (`../shared/models/realworld/`: Silicon Labs
//! MLTK, OpenMV; float32, uint8 and int8 I/O; 6 KB to 2.8 MB), against TFLM's goldens made by
//! `tools/gen_realworld_golden.py` (`tests/realworld/<stem>/`):
//!
//! - the default plan (`include_model!` with no options), every sample's final outputs byte
//!   for byte (float32 bit for bit);
//! - every layer: debug mode (`preserve_all_tensors = true`), the sha256 of every
//!   operator-produced tensor after `invoke()` against TFLM's for the every-layer variant
//!   (`layers.json`); a difference names the first layer in op order that differs;
//! - typed I/O of the float32 and uint8 models (QUANTIZE at the input, DEQUANTIZE at the
//!   outputs): `input_mut()`/`output()` in their element types, `INPUT_QUANT: Quant<u8>`.

mod common;

use sha2::{Digest, Sha256};
use std::path::PathBuf;

fn golden_dir(stem: &str) -> PathBuf {
    common::repo_root().join("tests/realworld").join(stem)
}

/// The goldens were made from this very file (its sha256 in `golden.json`).
fn check_model_file(stem: &str) {
    let path = common::shared_models()
        .join("realworld")
        .join(format!("{stem}.tflite"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(golden_dir(stem).join("golden.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        json["model_sha256"].as_str().unwrap(),
        hex(&Sha256::digest(&bytes)),
        "{stem}: the model file is not the one the goldens were made from"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One operator-produced tensor of `layers.json`.
struct Layer {
    op_index: u64,
    op: String,
    tensor: usize,
    name: String,
}

/// The layers of `layers.json` and, per seed, TFLM's sha256 of each.
fn layers(stem: &str) -> (Vec<Layer>, Vec<(u64, Vec<String>)>) {
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(golden_dir(stem).join("layers.json")).unwrap(),
    )
    .unwrap();
    let layers = json["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| Layer {
            op_index: l["op_index"].as_u64().unwrap(),
            op: l["op"].as_str().unwrap().to_string(),
            tensor: l["tensor_index"].as_u64().unwrap() as usize,
            name: l["name"].as_str().unwrap_or("").to_string(),
        })
        .collect();
    let digests = json["sha256"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(seed, d)| {
            let d = d
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h.as_str().unwrap().to_string())
                .collect();
            (seed.parse().unwrap(), d)
        })
        .collect();
    (layers, digests)
}

macro_rules! realworld {
    ($name:ident, $file:literal, $stem:literal) => {
        mod $name {
            pub mod plan {
                kiln::include_model!($file);
            }
            pub mod every_layer {
                kiln::include_model!($file, preserve_all_tensors = true);
            }
        }

        #[test]
        fn $name() {
            let stem = $stem;
            check_model_file(stem);
            // Final outputs, default plan.
            {
                use $name::plan;
                check_golden!(plan, golden_dir(stem));
            }
            // Every layer, debug mode.
            let (layers, digests) = layers(stem);
            assert!(!layers.is_empty(), "{stem}: no layers");
            let samples = common::samples(&golden_dir(stem));
            assert_eq!(samples.len(), digests.len(), "{stem}: seeds");
            let mut m = $name::every_layer::Model::take().expect("taken once");
            for s in &samples {
                let want = &digests.iter().find(|(seed, _)| *seed == s.seed).unwrap().1;
                assert_eq!(want.len(), layers.len());
                m.reset();
                for (i, bytes) in s.inputs.iter().enumerate() {
                    m.input_bytes_mut(i).copy_from_slice(bytes);
                }
                m.invoke();
                for (l, want) in layers.iter().zip(want) {
                    let got = m
                        .tensor_bytes(l.tensor)
                        .unwrap_or_else(|| panic!("{stem}: no bytes for tensor {}", l.tensor));
                    assert!(
                        hex(&Sha256::digest(got)) == *want,
                        "{stem}: sample {}: op {} ({}) output, tensor {} `{}`, differs from \
                         TFLM (tools/gen_realworld_golden.py --dump {stem} DIR --seed {} writes \
                         TFLM's bytes)",
                        s.seed,
                        l.op_index,
                        l.op,
                        l.tensor,
                        l.name,
                        s.seed
                    );
                }
            }
        }
    };
}

realworld!(
    anomaly_detection,
    "../../shared/models/realworld/siliconlabs_anomaly_detection.tflite",
    "siliconlabs_anomaly_detection"
);
realworld!(
    fingerprint_signature_generator,
    "../../shared/models/realworld/siliconlabs_fingerprint_signature_generator.tflite",
    "siliconlabs_fingerprint_signature_generator"
);
realworld!(
    image_example1,
    "../../shared/models/realworld/siliconlabs_image_example1.tflite",
    "siliconlabs_image_example1"
);
realworld!(
    keyword_spotting_on_off_v3,
    "../../shared/models/realworld/siliconlabs_keyword_spotting_on_off_v3.tflite",
    "siliconlabs_keyword_spotting_on_off_v3"
);
realworld!(
    keyword_spotting_pacman_v3,
    "../../shared/models/realworld/siliconlabs_keyword_spotting_pacman_v3.tflite",
    "siliconlabs_keyword_spotting_pacman_v3"
);
realworld!(
    rock_paper_scissors,
    "../../shared/models/realworld/siliconlabs_rock_paper_scissors.tflite",
    "siliconlabs_rock_paper_scissors"
);
realworld!(
    tflite_micro_speech,
    "../../shared/models/realworld/siliconlabs_tflite_micro_speech.tflite",
    "siliconlabs_tflite_micro_speech"
);
realworld!(
    blazeface_front_128,
    "../../shared/models/realworld/openmv_blazeface_front_128.tflite",
    "openmv_blazeface_front_128"
);
realworld!(
    movenet_singlepose_192,
    "../../shared/models/realworld/openmv_movenet_singlepose_192.tflite",
    "openmv_movenet_singlepose_192"
);

// Typed I/O: the float model's input and outputs are `f32` arrays, the uint8 model's input a
// `u8` array with its `Quant<u8>` (MoveNet: the camera's bytes, 0..=255 for -1..=1).
const _: fn(&mut rock_paper_scissors::plan::Model) -> &mut [f32; 84 * 84] =
    rock_paper_scissors::plan::Model::input_mut;
const _: fn(&blazeface_front_128::plan::Model) -> &[f32; 512 * 16] =
    blazeface_front_128::plan::Model::output0;
const _: fn(&mut movenet_singlepose_192::plan::Model) -> &mut [u8; 192 * 192 * 3] =
    movenet_singlepose_192::plan::Model::input_mut;
const _: kiln::Quant<u8> = movenet_singlepose_192::plan::INPUT_QUANT;
const _: () = assert!(movenet_singlepose_192::plan::INPUT_ZERO_POINT == 127);
const _: () = assert!(rock_paper_scissors::plan::INPUT_SCALE == 0.0);

/// The float model through its typed accessors (a second instance over an arena of the
/// test's: `ModelIn::with_arena`): floats in, floats out, equal to TFLM's.
#[test]
fn float_model_through_typed_io() {
    use rock_paper_scissors::plan;
    assert_eq!(plan::INPUT_DTYPE, kiln::DType::F32);
    assert_eq!(plan::OUTPUT_DTYPE, kiln::DType::F32);
    let mut arena = Box::new(plan::Arena::new());
    let mut m = plan::ModelIn::with_arena(&mut arena);
    for s in common::samples(&golden_dir("siliconlabs_rock_paper_scissors")) {
        let floats: Vec<f32> = s.inputs[0]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        m.input_mut().copy_from_slice(&floats);
        m.invoke();
        let want: Vec<f32> = s.outputs[0]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let got = m.output();
        assert!(
            got.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "sample {}: {got:?} != {want:?}",
            s.seed
        );
    }
}

/// MoveNet's `INPUT_QUANT` maps about -1..=1 onto the bytes 0..=255 (scale 1/127.5 as an
/// `f32`, a hair above it, so 1.0 / scale rounds down to 127; zero point 127).
#[test]
fn uint8_input_quant() {
    let q = movenet_singlepose_192::plan::INPUT_QUANT;
    assert_eq!(
        (
            q.quantize(-1.0),
            q.quantize(0.0),
            q.quantize(1.0),
            q.quantize(1.01)
        ),
        (0, 127, 254, 255)
    );
    assert_eq!(
        (q.dequantize(0), q.dequantize(127)),
        (-127.0 * q.scale(), 0.0)
    );
}
