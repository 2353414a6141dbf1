// A literal RAM budget far below what person detection needs: a compile error that says
// the bytes needed, the budget, by how much it is over, and the peak op with its tensors.
kiln::include_model!(
    "../../../shared/models/tflm_person_detect_int8.tflite",
    ram_budget = 16 * 1024,
);

fn main() {}
