// A reserved size given as a named constant: checked by the compiler, with the numbers,
// on the constant.
const STACK: usize = 2048;

kiln::include_model!("../models/cnn_int8.tflite", ram_budget = 4096, reserved_ram = STACK);

fn main() {}
