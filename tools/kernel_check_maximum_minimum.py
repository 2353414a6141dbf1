"""MAXIMUM and MINIMUM (float32, int8; same shape and broadcast) against TFLM; see
kernel_check_common.py for usage.

Two graph inputs of random broadcast-compatible shapes (up to 5-D, TFLM's limit); float
inputs include special values (NaN, infinities, signed zeros)."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc


def random_shapes(rng):
    rank = int(rng.integers(1, 6))
    out = [int(rng.integers(1, 5)) for _ in range(rank)]
    a, b = list(out), list(out)
    if rng.integers(0, 3):  # broadcast most of the time
        for i in range(rank):
            r = rng.integers(0, 3)
            if r == 0:
                a[i] = 1
            elif r == 1:
                b[i] = 1
        b = b[int(rng.integers(0, rank)):] if rng.integers(0, 2) else b
    return a, b


def generate(cases, n, rng):
    k = 0
    for op, fn in [("MAXIMUM", tf.maximum), ("MINIMUM", tf.minimum)]:
        for mode in ["float32", "int8"]:
            for _ in range(n):
                s1, s2 = random_shapes(rng)
                data = kc.convert(fn, [(s1, tf.float32), (s2, tf.float32)], mode, rng=rng)
                m = kc.SingleOp(data)
                if m.op_names != [op]:
                    print("skip", m.op_names)
                    continue
                dtype = m.inputs[0].dtype
                # The converter may order the graph inputs differently from the op inputs.
                xs = {}
                for t in m.graph_inputs:
                    if dtype == "float32":
                        xs[t.index] = kc.float_input(rng, t.shape, 3.0, specials=True)
                    else:
                        xs[t.index] = kc.random_tensor(rng, t.shape, dtype)
                (y,) = kc.run_tflm(data, [xs[t.index] for t in m.graph_inputs])
                x1, x2 = xs[m.inputs[0].index], xs[m.inputs[1].index]
                cases.add(
                    f"{op.lower()}_{dtype}_{k}",
                    y.size,
                    op=op.lower(),
                    dtype=dtype,
                    shape1=np.array(m.inputs[0].shape, dtype=np.int64),
                    shape2=np.array(m.inputs[1].shape, dtype=np.int64),
                    input1=x1,
                    input2=x2,
                    output=y,
                )
                k += 1


if __name__ == "__main__":
    kc.main("maximum_minimum", generate, default_n=40)
