"""The newer operators' kernel cases, timed in TFLM for the operator benchmark.

Operator benchmark (`cargo bench --bench operators`, section `kernels-new` of BENCHMARKS.md):
one row per kernel-case bundle (tests/kernel_cases/, see its README) of the operators and
types added after the first kernel benchmark, i.e. every bundle not in OLD_BUNDLES below (the
bundles of tests/kernel_cases/manifest.json at commit c46bc2e: CONV_2D, DEPTHWISE_CONV_2D,
FULLY_CONNECTED, the int8/float32 pools, ADD, SOFTMAX, MUL, SUB, MEAN, CONCATENATION,
LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU, HARD_SWISH, PAD, RESHAPE, QUANTIZE, DEQUANTIZE,
TRANSPOSE, STRIDED_SLICE, RESIZE_*, MAXIMUM, MINIMUM, TRANSPOSE_CONV, SVDF, LSTM int8, CAST,
NEG in the types they had then). New types of old operators (e.g. SUB int16, TANH int16)
count as new. Stateful operators (SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM,
SignalFilterBankSpectralSubtraction) are left out: their K-copy twin would share one state
tensor, so its copies compute different things.
Subcommands, run from the repository root with the pinned environment:

  .venv/bin/python tools/bench_operators.py select
      Writes benches/operators.json: per new bundle, the case with the most input + output
      bytes (first such case), its index, op, types and shapes. The models, inputs and golden
      outputs stay in the bundles (both sides read them from there). Deterministic.

  .venv/bin/python tools/bench_operators.py time [--json] [--rounds N] [--serve]
      Times TFLM on every row of benches/operators.json after checking that TFLM, given the
      case's own inputs, still produces the bundle's golden outputs, in the one-operator model
      and in each of its K copies. Per row, as tools/bench_kernels.py: invoke_us (median
      invoke() of the one-operator model from Python) and kernel_us = median over rounds of
      (t_K - t_1) / (K - 1), from a second model holding K copies of the operator (same
      inputs and constants, own outputs; K = 8..256, chosen so the copies take about 0.5 ms),
      which removes Python's and the interpreter's per-invoke cost. Batches of about 1 ms, CPU
      time of the calling thread (bench_common.now_ns). --serve: print `ready` after
      preparing every row, answer `rounds <row> <n>` requests from stdin with `ok <µs>` (the
      median kernel time of those n rounds) until `done`, then print the JSON
      (benches/operators.rs interleaves TFLM's rounds with its own and takes a Kiln / TFLM
      ratio per request).
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np

import bench_common as bc
import gen_kernel_cases as gk
import tflite_common as tc

KCASES = tc.REPO / "tests" / "kernel_cases"
OUT = tc.REPO / "benches" / "operators.json"
ARENA = 1 << 20
BIG_ARENA = 32 << 20
BATCH_S = 0.001  # seconds per timed batch
K_TARGET_S = 0.5e-3  # the K copies take about this long
K_MIN, K_MAX = 8, 256

# The bundles of the first kernel benchmark's operator set (manifest at commit c46bc2e).
OLD_BUNDLES = set("""
conv_2d_int8 conv_2d_float32 depthwise_conv_2d_int8 depthwise_conv_2d_float32
fully_connected_int8 fully_connected_float32 average_pool_2d_int8 average_pool_2d_float32
max_pool_2d_int8 max_pool_2d_float32 add_int8 add_float32 softmax_int8 softmax_float32
mul_int8 mul_float32 sub_int8 sub_float32 mean_int8 mean_float32 concatenation_int8
concatenation_float32 logistic_int8 logistic_float32 tanh_int8 tanh_float32 relu_int8
relu_float32 relu6_int8 relu6_float32 leaky_relu_int8 leaky_relu_float32 hard_swish_int8
hard_swish_float32 pad_int8 pad_float32 reshape_int8 reshape_float32 quantize_float32
quantize_int8 dequantize_int8 transpose_int8 transpose_float32 strided_slice_int8
strided_slice_float32 resize_nearest_neighbor_int8 resize_nearest_neighbor_float32
resize_bilinear_int8 resize_bilinear_float32 maximum_int8 maximum_float32 minimum_int8
minimum_float32 transpose_conv_int8 transpose_conv_float32 conv_2d_int16
depthwise_conv_2d_int16 fully_connected_int16 add_int16 softmax_int16 softmax_int8_int16
quantize_int16 quantize_int8_int16 quantize_int16_int16 quantize_int16_int32
quantize_int8_int32 svdf_int8 svdf_int8_int16state unidirectional_sequence_lstm_int8
mean_int16 leaky_relu_int16 cast_int8_int16 cast_int8_int32 cast_int8_float32 cast_int16_int8
cast_int16_int32 cast_int16_float32 cast_int32_int8 cast_int32_int16 cast_int32_float32
cast_float32_int8 cast_float32_int16 cast_float32_int32 neg_float32 leaky_relu_scales_int8
leaky_relu_scales_int16
""".split())
STATEFUL = ("SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM", "SignalFilterBankSpectralSubtraction",
            # the streaming Signal operators (KCASE2 sequences, kernel state)
            "SignalFramer", "SignalStacker", "SignalDelay", "SignalOverlapAdd")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def dims(shape):
    return "x".join(str(d) for d in shape) if shape else "scalar"


def select():
    man = json.loads((KCASES / "manifest.json").read_text())
    rows, skipped = [], []
    for e in man:
        stem = e["file"].removesuffix(".kcase")
        if stem in OLD_BUNDLES:
            continue
        if e["op"] in STATEFUL:
            skipped.append(stem)
            continue
        cases = list(gk.read_bundle(KCASES / e["file"]))
        sizes = [sum(map(len, xs)) + sum(map(len, ys)) for _, xs, ys in cases]
        best = max(range(len(cases)), key=lambda i: (sizes[i], -i))
        model = tc.load_model(cases[best][0])
        sg = model.subgraphs[0]
        ins = [tc.tensor_details(model, t) for t in sg.inputs]
        outs = [tc.tensor_details(model, t) for t in sg.outputs]
        shape = ", ".join(dims(d["shape"]) for d in ins) or "(constants)"
        shape += " → " + ", ".join(dims(d["shape"]) for d in outs)
        rows.append({
            "name": stem,
            "file": e["file"],
            "op": e["op"],
            "dtype": e["dtype"],
            "types": f"{e['input_dtype']} → {e['output_dtype']}",
            "case": best,
            "shape": shape,
            "io_bytes": sizes[best],
        })
        log(f"{stem:36s} case {best:3d}  {sizes[best]:6d} B  {shape}")
    doc = {"generator": "tools/bench_operators.py select", "tflite_micro": bc.TFLM_VERSION,
           "old_bundles_from": "tests/kernel_cases/manifest.json at commit c46bc2e",
           "stateful_left_out": skipped, "rows": rows}
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    log(f"wrote {len(rows)} rows to {OUT.relative_to(tc.REPO)} (left out, stateful: {skipped})")


def arrays(model, raws, tensors):
    xs = []
    for t, raw in zip(tensors, raws):
        d = tc.tensor_details(model, t)
        xs.append(np.frombuffer(bytes(raw), dtype=gk.NP[d["dtype"]]).reshape(d["shape"]))
    return xs


class Timed:
    """One row prepared for timing: the bundle's case and its K-copy twin in TFLM."""

    def __init__(self, r):
        self.name = r["name"]
        data, raw_in, raw_out = list(gk.read_bundle(KCASES / r["file"]))[r["case"]]
        model = tc.load_model(data)
        xs = arrays(model, raw_in, model.subgraphs[0].inputs)
        n_out = len(raw_out)
        self.it1 = tc.make_interpreter(data, ARENA)
        got = tc.run_tflm(self.it1, xs, n_out)
        for i, (y, want) in enumerate(zip(got, raw_out)):
            if gk.le_bytes(y) != bytes(want):
                raise SystemExit(f"{self.name}: TFLM output {i} differs from the bundle's golden")
        t1, _ = bc.median_invoke(self.it1.invoke, rounds=5, target_s=BATCH_S)
        self.k = int(min(K_MAX, max(K_MIN, math.ceil(K_TARGET_S / max(t1, 1e-7)))))
        self.itk = tc.make_interpreter(bc.k_copies(data, self.k), BIG_ARENA)
        got = tc.run_tflm(self.itk, xs, n_out * self.k)
        for j, y in enumerate(got):
            if gk.le_bytes(y) != bytes(raw_out[j % n_out]):
                raise SystemExit(f"{self.name}: copy {j // n_out} of the operator differs")
        for _ in range(3):
            self.it1.invoke()
            self.itk.invoke()
        self.n1 = bc.batch_size(self.it1.invoke, BATCH_S)
        self.nk = bc.batch_size(self.itk.invoke, BATCH_S)
        self.t1s, self.diffs = [], []

    def rounds(self, n):
        """n rounds; returns their median kernel time in µs (one round of the benchmark's
        per-round ratios)."""
        got = []
        for _ in range(n):
            a = bc.batch_mean(self.it1.invoke, self.n1)
            b = bc.batch_mean(self.itk.invoke, self.nk)
            self.t1s.append(a)
            got.append((b - a) / (self.k - 1))
        self.diffs.extend(got)
        return statistics.median(got) * 1e6

    def result(self):
        return {
            "invoke_us": statistics.median(self.t1s) * 1e6,
            "kernel_us": statistics.median(self.diffs) * 1e6,
            "k": self.k,
            "rounds": len(self.diffs),
            "batch": [self.n1, self.nk],
        }


