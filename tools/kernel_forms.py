#!/usr/bin/env python3
"""Instructions per MAC of each kernel function a plan calls, on the emulated Cortex-M4:
the measurements behind the form factors of `build-support/src/cost.rs` (how much slower a
convolution's lean-scratch, in-place and reference forms run than its fast form), which the
RAM budget's choice among plans and tilings uses.

For each MODEL@BUDGET (BUDGET in bytes, or `none`), builds examples/firmware with
`KILN_RAM_BUDGET` at the given opt-level, checks its outputs against TFLM's golden ones,
breaks one `invoke()` down per operator as tools/firmware_bench.py does (its line-info
copy of the firmware and the per-PC histogram plugin), and groups the operators by the
kernel function `kiln plan --layers --json` names for them at that budget: instructions,
MACs, instructions per MAC, elements and instructions per element.

Usage: .venv/bin/python tools/kernel_forms.py [--opt 3] MODEL@BUDGET...
  e.g. tflm_person_detect_int8@none tflm_person_detect_int8@24576
       mlperf_tiny_vww_mobilenetv1_025_96_int8@36864 mlperf_tiny_kws_dscnn_int8@8490
Needs what tools/firmware_bench.py needs. A few minutes per build on the 2-core machine.
"""

import argparse
import collections
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import firmware_bench as fb  # noqa: E402


def kiln_bin():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "kiln-cli"], cwd=REPO, check=True)
    return REPO / "target" / "release" / "kiln"


def model(stem, budget):
    """tools/firmware_bench.py's model `stem` (its golden outputs), built at `budget`."""
    found = [m for m in fb.all_models() if m.stem == stem]
    if not found:
        sys.exit(f"no model {stem}")
    m = found[0]
    return fb.Model(m.path, m.golden, m.group,
                    {} if budget == "none" else {"KILN_RAM_BUDGET": budget})


def layers(kiln, path, budget):
    """The operators of the plan at `budget` (the tiled graph's, if tiled), by index."""
    args = [str(kiln), "plan", "--layers", "--json", str(path)]
    if budget != "none":
        args += ["--ram-budget", budget]
    d = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    ops = [None] * len(d["layers"])
    for layer in d["layers"]:
        ops[layer["op"]] = {"name": layer["name"], "kind": layer["name"], "macs": layer["macs"],
                            "elements": layer["elements"], "kernel": layer["kernel"]}
    return ops


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--opt", default="3")
    ap.add_argument("runs", nargs="+", metavar="MODEL@BUDGET")
    args = ap.parse_args()
    fb.ensure_venv()
    kiln = kiln_bin()
    plugin = fb.TARGET_DIR / "qemu-insn-count" / "libfncount.so"
    if not plugin.exists() or not (plugin.parent / "libpchist.so").exists():
        fb.run(["bash", str(fb.PLUGIN_SRC / "build.sh"), str(plugin.parent)])
    fb.lines_crate(fb.LINES_CRATE, False)
    for run in args.runs:
        stem, _, budget = run.partition("@")
        budget = budget or "none"
        m = model(stem, budget)
        ops = layers(kiln, m.path, budget)
        r = fb.measure(m, *fb.M4, args.opt, plugin)
        if not r.get("pass"):
            sys.exit(f"{run}: the firmware does not build or does not match TFLM: "
                     f"{r.get('error') or r.get('log')}")
        bd = fb.breakdown(m, *fb.M4, args.opt, r, ops, plugin.parent)
        per = collections.defaultdict(lambda: [0, 0, 0, 0])
        for k, op in enumerate(ops):
            p = per[op["kernel"]]
            p[0] += bd["per_op"].get(k, 0)
            p[1] += op["macs"]
            p[2] += op["elements"]
            p[3] += 1
        print(f"{stem} at {budget} B, opt-level {args.opt}: {r['insns2']} instructions, "
              f"arena {r['arena_bytes']} B, same image as the measured firmware: "
              f"{bd['same_image']}")
        for kernel, (insns, macs, elements, n) in sorted(per.items(), key=lambda x: -x[1][0]):
            per_mac = f"{insns / macs:7.3f}/MAC" if macs else " " * 11
            per_el = f"{insns / elements:7.2f}/element" if elements else ""
            print(f"  {kernel:<58} x{n:<3} {insns:>10} insns {macs:>9} MACs {per_mac} "
                  f"{per_el}")


if __name__ == "__main__":
    main()
