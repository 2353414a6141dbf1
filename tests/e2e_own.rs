//! End to end: Kiln's own test models (`tests/models`, built by `tools/gen_test_models.py`)
//! compiled with `include_model!`, run on their TFLM golden inputs, compared byte for byte.

mod common;

macro_rules! golden {
    ($name:ident, $file:literal) => {
        mod $name {
            kiln::include_model!($file);
        }
        #[test]
        fn $name() {
            check_golden!(
                $name,
                common::repo_root()
                    .join("tests/models/golden")
                    .join(stringify!($name))
            );
        }
    };
}

golden!(mlp_int8, "models/mlp_int8.tflite");
golden!(mlp_float, "models/mlp_float.tflite");
golden!(cnn_int8, "models/cnn_int8.tflite");
golden!(cnn_float, "models/cnn_float.tflite");
golden!(branches_int8, "models/branches_int8.tflite");
golden!(branches_float, "models/branches_float.tflite");
golden!(svdf_int8, "models/svdf_int8.tflite");
golden!(lstm_int8, "models/lstm_int8.tflite");
golden!(aliasing_int8, "models/aliasing_int8.tflite");
golden!(aliasing_float, "models/aliasing_float.tflite");
golden!(depthwise_int8, "models/depthwise_int8.tflite");
golden!(depthwise_float, "models/depthwise_float.tflite");
golden!(pointwise_int8, "models/pointwise_int8.tflite");
golden!(pointwise_float, "models/pointwise_float.tflite");

/// The aliasing model without aliasing: the same bytes out.
mod aliasing_int8_no_alias {
    kiln::include_model!("models/aliasing_int8.tflite", alias = false);
}

#[test]
fn aliasing_int8_no_alias() {
    check_golden!(
        aliasing_int8_no_alias,
        common::repo_root().join("tests/models/golden/aliasing_int8")
    );
    // With aliasing the arena is smaller (views, in place, concatenation slices).
    const { assert!(aliasing_int8::ARENA_BYTES < aliasing_int8_no_alias::ARENA_BYTES) };
}

/// The depthwise model without aliasing: the same bytes out, a larger arena.
mod depthwise_int8_no_alias {
    kiln::include_model!("models/depthwise_int8.tflite", alias = false);
}

#[test]
fn depthwise_int8_no_alias() {
    check_golden!(
        depthwise_int8_no_alias,
        common::repo_root().join("tests/models/golden/depthwise_int8")
    );
    const { assert!(depthwise_int8::ARENA_BYTES < depthwise_int8_no_alias::ARENA_BYTES) };
}

/// The pointwise model without aliasing: the same bytes out, a larger arena.
mod pointwise_int8_no_alias {
    kiln::include_model!("models/pointwise_int8.tflite", alias = false);
}

#[test]
fn pointwise_int8_no_alias() {
    check_golden!(
        pointwise_int8_no_alias,
        common::repo_root().join("tests/models/golden/pointwise_int8")
    );
    const { assert!(pointwise_int8::ARENA_BYTES < pointwise_int8_no_alias::ARENA_BYTES) };
}
