"""FULLY_CONNECTED in 16x8 mode (int16 activations, int8 weights) against TFLM; see
kernel_check_common.py for usage.

Per-channel weights (the converter's default) and per-tensor weights (the model edited to a
single filter scale), each with an int64 bias (default), an int32 bias (retyped) or no bias;
fused NONE/RELU/RELU6."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc


def per_tensor(model):
    op = model.subgraphs[0].operators[0]
    tensors = model.subgraphs[0].tensors
    for idx in op.inputs[1:]:
        if idx < 0:
            continue
        q = tensors[idx].quantization
        q.scale = [q.scale[0]]
        q.zeroPoint = [q.zeroPoint[0]]
        q.quantizedDimension = 0


def generate(cases, n, rng):
    k = 0
    while k < n:
        batches = int(rng.integers(1, 4))
        depth, units = int(rng.integers(1, 12)), int(rng.integers(1, 7))
        act = ["none", "relu", "relu6"][int(rng.integers(0, 3))]
        w = (rng.normal(size=(depth, units)) * 10 ** rng.uniform(-1, 0.5)).astype(np.float32)
        bias = rng.normal(size=(units,)).astype(np.float32)
        scale_in = float(10 ** rng.uniform(-0.5, 1))

        def f(x):
            return kc.apply_activation(tf.matmul(x, w) + bias, act)

        data = kc.convert(f, [([batches, depth], tf.float32)], "16x8", rng=rng,
                          rep_range=(-scale_in, scale_in))
        if kc.SingleOp(data).op_names != ["FULLY_CONNECTED"]:
            print("skip", kc.SingleOp(data).op_names)
            continue
        per_channel = k % 2 == 0
        if not per_channel:
            data = kc.edit(data, per_tensor)
        variant = ["int64", "int64", "int32", "int32", "none", "none"][k % 6]
        data = kc.bias_variant(data, variant)
        if data is None:
            continue
        m = kc.SingleOp(data)
        t_in, t_f, t_out = m.inputs[0], m.inputs[1], m.outputs[0]
        if kc.degenerate_multiplier(t_in.scale, t_f.scales, t_out.scale):
            continue
        x = kc.random_tensor(rng, t_in.shape, "int16")
        (y,) = kc.run_tflm(data, [x])
        fields = dict(
            batches=batches,
            accum_depth=depth,
            output_depth=units,
            activation=kc.activation_name(m.options.fusedActivationFunction),
            input_scale=t_in.scale,
            input_zero_point=t_in.zero_point,
            filter_scales=t_f.scales,
            filter_zero_point=t_f.zero_point,
            output_scale=t_out.scale,
            output_zero_point=t_out.zero_point,
            filter=t_f.data,
            bias_type=variant,
        )
        if variant != "none":
            fields["bias"] = m.inputs[2].data
            fields["bias_scale"] = m.inputs[2].scale
        fields.update(input=x, output=y)
        cases.add(f"{'pc' if per_channel else 'pt'}_{variant}_{k}", x.size + t_f.data.size, **fields)
        k += 1


if __name__ == "__main__":
    kc.main("fully_connected_16x8", generate, default_n=90)
