//! Chooses the microkernels `kiln-kernels` is compiled with (`src/arch/`) and tells rustc by
//! `cfg(kiln_arch = "...")`.
//!
//! Stable Rust does not expose the Arm target features (`cfg(target_feature = "dsp")` is
//! always false on stable), so the choice is made from the target triple and the
//! `-C target-cpu` / `-C target-feature` flags cargo passes in `CARGO_ENCODED_RUSTFLAGS`:
//!
//! * `dsp`: Armv7E-M (`thumbv7em-*`: Cortex-M4, M7) and Armv8-M Mainline (`thumbv8m.main-*`)
//!   with a core that has the DSP extension but not Helium (`cortex-m33`, `cortex-m35p`,
//!   `star-mc1`) or `-C target-feature=+dsp`;
//! * `mve`: Armv8.1-M Mainline with Helium, the M-profile Vector Extension (`cortex-m55`,
//!   `cortex-m85`, or `-C target-feature=+mve` / `+mve.fp`); these cores also have the DSP
//!   extension (Helium requires it), whose forms `mve` keeps where it has no vector form;
//! * `riscv`: RV32 with the M extension (`riscv32imc-*`, `riscv32imac-*`, `riscv32imafc-*`:
//!   ESP32-C3/C6/H2-class cores), plain Rust blocked for a one-instruction `MUL`;
//! * `portable` otherwise (the host, Cortex-M0/M0+/M3, Armv8-M Mainline without DSP).
//!
//! `KILN_KERNELS=portable` forces the portable microkernels (for comparisons);
//! `KILN_KERNELS=riscv` the RISC-V ones on any target (plain Rust: the host tests run them).

use std::env;

fn main() {
    println!(
        "cargo::rustc-check-cfg=cfg(kiln_arch, values(\"dsp\", \"mve\", \"portable\", \"riscv\"))"
    );
    println!("cargo::rerun-if-env-changed=KILN_KERNELS");
    println!("cargo::rerun-if-changed=build.rs");
    let target = env::var("TARGET").unwrap_or_default();
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let flags: Vec<&str> = flags.split('\x1f').collect();
    let forced = env::var("KILN_KERNELS").ok();
    let arch = match forced.as_deref() {
        Some("portable") => "portable",
        Some("riscv") => "riscv",
        Some(other) => panic!("KILN_KERNELS={other}: only `portable` or `riscv` can be forced"),
        None if has_mve(&target, &flags) => "mve",
        None if has_dsp(&target, &flags) => "dsp",
        None if has_rv32_mul(&target) => "riscv",
        None => "portable",
    };
    println!("cargo::rustc-cfg=kiln_arch=\"{arch}\"");
}

/// The values of codegen option `name` (`-C name=value` or `-Cname=value`) in `flags`.
fn values<'a>(flags: &[&'a str], name: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    for (i, f) in flags.iter().enumerate() {
        let f = f.strip_prefix("-C").unwrap_or(f);
        let f = if f.is_empty() {
            flags.get(i + 1).copied().unwrap_or("")
        } else {
            f
        };
        if let Some(v) = f.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            found.push(v);
        }
    }
    found
}

/// The last `+name`/`-name` among the `-C target-feature` lists of `flags` for any of
/// `names`: `Some(true)` if it turns the feature on, `Some(false)` off, `None` if absent.
fn feature(flags: &[&str], names: &[&str]) -> Option<bool> {
    let mut on = None;
    for list in values(flags, "target-feature") {
        for f in list.split(',') {
            if f.strip_prefix('+').is_some_and(|n| names.contains(&n)) {
                on = Some(true);
            } else if f.strip_prefix('-').is_some_and(|n| names.contains(&n)) {
                on = Some(false);
            }
        }
    }
    on
}

/// Whether the target is RV32 with the M extension (`riscv32im*`, e.g. `riscv32imc-*`).
fn has_rv32_mul(target: &str) -> bool {
    target
        .strip_prefix("riscv32")
        .and_then(|r| r.split('-').next())
        .is_some_and(|ext| ext.starts_with('i') && ext.contains('m'))
}

/// Whether the target executes Helium's integer instructions (VMLADAVA, VLDRB, DLSTP, ...).
fn has_mve(target: &str, flags: &[&str]) -> bool {
    if !target.starts_with("thumbv8m.main") {
        return false;
    }
    let cpu_has_mve = values(flags, "target-cpu")
        .last()
        .is_some_and(|cpu| matches!(*cpu, "cortex-m55" | "cortex-m85"));
    feature(flags, &["mve", "mve.fp"]).unwrap_or(cpu_has_mve)
}

/// Whether the target executes the DSP extension's instructions (SMLAD, SXTB16, SSAT, ...).
fn has_dsp(target: &str, flags: &[&str]) -> bool {
    if target.starts_with("thumbv7em") {
        return true;
    }
    if !target.starts_with("thumbv8m.main") {
        return false;
    }
    let cpu_has_dsp = values(flags, "target-cpu").last().is_some_and(|cpu| {
        matches!(
            *cpu,
            "cortex-m33" | "cortex-m35p" | "cortex-m55" | "cortex-m85" | "star-mc1"
        )
    });
    feature(flags, &["dsp"]).unwrap_or(cpu_has_dsp)
}
