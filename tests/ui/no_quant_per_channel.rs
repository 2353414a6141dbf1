// An input or output quantized per channel (several scales) has a `kiln::NotQuantized`
// `*_QUANT`: quantizing or dequantizing with it is an error that says the tensor is not
// quantized per tensor (its channels' parameters are the model's own).
mod per_channel {
    kiln::include_model!("../quant/per_channel_int8.tflite");
}

fn main() {
    let _q: i8 = per_channel::INPUT_QUANT.quantize(0.5);
    let _x: f32 = per_channel::OUTPUT_QUANT.dequantize(0);
}
