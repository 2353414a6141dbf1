// Two models in one module: one error, whose name says to give each model its own module.
mod models {
    kiln::include_model!("../models/mlp_int8.tflite");
    kiln::include_model!("../models/cnn_int8.tflite");
}

fn main() {}
