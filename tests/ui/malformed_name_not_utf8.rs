// `tests/models/mlp_int8.tflite` with a tensor name that is not UTF-8
// (tools/gen_misaligned_models.py): the message names the string and the bad bytes.
kiln::include_model!("fixtures/name_not_utf8.tflite");

fn main() {}
