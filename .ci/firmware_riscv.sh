#!/usr/bin/env bash
# Kiln on RISC-V under QEMU: examples/firmware (its own cargo workspace, multi-architecture)
# built for riscv32imc-unknown-none-elf and riscv32imac-unknown-none-elf (Kiln's `riscv`
# microkernels, kernels/src/arch/riscv.rs) and run on `qemu-system-riscv32 -machine virt`
# with semihosting; a run passes only if every output equals TFLM's golden bytes.
#   both targets: every layer of every public model ($KILN_MODELS/all_outputs/<stem>.tflite
#                 against golden_all/<stem>/; the variant's outputs start with the model's own)
#   riscv32imc:   the real-world models (../shared/models/realworld/, goldens in
#                 tests/realworld/<stem>/): the default plan (final outputs), and every layer in
#                 debug mode (KILN_LAYERS: sha256 of every operator-produced tensor against
#                 TFLM's) with the arena in EXTRAM (KILN_EXTRAM; movenet's is 7.5 MB)
#   riscv32imac:  the real-world models' default plans
# QEMU's CPU is restricted to the target's extensions (`-cpu rv32,a=off,f=off,d=off` for imc,
# `f=off,d=off` for imac): an instruction outside them traps, and the firmware's exception
# handler fails the run. Also: the kernels crate's tests on the host with the RISC-V
# microkernels (KILN_KERNELS=riscv: every driver over them, against TFLM's cases), and clippy
# of the firmware for riscv32imc.
# Runs them all (a build error fails that run only), lists each with PASS/FAIL and exits 1 if
# any failed. One target directory for every firmware run, so the host crates (the planner,
# the macro) and the firmware's dependencies are built once. Measured on the loaded 2-core
# machine: 5.4 minutes with a cold firmware target directory (about 1.3 of them building the
# host crates and dependencies, then about 3 s per run for the 55 runs), plus about a minute
# for the host test's own build of the kernels crate; 4.5 minutes with the dependencies built.
# KILN_MODELS: the models directory (default ../shared/models); KILN_FIRMWARE_RISCV_TARGET: the
# firmware's target directory (default target/firmware-riscv); KILN_RISCV_HOST_TARGET: the host
# test's (default target/riscv-host: KILN_KERNELS rebuilds the kernels crate).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$(date +%s)
step() { echo; echo "=== firmware riscv: $* ($(( $(date +%s) - start ))s)"; }

step "qemu-system-riscv32 and the rustup targets"
if ! command -v qemu-system-riscv32 >/dev/null; then
  apt-get update && apt-get install -y --allow-downgrades qemu-system-misc qemu-utils/bookworm
fi
rustup target add riscv32imc-unknown-none-elf riscv32imac-unknown-none-elf
rustup component add clippy

step "kernels crate tests on the host with the RISC-V microkernels (KILN_KERNELS=riscv)"
KILN_KERNELS=riscv CARGO_TARGET_DIR="${KILN_RISCV_HOST_TARGET:-$root/target/riscv-host}" \
  cargo test -p kiln-kernels

cd examples/firmware
export CARGO_TARGET_DIR="${KILN_FIRMWARE_RISCV_TARGET:-$root/target/firmware-riscv}"
export KILN_MODELS="${KILN_MODELS:-$root/../shared/models}"
unset KILN_BOARD KILN_GOLDEN KILN_REGIONS KILN_RAM_BUDGET KILN_LAYERS KILN_EXTRAM KILN_KERNELS

step "clippy (the firmware crate, riscv32imc)"
KILN_MODEL=tflm_person_detect_int8 cargo clippy --release --target riscv32imc-unknown-none-elf -- -D warnings

# cpu <target>: QEMU's CPU with the target's extensions only.
cpu() {
  case $1 in
    riscv32imc-*) echo "rv32,a=off,f=off,d=off" ;;
    riscv32imac-*) echo "rv32,f=off,d=off" ;;
  esac
}

failed=()
results=()
# check <target> <model>: build, run under QEMU (60 s at most), require exit 0 and PASS.
check() {
  local target=$1 model=$2 log rc t0
  local what=${KILN_LAYERS:+ (every layer)}
  t0=$(date +%s)
  step "$model on $target$what"
  rc=0
  KILN_MODEL=$model cargo build --release --target "$target" || rc=$?
  if [ "$rc" -ne 0 ]; then
    failed+=("$model/$target")
    results+=("FAIL (build)  $model on $target$what")
    return
  fi
  log=$(mktemp)
  timeout 60 qemu-system-riscv32 -machine virt -bios none -cpu "$(cpu "$target")" -nographic \
    -monitor none -semihosting-config enable=on,target=native \
    -kernel "$CARGO_TARGET_DIR/$target/release/kiln-firmware" | tee "$log" || rc=$?
  if [ "$rc" -ne 0 ] || ! grep -q '^RESULT PASS' "$log"; then
    failed+=("$model/$target")
    results+=("FAIL          $model on $target$what (exit code $rc, $(( $(date +%s) - t0 ))s)")
  else
    results+=("PASS          $model on $target$what ($(( $(date +%s) - t0 ))s)")
  fi
  rm -f "$log"
}

models=()
for f in "$KILN_MODELS"/*.tflite; do
  models+=("$(basename "$f" .tflite)")
done
if [ ${#models[@]} -eq 0 ]; then
  echo "no models in $KILN_MODELS"
  exit 1
fi
for target in riscv32imc-unknown-none-elf riscv32imac-unknown-none-elf; do
  for model in "${models[@]}"; do
    if [ -f "$KILN_MODELS/all_outputs/$model.tflite" ]; then
      check "$target" "all_outputs/$model"
    else
      failed+=("all_outputs/$model")
      results+=("FAIL (missing) all_outputs/$model")
    fi
  done
done

for f in "$KILN_MODELS"/realworld/*.tflite; do
  stem=$(basename "$f" .tflite)
  export KILN_GOLDEN="$root/tests/realworld/$stem"
  check riscv32imc-unknown-none-elf "$f"
  KILN_LAYERS=1 KILN_EXTRAM=1 check riscv32imc-unknown-none-elf "$f"
  check riscv32imac-unknown-none-elf "$f"
  unset KILN_GOLDEN
done

step "done"
printf '%s\n' "${results[@]}"
if [ ${#failed[@]} -ne 0 ]; then
  echo "riscv firmware failures: ${failed[*]}"
  exit 1
fi
echo "all ${#results[@]} riscv firmware runs match TFLM byte for byte, every output"
