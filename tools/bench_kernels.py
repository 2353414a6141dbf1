"""Single-operator int8 models cut from the public models, and TFLM's time for each.

Kernel benchmark (`cargo bench --bench kernels`, section `kernels` of BENCHMARKS.md). Two
subcommands, run from the repository root with the pinned environment:

  .venv/bin/python tools/bench_kernels.py generate
      Writes benches/models/: for each case below, the operator `op` of the public model
      ../shared/models/<model>.tflite cut out as a one-operator model (`<case>.tflite`: the
      same input/output shapes, quantization, options, weights and biases; written with the
      model writer of tools/gen_kernel_cases.py) and manifest.json (op, shape, MACs, the
      64-bit FNV-1a hash of TFLM's output bytes for the benchmark input). Inputs are not
      stored: input i of a case is the byte stream of splitmix64 seeded with
      `input_seed + i` (8 little-endian bytes per step; full int8 range), which the Rust
      benchmark reproduces. Deterministic; about 60 KB.

  .venv/bin/python tools/bench_kernels.py time [--json] [--rounds N] [--passes P] [--serve]
      Times TFLM on every case of benches/models/manifest.json after checking that TFLM
      still produces the output hashed in the manifest. Per case:
        invoke_us  median time of interpreter.invoke() on the one-operator model, from
                   Python (includes the Python/pybind call and TFLM's invoke loop)
        kernel_us  TFLM's time for the operator alone: a second model holds K copies of the
                   operator (same inputs and weights, own outputs); interleaved rounds time
                   both models, kernel = median over rounds of (t_K - t_1) / (K - 1), which
                   removes the per-invoke overhead (K chosen so the copies take about 1 ms)
      Times are medians over rounds (30) of batch means (each batch about 2 ms, after
      warm-up) in CPU time of the calling thread (bench_common.now_ns); the rounds are spread
      over 5 passes through all cases. Also reports
      empty_invoke_us: invoke() of a model without operators from Python (the call floor).
      --json prints one JSON object on stdout (progress goes to stderr). --serve: after
      preparing every case, print `ready`, then run the requests `rounds <case> <n>` read from
      stdin (answering `ok` to each) until `done`, then print the JSON; the Rust benchmark
      uses it to interleave TFLM's rounds with its own in time.
"""

import argparse
import json
import math
import statistics
import sys
import time

import numpy as np

import bench_common as bc
import gen_kernel_cases as gk
import tflite_common as tc
from tflite_common import schema_fb as fb

OUT = tc.REPO / "benches" / "models"
SEED = 4200  # input_seed of case k: SEED + 100 * k
ARENA = 1 << 20
BIG_ARENA = 16 << 20
BATCH_S = 0.002  # seconds per timed batch

VWW = "mlperf_tiny_vww_mobilenetv1_025_96_int8"
PD = "tflm_person_detect_int8"
RESNET = "mlperf_tiny_ic_resnet8_int8"
KWS = "mlperf_tiny_kws_dscnn_int8"
MICRO = "tflm_micro_speech_int8"
AD = "mlperf_tiny_ad_autoencoder_int8"

# (case name, public model, operator index)
CASES = [
    ("conv_vww_0", VWW, 0),
    ("conv_person_2", PD, 2),
    ("conv_resnet_2", RESNET, 2),
    ("conv_kws_0", KWS, 0),
    ("dwconv_person_1", PD, 1),
    ("dwconv_person_7", PD, 7),
    ("dwconv_kws_1", KWS, 1),
    ("dwconv_micro_1", MICRO, 1),
    ("fc_ad_1", AD, 1),
    ("fc_micro_2", MICRO, 2),
    ("fc_kws_11", KWS, 11),
    ("avgpool_resnet_12", RESNET, 12),
    ("avgpool_kws_9", KWS, 9),
    ("avgpool_person_27", PD, 27),
    ("add_resnet_3", RESNET, 3),
    ("add_resnet_7", RESNET, 7),
    ("add_resnet_11", RESNET, 11),
    ("softmax_kws_12", KWS, 12),
    ("softmax_resnet_15", RESNET, 15),
    ("softmax_micro_3", MICRO, 3),
]

SHORT = {VWW: "vww", PD: "person_detect", RESNET: "ic_resnet8", KWS: "kws_dscnn",
         MICRO: "micro_speech", AD: "ad_autoencoder"}
OPTIONS_NAMES = {v: k for k, v in vars(fb.BuiltinOptions).items() if not k.startswith("_")}
PAD = {0: "SAME", 1: "VALID"}


M64 = (1 << 64) - 1


def splitmix64_bytes(seed, n):
    """n bytes of splitmix64 seeded with `seed` (each step gives 8 little-endian bytes)."""
    out = bytearray()
    x = seed & M64
    while len(out) < n:
        x = (x + 0x9E3779B97F4A7C15) & M64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
        out += z.to_bytes(8, "little")
    return bytes(out[:n])


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & M64
    return f"{h:016x}"


