"""Single-operator golden cases for Kiln's kernel tests, run through the pinned TFLM.

For each (operator, dtype) this builds N (default 200) single-op .tflite models with seeded
random parameters, runs each once in TFLM on a seeded random input and stores model, inputs
and TFLM's outputs in ONE binary bundle:

    tests/kernel_cases/<op>_<dtype>.kcase      e.g. conv_2d_int8.kcase, conv_2d_float32.kcase
    tests/kernel_cases/manifest.json           per bundle: file, op, dtype, input/output dtypes,
                                               case count, generator seed, bytes
    tests/kernel_cases/README.md               the format below, for the Rust side

Bundle format (all integers u32 little-endian, no compression, no padding):
    magic   8 bytes  b"KCASE1\\0\\0"
    count   u32      number of cases
    per case:
      u32 length + that many bytes of .tflite model (one subgraph, exactly one operator)
      u32 input count;  per input:  u32 length + raw tensor bytes (little-endian, row-major)
      u32 output count; per output: u32 length + raw tensor bytes
A generator whose graph sets `invokes` (> 1) makes sequences (class Sequence): such bundles
start with b"KCASE2\\0\\0" and hold, per case after the model, a u32 invoke count and per
invoke the input and output lists as above (reset() once, the state carried over; the graph's
`unwritten(k, outputs)` hook zeroes what TFLM leaves unwritten).
Inputs are the subgraph's inputs in order (constants such as weights, bias, shape, axis,
paddings and perm are in the model); outputs are TFLM's outputs for them after reset() and one
invoke(). integer outputs must match byte for byte. Model bytes are not aligned inside the bundle:
copy a model to a 16-byte aligned buffer before reading it in place (constant buffers are
16-byte aligned relative to the start of each model).

How the models are built: directly as TFLite flatbuffers with the schema object API shipped
in tflite-micro (not with the tf.lite converter: about 0.3 s per conversion, no exact control
of zero points, and it folds or wraps lone ops). The layout follows the converter's
conventions (checked against converted models): buffer 0 empty and used by every tensor
without data, one 16-byte aligned buffer per constant; conv/transpose-conv weights OHWI
per-channel on dimension 0, depthwise weights [1,H,W,C*M] per-channel on dimension 3,
symmetric int8 weights in [-127, 127] with zero point 0, int32 bias with scale
input_scale * weight_scale[c] and zero point 0, FULLY_CONNECTED weights [out, in] per-channel
or per-tensor (then a per-tensor bias scale), optional FC bias as input index -1; ops whose TFLite int8
kernel does not requantize (pools, concatenation, pad, reshape, transpose, strided slice,
resize, maximum/minimum) have equal input and output quantization; SOFTMAX and LOGISTIC
outputs use scale 1/256 and zero point -128, TANH 1/128 and 0.
int8 parameters: input scales 10**U(-3, 0) (op-dependent), zero points drawn among -128, 127,
0 and uniform; weights scaled per output channel by 10**U(-3, 1), so requantization
multipliers span several orders of magnitude; the output quantization is calibrated from a
float32 twin of the model run in TFLM on the dequantized input (range widened or narrowed at
random, so that some outputs saturate), and for conv-like ops sometimes chosen so that the
largest per-channel multiplier is above 1 (left shift). Fused activations NONE/RELU/RELU6,
batches up to 3 where TFLM supports them, SAME/VALID padding, strides, dilations, depth
multipliers, broadcasting.
RELU6 int8 also keeps input and output quantization equal: TFLM's int8 RELU6 ignores the
output quantization (TensorFlow Lite requantizes), so other cases would encode that quirk.
16x8 (int16 activations, int8 weights): int16 activations are symmetric (zero point 0, input
scales 10**U(-5, -2)), output scales calibrated the same way from the float twin (zero point
0); CONV_2D biases int64 (80%), int32 or none; DEPTHWISE_CONV_2D always an int64 bias (TFLM
crashes without one); FULLY_CONNECTED per-channel or per-tensor with an int64, int32 or no
bias; cases whose largest multiplier is >= 64 are redrawn (TFLM's 16x8 kernels do not support
them). SOFTMAX int16 -> int16 outputs scale 1/32768 and zero point 0, int8 -> int16 1/65536 and
-32768. QUANTIZE between int8, int16 and int32 (int16 zero points mostly 0). MEAN and LEAKY_RELU
int16. CAST between int8, int16, int32 and float32 (float inputs up to 1e10 with special values).
SVDF (int8 state and time weights, or int16) and UNIDIRECTIONAL_SEQUENCE_LSTM (int8, int16 cell
state) come from tools/gen_stateful_cases.py (LSTM tensor names dropped); their golden output is
one invoke after reset() (int8 state filled with its zero point, others with zeros).
Every model is parsed back to check it holds exactly the one intended op; models TFLM
rejects are redrawn (counts printed). Op versions are all 1 (TFLM ignores them).
--verify runs every stored case through TensorFlow Lite's reference kernels (BUILTIN_REF):
all cases load there too, and all outputs agree exactly except FULLY_CONNECTED int8 (up to
1 LSB: TFLite's reference FC rounds differently; TFLM is the reference).

Bundles are named by op and input dtype; when that is ambiguous the output dtype follows:
quantize_float32 (float32 -> int8), quantize_int8 (int8 -> int8 requantization), quantize_int16
(int16 -> int8), quantize_int8_int16, quantize_int16_int16, quantize_int16_int32,
quantize_int8_int32, softmax_int8_int16, dequantize_int8 (int8 -> float32), cast_<in>_<out>;
svdf_int8_int16state is the int8 SVDF with int16 state and time weights.

Run from the repository root:
    .venv/bin/python tools/gen_kernel_cases.py                 # all bundles (about 4.5 min)
    .venv/bin/python tools/gen_kernel_cases.py conv_2d add     # only these ops (by file prefix)
    .venv/bin/python tools/gen_kernel_cases.py --verify        # compare every stored case with
                                                                # TensorFlow Lite's reference kernels
Deterministic: each bundle's seed is BASE_SEED + the op's fixed index (in the manifest).
"""

import argparse
import importlib
import json
import math
import os
import pickle
import struct
import sys
import time
import zlib
from pathlib import Path

import flatbuffers
import numpy as np

import tflite_common as tc
from tflite_common import schema_fb as fb

OUT = tc.REPO / "tests" / "kernel_cases"
MAGIC = b"KCASE1\0\0"
MAGIC_SEQ = b"KCASE2\0\0"  # cases of several invocations (Sequence)
BASE_SEED = 7100
N_CASES = 200
ARENA = 256 * 1024

NONE, RELU, RELU_N1_TO_1, RELU6 = 0, 1, 2, 3
SAME, VALID = 0, 1
TYPE = {"float32": fb.TensorType.FLOAT32, "int8": fb.TensorType.INT8,
        "int16": fb.TensorType.INT16, "int32": fb.TensorType.INT32, "int64": fb.TensorType.INT64,
        "bool": fb.TensorType.BOOL, "uint8": fb.TensorType.UINT8, "uint32": fb.TensorType.UINT32,
        "uint64": fb.TensorType.UINT64}
NP = {"float32": np.float32, "int8": np.int8, "int16": np.int16, "int32": np.int32,
      "int64": np.int64, "bool": np.bool_, "uint8": np.uint8, "uint32": np.uint32, "uint64": np.uint64}
QUANTIZED = ("int8", "int16")  # activation dtypes calibrated from a float twin


class Reject(Exception):
    """The drawn parameters are not usable (redraw)."""


# --------------------------------------------------------------------------------------------
# Graph description and serialization


class Tensor:
    def __init__(self, shape, dtype, data=None, quant=None, name="", role="act"):
        self.shape = [int(d) for d in shape]
        self.dtype = dtype
        self.data = data  # numpy array for constants
        self.quant = quant  # (scales, zero_points, quantized_dimension) or None
        self.name = name
        self.role = role  # act | weight | bias | param


class Graph:
    def __init__(self, op, options_type=None, options=None):
        self.tensors = []
        self.inputs = []
        self.outputs = []
        self.op = op
        self.op_inputs = []
        self.op_outputs = []
        self.options_type = options_type
        self.options = options
        self.tight_scale = None  # output scale that makes the largest multiplier ~1 (conv-like)
        self.float_inputs = None  # float ranges for float inputs: list of (lo, hi)

    def add(self, t):
        self.tensors.append(t)
        return len(self.tensors) - 1

    def input(self, shape, dtype, quant=None, name=None):
        i = self.add(Tensor(shape, dtype, quant=quant, name=name or f"in{len(self.inputs)}"))
        self.inputs.append(i)
        self.op_inputs.append(i)
        return i

    def const(self, data, dtype, quant=None, name="c", role="param"):
        data = np.asarray(data, dtype=NP[dtype])
        i = self.add(Tensor(data.shape, dtype, data=data, quant=quant, name=name, role=role))
        self.op_inputs.append(i)
        return i

    def none_input(self):
        self.op_inputs.append(-1)

    def output(self, shape, dtype, quant=None):
        i = self.add(Tensor(shape, dtype, quant=quant, name=f"out{len(self.outputs)}"))
        self.outputs.append(i)
        self.op_outputs.append(i)
        return i


