#!/usr/bin/env bash
# Kiln on Cortex-M under QEMU: builds examples/firmware (its own cargo workspace) per model and
# target, runs it with semihosting and fails unless the output equals TFLM's golden bytes.
#   Cortex-M4F  (thumbv7em-none-eabihf,      mps2-an386): person detection, keyword spotting
#               (kws_dscnn, micro_speech, keyword_scrambled: SVDF state, int16)
#   Cortex-M0   (thumbv6m-none-eabi,         microbit):   hello_world (16 KB RAM)
#   Cortex-M55  (thumbv8m.main-none-eabihf,  mps3-an547): hello_world
# About 2 minutes on the 2-core machine from a clean target directory (release builds; the
# host crates, i.e. the planner and the macro, are built once and shared by all targets).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$(date +%s)
step() { echo; echo "=== firmware: $* ($(( $(date +%s) - start ))s)"; }

step "qemu-system-arm and the rustup targets"
if ! command -v qemu-system-arm >/dev/null; then
  apt-get update && apt-get install -y qemu-system-arm
fi
rustup target add thumbv6m-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf
rustup component add rustfmt clippy

cd examples/firmware
export CARGO_TARGET_DIR="$PWD/target"
export KILN_MODELS="${KILN_MODELS:-$root/../shared/models}"
unset KILN_BOARD

# board <target>: the QEMU machine the firmware's memory map is for (as .cargo/config.toml).
board() {
  case $1 in
    thumbv7em-none-eabihf) echo mps2-an386 ;;
    thumbv6m-none-eabi) echo microbit ;;
    thumbv8m.main-none-eabihf) echo mps3-an547 ;;
  esac
}

step "cargo fmt --check, clippy (the firmware crate)"
cargo fmt --check
KILN_MODEL=tflm_person_detect_int8 cargo clippy --release --target thumbv7em-none-eabihf -- -D warnings

failed=()
# check <target> <model stem>: build, run under QEMU (60 s at most), require exit 0 and PASS.
check() {
  local target=$1 model=$2 machine log rc
  machine=$(board "$target")
  step "$model on $target ($machine)"
  KILN_MODEL=$model cargo build --release --target "$target"
  log=$(mktemp)
  rc=0
  timeout 60 qemu-system-arm -machine "$machine" -nographic -monitor none \
    -semihosting-config enable=on,target=native \
    -kernel "target/$target/release/kiln-firmware" | tee "$log" || rc=$?
  if [ "$rc" -ne 0 ] || ! grep -q '^RESULT PASS' "$log"; then
    echo "FAILED: $model on $target ($machine): exit code $rc"
    failed+=("$model/$target")
  fi
  rm -f "$log"
}

check thumbv7em-none-eabihf tflm_person_detect_int8
check thumbv7em-none-eabihf mlperf_tiny_kws_dscnn_int8
check thumbv7em-none-eabihf tflm_micro_speech_int8
check thumbv7em-none-eabihf tflm_keyword_scrambled_int8
check thumbv6m-none-eabi tflm_hello_world_int8
check thumbv8m.main-none-eabihf tflm_hello_world_int8

step "done"
if [ ${#failed[@]} -ne 0 ]; then
  echo "firmware failures: ${failed[*]}"
  exit 1
fi
echo "all firmware runs match TFLM byte for byte"
