#!/usr/bin/env python3
"""RAM below the layer-by-layer bound: writes the `kiln:tiling` section of BENCHMARKS.md.

For each public and real-world model, with the `kiln` command of this repository (built
here in release): the default (fastest) arena, the smallest untiled arena (`kiln plan`'s
"RAM or speed" line: lean scratch, convolutions in place), and `kiln plan --min-ram` (the
smallest arena, with the first operators run in strips of rows where that is smaller, at
most 20 % extra MACs), its extra MACs and tiling, and Kiln's RAM (arena + persistent) over
TFLM's minimal arena (tools/data/tflm_arena.json, measured by tools/tflm_arena.py), with the
geometric mean over the public models and over the real-world ones, and the min-ram arena
with the input streamed (`--streamed-input`); plus Kiln's
MobileNetV2-style test model (tests/models/tiling, inverted residuals with ADD skips). Then
the curve for person_detect and vww: the smallest arena within each cap of extra MACs
(`--min-ram --max-extra-macs P`). Then on the Cortex-M4 (QEMU mps2-an386,
examples/firmware, opt-level 3): instructions of one invoke() of every model whose
min-ram plan is tiled, compiled untiled (the default plan) and with `ram_budget` at the
min-ram arena (tiled), and of person_detect and vww at the budgets of BUDGETS (which
kernels and tiling each takes), counted by ../shared/tools/qemu-insn-count as
tools/firmware_bench.py does; each firmware run checks its outputs against TFLM's golden
ones.

Usage: .venv/bin/python tools/bench_tiling.py [--no-m4]. Needs what tools/firmware_bench.py
needs for the M4 part. About 30 minutes on the 2-core machine.
"""

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import firmware_bench as fb  # noqa: E402

SHARED = Path(os.environ.get("KILN_SHARED", REPO.parent / "shared"))
MODELS = SHARED / "models"
BENCH = REPO / "BENCHMARKS.md"
BEGIN, END = "<!-- kiln:tiling -->", "<!-- /kiln:tiling -->"
CURVE = ("tflm_person_detect_int8", "mlperf_tiny_vww_mobilenetv1_025_96_int8")
CAPS = (0, 1, 2, 5, 10, 15, 20, 30, 50)
# Models run on the M4 with the input streamed, at their streamed min-ram arena.
STREAMED_M4 = ("tflm_person_detect_int8", "mlperf_tiny_vww_mobilenetv1_025_96_int8",
               "openmv_blazeface_front_128")
# RAM budgets for the speed-against-budget table (None: no budget).
BUDGETS = {
    "tflm_person_detect_int8": (None, 46080, 40960, 36864, 30720, 24576, 19008),
    "mlperf_tiny_vww_mobilenetv1_025_96_int8": (None, 40960, 36864),
}


def regions(t):
    """A plan's tiling in words: each region's operators and strips (rows x columns for
    patches of rows and columns), in order (`-`: none)."""
    if not t:
        return "-"
    def pieces(r):
        columns = r.get("columns", 1)
        return f"{r['patches']} strips" if columns == 1 else f"{r['patches']}x{columns} patches"

    return " + ".join(f"ops {r['start']}..{r['end']}, {pieces(r)}"
                      for r in [t, *t.get("more", [])])


def kiln_bin():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "kiln-cli"], cwd=REPO, check=True)
    return REPO / "target" / "release" / "kiln"


