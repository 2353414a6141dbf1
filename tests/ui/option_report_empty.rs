// `report` names a folder for the plan reports: not an empty string.
kiln::include_model!("../models/mlp_int8.tflite", report = "");

fn main() {}