class AlignedBufferT(fb.BufferT):
    """BufferT whose data vector is 16-byte aligned (as the converter writes it)."""

    def Pack(self, builder):
        data = None
        if self.data is not None and len(self.data):
            raw = bytes(self.data)
            builder.StartVector(1, len(raw), 16)
            builder.head = builder.head - len(raw)
            builder.Bytes[builder.head:builder.head + len(raw)] = raw
            data = builder.EndVector()
        fb.BufferStart(builder)
        if data is not None:
            fb.BufferAddData(builder, data)
        return fb.BufferEnd(builder)


def serialize(g):
    # A custom operator (TFLM's Signal library): CUSTOM with its name and flexbuffer options
    # (`g.custom_options`, a dict).
    custom = not hasattr(fb.BuiltinOperator, g.op)
    code = fb.BuiltinOperator.CUSTOM if custom else getattr(fb.BuiltinOperator, g.op)
    opc = fb.OperatorCodeT()
    opc.builtinCode = code
    opc.deprecatedBuiltinCode = min(code, 127)
    if custom:
        opc.customCode = g.op
    opc.version = 1  # TFLM (and Kiln) ignore op versions; TFLite registers version 1 of every op
    buffers = [AlignedBufferT()]
    tensors = []
    for t in g.tensors:
        tt = fb.TensorT()
        tt.shape = list(t.shape)
        tt.type = TYPE[t.dtype]
        tt.buffer = 0  # the empty sentinel buffer: activations have no data
        if t.data is not None:
            b = AlignedBufferT()
            b.data = np.ascontiguousarray(t.data, dtype=np.dtype(NP[t.dtype]).newbyteorder("<")).tobytes()
            buffers.append(b)
            tt.buffer = len(buffers) - 1
        if t.quant is not None:
            q = fb.QuantizationParametersT()
            q.scale = [float(s) for s in t.quant[0]]
            q.zeroPoint = [int(z) for z in t.quant[1]]
            q.quantizedDimension = int(t.quant[2])
            tt.quantization = q
        tensors.append(tt)
    op = fb.OperatorT()
    op.opcodeIndex = 0
    op.inputs = list(g.op_inputs)
    op.outputs = list(g.op_outputs)
    if g.options_type is not None:
        op.builtinOptionsType = getattr(fb.BuiltinOptions, g.options_type)
        op.builtinOptions = g.options
    if custom:
        from flatbuffers import flexbuffers
        op.customOptions = list(flexbuffers.Dumps(getattr(g, "custom_options", None) or {}))
        op.customOptionsFormat = fb.CustomOptionsFormat.FLEXBUFFERS
    sg = fb.SubGraphT()
    sg.tensors = tensors
    sg.inputs = list(g.inputs)
    sg.outputs = list(g.outputs)
    sg.operators = [op]
    m = fb.ModelT()
    m.version = 3
    m.operatorCodes = [opc]
    m.subgraphs = [sg]
    m.buffers = buffers
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def opts(cls, **kw):
    o = getattr(fb, cls + "T")()
    for k, v in kw.items():
        if not hasattr(o, k):
            raise AttributeError(f"{cls}T has no field {k}")
        setattr(o, k, v)
    return cls, o


# --------------------------------------------------------------------------------------------
# Running TFLM


def _run_tflm_here(model, xs, n_out, seq=False):
    it = tc.make_interpreter(model, ARENA)
    with tc.captured_stderr() as log:
        try:
            if not seq:
                return tc.run_tflm(it, xs, n_out)
            # A sequence: reset() once, then one invoke per input set, the state carried over.
            it.reset()
            ys = []
            for step in xs:
                for i, x in enumerate(step):
                    it.set_input(x, i)
                it.invoke()
                ys.append([np.array(it.get_output(i)) for i in range(n_out)])
            return ys
        except RuntimeError as e:
            err = e
    raise RuntimeError(f"{err} {log['text']}".strip())


