// `align` must be a power of two.
kiln::include_model!("../models/mlp_int8.tflite", align = 3);

fn main() {}
