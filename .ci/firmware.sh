#!/usr/bin/env bash
# Kiln on Cortex-M under QEMU: builds examples/firmware (its own cargo workspace) per model and
# target, runs it with semihosting and fails unless every output equals TFLM's golden bytes.
#   Cortex-M4F  (thumbv7em-none-eabihf,      mps2-an386): every public model
#               ($KILN_MODELS/*.tflite; EXCLUDED is empty), final outputs (golden/<stem>/) and every layer (all_outputs/<stem>.tflite
#               against golden_all/<stem>/: a mismatch names the output index, i.e. the layer,
#               and the byte; this script adds the tensor's name from golden.json)
#   Cortex-M0   (thumbv6m-none-eabi,         microbit):   hello_world (16 KB RAM)
#   Cortex-M4F  with a memory map (KILN_REGIONS=1): person_detect's arena split over the
#               mps2-an386's block RAM (16 KB at 0x01000000) and PSRAM (at 0x21000000), the
#               firmware checking that each region's static lies in its memory
#   Cortex-M4F  tiled: person_detect and vww under a RAM budget (KILN_RAM_BUDGET) at their
#               `kiln plan --min-ram` arenas, their first operators run in strips of rows
#   Cortex-M4F and M55: vww with a streamed input (KILN_STREAMED) at 11,520 B; M4F:
#   person_detect streamed at 12,288 B
#   Cortex-M55  (thumbv8m.main-none-eabihf,  mps3-an547): every layer of every model above
#               (its Helium kernels; the every-layer variant's outputs start with the final ones)
#   Cortex-M4F and M55: the IF and WHILE models of tests/control_flow/ (two calls each)
# Runs them all (a build error fails that run only), then lists each run with PASS/FAIL and
# exits 1 if any failed. About 1.5 minutes for the 43 runs of the public models (and the one memory map run, a few seconds more) on the 2-core machine from a clean
# target directory (76 s measured in a fresh-clone CI run, 2026-12-02; release builds): the host crates (the planner and the
# macro) and the firmware's dependencies are built once per target, about 50 s, and shared
# by all models; each model then costs one compile of the firmware crate (0.5-3 s, fat LTO)
# and a QEMU run well under a second. Every-layer variants fit the mps2-an386 easily (the
# largest, vww/person_detect: 232 KB of 4 MB RAM, 523 KB of 4 MB flash).
# KILN_MODELS: the models directory (default ../shared/models); KILN_FIRMWARE_TARGET: a
# target directory instead of examples/firmware/target.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$(date +%s)
step() { echo; echo "=== firmware: $* ($(( $(date +%s) - start ))s)"; }

step "qemu-system-arm and the rustup targets"
if ! command -v qemu-system-arm >/dev/null; then
  apt-get update && apt-get install -y --allow-downgrades qemu-system-arm qemu-utils/bookworm
fi
rustup target add thumbv6m-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf
rustup component add rustfmt clippy

cd examples/firmware
# KILN_FIRMWARE_TARGET: another target directory, to run this beside a build in the default.
export CARGO_TARGET_DIR="${KILN_FIRMWARE_TARGET:-$PWD/target}"
export KILN_MODELS="${KILN_MODELS:-$root/../shared/models}"
unset KILN_BOARD KILN_GOLDEN KILN_REGIONS KILN_RAM_BUDGET KILN_LAYERS KILN_EXTRAM KILN_STREAMED

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

