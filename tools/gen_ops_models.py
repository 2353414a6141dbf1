"""Builds Kiln's end-to-end models of the newer operators and their TFLM golden data.

Writes (paths relative to the repository root):
  tests/models/<name>.tflite              the models below
  tests/models/golden/<name>/             golden.json + s<seed>_{in,out}<i>.bin, seeds 1, 2, 3
                                          (tools/tflite_common.write_golden: the format and
                                          protocol of ../shared/models/golden)
  tests/models/all_outputs/<name>.tflite  the every-layer variant: the same model with every
                                          operator's output added to the subgraph outputs
                                          (the model's own outputs first, then in op order),
                                          as ../shared/models/all_outputs
  tests/models/golden_all/<name>/         TFLM's outputs of the every-layer variant (same
                                          inputs), as ../shared/models/golden_all

Models (weights drawn from a seeded numpy generator, not trained; int8 by full-integer
quantization, int8 input and outputs, with a seeded representative dataset uniform in
[-1, 1)). Final op lists in stored order, as the converter emits them (checked after
conversion against EXPECTED_OPS):

  features_float  tf.function -> converter. Input [1,8,8,3]; outputs argmax [4,2] (int32), z
                  [4,2]. CONV_2D (+RELU), MAX_POOL_2D, SPLIT (channels, 2 branches),
                  GATHER (channels of branch a), GATHER (rows), TANH, RESHAPE, TANH, RESHAPE,
                  BATCH_MATMUL (two activations, adj_y), GREATER, STRIDED_SLICE, SELECT_V2,
                  REDUCE_MAX, SUM, PACK, ARG_MAX, UNPACK, SUB. tf.where of three equal
                  shapes becomes SELECT (which TFLM lacks), so its else-branch is a [4,1,4]
                  slice broadcast against [4,4,4].
  features_int8   the same graph quantized: the same ops and one QUANTIZE after the second
                  TANH (requantizing (1/128, 0) to the BATCH_MATMUL output's (0.0397, -128),
                  so that BATCH_MATMUL's right operand, GREATER's and SELECT_V2's inputs share
                  it: TFLM's SELECT_V2 copies bytes). The BATCH_MATMUL operands are both
                  activations, zero points 0 (left) and -128 (right).
                  TF 2.20's quantizer is not deterministic across processes: each
                  conversion runs in a fresh process until it gives the listed ops (see
                  `converted`); those conversions are byte-identical.
  lstm_float      UNIDIRECTIONAL_SEQUENCE_LSTM, STRIDED_SLICE, FULLY_CONNECTED (+RELU),
                  FULLY_CONNECTED, SOFTMAX: a seeded Keras LSTM(8, unroll=False) + Dense(6,
                  relu) + Dense(3) + softmax over [1,6,4]. TF 2.20's converter turns the
                  Keras 3 LSTM into WHILE (no fused op), so the flatbuffer is written here
                  from the Keras weights in the converter's fused form, and TFLM's outputs
                  are checked against Keras' (1e-5).
  math_float      tf.function -> converter. Inputs x, y [1,16]; three outputs (mix,
                  floordiv, floormod). ABS, SQRT, ADD, RSQRT, SQUARED_DIFFERENCE, MUL, CEIL,
                  FLOOR, SUB, SIN, MUL, EXP, ADD, LOG, MUL, ADD, MUL, ROUND, MUL, ADD, MUL,
                  COS, MUL, ADD, ADD, MUL, ADD, FLOOR_MOD, FLOOR_DIV (float32: the pinned
                  wheel's FLOOR_MOD refuses INT32).

Run from the repository root:  .venv/bin/python tools/gen_ops_models.py
`gen_ops_models.py features_int8 ...` regenerates only those models.
Deterministic (fixed seeds); about 60 s on the shared machine (most of it importing TF).
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import sys  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import flatbuffers  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import tflite_common as tc  # noqa: E402
from gen_test_models import quiet  # noqa: E402
from tflite_common import schema_fb as fb  # noqa: E402

OUT = tc.REPO / "tests" / "models"
SEED = 20261201


def _tf():
    import tensorflow as tf  # noqa: PLC0415

    return tf


def rep_data(shapes, seed):
    def rep():
        r = np.random.default_rng(seed)
        for _ in range(64):
            yield [r.uniform(-1.0, 1.0, size=s).astype(np.float32) for s in shapes]

    return rep


def convert_fn(fn, shapes, quantize, seed):
    tf = _tf()
    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], fn)
    if quantize:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep_data(shapes, seed)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


# ---------------------------------------------------------------------------------------
# features: a small conv feature extractor, split into two branches.


def features(rng):
    tf = _tf()
    w = tf.constant(rng.uniform(-0.5, 0.5, size=(3, 3, 3, 8)).astype(np.float32))
    bias = tf.constant(rng.uniform(-0.1, 0.1, size=(8,)).astype(np.float32))
    shape = (1, 8, 8, 3)

    @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32)])
    def f(x):
        y = tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME") + bias)  # CONV_2D [1,8,8,8]
        y = tf.nn.max_pool2d(y, 2, 2, "VALID")  # [1,4,4,8]
        a, b = tf.split(y, 2, axis=3)  # SPLIT: 2 x [1,4,4,4]
        g = tf.gather(a, [3, 0, 2, 1], axis=3)  # GATHER of channels
        g = tf.gather(g, [2, 0, 3, 1], axis=1)  # GATHER of rows
        ta = tf.tanh(tf.reshape(g, [4, 4, 4]))
        tb = tf.tanh(tf.reshape(b, [4, 4, 4]))
        mm = tf.matmul(ta, tb, transpose_b=True)  # BATCH_MATMUL of two activations
        c = tf.math.greater(mm, tb)  # GREATER
        s = tf.where(c, mm, tb[:, 1:2, :])  # SELECT_V2 (broadcast: else SELECT)
        mx = tf.reduce_max(s, axis=2)  # REDUCE_MAX [4,4]
        sm = tf.reduce_sum(s, axis=1)  # SUM [4,4]
        st = tf.stack([mx, sm], axis=1)  # PACK [4,2,4]
        u = tf.unstack(st, axis=2)  # UNPACK 4 x [4,2]
        z = u[0] - u[3]  # SUB [4,2]
        am = tf.math.argmax(st, axis=2, output_type=tf.int32)  # ARG_MAX [4,2]
        return {"z": z, "argmax": am}

    return f, [shape]


# ---------------------------------------------------------------------------------------
# lstm: a Keras LSTM's weights in UNIDIRECTIONAL_SEQUENCE_LSTM, with a small dense head.
#
# TF 2.20's converter turns a Keras 3 LSTM (unroll=False) into a WHILE loop, not the fused
# UNIDIRECTIONAL_SEQUENCE_LSTM (Keras 3 no longer marks its LSTM function with the
# `api_implements` attribute the converter's fusion looks for), so the model is written
# directly as a flatbuffer (the object API, as tools/gen_move_models.py) from a seeded Keras
# model's weights, in the converter's form of a Keras LSTM with return_sequences=False:
#   x [1,6,4] -> UNIDIRECTIONAL_SEQUENCE_LSTM (8 units, batch-major, tanh, no clip) [1,6,8]
#     -> STRIDED_SLICE (last step, shrink axis 1) [1,8] -> FULLY_CONNECTED (6, RELU)
#     -> FULLY_CONNECTED (3) -> SOFTMAX
# and its TFLM outputs are checked against Keras' own float outputs (within 1e-5).

T, I, S = 6, 4, 8


def lstm_keras(rng):
    import keras  # noqa: PLC0415

    L = keras.layers
    inp = keras.Input(shape=(T, I), batch_size=1, name="input")
    x = L.LSTM(S, unroll=False)(inp)
    x = L.Dense(6, activation="relu")(x)
    x = L.Dense(3, name="logits")(x)
    x = L.Softmax()(x)
    model = keras.Model(inp, x)
    for layer in model.layers:
        ws = layer.get_weights()
        if ws:
            layer.set_weights([rng.uniform(-0.6, 0.6, size=v.shape).astype(np.float32) for v in ws])
    return model


def lstm_flatbuffer(model):
    import gen_kernel_cases as g  # noqa: PLC0415
    import gen_move_models as mv  # noqa: PLC0415

    lstm, d1, d2 = [ly for ly in model.layers if ly.get_weights()]
    kernel, recurrent, bias = lstm.get_weights()
    m = mv.Model()
    x = m.tensor([1, T, I], "float32")
    m.inputs = [x]
    gate = lambda w, k: np.ascontiguousarray(w[:, k * S:(k + 1) * S].T)  # noqa: E731
    wx = [m.const(gate(kernel, k), "float32") for k in range(4)]  # i, f, c, o
    wh = [m.const(gate(recurrent, k), "float32") for k in range(4)]
    b = [m.const(bias[k * S:(k + 1) * S], "float32") for k in range(4)]
    h, c = m.tensor([1, S], "float32"), m.tensor([1, S], "float32")
    variables = (h, c)
    seq = m.tensor([1, T, S], "float32")
    o = fb.UnidirectionalSequenceLSTMOptionsT()
    o.fusedActivationFunction = fb.ActivationFunctionType.TANH
    o.cellClip, o.projClip, o.timeMajor = 0.0, 0.0, False
    o.asymmetricQuantizeInputs, o.diagonalRecurrentTensors = False, False
    ins = [x] + wx + wh + [-1, -1, -1] + b + [-1, -1, h, c, -1, -1, -1, -1]
    m.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [seq], ("UnidirectionalSequenceLSTMOptions", o))
    last = m.op("STRIDED_SLICE", [seq, m.const([0, T - 1, 0], "int32"), m.const([1, T, S], "int32"),
                                  m.const([1, 1, 1], "int32")], [m.tensor([1, S], "float32")],
                g.opts("StridedSliceOptions", beginMask=0, endMask=0, ellipsisMask=0, newAxisMask=0,
                       shrinkAxisMask=2))
    fcs = []
    for layer, act in ((d1, fb.ActivationFunctionType.RELU), (d2, fb.ActivationFunctionType.NONE)):
        w, bb = layer.get_weights()
        fcs.append((m.const(np.ascontiguousarray(w.T), "float32"), m.const(bb, "float32"), w.shape[1], act))
    y = last
    for w, bb, n, act in fcs:
        y = m.op("FULLY_CONNECTED", [y, w, bb], [m.tensor([1, n], "float32")],
                 g.opts("FullyConnectedOptions", fusedActivationFunction=act, keepNumDims=False))
    y = m.op("SOFTMAX", [y], [m.tensor([1, 3], "float32")], g.opts("SoftmaxOptions", beta=1.0))
    m.outputs = [y]
    model_t = tc.load_model(m.serialize())
    for t in variables:
        model_t.subgraphs[0].tensors[t].isVariable = True
    bld = flatbuffers.Builder(1 << 16)
    bld.Finish(model_t.Pack(bld), file_identifier=b"TFL3")
    return bytes(bld.Output())


def check_lstm_against_keras(model, path):
    """TFLM's outputs of lstm_float on its golden inputs against Keras' (float, 1e-5)."""
    import json  # noqa: PLC0415

    gdir = OUT / "golden" / path
    golden = json.loads((gdir / "golden.json").read_text())
    for s in golden["samples"]:
        x = np.frombuffer((gdir / s["inputs"][0]).read_bytes(), np.float32).reshape(1, T, I)
        want = np.asarray(model(x))
        got = np.frombuffer((gdir / s["outputs"][0]).read_bytes(), np.float32).reshape(want.shape)
        if not np.allclose(got, want, atol=1e-5):
            raise SystemExit(f"lstm_float: TFLM {got} differs from Keras {want}")


# ---------------------------------------------------------------------------------------
# math: elementwise float math.


def math(rng):
    tf = _tf()
    shape = (1, 16)
    k = tf.constant(rng.uniform(-1.0, 1.0, size=shape).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32), tf.TensorSpec(shape, tf.float32)])
    def f(x, y):
        a = tf.abs(x)  # ABS
        r = tf.sqrt(a)  # SQRT
        e = tf.exp(y)  # EXP
        lg = tf.math.log(e + a)  # LOG (of a positive value)
        rs = tf.math.rsqrt(a + 0.5)  # RSQRT
        t = x * 3.0
        fl = tf.floor(t)  # FLOOR
        ce = tf.math.ceil(t)  # CEIL
        ro = tf.round(y * 2.5)  # ROUND
        si = tf.sin(x * 3.0)  # SIN
        co = tf.cos(y * 3.0)  # COS
        sd = tf.math.squared_difference(x, k)  # SQUARED_DIFFERENCE
        # FLOOR_DIV and FLOOR_MOD (float32: the pinned wheel's FLOOR_MOD refuses INT32)
        d = y * 4.0 + 5.0  # divisors in [1, 9)
        fd = tf.math.floordiv(x * 20.0, d)
        fm = tf.math.floormod(x * 20.0, d)
        mix = r + lg * rs + (fl - ce) * ro + si * co + sd
        return {"mix": mix, "floordiv": fd, "floormod": fm}

    return f, [shape, shape]


# Expected op multisets (checked after conversion).
_FEATURES = ["CONV_2D", "MAX_POOL_2D", "SPLIT", "GATHER", "GATHER", "TANH", "RESHAPE", "TANH",
             "RESHAPE", "BATCH_MATMUL", "GREATER", "STRIDED_SLICE", "SELECT_V2", "REDUCE_MAX",
             "SUM", "PACK", "ARG_MAX", "UNPACK", "SUB"]
EXPECTED_OPS = {
    "features_int8": _FEATURES + ["QUANTIZE"],
    "features_float": _FEATURES,
    "lstm_float": ["UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE", "FULLY_CONNECTED",
                   "FULLY_CONNECTED", "SOFTMAX"],
    "math_float": ["ABS", "SQRT", "ADD", "RSQRT", "SQUARED_DIFFERENCE", "MUL", "CEIL", "FLOOR",
                   "SUB", "SIN", "MUL", "EXP", "ADD", "LOG", "MUL", "ADD", "MUL", "ROUND", "MUL",
                   "ADD", "MUL", "COS", "MUL", "ADD", "ADD", "MUL", "ADD", "FLOOR_MOD",
                   "FLOOR_DIV"],
}


def all_outputs(data):
    """The every-layer variant: every operator output added to the subgraph outputs (the
    model's own first, then in op order, each once)."""
    m = tc.load_model(data)
    sg = m.subgraphs[0]
    outs = [int(t) for t in sg.outputs]
    for op in sg.operators:
        for t in op.outputs:
            if t >= 0 and int(t) not in outs:
                outs.append(int(t))
    sg.outputs = outs
    b = flatbuffers.Builder(len(data) + 4096)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


CONVERTED = {
    "features_int8": lambda: quiet(convert_fn, *features(np.random.default_rng(SEED)), True, SEED + 100),
    "features_float": lambda: quiet(convert_fn, *features(np.random.default_rng(SEED)), False, 0),
    "math_float": lambda: quiet(convert_fn, *math(np.random.default_rng(SEED + 2)), False, 0),
}


def converted(name, attempts=10):
    """The converter's model `name`, each try in a fresh process, until its ops are
    EXPECTED_OPS[name]. TF 2.20's quantizer is not deterministic across processes (the same
    process repeats itself): about one conversion of features_int8 in three comes out with
    DEQUANTIZE before ARG_MAX and QUANTIZEs after UNPACK (23 ops); the conversions with the
    expected ops are byte-identical."""
    import subprocess  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    for attempt in range(attempts):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / f"{name}.tflite"
            subprocess.run([sys.executable, __file__, "--convert", name, str(out)], check=True)
            data = out.read_bytes()
        ops = tc.op_names(tc.load_model(data))
        if Counter(ops) == Counter(EXPECTED_OPS[name]):
            return data
        print(f"{name}: attempt {attempt + 1}: the converter emitted {ops}; again in a new process")
    raise SystemExit(f"{name}: no conversion with the expected ops in {attempts} attempts")


def write(name, data, expect=None):
    ops = tc.op_names(tc.load_model(data))
    if expect is not None and Counter(ops) != Counter(expect):
        raise SystemExit(f"{name}: unexpected ops {ops}")
    path = OUT / f"{name}.tflite"
    path.write_bytes(data)
    tc.write_golden(path, OUT / "golden" / name)
    (OUT / "all_outputs").mkdir(exist_ok=True)
    every = OUT / "all_outputs" / f"{name}.tflite"
    every.write_bytes(all_outputs(data))
    g = tc.write_golden(every, OUT / "golden_all" / name)
    print(f"{name:16s} {len(data):6d} B  {len(ops):2d} ops ({len(g['outputs'])} every-layer outputs)  {ops}")


def main():
    import keras  # noqa: PLC0415

    tf = _tf()
    tf.get_logger().setLevel("ERROR")
    keras.utils.set_random_seed(SEED)
    if sys.argv[1:2] == ["--convert"]:
        Path(sys.argv[3]).write_bytes(CONVERTED[sys.argv[2]]())
        return
    only = set(sys.argv[1:])
    for name in ("features_int8", "features_float", "lstm_float", "math_float"):
        if only and name not in only:
            continue
        if name == "lstm_float":
            model = lstm_keras(np.random.default_rng(SEED + 1))
            write(name, lstm_flatbuffer(model), EXPECTED_OPS[name])
            check_lstm_against_keras(model, name)
        else:
            write(name, converted(name), EXPECTED_OPS[name])


if __name__ == "__main__":
    main()
