"""Builds Kiln's own small test models and their TFLM golden data.

Writes (paths relative to the repository root):
  tests/models/<name>.tflite           the models below
  tests/models/manifest.json           list of {name, file, dtype, description, ops, num_ops,
                                       num_tensors, bytes, inputs, outputs}
  tests/models/golden/<name>/          golden.json + s<seed>_in<i>.bin / s<seed>_out<i>.bin for
                                       seeds 1, 2, 3, same format and protocol as
                                       ../shared/models/golden (inputs: seeded random over the
                                       input dtype's range, int8 full range, float in [-1, 1))

Models (Keras -> tf.lite converter; weights drawn from a seeded numpy generator, not trained):
  mlp_int8 / mlp_float            FULLY_CONNECTED (+RELU) x3, SOFTMAX
  cnn_int8 / cnn_float            CONV_2D (SAME s1, VALID s2, SAME s2), DEPTHWISE_CONV_2D
                                  (multiplier 2), MAX_POOL_2D, AVERAGE_POOL_2D (SAME), RESHAPE,
                                  FULLY_CONNECTED, SOFTMAX
  branches_int8 / branches_float  two parallel conv branches from one tensor merged by
                                  CONCATENATION, a residual ADD (fused RELU), MEAN (global
                                  average pooling) head, FULLY_CONNECTED, SOFTMAX
int8 models use full-integer quantization (representative dataset: seeded uniform [-1, 1)),
int8 input and output; float models are plain float32.

Then runs tools/gen_miri_models.py (its models share tests/models/golden).
Run from the repository root:  .venv/bin/python tools/gen_test_models.py
Deterministic (fixed seeds); about 10 s (35 s with gen_miri_models.py).
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import json  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

import tflite_common as tc  # noqa: E402

OUT = tc.REPO / "tests" / "models"
SEED = 20261129
IMG = (16, 16, 3)


def _keras():
    import keras  # noqa: PLC0415

    return keras


def mlp():
    k = _keras()
    inp = k.Input(shape=(64,), batch_size=1, name="input")
    x = k.layers.Dense(32, activation="relu")(inp)
    x = k.layers.Dense(16, activation="relu")(x)
    x = k.layers.Dense(10, name="logits")(x)
    x = k.layers.Softmax()(x)
    return k.Model(inp, x), (64,)


def cnn():
    k = _keras()
    L = k.layers
    inp = k.Input(shape=IMG, batch_size=1, name="input")
    x = L.Conv2D(8, 3, strides=1, padding="same", activation="relu")(inp)  # 16x16x8
    x = L.Conv2D(16, 3, strides=2, padding="valid", activation="relu")(x)  # 7x7x16
    x = L.DepthwiseConv2D(3, padding="same", depth_multiplier=2, activation="relu")(x)  # 7x7x32
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)  # 4x4x16
    x = L.MaxPooling2D(2)(x)  # 2x2x16
    x = L.AveragePooling2D(2, strides=1, padding="same")(x)  # 2x2x16
    x = L.Flatten()(x)  # 64
    x = L.Dense(10, name="logits")(x)
    x = L.Softmax()(x)
    return k.Model(inp, x), IMG


def branches():
    k = _keras()
    L = k.layers
    inp = k.Input(shape=IMG, batch_size=1, name="input")
    x = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inp)  # 8x8x8
    a = L.Conv2D(8, 1, padding="valid", activation="relu")(x)  # branch 1: 1x1
    b = L.Conv2D(8, 3, padding="same", activation="relu")(x)  # branch 2: 3x3
    c = L.Concatenate(axis=-1)([a, b])  # 8x8x16
    d = L.Conv2D(8, 1, padding="valid")(c)  # 8x8x8, no activation
    y = L.Add()([x, d])  # residual
    y = L.ReLU()(y)  # fused into ADD by the converter
    g = L.GlobalAveragePooling2D()(y)  # MEAN over H, W
    z = L.Dense(10, name="logits")(g)
    z = L.Softmax()(z)
    return k.Model(inp, z), IMG


def aliasing():
    """Operators Kiln runs without buffers of their own: elementwise ops that can overwrite a
    dying input, a concatenation of [1, n] tensors (each input a contiguous slice of the
    output), and reshapes (views)."""
    k = _keras()
    L = k.layers
    inp = k.Input(shape=(48,), batch_size=1, name="input")
    a = L.Dense(32)(inp)
    b = L.Dense(32)(inp)
    b = L.Activation("sigmoid")(b)  # LOGISTIC
    s = L.Add()([a, b])  # ADD: a dies here
    s = L.Activation("tanh")(s)  # TANH
    m = L.Multiply()([s, b])  # MUL: s and b die here
    c = L.Dense(16)(inp)
    c = L.LeakyReLU(negative_slope=0.2)(c)  # LEAKY_RELU
    d = L.Concatenate(axis=-1)([m, c])  # [1, 48]: slices
    e = L.Reshape((6, 8))(d)  # RESHAPE
    e = L.ReLU(max_value=6.0)(e)  # RELU6
    f = L.Flatten()(e)  # RESHAPE
    p = L.Dense(64)(f)
    q = L.Dense(64)(f)
    r = L.Concatenate(axis=-1)([p, q])  # [1, 128]: slices written by the two FCs
    z = L.Dense(10, name="logits")(r)
    z = L.Softmax()(z)
    return k.Model(inp, z), (48,)


def depthwise():
    """Depthwise convolutions at the peak of live bytes, where Kiln runs them in place."""
    k = _keras()
    L = k.layers
    inp = k.Input(shape=(12, 12, 8), batch_size=1, name="input")
    x = L.DepthwiseConv2D(3, padding="same", activation="relu")(inp)  # 12x12x8
    x = L.DepthwiseConv2D(3, strides=2, padding="same", activation="relu")(x)  # 6x6x8
    x = L.Conv2D(4, 1, activation="relu")(x)  # 6x6x4
    x = L.Flatten()(x)
    x = L.Dense(10, name="logits")(x)
    x = L.Softmax()(x)
    return k.Model(inp, x), (12, 12, 8)


def pointwise():
    """Pointwise (1x1) convolutions at the peak, widening then narrowing the channels: Kiln runs
    both in place (the input at the end of the wider output's buffer)."""
    k = _keras()
    L = k.layers
    inp = k.Input(shape=(10, 10, 8), batch_size=1, name="input")
    x = L.Conv2D(16, 1, activation="relu")(inp)  # 10x10x16
    x = L.Conv2D(4, 1, activation="relu")(x)  # 10x10x4
    x = L.Flatten()(x)
    x = L.Dense(10, name="logits")(x)
    x = L.Softmax()(x)
    return k.Model(inp, x), (10, 10, 8)


MODELS = {
    "mlp": (mlp, "MLP: 64 -> Dense 32 relu -> Dense 16 relu -> Dense 10 -> softmax"),
    "cnn": (
        cnn,
        "CNN on 16x16x3: conv SAME s1, conv VALID s2, depthwise (x2) SAME, conv SAME s2, "
        "max pool 2, avg pool 2 SAME s1, flatten, dense 10, softmax",
    ),
    "branches": (
        branches,
        "ResNet-style block on 16x16x3: conv s2, two parallel convs (1x1, 3x3) concatenated, "
        "1x1 conv, residual add + relu, global average pool (MEAN), dense 10, softmax",
    ),
    "aliasing": (
        aliasing,
        "Aliasing on 48 inputs: dense 32 -> (+ sigmoid(dense 32)) -> tanh -> * sigmoid, "
        "concatenated with leaky_relu(dense 16), reshape 6x8, relu6, flatten, two dense 64 "
        "concatenated, dense 10, softmax",
    ),
    "depthwise": (
        depthwise,
        "Depthwise on 12x12x8: depthwise 3x3 SAME relu, depthwise 3x3 s2 SAME relu, conv 1x1 "
        "to 4, flatten, dense 10, softmax",
    ),
    "pointwise": (
        pointwise,
        "Pointwise on 10x10x8: conv 1x1 to 16 relu, conv 1x1 to 4 relu, flatten, dense 10, "
        "softmax",
    ),
}

# Expected op multiset per model (checked after conversion).
EXPECTED_OPS = {
    "mlp": {"FULLY_CONNECTED": 3, "SOFTMAX": 1},
    "cnn": {
        "CONV_2D": 3,
        "DEPTHWISE_CONV_2D": 1,
        "MAX_POOL_2D": 1,
        "AVERAGE_POOL_2D": 1,
        "RESHAPE": 1,
        "FULLY_CONNECTED": 1,
        "SOFTMAX": 1,
    },
    "branches": {
        "CONV_2D": 4,
        "CONCATENATION": 1,
        "ADD": 1,
        "MEAN": 1,
        "FULLY_CONNECTED": 1,
        "SOFTMAX": 1,
    },
    "aliasing": {
        "FULLY_CONNECTED": 6,
        "LOGISTIC": 1,
        "RESHAPE": 1,
        "ADD": 1,
        "TANH": 1,
        "MUL": 1,
        "LEAKY_RELU": 1,
        "CONCATENATION": 2,
        "RELU6": 1,
        "SOFTMAX": 1,
    },
    "depthwise": {
        "DEPTHWISE_CONV_2D": 2,
        "CONV_2D": 1,
        "RESHAPE": 1,
        "FULLY_CONNECTED": 1,
        "SOFTMAX": 1,
    },
    "pointwise": {
        "CONV_2D": 2,
        "RESHAPE": 1,
        "FULLY_CONNECTED": 1,
        "SOFTMAX": 1,
    },
}


def set_weights(model, rng):
    """He-uniform kernels, small nonzero biases, from a numpy generator (version-stable).
    The logits layer is scaled down so the softmax does not saturate to one-hot."""
    for layer in model.layers:
        ws = layer.get_weights()
        if not ws:
            continue
        new = []
        for w in ws:
            if w.ndim == 1:
                new.append(rng.uniform(-0.1, 0.1, size=w.shape).astype(np.float32))
                continue
            if layer.__class__.__name__ == "DepthwiseConv2D":
                fan_in = w.shape[0] * w.shape[1]
            else:
                fan_in = int(np.prod(w.shape[:-1]))
            lim = np.sqrt(6.0 / fan_in)
            if layer.name == "logits":
                lim *= 0.3
            new.append(rng.uniform(-lim, lim, size=w.shape).astype(np.float32))
        layer.set_weights(new)


def convert(model, in_shape, quantize, seed):
    import tensorflow as tf  # noqa: PLC0415

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if quantize:
        def rep():
            r = np.random.default_rng(seed)
            for _ in range(64):
                yield [r.uniform(-1.0, 1.0, size=(1, *in_shape)).astype(np.float32)]

        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def quiet(fn, *args):
    """Runs fn with the converter's stdout/stderr chatter (C++ and Python) discarded."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        return fn(*args)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def stateful_models():
    """Kiln's own small stateful models: one SVDF and one UNIDIRECTIONAL_SEQUENCE_LSTM (int8,
    the LSTM with an int16 cell state), written directly as flatbuffers by the builders of
    tools/gen_stateful_cases.py (TF 2.20's converter crashes quantizing a Keras LSTM)."""
    import gen_stateful_cases as gs  # noqa: PLC0415

    entries = []
    specs = [
        ("svdf_int8", "Stateful: SVDF (int8, int8 state), rank 2, memory 4",
         lambda rng: gs.svdf_model(gs.gen_svdf_int(rng, "int8"))),
        ("lstm_int8", "Stateful: UNIDIRECTIONAL_SEQUENCE_LSTM (int8, int16 cell state)",
         lambda rng: gs.lstm_model(gs.gen_lstm(rng))),
    ]
    for i, (name, desc, build) in enumerate(specs):
        data = bytes(build(np.random.default_rng(SEED + 500 + i)))
        path = OUT / f"{name}.tflite"
        path.write_bytes(data)
        m = tc.load_model(data)
        ops = tc.op_names(m)
        golden = tc.write_golden(path, OUT / "golden" / name)
        entries.append({
            "name": name,
            "file": path.name,
            "dtype": "int8",
            "description": desc,
            "ops": ops,
            "num_ops": len(ops),
            "num_tensors": len(m.subgraphs[0].tensors),
            "bytes": len(data),
            "inputs": [{"shape": t["shape"], "dtype": t["dtype"]} for t in golden["inputs"]],
            "outputs": [{"shape": t["shape"], "dtype": t["dtype"]} for t in golden["outputs"]],
        })
        print(f"{name:16s} {len(data):6d} B  {len(ops):2d} ops  {ops}")
    return entries


def main():
    import keras  # noqa: PLC0415
    import tensorflow as tf  # noqa: PLC0415

    tf.get_logger().setLevel("ERROR")
    keras.utils.set_random_seed(SEED)
    if (OUT / "golden").exists():
        shutil.rmtree(OUT / "golden")
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = []
    for idx, (base, (build, desc)) in enumerate(MODELS.items()):
        model, in_shape = build()
        set_weights(model, np.random.default_rng(SEED + idx))
        for dtype, quantize in (("int8", True), ("float32", False)):
            name = f"{base}_{'int8' if quantize else 'float'}"
            data = quiet(convert, model, in_shape, quantize, SEED + 100 + idx)
            path = OUT / f"{name}.tflite"
            path.write_bytes(data)
            m = tc.load_model(data)
            ops = tc.op_names(m)
            counts = {}
            for o in ops:
                counts[o] = counts.get(o, 0) + 1
            if counts != EXPECTED_OPS.get(base):
                raise SystemExit(f"{name}: unexpected ops {ops}")
            sg = m.subgraphs[0]
            golden = tc.write_golden(path, OUT / "golden" / name)
            for t in golden["inputs"] + golden["outputs"]:
                if t["dtype"] != dtype:
                    raise SystemExit(f"{name}: I/O tensor {t['name']} is {t['dtype']}")
            manifest.append({
                "name": name,
                "file": path.name,
                "dtype": dtype,
                "description": desc,
                "ops": ops,
                "num_ops": len(ops),
                "num_tensors": len(sg.tensors),
                "bytes": len(data),
                "inputs": [{"shape": t["shape"], "dtype": t["dtype"]} for t in golden["inputs"]],
                "outputs": [{"shape": t["shape"], "dtype": t["dtype"]} for t in golden["outputs"]],
            })
            print(f"{name:16s} {len(data):6d} B  {len(ops):2d} ops {len(sg.tensors):2d} tensors  {ops}")
    manifest += stateful_models()
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(tc.REPO)}/manifest.json ({len(manifest)} models)")
    # The golden directory removed above also held the models of gen_miri_models.py.
    import gen_miri_models  # noqa: PLC0415

    gen_miri_models.OUT = OUT
    gen_miri_models.main()


if __name__ == "__main__":
    main()
