"""HARD_SWISH (float32, int8) against TFLM; see kernel_check_common.py for usage.

Random shapes and calibration ranges (so input/output scales and zero points vary); every
int8 case feeds all 256 input values; float inputs include special values."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc


def generate(cases, n, rng):
    k = 0
    for mode in ["float32", "int8"]:
        for i in range(n):
            lo = float(rng.uniform(-12, 0))
            hi = float(rng.uniform(0.1, 12))
            shape = [256] if mode == "int8" and i % 2 == 0 else [int(rng.integers(1, 5)), int(rng.integers(1, 9))]
            data = kc.convert(lambda x: x * tf.nn.relu6(x + 3.0) / 6.0, [(shape, tf.float32)], mode,
                              rng=rng, rep_range=(lo, hi))
            m = kc.SingleOp(data)
            if m.op_names != ["HARD_SWISH"]:
                print("skip", m.op_names)
                continue
            t_in, t_out = m.inputs[0], m.outputs[0]
            fields = dict(dtype=t_in.dtype)
            if mode == "float32":
                x = kc.float_input(rng, shape, 8.0, specials=True)
            else:
                if shape == [256]:
                    x = np.arange(-128, 128, dtype=np.int8)
                else:
                    x = kc.random_tensor(rng, shape, "int8")
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
    kc.main("hard_swish", generate, default_n=50)
