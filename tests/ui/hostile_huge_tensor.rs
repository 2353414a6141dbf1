// A 1 KB file declaring 65535 x 65535 int8 tensors: no 32-bit core can hold one.
kiln::include_model!("../hostile/huge_tensors.tflite");

fn main() {}
