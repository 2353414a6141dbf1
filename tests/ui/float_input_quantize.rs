// A float32 input has nothing to quantize: `INPUT_QUANT` is a `kiln::NotQuantized<f32>`,
// and calling its `quantize` is an error that says the input holds `f32` values (not
// rustc's "cannot find value `INPUT_QUANT`").
mod model {
    kiln::include_model!("../models/mlp_float.tflite");
}

fn main() {
    let mut m = model::Model::take().unwrap();
    m.input_mut()[0] = model::INPUT_QUANT.quantize(0.5);
}
