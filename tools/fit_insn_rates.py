#!/usr/bin/env python3
"""Fits the instruction rates behind `kiln plan --layers`' estimates, and the code sizes
behind `kiln plan`'s code estimate, and writes them to `planner/src/report/rates.rs`
(committed; the Rust build never runs this).

For every model measured in `tools/data/firmware.json` (Kiln's firmware on QEMU, executed
instructions per `invoke()`, opt-level "s"), `kiln plan --json --layers` gives the per-layer
work: MACs of the convolutions, depthwise convolutions and other MAC kernels (fully
connected, batch matmul, transposed convolution), elements of the other layers with code,
and the number of layers with code. A non-negative least-squares fit (relative error, so
that small models count as much as large ones) gives one rate per kind and per core
(Cortex-M4, Cortex-M55). The estimate's error on the same models (median and worst, in
percent) is written beside the rates, and `kiln plan` prints it with every estimate.

The code estimate is fitted the same way to the bytes of Kiln's functions in each Cortex-M4
image (`kiln_fn_bytes`: `invoke()` and the kernels it calls, opt-level "s" and 3) against
the report's `flash.code_work`: the distinct kernel functions by kind and the operators that
call one.

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
# The code's work (`flash.code_work`, planner/src/report/code.rs), in the order of CODE_KINDS.
CODE_KINDS = [
    "conv_kernels",
    "depthwise_kernels",
    "other_mac_kernels",
    "other_kernels",
    "calling_ops",
]


def model_path(stem, group):
    if group == "realworld":
        return SHARED / "realworld" / f"{stem}.tflite"
    if group == "own":
        return ROOT / "tests" / "streaming" / f"{stem}.tflite"
    return SHARED / f"{stem}.tflite"


def work(kiln, path):
    """The per-kind work of a model's default plan, and the work of its code."""
    out = subprocess.run(
        [kiln, "plan", "--json", "--layers", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    report = json.loads(out)
    # Each layer's `work` (Kiln's own split into KINDS, planner/src/report/analyze.rs).
    w = dict.fromkeys(KINDS, 0)
    for layer in report["layers"]:
        for kind, units in zip(KINDS, layer["work"]):
            w[kind] += units
    return w, report["flash"]["code_work"]


def fit(a, b):
    """Non-negative rates minimising the relative error; the estimates and errors (%)."""
    x = nnls(a / b[:, None], np.ones(len(b)))
    est = a @ x
    return x, est, np.abs(est - b) / b * 100


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
    rows, code_rows = [], []
    for stem, m in sorted(data["models"].items()):
        insns = {core: m.get(core, {}).get("s", {}).get("insns") for core in ("m4", "m55")}
        code = {opt: m.get("m4", {}).get(opt, {}).get("kiln_fn_bytes") for opt in ("s", "3")}
        if None in insns.values() and None in code.values():
            continue
        w, cw = work(args.kiln, model_path(stem, m.get("group")))
        if None not in insns.values():
            rows.append((stem, w, insns))
        if None not in code.values():
            code_rows.append((stem, cw, code))
        print(stem, w, insns, cw, code, file=sys.stderr)
    rates, errors = {}, {}
    for core in ("m4", "m55"):
        a = np.array([[w[k] for k in KINDS] for _, w, _ in rows], dtype=float)
        b = np.array([i[core] for *_, i in rows], dtype=float)
        # Relative error: each model's row scaled by its measured count.
        x, est, err = fit(a, b)
        rates[core] = x
        errors[core] = (float(np.median(err)), float(err.max()), rows[int(err.argmax())][0])
        for (stem, *_), e, m in zip(rows, est, b):
            print(f"{core} {stem}: estimate {e:.0f}, measured {m:.0f}", file=sys.stderr)

    code_rates = {}
    a = np.array([cw for _, cw, _ in code_rows], dtype=float)
    for opt in ("s", "3"):
        # Relative error, floored at 1 KB so that a model whose code is a few bytes does not
        # rule the fit.
        b = np.array([c[opt] for *_, c in code_rows], dtype=float)
        scale = np.maximum(b, 1024)
        code_rates[opt] = nnls(a / scale[:, None], b / scale)
    est = a @ code_rates["s"]
    b = np.array([c["s"] for *_, c in code_rows], dtype=float)
    off = np.abs(est - b)
    # Median in percent; worst in bytes (a few hundred bytes off a tiny model is a large
    # percentage and no matter for flash).
    code_error = (float(np.median(off / b * 100)), float(off.max()), code_rows[int(off.argmax())][0])
    for (stem, *_), e, m in zip(code_rows, est, b):
        print(f"code s {stem}: estimate {e:.0f}, measured {m:.0f}", file=sys.stderr)

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
    med, worst, stem = code_error
    lines += [
        "",
        "/// The kinds of code, in the order of the code rates: distinct kernel functions of",
        "/// convolutions, of depthwise convolutions, of the other MAC kernels and of the rest;",
        "/// operators that call a kernel.",
        "pub const CODE_KINDS: [&str; 5] = [",
        *(f'    "{k}",' for k in CODE_KINDS),
        "];",
        "",
        '/// Cortex-M4 code bytes per unit of each of [`CODE_KINDS`], opt-level "s".',
        f"pub const CODE_M4_S: [f64; 5] = [{floats(code_rates['s'])}];",
        "",
        "/// Cortex-M4 code bytes per unit of each of [`CODE_KINDS`], opt-level 3.",
        f"pub const CODE_M4_3: [f64; 5] = [{floats(code_rates['3'])}];",
        "",
        "/// The models fitted for the code estimate.",
        f"pub const CODE_MODELS: usize = {len(code_rows)};",
        "",
        '/// The code estimate\'s error on the fitted models at opt-level "s": median in percent,',
        "/// worst in bytes, and the model of the worst.",
        f"pub const CODE_ERROR: (f64, f64, &str) = ({med:.1f}, {worst:.0f}.0, \"{stem}\");",
    ]
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
