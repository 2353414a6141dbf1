// An option Kiln does not know: the error names it and lists the options.
kiln::include_model!(
    "../models/mlp_int8.tflite",
    ram_budget = 4096,
    rom_budget = 4096
);

fn main() {}