def time_all(as_json, rounds, serve):
    man = json.loads(OUT.read_text())
    if man["tflite_micro"] != bc.TFLM_VERSION:
        log(f"note: {OUT.name} made with tflite-micro {man['tflite_micro']}, running {bc.TFLM_VERSION}")
    t0 = time.time()
    rows = {}
    only = [p for p in os.environ.get("KILN_BENCH_ROWS", "").split(",") if p]
    for r in man["rows"]:
        if not only or any(r["name"].startswith(p) for p in only):
            rows[r["name"]] = Timed(r)
    log(f"TFLM: {len(rows)} rows prepared in {time.time() - t0:.1f} s")
    if serve:
        bc.serve({"rounds": lambda name, n: rows[name].rounds(int(n))})
    else:
        for r in rows.values():
            r.rounds(rounds)
    res = {}
    for r in rows.values():
        x = r.result()
        res[r.name] = x
        log(f"{r.name:36s} TFLM invoke {x['invoke_us']:9.3f} us  kernel {x['kernel_us']:9.3f} us  (K={x['k']})")
    empty = tc.make_interpreter(bc.empty_model(), 4096)
    empty.set_input(np.zeros([1], np.int8), 0)
    floor, _ = bc.median_invoke(empty.invoke, rounds=31, target_s=BATCH_S)
    log(f"empty-model invoke {floor * 1e6:.3f} us; TFLM done in {time.time() - t0:.1f} s")
    out = {"tflite_micro": bc.TFLM_VERSION, "machine": bc.machine(),
           "empty_invoke_us": floor * 1e6, "cases": res}
    if as_json:
        print(json.dumps(out), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("select", help="write benches/operators.json")
    t = sub.add_parser("time", help="time TFLM on benches/operators.json")
    t.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    t.add_argument("--rounds", type=int, default=20, help="timed rounds per row")
    t.add_argument("--serve", action="store_true",
                   help="time on request from stdin (see bench_common.serve), then print JSON")
    args = ap.parse_args()
    if args.cmd == "select":
        select()
    else:
        time_all(args.json or args.serve, args.rounds, args.serve)


if __name__ == "__main__":
    sys.exit(main())
