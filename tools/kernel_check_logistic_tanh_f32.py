"""Float LOGISTIC and TANH against TFLM; see kernel_check_common.py for usage.

Each case is one model (LOGISTIC or TANH) run on a vector of values: a uniform sweep over a
random range, dense sweeps around the kernels' branch points (logistic: -9 and 16.619;
tanh: |x| = 1 and 22, tiny values), and special values."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc


def sweep(rng, op, size):
    kind = rng.integers(0, 4)
    if kind == 0:
        s = float(10 ** rng.uniform(-3, 1.6))
        return rng.uniform(-s, s, size=size).astype(np.float32)
    if kind == 1:
        c = float(rng.choice([-9.0, 16.619047, -16.619047]) if op == "LOGISTIC" else rng.choice([1.0, -1.0, 22.0, -22.0, 0.5]))
        return (c + rng.uniform(-1e-3, 1e-3, size=size)).astype(np.float32)
    if kind == 2:
        return (rng.choice([-1, 1], size=size) * 10 ** rng.uniform(-45, -2, size=size)).astype(np.float32)
    return kc.float_input(rng, [size], 100.0, specials=True)


def boundaries(op):
    """The branch points of each kernel and their float neighbours."""
    pts = [16.619047164916992188, -9.0] if op == "LOGISTIC" else [1.0, 22.0, 2.0**-55, 0.5 * np.log(3.0)]
    out = []
    for p in pts:
        for s in (1, -1):
            c = np.float32(s * p)
            out += [np.nextafter(c, np.float32(-np.inf)), c, np.nextafter(c, np.float32(np.inf))]
    return np.array(out, dtype=np.float32)


def generate(cases, n, rng):
    k = 0
    for op, fn in [("LOGISTIC", tf.math.sigmoid), ("TANH", tf.math.tanh)]:
        models = {}
        x = boundaries(op)
        (y,) = kc.run_tflm(kc.convert(fn, [([x.size], tf.float32)], "float32"), [x])
        cases.add(f"{op.lower()}_boundaries_{k}", 0, op=op.lower(), input=x, output=y)
        k += 1
        for i in range(n):
            size = 16 if i % 4 == 0 else 512
            if size not in models:
                models[size] = kc.convert(fn, [([size], tf.float32)], "float32")
            data = models[size]
            assert kc.SingleOp(data).op_names == [op]
            x = sweep(rng, op, size)
            (y,) = kc.run_tflm(data, [x])
            cases.add(f"{op.lower()}_{k}", x.size, op=op.lower(), input=x, output=y)
            k += 1


if __name__ == "__main__":
    kc.main("logistic_tanh_f32", generate, default_n=40)
