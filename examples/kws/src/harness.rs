//! What the example needs around the models, not of them: the semihosting stop points that
//! make instruction counts measurable under QEMU, the stack high-water mark, exiting with a
//! code, and a panic handler that reports and fails.

use core::panic::PanicInfo;
use core::ptr;

use cortex_m_semihosting::{debug, hprintln};

unsafe extern "C" {
    /// cortex-m-rt: the first RAM address after `.bss`/`.uninit` (the bottom of the stack
    /// region; there is no heap).
    static __sheap: u32;
    /// cortex-m-rt: the initial stack pointer (the top of RAM).
    static _stack_start: u32;
    /// cortex-m-rt: the bounds of `.data` and `.bss` (the statics in RAM).
    static __sdata: u32;
    static __ebss: u32;
}

/// Ends the QEMU run: exit code 0 if `ok`, else 1.
pub fn exit(ok: bool) -> ! {
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    #[allow(clippy::empty_loop)]
    loop {}
}

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    hprintln!("PANIC {}", info);
    hprintln!("RESULT FAIL");
    exit(false)
}

/// The stop point asked for on the semihosting command line (`stop=N`: QEMU's
/// `-semihosting-config enable=on,target=native,arg=kws,arg=stop=N`), else 0.
pub fn stop_point() -> u32 {
    let mut line = [0u8; 128];
    // SYS_GET_CMDLINE (0x15): block = [buffer address, its length]; the host writes a
    // NUL-terminated line into the buffer.
    let block = [line.as_mut_ptr() as usize, line.len() - 1];
    // SAFETY: the block names a live, writable buffer of the length given, one byte short of
    // `line`, so the host's NUL stays inside it.
    if unsafe { cortex_m_semihosting::syscall(0x15, &block) } != 0 {
        return 0;
    }
    // The host wrote `line` behind the compiler's back: read it through a volatile copy.
    // SAFETY: `line` is a live local array, read whole.
    let line = unsafe { ptr::read_volatile(&line) };
    let text = line.split(|&b| b == 0).next().unwrap_or(&[]);
    text.split(|&b| b == b' ')
        .filter_map(|arg| arg.strip_prefix(b"stop="))
        .filter_map(|digits| core::str::from_utf8(digits).ok()?.parse().ok())
        .next()
        .unwrap_or(0)
}

/// Exits with 0 right here when the run was asked to stop at point `here`. Execution is
/// deterministic, so the instructions between two stop points are the difference of the
/// totals of two runs (`../shared/tools/qemu-insn-count`).
#[inline(always)]
pub fn check_stop(stop: u32, here: u32) {
    if stop == here {
        exit(true);
    }
}

/// Written over the free stack before the work; a word still holding it afterwards was
/// never touched.
const PAINT: u32 = 0xC5AC_CE55;
/// Bytes left unpainted just below the painter's own stack pointer (its frame and the
/// calls it makes).
const MARGIN: usize = 64;

fn stack_bottom() -> usize {
    (ptr::addr_of!(__sheap) as usize + 3) & !3
}

/// Paints the free stack, from its bottom up to a little below the current stack pointer.
/// Returns that stack pointer: the work's high-water mark is measured below it.
#[inline(never)]
pub fn paint_stack() -> usize {
    let sp = cortex_m::register::msp::read() as usize;
    let mut p = stack_bottom();
    while p + MARGIN < sp {
        // SAFETY: [bottom, sp - MARGIN) is RAM between the end of the statics and the live
        // stack (cortex-m-rt puts the stack at the top of RAM, above `.bss`, and there is no
        // heap): nothing lives there, and this function's own frame is above it.
        unsafe { ptr::write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
    sp
}

/// The lowest stack address written since `paint_stack` returned `sp`, and whether that is
/// the bottom of the painted region (then the stack may have overflowed).
#[inline(never)]
pub fn stack_low(sp: usize) -> (usize, bool) {
    let bottom = stack_bottom();
    let mut p = bottom;
    // SAFETY: [bottom, sp - MARGIN) is RAM below the live stack, painted by `paint_stack`.
    while p + MARGIN < sp && unsafe { ptr::read_volatile(p as *const u32) } == PAINT {
        p += 4;
    }
    (p, p == bottom)
}

/// Bytes of statics in RAM (`.data` and `.bss`: the shared arena, the state, the features
/// and the take-once flags).
pub fn static_ram() -> usize {
    ptr::addr_of!(__ebss) as usize - ptr::addr_of!(__sdata) as usize
}

/// The top of the stack (its first push goes just below).
pub fn stack_top() -> usize {
    ptr::addr_of!(_stack_start) as usize
}
