// A literal RAM budget that only a tiling over the recomputation cap would meet: the error
// names the smallest arena Kiln reaches within `max_extra_macs` (two regions, the peak left
// in the strips) and why more strips do not go lower.
kiln::include_model!(
    "../models/cnn_int8.tflite",
    ram_budget = 2000,
    max_extra_macs = 1,
);

fn main() {}