def run_tflm(model, xs, n_out, seq=False):
    """Runs one model in TFLM in a forked child (TFLM segfaults on some models it does not
    support, e.g. DEPTHWISE_CONV_2D without bias); raises RuntimeError if it fails. With
    `seq`, `xs` is a list of input sets run in order after one reset() (outputs per invoke)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            try:
                res = ("ok", _run_tflm_here(model, xs, n_out, seq))
            except Exception as e:  # noqa: BLE001
                res = ("err", str(e))
            with os.fdopen(w, "wb") as f:
                pickle.dump(res, f)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise RuntimeError(f"TFLM crashed (signal {os.WTERMSIG(status)})")
    kind, val = pickle.loads(data)
    if kind != "ok":
        raise RuntimeError(val)
    return val


def dequant(x, q):
    s, z, _ = q
    return ((x.astype(np.float64) - z[0]) * s[0]).astype(np.float32)


def float_twin(g):
    """The same graph in float32: int8 activations/weights and int32 biases dequantized."""
    f = Graph(g.op, g.options_type, g.options)
    for t in g.tensors:
        if t.dtype in QUANTIZED or t.role == "bias":
            data = None
            if t.data is not None:
                s = np.asarray(t.quant[0], np.float64)
                z = np.asarray(t.quant[1], np.float64)
                shape = [1] * len(t.shape)
                if len(s) > 1:
                    shape[t.quant[2]] = len(s)
                data = ((t.data.astype(np.float64) - z.reshape(shape)) * s.reshape(shape)).astype(np.float32)
            f.tensors.append(Tensor(t.shape, "float32", data=data, name=t.name, role=t.role))
        else:
            f.tensors.append(t)
    f.inputs, f.outputs = g.inputs, g.outputs
    f.op_inputs, f.op_outputs = g.op_inputs, g.op_outputs
    return f


def calibrate(y, rng, tight_scale=None):
    """Output (scale, zero point) from a float output's range, TFLite style (range holds 0),
    widened or narrowed at random; sometimes the 'tight' scale (multiplier > 1)."""
    lo = min(0.0, float(np.min(y)))
    hi = max(0.0, float(np.max(y)))
    if hi - lo < 1e-6:
        hi = lo + 1e-3
    u = rng.random()
    if tight_scale is not None and u < 0.15:
        scale = tight_scale / rng.uniform(1.05, 4.0)
    else:
        factor = rng.uniform(0.5, 0.9) if u < 0.3 else rng.uniform(0.95, 1.3)
        scale = (hi - lo) / 255.0 * factor
    zp = int(np.clip(round(-128 - lo / scale), -128, 127))
    return scale, zp


def calibrate16(y, rng, tight_scale=None):
    """Symmetric int16 output scale (zero point 0, as in 16x8 models) from a float output's
    range, widened or narrowed at random; sometimes the 'tight' scale (multiplier > 1)."""
    m = max(abs(float(np.min(y))), abs(float(np.max(y))))
    if m < 1e-6:
        m = 1e-3
    u = rng.random()
    if tight_scale is not None and u < 0.15:
        scale = tight_scale / rng.uniform(1.05, 4.0)
    else:
        factor = rng.uniform(0.5, 0.9) if u < 0.3 else rng.uniform(0.95, 1.3)
        scale = m / 32767.0 * factor
    return scale, 0


# --------------------------------------------------------------------------------------------
# Random parameter helpers


def act(rng, allow=(NONE, RELU, RELU6)):
    return int(rng.choice(allow))


def zero_point(rng):
    u = rng.random()
    if u < 0.2:
        return -128
    if u < 0.35:
        return 127
    if u < 0.5:
        return 0
    return int(rng.integers(-128, 128))


def in_quant(rng, lo=-3.0, hi=0.0):
    return ([float(10 ** rng.uniform(lo, hi))], [zero_point(rng)], 0)


def in_quant16(rng, lo=-5.0, hi=-2.0):
    """int16 activations are symmetric (zero point 0)."""
    return ([float(10 ** rng.uniform(lo, hi))], [0], 0)


def act_quant(rng, dt):
    return in_quant(rng) if dt == "int8" else (in_quant16(rng) if dt == "int16" else None)


def q1(scale, zp):
    return ([float(scale)], [int(zp)], 0)


def esize(dt):
    return np.dtype(NP[dt]).itemsize


def rand_shape(rng, rank, max_dim, max_elems):
    for _ in range(100):
        s = [int(rng.integers(1, max_dim + 1)) for _ in range(rank)]
        if math.prod(s) <= max_elems:
            return s
    return [1] * rank


def quantize_weights(w, axis, rng, per_channel=True):
    """Symmetric int8 weights; returns (q, scales)."""
    red = tuple(i for i in range(w.ndim) if i != axis)
    if per_channel:
        m = np.max(np.abs(w), axis=red)
    else:
        m = np.array([np.max(np.abs(w))])
    m = np.where(m > 0, m, 1.0)
    scales = (m / 127.0).astype(np.float32)
    shape = [1] * w.ndim
    if per_channel:
        shape[axis] = -1
    q = np.clip(np.round(w / scales.reshape(shape)), -127, 127).astype(np.int8)
    return q, [float(s) for s in scales]


def channel_weights(rng, shape, axis):
    """Random weights scaled per output channel by 10**U(-3, 1)."""
    w = rng.standard_normal(shape)
    cs = 10 ** rng.uniform(-3, 1, size=shape[axis])
    bshape = [1] * len(shape)
    bshape[axis] = -1
    return (w * cs.reshape(bshape)).astype(np.float32)


def add_weights_bias(g, rng, dt, x_quant, w, axis, n_out, acc_len, bias_p=0.9, per_channel=True,
                     bias_opt=True, bias16_p=(0.8, 0.1, 0.1)):
    """Adds weight (+ optional bias) constants for conv-like ops."""
    if dt == "int16":
        _weights_bias16(g, rng, x_quant, w, axis, n_out, acc_len, per_channel, bias16_p)
        return
    if dt == "int8":
        wq, ws = quantize_weights(w, axis, rng, per_channel)
        g.const(wq, "int8", quant=(ws, [0] * len(ws), axis if per_channel else 0), name="w", role="weight")
        s_in = x_quant[0][0]
        g.tight_scale = s_in * max(ws)
        if rng.random() < bias_p or not bias_opt:
            lim = int(min(2**31 - 1, 127 * 128 * math.sqrt(max(acc_len, 1))))
            bq = rng.integers(-lim, lim + 1, size=n_out).astype(np.int32)
            bs = [s_in * w_s for w_s in ws]  # one scale per channel, or one per tensor
            g.const(bq, "int32", quant=(bs, [0] * len(bs), 0), name="b", role="bias")
        else:
            g.none_input()
    else:
        g.const(w, "float32", name="w", role="weight")
        if rng.random() < bias_p or not bias_opt:
            red = tuple(i for i in range(w.ndim) if i != axis)
            mag = np.max(np.abs(w), axis=red) * math.sqrt(max(acc_len, 1))
            g.const((rng.uniform(-1, 1, size=n_out) * mag).astype(np.float32), "float32", name="b", role="bias")
        else:
            g.none_input()


def _weights_bias16(g, rng, x_quant, w, axis, n_out, acc_len, per_channel, bias16_p):
    """16x8 weights (symmetric int8) and a bias that is int64 (the converter's), int32 or
    absent, drawn with probabilities bias16_p."""
    wq, ws = quantize_weights(w, axis, rng, per_channel)
    g.const(wq, "int8", quant=(ws, [0] * len(ws), axis if per_channel else 0), name="w", role="weight")
    s_in = x_quant[0][0]
    g.tight_scale = s_in * max(ws)
    kind = ["int64", "int32", "none"][int(rng.choice(3, p=bias16_p))]
    if kind == "none":
        g.none_input()
        return
    lim = int(32767 * 128 * math.sqrt(max(acc_len, 1)))
    if kind == "int32":
        lim = min(lim, 2**31 - 1)
    bq = rng.integers(-lim, lim + 1, size=n_out).astype(NP[kind])
    bs = [s_in * w_s for w_s in ws]
    g.const(bq, kind, quant=(bs, [0] * len(bs), 0), name="b", role="bias")


def conv_out(n, k, s, d, pad):
    ek = (k - 1) * d + 1
    if pad == SAME:
        return -(-n // s)
    if n < ek:
        raise Reject("kernel larger than input")
    return (n - ek) // s + 1


def budget_check(dt, *counts, limit):
    if sum(counts) * esize(dt) > limit:
        raise Reject("too big")


# --------------------------------------------------------------------------------------------
# Operator generators: gen(rng, dt) -> Graph (int8 outputs with quant None are calibrated)

IO_BIG = 800  # bytes of input + output for conv-like ops and pools
W_BIG = 640  # bytes of weights
IO_SMALL = 384  # elementwise ops


def gen_conv_2d(rng, dt):
    B = int(rng.choice([1, 1, 1, 2, 3]))
    H, W = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    cin, cout = int(rng.integers(1, 7)), int(rng.integers(1, 9))
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.choice([1, 1, 2, 3])), int(rng.choice([1, 1, 2, 3]))
    dh = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    dw = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    pad = int(rng.choice([SAME, VALID]))
    oh, ow = conv_out(H, kh, sh, dh, pad), conv_out(W, kw, sw, dw, pad)
    budget_check(dt, B * H * W * cin, B * oh * ow * cout, limit=IO_BIG)
    budget_check(dt, cout * kh * kw * cin, limit=W_BIG)
    g = Graph("CONV_2D", *opts("Conv2DOptions", padding=pad, strideW=sw, strideH=sh,
                                fusedActivationFunction=act(rng), dilationWFactor=dw,
                                dilationHFactor=dh))
    xq = act_quant(rng, dt)
    g.input([B, H, W, cin], dt, xq)
    w = channel_weights(rng, (cout, kh, kw, cin), 0)
    # Bias always present: TFLM runs CONV_2D without one, but TensorFlow Lite refuses it.
    add_weights_bias(g, rng, dt, xq, w, 0, cout, kh * kw * cin, bias_opt=False)
    g.output([B, oh, ow, cout], dt)
    return g


def gen_depthwise_conv_2d(rng, dt):
    B = int(rng.choice([1, 1, 1, 2, 3]))
    H, W = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    cin, mult = int(rng.integers(1, 7)), int(rng.choice([1, 1, 2, 3]))
    cout = cin * mult
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.choice([1, 1, 2, 3])), int(rng.choice([1, 1, 2, 3]))
    dh = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    dw = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    pad = int(rng.choice([SAME, VALID]))
    oh, ow = conv_out(H, kh, sh, dh, pad), conv_out(W, kw, sw, dw, pad)
    budget_check(dt, B * H * W * cin, B * oh * ow * cout, limit=IO_BIG)
    g = Graph("DEPTHWISE_CONV_2D", *opts(
        "DepthwiseConv2DOptions", padding=pad, strideW=sw, strideH=sh, depthMultiplier=mult,
        fusedActivationFunction=act(rng), dilationWFactor=dw, dilationHFactor=dh))
    xq = act_quant(rng, dt)
    g.input([B, H, W, cin], dt, xq)
    w = channel_weights(rng, (1, kh, kw, cout), 3)
    # TFLM's DEPTHWISE_CONV_2D needs a bias (it crashes without one): always present; 16x8:
    # always int64 (TFLM also crashes on an int32 bias there).
    add_weights_bias(g, rng, dt, xq, w, 3, cout, kh * kw, bias_opt=False, bias16_p=(1.0, 0.0, 0.0))
    g.output([B, oh, ow, cout], dt)
    return g


def gen_fully_connected(rng, dt):
    n_in, n_out = int(rng.integers(1, 33)), int(rng.integers(1, 17))
    keep = False
    if rng.random() < 0.25:  # higher-rank input, flattened to [-1, n_in]
        lead = [int(rng.integers(1, 3)), int(rng.integers(1, 4))]
        in_shape = lead + [n_in]
        keep = bool(rng.random() < 0.5)
        out_shape = (lead + [n_out]) if keep else [math.prod(lead), n_out]
    else:
        B = int(rng.choice([1, 1, 2, 3, 4]))
        in_shape, out_shape = [B, n_in], [B, n_out]
    budget_check(dt, math.prod(in_shape), math.prod(out_shape), limit=IO_BIG)
    budget_check(dt, n_in * n_out, limit=W_BIG)
    g = Graph("FULLY_CONNECTED", *opts("FullyConnectedOptions", fusedActivationFunction=act(rng),
                                        keepNumDims=keep))
    xq = act_quant(rng, dt)
    g.input(in_shape, dt, xq)
    w = channel_weights(rng, (n_out, n_in), 0)
    per_channel = bool(rng.random() < 0.7) if dt != "int16" else bool(rng.random() < 0.5)
    if dt in QUANTIZED and not per_channel:
        w = (rng.standard_normal((n_out, n_in)) * 10 ** rng.uniform(-3, 1)).astype(np.float32)
    add_weights_bias(g, rng, dt, xq, w, 0, n_out, n_in, bias_p=0.85, per_channel=per_channel,
                     bias16_p=(0.5, 0.25, 0.25))
    g.output(out_shape, dt)
    return g


def _pool(op, rng, dt):
    B = int(rng.choice([1, 1, 1, 2, 3]))
    H, W, C = int(rng.integers(1, 10)), int(rng.integers(1, 10)), int(rng.integers(1, 7))
    fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.choice([1, 1, 2, 3])), int(rng.choice([1, 1, 2, 3]))
    pad = int(rng.choice([SAME, VALID]))
    oh, ow = conv_out(H, fh, sh, 1, pad), conv_out(W, fw, sw, 1, pad)
    budget_check(dt, B * H * W * C, B * oh * ow * C, limit=IO_BIG)
    g = Graph(op, *opts("Pool2DOptions", padding=pad, strideW=sw, strideH=sh, filterWidth=fw,
                         filterHeight=fh, fusedActivationFunction=act(rng)))
    q = in_quant(rng) if dt == "int8" else None
    g.input([B, H, W, C], dt, q)
    g.output([B, oh, ow, C], dt, q)
    return g


def gen_average_pool_2d(rng, dt):
    return _pool("AVERAGE_POOL_2D", rng, dt)


def gen_max_pool_2d(rng, dt):
    return _pool("MAX_POOL_2D", rng, dt)


def broadcast_shapes(rng, dt, max_rank=4, limit=IO_SMALL):
    rank = int(rng.integers(1, max_rank + 1))
    out = rand_shape(rng, rank, 6, max(1, limit // (3 * esize(dt))))
    a, b = list(out), list(out)
    if rng.random() < 0.5:
        victim = a if rng.random() < 0.5 else b
        for i in range(rank):
            if rng.random() < 0.5:
                victim[i] = 1
        if rng.random() < 0.3:
            del victim[: int(rng.integers(0, rank))]
        if not victim:
            victim.append(1)
    full = list(np.broadcast_shapes(tuple(a), tuple(b)))
    return a, b, full


def _binary(op, options, rng, dt, same_quant=False):
    a, b, out = broadcast_shapes(rng, dt)
    g = Graph(op, *options)
    if dt == "int8":
        if same_quant:
            q = in_quant(rng)
            g.input(a, dt, q)
            g.input(b, dt, q)
            g.output(out, dt, q)
            return g
        g.input(a, dt, in_quant(rng))
        g.input(b, dt, in_quant(rng))
    elif dt == "int16":
        g.input(a, dt, in_quant16(rng))
        g.input(b, dt, in_quant16(rng))
    else:
        g.input(a, dt)
        g.input(b, dt)
    g.output(out, dt)
    return g


def gen_add(rng, dt):
    return _binary("ADD", opts("AddOptions", fusedActivationFunction=act(rng)), rng, dt)


def gen_sub(rng, dt):
    return _binary("SUB", opts("SubOptions", fusedActivationFunction=act(rng)), rng, dt)


def gen_mul(rng, dt):
    return _binary("MUL", opts("MulOptions", fusedActivationFunction=act(rng)), rng, dt)


def gen_maximum(rng, dt):
    return _binary("MAXIMUM", opts("MaximumMinimumOptions"), rng, dt, same_quant=True)


def gen_minimum(rng, dt):
    return _binary("MINIMUM", opts("MaximumMinimumOptions"), rng, dt, same_quant=True)


def gen_softmax(rng, dt):
    rank = int(rng.integers(1, 5))
    shape = rand_shape(rng, rank, 5, 48)
    shape[-1] = int(rng.integers(1, 21))
    budget_check("int16" if "int16" in dt else dt, 2 * math.prod(shape), limit=IO_SMALL * 2)
    beta = 1.0 if rng.random() < 0.5 else float(rng.uniform(0.2, 3.0))
    g = Graph("SOFTMAX", *opts("SoftmaxOptions", beta=beta))
    if dt == "int8":
        g.input(shape, dt, in_quant(rng, -2.5, 0.0))
        g.output(shape, dt, q1(1.0 / 256, -128))
    elif dt == "int8_int16":  # int8 -> int16: output zero point -32768, scale 1/65536
        g.input(shape, "int8", in_quant(rng, -2.5, 0.0))
        g.output(shape, "int16", q1(1.0 / 65536, -32768))
    elif dt == "int16":  # int16 -> int16: zero points 0, output scale 1/32768
        g.input(shape, dt, in_quant16(rng, -4.5, -2.5))
        g.output(shape, dt, q1(1.0 / 32768, 0))
    else:
        g.float_inputs = [float(10 ** rng.uniform(-1, 1.3))]
        g.input(shape, dt)
        g.output(shape, dt)
    return g


def unary_shape(rng, dt, limit=IO_SMALL):
    rank = int(rng.integers(1, 5))
    return rand_shape(rng, rank, 6, max(1, limit // (2 * esize(dt))))


def _unary(op, options, rng, dt, out_quant=None, in_lo=-2.5, in_hi=-0.5, same_quant=False):
    shape = unary_shape(rng, dt)
    g = Graph(op, *options) if options else Graph(op)
    if dt == "int8":
        q = in_quant(rng, in_lo, in_hi)
        g.input(shape, dt, q)
        g.output(shape, dt, q if same_quant else out_quant)
    elif dt == "int16":
        q = in_quant16(rng)
        g.input(shape, dt, q)
        g.output(shape, dt, q if same_quant else out_quant)
    else:
        g.float_inputs = [float(10 ** rng.uniform(-0.5, 1.2))]
        g.input(shape, dt)
        g.output(shape, dt)
    return g


def gen_logistic(rng, dt):
    return _unary("LOGISTIC", None, rng, dt, out_quant=q1(1.0 / 256, -128))


def gen_tanh(rng, dt):
    return _unary("TANH", None, rng, dt, out_quant=q1(1.0 / 128, 0))


def gen_relu(rng, dt):
    return _unary("RELU", None, rng, dt, same_quant=bool(rng.random() < 0.2))


def gen_neg(rng, dt):
    return _unary("NEG", None, rng, dt)


def gen_relu6(rng, dt):
    # TFLM's int8 RELU6 clamps without requantizing (it ignores the output quantization), so
    # it only agrees with TensorFlow Lite when input and output quantization are equal.
    return _unary("RELU6", None, rng, dt, same_quant=True)


def gen_leaky_relu(rng, dt):
    alpha = float(rng.choice([0.01, 0.1, 0.2, 0.3])) if rng.random() < 0.5 else float(rng.uniform(0.0, 1.5))
    return _unary("LEAKY_RELU", opts("LeakyReluOptions", alpha=alpha), rng, dt)


def gen_hard_swish(rng, dt):
    return _unary("HARD_SWISH", opts("HardSwishOptions"), rng, dt)


def gen_mean(rng, dt):
    rank = int(rng.integers(1, 5))
    shape = rand_shape(rng, rank, 6, max(1, IO_SMALL // (2 * esize(dt))))
    k = int(rng.integers(1, rank + 1))
    axes = sorted(int(a) for a in rng.choice(rank, size=k, replace=False))
    keep = bool(rng.random() < 0.5)
    out = [1 if i in axes else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in axes]
    axes_stored = [a - rank if rng.random() < 0.3 else a for a in axes]
    g = Graph("MEAN", *opts("ReducerOptions", keepDims=keep))
    xq = act_quant(rng, dt)
    g.input(shape, dt, xq)
    g.const(np.array(axes_stored, np.int32), "int32", name="axis")
    # int16: some outputs keep the input quantization (TFLM's plain integer-mean path)
    g.output(out, dt, xq if dt == "int16" and rng.random() < 0.25 else None)
    return g


def gen_concatenation(rng, dt):
    n = int(rng.integers(2, 5))
    rank = int(rng.integers(1, 5))
    base = rand_shape(rng, rank, 4, max(1, IO_SMALL // (2 * esize(dt) * n)))
    axis = int(rng.integers(-rank, rank))
    shapes = []
    for _ in range(n):
        s = list(base)
        s[axis] = int(rng.integers(1, 5))
        shapes.append(s)
    out = list(base)
    out[axis] = sum(s[axis] for s in shapes)
    budget_check(dt, 2 * math.prod(out), limit=IO_SMALL * 2)
    g = Graph("CONCATENATION", *opts("ConcatenationOptions", axis=axis, fusedActivationFunction=NONE))
    q = in_quant(rng) if dt == "int8" else None
    for s in shapes:
        g.input(s, dt, q)
    g.output(out, dt, q)
    return g


def gen_pad(rng, dt):
    rank = int(rng.integers(1, 5))
    shape = rand_shape(rng, rank, 5, 48)
    pads = [[int(rng.integers(0, 4)) if rng.random() < 0.6 else 0 for _ in range(2)] for _ in range(rank)]
    out = [d + p[0] + p[1] for d, p in zip(shape, pads)]
    budget_check(dt, math.prod(shape), math.prod(out), limit=IO_SMALL * 2)
    g = Graph("PAD", *opts("PadOptions"))
    q = in_quant(rng) if dt == "int8" else None
    g.input(shape, dt, q)
    g.const(np.array(pads, np.int32), "int32", name="paddings")
    g.output(out, dt, q)
    return g


def factorize(rng, n, rank):
    dims = [1] * rank
    m = n
    p = 2
    primes = []
    while m > 1:
        while m % p == 0:
            primes.append(p)
            m //= p
        p += 1
    for f in primes:
        dims[int(rng.integers(0, rank))] *= f
    return dims


def gen_reshape(rng, dt):
    shape = unary_shape(rng, dt)
    n = math.prod(shape)
    out = factorize(rng, n, int(rng.integers(1, 5)))
    stored = list(out)
    if rng.random() < 0.2:
        stored[int(rng.integers(0, len(out)))] = -1
    g = Graph("RESHAPE", *opts("ReshapeOptions", newShape=list(stored)))
    q = in_quant(rng) if dt == "int8" else None
    g.input(shape, dt, q)
    g.const(np.array(stored, np.int32), "int32", name="shape")
    g.output(out, dt, q)
    return g


def gen_quantize(rng, dt):
    shape = unary_shape(rng, dt)
    g = Graph("QUANTIZE", *opts("QuantizeOptions"))
    if dt == "float32":  # float32 -> int8
        u = rng.random()
        mag = float(10 ** rng.uniform(-2, 2))
        lo, hi = (0.0, mag) if u < 0.25 else ((-mag, 0.0) if u < 0.45 else (-mag * rng.uniform(0.1, 1), mag))
        g.float_inputs = [(lo * 1.1, hi * 1.1)]  # some values fall outside the range
        g.input(shape, "float32")
        scale, zp = calibrate(np.array([lo, hi]), rng)
        g.output(shape, "int8", q1(scale, zp))
    else:  # int8 -> int8 requantization
        q = in_quant(rng)
        g.input(shape, "int8", q)
        f = (np.array([-128, 127]) - q[1][0]) * q[0][0]
        scale, zp = calibrate(f, rng)
        if rng.random() < 0.3:
            scale = q[0][0] * float(10 ** rng.uniform(-1, 1))
        g.output(shape, "int8", q1(scale, zp))
    return g


def gen_quantize16(rng, dt):
    """QUANTIZE between integer types (16x8 models): dt is the input dtype, or
    '<input>_<output>'; 'int16' alone is int16 -> int8."""
    in_dt, out_dt = (dt.split("_") + ["int8"])[:2]
    shape = unary_shape(rng, "int32" if out_dt == "int32" else "int16")
    g = Graph("QUANTIZE", *opts("QuantizeOptions"))
    if in_dt == "int16":
        q = ([float(10 ** rng.uniform(-5, -2))], [0 if rng.random() < 0.75 else int(rng.integers(-1000, 1001))], 0)
        lo, hi = -32768, 32767
    else:
        q = in_quant(rng)
        lo, hi = -128, 127
    g.input(shape, in_dt, q)
    f = (np.array([lo, hi]) - q[1][0]) * q[0][0]
    if out_dt == "int8":
        scale, zp = calibrate(f, rng)
    elif out_dt == "int16":
        scale, zp = calibrate16(f, rng)
        if rng.random() < 0.25:
            zp = int(rng.integers(-1000, 1001))
    else:  # int32: a finer scale (multipliers above and below 1)
        scale = q[0][0] * float(10 ** rng.uniform(-4, 1))
        zp = 0 if rng.random() < 0.7 else int(rng.integers(-100000, 100001))
    if rng.random() < 0.3:
        scale = q[0][0] * float(10 ** rng.uniform(-1, 1)) * (256 if (in_dt, out_dt) == ("int16", "int8") else
                                                             1 / 256 if (in_dt, out_dt) == ("int8", "int16") else 1)
    g.output(shape, out_dt, q1(scale, zp))
    return g


class Prebuilt:
    """A model built elsewhere (stateful ops): bytes plus input/output (shape, dtype)."""

    def __init__(self, model, inputs, outputs):
        self.model, self.ins, self.outs = model, inputs, outputs


def _stateful():
    import gen_stateful_cases as st  # noqa: PLC0415  (same directory)
    return st


def gen_svdf(rng, dt):
    """SVDF int8 from gen_stateful_cases; dt 'int8' (int8 state and time weights) or
    'int8_int16state' (int16 state and time weights). One invoke from the reset state."""
    st = _stateful()
    c = st.gen_svdf_int(rng, "int16" if dt.endswith("int16state") else "int8",
                        saturate=bool(rng.random() < 0.25) and dt == "int8")
    units = c["num_filters"] // c["rank"]
    return Prebuilt(st.svdf_model(c), [([c["batches"], c["input_size"]], "int8")],
                    [([c["batches"], units], "int8")])


def gen_unidirectional_sequence_lstm(rng, dt):
    """int8 LSTM (int16 cell state) from gen_stateful_cases; one invoke from the reset state."""
    st = _stateful()
    c = st.gen_lstm(rng)
    B, T, I, S = c["batches"], c["time_steps"], c["input_size"], c["state_size"]
    tm = c["time_major"]
    return Prebuilt(strip_names(st.lstm_model(c)), [([T, B, I] if tm else [B, T, I], "int8")],
                    [([T, B, S] if tm else [B, T, S], "int8")])


def strip_names(model):
    """The model without tensor names (the LSTM's 24 tensors: keeps the bundle smaller)."""
    m = fb.ModelT.InitFromObj(fb.Model.GetRootAsModel(bytearray(model), 0))
    for t in m.subgraphs[0].tensors:
        t.name = None
    for buf in m.buffers:
        buf.__class__ = AlignedBufferT
        if buf.data is not None:
            buf.data = bytes(bytearray(buf.data))
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 1e-30, 3e38, -3e38, 1.0, -1.0,
                     127.5, -128.5, 32767.9, -32768.9, 2147483520.0, -2147483648.0], np.float32)


