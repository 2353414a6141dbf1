// A CONV_2D with stride 0 (TFLM runs it, reading one pixel for every output).
kiln::include_model!("../hostile/conv_stride_zero.tflite");

fn main() {}
