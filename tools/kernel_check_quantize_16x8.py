"""QUANTIZE between int16 and int8 (int16 -> int8, int8 -> int16, int16 -> int16) against
TFLM; see kernel_check_common.py for usage.

The converter does not emit these as standalone single-op models, so each model is a
converted single-op float model (RELU) whose operator is rewritten to QUANTIZE with the
wanted tensor types and random scales/zero points (int16 zero point 0 as in 16x8 models, or
random)."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc
from kernel_check_common import fb

TYPES = {"int8": fb.TensorType.INT8, "int16": fb.TensorType.INT16}


def rewrite(in_dtype, out_dtype, in_q, out_q):
    def edit(model):
        model.operatorCodes[0].builtinCode = fb.BuiltinOperator.QUANTIZE
        model.operatorCodes[0].deprecatedBuiltinCode = fb.BuiltinOperator.QUANTIZE
        op = model.subgraphs[0].operators[0]
        op.builtinOptionsType = fb.BuiltinOptions.QuantizeOptions
        op.builtinOptions = fb.QuantizeOptionsT()
        for idx, dtype, (scale, zp) in [(op.inputs[0], in_dtype, in_q), (op.outputs[0], out_dtype, out_q)]:
            t = model.subgraphs[0].tensors[idx]
            t.type = TYPES[dtype]
            q = fb.QuantizationParametersT()
            q.scale = [float(scale)]
            q.zeroPoint = [int(zp)]
            t.quantization = q
    return edit


def random_quant(rng, dtype):
    if dtype == "int16":
        zp = 0 if rng.integers(0, 3) else int(rng.integers(-1000, 1000))
        return float(10 ** rng.uniform(-5, -2)), zp
    return float(10 ** rng.uniform(-3, 0)), int(rng.integers(-128, 128))


def generate(cases, n, rng):
    base = {}
    k = 0
    pairs = [("int16", "int8"), ("int8", "int16"), ("int16", "int16")]
    while k < n:
        in_dtype, out_dtype = pairs[k % 3]
        shape = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 4)))]
        key = tuple(shape)
        if key not in base:
            base[key] = kc.convert(tf.nn.relu, [(shape, tf.float32)], "float32")
        in_q, out_q = random_quant(rng, in_dtype), random_quant(rng, out_dtype)
        # Keep the real ranges overlapping so that outputs do not all saturate.
        if in_dtype != out_dtype:
            ratio = in_q[0] / out_q[0]
            if not (1e-4 < ratio * (256 if in_dtype == "int16" else 1) < 1e4):
                continue
        data = kc.edit(base[key], rewrite(in_dtype, out_dtype, in_q, out_q))
        m = kc.SingleOp(data)
        assert m.op_names == ["QUANTIZE"]
        x = kc.random_tensor(rng, shape, in_dtype)
        (y,) = kc.run_tflm(data, [x])
        t_in, t_out = m.inputs[0], m.outputs[0]
        cases.add(
            f"{in_dtype}_{out_dtype}_{k}",
            x.size,
            input_dtype=in_dtype,
            output_dtype=out_dtype,
            input_scale=t_in.scale,
            input_zero_point=t_in.zero_point,
            output_scale=t_out.scale,
            output_zero_point=t_out.zero_point,
            input=x,
            output=y,
        )
        k += 1


if __name__ == "__main__":
    kc.main("quantize_16x8", generate, default_n=90)
