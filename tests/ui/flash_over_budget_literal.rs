// A literal flash budget below the model's weights and constants.
kiln::include_model!("../models/cnn_int8.tflite", flash_budget = 4096);

fn main() {}
