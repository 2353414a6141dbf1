// A region's size must be a literal number of bytes: the planner needs it while the macro
// expands.
const DTCM: usize = 16384;
kiln::include_model!(
    "../../../shared/models/tflm_hello_world_int8.tflite",
    regions = [(".dtcm", DTCM), (".sram", 65536)],
);

fn main() {}
