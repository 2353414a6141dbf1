"""Measures TFLM's arena use and invoke time for every model Kiln tests against.

Models: every ../shared/models/*.tflite (top level only, not all_outputs/), every
../shared/models/realworld/*.tflite and every tests/models/*.tflite. For each, with the pinned TFLM (tools/requirements.txt):
  head       TFLM's planned non-persistent arena region in bytes (activations + kernel
             scratch), from Interpreter.print_allocations() after one invoke
  tail       persistent arena region in bytes (tensor structs, per-op data, state)
  total      head + tail as printed by TFLM
  min_arena  smallest arena_size (bisection in 16-byte steps) for which the interpreter is
             created (tensors allocated) and one invoke runs
  min_arena_exact  the same in 1-byte steps (between min_arena - 16 and min_arena)
  probe_crashes    arena sizes (if any) at which TFLM crashed instead of failing cleanly;
             counted as "does not fit" (every probe runs in a forked child)
  invoke_s   median wall time of one invoke() in seconds (inputs: seeded random, reset
             before each invoke as in the golden protocol), over invoke_n invokes
  ops, tensors  op and tensor counts of subgraph 0; source: "shared", "realworld" or "tests"
A model TFLM cannot load gets {"error": "..."} (plus source/ops/tensors) instead.

Writes tools/data/tflm_arena.json: a dict keyed by model file stem, sorted by name.
Numbers are for x86-64 (64-bit pointers: the tail is smaller on a 32-bit MCU).

Run from the repository root:  .venv/bin/python tools/tflm_arena.py [--quick]
(--quick: fewer timed invokes). Deterministic except invoke_s; about 15 s.
"""

import argparse
import json
import os
import re
import statistics
import time

import numpy as np

import tflite_common as tc

OUT = tc.REPO / "tools" / "data" / "tflm_arena.json"
BIG_ARENA = 32 << 20
STEP = 16


def model_paths():
    shared = sorted(tc.SHARED_MODELS.glob("*.tflite"))
    realworld = sorted((tc.SHARED_MODELS / "realworld").glob("*.tflite"))
    ours = sorted((tc.REPO / "tests" / "models").glob("*.tflite"))
    return ([("shared", p) for p in shared] + [("realworld", p) for p in realworld]
            + [("tests", p) for p in ours])


def inputs_for(model):
    sg = model.subgraphs[0]
    rng = np.random.default_rng(1)
    return [
        tc.random_input(rng, d["shape"], d["dtype"])
        for d in (tc.tensor_details(model, t) for t in sg.inputs)
    ]


def _fits_here(data, arena, xs, n_out):
    with tc.captured_stderr():
        try:
            it = tc.runtime.Interpreter.from_bytes(data, arena_size=arena)
            tc.run_tflm(it, xs, n_out)
            return True
        except (RuntimeError, IndexError, ValueError):
            return False


CRASHES = []


def fits(data, arena, xs, n_out):
    """True if TFLM allocates with this arena size and one invoke runs.

    Each probe runs in a forked child: with some too-small arenas TFLM crashes (SIGSEGV,
    seen on tflm_dtln_noise_suppression) instead of returning an error; a crash counts as
    "does not fit" and is recorded in CRASHES."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if _fits_here(data, arena, xs, n_out) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        CRASHES.append((arena, os.WTERMSIG(status)))
        return False
    return os.WEXITSTATUS(status) == 0


def min_arena(data, xs, n_out, start, step=STEP, lo=0):
    """Smallest lo + k * step that fits, assuming fitting is monotone in the size."""
    hi = lo + -(-(start - lo) // step) * step
    while not fits(data, hi, xs, n_out):
        hi = lo + 2 * (hi - lo)
        if hi > BIG_ARENA:
            raise RuntimeError("does not fit in the largest arena tried")
    # invariant: lo does not fit (or is 0), hi fits
    while hi - lo > step:
        mid = lo + (hi - lo) // 2 // step * step
        if fits(data, mid, xs, n_out):
            hi = mid
        else:
            lo = mid
    return hi


def allocations(it):
    with tc.captured_stderr() as log:
        it.print_allocations()
    text = log["text"]
    got = {}
    for key in ("total", "head", "tail"):
        m = re.search(rf"Arena allocation {key} (\d+) bytes", text)
        if not m:
            raise RuntimeError(f"no '{key}' in print_allocations output:\n{text}")
        got[key] = int(m.group(1))
    return got


def time_invokes(it, xs, n_out, n_min, budget_s):
    times = []
    t_end = time.perf_counter() + budget_s
    while len(times) < n_min or (time.perf_counter() < t_end and len(times) < 1000):
        it.reset()
        for i, x in enumerate(xs):
            it.set_input(x, i)
        t0 = time.perf_counter()
        it.invoke()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def measure(data, quick):
    model = tc.load_model(data)
    sg = model.subgraphs[0]
    n_out = len(sg.outputs)
    xs = inputs_for(model)
    it = tc.make_interpreter(data, BIG_ARENA)
    tc.run_tflm(it, xs, n_out)
    alloc = allocations(it)
    n_min = 5 if quick else 21
    budget = 0.2 if quick else 1.0
    # Warm up, then time.
    tc.run_tflm(it, xs, n_out)
    inv, n = time_invokes(it, xs, n_out, n_min, budget)
    del it
    CRASHES.clear()
    m16 = min_arena(data, xs, n_out, alloc["total"])
    m1 = min_arena(data, xs, n_out, m16, step=1, lo=m16 - STEP)
    out = {
        "head": alloc["head"],
        "tail": alloc["tail"],
        "total": alloc["total"],
        "min_arena": m16,
        "min_arena_exact": m1,
        "invoke_s": inv,
        "invoke_n": n,
    }
    if CRASHES:
        out["probe_crashes"] = sorted({a for a, _ in CRASHES})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer timed invokes")
    args = ap.parse_args()
    result = {}
    for source, path in model_paths():
        data = path.read_bytes()
        model = tc.load_model(data)
        sg = model.subgraphs[0]
        entry = {"source": source, "ops": len(sg.operators or []), "tensors": len(sg.tensors)}
        try:
            entry.update(measure(data, args.quick))
            print(
                f"{path.stem:42s} head {entry['head']:7d} tail {entry['tail']:6d} "
                f"min {entry['min_arena']:7d} invoke {entry['invoke_s'] * 1e3:8.3f} ms",
                flush=True,
            )
        except RuntimeError as e:
            lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
            entry["error"] = " | ".join(lines)[:400] or repr(e)
            print(f"{path.stem:42s} ERROR {entry['error']}", flush=True)
        result[path.stem] = entry
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(dict(sorted(result.items())), indent=1) + "\n")
    print(f"wrote {OUT.relative_to(tc.REPO)} ({len(result)} models)")


if __name__ == "__main__":
    main()
