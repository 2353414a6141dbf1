// `tests/models/mlp_int8.tflite` rewritten with its second tensor's table at 2 mod 4
// (tools/gen_misaligned_models.py): scalars and vectors of scalars may sit at any byte, but
// a table must be aligned; the message names the check and the table, not truncation.
kiln::include_model!("fixtures/misaligned_table.tflite");

fn main() {}
