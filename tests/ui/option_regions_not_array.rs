// `regions` takes an array of `(section, size)` tuples of literals.
kiln::include_model!(
    "../../../shared/models/tflm_hello_world_int8.tflite",
    regions = (".dtcm", 16384),
);

fn main() {}
