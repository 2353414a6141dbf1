// A memory map too small for person detection: a compile error on the regions that names
// the region, its size, the bytes the buffer that did not fit needed there and the overage.
kiln::include_model!(
    "../../../shared/models/tflm_person_detect_int8.tflite",
    regions = [(".dtcm", 16 * 1024), (".sram", 8 * 1024)],
);

fn main() {}
