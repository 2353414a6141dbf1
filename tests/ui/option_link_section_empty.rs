// `link_section` must name a section: not empty, no spaces.
kiln::include_model!("../models/mlp_int8.tflite", link_section = " ");

fn main() {}
