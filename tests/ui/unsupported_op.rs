// Two operators Kiln has no kernel for (an unknown custom operator and TFLM's SignalStacker)
// around one it has: the error names both, with their types.
kiln::include_model!("../hostile/several_unsupported_ops.tflite");

fn main() {}