# Not built: tools/firmware_bench.py's EXCLUDED.
EXCLUDED=()   # every public model is built (tools/firmware_bench.py has the same list)
models=()
for f in "$KILN_MODELS"/*.tflite; do
  stem=$(basename "$f" .tflite)
  [[ " ${EXCLUDED[*]} " == *" $stem "* ]] || models+=("$stem")
done
if [ ${#models[@]} -eq 0 ]; then
  echo "no models in $KILN_MODELS"
  exit 1
fi

failed=()
results=()
# layers <model> <log>: the golden.json name of each output a MISMATCH report names.
layers() {
  local model=$1 log=$2 json
  case $model in
    all_outputs/*) json="$KILN_MODELS/golden_all/${model#all_outputs/}/golden.json" ;;
    *) json="$KILN_MODELS/golden/$model/golden.json" ;;
  esac
  command -v python3 >/dev/null && [ -f "$json" ] || return 0
  grep -o '^  output [0-9]*' "$log" | awk '{print $2}' | sort -un |
    python3 -c 'import json, sys
outs = json.load(open(sys.argv[1]))["outputs"]
for i in map(int, sys.stdin):
    print("  output %d = tensor %d %s" % (i, outs[i]["tensor_index"], outs[i]["name"]))' "$json"
}
# check <target> <model>: build, run under QEMU (60 s at most), require exit 0 and PASS.
# <model> is a stem in $KILN_MODELS or all_outputs/<stem> (see examples/firmware/build.rs).
check() {
  local target=$1 model=$2 machine log rc t0
  local map=${KILN_REGIONS:+ (memory map)}${KILN_RAM_BUDGET:+ (ram_budget $KILN_RAM_BUDGET)}${KILN_LAYERS:+ (every layer)}${KILN_STREAMED:+ (streamed input)}
  machine=$(board "$target")
  t0=$(date +%s)
  step "$model on $target ($machine)$map"
  rc=0
  KILN_MODEL=$model cargo build --release --target "$target" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAILED: $model on $target ($machine): build failed"
    failed+=("$model/$target")
    results+=("FAIL (build)  $model on $target$map")
    return
  fi
  log=$(mktemp)
  timeout 60 qemu-system-arm -machine "$machine" -nographic -monitor none \
    -semihosting-config enable=on,target=native \
    -kernel "$CARGO_TARGET_DIR/$target/release/kiln-firmware" | tee "$log" || rc=$?
  if [ "$rc" -ne 0 ] || ! grep -q '^RESULT PASS' "$log"; then
    echo "FAILED: $model on $target ($machine): exit code $rc"
    layers "$model" "$log"
    failed+=("$model/$target")
    results+=("FAIL          $model on $target$map ($(( $(date +%s) - t0 ))s)")
  else
    results+=("PASS          $model on $target$map ($(( $(date +%s) - t0 ))s)")
  fi
  rm -f "$log"
}

for model in "${models[@]}"; do
  check thumbv7em-none-eabihf "$model"
  if [ -f "$KILN_MODELS/all_outputs/$model.tflite" ]; then
    check thumbv7em-none-eabihf "all_outputs/$model"
  else
    echo "FAILED: no every-layer variant $KILN_MODELS/all_outputs/$model.tflite"
    failed+=("all_outputs/$model")
    results+=("FAIL (missing) all_outputs/$model")
  fi
done
check thumbv6m-none-eabi tflm_hello_world_int8
# The memory map: one run, two memories besides the RAM of .data/.bss/stack.
export KILN_REGIONS=1
check thumbv7em-none-eabihf tflm_person_detect_int8
unset KILN_REGIONS
# Below the layer-by-layer bound: the MobileNets with the RAM budget at `kiln plan --min-ram`'s
# arena, which Kiln meets by running their first operators in strips of rows (tiling).
KILN_RAM_BUDGET=19008 check thumbv7em-none-eabihf tflm_person_detect_int8
KILN_RAM_BUDGET=36864 check thumbv7em-none-eabihf mlperf_tiny_vww_mobilenetv1_025_96_int8
# A streamed input (KILN_STREAMED: `streamed_input = true`, `invoke` reading the rows from
# the golden input in flash): vww at its streamed `--min-ram` arena (chained regions), on the
# M4 and the M55; person_detect within issue 30's 12 KB.
for target in thumbv7em-none-eabihf thumbv8m.main-none-eabihf; do
  KILN_STREAMED=1 KILN_RAM_BUDGET=11520 check "$target" mlperf_tiny_vww_mobilenetv1_025_96_int8
done
KILN_STREAMED=1 KILN_RAM_BUDGET=12288 check thumbv7em-none-eabihf tflm_person_detect_int8
for model in "${models[@]}"; do
  check thumbv8m.main-none-eabihf "all_outputs/$model"
done

# Real-world models as their vendors ship them (../shared/models/realworld/, TFLM's goldens in
# tests/realworld/<stem>/ by tools/gen_realworld_golden.py), on the M4 and the M55: the default
# plan (final outputs), and every layer in debug mode (KILN_LAYERS: preserve_all_tensors, the
# sha256 of every operator-produced tensor against TFLM's), its arena in the board's external
# RAM (KILN_EXTRAM: movenet's every-layer arena is 7.5 MB).
for f in "$KILN_MODELS"/realworld/*.tflite; do
  stem=$(basename "$f" .tflite)
  export KILN_GOLDEN="$root/tests/realworld/$stem"
  for target in thumbv7em-none-eabihf thumbv8m.main-none-eabihf; do
    check "$target" "$f"
    KILN_LAYERS=1 KILN_EXTRAM=1 check "$target" "$f"
  done
  unset KILN_GOLDEN
done

# The stateless control flow models (tests/control_flow/: IF and WHILE, one subgraph's arena in
# its caller's scratch) on the M4 and the M55, each on its first two calls of TFLM's goldens
# (the IF models take both branches, while_data 0 trips on call 1), extracted from the JSON into
# golden directories of the firmware's format. (The CALL_ONCE models carry state from call to
# call, which this harness's two invokes of one sample cannot check; tests/control_flow.rs and
# Miri do.) The 28 runs take about 1.5 minutes more.
cf_golden=$(mktemp -d)
export KILN_MODELS="$root/tests/control_flow"
for model in if_float if_int8 if_int8_direct while_counted while_data while_int8 while_if_float; do
  for call in 0 1; do
    dir="$cf_golden/$model/call$call"
    mkdir -p "$dir"
    python3 - "$KILN_MODELS/$model.json" "$call" "$dir" <<'PY'
import json, sys
call = json.load(open(sys.argv[1]))["calls"][int(sys.argv[2])]
for kind in ("in", "out"):
    for i, h in enumerate(call["inputs" if kind == "in" else "outputs"]):
        open(f"{sys.argv[3]}/s1_{kind}{i}.bin", "wb").write(bytes.fromhex(h))
PY
    export KILN_GOLDEN="$dir"
    echo "(control flow: $model, TFLM's call $call)"
    for target in thumbv7em-none-eabihf thumbv8m.main-none-eabihf; do
      check "$target" "$model"
    done
    unset KILN_GOLDEN
  done
done
rm -rf "$cf_golden"

step "done"
printf '%s\n' "${results[@]}"
if [ ${#failed[@]} -ne 0 ]; then
  echo "firmware failures: ${failed[*]}"
  exit 1
fi
echo "all ${#results[@]} firmware runs match TFLM byte for byte, every output"
