"""MEAN (float32, int8, int16/16x8) against TFLM; see kernel_check_common.py for usage.

Random ranks 1..6, random axis subsets (rewritten in the model to negative/duplicate forms at
random), keep_dims on/off, the 4-D axes {1,2} keep_dims special case, and for the quantized
types also models whose output quantization is set equal to the input's (TFLM's plain
integer-mean path)."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc


def set_axis(model, values):
    op = model.subgraphs[0].operators[0]
    t = model.subgraphs[0].tensors[op.inputs[1]]
    t.shape = [len(values)]
    model.buffers[t.buffer].data = np.array(values, dtype="<i4").tobytes()


def one(cases, name, rng, mode, shape, axis, keep_dims, same_quant=False, axis_form=None):
    dtype_in = {"float32": "float32", "int8": "int8", "16x8": "int16"}[mode]
    lo, hi = sorted(rng.uniform(-3, 3, size=2))
    if hi - lo < 0.1:
        hi = lo + 0.5
    data = kc.convert(
        lambda x: tf.reduce_mean(x, axis=axis, keepdims=keep_dims),
        [(shape, tf.float32)],
        mode,
        rng=rng,
        rep_range=(lo, hi),
    )
    m = kc.SingleOp(data)
    if m.op_names != ["MEAN"]:
        return False
    if axis_form is not None:
        data = kc.edit(data, lambda model: set_axis(model, axis_form))
    if same_quant:
        t_in, t_out = m.inputs[0], m.outputs[0]
        data = kc.set_quantization(data, t_out.index, t_in.scale, t_in.zero_point)
    m = kc.SingleOp(data)
    x = kc.random_tensor(rng, shape, dtype_in)
    (y,) = kc.run_tflm(data, [x])
    t_in, t_out = m.inputs[0], m.outputs[0]
    fields = dict(
        dtype=dtype_in,
        input_shape=np.array(shape),
        axis=np.array(m.inputs[1].data).reshape(-1),
        keep_dims=bool(m.options.keepDims),
        output_shape=np.array(t_out.shape, dtype=np.int64),
    )
    if dtype_in != "float32":
        fields.update(
            input_scale=t_in.scale,
            input_zero_point=t_in.zero_point,
            output_scale=t_out.scale,
            output_zero_point=t_out.zero_point,
        )
    fields.update(input=x, output=y)
    cases.add(name, x.size, **fields)
    return True


def generate(cases, n, rng):
    k = 0
    for mode in ["float32", "int8", "16x8"]:
        # The 4-D keep_dims axes {1, 2} special case (TFLM's Mean4D for float).
        for i in range(max(2, n // 4)):
            shape = [int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 5))]
            axis = [1, 2] if i % 2 == 0 else [2, 1]
            one(cases, f"{mode}_4d12_{k}", rng, mode, shape, axis, True)
            k += 1
        for i in range(n):
            rank = int(rng.integers(1, 7))
            shape = [int(rng.integers(1, 5)) for _ in range(rank)]
            naxes = int(rng.integers(1, rank + 1))
            axis = sorted(rng.choice(rank, size=naxes, replace=False).tolist())
            keep = bool(rng.integers(0, 2))
            form = None
            if rng.integers(0, 3) == 0:
                # Equivalent negative / duplicated / permuted axes.
                form = [a - rank if rng.integers(0, 2) else a for a in axis]
                if rng.integers(0, 2):
                    form.append(form[0])
                rng.shuffle(form)
            same = mode != "float32" and rng.integers(0, 3) == 0
            one(cases, f"{mode}_{'same' if same else 'gen'}_{k}", rng, mode, shape, axis, keep, same, form)
            k += 1


if __name__ == "__main__":
    kc.main("mean", generate, default_n=60)
