"""LEAKY_RELU (float32, int8, int16/16x8) against TFLM; see kernel_check_common.py for usage.

Random shapes and alpha (including negative and > 1 values), random calibration ranges;
float inputs include special values (zeros, infinities, NaN, denormals)."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc


def generate(cases, n, rng):
    k = 0
    for mode in ["float32", "int8", "16x8"]:
        for _ in range(n):
            shape = [int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 4)))]
            alpha = float(rng.choice([rng.uniform(0.0, 1.0), rng.uniform(-2.0, 3.0)]))
            lo, hi = sorted(rng.uniform(-5, 5, size=2))
            data = kc.convert(lambda x: tf.nn.leaky_relu(x, alpha), [(shape, tf.float32)], mode,
                              rng=rng, rep_range=(lo, hi + 0.1))
            m = kc.SingleOp(data)
            if m.op_names != ["LEAKY_RELU"]:
                print("skip", m.op_names)
                continue
            t_in, t_out = m.inputs[0], m.outputs[0]
            fields = dict(dtype=t_in.dtype, alpha=np.float32(m.options.alpha))
            if mode == "float32":
                x = kc.float_input(rng, shape, 10.0, specials=True)
            else:
                x = kc.random_tensor(rng, shape, t_in.dtype)
                fields.update(
                    input_scale=t_in.scale,
                    input_zero_point=t_in.zero_point,
                    output_scale=t_out.scale,
                    output_zero_point=t_out.zero_point,
                )
            (y,) = kc.run_tflm(data, [x])
            fields.update(input=x, output=y)
            cases.add(f"{t_in.dtype}_{k}", x.size, **fields)
            k += 1


if __name__ == "__main__":
    kc.main("leaky_relu", generate, default_n=60)
