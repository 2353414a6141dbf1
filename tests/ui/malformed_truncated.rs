// The first 2048 bytes of `tests/models/mlp_int8.tflite`: the flatbuffer does not verify.
kiln::include_model!("fixtures/truncated.tflite");

fn main() {}
