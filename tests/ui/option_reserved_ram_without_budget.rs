// `reserved_ram` counts against `ram_budget`: alone it means nothing.
kiln::include_model!("../models/mlp_int8.tflite", reserved_ram = 8 * 1024);

fn main() {}
