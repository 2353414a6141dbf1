// A literal RAM budget below what a model of fully connected layers needs: the error names
// the smallest arena Kiln reaches and the operator at the peak that cannot run in strips of
// rows, and why.
kiln::include_model!(
    "../../../shared/models/mlperf_tiny_ad_autoencoder_int8.tflite",
    ram_budget = 256,
);

fn main() {}
