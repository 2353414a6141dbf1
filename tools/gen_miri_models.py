"""Builds the test models that only Miri needs beyond tests/models (tests/e2e_miri.rs), with
TFLM golden data.

Writes (paths relative to the repository root):
  tests/models/<name>.tflite     the models below
  tests/models/golden/<name>/    golden.json + s<seed>_in0.bin / s<seed>_out0.bin for seeds
                                 1, 2, 3 (same format and protocol as gen_test_models.py)

Models (Keras -> tf.lite converter, weights from a seeded numpy generator, not trained):
  cnn_int16               16x8 quantization (int16 activations, int8 weights, int64 biases) on
                          8x8x4: CONV_2D 3x3 SAME relu, DEPTHWISE_CONV_2D 3x3 SAME relu, CONV_2D
                          1x1, residual ADD, LEAKY_RELU, MEAN (global average pool),
                          FULLY_CONNECTED, SOFTMAX: the int16 kernels the kernel cases test
                          one by one, as generated code over one arena
  mobilenet_block_int8    one MobileNet v1 block with the layers of the vww model
                          (mlperf_tiny_vww_mobilenetv1_025_96_int8, its layers 2-5): depthwise 3x3
                          relu on 8 channels, pointwise 1x1 to 16 relu, depthwise 3x3 stride 2
                          relu, pointwise 1x1 to 32 relu; the output is the block's output, so
                          every byte of it is compared. At 16x16 instead of vww's 48x48 (93 K
                          multiply-accumulates instead of 840 K): at 48x48 Miri needs 6.5 min
                          for this block alone, the whole vww model about an hour

Not in tests/models/manifest.json (gen_test_models.py owns that file and rewrites it).
Run from the repository root:  .venv/bin/python tools/gen_miri_models.py
Deterministic (fixed seeds); about 25 s.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import shutil  # noqa: E402

import numpy as np  # noqa: E402

import gen_test_models as gm  # noqa: E402
import tflite_common as tc  # noqa: E402

OUT = tc.REPO / "tests" / "models"
SEED = 20261201


def cnn_int16():
    k = gm._keras()
    L = k.layers
    shape = (8, 8, 4)
    inp = k.Input(shape=shape, batch_size=1, name="input")
    x = L.Conv2D(8, 3, padding="same", activation="relu")(inp)  # 8x8x8
    y = L.DepthwiseConv2D(3, padding="same", activation="relu")(x)  # 8x8x8
    y = L.Conv2D(8, 1)(y)  # 8x8x8
    z = L.Add()([x, y])
    z = L.LeakyReLU(negative_slope=0.2)(z)
    g = L.GlobalAveragePooling2D()(z)  # MEAN
    o = L.Dense(10, name="logits")(g)
    o = L.Softmax()(o)
    return k.Model(inp, o), shape


def mobilenet_block():
    k = gm._keras()
    L = k.layers
    shape = (16, 16, 8)
    inp = k.Input(shape=shape, batch_size=1, name="input")
    x = L.DepthwiseConv2D(3, padding="same", activation="relu")(inp)  # 16x16x8
    x = L.Conv2D(16, 1, activation="relu")(x)  # 16x16x16
    x = L.DepthwiseConv2D(3, strides=2, padding="same", activation="relu")(x)  # 8x8x16
    x = L.Conv2D(32, 1, activation="relu")(x)  # 8x8x32: the output, every byte checked
    return k.Model(inp, x), shape


# name -> (builder, quantization, expected op counts)
MODELS = {
    "cnn_int16": (
        cnn_int16,
        "int16",
        {
            "CONV_2D": 2,
            "DEPTHWISE_CONV_2D": 1,
            "ADD": 1,
            "LEAKY_RELU": 1,
            "MEAN": 1,
            "FULLY_CONNECTED": 1,
            "SOFTMAX": 1,
        },
    ),
    "mobilenet_block_int8": (
        mobilenet_block,
        "int8",
        {
            "DEPTHWISE_CONV_2D": 2,
            "CONV_2D": 2,
        },
    ),
}


def convert(model, in_shape, quant, seed):
    """Full-integer conversion: int8, or 16x8 (int16 activations, int8 weights)."""
    import tensorflow as tf  # noqa: PLC0415

    conv = tf.lite.TFLiteConverter.from_keras_model(model)

    def rep():
        r = np.random.default_rng(seed)
        for _ in range(64):
            yield [r.uniform(-1.0, 1.0, size=(1, *in_shape)).astype(np.float32)]

    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = rep
    if quant == "int16":
        ops = tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
        conv.target_spec.supported_ops = [ops]
        conv.inference_input_type = tf.int16
        conv.inference_output_type = tf.int16
    else:
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def main():
    import keras  # noqa: PLC0415
    import tensorflow as tf  # noqa: PLC0415

    tf.get_logger().setLevel("ERROR")
    for idx, (name, (build, quant, expected)) in enumerate(MODELS.items()):
        # Fresh layer names whether or not gen_test_models.py built models before.
        keras.backend.clear_session()
        keras.utils.set_random_seed(SEED + idx)
        model, in_shape = build()
        gm.set_weights(model, np.random.default_rng(SEED + idx))
        data = gm.quiet(convert, model, in_shape, quant, SEED + 100 + idx)
        path = OUT / f"{name}.tflite"
        path.write_bytes(data)
        m = tc.load_model(data)
        ops = tc.op_names(m)
        counts = {}
        for o in ops:
            counts[o] = counts.get(o, 0) + 1
        if counts != expected:
            raise SystemExit(f"{name}: unexpected ops {ops}")
        golden_dir = OUT / "golden" / name
        if golden_dir.exists():
            shutil.rmtree(golden_dir)
        golden = tc.write_golden(path, golden_dir)
        for t in golden["inputs"] + golden["outputs"]:
            if t["dtype"] != quant:
                raise SystemExit(f"{name}: I/O tensor {t['name']} is {t['dtype']}")
        sg = m.subgraphs[0]
        print(f"{name:22s} {len(data):6d} B  {len(ops):2d} ops {len(sg.tensors):2d} tensors  {ops}")


if __name__ == "__main__":
    main()
