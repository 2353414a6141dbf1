"""Builds the test models of patch-based execution and their TFLM goldens.

Writes (relative to the repository root):
  tests/models/tiling/mobilenetv2_int8.tflite   the models below
  tests/models/tiling/wide_spectrogram_int8.tflite
  tests/models/tiling/golden/<model>/           golden.json + s<seed>_in<i>.bin /
                                                s<seed>_out<i>.bin (seeds 1, 2, 3, the format
                                                of ../shared/models/golden)

mobilenetv2_int8: on 48x48x3, CONV_2D 3x3 s2 (relu6) to 24x24x16; two inverted residual
blocks (1x1 expansion to 64 relu6, depthwise 3x3 relu6, 1x1 projection to 16, ADD with the
block's input); one with stride 2 (expansion, depthwise s2 to 12x12x64, projection to 24);
global average pooling (MEAN), dense 10, softmax. Full-integer int8 (Keras -> tf.lite
converter, seeded weights, not trained). Its inverted residuals (ADD skips) sit in the
high-resolution stage that Kiln runs in strips of rows under a RAM budget (tests/tiling.rs).

wide_spectrogram_int8: an audio event model over a long window, a 32 x 256 x 1 spectrogram
(32 bands, 256 frames): CONV_2D 3x3 (relu6) to 32 channels, DEPTHWISE_CONV_2D 3x3 (relu6), 1x1
projection to 8, MAX_POOL_2D 2x2 to 16x128x8; global average pooling (MEAN), dense 10,
softmax. Its rows are long and few: strips of rows keep whole rows of 256 x 32 channels live,
and more strips recompute the 3x3 halos' rows; patches of rows and columns (issue 30's 2-D
patches) cut the arena further within 20 % extra MACs.

Run from the repository root:  .venv/bin/python tools/gen_tiling_models.py  (deterministic)
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

import gen_test_models as gt  # noqa: E402
import tflite_common as tc  # noqa: E402

OUT = tc.REPO / "tests" / "models" / "tiling"
SEED = 20261202
SHAPE = (48, 48, 3)


def mobilenetv2():
    import keras  # noqa: PLC0415

    L = keras.layers
    inp = keras.Input(shape=SHAPE, batch_size=1, name="input")
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu6")(inp)  # 24x24x16

    def block(x, out, stride, skip):
        y = L.Conv2D(64, 1, activation="relu6")(x)
        y = L.DepthwiseConv2D(3, strides=stride, padding="same", activation="relu6")(y)
        y = L.Conv2D(out, 1)(y)
        return L.Add()([x, y]) if skip else y

    x = block(x, 16, 1, True)
    x = block(x, 16, 1, True)
    x = block(x, 24, 2, False)  # 12x12x24
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(10, name="logits")(x)
    x = L.Softmax()(x)
    return keras.Model(inp, x)


WIDE_SHAPE = (32, 256, 1)


def wide_spectrogram():
    import keras  # noqa: PLC0415

    L = keras.layers
    inp = keras.Input(shape=WIDE_SHAPE, batch_size=1, name="input")
    x = L.Conv2D(32, 3, padding="same", activation="relu6")(inp)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu6")(x)
    x = L.Conv2D(8, 1)(x)
    x = L.MaxPooling2D(2)(x)  # 16x128x8
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(10, name="logits")(x)
    x = L.Softmax()(x)
    return keras.Model(inp, x)


def write(name, build, shape, check):
    import keras  # noqa: PLC0415

    keras.utils.set_random_seed(SEED)
    model = build()
    gt.set_weights(model, np.random.default_rng(SEED))
    data = gt.quiet(gt.convert, model, shape, True, SEED + 1)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.tflite"
    path.write_bytes(data)
    ops = tc.op_names(tc.load_model(data))
    if not check(ops):
        raise SystemExit(f"{name}: unexpected ops {ops}")
    tc.write_golden(path, OUT / "golden" / name)
    print(f"{path.relative_to(tc.REPO)}: {len(data)} B, ops {ops}")


def main():
    write(
        "mobilenetv2_int8",
        mobilenetv2,
        SHAPE,
        lambda ops: ops.count("ADD") == 2 and ops.count("DEPTHWISE_CONV_2D") == 3,
    )
    write(
        "wide_spectrogram_int8",
        wide_spectrogram,
        WIDE_SHAPE,
        lambda ops: ops[:4] == ["CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D", "MAX_POOL_2D"],
    )


if __name__ == "__main__":
    main()