def plan(kiln, model, *args):
    r = subprocess.run([str(kiln), "plan", "--json", str(model), *args],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def streamed(kiln, model):
    """`kiln plan --min-ram --streamed-input`'s arena, or None if the input cannot be streamed."""
    r = subprocess.run([str(kiln), "plan", "--json", "--min-ram", "--streamed-input", str(model)],
                       capture_output=True, text=True)
    return json.loads(r.stdout)["arena_bytes"] if r.returncode == 0 else None


def m4_insns(stem, budget, plugin, stream=False):
    """Instructions of one invoke() (the second) on the M4, opt-level 3, and the arena
    (`stream`: with the input streamed, KILN_STREAMED)."""
    build_vars = {} if budget is None else {"KILN_RAM_BUDGET": str(budget)}
    if stream:
        build_vars["KILN_STREAMED"] = "1"
    m = next(m for m in fb.all_models() if m.stem == stem)
    model = fb.Model(m.path, m.golden, m.group, build_vars)
    r = fb.measure(model, fb.M4[0], fb.M4[1], "3", plugin)
    if not r.get("pass"):
        raise SystemExit(f"{stem} (budget {budget}): firmware failed: {r}")
    return r["insns2"], r["arena_bytes"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-m4", action="store_true", help="skip the Cortex-M4 runs")
    args = ap.parse_args()
    kiln = kiln_bin()
    tflm = json.loads((REPO / "tools" / "data" / "tflm_arena.json").read_text())
    # Per model: the min-ram arena, and its tiling and extra MACs if it is tiled.
    mins, tiled, streams = {}, {}, {}
    # Models whose min-ram plan runs in patches of rows and columns: their rows.
    two_d = []

    def table(models):
        """The rows of `models` and their RAM / TFLM ratios (where TFLM's arena is known)."""
        rows, ratios = [], []
        for model in models:
            stem = model.stem
            default = plan(kiln, model)
            smallest = default.get("smallest_arena_bytes") or default["arena_bytes"]
            m = plan(kiln, model, "--min-ram")
            persistent = m["persistent_bytes"]
            ram = m["arena_bytes"] + persistent
            t_min = tflm.get(stem, {}).get("min_arena")
            ratio = ram / t_min if t_min else None
            if ratio:
                ratios.append(ratio)
            mins[stem] = m["arena_bytes"]
            t = m.get("tiling")
            tiling = regions(t)
            extra = 100.0 * m["extra_macs"] / m["macs"] if m["macs"] else 0.0
            if t:
                tiled[stem] = (tiling, extra)
            if t and any(r.get("columns", 1) > 1 for r in [t, *t.get("more", [])]):
                s = plan(kiln, model, "--min-ram", "--strips-only")
                s_extra = 100.0 * s["extra_macs"] / s["macs"]
                two_d.append(f"| {stem} | {s['arena_bytes']} | {regions(s.get('tiling'))} | "
                             f"{s_extra:.1f} % | {m['arena_bytes']} | {tiling} | {extra:.1f} % | "
                             f"{m['arena_bytes'] / s['arena_bytes']:.3f} |")
            s = streamed(kiln, model)
            if s and stem in STREAMED_M4:
                streams[stem] = s
            rows.append(f"| {stem} | {default['arena_bytes']} | {smallest} | "
                        f"{m['arena_bytes']} | {tiling} | {extra:.1f} % | {s or '-'} | "
                        f"{persistent} | {t_min or 'n/a'} | "
                        f"{f'{ratio:.3f}' if ratio else 'n/a'} |")
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        return rows, ratios, geo

    own = sorted((REPO / "tests" / "models" / "tiling").glob("*.tflite"))
    rows, ratios, geo = table(sorted(MODELS.glob("*.tflite")) + own)
    rw_rows, rw_ratios, rw_geo = table(sorted((MODELS / "realworld").glob("*.tflite")))
    curve = []
    for stem in CURVE:
        model = MODELS / f"{stem}.tflite"
        points = []
        for cap in CAPS:
            m = plan(kiln, model, "--min-ram", "--max-extra-macs", str(cap))
            extra = 100.0 * m["extra_macs"] / m["macs"]
            points.append(f"{cap} % → {m['arena_bytes']} B ({extra:.1f} %)")
        curve.append(f"| {stem} | " + " | ".join(points) + " |")
    m4 = []
    if not args.no_m4:
        plugin = fb.TARGET_DIR / "qemu-insn-count" / "libfncount.so"
        if not plugin.exists():
            fb.run(["bash", str(fb.PLUGIN_SRC / "build.sh"), str(plugin.parent)])
        untiled = {}
        for stem, (tiling, extra) in tiled.items():
            base, base_arena = m4_insns(stem, None, plugin)
            untiled[stem] = base
            insns, arena = m4_insns(stem, mins[stem], plugin)
            m4.append(f"| {stem} | {base_arena} | {base} | {arena} | {tiling} | {extra:.1f} % "
                      f"| {insns} | {insns / base:.3f} |")
        stream_rows = []
        for stem, budget in streams.items():
            insns, arena = m4_insns(stem, budget, plugin, stream=True)
            base = untiled.get(stem) or m4_insns(stem, None, plugin)[0]
            stream_rows.append(f"| {stem} | {mins[stem]} | {arena} | {insns} | "
                               f"{insns / base:.3f} |")
        speed = []
        for stem, budgets in BUDGETS.items():
            model = MODELS / f"{stem}.tflite"
            base = None
            for b in budgets:
                p = plan(kiln, model, *(["--ram-budget", str(b)] if b else []))
                insns, arena = m4_insns(stem, b, plugin)
                base = base or insns
                t = p.get("tiling")
                tiling = regions(t)
                extra = 100.0 * p["extra_macs"] / p["macs"]
                variant = p["header"]["plan_variant"].split(":")[0]
                speed.append(f"| {stem} | {b or 'none'} | {arena} | {variant} | {tiling} | "
                             f"{extra:.1f} % | {insns} | {insns / base:.3f} |")
    text = [
        "## RAM below the bound: patch-based execution",
        "",
        "Written by `.venv/bin/python tools/bench_tiling.py`. Default = the arena Kiln compiles "
        "to without a budget (the fastest plan); smallest untiled = the smallest plan layer by "
        "layer (lean scratch, convolutions in place: `kiln plan`'s \"RAM or speed\" line); "
        "min-ram = `kiln plan --min-ram`: the smallest arena when runs of operators may "
        "also run one strip of rows at a time (`kiln_planner::tiling`, at most 20 % extra "
        "multiply-accumulates, the halos computed again: a region starting among the first "
        "operators, then further regions around where the plan still peaks, each a rewrite of "
        "the graph tiled before; `+` separates them, their operators the model's; `RxC "
        "patches`: R strips of rows each split across into C patches of columns, tried for "
        "the smallest tiling's region; a region "
        "may end in a sink, an int8 AVERAGE_POOL_2D, FULLY_CONNECTED or DEPTHWISE_CONV_2D over "
        "the whole image, to which each strip adds its integer sums, KILN_ROW_SUM / KILN_DOT_SUM "
        "/ KILN_DEPTHWISE_SUM, so that "
        "image is never whole: kws_dscnn, the micro_speech models), which `include_model!(..., ram_budget "
        "= N)` picks when no untiled plan meets N. Extra MACs = MACs computed again / the "
        "model's MACs. Streamed min-ram = `kiln plan --min-ram --streamed-input`: the same "
        "with the input read strip by strip from `invoke`'s row source, never whole in the "
        "arena (`streamed_input = true`; - where the operators reading the input cannot run "
        "in strips). RAM / TFLM = (min-ram arena + persistent) / TFLM's minimal arena "
        "(`tools/data/tflm_arena.json`, `tools/tflm_arena.py`, x86-64).",
        "",
        "| model | default arena B | smallest untiled B | min-ram arena B | tiling | extra MACs | "
        "streamed min-ram B | persistent B | TFLM min arena B | RAM / TFLM |",
        "|---|--:|--:|--:|---|--:|--:|--:|--:|--:|",
        *rows,
        "",
        f"Geometric mean of RAM / TFLM's minimal arena over the {len(ratios)} models: "
        f"**{geo:.3f}** (issue 30's target: at most 0.20).",
        "",
        "The real-world models (`../shared/models/realworld/`, as the vendors ship them), the "
        "same columns:",
        "",
        "| model | default arena B | smallest untiled B | min-ram arena B | tiling | extra MACs | "
        "streamed min-ram B | persistent B | TFLM min arena B | RAM / TFLM |",
        "|---|--:|--:|--:|---|--:|--:|--:|--:|--:|",
        *rw_rows,
        "",
        f"Geometric mean of RAM / TFLM's minimal arena over the {len(rw_ratios)} real-world "
        f"models: **{rw_geo:.3f}** (issue 30's target: at most 0.35).",
        "",
        "Patches of rows and columns (2-D patches): the models whose min-ram plan runs in "
        "them, against strips of rows alone (`kiln plan --min-ram --strips-only`).",
        "",
        "| model | strips-only min-ram B | tiling | extra MACs | min-ram B | tiling | extra MACs "
        "| patches / strips |",
        "|---|--:|---|--:|--:|---|--:|--:|",
        *two_d,
        "",
        "Arena against recomputation: the smallest arena with at most P % extra MACs "
        "(`kiln plan --min-ram --max-extra-macs P`; in brackets the extra MACs it takes).",
        "",
        "| model | " + " | ".join(f"P = {c}" for c in CAPS) + " |",
        "|---|" + "--:|" * len(CAPS),
        *curve,
    ]
    if m4:
        text += [
            "",
            "Cortex-M4 (QEMU mps2-an386, examples/firmware, opt-level 3): instructions of one "
            "`invoke()` of every model whose min-ram plan is tiled (public and real-world), "
            "untiled (no budget: the fastest plan) and tiled (`ram_budget` = the min-ram arena, "
            "`KILN_RAM_BUDGET`: the plan that meets it with the fewest estimated instructions); "
            "both match TFLM's golden outputs on the board.",
            "",
            "| model | untiled arena B | untiled instructions | tiled arena B | tiling | extra "
            "MACs | tiled instructions | tiled / untiled |",
            "|---|--:|--:|--:|---|--:|--:|--:|",
            *m4,
            "",
            "With the input streamed (`KILN_STREAMED=1`: `streamed_input = true`, `invoke` "
            "reading the rows from the golden input in flash through `kiln::stream::InMemory`), "
            "`ram_budget` = the streamed min-ram arena; the outputs match TFLM's on the board.",
            "",
            "| model | min-ram arena B | streamed arena B | streamed instructions | / untiled |",
            "|---|--:|--:|--:|--:|",
            *stream_rows,
            "",
            "Speed against the budget (same board): the plan `ram_budget` = B compiles to "
            "(`KILN_RAM_BUDGET`): its kernels (fastest; lean scratch: the fast convolutions "
            "without widened pixels; smallest: also the slow in-place convolutions), its "
            "tiling, and the instructions of one `invoke()`, over the fastest plan's. Among "
            "the plans that meet a budget, untiled and tiled, `kiln_build::compile_tokens` "
            "takes the one with the fewest estimated instructions (`build-support/src/cost.rs`: "
            "instructions per MAC, element and call, times how much slower the lean-scratch, "
            "in-place and reference forms of the convolutions run, measured with "
            "`tools/kernel_forms.py`).",
            "",
            "| model | budget B | arena B | kernels | tiling | extra MACs | instructions | "
            "/ fastest |",
            "|---|--:|--:|---|---|--:|--:|--:|",
            *speed,
        ]
    doc = BENCH.read_text()
    old_m4 = "Cortex-M4 (QEMU mps2-an386"
    if not m4 and BEGIN in doc and END in doc:
        old = doc[doc.index(BEGIN):doc.index(END)]
        if old_m4 in old:
            kept = old[old.index(old_m4):].rstrip("\n")
            note = ("(The Cortex-M4 tables below are from an earlier full run: this one was "
                    "`--no-m4`, so their plans may differ from the tables above.)")
            text += ["", note, "", kept]
    block = BEGIN + "\n" + "\n".join(text) + "\n" + END
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + "\n" + block + "\n"
    BENCH.write_text(doc)
    print(f"wrote {BENCH.relative_to(REPO)} ({BEGIN}); geomean {geo:.3f}, real-world {rw_geo:.3f}")


if __name__ == "__main__":
    main()
