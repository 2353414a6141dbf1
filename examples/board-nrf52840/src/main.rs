//! Kiln board template: a TensorFlow Lite model compiled into nRF52840 firmware (Nordic's
//! Cortex-M4F with the DSP extension: nRF52840-DK, Dongle, Feather), with embassy.
//!
//! `include_model!` compiles `model/hello_world_int8.tflite` (TFLM's sine model) at build
//! time, within the chip's RAM less what the rest of the firmware needs; the firmware
//! quantizes float inputs (`INPUT_QUANT`), times every `invoke()` with the M33's cycle
//! counter (DWT), logs the dequantized results with defmt, then checks its answers against TFLM's (`model/golden.rs`). Replace the model and
//! the `SWEEP` loop with your own.
//!
//! `cargo run --release`: flash and run through a debug probe (probe-rs, defmt over RTT).
#![no_std]
#![no_main]

use cortex_m::peripheral::DWT;
use defmt::info;
use embassy_executor::Spawner;
use {defmt_rtt as _, panic_probe as _};

/// The nRF52840's RAM: 256 KB.
pub const RAM: usize = 256 * 1024;
/// What the firmware needs besides the model: the stack (cortex-m-rt puts it at the top of
/// RAM; `invoke()` takes under 2 KB) and embassy's and defmt's statics; 16 KB leaves room
/// (with Nordic's SoftDevice for Bluetooth, also the RAM it reserves at the start).
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
    // Clocks and embassy's time driver (RTC1); the core runs at 64 MHz.
    let _p = embassy_nrf::init(Default::default());
    let hz: u32 = 64_000_000;
    // The cycle counter.
    let mut cp = cortex_m::Peripherals::take().unwrap();
    cp.DCB.enable_trace();
    cp.DWT.enable_cycle_counter();

    // `take()` hands the model out once (an atomic flag on the M4).
    let mut m = model::Model::take().unwrap();
    info!(
        "kiln on nRF52840: hello_world, arena {} B of a {} B budget, weights {} B, kernels {}",
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
    let mut most = 0u32;
    for &(x, tflm_in, tflm_out) in golden::SWEEP.iter() {
        // Typed I/O: the float quantized to the input's int8 as TFLM's QUANTIZE does.
        let q = model::INPUT_QUANT.quantize(x);
        // Write the inputs before every invoke(): the arena reuses their bytes.
        m.input_mut()[0] = q;
        let start = DWT::cycle_count();
        m.invoke();
        let cycles = DWT::cycle_count().wrapping_sub(start);
        most = most.max(cycles);
        let out = m.output()[0];
        info!(
            "x = {} -> y = {} (int8 {} -> {}), {} cycles",
            x,
            model::OUTPUT_QUANT.dequantize(out),
            q,
            out,
            cycles
        );
        if q != tflm_in || out != tflm_out {
            mismatches += 1;
            info!(
                "MISMATCH at x = {}: input {} (TFLM {}), output {} (TFLM {})",
                x, q, tflm_in, out, tflm_out
            );
        }
    }
    info!(
        "invoke(): at most {} cycles ({} us at {} MHz)",
        most,
        most / (hz / 1_000_000).max(1),
        hz / 1_000_000
    );
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
