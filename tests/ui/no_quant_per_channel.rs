// No `*_QUANT` for an input quantized per channel (several scales), nor for a float input:
// using one is a plain "not found" error.
mod per_channel {
    kiln::include_model!("../quant/per_channel_int8.tflite");
}

mod float {
    kiln::include_model!("../models/mlp_float.tflite");
}

fn main() {
    let _ = per_channel::INPUT_QUANT;
    let _ = per_channel::OUTPUT_QUANT;
    let _ = float::INPUT_QUANT;
}
