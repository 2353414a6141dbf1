// `link_section` must be a string literal naming a section.
kiln::include_model!("../models/mlp_int8.tflite", link_section = sram2);

fn main() {}
