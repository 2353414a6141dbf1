"""TRANSPOSE (float32, int8; ranks 1..5, TFLM's limit) against TFLM; see
kernel_check_common.py for usage."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc


def generate(cases, n, rng):
    k = 0
    for mode in ["float32", "int8"]:
        for _ in range(n):
            rank = int(rng.integers(1, 6))
            shape = [int(rng.integers(1, 5)) for _ in range(rank)]
            perm = [int(v) for v in rng.permutation(rank)]
            data = kc.convert(lambda x: tf.transpose(x, perm), [(shape, tf.float32)], mode, rng=rng)
            m = kc.SingleOp(data)
            if m.op_names != ["TRANSPOSE"]:
                print("skip", m.op_names, shape, perm)
                continue
            t_in = m.inputs[0]
            x = kc.random_tensor(rng, shape, t_in.dtype)
            (y,) = kc.run_tflm(data, [x])
            cases.add(f"{t_in.dtype}_{k}", x.size, dtype=t_in.dtype, input_shape=np.array(shape),
                      perm=np.array(m.inputs[1].data).reshape(-1), input=x, output=y)
            k += 1


if __name__ == "__main__":
    kc.main("transpose", generate, default_n=60)
