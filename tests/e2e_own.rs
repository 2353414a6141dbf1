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
