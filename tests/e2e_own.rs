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

/// A model compiled with `alias = false` (a buffer per tensor): the same bytes out as
/// TFLM, and a larger arena than with aliasing (module `$aliased`).
macro_rules! without_aliasing {
    ($name:ident, $aliased:ident, $file:literal) => {
        without_aliasing!($name, $aliased, $aliased, $file);
    };
    ($name:ident, $aliased:ident, $golden:ident, $file:literal) => {
        mod $name {
            kiln::include_model!($file, alias = false);
        }
        #[test]
        fn $name() {
            check_golden!(
                $name,
                common::repo_root()
                    .join("tests/models/golden")
                    .join(stringify!($golden))
            );
            const { assert!($aliased::ARENA_BYTES < $name::ARENA_BYTES) };
        }
    };
}

without_aliasing!(
    aliasing_int8_no_alias,
    aliasing_int8,
    "models/aliasing_int8.tflite"
);
without_aliasing!(
    depthwise_int8_no_alias,
    depthwise_int8_in_place,
    depthwise_int8,
    "models/depthwise_int8.tflite"
);
without_aliasing!(
    pointwise_int8_no_alias,
    pointwise_int8_in_place,
    pointwise_int8,
    "models/pointwise_int8.tflite"
);

/// An int8 model whose convolutions run in place over their inputs only under a RAM budget
/// (their fast kernels' in-place forms are slower, see `kiln_build::compile_tokens`): with
/// the budget `$budget` the same bytes out as TFLM in a smaller arena than without it
/// (module `$fast`).
macro_rules! in_place_under_budget {
    ($name:ident, $fast:ident, $file:literal, $budget:literal) => {
        mod $name {
            kiln::include_model!($file, ram_budget = $budget);
        }
        #[test]
        fn $name() {
            check_golden!(
                $name,
                common::repo_root()
                    .join("tests/models/golden")
                    .join(stringify!($fast))
            );
            const { assert!($name::ARENA_BYTES < $fast::ARENA_BYTES) };
        }
    };
}

in_place_under_budget!(
    depthwise_int8_in_place,
    depthwise_int8,
    "models/depthwise_int8.tflite",
    1296
);
in_place_under_budget!(
    pointwise_int8_in_place,
    pointwise_int8,
    "models/pointwise_int8.tflite",
    1668
);
