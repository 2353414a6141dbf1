#!/usr/bin/env bash
# Creates .venv/ (git-ignored) with the pinned Python packages the tools/ scripts use.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python3 -m venv "$root/.venv"
"$root/.venv/bin/pip" install -q -r "$root/tools/requirements.txt"
