#!/usr/bin/env bash
# Miri over the runtime's unit tests and the small end-to-end models (tests/e2e_miri.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
rustup component add miri rust-src --toolchain nightly
cargo +nightly miri setup
cargo +nightly miri test -p kiln --lib --test e2e_miri
