//! Kiln board template: a TensorFlow Lite model compiled into ESP32-C3 firmware (RISC-V,
//! `riscv32imc`, esp-hal).
//!
//! `include_model!` compiles `model/hello_world_int8.tflite` (TFLM's sine model) at build
//! time, within the chip's RAM less what the rest of the firmware needs; the firmware
//! quantizes float inputs (`INPUT_QUANT`), times every `invoke()` with the chip's system
//! timer, prints the dequantized results over the USB serial port (esp-println), then checks
//! its answers against TFLM's (`model/golden.rs`). Replace the model and the `SWEEP` loop
//! with your own.
//!
//! `cargo run --release`: flash and monitor with espflash (`.cargo/config.toml`).
#![no_std]
#![no_main]

use esp_backtrace as _;
use esp_hal::time::Instant;
use esp_println::println;

// The application descriptor the ESP-IDF bootloader that espflash writes checks.
esp_bootloader_esp_idf::esp_app_desc!();

/// The RAM the application may use: esp-hal's data RAM on the ESP32-C3 (the 400 KB of SRAM
/// less the 16 KB instruction cache and what the ROM and the bootloader keep), about 313 KB.
pub const RAM: usize = 313 * 1024;
/// What the firmware needs besides the model: the stack (esp-hal's default main stack takes
/// what `.bss` leaves; 32 KB is plenty for this application and `invoke()`), esp-hal's and
/// esp-println's statics.
pub const RESERVED: usize = 32 * 1024;

/// The compiled model: `Model`, `ARENA_BYTES`, `INPUT_QUANT`, ... (see the kiln docs). The
/// path is relative to this file. Kiln takes the fastest plan whose arena and state fit in
/// `RAM - RESERVED`; over it, the build fails and says by how much.
mod model {
    kiln::include_model!(
        "../model/hello_world_int8.tflite",
        ram_budget = crate::RAM,
        reserved_ram = crate::RESERVED
    );
}

/// TFLM's quantized inputs and outputs for the sweep (`model/golden.rs`).
mod golden {
    include!("../model/golden.rs");
}

#[esp_hal::main]
fn main() -> ! {
    let _peripherals = esp_hal::init(esp_hal::Config::default());

    let mut m = model::Model::take().unwrap();
    println!(
        "kiln on ESP32-C3: hello_world, arena {} B of a {} B budget, weights {} B, kernels {}",
        model::ARENA_BYTES,
        RAM - RESERVED,
        model::WEIGHTS_BYTES,
        kiln::kernels::ARCH
    );
    println!(
        "input {:?} {:?}, output {:?} {:?}",
        model::INPUT_DTYPE,
        model::INPUT_SHAPE,
        model::OUTPUT_DTYPE,
        model::OUTPUT_SHAPE
    );

    let mut mismatches = 0;
    let mut most = 0;
    for &(x, tflm_in, tflm_out) in golden::SWEEP.iter() {
        // Typed I/O: the float quantized to the input's int8 as TFLM's QUANTIZE does.
        let q = model::INPUT_QUANT.quantize(x);
        // Write the inputs before every invoke(): the arena reuses their bytes.
        m.input_mut()[0] = q;
        let start = Instant::now();
        m.invoke();
        let us = start.elapsed().as_micros();
        most = most.max(us);
        let out = m.output()[0];
        println!(
            "x = {} -> y = {} (int8 {} -> {}), {} us",
            x,
            model::OUTPUT_QUANT.dequantize(out),
            q,
            out,
            us
        );
        if q != tflm_in || out != tflm_out {
            mismatches += 1;
            println!(
                "MISMATCH at x = {x}: input {q} (TFLM {tflm_in}), output {out} (TFLM {tflm_out})"
            );
        }
    }
    println!("invoke(): at most {most} us");
    if mismatches == 0 {
        println!(
            "RESULT PASS: {} inputs, every output equals TFLM's",
            golden::SWEEP.len()
        );
    } else {
        println!(
            "RESULT FAIL: {mismatches} of {} differ from TFLM",
            golden::SWEEP.len()
        );
    }
    loop {
        core::hint::spin_loop();
    }
}
