// With `reserved_ram`, `ram_budget` is the device's whole RAM: the model fits in 4 KiB on
// its own (2832 B untiled), not beside the 2.5 KiB the firmware reserves (two regions fit
// beside 2 KiB). The error says the bytes needed, the budget, the overage, the reserved part.
kiln::include_model!(
    "../models/cnn_int8.tflite",
    ram_budget = 4 * 1024,
    reserved_ram = 2560,
);

fn main() {}