def case_inputs(model, input_seed):
    """The benchmark inputs of a one-operator model (parsed), as numpy arrays."""
    sg = model.subgraphs[0]
    xs = []
    for i, t in enumerate(sg.inputs):
        d = tc.tensor_details(model, t)
        if d["dtype"] != "int8":
            raise SystemExit(f"input {i} is {d['dtype']}: only int8 inputs are generated")
        raw = splitmix64_bytes(input_seed + i, d["bytes"])
        xs.append(np.frombuffer(raw, dtype=np.int8).reshape(d["shape"]))
    return xs


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def cut(model, index):
    """Operator `index` of a parsed model as a gen_kernel_cases Graph with its real tensors."""
    sg = model.subgraphs[0]
    op = sg.operators[index]
    name = tc.op_code_name(model, op.opcodeIndex)
    g = gk.Graph(name, OPTIONS_NAMES[op.builtinOptionsType] if op.builtinOptionsType else None,
                 op.builtinOptions)
    for t in op.inputs:
        if t < 0:
            g.none_input()
            continue
        tt = sg.tensors[t]
        d = tc.tensor_details(model, t)
        q = d["quantization"]
        quant = (q["scale"], q["zero_point"], q["quantized_dimension"]) if q else None
        buf = model.buffers[tt.buffer].data if tt.buffer else None
        if buf is not None and len(buf):
            data = np.frombuffer(bytes(bytearray(buf)), dtype=gk.NP[d["dtype"]]).reshape(d["shape"])
            role = "bias" if d["dtype"] == "int32" else "weight"
            g.const(data, d["dtype"], quant=quant, name=d["name"], role=role)
        else:
            g.input(d["shape"], d["dtype"], quant=quant, name=d["name"])
    for t in op.outputs:
        d = tc.tensor_details(model, t)
        q = d["quantization"]
        g.output(d["shape"], d["dtype"], quant=(q["scale"], q["zero_point"], q["quantized_dimension"]))
    return g, op


