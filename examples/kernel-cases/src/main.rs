//! Kiln's kernel golden cases on a Cortex-M4 or M55 under QEMU: every case of one `.kcase` bundle
//! (`tests/kernel_cases/`), compiled by `kiln-build` in `build.rs` exactly as a user's model
//! is, run on the core and compared byte for byte with TFLM's outputs.
//!
//! For each case: `Model::take()`, write its inputs, `invoke()`, compare every output byte.
//! A failing case prints `MISMATCH case <i> output <j> byte <b> got <x> want <y>` (its first
//! differing byte, in hex); the last line is `RESULT PASS <n> cases` or
//! `RESULT FAIL <m> of <n>` (or `RESULT UNSUPPORTED` for a bundle Kiln refuses entirely).
//! The semihosting exit code is 0 only on PASS (and UNSUPPORTED, which is not a failure of
//! the firmware: the CI script requires PASS).
//!
//! Build and run (bundle from `KILN_KCASE`, optional `KILN_KCASE_RANGE=a..b`; see `build.rs`):
//! `KILN_KCASE=conv_2d_int8 cargo run --release`
#![no_std]
#![no_main]

use core::panic::PanicInfo;

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hio};

/// What the runner needs of a generated model; implemented for each case's `Model` by
/// [`compiled!`] (the generated API has inherent methods only).
pub trait Compiled: Sized {
    fn take() -> Option<Self>;
    fn invoke(&mut self);
    fn input_bytes_mut(&mut self, i: usize) -> &mut [u8];
    fn output_bytes(&self, i: usize) -> &[u8];
}

/// `impl Compiled` for a generated `Model`, forwarding to its inherent methods.
macro_rules! compiled {
    ($m:path) => {
        impl $crate::Compiled for $m {
            fn take() -> Option<Self> {
                <$m>::take()
            }
            fn invoke(&mut self) {
                <$m>::invoke(self)
            }
            fn input_bytes_mut(&mut self, i: usize) -> &mut [u8] {
                <$m>::input_bytes_mut(self, i)
            }
            fn output_bytes(&self, i: usize) -> &[u8] {
                <$m>::output_bytes(self, i)
            }
        }
    };
}
pub(crate) use compiled;

/// One golden case: its index in the bundle, its inputs, TFLM's outputs and its runner.
pub struct Case {
    pub index: usize,
    pub inputs: &'static [&'static [u8]],
    pub outputs: &'static [&'static [u8]],
    pub run: fn(&Case) -> Verdict,
}

/// The outcome of one case.
pub enum Verdict {
    Pass,
    /// The first differing byte: output, byte index, Kiln's byte, TFLM's byte.
    Mismatch(usize, usize, u8, u8),
    /// An input or output whose length differs from the case's: which (input or output),
    /// its index, Kiln's length, the case's length.
    Length(&'static str, usize, usize, usize),
    /// `Model::take()` returned `None`.
    Taken,
}

/// Runs one case on model `M`: take, write inputs, invoke, compare.
#[inline(never)]
pub fn run<M: Compiled>(case: &Case) -> Verdict {
    let Some(mut m) = M::take() else {
        return Verdict::Taken;
    };
    for (i, bytes) in case.inputs.iter().enumerate() {
        let dst = m.input_bytes_mut(i);
        if dst.len() != bytes.len() {
            return Verdict::Length("input", i, dst.len(), bytes.len());
        }
        dst.copy_from_slice(bytes);
    }
    m.invoke();
    for (i, want) in case.outputs.iter().enumerate() {
        let got = m.output_bytes(i);
        if got.len() != want.len() {
            return Verdict::Length("output", i, got.len(), want.len());
        }
        if let Some(b) = got.iter().zip(want.iter()).position(|(a, b)| a != b) {
            return Verdict::Mismatch(i, b, got[b], want[b]);
        }
    }
    Verdict::Pass
}

mod cases {
    include!(concat!(env!("OUT_DIR"), "/cases.rs"));
}

/// The device interrupt part of the vector table (cortex-m-rt feature `device`): 32 reserved
/// entries, as the CMSDK-based boards have; the firmware enables no interrupt.
#[unsafe(link_section = ".vector_table.interrupts")]
#[unsafe(no_mangle)]
#[used]
static __INTERRUPTS: [usize; 32] = [0; 32];

/// Semihosting output, one write per line. No `core::fmt`: formatted by hand.
struct Out {
    buf: [u8; 160],
    len: usize,
}

impl Out {
    const fn new() -> Self {
        Out {
            buf: [0; 160],
            len: 0,
        }
    }

    fn bytes(&mut self, s: &[u8]) -> &mut Self {
        for &b in s {
            if self.len == self.buf.len() {
                self.flush();
            }
            self.buf[self.len] = b;
            self.len += 1;
            if b == b'\n' {
                self.flush();
            }
        }
        self
    }

    fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    fn dec(&mut self, v: usize) -> &mut Self {
        let mut d = [0u8; 20];
        let mut i = d.len();
        let mut v = v;
        loop {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.bytes(&d[i..])
    }

    fn hex(&mut self, b: u8) -> &mut Self {
        const H: &[u8; 16] = b"0123456789abcdef";
        self.bytes(&[b'0', b'x', H[usize::from(b >> 4)], H[usize::from(b & 15)]])
    }

    fn flush(&mut self) {
        if self.len > 0 {
            if let Ok(mut h) = hio::hstdout() {
                let _ = h.write_all(&self.buf[..self.len]);
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
    out.str("\nPANIC");
    if let Some(l) = info.location() {
        out.str(" at ")
            .str(l.file())
            .str(":")
            .dec(l.line() as usize);
    }
    out.str("\nRESULT FAIL (panic)\n");
    exit(false)
}

#[entry]
fn main() -> ! {
    let mut out = Out::new();
    out.str("kiln-kernel-cases bundle=")
        .str(cases::BUNDLE)
        .str(" cases=")
        .dec(cases::FIRST)
        .str("..")
        .dec(cases::END)
        .str(" board=")
        .str(env!("KILN_KCASE_BOARD"))
        .str("\n");
    if let Some(reason) = cases::UNSUPPORTED {
        out.str("every case is unsupported by Kiln, e.g. ")
            .str(reason)
            .str("\nRESULT UNSUPPORTED ")
            .dec(cases::END - cases::FIRST)
            .str(" cases\n");
        exit(true)
    }
    let mut failed = 0;
    for case in &cases::CASES {
        let verdict = (case.run)(case);
        if matches!(verdict, Verdict::Pass) {
            continue;
        }
        failed += 1;
        out.str("MISMATCH case ").dec(case.index);
        match verdict {
            Verdict::Pass => {}
            Verdict::Mismatch(j, b, got, want) => {
                out.str(" output ")
                    .dec(j)
                    .str(" byte ")
                    .dec(b)
                    .str(" got ")
                    .hex(got)
                    .str(" want ")
                    .hex(want);
            }
            Verdict::Length(what, j, got, want) => {
                out.str(" ")
                    .str(what)
                    .str(" ")
                    .dec(j)
                    .str(" length got ")
                    .dec(got)
                    .str(" want ")
                    .dec(want);
            }
            Verdict::Taken => {
                out.str(" Model::take() returned None");
            }
        }
        out.str("\n");
    }
    let n = cases::CASES.len();
    if failed == 0 {
        out.str("RESULT PASS ").dec(n).str(" cases\n");
    } else {
        out.str("RESULT FAIL ")
            .dec(failed)
            .str(" of ")
            .dec(n)
            .str("\n");
    }
    exit(failed == 0)
}
