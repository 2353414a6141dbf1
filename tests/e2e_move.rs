//! End to end, the data-movement operators (SPACE_TO_DEPTH, DEPTH_TO_SPACE, MIRROR_PAD,
//! REVERSE_V2, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, DYNAMIC_UPDATE_SLICE, CONCATENATION,
//! PADV2, BROADCAST_TO, SHAPE, ZEROS_LIKE, FILL, BROADCAST_ARGS) chained in one graph
//! (`tests/models/move_*.tflite`, built by `tools/gen_move_models.py`): the generated code
//! compiles and gives TFLM's bytes on its golden inputs.

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

golden!(move_int8, "models/move_int8.tflite");
golden!(move_float, "models/move_float.tflite");

mod move_int8_unaliased {
    kiln::include_model!("models/move_int8.tflite", alias = false);
}

#[test]
fn move_int8_without_aliasing() {
    check_golden!(
        move_int8_unaliased,
        common::repo_root().join("tests/models/golden/move_int8")
    );
}
