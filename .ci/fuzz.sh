#!/usr/bin/env bash
# The `compile` fuzz target (fuzz/, cargo-fuzz on the stable toolchain, no sanitizer, debug
# assertions and overflow checks on) for a bounded number of runs, from the committed
# regression corpus and the models as seeds. Fails on any crash, timeout or OOM.
# KILN_FUZZ_RUNS sets the number of runs (default 30,000: about 2.2 min of fuzzing after a
# 2 min build of the target, about 4.5 min in all on 2 cores; 2026-12-02).
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.13.2
bin=.ci-cache/cargo-fuzz/bin
if ! "$bin/cargo-fuzz" --version 2>/dev/null | grep -q "$version"; then
  cargo install cargo-fuzz --version "$version" --locked --root .ci-cache/cargo-fuzz
fi
export PATH="$PWD/$bin:$PATH"

target_dir="${CARGO_TARGET_DIR:-$PWD/fuzz/target}"
flags=(-s none -a -O --target-dir "$target_dir")
cargo fuzz build "${flags[@]}" compile

# New inputs go to a scratch directory. The seeds are the committed corpus and the models
# (copied, since libFuzzer reads directories recursively and would take the golden data too).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/new" "$scratch/seeds"
cp tests/fuzz_regressions/*.tflite tests/models/*.tflite tests/ui/fixtures/*.tflite \
  tests/control_flow/*.tflite "$scratch/seeds/"
shared="${KILN_SHARED:-../shared}/models"
if [ -d "$shared" ]; then
  cp "$shared"/*.tflite "$scratch/seeds/"
  for f in "$shared"/all_outputs/*.tflite; do cp "$f" "$scratch/seeds/all_outputs_${f##*/}"; done
fi

cargo fuzz run "${flags[@]}" compile "$scratch/new" "$scratch/seeds" -- \
  -runs="${KILN_FUZZ_RUNS:-30000}" -seed=1 -max_len=400000 -rss_limit_mb=4096 -timeout=20 \
  -print_final_stats=1 2>&1 | grep -v '^#[0-9].*\(NEW\|REDUCE\|pulse\)' || {
  echo "fuzz: a crash: the backtrace is above, the input in fuzz/artifacts/compile/" \
    "(minimize it with cargo fuzz tmin and add it to tests/fuzz_regressions/)" >&2
  exit 1
}
