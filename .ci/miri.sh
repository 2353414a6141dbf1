#!/usr/bin/env bash
# Miri over the runtime's unit tests and the end-to-end models of tests/e2e_miri.rs: the int8
# models, the float MLP and CNNs, the int16 kernels (a 16x8 CNN, keyword_scrambled) and one
# MobileNet v1 block, and the control flow models (tests/control_flow.rs), checked for
# undefined behaviour and against TFLM's outputs.
# About 5 minutes on 2 cores from a cold target directory: 1 min to build, 4 min of tests
# (the int8 and float CNNs about 1 min each, the MobileNet block 30 s).
set -euo pipefail
cd "$(dirname "$0")/.."
rustup component add miri rust-src --toolchain nightly
cargo +nightly miri setup
cargo +nightly miri test -p kiln --lib --test e2e_miri --test control_flow
