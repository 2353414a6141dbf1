// `align` must be an integer literal.
kiln::include_model!("../models/mlp_int8.tflite", align = "x");

fn main() {}
