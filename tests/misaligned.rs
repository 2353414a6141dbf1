//! Models whose scalars, offsets and vectors of scalars sit at misaligned bytes
//! (`tests/misaligned/`, rewritten from `tests/models` by `tools/gen_misaligned_models.py`:
//! int64 zero points at 4 mod 8 and other residues, shapes and operator inputs off 4, every
//! multi-byte table field off its size, buffers' u64 `offset`/`size` too). Some converters
//! write such files and TFLM runs them: `include_model!` compiles them, their outputs are the
//! pinned TFLM's (run on the misaligned files) byte for byte, and the reader sees the graph
//! of the aligned original. (`planner/src/reader/misaligned_tests.rs` compares every
//! flatbuffer field read and checks the files are misaligned as claimed.)

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
                    .join("tests/misaligned/golden")
                    .join(stringify!($name))
            );
        }
    };
}

golden!(mlp_int8, "misaligned/mlp_int8.tflite");
golden!(depthwise_int8, "misaligned/depthwise_int8.tflite");
golden!(lstm_int8, "misaligned/lstm_int8.tflite");

#[test]
fn the_reader_sees_the_aligned_originals_graph() {
    for name in ["mlp_int8", "depthwise_int8", "lstm_int8"] {
        let read = |dir: &str| {
            let path = common::repo_root().join(format!("tests/{dir}/{name}.tflite"));
            let mut g = kiln_planner::read_model(&std::fs::read(&path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // Where a constant's bytes start in the file is all that may differ.
            for t in &mut g.tensors {
                if let kiln_planner::ir::TensorKind::Constant { offset, .. } = &mut t.kind {
                    *offset = 0;
                }
            }
            g
        };
        assert_eq!(read("models"), read("misaligned"), "{name}");
    }
}
