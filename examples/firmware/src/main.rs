//! Kiln on a Cortex-M or a RISC-V core under QEMU: one public model compiled into the firmware by
//! `include_model!`, run on TFLM's golden sample s1, compared byte for byte.
//!
//! The firmware runs `reset(); write inputs; invoke()` twice (the second run checks that
//! `invoke()` is repeatable), prints the outputs and the stack high-water mark of `invoke()`
//! over semihosting and exits 0 only if both runs reproduce TFLM's bytes in every output,
//! else 1. A mismatch names the output (in an all-outputs variant, the layer), the first byte
//! that differs with both values, and how many bytes and outputs differ.
//!
//! Build and run (model from `KILN_MODEL`, board from the target; see `build.rs`):
//! `KILN_MODEL=tflm_person_detect_int8 cargo run --release`
//!
//! Benchmark hook: with a semihosting argument `stop=N` (QEMU
//! `-semihosting-config enable=on,target=native,arg=fw,arg=stop=N`) the firmware exits
//! (code 0) right at stop point N: 1 = before the first `invoke()` (inputs written), 2 = just
//! after it, 3 = before the second `invoke()`, 4 = after it. Execution is deterministic, so
//! instructions(stop 2) - instructions(stop 1) is the cost of one `invoke()`
//! (plus the few instructions of the stop check and the call).
//!
//! Every layer (`KILN_LAYERS=1`, debug mode): after the first `invoke()` the firmware also
//! hashes (sha256) every operator-produced tensor and compares it with TFLM's digest of that
//! layer; a mismatch names the layer (its position in op order and its tensor index).
//!
//! No `core::fmt`: the output is written by hand so the harness stays small and the code
//! size measured is mostly Kiln's.
//!
//! Architectures: Cortex-M (cortex-m-rt, cortex-m-semihosting) and RV32 (riscv-rt,
//! riscv-semihosting, on QEMU's `virt` machine); the two differ only in the runtime crates
//! (same API for semihosting), the interrupt table and the few instructions of `sp()` and
//! `paint_stack()`.
#![no_std]
#![no_main]

use core::arch::asm;
use core::panic::PanicInfo;
use core::ptr;

#[cfg(target_arch = "arm")]
use cortex_m_rt::entry;
#[cfg(target_arch = "arm")]
use cortex_m_semihosting as semihosting;
#[cfg(target_arch = "riscv32")]
use riscv_rt::entry;
#[cfg(target_arch = "riscv32")]
use riscv_semihosting as semihosting;
use semihosting::{debug, hio};
use sha2::{Digest, Sha256};

#[allow(clippy::all, dead_code, unused_doc_comments)]
mod model {
    include!(concat!(env!("OUT_DIR"), "/model.rs"));
}

/// The device interrupt part of the vector table (cortex-m-rt feature `device`): 32 reserved
/// entries, as the CMSDK-based boards have; the firmware enables no interrupt.
#[cfg(target_arch = "arm")]
#[unsafe(link_section = ".vector_table.interrupts")]
#[unsafe(no_mangle)]
#[used]
static __INTERRUPTS: [usize; 32] = [0; 32];

/// Written below the stack pointer before `invoke()`; a word still holding it afterwards was
/// not touched.
const PAINT: u32 = 0xC5AC_CE55;

unsafe extern "C" {
    /// cortex-m-rt, riscv-rt: the first free RAM address after `.bss`/`.uninit` (bottom of
    /// the stack region; there is no heap).
    static mut __sheap: u32;
    /// cortex-m-rt, riscv-rt: the initial stack pointer (top of RAM).
    static _stack_start: u32;
}

/// Semihosting output, one write per line.
struct Out {
    buf: [u8; 120],
    len: usize,
}

impl Out {
    const fn new() -> Self {
        Out {
            buf: [0; 120],
            len: 0,
        }
    }

    #[inline(never)]
    fn bytes(&mut self, s: &[u8]) -> &mut Self {
        for &b in s {
            if self.len == self.buf.len() {
                self.flush();
            }
            if let Some(slot) = self.buf.get_mut(self.len) {
                *slot = b;
                self.len += 1;
            }
            if b == b'\n' {
                self.flush();
            }
        }
        self
    }

