// An empty file.
kiln::include_model!("fixtures/empty.tflite");

fn main() {}
