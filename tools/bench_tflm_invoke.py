"""TFLM's invoke() time for whole public models, for the invoke benchmark.

Run by `cargo bench --bench invoke` (section `invoke` of BENCHMARKS.md), from the repository
root with the pinned environment:

  .venv/bin/python tools/bench_tflm_invoke.py [--json] [--rounds N] [--passes P] [--serve] STEM...

For each ../shared/models/<STEM>.tflite: the pinned TFLM interpreter (arena 8 MiB) runs
sample 1 of ../shared/models/golden/<STEM>/ and its outputs must equal the golden outputs.
A STEM `realworld/<NAME>` is ../shared/models/realworld/<NAME>.tflite with sample 1 of
tests/realworld/<NAME>/ (tools/gen_realworld_golden.py). A STEM `control_flow/<NAME>` is the
multi-subgraph model tests/control_flow/<NAME>.tflite
(IF, WHILE, CALL_ONCE, resource variables; the wheel counts the VAR_HANDLE variables
itself): on a fresh interpreter, its golden's first call (tests/control_flow/<NAME>.json)
must give that call's outputs; then reset() and the golden's first call after a reset must
give its outputs too (reset() fills the resource variables and does not re-arm CALL_ONCE,
the state every timed call below starts from); the first call's inputs are then timed.
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
interleave TFLM's rounds with its own in time. The JSON also holds, per model, the outputs
(hex) of one more timed call (reset(), inputs, invoke()), which the Rust benchmark compares
with Kiln's: both time the same computation from the same state.
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


def _check(name, what, ys, want):
    for i, (y, w) in enumerate(zip(ys, want)):
        if np.ascontiguousarray(y).tobytes() != w:
            raise SystemExit(f"{name}: TFLM output {i} differs from the golden output ({what})")


class Timed:
    def __init__(self, name, data, xs, want, after_reset=None):
        """`after_reset`: (inputs, outputs) of a golden call made right after a reset(),
        checked after the first call."""
        self.name = name
        self.it = tc.make_interpreter(data, ARENA)
        self.xs = xs
        self.n_out = len(want)
        _check(name, "first call", tc.run_tflm(self.it, xs, len(want)), want)
        if after_reset is not None:
            rxs, rys = after_reset
            _check(name, "after reset()", tc.run_tflm(self.it, rxs, len(rys)), rys)
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

    def timed_outputs(self):
        """Outputs (hex) of one more timed call."""
        self.with_invoke()
        return [np.ascontiguousarray(self.it.get_output(i)).tobytes().hex()
                for i in range(self.n_out)]


def golden_sample(stem, d=None):
    """Inputs (numpy) and outputs (bytes) of sample 1 of ../shared/models/golden/<stem> (or
    of the golden directory `d`)."""
    d = d or tc.SHARED_MODELS / "golden" / stem
    g = json.loads((d / "golden.json").read_text())
    s = g["samples"][0]
    xs = []
    for f, det in zip(s["inputs"], g["inputs"]):
        a = np.frombuffer((d / f).read_bytes(), dtype=tc.NP_DTYPES[det["dtype"]])
        xs.append(a.reshape(det["shape"]))
    ys = [(d / f).read_bytes() for f in s["outputs"]]
    return xs, ys


CONTROL_FLOW = "control_flow/"
REALWORLD = "realworld/"


def _tensor(det, hexbytes):
    a = np.frombuffer(bytes.fromhex(hexbytes), dtype=tc.NP_DTYPES[det["dtype"]])
    return a.reshape(det["shape"])


def control_flow_case(name):
    """Model bytes, the first call's inputs (numpy) and outputs (bytes), and the first call
    after a reset() as (inputs, outputs), of tests/control_flow/<name>.{tflite,json}."""
    d = tc.REPO / "tests" / "control_flow"
    g = json.loads((d / f"{name}.json").read_text())

    def call(c):
        xs = [_tensor(det, h) for det, h in zip(g["inputs"], c["inputs"])]
        return xs, [bytes.fromhex(h) for h in c["outputs"]]

    calls = g["calls"]
    if calls[0]["reset_before"]:
        raise SystemExit(f"{name}: the golden's first call follows a reset()")
    after = next(call(c) for c in calls if c["reset_before"])
    xs, ys = call(calls[0])
    return (d / f"{name}.tflite").read_bytes(), xs, ys, after


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
        if stem.startswith(CONTROL_FLOW):
            data, xs, ys, after = control_flow_case(stem[len(CONTROL_FLOW):])
            models[stem] = Timed(stem, data, xs, ys, after)
        elif stem.startswith(REALWORLD):
            name = stem[len(REALWORLD):]
            data = (tc.SHARED_MODELS / "realworld" / f"{name}.tflite").read_bytes()
            xs, ys = golden_sample(name, tc.REPO / "tests" / "realworld" / name)
            models[stem] = Timed(stem, data, xs, ys)
        else:
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
        res[m.name] = {"invoke_us": m.median_us(), "rounds": len(m.times), "batch": m.n,
                       "timed_outputs": m.timed_outputs()}
        log(f"{m.name:42s} TFLM invoke {m.median_us():12.3f} us  (batch {m.n})")
    floor = empty.median_us()
    log(f"empty-model invoke {floor:.3f} us; {time.time() - t_start:.1f} s")
    out = {"tflite_micro": bc.TFLM_VERSION, "machine": bc.machine(), "empty_invoke_us": floor,
           "models": res}
    if args.json or args.serve:
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
