// A RAM budget given as a path to a constant elsewhere in the crate: the compiler's error
// still says the bytes needed, the budget and the overage.
mod config {
    pub const BUDGET: usize = 2 * 1000;
}

mod model {
    kiln::include_model!("../models/cnn_int8.tflite", ram_budget = crate::config::BUDGET);
}

fn main() {}
