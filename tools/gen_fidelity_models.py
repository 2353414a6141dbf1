"""Models of two fidelity fixes, with the pinned TFLM wheel's outputs, for tests/fidelity.rs.

Writes (paths relative to the repository root):
  tests/models/fidelity/sub_seanet<k>_int16.tflite   k = 0..4: int16 SUB with the
        parameters of TFLM's seanet SUB integration tests
        (tensorflow/lite/micro/integration_tests/seanet/sub/sub<k>_*.csv), fitted from their
        inputs and goldens: input 0 [1, T, C] minus input 1 [C] (broadcast over the last
        dimension, as there), s1 / s_out and s2 / s_out as fitted (least squares on the
        unsaturated elements; every one within 0.6 LSB). Only the ratios are known; the
        absolute scale is drawn (seeded) until the multipliers TFLM's current sub_common.cc
        computes (float quotients) give other outputs than the wheel's (double quotients) on
        the golden inputs, so each model tells the two apart.
  tests/models/fidelity/pool_*.tflite  AVERAGE_POOL_2D / MAX_POOL_2D / L2_POOL_2D with a
        window larger than the input: two that Kiln compiles (a SAME window of 2^17 - 1 rows,
        whose padding TFLM narrows to -1; a VALID window larger than the input on the model's
        output shape) and four it refuses (see REFUSED).
  tests/models/fidelity/golden/<name>/  golden data of the models Kiln compiles (seeds 1, 2,
        3; format and protocol of ../shared/models/golden)
  tests/models/fidelity/tflm.json       per model: "ok" if the pinned wheel runs it, else its
        error (first line)

Run from the repository root:  .venv/bin/python tools/gen_fidelity_models.py   (about 1 s)
"""

import json
import shutil
import sys

import numpy as np

import gen_kernel_cases as G
import kcases_arith_scales as A
import kcases_pool_window as P
import tflite_common as tc

OUT = tc.REPO / "tests" / "models" / "fidelity"
A.G = G
P.G = G

# Fitted from the seanet CSVs: (s1 / s_out, s2 / s_out, C, T). C is input 1's length; T
# makes input 0 about the size of the CSV's.
SEANET = [
    (1.86765613, 0.0180865, 64, 24),
    (1.38106827, 0.01245776, 32, 45),
    (2.30731261, 0.0059698, 32, 88),
    (3.20456739, 0.00161688, 16, 176),
    (3.61042001, 0.000239221, 8, 332),
]

SAME, VALID = 0, 1


def sub_model(c, t, s1, s2, so):
    g = G.Graph("SUB", *G.opts("SubOptions", fusedActivationFunction=0))
    g.input([1, t, c], "int16", G.q1(s1, 0))
    g.input([c], "int16", G.q1(s2, 0))
    g.output([1, t, c], "int16", G.q1(so, 0))
    return G.serialize(g)


def seanet(k, a, b, c, t):
    """The first seeded absolute scale whose float-quotient multipliers change an output of
    the golden inputs."""
    rng = np.random.default_rng(1000 + k)
    for _ in range(200):
        so = float(np.float32(10 ** rng.uniform(-4.5, -3.0)))
        s1, s2 = float(np.float32(a * so)), float(np.float32(b * so))
        pd = A.params(s1, s2, so, 15, "double")
        pf = A.params(s1, s2, so, 15, "float")
        if pd is None or pf is None or pd == pf:
            continue
        differ = 0
        for seed in tc.GOLDEN_SEEDS:
            r = np.random.default_rng(seed)
            x = tc.random_input(r, [1, t, c], "int16").astype(np.int64)
            y = np.broadcast_to(tc.random_input(r, [c], "int16"), (1, t, c)).astype(np.int64)
            run = lambda p: A.emulate("SUB", x.ravel(), y.ravel(), p, 15, 0, 0, 0, -32768, 32767)
            differ += int(np.sum(run(pd) != run(pf)))
        if differ:
            return sub_model(c, t, s1, s2, so), (s1, s2, so, differ)
    raise SystemExit(f"seanet {k}: no scale found")


