#!/usr/bin/env python3
"""The edit loop of a firmware crate that uses `include_model!`: the time of `cargo check`
after touching `main.rs`, with each real-world model under its tightest budget, against the
same crate without the macro. Writes the `edit-loop` section of BENCHMARKS.md.

Run from the repository root:  python3 tools/bench_edit_loop.py [--no-write]

A new crate in target/bench-edit-loop/ (default profile: no build-override, as a new user's
crate) depends on Kiln by path. For each ../shared/models/realworld/*.tflite, `main.rs` is
`mod model { kiln::include_model!("<model>", ram_budget = B); }` with B = the arena of
`kiln plan --min-ram` (the smallest Kiln reaches; release CLI, built first), then:
  first   `cargo check` right after writing main.rs: the macro plans (a plan-cache miss;
          the cache is emptied before each model)
  edit    `touch src/main.rs; cargo check`, median of 5: the macro reads the plan cache
  base    the same with `main.rs` without the macro (median of 5)
"edit - base" is what the macro adds to every check after an edit. Wall time, on a shared
2-core machine: the medians are the numbers to read. Standard library only.
"""

import argparse
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("KILN_SHARED", REPO.parent / "shared"))
CRATE = REPO / "target" / "bench-edit-loop"
BENCH = REPO / "BENCHMARKS.md"
BEGIN, END = "<!-- kiln:edit-loop -->", "<!-- /kiln:edit-loop -->"
RUNS = 5


def run(cmd, cwd=None, check=True):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}")
    return r


def timed(cmd, cwd):
    t = time.perf_counter()
    run(cmd, cwd)
    return time.perf_counter() - t


def min_ram(cli, model):
    out = run([cli, "plan", "--min-ram", str(model)]).stdout
    arena = int(re.search(r"^arena bytes\s+(\d+)", out, re.M).group(1))
    persistent = int(re.search(r"^persistent bytes\s+(\d+)", out, re.M).group(1))
    return arena + persistent


def write_main(body):
    (CRATE / "src" / "main.rs").write_text(body)


def checks_after_touch():
    times = []
    for _ in range(RUNS):
        (CRATE / "src" / "main.rs").touch()
        times.append(timed(["cargo", "check", "-q"], CRATE))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    run(["cargo", "build", "--release", "-q", "-p", "kiln-cli"], REPO)
    cli = REPO / "target" / "release" / "kiln"
    (CRATE / "src").mkdir(parents=True, exist_ok=True)
    (CRATE / "Cargo.toml").write_text(
        "[package]\nname = \"edit-loop\"\nversion = \"0.1.0\"\nedition = \"2024\"\n"
        "publish = false\n\n[workspace]\n\n[dependencies]\n"
        f"kiln = {{ path = \"{REPO}\" }}\n")
    plain = "fn main() {\n    println!(\"{}\", 1 + 1);\n}\n"
    write_main(plain)
    run(["cargo", "check", "-q"], CRATE)  # the dependencies, once
    base = checks_after_touch()
    print(f"base {base:.2f} s", flush=True)
    rows = []
    for model in sorted((SHARED / "models" / "realworld").glob("*.tflite")):
        budget = min_ram(cli, model)
        shutil.rmtree(CRATE / "target" / "kiln-cache", ignore_errors=True)
        write_main(
            "mod model {\n"
            f"    kiln::include_model!(\"{model}\", ram_budget = {budget});\n"
            "}\n\nfn main() {\n    println!(\"{}\", model::Model::take().is_some());\n}\n")
        first = timed(["cargo", "check", "-q"], CRATE)
        edit = checks_after_touch()
        rows.append((model.stem, budget, first, edit))
        print(f"{model.stem:44s} budget {budget:8d}  first {first:6.2f} s  edit {edit:5.2f} s  "
              f"+{edit - base:.2f} s", flush=True)
    worst = max(r[3] for r in rows) - base
    lines = [
        "## Edit loop",
        "",
        f"Written by `tools/bench_edit_loop.py` ({datetime.date.today()}). A new binary crate "
        "(default profile, no `build-override`) with `mod model { kiln::include_model!(<model>, "
        "ram_budget = <the arena of `kiln plan --min-ram`>); }`, for each real-world model: "
        "*first* = `cargo check` right after writing `main.rs` (the macro plans: the plan cache "
        f"is empty), *edit* = `touch src/main.rs; cargo check`, median of {RUNS} (the macro "
        "reads its plan cache, `target/kiln-cache/`), against the same crate without the macro "
        f"(*base*, {base:.2f} s). Wall time on a shared 2-core machine.",
        "",
        f"Largest *edit - base*: {worst:.2f} s (issue 32's target: at most 1 s).",
        "",
        "| model | ram_budget B | first s | edit s | edit - base s |",
        "|---|--:|--:|--:|--:|",
    ]
    for stem, budget, first, edit in rows:
        lines.append(f"| {stem} | {budget} | {first:.2f} | {edit:.2f} | {edit - base:.2f} |")
    text = "\n".join(lines) + "\n"
    if args.no_write:
        print(text)
        return
    doc = BENCH.read_text()
    block = f"{BEGIN}\n{text}{END}"
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    BENCH.write_text(doc)
    print(f"wrote {BENCH.name} ({BEGIN})")


if __name__ == "__main__":
    main()
