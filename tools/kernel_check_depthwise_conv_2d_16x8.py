"""DEPTHWISE_CONV_2D in 16x8 mode (int16 activations, int8 per-channel weights) against TFLM;
see kernel_check_common.py for usage.

Random shapes, depth multipliers, strides, dilations, SAME/VALID padding, fused
NONE/RELU/RELU6, int64 bias (the converter's default). Without a bias the pinned TFLM
crashes (segmentation fault) on int16 depthwise, so that form is not generated."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc


def generate(cases, n, rng):
    k = 0
    while k < n:
        batches = int(rng.integers(1, 3))
        kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        h, w = int(rng.integers(kh, 8)), int(rng.integers(kw, 8))
        cin, mult = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        dil = int(rng.integers(1, 3)) if rng.integers(0, 3) == 0 else 1
        stride = 1 if dil > 1 else int(rng.integers(1, 3))
        padding = "SAME" if rng.integers(0, 2) else "VALID"
        if padding == "VALID" and (h < (kh - 1) * dil + 1 or w < (kw - 1) * dil + 1):
            continue
        act = ["none", "relu", "relu6"][int(rng.integers(0, 3))]
        filt = (rng.normal(size=(kh, kw, cin, mult)) * 10 ** rng.uniform(-1, 0.5)).astype(np.float32)
        bias = rng.normal(size=(cin * mult,)).astype(np.float32)
        scale_in = float(10 ** rng.uniform(-0.5, 1))

        def f(x):
            y = tf.nn.depthwise_conv2d(x, filt, strides=[1, stride, stride, 1], padding=padding,
                                       dilations=[dil, dil])
            return kc.apply_activation(y + bias, act)

        data = kc.convert(f, [([batches, h, w, cin], tf.float32)], "16x8", rng=rng,
                          rep_range=(-scale_in, scale_in))
        if kc.SingleOp(data).op_names != ["DEPTHWISE_CONV_2D"]:
            print("skip", kc.SingleOp(data).op_names)
            continue
        variant = "int64"
        m = kc.SingleOp(data)
        t_in, t_f, t_out = m.inputs[0], m.inputs[1], m.outputs[0]
        if kc.degenerate_multiplier(t_in.scale, t_f.scales, t_out.scale):
            continue
        x = kc.random_tensor(rng, t_in.shape, "int16")
        (y,) = kc.run_tflm(data, [x])
        o = m.options
        fields = dict(
            input_shape=np.array(t_in.shape),
            filter_shape=np.array(t_f.shape),
            output_shape=np.array(t_out.shape),
            padding=kc.padding_name(o.padding),
            stride=np.array([o.strideH, o.strideW]),
            dilation=np.array([o.dilationHFactor, o.dilationWFactor]),
            depth_multiplier=o.depthMultiplier,
            activation=kc.activation_name(o.fusedActivationFunction),
            input_scale=t_in.scale,
            input_zero_point=t_in.zero_point,
            filter_scales=t_f.scales,
            output_scale=t_out.scale,
            output_zero_point=t_out.zero_point,
            filter=t_f.data,
            bias_type=variant,
        )
        if variant != "none":
            fields["bias"] = m.inputs[2].data
        fields.update(input=x, output=y)
        cases.add(f"{variant}_{k}", x.size + t_f.data.size, **fields)
        k += 1


if __name__ == "__main__":
    kc.main("depthwise_conv_2d_16x8", generate, default_n=60)
