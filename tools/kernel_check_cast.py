"""CAST between int8, int16, int32, float32 (and from bool) against TFLM; see
kernel_check_common.py for usage. Integer inputs cover their whole range (narrowing
wraps); float inputs mix in-range values, values beyond the target range, and specials."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc

TF = {"int8": tf.int8, "int16": tf.int16, "int32": tf.int32, "float32": tf.float32, "bool": tf.bool}


def generate(cases, n, rng):
    k = 0
    pairs = [(a, b) for a in ["bool", "int8", "int16", "int32", "float32"]
             for b in ["int8", "int16", "int32", "float32"] if a != b]
    for i in range(n):
        src, dst = pairs[i % len(pairs)]
        size = int(rng.integers(1, 40))
        data = kc.convert(lambda x: tf.cast(x, TF[dst]), [([size], TF[src])], "float32")
        m = kc.SingleOp(data)
        if m.op_names != ["CAST"]:
            print("skip", src, dst, m.op_names)
            continue
        if src == "bool":
            x = rng.integers(0, 2, size=size).astype(np.bool_)
        elif src == "float32":
            x = (rng.uniform(-1, 1, size=size) * 10 ** rng.uniform(0, 10, size=size)).astype(np.float32)
            mask = rng.uniform(size=size) < 0.15
            x[mask] = rng.choice(kc.SPECIAL_FLOATS, size=int(mask.sum()))
        else:
            x = kc.random_tensor(rng, [size], src)
        (y,) = kc.run_tflm(data, [x])
        cases.add(f"{src}_{dst}_{k}", size, src=src, dst=dst, input=x, output=y)
        k += 1


if __name__ == "__main__":
    kc.main("cast", generate, default_n=160)
