#!/usr/bin/env bash
# The board template and a minimal user crate (own cargo workspaces, not in the host one):
#   examples/board-stm32f4  fmt, clippy (both flavours), the real-board build (probe-rs/defmt,
#                           thumbv7em-none-eabihf, STM32F411), and the QEMU flavour run on
#                           netduinoplus2 (STM32F405): exit 0 and "RESULT PASS" only if every
#                           quantized input and output equals TFLM's (model/golden.rs)
#   examples/board-minimal  fmt, and no_std builds for thumbv6m-none-eabi (Cortex-M0/M0+)
#                           and thumbv7em-none-eabihf (Cortex-M4/M7); without its feature
#                           `critical-section`, `cargo check` for thumbv6m must fail at the
#                           `Model::take()` of src/main.rs with Kiln's message; a copy
#                           with a 16-byte RAM region in memory.x and no ram_budget must
#                           fail `cargo check` with Kiln's error naming memory.x
#   examples/board-esp32c3, board-rp2040, board-rp2350, board-nrf52840: fmt, clippy and the
#                           release build of each template for its target from its committed
#                           Cargo.lock (--locked). Built only: Debian's QEMU 7.2 has no machine
#                           for these chips (the RISC-V kernels run on QEMU virt in
#                           .ci/firmware_riscv.sh, the Cortex-M ones in .ci/firmware.sh).
#                           From a clean target directory they add 238 s to the 94 s of the
#                           two crates above (esp32c3 60 s, rp2040 76 s, rp2350 42 s,
#                           nrf52840 60 s: mostly esp-hal's and embassy's dependency graphs).
# All crates share one target directory (same release profile), so the host crates (the
# macro, the planner) are built once. The templates optimise only Kiln's planner, emitter and
# flatbuffers reader among the host crates (`[profile.*.package.*]`): with the optimised
# `build-override` they had before, every proc macro and build script was built at opt-level
# 3 and this script took 758 s cold (stop 35, loaded). From a clean target directory now:
# 332 s of wall time, 487 s of CPU (427 s user), on the 2-core machine at a load of about 1.5
# (2026-12-04).
# The QEMU run itself takes about a second.
# KILN_BOARD_TARGET: a target directory instead of examples/board-stm32f4/target.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$(date +%s)
step() { echo; echo "=== board: $* ($(( $(date +%s) - start ))s)"; }

step "qemu-system-arm and the rustup targets"
if ! command -v qemu-system-arm >/dev/null; then
  apt-get update && apt-get install -y --allow-downgrades qemu-system-arm qemu-utils/bookworm
fi
rustup target add thumbv6m-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf \
  riscv32imc-unknown-none-elf
rustup component add rustfmt clippy
export CARGO_TARGET_DIR="${KILN_BOARD_TARGET:-$root/examples/board-stm32f4/target}"

cd "$root/examples/board-stm32f4"
step "board-stm32f4: cargo fmt --check, clippy (probe and qemu flavours)"
cargo fmt --check
cargo clippy --locked --release -- -D warnings
cargo clippy --locked --release --no-default-features --features qemu -- -D warnings

step "board-stm32f4: the real-board build (thumbv7em-none-eabihf, defmt over RTT)"
cargo build --locked --release

step "board-stm32f4: the QEMU flavour on netduinoplus2"
cargo build --locked --release --no-default-features --features qemu
log=$(mktemp)
rc=0
timeout 60 qemu-system-arm -machine netduinoplus2 -nographic -monitor none \
  -semihosting-config enable=on,target=native \
  -kernel "$CARGO_TARGET_DIR/thumbv7em-none-eabihf/release/kiln-board-stm32f4" | tee "$log" || rc=$?
if [ "$rc" -ne 0 ] || ! grep -q '^RESULT PASS' "$log"; then
  echo "FAILED: board-stm32f4 under QEMU (exit code $rc)"
  exit 1
fi
# QEMU counts no cycles: the template says so instead of printing "0 cycles".
if grep -q ' 0 cycles' "$log" || ! grep -q '^invoke(): cycles not counted' "$log"; then
  echo "FAILED: board-stm32f4 under QEMU printed 0 cycles"
  exit 1
fi
rm -f "$log"

cd "$root/examples/board-minimal"
step "board-minimal: cargo fmt --check, no_std builds for thumbv6m and thumbv7em"
cargo fmt --check
for target in thumbv6m-none-eabi thumbv7em-none-eabihf; do
  cargo build --locked --release --target "$target"
done

# Without kiln's `critical-section` (or `single-core`) on thumbv6m, `Model::take()` is a
# compile error at the user's call in src/main.rs, naming the features, at `cargo check`
# (kiln::runtime::TakeSupported). About 4 s: the host crates are built above.
step "board-minimal: cargo check for thumbv6m without the feature fails at take()"
log=$(mktemp)
if cargo check --locked --release --target thumbv6m-none-eabi --no-default-features 2>"$log"; then
  echo "FAILED: board-minimal without a take() feature checked on thumbv6m"
  exit 1
fi
if ! grep -q 'error\[E0277\]: `Model::take()` needs a feature of `kiln`' "$log" \
  || ! grep -q -- '--> src/main.rs:' "$log" \
  || ! grep -q "this \`take()\` needs \`kiln\`'s feature \`single-core\` or" "$log"; then
  cat "$log"
  echo "FAILED: the thumbv6m error of take() does not name the features at src/main.rs"
  exit 1
fi
rm -f "$log"

# A crate whose memory.x has less RAM than the model needs, without a ram_budget: Kiln's
# error names memory.x (not the linker's ".bss will not fit"). A copy of board-minimal beside
# it (its path dependencies still resolve) with a 16-byte RAM region and the macro's budget
# taken out; about 4 s, the host crates are built above.
step "board-minimal: a memory.x too small for the model is Kiln's error at cargo check"
copy="$root/examples/board-minimal-memx"
rm -rf "$copy"
trap 'rm -rf "$copy"' EXIT
mkdir "$copy"
cp -r Cargo.toml Cargo.lock src "$copy/"
sed 's/LENGTH = 16K/LENGTH = 16/' memory.x >"$copy/memory.x"
sed -i '/ram_budget = /d' "$copy/src/main.rs"
grep -q "LENGTH = 16$" "$copy/memory.x"
log=$(mktemp)
if (cd "$copy" && cargo check --locked --release --target thumbv7em-none-eabihf 2>"$log"); then
  echo "FAILED: board-minimal with a 16-byte memory.x checked"
  exit 1
fi
if ! grep -q "more than the RAM region of the crate's \`memory.x\` (line 5: LENGTH = 16 bytes)" "$log" \
  || ! grep -q -- '--> src/main.rs:' "$log"; then
  cat "$log"
  echo "FAILED: the memory.x error does not name memory.x and the call in src/main.rs"
  exit 1
fi
rm -rf "$copy" "$log"
cd "$root/examples/board-minimal"

# The templates for other chips: each is its own workspace with its own Cargo.lock; they share
# the target directory above (same release profile: the host crates, Kiln's macro and
# planner, are built once for all of them).
for template in board-esp32c3 board-rp2040 board-rp2350 board-nrf52840; do
  cd "$root/examples/$template"
  step "$template: cargo fmt --check, clippy, the release build"
  cargo fmt --check
  cargo clippy --locked --release -- -D warnings
  cargo build --locked --release
done

step "done: the STM32F4 template runs under QEMU and matches TFLM; every crate builds"
