// `preserve_all_tensors` must be `true` or `false`.
kiln::include_model!("../models/mlp_int8.tflite", preserve_all_tensors = 1);

fn main() {}
