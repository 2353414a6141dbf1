// An option without `= value`.
kiln::include_model!("../models/mlp_int8.tflite", ram_budget);

fn main() {}
