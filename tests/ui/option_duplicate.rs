// An option given twice: the error is on its second occurrence.
kiln::include_model!(
    "../models/mlp_int8.tflite",
    align = 8,
    ram_budget = 4096,
    align = 16
);

fn main() {}
