//! Chooses the microkernels `kiln-kernels` is compiled with (`src/arch/`) and tells rustc by
//! `cfg(kiln_arch = "...")`.
//!
//! Stable Rust does not expose the Arm target features (`cfg(target_feature = "dsp")` is
//! always false on stable), so the choice is made from the target triple and the
//! `-C target-cpu` / `-C target-feature` flags cargo passes in `CARGO_ENCODED_RUSTFLAGS`:
//!
//! * `dsp`: Armv7E-M (`thumbv7em-*`: Cortex-M4, M7) and Armv8-M Mainline (`thumbv8m.main-*`)
//!   with a core that has the DSP extension (`cortex-m33`, `cortex-m35p`, `cortex-m55`,
//!   `cortex-m85`, `star-mc1`) or `-C target-feature=+dsp`;
//! * `portable` otherwise (the host, Cortex-M0/M0+/M3, Armv8-M Mainline without DSP).
//!
//! `KILN_KERNELS=portable` forces the portable microkernels (for comparisons).

use std::env;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(kiln_arch, values(\"dsp\", \"portable\"))");
    println!("cargo::rerun-if-env-changed=KILN_KERNELS");
    println!("cargo::rerun-if-changed=build.rs");
    let target = env::var("TARGET").unwrap_or_default();
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let flags: Vec<&str> = flags.split('\x1f').collect();
    let forced = env::var("KILN_KERNELS").ok();
    let arch = match forced.as_deref() {
        Some("portable") => "portable",
        Some(other) => panic!("KILN_KERNELS={other}: only `portable` can be forced"),
        None if has_dsp(&target, &flags) => "dsp",
        None => "portable",
    };
    println!("cargo::rustc-cfg=kiln_arch=\"{arch}\"");
}

/// Whether the target executes the DSP extension's instructions (SMLAD, SXTB16, SSAT, ...).
fn has_dsp(target: &str, flags: &[&str]) -> bool {
    if target.starts_with("thumbv7em") {
        return true;
    }
    if !target.starts_with("thumbv8m.main") {
        return false;
    }
    let value = |name: &str| -> Vec<&str> {
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
    };
    let cpu_has_dsp = value("target-cpu").last().is_some_and(|cpu| {
        matches!(
            *cpu,
            "cortex-m33" | "cortex-m35p" | "cortex-m55" | "cortex-m85" | "star-mc1"
        )
    });
    let features = value("target-feature").join(",");
    let mut dsp = cpu_has_dsp;
    for f in features.split(',') {
        match f {
            "+dsp" => dsp = true,
            "-dsp" => dsp = false,
            _ => {}
        }
    }
    dsp
}
