// A text file with a `.tflite` name.
kiln::include_model!("fixtures/not_a_model.tflite");

fn main() {}
