// A flash budget that is a constant expression, checked by the compiler.
const KIB: usize = 1024;

kiln::include_model!("../models/cnn_int8.tflite", flash_budget = 4 * KIB);

fn main() {}
