// The audio preprocessor uses TFLM's custom Signal operators, which Kiln has no kernel for.
kiln::include_model!("../../../shared/models/tflm_audio_preprocessor_int8.tflite");

fn main() {}
