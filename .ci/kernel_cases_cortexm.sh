#!/usr/bin/env bash
# Kiln's kernel golden cases on an emulated Cortex-M4F (thumbv7em-none-eabihf, QEMU
# mps2-an386: the DSP microkernels) and Cortex-M55 (thumbv8m.main-none-eabihf with
# -C target-cpu=cortex-m55, QEMU mps3-an547: the Helium ones): for each int8 bundle of the operators that carry MACs (CONV_2D,
# DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, AVERAGE_POOL_2D, MAX_POOL_2D) and of STRIDED_SLICE
# (its runs' block copy, arch::copy_block, is assembly on both cores), add_large_int8
# (ADD's table kernels, which Helium runs in its own assembly; the small add_int8 cases
# never reach them) and average_pool_2d_deep_int8 (16 channels or more: Helium's 16-lane
# window sums), builds
# examples/kernel-cases (its own cargo workspace; build.rs compiles every case with
# kiln-build), runs it with semihosting and fails unless every case equals TFLM's output
# bytes, on each core. Prints the build and run time of each bundle.
# About 2.5 minutes for both cores on the 2-core machine from a clean target directory (147 s
# in a fresh-clone CI run, 2026-12-02).
# KILN_KCASES_TARGET: a target directory instead of examples/kernel-cases/target.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$(date +%s)
step() { echo; echo "=== kernel cases on Cortex-M: $* ($(( $(date +%s) - start ))s)"; }

step "qemu-system-arm and the rustup target"
if ! command -v qemu-system-arm >/dev/null; then
  apt-get update && apt-get install -y --allow-downgrades qemu-system-arm qemu-utils/bookworm
fi
rustup target add thumbv7em-none-eabihf thumbv8m.main-none-eabihf
rustup component add rustfmt clippy

cd examples/kernel-cases
export CARGO_TARGET_DIR="${KILN_KCASES_TARGET:-$PWD/target}"
unset KILN_KCASE KILN_KCASE_RANGE

step "cargo fmt --check, clippy (the kernel-cases crate)"
cargo fmt --check
for target in thumbv7em-none-eabihf thumbv8m.main-none-eabihf; do
  KILN_KCASE=conv_2d_int8 cargo clippy --release --target "$target" -- -D warnings
done

# Every int8 bundle of these operators (`<op>_int8.kcase` and any `<op>_int8_*.kcase`);
# each operator must have at least its `<op>_int8` bundle.
bundles=()
for op in conv_2d depthwise_conv_2d fully_connected add average_pool_2d max_pool_2d strided_slice; do
  if [ ! -f "$root/tests/kernel_cases/${op}_int8.kcase" ]; then
    echo "FAILED: tests/kernel_cases/${op}_int8.kcase is missing"
    exit 1
  fi
  for f in "$root/tests/kernel_cases/${op}_int8.kcase" "$root"/tests/kernel_cases/"${op}"_int8_*.kcase; do
    [ -f "$f" ] && bundles+=("$(basename "$f" .kcase)")
  done
done
bundles+=(add_large_int8 average_pool_2d_deep_int8)

ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { printf '%d.%03d' $(( $1 / 1000 )) $(( $1 % 1000 )); }
failed=()
summary=()
for core in thumbv7em-none-eabihf:mps2-an386 thumbv8m.main-none-eabihf:mps3-an547; do
  target=${core%%:*}
  machine=${core#*:}
  for bundle in "${bundles[@]}"; do
    step "$bundle on $target ($machine)"
    t0=$(ms)
    if ! KILN_KCASE=$bundle cargo build --release --target "$target"; then
      echo "FAILED: $bundle on $target: build"
      failed+=("$bundle/$target(build)")
      summary+=("$(printf '%-28s %-26s build FAILED' "$bundle" "$target")")
      continue
    fi
    t1=$(ms)
    log=$(mktemp)
    rc=0
    timeout 120 qemu-system-arm -machine "$machine" -nographic -monitor none \
      -semihosting-config enable=on,target=native \
      -kernel "$CARGO_TARGET_DIR/$target/release/kiln-kernel-cases" | tee "$log" || rc=$?
    t2=$(ms)
    result=$(grep '^RESULT' "$log" | tail -n 1 || true)
    rm -f "$log"
    if [ "$rc" -ne 0 ] || [[ $result != "RESULT PASS"* ]]; then
      echo "FAILED: $bundle on $target: exit code $rc, ${result:-no RESULT line}"
      failed+=("$bundle/$target")
    fi
    summary+=("$(printf '%-28s %-26s build %7ss  run %6ss  %s (exit %d)' "$bundle" "$target" \
      "$(secs $(( t1 - t0 )))" "$(secs $(( t2 - t1 )))" "${result:-no RESULT line}" "$rc")")
  done
done

step "done"
printf '%s\n' "${summary[@]}"
echo "total $(( $(date +%s) - start ))s"
if [ ${#failed[@]} -ne 0 ]; then
  echo "kernel-case failures on Cortex-M: ${failed[*]}"
  exit 1
fi
echo "every kernel case of ${#bundles[@]} bundles matches TFLM byte for byte on Cortex-M4 and M55"
