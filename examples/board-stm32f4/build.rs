//! Puts `memory.x` where cortex-m-rt's `link.x` finds it, and adds the linker scripts:
//! `link.x` always, `defmt.x` with the `probe` feature (defmt's symbols; the `qemu` flavour
//! links no defmt).
//!
//! There is one `memory.x`, the one beside `Cargo.toml`: the linker looks in the crate's
//! directory before the search path, so a `memory.x` this script wrote elsewhere would be
//! overridden by it without a word. Edit that file only; `include_model!` checks the model
//! against its `RAM` length too.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::copy("memory.x", out.join("memory.x")).expect("memory.x beside Cargo.toml");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg-bins=--nmagic");
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
    if env::var_os("CARGO_FEATURE_PROBE").is_some() {
        println!("cargo:rustc-link-arg-bins=-Tdefmt.x");
    }
}
