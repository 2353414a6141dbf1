// No such file, neither beside this file nor in the crate's directory.
kiln::include_model!("no_such_model.tflite");

fn main() {}
