"""DIV (float32; same shape and broadcast, fused NONE/RELU/RELU6/RELU_N1_TO_1) against TFLM;
see kernel_check_common.py for usage. Divisors include zeros and special values."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc
from kernel_check_maximum_minimum import random_shapes


def generate(cases, n, rng):
    k = 0
    while k < n:
        s1, s2 = random_shapes(rng)
        act = ["none", "relu", "relu6", "relu_n1_to_1"][int(rng.integers(0, 4))]
        data = kc.convert(lambda a, b: kc.apply_activation(a / b, act),
                          [(s1, tf.float32), (s2, tf.float32)], "float32")
        m = kc.SingleOp(data)
        if m.op_names != ["DIV"]:
            print("skip", m.op_names)
            continue
        xs = {t.index: kc.float_input(rng, t.shape, 4.0, specials=bool(rng.integers(0, 2)))
              for t in m.graph_inputs}
        (y,) = kc.run_tflm(data, [xs[t.index] for t in m.graph_inputs])
        cases.add(
            f"div_{k}",
            y.size,
            activation=kc.activation_name(m.options.fusedActivationFunction),
            shape1=np.array(m.inputs[0].shape, dtype=np.int64),
            shape2=np.array(m.inputs[1].shape, dtype=np.int64),
            input1=xs[m.inputs[0].index],
            input2=xs[m.inputs[1].index],
            output=y,
        )
        k += 1


if __name__ == "__main__":
    kc.main("div", generate, default_n=80)
