"""TFLM's invoke() time for whole public models, for the invoke benchmark.

Run by `cargo bench --bench invoke` (section `invoke` of BENCHMARKS.md), from the repository
root with the pinned environment:

  .venv/bin/python tools/bench_tflm_invoke.py [--json] [--rounds N] [--passes P] [--serve] STEM...

For each ../shared/models/<STEM>.tflite: the pinned TFLM interpreter (arena 8 MiB) runs
sample 1 of ../shared/models/golden/<STEM>/ and its outputs must equal the golden outputs.
Then each round times two batches of the same n calls (n: about 2 ms of calls, at least 1),
in CPU time of the calling thread (bench_common.now_ns: TFLM runs in the caller's thread,
and time while descheduled by other jobs does not count):
  A  reset(), write the sample's inputs, invoke()
  B  reset(), write the sample's inputs
and invoke_us = median over rounds of (A - B) / n: one invoke() with the same inputs every
time, without the set-up and the clock's own cost. N rounds (default 30) are spread over P
passes (default 5) through all models. empty_invoke_us is the same for a model without
operators: the floor of invoke() from Python (pybind call and TFLM's invoke loop).
--json prints one JSON object on stdout (progress goes to stderr). --serve: after preparing
every model, print `ready`, then run the requests `part <stem> <p>` (the p-th of the P
slices of that model's rounds) read from stdin, answering `ok` to each, until `done`, then
time the model without operators and print the JSON; the Rust benchmark uses it to
interleave TFLM's rounds with its own in time.
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np

import bench_common as bc
import tflite_common as tc

ARENA = 8 << 20
BATCH_S = 0.002


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Timed:
    def __init__(self, name, data, xs, want):
        self.name = name
        self.it = tc.make_interpreter(data, ARENA)
        self.xs = xs
        ys = tc.run_tflm(self.it, xs, len(want))
        for i, (y, w) in enumerate(zip(ys, want)):
            if np.ascontiguousarray(y).tobytes() != w:
                raise SystemExit(f"{name}: TFLM output {i} differs from the golden output")
        for _ in range(3):
            self.with_invoke()
        self.n = bc.batch_size(self.with_invoke, BATCH_S)
        self.times = []

    def set_up(self):
        it = self.it
        it.reset()
        for i, x in enumerate(self.xs):
            it.set_input(x, i)

    def with_invoke(self):
        self.set_up()
        self.it.invoke()

    def rounds(self, k):
        for _ in range(k):
            a = bc.batch_mean(self.with_invoke, self.n)
            b = bc.batch_mean(self.set_up, self.n)
            self.times.append(a - b)

    def median_us(self):
        return statistics.median(self.times) * 1e6


def golden_sample(stem):
    """Inputs (numpy) and outputs (bytes) of sample 1 of ../shared/models/golden/<stem>."""
    d = tc.SHARED_MODELS / "golden" / stem
    g = json.loads((d / "golden.json").read_text())
    s = g["samples"][0]
    xs = []
    for f, det in zip(s["inputs"], g["inputs"]):
        a = np.frombuffer((d / f).read_bytes(), dtype=tc.NP_DTYPES[det["dtype"]])
        xs.append(a.reshape(det["shape"]))
    ys = [(d / f).read_bytes() for f in s["outputs"]]
    return xs, ys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stems", nargs="+", help="model file stems in ../shared/models")
    ap.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    ap.add_argument("--rounds", type=int, default=30, help="timed rounds per model")
    ap.add_argument("--passes", type=int, default=5, help="passes over all models")
    ap.add_argument("--serve", action="store_true",
                    help="time on request from stdin (see bench_common.serve), then print JSON")
    args = ap.parse_args()
    t_start = time.time()
    models = {}
    for stem in args.stems:
        data = (tc.SHARED_MODELS / f"{stem}.tflite").read_bytes()
        xs, ys = golden_sample(stem)
        models[stem] = Timed(stem, data, xs, ys)
    empty = Timed("(empty)", bc.empty_model(), [np.zeros([1], np.int8)], [b"\0"])

    def part(m, p):
        p = int(p)
        m.rounds(args.rounds * (p + 1) // args.passes - args.rounds * p // args.passes)

    if args.serve:
        bc.serve({"part": lambda stem, p: part(models[stem], p)})
    else:
        for p in range(args.passes):
            for m in models.values():
                part(m, p)
    for p in range(args.passes):
        part(empty, p)
    res = {}
    for m in models.values():
        res[m.name] = {"invoke_us": m.median_us(), "rounds": len(m.times), "batch": m.n}
        log(f"{m.name:42s} TFLM invoke {m.median_us():12.3f} us  (batch {m.n})")
    floor = empty.median_us()
    log(f"empty-model invoke {floor:.3f} us; {time.time() - t_start:.1f} s")
    out = {"tflite_micro": bc.TFLM_VERSION, "machine": bc.machine(), "empty_invoke_us": floor,
           "models": res}
    if args.json or args.serve:
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
