#!/usr/bin/env bash
# The keyword-spotting example on the Cortex-M4F under QEMU (mps2-an386): builds
# examples/kws (its own cargo workspace: TFLM's audio preprocessor then micro_speech over one
# shared arena, see examples/kws/README.md), checks its formatting and lints, runs it with
# semihosting and fails unless it exits 0 with `RESULT PASS` (features and scores byte for
# byte TFLM's). About 70 s from a clean target directory on the 2-core machine (69 s
# measured, 2026-12-02: the host crates and the firmware's dependencies, then the firmware,
# fat LTO); the QEMU run takes well under a second.
# KILN_KWS_TARGET: a target directory instead of examples/kws/target.
set -euo pipefail
cd "$(dirname "$0")/../examples/kws"
start=$(date +%s)
step() { echo; echo "=== kws: $* ($(( $(date +%s) - start ))s)"; }

step "qemu-system-arm and the rustup target"
if ! command -v qemu-system-arm >/dev/null; then
  apt-get update && apt-get install -y --allow-downgrades qemu-system-arm qemu-utils/bookworm
fi
rustup target add thumbv7em-none-eabihf
rustup component add rustfmt clippy
export CARGO_TARGET_DIR="${KILN_KWS_TARGET:-$PWD/target}"

step "cargo fmt --check, build, clippy"
cargo fmt --check
cargo build --release --locked
cargo clippy --release --locked -- -D warnings

step "run on mps2-an386"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
timeout 60 qemu-system-arm -machine mps2-an386 -nographic -monitor none \
  -semihosting-config enable=on,target=native \
  -kernel "$CARGO_TARGET_DIR/thumbv7em-none-eabihf/release/kiln-kws" | tee "$log" || rc=$?
if [ "$rc" -ne 0 ] || ! grep -q '^RESULT PASS' "$log"; then
  echo "FAILED: examples/kws on mps2-an386: exit code $rc"
  exit 1
fi
step "done: features and scores match TFLM byte for byte"