def pool_model(op, dt, shape, out_hw, filt, stride, padding, q=None):
    g = G.Graph(op, *G.opts("Pool2DOptions", padding=padding, strideW=stride[1],
                            strideH=stride[0], filterWidth=filt[1], filterHeight=filt[0],
                            fusedActivationFunction=0))
    qq = G.q1(*q) if q else None
    g.input(shape, dt, qq)
    g.output([shape[0], out_hw[0], out_hw[1], shape[3]], dt, qq)
    return G.serialize(g)


# Compiled, checked against TFLM's goldens.
POOLS = {
    # SAME, 2^17 - 1 rows over 6: padding 65,535 narrows to -1 (the windows start a row
    # lower than TFLite's formula says; the last one is empty: -32768).
    "pool_max_same_2p17_int16": lambda: pool_model(
        "MAX_POOL_2D", "int16", [2, 6, 5, 3], [6, 3], [(1 << 17) - 1, 3], [1, 2], SAME,
        (0.001, 0)),
    # VALID, 9 rows (over 5) and 2^31 - 1 columns (over 4): TFLM's output sizes are 0 and
    # negative (so both paddings 0); the model's 2 x 1 output is used.
    "pool_average_valid_larger_int8": lambda: pool_model(
        "AVERAGE_POOL_2D", "int8", [1, 5, 4, 2], [2, 1], [9, (1 << 31) - 1], [2, 1], VALID,
        (0.05, 3)),
}

# Refused by Kiln: (builder, what TFLM does).
REFUSED = {
    # SAME, 2^30 - 10 rows over 4: padding 2^29 - 6 narrows to -6, every window starts past
    # the input; TFLM's AVERAGE_POOL_2D returns at the first and writes nothing.
    "pool_average_empty_window_int8": lambda: pool_model(
        "AVERAGE_POOL_2D", "int8", [1, 4, 3, 1], [4, 3], [(1 << 30) - 10, 1], [1, 1], SAME,
        (0.05, 0)),
    # Output row 2 at stride 2^30: TFLM's int index * stride overflows.
    "pool_max_stride_overflow_int8": lambda: pool_model(
        "MAX_POOL_2D", "int8", [1, 4, 3, 1], [3, 3], [5, 1], [1 << 30, 1], VALID, (0.05, 0)),
    # VALID, 5 rows over 4: TFLM's L2_POOL_2D sizes its output to 0 rows and refuses it.
    "pool_l2_valid_larger_float32": lambda: pool_model(
        "L2_POOL_2D", "float32", [1, 4, 3, 1], [1, 3], [5, 1], [1, 1], VALID),
    # SAME over 4 rows at stride 2 computes 2 output rows; the model says 3.
    "pool_max_wrong_output_height_int8": lambda: pool_model(
        "MAX_POOL_2D", "int8", [1, 4, 3, 1], [3, 3], [5, 1], [2, 1], SAME, (0.05, 0)),
}


def tflm_verdict(data):
    x = [tc.random_input(np.random.default_rng(1), d["shape"], d["dtype"])
         for d in (tc.tensor_details(tc.load_model(data), t)
                   for t in tc.load_model(data).subgraphs[0].inputs)]
    try:
        G.run_tflm(data, x, 1)
        return "ok"
    except RuntimeError as e:
        return "error: " + " | ".join(line for line in str(e).splitlines() if line.strip())[:300]


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "golden").mkdir(parents=True)
    verdicts = {}
    models = {}
    for k, (a, b, c, t) in enumerate(SEANET):
        data, (s1, s2, so, differ) = seanet(k, a, b, c, t)
        name = f"sub_seanet{k}_int16"
        models[name] = data
        print(f"{name}: s1 {s1:.6g} s2 {s2:.6g} s_out {so:.6g}; the float-quotient rule "
              f"changes {differ} of the golden outputs")
    for name, build in POOLS.items():
        models[name] = build()
    for name, data in sorted(models.items()):
        path = OUT / f"{name}.tflite"
        path.write_bytes(data)
        tc.write_golden(path, OUT / "golden" / name)
        verdicts[name] = tflm_verdict(data)
    for name, build in REFUSED.items():
        data = build()
        (OUT / f"{name}.tflite").write_bytes(data)
        verdicts[name] = tflm_verdict(data)
    (OUT / "tflm.json").write_text(json.dumps(dict(sorted(verdicts.items())), indent=1) + "\n")
    for name, v in sorted(verdicts.items()):
        print(f"{name:40s} TFLM: {v[:100]}")


if __name__ == "__main__":
    sys.exit(main())
