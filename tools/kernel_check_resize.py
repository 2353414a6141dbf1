"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR (float32, int8; align_corners,
half_pixel_centers) against TFLM; see kernel_check_common.py for usage.

Random input and output sizes (up- and down-sampling, size 1 edges) and option
combinations (bilinear never gets both options, which TFLM rejects)."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc


def generate(cases, n, rng):
    k = 0
    ops = [("RESIZE_NEAREST_NEIGHBOR", tf.compat.v1.image.resize_nearest_neighbor),
           ("RESIZE_BILINEAR", tf.compat.v1.image.resize_bilinear)]
    for op, fn in ops:
        for mode in ["float32", "int8"]:
            i = 0
            while i < n:
                shape = [int(rng.integers(1, 3)), int(rng.integers(1, 7)), int(rng.integers(1, 7)),
                         int(rng.integers(1, 4))]
                size = [int(rng.integers(1, 11)), int(rng.integers(1, 11))]
                ac = bool(rng.integers(0, 2))
                hpc = bool(rng.integers(0, 2)) and not ac
                data = kc.convert(lambda x: fn(x, size, align_corners=ac, half_pixel_centers=hpc),
                                  [(shape, tf.float32)], mode, rng=rng)
                m = kc.SingleOp(data)
                if m.op_names != [op]:
                    print("skip", op, m.op_names)
                    continue
                t_in = m.inputs[0]
                if t_in.dtype == "float32":
                    x = kc.float_input(rng, shape, 5.0)
                else:
                    x = kc.random_tensor(rng, shape, "int8")
                (y,) = kc.run_tflm(data, [x])
                name = "nn" if op == "RESIZE_NEAREST_NEIGHBOR" else "bilinear"
                cases.add(f"{name}_{t_in.dtype}_{k}", y.size, op=name, dtype=t_in.dtype,
                          input_shape=np.array(shape), output_hw=np.array(m.inputs[1].data).reshape(-1),
                          align_corners=bool(m.options.alignCorners),
                          half_pixel_centers=bool(m.options.halfPixelCenters), input=x, output=y)
                k += 1
                i += 1


if __name__ == "__main__":
    kc.main("resize", generate, default_n=50)
