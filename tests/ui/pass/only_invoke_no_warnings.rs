// Generated code is warning-free in a binary that uses only part of it: here only `take()`
// and `invoke()` of models with and without state, weights, several inputs and outputs.
#![deny(warnings)]

mod mlp {
    kiln::include_model!("../../models/mlp_int8.tflite");
}

mod svdf {
    kiln::include_model!("../../models/svdf_int8.tflite");
}

mod add {
    kiln::include_model!("../../kernel_cases/models/add_int8.tflite");
}

mod features {
    kiln::include_model!("../../models/all_outputs/features_int8.tflite", ram_budget = BUDGET);
    const BUDGET: usize = 1 << 20;
}

fn main() {
    mlp::Model::take().unwrap().invoke();
    svdf::Model::take().unwrap().invoke();
    add::Model::take().unwrap().invoke();
    features::Model::take().unwrap().invoke();
}
