"""TRANSPOSE_CONV (float32, int8 per-channel with int32 bias) against TFLM; see
kernel_check_common.py for usage.

Random shapes, strides and SAME/VALID padding; bias present (fused by the converter) or
removed; the fused activation (which the converter does not fuse into TRANSPOSE_CONV) set
to NONE/RELU/RELU6/RELU_N1_TO_1 in the model."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc

ACTS = {"none": 0, "relu": 1, "relu_n1_to_1": 2, "relu6": 3}


def edit(act, drop_bias):
    def f(model):
        op = model.subgraphs[0].operators[0]
        op.builtinOptions.fusedActivationFunction = ACTS[act]
        if drop_bias:
            op.inputs = list(op.inputs[:3])
    return f


def generate(cases, n, rng):
    k = 0
    for mode in ["float32", "int8"]:
        i = 0
        while i < n:
            batches = int(rng.integers(1, 3))
            h, w = int(rng.integers(1, 5)), int(rng.integers(1, 5))
            cin, cout = int(rng.integers(1, 4)), int(rng.integers(1, 4))
            kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
            sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
            padding = "SAME" if rng.integers(0, 2) else "VALID"
            if padding == "SAME":
                oh, ow = h * sh, w * sw
            else:
                oh, ow = (h - 1) * sh + kh, (w - 1) * sw + kw
            filt = (rng.normal(size=(kh, kw, cout, cin)) * 10 ** rng.uniform(-1, 0.5)).astype(np.float32)
            bias = rng.normal(size=(cout,)).astype(np.float32)

            def f(x):
                return tf.nn.conv2d_transpose(x, filt, output_shape=[batches, oh, ow, cout],
                                              strides=[1, sh, sw, 1], padding=padding) + bias

            data = kc.convert(f, [([batches, h, w, cin], tf.float32)], mode, rng=rng)
            if kc.SingleOp(data).op_names != ["TRANSPOSE_CONV"]:
                print("skip", kc.SingleOp(data).op_names)
                continue
            act = list(ACTS)[int(rng.integers(0, 4))]
            drop_bias = bool(rng.integers(0, 3) == 0)
            data = kc.edit(data, edit(act, drop_bias))
            m = kc.SingleOp(data)
            t_f, t_in, t_out = m.inputs[1], m.inputs[2], m.outputs[0]
            if mode == "float32":
                x = kc.float_input(rng, t_in.shape, 2.0)
            else:
                x = kc.random_tensor(rng, t_in.shape, "int8")
            (y,) = kc.run_tflm(data, [x])
            o = m.options
            fields = dict(
                dtype=t_in.dtype,
                input_shape=np.array(t_in.shape),
                filter_shape=np.array(t_f.shape),
                output_shape=np.array(t_out.shape),
                padding=kc.padding_name(o.padding),
                stride=np.array([o.strideH, o.strideW]),
                activation=act,
                filter=t_f.data,
            )
            if mode == "int8":
                fields.update(input_scale=t_in.scale, input_zero_point=t_in.zero_point,
                              filter_scales=t_f.scales, output_scale=t_out.scale,
                              output_zero_point=t_out.zero_point)
            if not drop_bias:
                fields["bias"] = m.inputs[3].data
            fields.update(input=x, output=y)
            cases.add(f"{t_in.dtype}_{k}", x.size + t_f.data.size, **fields)
            k += 1
            i += 1


if __name__ == "__main__":
    kc.main("transpose_conv", generate, default_n=60)
