// An output scale of 1e-45 needs a requantization left shift of 142 bits: refused, naming the
// operator, the tensor whose scale is the culprit and every scale involved.
kiln::include_model!("../hostile/conv_output_scale_denormal.tflite");

fn main() {}
