//! Kiln board template: a TensorFlow Lite model compiled into RP2040 firmware (Raspberry Pi
//! Pico: two Cortex-M0+ cores), with embassy.
//!
//! `include_model!` compiles `model/hello_world_int8.tflite` (TFLM's sine model) at build
//! time, within the chip's RAM less what the rest of the firmware needs; the firmware
//! quantizes float inputs (`INPUT_QUANT`), times every `invoke()` with the chip's 1 MHz timer
//! (`embassy_time::Instant`; the M0+ has no cycle counter), logs the dequantized results with
//! defmt, then checks its answers against TFLM's (`model/golden.rs`). Replace the model and
//! the `SWEEP` loop with your own.
//!
//! `cargo run --release`: flash and run through a debug probe (probe-rs, defmt over RTT).
#![no_std]
#![no_main]

use defmt::info;
use embassy_executor::Spawner;
use embassy_time::Instant;
use {defmt_rtt as _, panic_probe as _};

/// The RP2040's SRAM: six banks, 264 KB.
pub const RAM: usize = 264 * 1024;
/// What the firmware needs besides the model: the stack (cortex-m-rt puts it at the top of
/// RAM; `invoke()` takes under 2 KB) and embassy's and defmt's statics; 16 KB leaves room.
pub const RESERVED: usize = 16 * 1024;

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

#[embassy_executor::main]
async fn main(_spawner: Spawner) {
    // Clocks (125 MHz from the crystal), the timer behind `Instant`, the spinlocks behind
    // the critical section `Model::take()` uses.
    let _p = embassy_rp::init(Default::default());

    // `take()` is safe on either core: its flag is set under embassy-rp's multicore
    // critical section. (`with_arena` over a buffer of yours needs no critical section.)
    let mut m = model::Model::take().unwrap();
    info!(
        "kiln on RP2040: hello_world, arena {} B of a {} B budget, weights {} B, kernels {}",
        model::ARENA_BYTES,
        RAM - RESERVED,
        model::WEIGHTS_BYTES,
        kiln::kernels::ARCH
    );
    info!(
        "input {:?} {:?}, output {:?} {:?}",
        model::INPUT_DTYPE,
        model::INPUT_SHAPE,
        model::OUTPUT_DTYPE,
        model::OUTPUT_SHAPE
    );

    let mut mismatches = 0u32;
    let mut most = 0u64;
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
        info!(
            "x = {} -> y = {} (int8 {} -> {}), {} us",
            x,
            model::OUTPUT_QUANT.dequantize(out),
            q,
            out,
            us
        );
        if q != tflm_in || out != tflm_out {
            mismatches += 1;
            info!(
                "MISMATCH at x = {}: input {} (TFLM {}), output {} (TFLM {})",
                x, q, tflm_in, out, tflm_out
            );
        }
    }
    info!("invoke(): at most {} us", most);
    if mismatches != 0 {
        defmt::panic!(
            "RESULT FAIL: {} of {} differ from TFLM",
            mismatches,
            golden::SWEEP.len()
        );
    }
    info!(
        "RESULT PASS: {} inputs, every output equals TFLM's",
        golden::SWEEP.len()
    );
}
