//! Kiln board template: a TensorFlow Lite model compiled into STM32F411 firmware.
//!
//! `include_model!` compiles `model/hello_world_int8.tflite` (TFLM's sine model) at build
//! time; the firmware quantizes float inputs, times every `invoke()` with the DWT cycle
//! counter and logs the dequantized results with defmt, then checks its answers against
//! TFLM's (`model/golden.rs`). Replace the model, the `SWEEP` loop and `board::init` with
//! your own.
//!
//! - `cargo run --release`: flash and run on the board through a debug probe (probe-rs,
//!   defmt over RTT; `.cargo/config.toml` names the chip).
//! - `cargo qemu`: the same application under QEMU's netduinoplus2 (STM32F405), text over
//!   semihosting, exit code 0 only if every output equals TFLM's (CI: `.ci/board.sh`).
#![no_std]
#![no_main]

use cortex_m::peripheral::DWT;
use cortex_m_rt::entry;

#[cfg(all(feature = "probe", feature = "qemu"))]
compile_error!(
    "features `probe` and `qemu` exclude each other: `cargo qemu` turns off the default `probe`"
);
#[cfg(not(any(feature = "probe", feature = "qemu")))]
compile_error!("enable `probe` (the default: a real board) or `qemu`");

/// The compiled model: `Model`, `ARENA_BYTES`, `INPUT_SCALE`, ... (see the kiln docs). The
/// path is relative to this file. The RAM budget leaves 64 KB of the 128 KB for the stack
/// and the rest of the firmware: over it, the build fails and says by how much.
mod model {
    kiln::include_model!("../model/hello_world_int8.tflite", ram_budget = 64 * 1024);
}

/// TFLM's quantized inputs and outputs for the sweep, from `model/gen_golden.py`.
mod golden {
    include!("../model/golden.rs");
}

/// Logs a line: defmt on the board, semihosting text under QEMU. Format strings are the
/// common subset of both (`{}` of integers, floats and `&str`).
#[cfg(feature = "probe")]
macro_rules! log {
    ($($t:tt)*) => { defmt::info!($($t)*) };
}
#[cfg(feature = "qemu")]
macro_rules! log {
    ($($t:tt)*) => { cortex_m_semihosting::hprintln!($($t)*) };
}

#[entry]
fn main() -> ! {
    let mut cp = cortex_m::Peripherals::take().unwrap();
    let hz = board::init();
    // The cycle counter (reads 0 under QEMU, which does not count cycles).
    cp.DCB.enable_trace();
    cp.DWT.enable_cycle_counter();

    let mut m = model::Model::take().unwrap();
    log!(
        "kiln on {}: hello_world, arena {} B, weights {} B, clock {} MHz",
        board::NAME,
        model::ARENA_BYTES,
        model::WEIGHTS_BYTES,
        hz / 1_000_000
    );
    log!(
        "input {:?} {:?}, output {:?} {:?}",
        model::INPUT_DTYPE,
        model::INPUT_SHAPE,
        model::OUTPUT_DTYPE,
        model::OUTPUT_SHAPE
    );

    let mut mismatches = 0u32;
    let mut most = 0u32;
    for &(x, tflm_in, tflm_out) in golden::SWEEP.iter() {
        let q = model::INPUT_QUANT.quantize(x);
        // Write the inputs before every invoke(): the arena reuses their bytes.
        m.input_mut()[0] = q;
        let start = DWT::cycle_count();
        m.invoke();
        let cycles = DWT::cycle_count().wrapping_sub(start);
        most = most.max(cycles);
        let out = m.output()[0];
        if cycles == 0 {
            // Not counted (QEMU): no "0 cycles".
            log!(
                "x = {} -> y = {} (int8 {} -> {})",
                x,
                model::OUTPUT_QUANT.dequantize(out),
                q,
                out
            );
        } else {
            log!(
                "x = {} -> y = {} (int8 {} -> {}), {} cycles",
                x,
                model::OUTPUT_QUANT.dequantize(out),
                q,
                out,
                cycles
            );
        }
        if q != tflm_in || out != tflm_out {
            mismatches += 1;
            log!(
                "MISMATCH at x = {}: input {} (TFLM {}), output {} (TFLM {})",
                x,
                q,
                tflm_in,
                out,
                tflm_out
            );
        }
    }
    let us = most / (hz / 1_000_000).max(1);
    if most == 0 {
        log!(
            "invoke(): cycles not counted (the DWT cycle counter reads 0: QEMU does not count cycles; run it on the board)"
        );
    } else {
        log!(
            "invoke(): at most {} cycles ({} us at {} MHz)",
            most,
            us,
            hz / 1_000_000
        );
    }
    if mismatches == 0 {
        log!(
            "RESULT PASS: {} inputs, every output equals TFLM's",
            golden::SWEEP.len()
        );
    } else {
        log!(
            "RESULT FAIL: {} of {} differ from TFLM",
            mismatches,
            golden::SWEEP.len()
        );
    }
    board::exit(mismatches == 0)
}

/// The real board: clocks, defmt over RTT, panics to probe-rs.
#[cfg(feature = "probe")]
mod board {
    use defmt_rtt as _;
    use panic_probe as _;
    use stm32f4xx_hal::{pac, prelude::*, rcc::Config};

    pub const NAME: &str = "STM32F411";

    /// Runs the core at 84 MHz from the internal oscillator through the PLL (no crystal
    /// needed, so the Black Pill and the Nucleo both work); returns the core clock in Hz.
    /// 84 MHz is the most the regulator's reset scale allows on the F411 (and the F401's
    /// maximum); for the F411's 100 MHz set PWR_CR.VOS to scale 1 first (the HAL does not).
    pub fn init() -> u32 {
        let dp = pac::Peripherals::take().unwrap();
        let rcc = dp.RCC.freeze(Config::hsi().sysclk(84.MHz()));
        rcc.clocks.sysclk().raw()
    }

    /// Stays here (probe-rs keeps printing the log until Ctrl-C); a mismatch panics, which
    /// panic-probe reports and probe-rs turns into a failing exit code.
    pub fn exit(ok: bool) -> ! {
        if !ok {
            defmt::panic!("outputs differ from TFLM");
        }
        loop {
            core::hint::spin_loop();
        }
    }
}

/// QEMU's netduinoplus2: no clock setup (QEMU has no RCC model), exit over semihosting.
#[cfg(feature = "qemu")]
mod board {
    use core::panic::PanicInfo;
    use cortex_m_semihosting::{debug, hprintln};
    // The HAL's device crate supplies the interrupt vectors, as on the board.
    use stm32f4xx_hal as _;

    pub const NAME: &str = "QEMU netduinoplus2 (STM32F405)";

    /// The reset clock (16 MHz internal oscillator); QEMU does not emulate the RCC.
    pub fn init() -> u32 {
        16_000_000
    }

    pub fn exit(ok: bool) -> ! {
        debug::exit(if ok {
            debug::EXIT_SUCCESS
        } else {
            debug::EXIT_FAILURE
        });
        loop {
            core::hint::spin_loop();
        }
    }

    #[panic_handler]
    fn panic(info: &PanicInfo) -> ! {
        hprintln!("{}", info);
        hprintln!("RESULT FAIL");
        exit(false)
    }
}
