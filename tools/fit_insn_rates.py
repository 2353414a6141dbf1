#!/usr/bin/env python3
"""Fits the instruction rates behind `kiln plan --layers`' estimates and writes them to
`planner/src/report/rates.rs` (committed; the Rust build never runs this).

For every model measured in `tools/data/firmware.json` (Kiln's firmware on QEMU, executed
instructions per `invoke()`, opt-level "s"), `kiln plan --json --layers` gives the per-layer
work: MACs of the convolutions, depthwise convolutions and other MAC kernels (fully
connected, batch matmul, transposed convolution), elements of the other layers with code,
and the number of layers with code. A non-negative least-squares fit (relative error, so
that small models count as much as large ones) gives one rate per kind and per core
(Cortex-M4, Cortex-M55). The estimate's error on the same models (median and worst, in
percent) is written beside the rates, and `kiln plan` prints it with every estimate.

    python3 tools/fit_insn_rates.py [--kiln target/debug/kiln]
"""

import argparse
import json
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "models"
OUT = ROOT / "planner" / "src" / "report" / "rates.rs"

# The work of a model, by kind: the order of the rates in rates.rs.
KINDS = ["conv_macs", "depthwise_macs", "other_macs", "elements", "weights", "layers"]


def model_path(stem, group):
    if group == "realworld":
        return SHARED / "realworld" / f"{stem}.tflite"
    if group == "own":
        return ROOT / "tests" / "streaming" / f"{stem}.tflite"
    return SHARED / f"{stem}.tflite"


def work(kiln, path):
    """The per-kind work of a model's default plan."""
    out = subprocess.run(
        [kiln, "plan", "--json", "--layers", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    # Each layer's `work` (Kiln's own split into KINDS, planner/src/report/analyze.rs).
    w = dict.fromkeys(KINDS, 0)
    for layer in json.loads(out)["layers"]:
        for kind, units in zip(KINDS, layer["work"]):
            w[kind] += units
    return w


def nnls(a, b):
    """Least squares with non-negative coefficients: drop the most negative and refit."""
    active = list(range(a.shape[1]))
    while True:
        x, *_ = np.linalg.lstsq(a[:, active], b, rcond=None)
        if (x >= 0).all():
            full = np.zeros(a.shape[1])
            full[active] = x
            return full
        del active[int(np.argmin(x))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kiln", default=str(ROOT / "target" / "debug" / "kiln"))
    args = ap.parse_args()
    data = json.loads((ROOT / "tools" / "data" / "firmware.json").read_text())
    rows = []
    for stem, m in sorted(data["models"].items()):
        insns = {core: m.get(core, {}).get("s", {}).get("insns") for core in ("m4", "m55")}
        if None in insns.values():
            continue
        w = work(args.kiln, model_path(stem, m.get("group")))
        rows.append((stem, w, insns))
        print(stem, w, insns, file=sys.stderr)
    rates, errors = {}, {}
    for core in ("m4", "m55"):
        a = np.array([[w[k] for k in KINDS] for _, w, _ in rows], dtype=float)
        b = np.array([i[core] for *_, i in rows], dtype=float)
        # Relative error: each model's row scaled by its measured count.
        x = nnls(a / b[:, None], np.ones(len(b)))
        est = a @ x
        err = np.abs(est - b) / b * 100
        rates[core] = x
        errors[core] = (float(np.median(err)), float(err.max()), rows[int(err.argmax())][0])
        for (stem, *_), e, m in zip(rows, est, b):
            print(f"{core} {stem}: estimate {e:.0f}, measured {m:.0f}", file=sys.stderr)

    def floats(xs):
        return ", ".join(f"{v:.4f}" for v in xs)

    lines = [
        "//! Instructions per unit of work for `kiln plan --layers`' estimates, fitted by",
        "//! `tools/fit_insn_rates.py` (do not edit) to Kiln's firmware on QEMU",
        f"//! (`tools/data/firmware.json`, opt-level \"s\", {len(rows)} models).",
        "",
        "/// The kinds of work, in the order of the rates: MACs of convolutions, of depthwise",
        "/// convolutions and of the other MAC kernels; elements and constant bytes of the layers",
        "/// without MACs; layers with code (a call's cost).",
        # As rustfmt writes it (one kind a line), so that a rerun changes only numbers.
        "pub const KINDS: [&str; 6] = [",
        *(f'    "{k}",' for k in KINDS),
        "];",
        "",
        "/// Cortex-M4 (DSP kernels) instructions per unit of each of [`KINDS`].",
        f"pub const M4: [f64; 6] = [{floats(rates['m4'])}];",
        "",
        "/// Cortex-M55 (Helium kernels) instructions per unit of each of [`KINDS`].",
        f"pub const M55: [f64; 6] = [{floats(rates['m55'])}];",
        "",
        "/// The models fitted.",
        f"pub const MODELS: usize = {len(rows)};",
        "",
        "/// The estimate's error on the fitted models, in percent: median and worst (M4, M55),",
        "/// and the model of the worst.",
    ]
    for core, name in (("m4", "M4"), ("m55", "M55")):
        med, worst, stem = errors[core]
        lines.append(f"pub const {name}_ERROR: (f64, f64, &str) = ({med:.1f}, {worst:.1f}, \"{stem}\");")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
