"""Builds a small streaming keyword-spotting model (microWakeWord-style) and its TFLM golden
data, for the firmware benchmark's data-movement rows.

Writes tests/streaming/streaming_kws_int8.tflite and tests/streaming/golden/streaming_kws_int8/
(seeds 1, 2, 3; the format and protocol of tools/tflite_common.write_golden).

A streaming model runs once per audio frame and keeps, for each convolution, a ring of its
last inputs: each step drops the oldest row of the ring and appends the new one
(`STRIDED_SLICE` of rows 1.. + `CONCATENATION`), then convolves over the whole ring in time.
microWakeWord keeps the rings in resource variables (`READ_VARIABLE` / `ASSIGN_VARIABLE`);
this graph is the same step with the rings as inputs and outputs instead, so that one
invoke on a golden sample is checked as any stateless model (the firmware harness compares
two invokes with one sample). Full int8 (TFLiteConverter, TensorFlow of the venv, a seeded
representative dataset):

    frame [1,1,1,40], ring0 [1,5,1,40] -> s0 = concat(ring0[:, 1:], frame)  (out)
        -> CONV_2D 5x1 -> 32, relu -> c0 [1,1,1,32]
    ring1 [1,7,1,32] -> s1 = concat(ring1[:, 1:], c0)  (out)
        -> DEPTHWISE_CONV_2D 7x1, relu -> CONV_2D 1x1 -> 64, relu -> c1
    ring2 [1,9,1,64] -> s2 = concat(ring2[:, 1:], c1)  (out)
        -> DEPTHWISE_CONV_2D 9x1, relu -> CONV_2D 1x1 -> 64, relu -> FULLY_CONNECTED -> 1
        -> LOGISTIC (out)

Run from the repository root:  .venv/bin/python tools/gen_streaming_model.py   (~10 s)
Deterministic (fixed seeds; the converter's output for a given TensorFlow version).
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import tflite_common as tc  # noqa: E402

OUT = tc.REPO / "tests" / "streaming"
NAME = "streaming_kws_int8"


def build():
    rng = np.random.default_rng(28)

    def weight(*shape):
        fan_in = int(np.prod(shape[:-1]))
        return tf.constant(rng.normal(0, 1 / np.sqrt(fan_in), size=shape).astype(np.float32))

    w0 = weight(5, 1, 40, 32)
    d1 = weight(7, 1, 32, 1)
    p1 = weight(1, 1, 32, 64)
    d2 = weight(9, 1, 64, 1)
    p2 = weight(1, 1, 64, 64)
    fc = weight(64, 1)
    b = {n: tf.constant(rng.normal(0, 0.1, size=(n,)).astype(np.float32)) for n in (32, 64, 1)}

    @tf.function(input_signature=[
        tf.TensorSpec([1, 1, 1, 40], tf.float32, name="frame"),
        tf.TensorSpec([1, 5, 1, 40], tf.float32, name="ring0"),
        tf.TensorSpec([1, 7, 1, 32], tf.float32, name="ring1"),
        tf.TensorSpec([1, 9, 1, 64], tf.float32, name="ring2"),
    ])
    def step(frame, ring0, ring1, ring2):
        s0 = tf.concat([ring0[:, 1:], frame], axis=1)
        c0 = tf.nn.relu(tf.nn.conv2d(s0, w0, 1, "VALID") + b[32])
        s1 = tf.concat([ring1[:, 1:], c0], axis=1)
        c1 = tf.nn.relu(tf.nn.depthwise_conv2d(s1, d1, [1, 1, 1, 1], "VALID"))
        c1 = tf.nn.relu(tf.nn.conv2d(c1, p1, 1, "VALID") + b[64])
        s2 = tf.concat([ring2[:, 1:], c1], axis=1)
        c2 = tf.nn.relu(tf.nn.depthwise_conv2d(s2, d2, [1, 1, 1, 1], "VALID"))
        c2 = tf.nn.relu(tf.nn.conv2d(c2, p2, 1, "VALID") + b[64])
        y = tf.sigmoid(tf.matmul(tf.reshape(c2, [1, 64]), fc) + b[1])
        return {"score": y, "s0": s0, "s1": s1, "s2": s2}

    def representative():
        data = np.random.default_rng(7)
        for _ in range(64):
            yield [data.uniform(-1, 1, size=s).astype(np.float32)
                   for s in ([1, 1, 1, 40], [1, 5, 1, 40], [1, 7, 1, 32], [1, 9, 1, 64])]

    conv = tf.lite.TFLiteConverter.from_concrete_functions([step.get_concrete_function()])
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
    return conv.convert()


def main():
    data = build()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{NAME}.tflite"
    path.write_bytes(data)
    model = tc.load_model(data)
    print(f"{path.relative_to(tc.REPO)}: {len(data)} bytes, ops {tc.op_names(model)}")
    tc.write_golden(path, OUT / "golden" / NAME)
    print(f"wrote {(OUT / 'golden' / NAME).relative_to(tc.REPO)}")


if __name__ == "__main__":
    main()
