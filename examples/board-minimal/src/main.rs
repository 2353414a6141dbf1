//! The least a Kiln user crate needs on Cortex-M: a model, a runtime (`cortex-m-rt`), a
//! panic handler, and on Cortex-M0/M0+ a critical-section implementation (here cortex-m's
//! `critical-section-single-core` feature, see Cargo.toml). CI builds it for
//! `thumbv6m-none-eabi` and `thumbv7em-none-eabihf`; `examples/board-stm32f4` is the full
//! template (clocks, defmt, timing, a QEMU run).
#![no_std]
#![no_main]

use core::panic::PanicInfo;

// Links cortex-m, whose `critical-section-single-core` feature provides the critical
// section that `Model::take()` uses on cores without atomic compare-and-swap.
use cortex_m as _;

mod model {
    kiln::include_model!(
        "../../board-stm32f4/model/hello_world_int8.tflite",
        ram_budget = 8 * 1024
    );
}

#[cortex_m_rt::entry]
fn main() -> ! {
    let mut m = model::Model::take().unwrap();
    m.input_mut()[0] = 0;
    m.invoke();
    core::hint::black_box(m.output()[0]);
    loop {
        core::hint::spin_loop();
    }
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