    #[inline(never)]
    fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    #[inline(never)]
    fn dec(&mut self, v: usize) -> &mut Self {
        let mut d = [0u8; 10];
        let mut i = d.len();
        let mut v = v as u32;
        for slot in d.iter_mut().rev() {
            i -= 1;
            *slot = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.bytes(d.get(i..).unwrap_or(&[]))
    }

    #[inline(never)]
    fn hex(&mut self, b: u8) -> &mut Self {
        const H: &[u8; 16] = b"0123456789abcdef";
        self.bytes(&[H[usize::from(b >> 4)], H[usize::from(b & 15)]])
    }

    #[inline(never)]
    fn flush(&mut self) {
        if self.len > 0 {
            if let Ok(mut h) = hio::hstdout() {
                let _ = h.write_all(self.buf.get(..self.len).unwrap_or(&[]));
            }
            self.len = 0;
        }
    }
}

fn exit(ok: bool) -> ! {
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
    let mut out = Out::new();
    out.str("PANIC");
    if let Some(l) = info.location() {
        out.str(" at ")
            .str(l.file())
            .str(":")
            .dec(l.line() as usize);
    }
    out.str("\nRESULT FAIL\n");
    exit(false)
}

/// RISC-V: an exception (illegal instruction, access fault, misaligned access) ends the run as
/// a failure instead of riscv-rt's default, a loop that would only end at CI's timeout.
#[cfg(target_arch = "riscv32")]
#[unsafe(export_name = "ExceptionHandler")]
fn exception_handler(_frame: &riscv_rt::TrapFrame) -> ! {
    let mut out = Out::new();
    out.str("EXCEPTION mcause=")
        .dec(riscv::register::mcause::read().bits())
        .str(" mepc=")
        .dec(riscv::register::mepc::read())
        .str("\nRESULT FAIL\n");
    exit(false)
}

/// The stop point asked for on the semihosting command line (`stop=N`), else 0.
#[inline(never)]
fn stop_point() -> u32 {
    let mut line = [0u8; 128];
    // SYS_GET_CMDLINE (0x15): block = [buffer, length]; QEMU writes a NUL-terminated line.
    let block = [line.as_mut_ptr() as usize, line.len() - 1];
    // SAFETY: the block points at a live buffer of the length given.
    if unsafe { semihosting::syscall(0x15, &block) } != 0 {
        return 0;
    }
    // Finds "stop=" and reads the digits after it. Byte by byte (volatile: the host wrote
    // the buffer behind the compiler's back), in a plain loop that stays small.
    const KEY: &[u8] = b"stop=";
    let (mut matched, mut n, mut found) = (0, 0u32, false);
    for i in 0..line.len() {
        // SAFETY: `i` is in bounds of `line`.
        let b = unsafe { ptr::read_volatile(line.as_ptr().add(i)) };
        if b == 0 {
            break;
        }
        if found {
            if !b.is_ascii_digit() {
                break;
            }
            n = n * 10 + u32::from(b - b'0');
        } else if KEY.get(matched) == Some(&b) {
            matched += 1;
            found = matched == KEY.len();
        } else {
            matched = usize::from(b == b's');
        }
    }
    n
}

#[inline(always)]
fn check_stop(stop: u32, here: u32) {
    if stop == here {
        exit(true);
    }
}

#[inline(always)]
fn sp() -> usize {
    let sp: usize;
    // SAFETY: reads the stack pointer.
    #[cfg(target_arch = "arm")]
    unsafe {
        asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
    };
    // SAFETY: reads the stack pointer.
    #[cfg(target_arch = "riscv32")]
    unsafe {
        asm!("mv {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
    };
    sp
}

/// Fills every word from the bottom of the stack region up to the current stack pointer
/// with `PAINT`. In assembly, so that painting itself touches no stack.
#[inline(always)]
fn paint_stack() {
    let bottom = ptr::addr_of_mut!(__sheap) as usize;
    let bottom = (bottom + 3) & !3;
    // SAFETY: [bottom, sp) is free RAM below the live stack (cortex-m-rt puts the stack at
    // the top of RAM, above .bss/.uninit, and there is no heap); nothing live is below sp.
    #[cfg(target_arch = "arm")]
    unsafe {
        asm!(
            "mov {p}, sp",
            "2:",
            "subs {p}, #4",
            "str {pat}, [{p}]",
            "cmp {p}, {bot}",
            "bhi 2b",
            p = out(reg) _,
            pat = in(reg) PAINT,
            bot = in(reg) bottom,
            options(nostack),
        );
    }
    // SAFETY: as above (riscv-rt also puts the stack at the top of RAM, above .bss/.uninit).
    #[cfg(target_arch = "riscv32")]
    unsafe {
        asm!(
            "mv {p}, sp",
            "2:",
            "addi {p}, {p}, -4",
            "sw {pat}, 0({p})",
            "bltu {bot}, {p}, 2b",
            p = out(reg) _,
            pat = in(reg) PAINT,
            bot = in(reg) bottom,
            options(nostack),
        );
    }
}

/// The lowest stack address written since `paint_stack` (first word above the bottom that
/// no longer holds the pattern), and whether the painted region was used up entirely.
#[inline(never)]
fn lowest_touched(below: usize) -> (usize, bool) {
    let bottom = (ptr::addr_of_mut!(__sheap) as usize + 3) & !3;
    let mut p = bottom;
    while p < below {
        // SAFETY: [bottom, below) is RAM painted by `paint_stack`.
        if unsafe { ptr::read_volatile(p as *const u32) } != PAINT {
            break;
        }
        p += 4;
    }
    (p, p == bottom)
}

/// One `invoke()` in a frame of its own, so the stack it uses is all below the caller's SP
/// even if LTO inlines `invoke()` here.
#[inline(never)]
fn run(m: &mut model::Model) {
    #[cfg(not(kiln_streamed))]
    m.invoke();
    // A streamed input (KILN_STREAMED): the rows read from the golden input in flash.
    #[cfg(kiln_streamed)]
    m.invoke(&mut kiln::stream::InMemory {
        bytes: model::GOLDEN_IN[0],
        row_bytes: model::INPUT_ROW_BYTES,
    });
}

#[inline(never)]
fn write_inputs(m: &mut model::Model) {
    m.reset();
    #[cfg(not(kiln_streamed))]
    for (i, bytes) in model::GOLDEN_IN.iter().enumerate() {
        m.input_bytes_mut(i).copy_from_slice(bytes);
    }
}

/// How many differing outputs are reported per `invoke()`. An all-outputs model has dozens
/// of outputs (the model's own, then one per operator in operator order): the first that
/// differs names the first wrong layer, the later ones mostly follow from it.
const REPORTED: usize = 4;

/// Compares every output with TFLM's and prints `matches TFLM`, or, for each of the first
/// `REPORTED` outputs that differ, its index, the first byte that differs (ours and TFLM's)
/// and how many do, then how many outputs differ. Returns whether all outputs match.
#[inline(never)]
fn check(out: &mut Out, m: &model::Model) -> bool {
    let mut n = 0;
    for (i, want) in model::GOLDEN_OUT.iter().enumerate() {
        let got = m.output_bytes(i);
        if got == *want {
            continue;
        }
        if n == 0 {
            out.str("MISMATCH\n");
        }
        n += 1;
        if n > REPORTED {
            continue;
        }
        let pairs = || got.iter().zip(want.iter());
        let b = pairs()
            .position(|(x, y)| x != y)
            .unwrap_or(got.len().min(want.len()));
        out.str("  output ")
            .dec(i)
            .str(" byte ")
            .dec(b)
            .str(" of ")
            .dec(got.len());
        match (got.get(b), want.get(b)) {
            (Some(&x), Some(&y)) => out.str(": 0x").hex(x).str(", TFLM 0x").hex(y),
            _ => out.str(": TFLM's output has ").dec(want.len()),
        };
        out.str(" (differing bytes: ")
            .dec(pairs().filter(|(x, y)| x != y).count())
            .str(")\n");
    }
    if n == 0 {
        out.str("matches TFLM\n");
    } else {
        out.str("  outputs differing: ")
            .dec(n)
            .str(" of ")
            .dec(model::OUTPUTS)
            .str("\n");
    }
    n == 0
}

/// Every layer (KILN_LAYERS): compares the sha256 of each operator-produced tensor with
/// TFLM's, prints `every layer matches TFLM (N layers)` or the first `REPORTED` layers that
/// differ (position in op order, tensor index), and returns whether all match. Nothing to do
/// (true) in a build without the check.
#[inline(never)]
fn check_layers(out: &mut Out, m: &model::Model) -> bool {
    if model::LAYERS.is_empty() {
        return true;
    }
    let mut n = 0;
    for (i, (t, want)) in model::LAYERS.iter().enumerate() {
        let same = model::layer_bytes(m, *t).is_some_and(|got| Sha256::digest(got)[..] == want[..]);
        if same {
            continue;
        }
        n += 1;
        if n <= REPORTED {
            out.str("  layer ")
                .dec(i)
                .str(" (tensor ")
                .dec(*t)
                .str(") differs from TFLM\n");
        }
    }
    if n == 0 {
        out.str("every layer matches TFLM (")
            .dec(model::LAYERS.len())
            .str(" layers)\n");
    } else {
        out.str("  layers differing: ")
            .dec(n)
            .str(" of ")
            .dec(model::LAYERS.len())
            .str("\n");
    }
    n == 0
}

#[entry]
fn main() -> ! {
    let stop = stop_point();
    let mut out = Out::new();
    // Taken once, at the start; `None` cannot happen (and would end the run as a failure).
    let Some(mut m) = model::Model::take() else {
        exit(false)
    };
    out.str("kiln-firmware model=")
        .str(model::NAME)
        .str(" board=")
        .str(model::BOARD)
        .str("\n");
    out.str("arena_bytes=")
        .dec(model::ARENA_BYTES)
        .str(" persistent_bytes=")
        .dec(model::PERSISTENT_BYTES)
        .str(" weights_bytes=")
        .dec(model::WEIGHTS_BYTES)
        .str("\n");
    // The memory map (KILN_REGIONS): each region's static in its own memory, apart from RAM.
    let mut ok = true;
    for (name, start, end, (mem, len), bytes) in model::regions() {
        let inside = mem <= start && start <= end && end <= mem + len;
        let holds = bytes > 0 && end - start >= bytes;
        out.str("region ")
            .str(name)
            .str(" section=")
            .dec(start)
            .str("..")
            .dec(end)
            .str(" arena_bytes=")
            .dec(bytes)
            .str(if inside && holds {
                " in its memory\n"
            } else {
                " NOT IN ITS MEMORY (or empty)\n"
            });
        ok &= inside && holds;
    }

    // First run, with the stack painted to measure its high-water mark.
    write_inputs(&mut m);
    paint_stack();
    let sp_call = sp();
    check_stop(stop, 1);
    run(&mut m);
    check_stop(stop, 2);
    let (low, overflow) = lowest_touched(sp_call);
    out.str("invoke1: ");
    ok &= check(&mut out, &m);
    ok &= check_layers(&mut out, &m);

    // Second run: the same input must give the same bytes.
    write_inputs(&mut m);
    check_stop(stop, 3);
    run(&mut m);
    check_stop(stop, 4);
    out.str("invoke2: ");
    ok &= check(&mut out, &m);

    for i in 0..model::OUTPUTS {
        let got = m.output_bytes(i);
        out.str("out")
            .dec(i)
            .str(" (")
            .dec(got.len())
            .str(" bytes):");
        for &b in got.iter().take(32) {
            out.str(" ").hex(b);
        }
        if got.len() > 32 {
            out.str(" ...");
        }
        out.str("\n");
    }
    let top = ptr::addr_of!(_stack_start) as usize;
    out.str("stack_invoke_bytes=")
        .dec(sp_call - low)
        .str(" stack_total_bytes=")
        .dec(top - low)
        .str(if overflow { " OVERFLOW" } else { "" })
        .str("\n");
    ok &= !overflow;
    out.str(if ok { "RESULT PASS\n" } else { "RESULT FAIL\n" });
    exit(ok)
}
