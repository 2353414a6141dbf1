#!/usr/bin/env bash
# Miri over the runtime's unit tests and the end-to-end models of tests/e2e_miri.rs: the int8
# models, the float MLP and CNNs, the int16 kernels (a 16x8 CNN, keyword_scrambled) and one
# MobileNet v1 block, and the control flow models (tests/control_flow.rs), checked for
# undefined behaviour and against TFLM's outputs.
# Miri runs a process's tests one at a time, so after one build the tests run in two
# processes side by side, one per core: the two slowest (the int8 and float CNNs, about
# 1 min each) in one, everything else in the other. Both must pass.
set -euo pipefail
cd "$(dirname "$0")/.."
rustup component add miri rust-src --toolchain nightly
cargo +nightly miri setup
tests=(-p kiln --lib --test e2e_miri --test control_flow)
cargo +nightly miri test "${tests[@]}" --no-run
slow=(cnn_int8 cnn_float)
skip=()
for t in "${slow[@]}"; do skip+=(--skip "$t"); done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo +nightly miri test -p kiln --test e2e_miri -- --exact "${slow[@]}" >"$log" 2>&1 &
slow_pid=$!
rc=0
cargo +nightly miri test "${tests[@]}" -- --exact "${skip[@]}" || rc=$?
slow_rc=0
wait "$slow_pid" || slow_rc=$?
echo "--- ${slow[*]} (run beside the above):"
cat "$log"
if [ "$rc" -ne 0 ] || [ "$slow_rc" -ne 0 ]; then
  echo "Miri: failures (exit codes $rc and $slow_rc)" >&2
  exit 1
fi
