"""SOFTMAX int16 -> int16 (16x8 mode) against TFLM; see kernel_check_common.py for usage.

Random shapes (rank 1..4), input ranges and beta (edited into the model), inputs over the
whole int16 range and, for some cases, clustered near the row maximum (so that many
differences fall inside the exp table)."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc


def set_beta(beta):
    def edit(model):
        model.subgraphs[0].operators[0].builtinOptions.beta = float(beta)
    return edit


def generate(cases, n, rng):
    k = 0
    while k < n:
        rank = int(rng.integers(1, 5))
        shape = [int(rng.integers(1, 5)) for _ in range(rank - 1)] + [int(rng.integers(1, 12))]
        r = float(10 ** rng.uniform(-1, 1.3))
        data = kc.convert(tf.nn.softmax, [(shape, tf.float32)], "16x8", rng=rng, rep_range=(-r, r))
        if kc.SingleOp(data).op_names != ["SOFTMAX"]:
            print("skip", kc.SingleOp(data).op_names)
            continue
        beta = 1.0 if k % 3 == 0 else float(rng.uniform(0.1, 3.0))
        data = kc.edit(data, set_beta(beta))
        m = kc.SingleOp(data)
        t_in, t_out = m.inputs[0], m.outputs[0]
        if k % 2:
            x = kc.random_tensor(rng, shape, "int16")
        else:
            top = int(rng.integers(-20000, 32768))
            x = rng.integers(max(-32768, top - int(rng.integers(10, 20000))), top + 1, size=shape).astype(np.int16)
        (y,) = kc.run_tflm(data, [x])
        fields = dict(
            outer_size=int(np.prod(shape[:-1], dtype=np.int64)),
            depth=shape[-1],
            beta=np.float32(m.options.beta),
            input_scale=t_in.scale,
            input_zero_point=t_in.zero_point,
            output_scale=t_out.scale,
            output_zero_point=t_out.zero_point,
            input=x,
            output=y,
        )
        cases.add(f"s16_{k}", x.size, **fields)
        k += 1


if __name__ == "__main__":
    kc.main("softmax_16x8", generate, default_n=120)
