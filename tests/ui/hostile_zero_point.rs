// An int8 tensor with zero point 1000 (outside -128..=127): a malformed model.
kiln::include_model!("../hostile/relu_zero_point_1000.tflite");

fn main() {}