def gen_cast(rng, dt):
    """CAST dt = '<input>_<output>' between bool, int8, int16, int32, uint32 and float32."""
    src, dst = dt.split("_")
    shape = unary_shape(rng, "int32")
    g = Graph("CAST", *opts("CastOptions", inDataType=TYPE[src], outDataType=TYPE[dst]))
    g.raw = True  # plain (unquantized) integer tensors
    if src == "float32":
        mag = float(10 ** rng.uniform(0, 10))
        g.float_inputs = [(-mag, mag)]
        g.specials = 0.15  # a share of special values (infinities, NaN, denormals, bounds)
    g.input(shape, src)
    g.output(shape, dst)
    return g


def gen_dequantize(rng, dt):
    shape = unary_shape(rng, "float32")
    g = Graph("DEQUANTIZE", *opts("DequantizeOptions"))
    g.input(shape, "int8", in_quant(rng))
    g.output(shape, "float32")
    return g


def gen_transpose(rng, dt):
    rank = int(rng.integers(2, 6))
    shape = rand_shape(rng, rank, 4, max(1, IO_SMALL // (2 * esize(dt))))
    perm = [int(p) for p in rng.permutation(rank)]
    out = [shape[p] for p in perm]
    g = Graph("TRANSPOSE", *opts("TransposeOptions"))
    q = in_quant(rng) if dt == "int8" else None
    g.input(shape, dt, q)
    g.const(np.array(perm, np.int32), "int32", name="perm")
    g.output(out, dt, q)
    return g


def gen_strided_slice(rng, dt):
    rank = int(rng.integers(1, 5))
    shape = rand_shape(rng, rank, 6, max(1, IO_SMALL // (2 * esize(dt))))
    begin, end, strides = [], [], []
    bm = em = sm = 0
    idx = []
    for i, d in enumerate(shape):
        if rng.random() < 0.15:  # shrink this axis
            b = int(rng.integers(-d, d))
            begin.append(b)
            end.append(b + 1 if b != -1 else 0)
            strides.append(1)
            sm |= 1 << i
            idx.append(b)
            continue
        s = int(rng.choice([1, 1, 1, 2, 3, -1, -2]))
        b = int(rng.integers(-d - 1, d + 2))
        e = int(rng.integers(-d - 1, d + 2))
        begin.append(b)
        end.append(e)
        strides.append(s)
        use_b = rng.random() < 0.2
        use_e = rng.random() < 0.2
        if use_b:
            bm |= 1 << i
        if use_e:
            em |= 1 << i
        idx.append(slice(None if use_b else b, None if use_e else e, s))
    ref = np.arange(math.prod(shape)).reshape(shape)[tuple(idx)]
    if ref.size == 0:
        raise Reject("empty slice")
    g = Graph("STRIDED_SLICE", *opts("StridedSliceOptions", beginMask=bm, endMask=em,
                                      shrinkAxisMask=sm, ellipsisMask=0, newAxisMask=0, offset=False))
    q = in_quant(rng) if dt == "int8" else None
    g.input(shape, dt, q)
    g.const(np.array(begin, np.int32), "int32", name="begin")
    g.const(np.array(end, np.int32), "int32", name="end")
    g.const(np.array(strides, np.int32), "int32", name="strides")
    g.output(list(ref.shape), dt, q)
    g.expect = ("take", ref)  # checked against TFLM's output
    return g


def _resize(op, options_cls, rng, dt):
    B = int(rng.choice([1, 1, 2]))
    H, W, C = int(rng.integers(1, 7)), int(rng.integers(1, 7)), int(rng.integers(1, 4))
    oh, ow = int(rng.integers(1, 13)), int(rng.integers(1, 13))
    budget_check(dt, B * H * W * C, B * oh * ow * C, limit=IO_BIG * 2 // 3)
    mode = int(rng.integers(0, 3))
    g = Graph(op, *opts(options_cls, alignCorners=mode == 1, halfPixelCenters=mode == 2))
    q = in_quant(rng) if dt == "int8" else None
    g.input([B, H, W, C], dt, q)
    g.const(np.array([oh, ow], np.int32), "int32", name="size")
    g.output([B, oh, ow, C], dt, q)
    return g


def gen_resize_nearest_neighbor(rng, dt):
    return _resize("RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighborOptions", rng, dt)


def gen_resize_bilinear(rng, dt):
    return _resize("RESIZE_BILINEAR", "ResizeBilinearOptions", rng, dt)


def gen_transpose_conv(rng, dt):
    B = int(rng.choice([1, 1, 1, 2]))
    H, W = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    cin, cout = int(rng.integers(1, 5)), int(rng.integers(1, 7))
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.choice([1, 2, 2, 3])), int(rng.choice([1, 2, 2, 3]))
    pad = int(rng.choice([SAME, VALID]))
    if pad == SAME:
        oh, ow = H * sh, W * sw
    else:
        oh, ow = (H - 1) * sh + kh, (W - 1) * sw + kw
    budget_check(dt, B * H * W * cin, B * oh * ow * cout, limit=IO_BIG)
    budget_check(dt, cout * kh * kw * cin, limit=W_BIG)
    g = Graph("TRANSPOSE_CONV", *opts("TransposeConvOptions", padding=pad, strideW=sw, strideH=sh,
                                       fusedActivationFunction=act(rng)))
    g.const(np.array([B, oh, ow, cout], np.int32), "int32", name="output_shape")
    w = channel_weights(rng, (cout, kh, kw, cin), 0)
    # TFLite order: output_shape, weights, input, [bias]
    xq = in_quant(rng) if dt == "int8" else None
    if dt == "int8":
        wq, ws = quantize_weights(w, 0, rng)
        g.const(wq, "int8", quant=(ws, [0] * cout, 0), name="w", role="weight")
        g.tight_scale = xq[0][0] * max(ws)
    else:
        g.const(w, "float32", name="w", role="weight")
    g.input([B, H, W, cin], dt, xq)
    if rng.random() < 0.8:
        acc = kh * kw * cin
        if dt == "int8":
            lim = int(127 * 128 * math.sqrt(acc))
            bq = rng.integers(-lim, lim + 1, size=cout).astype(np.int32)
            g.const(bq, "int32", quant=([xq[0][0] * s for s in ws], [0] * cout, 0), name="b", role="bias")
        else:
            mag = np.max(np.abs(w), axis=(1, 2, 3)) * math.sqrt(acc)
            g.const((rng.uniform(-1, 1, size=cout) * mag).astype(np.float32), "float32", name="b", role="bias")
    g.output([B, oh, ow, cout], dt)
    return g


# (file prefix, builtin op, generator, dtypes). The index in this list fixes each bundle's seed:
# append new entries at the end. Newer operators live in family modules, tools/kcases_*.py
# (see family_ops), seeded by bundle name.
OPS = [
    ("conv_2d", "CONV_2D", gen_conv_2d, ("int8", "float32")),
    ("depthwise_conv_2d", "DEPTHWISE_CONV_2D", gen_depthwise_conv_2d, ("int8", "float32")),
    ("fully_connected", "FULLY_CONNECTED", gen_fully_connected, ("int8", "float32")),
    ("average_pool_2d", "AVERAGE_POOL_2D", gen_average_pool_2d, ("int8", "float32")),
    ("max_pool_2d", "MAX_POOL_2D", gen_max_pool_2d, ("int8", "float32")),
    ("add", "ADD", gen_add, ("int8", "float32")),
    ("softmax", "SOFTMAX", gen_softmax, ("int8", "float32")),
    ("mul", "MUL", gen_mul, ("int8", "float32")),
    ("sub", "SUB", gen_sub, ("int8", "float32")),
    ("mean", "MEAN", gen_mean, ("int8", "float32")),
    ("concatenation", "CONCATENATION", gen_concatenation, ("int8", "float32")),
    ("logistic", "LOGISTIC", gen_logistic, ("int8", "float32")),
    ("tanh", "TANH", gen_tanh, ("int8", "float32")),
    ("relu", "RELU", gen_relu, ("int8", "float32")),
    ("relu6", "RELU6", gen_relu6, ("int8", "float32")),
    ("leaky_relu", "LEAKY_RELU", gen_leaky_relu, ("int8", "float32")),
    ("hard_swish", "HARD_SWISH", gen_hard_swish, ("int8", "float32")),
    ("pad", "PAD", gen_pad, ("int8", "float32")),
    ("reshape", "RESHAPE", gen_reshape, ("int8", "float32")),
    ("quantize", "QUANTIZE", gen_quantize, ("float32", "int8")),
    ("dequantize", "DEQUANTIZE", gen_dequantize, ("int8",)),
    ("transpose", "TRANSPOSE", gen_transpose, ("int8", "float32")),
    ("strided_slice", "STRIDED_SLICE", gen_strided_slice, ("int8", "float32")),
    ("resize_nearest_neighbor", "RESIZE_NEAREST_NEIGHBOR", gen_resize_nearest_neighbor, ("int8", "float32")),
    ("resize_bilinear", "RESIZE_BILINEAR", gen_resize_bilinear, ("int8", "float32")),
    ("maximum", "MAXIMUM", gen_maximum, ("int8", "float32")),
    ("minimum", "MINIMUM", gen_minimum, ("int8", "float32")),
    ("transpose_conv", "TRANSPOSE_CONV", gen_transpose_conv, ("int8", "float32")),
    # 16x8 (int16 activations, int8 weights) and other integer pairs; bundles named
    # <op>_<input dtype>[_<output dtype>].
    ("conv_2d", "CONV_2D", gen_conv_2d, ("int16",)),
    ("depthwise_conv_2d", "DEPTHWISE_CONV_2D", gen_depthwise_conv_2d, ("int16",)),
    ("fully_connected", "FULLY_CONNECTED", gen_fully_connected, ("int16",)),
    ("add", "ADD", gen_add, ("int16",)),
    ("softmax", "SOFTMAX", gen_softmax, ("int16", "int8_int16")),
    ("quantize", "QUANTIZE", gen_quantize16, ("int16", "int8_int16", "int16_int16", "int16_int32",
                                              "int8_int32")),
    # Stateful: one invoke from the reset state per case.
    ("svdf", "SVDF", gen_svdf, ("int8", "int8_int16state")),
    ("unidirectional_sequence_lstm", "UNIDIRECTIONAL_SEQUENCE_LSTM", gen_unidirectional_sequence_lstm,
     ("int8",)),
    ("mean", "MEAN", gen_mean, ("int16",)),
    ("leaky_relu", "LEAKY_RELU", gen_leaky_relu, ("int16",)),
    ("cast", "CAST", gen_cast, ("int8_int16", "int8_int32", "int8_float32", "int16_int8", "int16_int32",
                                "int16_float32", "int32_int8", "int32_int16", "int32_float32",
                                "float32_int8", "float32_int16", "float32_int32")),
    ("neg", "NEG", gen_neg, ("float32",)),
]


# --------------------------------------------------------------------------------------------
# Case generation


def draw_inputs(g, rng):
    if getattr(g, "draw", None) is not None:  # a generator's own inputs (e.g. valid shapes)
        return g.draw(rng)
    xs = []
    fixed = getattr(g, "fixed_inputs", None) or {}  # input position -> array (not drawn)
    for k, i in enumerate(g.inputs):
        t = g.tensors[i]
        if k in fixed:
            xs.append(np.asarray(fixed[k], dtype=NP[t.dtype]).reshape(t.shape))
            continue
        if t.dtype == "float32":
            r = g.float_inputs[k] if g.float_inputs and k < len(g.float_inputs) else 1.0
            lo, hi = r if isinstance(r, tuple) else (-r, r)
            x = rng.uniform(lo, hi, size=t.shape).astype(np.float32)
            transform = getattr(g, "transform", None)  # e.g. snap to halves (ROUND)
            if transform is not None:
                x = transform(x, rng).astype(np.float32)
            share = getattr(g, "specials", 0)
            if share:
                mask = rng.uniform(size=t.shape) < share
                x[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
            xs.append(x)
        elif k in getattr(g, "int_ranges", {}):
            lo, hi = g.int_ranges[k]  # integers in [lo, hi] (valid indices, ties)
            xs.append(rng.integers(lo, hi + 1, size=t.shape).astype(NP[t.dtype]))
        else:
            x = tc.random_input(rng, t.shape, t.dtype)
            transform = getattr(g, "transform", None)  # e.g. keep RSQRT's inputs >= zero point
            xs.append(x if transform is None else transform(x, rng).astype(x.dtype))
    return xs


def make_prebuilt(op, g, rng):
    model = g.model
    if tc.op_names(tc.load_model(model)) != [op]:
        raise SystemExit(f"{op}: model holds {tc.op_names(tc.load_model(model))}")
    xs = [tc.random_input(rng, s, d) for s, d in g.ins]
    ys = run_tflm(model, xs, len(g.outs))
    for y, (s, d) in zip(ys, g.outs):
        if list(y.shape) != list(s) or y.dtype != np.dtype(NP[d]):
            raise RuntimeError(f"output {y.shape} {y.dtype}, declared {s} {d}")
    return model, xs, ys


def make_case(op, gen, rng, dt):
    g = gen(rng, dt)
    if isinstance(g, Prebuilt):
        return make_prebuilt(op, g, rng)
    xs = draw_inputs(g, rng)
    outs = [g.tensors[i] for i in g.outputs]
    if any(t.dtype in QUANTIZED and t.quant is None for t in outs) and not getattr(g, "raw", False):
        f = float_twin(g)
        fx = [dequant(x, g.tensors[i].quant) if g.tensors[i].dtype in QUANTIZED else x
              for x, i in zip(xs, g.inputs)]
        ys = run_tflm(serialize(f), fx, len(g.outputs))
        for t, y in zip(outs, ys):
            if t.quant is None:
                if t.dtype == "int16":
                    t.quant = q1(*calibrate16(y, rng, g.tight_scale))
                    # TFLM's 16x8 kernels do not support multipliers >= 64 (degenerate ranges).
                    if g.tight_scale is not None and g.tight_scale / t.quant[0][0] >= 64:
                        raise Reject("degenerate int16 output range")
                else:
                    t.quant = q1(*calibrate(y, rng, g.tight_scale))
    model = serialize(g)
    m = tc.load_model(model)
    if tc.op_names(m) not in ([op], [f"CUSTOM:{op}"]):
        raise SystemExit(f"{op}: model holds {tc.op_names(m)}")
    invokes = getattr(g, "invokes", 1)
    if invokes > 1:
        return make_sequence(g, model, [xs] + [draw_inputs(g, rng) for _ in range(invokes - 1)])
    ys = run_tflm(model, xs, len(g.outputs))
    for y, t in zip(ys, outs):
        if list(y.shape) != t.shape or y.dtype != np.dtype(NP[t.dtype]):
            raise RuntimeError(f"output {y.shape} {y.dtype}, declared {t.shape} {t.dtype}")
    expect = getattr(g, "expect", None)
    if expect is not None and expect[0] == "take":
        idx = expect[1]
        want = xs[0].reshape(-1)[idx.reshape(-1)].reshape(idx.shape)
        if not np.array_equal(want, ys[0]):
            raise RuntimeError("strided slice differs from numpy slicing")
    return model, xs, ys


class Sequence:
    """A case of several invocations after one reset(), the operator's state carried over:
    `steps` holds (inputs, outputs) per invoke. Written as a KCASE2 bundle."""

    def __init__(self, model, steps):
        self.model = model
        self.steps = steps


def make_sequence(g, model, xs_seq):
    """Runs `xs_seq` in TFLM as one sequence. Where TFLM leaves an output unwritten (a
    streaming operator that produces no frame in this invoke: the bytes are whatever its
    arena held, garbage or an earlier output), the graph's `unwritten(k, ys)` hook gives the outputs with those
    bytes as zeros, which is what Kiln writes there."""
    outs = [g.tensors[i] for i in g.outputs]
    ys_seq = run_tflm(model, xs_seq, len(g.outputs), seq=True)
    steps = []
    for k, (xs, ys) in enumerate(zip(xs_seq, ys_seq)):
        for y, t in zip(ys, outs):
            if list(y.shape) != t.shape or y.dtype != np.dtype(NP[t.dtype]):
                raise RuntimeError(f"output {y.shape} {y.dtype}, declared {t.shape} {t.dtype}")
        hook = getattr(g, "unwritten", None)
        steps.append((xs, hook(k, ys) if hook is not None else ys))
    return Sequence(model, steps)


def le_bytes(a):
    a = np.ascontiguousarray(a)
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def _tensors(arrays):
    parts = [struct.pack("<I", len(arrays))]
    for a in arrays:
        b = le_bytes(a)
        parts += [struct.pack("<I", len(b)), b]
    return parts


def write_bundle(path, cases):
    """KCASE1, or KCASE2 (invocation counts) if any case is a Sequence."""
    seq = any(isinstance(c, Sequence) for c in cases)
    parts = [MAGIC_SEQ if seq else MAGIC, struct.pack("<I", len(cases))]
    for c in cases:
        if not seq:
            model, xs, ys = c
            parts += [struct.pack("<I", len(model)), model] + _tensors(xs) + _tensors(ys)
            continue
        model, steps = (c.model, c.steps) if isinstance(c, Sequence) else (c[0], [c[1:]])
        parts += [struct.pack("<I", len(model)), model, struct.pack("<I", len(steps))]
        for xs, ys in steps:
            parts += _tensors(xs) + _tensors(ys)
    data = b"".join(parts)
    path.write_bytes(data)
    return len(data)


def read_bundle(path):
    """Yields (model bytes, [input bytes], [output bytes]) per case (of a KCASE2 case, its
    first invocation)."""
    data = path.read_bytes()
    if data[:8] not in (MAGIC, MAGIC_SEQ):
        raise ValueError(f"{path}: bad magic")
    seq = data[:8] == MAGIC_SEQ
    (n,), pos = struct.unpack_from("<I", data, 8), 12

    def take():
        nonlocal pos
        (ln,) = struct.unpack_from("<I", data, pos)
        b = data[pos + 4:pos + 4 + ln]
        pos += 4 + ln
        return b

    def count():
        nonlocal pos
        (c,) = struct.unpack_from("<I", data, pos)
        pos += 4
        return c

    for _ in range(n):
        model = take()
        steps = []
        for _ in range(count() if seq else 1):
            xs = [take() for _ in range(count())]
            ys = [take() for _ in range(count())]
            steps.append((xs, ys))
        yield model, steps[0][0], steps[0][1]
    if pos != len(data):
        raise ValueError(f"{path}: {len(data) - pos} trailing bytes")


def family_ops():
    """The entries of the family modules `tools/kcases_<family>.py`, in file-name order. Each
    module has `register(g)`, which receives this module (its graph builder and helpers) and
    returns entries as in OPS, optionally with a fifth item: the bundle's number of cases when
    it is not `-n`'s (large cases, e.g. add_large). Their seeds come from the bundle's name,
    not a position, so families can be added independently."""
    entries = []
    for path in sorted(Path(__file__).parent.glob("kcases_*.py")):
        module = importlib.import_module(path.stem)
        entries += module.register(sys.modules[__name__])
    return entries


def bundle_seed(index, prefix, dt, dtypes):
    """OPS entries: BASE_SEED + 100 * index + the dtype's position; family entries (index None):
    from the CRC-32 of the bundle's name."""
    if index is None:
        return BASE_SEED + 100_000 + zlib.crc32(f"{prefix}_{dt}".encode()) % 1_000_000
    return BASE_SEED + 100 * index + (0 if dt == "int8" else 1 if dt == "float32" else 2 + dtypes.index(dt))


def gen_bundle(index, prefix, op, gen, dt, n, dtypes=()):
    seed = bundle_seed(index, prefix, dt, dtypes)
    rng = np.random.default_rng(seed)
    cases, rejects, errors = [], 0, {}
    t0 = time.time()
    while len(cases) < n:
        try:
            cases.append(make_case(op, gen, rng, dt))
        except Reject:
            rejects += 1
        except RuntimeError as e:
            msg = " ".join(str(e).split())[:160]
            errors[msg] = errors.get(msg, 0) + 1
        if sum(errors.values()) > n:
            raise SystemExit(f"{prefix}_{dt}: TFLM refused too many models: {errors}")
    path = OUT / f"{prefix}_{dt}.kcase"
    size = write_bundle(path, cases)
    m0 = tc.load_model(cases[0].model if isinstance(cases[0], Sequence) else cases[0][0])
    in_dt = tc.TYPE_NAMES[m0.subgraphs[0].tensors[m0.subgraphs[0].inputs[0]].type]
    out_dt = tc.TYPE_NAMES[m0.subgraphs[0].tensors[m0.subgraphs[0].outputs[0]].type]
    print(f"{path.name:36s} {len(cases):4d} cases {size:7d} B  {time.time() - t0:5.1f} s"
          f"  (redrawn: {rejects} too big/invalid, {sum(errors.values())} refused by TFLM)", flush=True)
    for msg, c in sorted(errors.items(), key=lambda kv: -kv[1])[:5]:
        print(f"    TFLM refused {c}x: {msg}", flush=True)
    return {
        "file": path.name,
        "op": op,
        "dtype": dt,
        "input_dtype": in_dt,
        "output_dtype": out_dt,
        "cases": len(cases),
        "seed": seed,
        "bytes": size,
        "tflm_refused": sum(errors.values()),
    }


# --------------------------------------------------------------------------------------------
# Cross-check against TensorFlow Lite (optional)


def verify(prefixes):
    """Runs every stored case in TensorFlow Lite's reference kernels and reports the largest
    difference from the stored TFLM output (a check that the models are well-formed)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf  # noqa: PLC0415

    ref = tf.lite.experimental.OpResolverType.BUILTIN_REF
    for path in sorted(OUT.glob("*.kcase")):
        if prefixes and not any(path.name.startswith(p + "_") for p in prefixes):
            continue
        worst, n, fails, unit = 0.0, 0, 0, "LSB"
        for model, xs, ys in read_bundle(path):
            n += 1
            try:
                it = tf.lite.Interpreter(model_content=model, experimental_op_resolver_type=ref)
                it.allocate_tensors()
                for d, x in zip(it.get_input_details(), xs):
                    it.set_tensor(d["index"], np.frombuffer(x, d["dtype"]).reshape(d["shape"]))
                it.invoke()
                for d, y in zip(it.get_output_details(), ys):
                    got = it.get_tensor(d["index"]).astype(np.float64).reshape(-1)
                    want = np.frombuffer(y, d["dtype"]).astype(np.float64)
                    if d["dtype"] == np.float32:
                        unit = "rel"
                        diff = np.max(np.abs(got - want) / (1 + np.abs(want)), initial=0)
                    else:
                        diff = np.max(np.abs(got - want), initial=0)
                    worst = max(worst, float(diff))
            except Exception as e:  # noqa: BLE001
                fails += 1
                if fails <= 2:
                    print(f"    {path.name} case {n - 1}: TFLite failed: {' '.join(str(e).split())[:200]}")
        print(f"{path.name:36s} {n:4d} cases  max |TFLite - TFLM| = {worst:.3g} {unit}  TFLite failed: {fails}",
              flush=True)


README = """# Kernel golden cases

Generated by `tools/gen_kernel_cases.py`; do not edit by hand, re-run the script
(`.venv/bin/python tools/gen_kernel_cases.py`, about 4-5 min; deterministic).
`models/` is not written here: `tools/extract_kcase_models.py` copies case 0's model of every
bundle there for `tests/e2e_kernel_cases.rs` (re-run it after generating bundles).

Each `<op>_<dtype>.kcase` bundle holds single-operator TFLite models with seeded random
parameters, one seeded random input each, and the outputs of TensorFlow Lite for
Microcontrollers (PyPI `tflite-micro` 0.dev20261023182759, reference kernels, x86-64) for that
input. `manifest.json` lists every bundle: file, op (TFLite builtin name), dtype, input and
output dtype, case count, generator seed, size in bytes. Bundles are named by op and input
dtype, followed by the output dtype when that is ambiguous: `quantize_float32` (float32 ->
int8), `quantize_int8` (int8 -> int8 requantization), `quantize_int16` (int16 -> int8),
`quantize_int8_int16`, `quantize_int16_int16`, `quantize_int16_int32`, `quantize_int8_int32`,
`softmax_int8_int16`, `dequantize_int8` (int8 -> float32), `cast_<in>_<out>`;
`svdf_int8_int16state` is the int8 SVDF with int16 state and time weights. Stateful ops (SVDF,
UNIDIRECTIONAL_SEQUENCE_LSTM): the output is the one of the first invoke after `reset()`.
The newer operators' bundles come from family modules, `tools/kcases_<family>.py`, whose
docstrings say how their cases are drawn (e.g. `leaky_relu_scales_*`: LEAKY_RELU scales where
TFLM's double-precision multipliers change outputs); their seeds derive from the bundle names.

## Format

All integers are u32 little-endian; no compression, no padding.

```
magic    8 bytes   "KCASE1\\0\\0"
count    u32       number of cases
per case:
  u32 model length, then the .tflite bytes (one subgraph, exactly one operator)
  u32 input count;  per input:  u32 length, then the raw tensor bytes
  u32 output count; per output: u32 length, then the raw tensor bytes
```

Bundles of stateful streaming operators (the `tools/kcases_signal_stream.py` family:
SignalFramer, SignalStacker, SignalDelay, SignalOverlapAdd) are sequences: magic
`"KCASE2\\0\\0"`, and per case, after the model, a u32 invoke count followed, per invoke, by
the input and output lists as above. TFLM ran them after one `reset()`, invoke after invoke
with the state carried over; every output of every invoke must match. Where TFLM leaves an
output unwritten (a framer or stacker producing no frame, with `output_valid` false: the
bytes are whatever its arena held) the bundle holds zeros, which is what Kiln writes there.

- Inputs are the subgraph inputs in order; constants (weights, bias, shape, axis, paddings,
  perm, begin/end/strides, size) are inside the model.
- Tensor bytes are little-endian, row-major, in the tensor's dtype.
- Outputs are TFLM's, after `reset()`, writing the inputs and one `invoke()`. Integer outputs
  must match byte for byte; float32 outputs too (bit for bit: the kernels repeat TFLM's float
  operations in order).
- A model's bytes are not aligned inside the bundle: copy each model into a 16-byte aligned
  buffer before reading it in place (constant buffers are 16-byte aligned relative to the
  start of the model).

## How the models are built

""" + "\n".join(line for line in __doc__[__doc__.index("How the models are built"):
                                          __doc__.index("Bundles are named by op and input dtype;")]
                .replace("How the models are built: d", "D").splitlines()) + "\n"


def write_readme():
    (OUT / "README.md").write_text(README)


def main():
    ap = argparse.ArgumentParser(description="Generates tests/kernel_cases/*.kcase")
    ap.add_argument("ops", nargs="*", help="only these file prefixes (e.g. conv_2d add)")
    ap.add_argument("-n", type=int, default=N_CASES, help="cases per bundle")
    ap.add_argument("--verify", action="store_true",
                    help="compare the stored bundles with TensorFlow Lite instead of generating")
    args = ap.parse_args()
    families = family_ops()
    every = [(i, e) for i, e in enumerate(OPS)] + [(None, e) for e in families]
    known = {p for _, (p, *_) in every} | {f"{p}_{d}" for _, (p, _, _, ds, *_) in every for d in ds}
    for p in args.ops:
        if p not in known:
            raise SystemExit(f"unknown op prefix {p}; known: {sorted(known)}")
    if args.verify:
        verify(args.ops)
        return
    OUT.mkdir(parents=True, exist_ok=True)
    man_path = OUT / "manifest.json"
    manifest = {}
    if man_path.exists() and args.ops:
        manifest = {e["file"]: e for e in json.loads(man_path.read_text())}
    for index, (prefix, op, gen, dtypes, *cases) in every:
        for dt in dtypes:
            if args.ops and prefix not in args.ops and f"{prefix}_{dt}" not in args.ops:
                continue
            e = gen_bundle(index, prefix, op, gen, dt, cases[0] if cases else args.n, dtypes)
            manifest[e["file"]] = e
    order = {f"{p}_{d}.kcase": (k, j) for k, (_, (p, _, _, ds, *_)) in enumerate(every)
             for j, d in enumerate(ds)}
    entries = sorted(manifest.values(), key=lambda e: order.get(e["file"], (999, 0)))
    man_path.write_text(json.dumps(entries, indent=1) + "\n")
    write_readme()
    total = sum(e["bytes"] for e in entries)
    print(f"wrote {len(entries)} bundles in {OUT.relative_to(tc.REPO)} ({total} B)")


if __name__ == "__main__":
    sys.exit(main())
