// One section named twice in the memory map.
kiln::include_model!(
    "../../../shared/models/tflm_hello_world_int8.tflite",
    regions = [(".sram", 256), (".sram", 65536, 16)],
);

fn main() {}