def describe(g, op):
    """(shape text, MACs) of a cut operator."""
    ins = [g.tensors[i] for i in g.op_inputs if i >= 0]
    out = g.tensors[g.outputs[0]]
    o = op.builtinOptions
    x = ins[0].shape
    hw = lambda s: "x".join(str(v) for v in s[1:])  # noqa: E731
    if g.op in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        w = ins[1].shape
        kh, kw = w[1], w[2]
        extra = f" m{o.depthMultiplier}" if g.op == "DEPTHWISE_CONV_2D" and o.depthMultiplier != 1 else ""
        shape = (f"{hw(x)} → {hw(out.shape)}, {kh}x{kw} s{o.strideH}"
                 f"{'' if o.strideW == o.strideH else 'x' + str(o.strideW)} {PAD[o.padding]}{extra}")
        n_out = math.prod(out.shape)
        macs = n_out * kh * kw * (x[3] if g.op == "CONV_2D" else 1)
    elif g.op == "FULLY_CONNECTED":
        w = ins[1].shape
        shape = f"{w[1]} → {w[0]}"
        macs = w[0] * w[1] * (math.prod(x) // w[1])
    elif g.op == "AVERAGE_POOL_2D":
        shape = f"{hw(x)} → {hw(out.shape)}, {o.filterHeight}x{o.filterWidth} s{o.strideH} {PAD[o.padding]}"
        macs = math.prod(out.shape) * o.filterHeight * o.filterWidth
    else:  # ADD, SOFTMAX: elementwise
        shape = "x".join(str(v) for v in out.shape)
        if g.op == "ADD" and ins[0].shape != ins[1].shape:
            shape = f"{'x'.join(map(str, ins[0].shape))} + {'x'.join(map(str, ins[1].shape))}"
        macs = math.prod(out.shape)
    return shape, int(macs)


def generate():
    OUT.mkdir(parents=True, exist_ok=True)
    for f in OUT.iterdir():
        if f.suffix in (".tflite", ".bin", ".json"):
            f.unlink()
    manifest = []
    for k, (name, stem, index) in enumerate(CASES):
        model = tc.load_model((tc.SHARED_MODELS / f"{stem}.tflite").read_bytes())
        g, op = cut(model, index)
        data = gk.serialize(g)
        if tc.op_names(tc.load_model(data)) != [g.op]:
            raise SystemExit(f"{name}: not a single {g.op}")
        input_seed = SEED + 100 * k
        xs = case_inputs(tc.load_model(data), input_seed)
        ys = gk.run_tflm(data, xs, len(g.outputs))
        (OUT / f"{name}.tflite").write_bytes(data)
        shape, macs = describe(g, op)
        manifest.append({
            "name": name,
            "op": g.op,
            "source": f"{SHORT[stem]} op {index}",
            "model": f"{stem}.tflite",
            "op_index": index,
            "shape": shape,
            "macs": macs,
            "file": f"{name}.tflite",
            "input_seed": input_seed,
            "output_fnv1a64": [fnv1a64(gk.le_bytes(y)) for y in ys],
        })
        log(f"{name:20s} {g.op:18s} {shape:40s} {macs:9d} MACs  {len(data):6d} B")
    doc = {
        "generator": "tools/bench_kernels.py generate",
        "tflite_micro": bc.TFLM_VERSION,
        "cases": manifest,
    }
    (OUT / "manifest.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    total = sum(f.stat().st_size for f in OUT.iterdir())
    log(f"wrote {len(manifest)} cases to {OUT.relative_to(tc.REPO)} ({total} B)")


def read_case(c):
    data = (OUT / c["file"]).read_bytes()
    return data, case_inputs(tc.load_model(data), c["input_seed"]), c["output_fnv1a64"]


class Timed:
    """One case prepared for timing: the one-operator model and its K-copy twin in TFLM."""

    def __init__(self, c):
        self.name = c["name"]
        data, xs, want = read_case(c)
        self.it1 = tc.make_interpreter(data, ARENA)
        for i, x in enumerate(xs):
            self.it1.set_input(x, i)
        self.it1.invoke()
        for i, w in enumerate(want):
            if fnv1a64(gk.le_bytes(np.array(self.it1.get_output(i)))) != w:
                raise SystemExit(f"{self.name}: TFLM output {i} differs from benches/models (regenerate)")
        t1, _ = bc.median_invoke(self.it1.invoke, rounds=5)
        self.k = int(min(64, max(3, math.ceil(1e-3 / max(t1, 1e-7)))))
        self.itk = tc.make_interpreter(bc.k_copies(data, self.k), BIG_ARENA)
        for i, x in enumerate(xs):
            self.itk.set_input(x, i)
        self.itk.invoke()
        for j in range(self.k):
            if fnv1a64(gk.le_bytes(np.array(self.itk.get_output(j)))) != want[0]:
                raise SystemExit(f"{self.name}: copy {j} of the operator differs")
        for _ in range(3):
            self.it1.invoke()
            self.itk.invoke()
        self.n1 = bc.batch_size(self.it1.invoke, BATCH_S)
        self.nk = bc.batch_size(self.itk.invoke, BATCH_S)
        self.t1s, self.diffs = [], []

    def rounds(self, n):
        for _ in range(n):
            a = bc.batch_mean(self.it1.invoke, self.n1)
            b = bc.batch_mean(self.itk.invoke, self.nk)
            self.t1s.append(a)
            self.diffs.append((b - a) / (self.k - 1))

    def result(self):
        return {
            "invoke_us": statistics.median(self.t1s) * 1e6,
            "kernel_us": statistics.median(self.diffs) * 1e6,
            "k": self.k,
            "rounds": len(self.diffs),
            "batch": [self.n1, self.nk],
        }


def empty_invoke_us():
    """invoke() of a model without operators from Python (the call floor), in µs."""
    it = tc.make_interpreter(bc.empty_model(), 4096)
    it.set_input(np.zeros([1], np.int8), 0)
    t, _ = bc.median_invoke(it.invoke, rounds=31, target_s=BATCH_S)
    return t * 1e6


def time_all(as_json, rounds, passes, serve):
    man = json.loads((OUT / "manifest.json").read_text())
    if man["tflite_micro"] != bc.TFLM_VERSION:
        log(f"note: benches/models made with tflite-micro {man['tflite_micro']}, running {bc.TFLM_VERSION}")
    t0 = time.time()
    cases = {c["name"]: Timed(c) for c in man["cases"]}
    if serve:
        # The caller (benches/kernels.rs) says when to time which case, interleaving TFLM's
        # rounds with its own.
        bc.serve({"rounds": lambda name, n: cases[name].rounds(int(n))})
    else:
        # Rounds spread over passes through all cases, so that load changes of the shared
        # machine spread over the cases instead of hitting one.
        per = -(-rounds // passes)
        for _ in range(passes):
            for c in cases.values():
                c.rounds(per)
    res = {}
    for c in cases.values():
        r = c.result()
        res[c.name] = r
        log(f"{c.name:20s} TFLM invoke {r['invoke_us']:10.2f} us  kernel {r['kernel_us']:10.2f} us  (K={r['k']})")
    floor = empty_invoke_us()
    log(f"empty-model invoke {floor:.3f} us; TFLM timed in {time.time() - t0:.1f} s")
    out = {"tflite_micro": bc.TFLM_VERSION, "machine": bc.machine(), "empty_invoke_us": floor,
           "cases": res}
    if as_json:
        print(json.dumps(out), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("generate", help="write benches/models/")
    t = sub.add_parser("time", help="time TFLM on benches/models/")
    t.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    t.add_argument("--rounds", type=int, default=30, help="timed rounds per case")
    t.add_argument("--passes", type=int, default=5, help="passes over all cases (rounds spread)")
    t.add_argument("--serve", action="store_true",
                   help="time on request from stdin (see bench_common.serve), then print JSON")
    args = ap.parse_args()
    if args.cmd == "generate":
        generate()
    else:
        time_all(args.json or args.serve, args.rounds, args.passes, args.serve)


if __name__ == "__main__":
    sys.exit(main())
