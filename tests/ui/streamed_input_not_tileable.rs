// A streamed input needs the operators that read the input to run in strips of rows:
// hello_world's first operator is a FULLY_CONNECTED over the whole input.
kiln::include_model!(
    "../../../shared/models/tflm_hello_world_int8.tflite",
    streamed_input = true
);

fn main() {}
