//! End to end: single-operator models of the binary family (comparisons, logical, select,
//! PRELU, SQUARED_DIFFERENCE, FLOOR_DIV/FLOOR_MOD, ADD_N and the int16/int64 forms of SUB,
//! MUL, MAXIMUM/MINIMUM), taken from their kernel-case bundles by
//! `tools/gen_binary_e2e_models.py` with golden data from TFLM. Each is compiled with
//! `include_model!`, so the emitted kernel calls must type-check, and run on its golden
//! inputs, compared byte for byte.

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
                    .join("tests/models/binary/golden")
                    .join(stringify!($name))
            );
        }
    };
}

golden!(equal_bool, "models/binary/equal_bool.tflite");
golden!(not_equal_int64, "models/binary/not_equal_int64.tflite");
golden!(greater_int8, "models/binary/greater_int8.tflite");
golden!(
    less_equal_float32,
    "models/binary/less_equal_float32.tflite"
);
golden!(logical_and_bool, "models/binary/logical_and_bool.tflite");
golden!(logical_or_bool, "models/binary/logical_or_bool.tflite");
golden!(logical_not_bool, "models/binary/logical_not_bool.tflite");
golden!(select_v2_int8, "models/binary/select_v2_int8.tflite");
golden!(select_v2_float32, "models/binary/select_v2_float32.tflite");
golden!(select_v2_int16, "models/binary/select_v2_int16.tflite");
golden!(prelu_int8, "models/binary/prelu_int8.tflite");
golden!(prelu_int16, "models/binary/prelu_int16.tflite");
golden!(prelu_float32, "models/binary/prelu_float32.tflite");
golden!(
    squared_difference_int8,
    "models/binary/squared_difference_int8.tflite"
);
golden!(
    squared_difference_int16,
    "models/binary/squared_difference_int16.tflite"
);
golden!(floor_div_float32, "models/binary/floor_div_float32.tflite");
golden!(floor_mod_float32, "models/binary/floor_mod_float32.tflite");
golden!(add_n_int8, "models/binary/add_n_int8.tflite");
golden!(add_n_float32, "models/binary/add_n_float32.tflite");
golden!(sub_int16, "models/binary/sub_int16.tflite");
golden!(mul_int16, "models/binary/mul_int16.tflite");
golden!(maximum_int64, "models/binary/maximum_int64.tflite");
golden!(minimum_int16, "models/binary/minimum_int16.tflite");
