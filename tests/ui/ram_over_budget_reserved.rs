// With `reserved_ram`, `ram_budget` is the device's whole RAM: the model fits in 4 KiB on
// its own (2832 B untiled), not beside 2 KiB the firmware reserves. The error says the bytes
// needed (arena + persistent + reserved), the budget, the overage and the reserved part.
kiln::include_model!(
    "../models/cnn_int8.tflite",
    ram_budget = 4 * 1024,
    reserved_ram = 2 * 1024,
);

fn main() {}
