// `report` names a folder for the plan reports: a string literal.
kiln::include_model!("../models/mlp_int8.tflite", report = target::kiln);

fn main() {}
