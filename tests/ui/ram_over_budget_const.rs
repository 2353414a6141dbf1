// A RAM budget that is a named constant: checked by the compiler in a `const` assertion.
const BUDGET: usize = 1024;

kiln::include_model!("../models/cnn_int8.tflite", ram_budget = BUDGET);

fn main() {}
