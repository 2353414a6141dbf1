// A weight buffer whose bytes are after the flatbuffer (`offset`/`size`): TFLM does not read
// them, Kiln refuses the model (tools/gen_misaligned_models.py writes the fixture).
kiln::include_model!("fixtures/external_buffer.tflite");

fn main() {}
