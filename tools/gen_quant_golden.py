"""Golden data for `kiln::Quant` (src/quant.rs): TFLM's QUANTIZE (float32 -> int8, int16) and
DEQUANTIZE (int8, int16 -> float32) on the inputs where rounding and saturation matter.

Writes tests/quant/quant_edges.kcase (the kernel-case bundle format of
tests/kernel_cases/README.md): single-op models of rank 1, each run once in the pinned TFLM;
and tests/quant/per_channel_int8.tflite, a RESHAPE whose int8 input and output are quantized
per channel (generated code gives such tensors no `*_QUANT`).

QUANTIZE cases, per (output type, scale, zero point): scales that are powers of two (so that
x / scale is exactly a half: ties k + 0.5 for k across and beyond the type's range, both
signs, both parities) and others (0.1, 1/3, seeded 10**U(-4, 1): the f32 nearest each tie and
its two neighbours); zero points at the type's extremes, 0 and seeded ones; signed zeros,
denormals, tiny values, values far beyond the range (|x / scale| up to 1e9, below the 2^31
where TFLM's int32 cast is undefined). NaN and infinities are left out: TFLM's result there
is undefined behaviour in C++ (x86 gives INT32_MIN before the zero point), and Kiln saturates.
DEQUANTIZE cases: every int8 value, and int16 extremes with seeded values, at zero points at
the extremes, 0 and seeded, with the same kinds of scales.

Run from the repository root: `.venv/bin/python tools/gen_quant_golden.py` (about 2 s).
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_kernel_cases as gkc  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "quant" / "quant_edges.kcase"
PER_CHANNEL = OUT.parent / "per_channel_int8.tflite"
SEED = 20261201
RANGE = {"int8": (-128, 127), "int16": (-32768, 32767)}


def f32(x):
    return np.float32(x)


def quantize_inputs(rng, scale, dt):
    lo, hi = RANGE[dt]
    s = f32(scale)
    span = hi - lo
    ks = np.arange(-span - 40, span + 40) if dt == "int8" else np.concatenate(
        [np.arange(-300, 300), rng.integers(-2 * span, 2 * span, 300)])
    halves = (ks.astype(np.float64) + 0.5) * np.float64(s)
    xs = [halves.astype(np.float32)]
    near = halves.astype(np.float32)
    xs.append(np.nextafter(near, np.float32(np.inf)))
    xs.append(np.nextafter(near, np.float32(-np.inf)))
    xs.append((ks.astype(np.float64) * np.float64(s)).astype(np.float32))  # integers
    special = [0.0, -0.0, 1e-45, -1e-45, 1e-38, -1e-38, 1e-30, -1e-30]
    big = [x * float(s) for x in (1e3, 1e5, 1e7, 1e9, 2.0 ** 29, 1.5 * 2.0 ** 29)]
    special += big + [-b for b in big]
    xs.append(np.array(special, np.float32))
    xs.append(rng.uniform(lo * float(s) * 1.3, hi * float(s) * 1.3, 500).astype(np.float32))
    x = np.concatenate(xs).astype(np.float32)
    assert np.all(np.abs(x.astype(np.float64) / np.float64(s)) < 2.0 ** 31)
    return x


def quantize_case(rng, dt, scale, zp):
    x = quantize_inputs(rng, scale, dt)
    g = gkc.Graph("QUANTIZE", *gkc.opts("QuantizeOptions"))
    g.input([len(x)], "float32")
    g.output([len(x)], dt, gkc.q1(scale, zp))
    model = gkc.serialize(g)
    ys = gkc.run_tflm(model, [x], 1)
    return model, [x], ys


def dequantize_case(rng, dt, scale, zp):
    lo, hi = RANGE[dt]
    if dt == "int8":
        q = np.arange(lo, hi + 1)
    else:
        q = np.concatenate([np.arange(lo, lo + 200), np.arange(hi - 199, hi + 1),
                            np.arange(-100, 100), rng.integers(lo, hi + 1, 400)])
    q = q.astype(gkc.NP[dt])
    g = gkc.Graph("DEQUANTIZE", *gkc.opts("DequantizeOptions"))
    g.input([len(q)], dt, gkc.q1(scale, zp))
    g.output([len(q)], "float32")
    model = gkc.serialize(g)
    ys = gkc.run_tflm(model, [q], 1)
    return model, [q], ys


def params(rng, dt):
    lo, hi = RANGE[dt]
    scales = [0.5, 0.25, 2.0 ** -7, 2.0 ** -12, 1.0, 4.0, 0.1, 1.0 / 3.0]
    scales += [float(10 ** rng.uniform(-4, 1)) for _ in range(3)]
    zps = [lo, hi, 0, -1, int(rng.integers(lo, hi + 1))]
    out = []
    for i, s in enumerate(scales):
        # every zero point with a few scales, one zero point (cycled) with the others
        chosen = zps if i in (0, 6, 8) else [zps[i % len(zps)]]
        out += [(s, z) for z in chosen]
    return out


def main():
    rng = np.random.default_rng(SEED)
    cases = []
    for dt in ("int8", "int16"):
        for s, z in params(rng, dt):
            cases.append(quantize_case(rng, dt, s, z))
        for s, z in params(rng, dt):
            cases.append(dequantize_case(rng, dt, s, z))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    gkc.write_bundle(OUT, cases)
    print(f"{OUT}: {len(cases)} cases, {OUT.stat().st_size} bytes")
    g = gkc.Graph("RESHAPE", *gkc.opts("ReshapeOptions", newShape=[1, 4]))
    q = ([0.1, 0.2, 0.3, 0.4], [0, 0, 0, 0], 1)
    g.input([1, 4], "int8", q)
    g.const(np.array([1, 4], np.int32), "int32", name="shape")
    g.output([1, 4], "int8", q)
    model = gkc.serialize(g)
    x = np.arange(4, dtype=np.int8).reshape(1, 4)
    assert np.array_equal(gkc.run_tflm(model, [x], 1)[0], x)  # TFLM runs it
    PER_CHANNEL.write_bytes(model)
    print(f"{PER_CHANNEL}: {len(model)} bytes")


if __name__ == "__main__":
    main()
