#!/usr/bin/env bash
# Instructions executed by the keyword-spotting pipeline on the emulated Cortex-M4 (QEMU
# mps2-an386), counted by the TCG plugin of ../shared/tools/qemu-insn-count: the firmware
# runs four times, exiting at stop point 1, 2 and 3 (semihosting argument `stop=N`) and at
# its end; execution is deterministic, so the difference of two totals is the region between.
#   1 -> 2: the 49 preprocessor calls (writing each window, invoke(), copying the features out)
#   2 -> 3: micro_speech (the features written, invoke())
# Builds the firmware (release) and the plugin (into target/qemu-insn-count; build.sh fetches
# qemu-plugin.h from Debian's qemu source package the first time, unless it is there already).
# Prints one line per region and `insns_per_window` (the preprocessor's 49 calls / 49).
set -euo pipefail
cd "$(dirname "$0")"
shared=${KILN_SHARED:-$PWD/../../../shared}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
plugin="$CARGO_TARGET_DIR/qemu-insn-count"
if [ ! -f "$plugin/libfncount.so" ]; then
  bash "$shared/tools/qemu-insn-count/build.sh" "$plugin"
fi
cargo build --release --quiet
elf="$CARGO_TARGET_DIR/thumbv7em-none-eabihf/release/kiln-kws"
# total <stop>: the instructions executed from reset to the exit at stop point <stop> (0 = the
# whole run).
total() {
  qemu-system-arm -machine mps2-an386 -nographic -monitor none \
    -semihosting-config "enable=on,target=native,arg=kws,arg=stop=$1" \
    -plugin "$plugin/libfncount.so" -d plugin -kernel "$elf" 2>&1 >/dev/null |
    awk '/^insns total/ {print $3}'
}
t1=$(total 1) t2=$(total 2) t3=$(total 3) tall=$(total 0)
echo "preprocessor_49_windows_insns=$((t2 - t1))"
echo "insns_per_window=$(((t2 - t1) / 49))"
echo "micro_speech_insns=$((t3 - t2))"
echo "pipeline_insns=$((t3 - t1))"
echo "whole_run_insns=$tall (reset to exit, with the checks and the semihosting output)"
