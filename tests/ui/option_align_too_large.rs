// `align` must be at most 64, the largest alignment the runtime has a type for.
kiln::include_model!("../models/mlp_int8.tflite", align = 128);

fn main() {}
