"""TFLM golden cases for Kiln's stateful kernels (SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM).

Builds single-op .tflite models (directly with the schema object API shipped in tflite-micro),
runs each in the pinned TFLM for several consecutive invoke() calls WITHOUT resetting the
variable (state) tensors in between (one reset() first, as TFLM does after AllocateTensors),
and writes a Rust integration test with everything hardcoded:

    kernels/tests/stateful_tflm_cases.rs

The Rust test runs kiln_kernels::svdf / kiln_kernels::lstm on the same parameters, starting
from TFLM's reset state (an int8 variable tensor is filled with its zero point, others with
zeros) and compares every output of every invoke byte for byte (float: bit for bit).

Cases:
  * random int8 SVDF (int8 state and time weights; a few whose feature results saturate the
    int8 state with a non-zero state zero point), random int8 SVDF with int16 state and time
    weights, random float SVDF;
  * random int8 LSTM: batch- and time-major, 1-3 batches, 1-5 steps, cell state scales 2^-11,
    2^-12, 2^-13, cell clip 0 / 10 / small, non-zero input and hidden zero points;
  * the public models' layers: all seven SVDF of tflm_keyword_scrambled_int8 and the LSTM of
    tflm_mnist_lstm_int8 (their weights and quantization, random int8 inputs).

--public-big OUT.rs writes the same kind of test for the two (large) LSTM layers of
tflm_dtln_noise_suppression to OUT.rs (not committed: ~1 MB of source); copy it into
kernels/tests/ to run it once.

Run from the repository root:
    .venv/bin/python tools/gen_stateful_cases.py
    .venv/bin/python tools/gen_stateful_cases.py --public-big /tmp/stateful_dtln.rs
Deterministic (fixed seeds).
"""

import argparse
import os
import pickle
import subprocess
import sys

import flatbuffers
import numpy as np

import tflite_common as tc
from tflite_common import schema_fb as fb

OUT = tc.REPO / "kernels" / "tests" / "stateful_tflm_cases.rs"
ARENA = 1 << 20
SEED = 20261023

TYPE = {"float32": fb.TensorType.FLOAT32, "int8": fb.TensorType.INT8,
        "int16": fb.TensorType.INT16, "int32": fb.TensorType.INT32}
NP = {"float32": np.float32, "int8": np.int8, "int16": np.int16, "int32": np.int32}
NONE, RELU, RELU_N1_TO_1, RELU6, TANH = 0, 1, 2, 3, 4


# --------------------------------------------------------------------------------------------
# Model building


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


class Graph:
    """One subgraph with one operator."""

    def __init__(self):
        self.tensors = []
        self.buffers = [AlignedBufferT()]

    def tensor(self, shape, dtype, data=None, quant=None, variable=False, name=""):
        t = fb.TensorT()
        t.shape = [int(d) for d in shape]
        t.type = TYPE[dtype]
        t.buffer = 0
        t.name = name
        t.isVariable = bool(variable)
        if data is not None:
            b = AlignedBufferT()
            arr = np.ascontiguousarray(np.asarray(data, dtype=NP[dtype]).reshape(shape))
            b.data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        if quant is not None:
            q = fb.QuantizationParametersT()
            q.scale = [float(quant[0])]
            q.zeroPoint = [int(quant[1])]
            q.quantizedDimension = 0
            t.quantization = q
        self.tensors.append(t)
        return len(self.tensors) - 1

    def serialize(self, op_name, inputs, outputs, options_type, options, intermediates=None):
        code = getattr(fb.BuiltinOperator, op_name)
        opc = fb.OperatorCodeT()
        opc.builtinCode = code
        opc.deprecatedBuiltinCode = min(code, 127)
        opc.version = 1
        op = fb.OperatorT()
        op.opcodeIndex = 0
        op.inputs = list(inputs)
        op.outputs = list(outputs)
        if intermediates:
            op.intermediates = list(intermediates)
        op.builtinOptionsType = getattr(fb.BuiltinOptions, options_type)
        op.builtinOptions = options
        sg = fb.SubGraphT()
        sg.tensors = self.tensors
        sg.inputs = [inputs[0]]
        sg.outputs = list(outputs)
        sg.operators = [op]
        m = fb.ModelT()
        m.version = 3
        m.operatorCodes = [opc]
        m.subgraphs = [sg]
        m.buffers = self.buffers
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def f32(x):
    return float(np.float32(x))


# --------------------------------------------------------------------------------------------
# Running TFLM (in a forked child: TFLM may abort on models it rejects)


def _run_here(model, xs):
    it = tc.make_interpreter(model, ARENA)
    with tc.captured_stderr() as log:
        try:
            it.reset()
            ys = []
            for x in xs:
                it.set_input(x, 0)
                it.invoke()
                ys.append(np.array(it.get_output(0)))
            return ys
        except RuntimeError as e:
            err = e
    raise RuntimeError(f"{err} {log['text']}".strip())


def run_tflm(model, xs):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            try:
                res = ("ok", _run_here(model, xs))
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


# --------------------------------------------------------------------------------------------
# SVDF


def svdf_model(c):
    """c: dict with shapes, quantization (scale, zp) tuples, int arrays, dtype of state."""
    g = Graph()
    dt = c["dtype"]  # "int8", "int16" (state/time weights of an int8 SVDF) or "float32"
    act = "float32" if dt == "float32" else "int8"
    q = (lambda k: c[k]) if dt != "float32" else (lambda k: None)
    x = g.tensor([c["batches"], c["input_size"]], act, quant=q("input"), name="input")
    wf = g.tensor([c["num_filters"], c["input_size"]], act, c["wf"],
                  quant=None if dt == "float32" else (c["wf_scale"], 0), name="wf")
    wt = g.tensor([c["num_filters"], c["memory_size"]], dt, c["wt"],
                  quant=None if dt == "float32" else (c["wt_scale"], 0), name="wt")
    b = g.tensor([c["num_filters"] // c["rank"]], "float32" if dt == "float32" else "int32",
                 c["bias"], quant=None if dt == "float32" else (c["bias_scale"], 0), name="bias")
    st = g.tensor([c["batches"], c["num_filters"] * c["memory_size"]], dt,
                  quant=q("state"), variable=True, name="state")
    y = g.tensor([c["batches"], c["num_filters"] // c["rank"]], act, quant=q("output"),
                 name="output")
    o = fb.SVDFOptionsT()
    o.rank = c["rank"]
    o.fusedActivationFunction = c["activation"]
    o.asymmetricQuantizeInputs = False
    return g.serialize("SVDF", [x, wf, wt, b, st], [y], "SVDFOptions", o)


def rand_zp(rng, lo=-128, hi=127):
    r = rng.random()
    if r < 0.15:
        return 0
    if r < 0.25:
        return lo
    return int(rng.integers(lo, hi + 1))


def gen_svdf_int(rng, state_dtype, saturate=False):
    batches = int(rng.integers(1, 4))
    input_size = int(rng.integers(1, 13))
    rank = int(rng.integers(1, 4))
    units = int(rng.integers(1, 7))
    nf = rank * units
    mem = int(rng.integers(1, 9))
    smax = 127 if state_dtype == "int8" else 32767
    in_s = f32(10 ** rng.uniform(-2.5, -0.5))
    in_zp = rand_zp(rng)
    wf = rng.integers(-127, 128, size=(nf, input_size))
    wf_s = f32(10 ** rng.uniform(-3, -1))
    # Feature dot products have a spread of ~ sqrt(n) * 73 * 74 raw units.
    dot_std = np.sqrt(input_size) * 73 * 74 * in_s * wf_s
    st_s = f32(dot_std * 2.5 / smax * 10 ** rng.uniform(-0.3, 0.3))
    if saturate:
        st_s = f32(st_s / 8)
    st_zp = int(rng.integers(-60, 61)) if state_dtype == "int8" else 0
    wt = rng.integers(-smax, smax + 1, size=(nf, mem))
    wt_s = f32(10 ** rng.uniform(-3, -1))
    bias_s = f32(np.float32(st_s) * np.float32(wt_s))
    acc_std = np.sqrt(rank * mem) * (smax * 0.6) * (smax * 0.4)
    bias = rng.integers(-int(acc_std), int(acc_std) + 1, size=units)
    out_s = f32(acc_std * st_s * wt_s * 2.5 / 127 * 10 ** rng.uniform(-0.4, 0.4))
    return dict(dtype=state_dtype, batches=batches, input_size=input_size, rank=rank,
                num_filters=nf, memory_size=mem, input=(in_s, in_zp), wf=wf, wf_scale=wf_s,
                wt=wt, wt_scale=wt_s, bias=bias, bias_scale=bias_s, state=(st_s, st_zp),
                output=(out_s, rand_zp(rng)), activation=RELU if rng.random() < 0.5 else NONE)


def gen_svdf_float(rng):
    batches = int(rng.integers(1, 4))
    input_size = int(rng.integers(1, 13))
    rank = int(rng.integers(1, 4))
    units = int(rng.integers(1, 7))
    nf = rank * units
    mem = int(rng.integers(1, 9))
    act = [NONE, RELU, RELU_N1_TO_1, RELU6][int(rng.integers(0, 4))]
    return dict(dtype="float32", batches=batches, input_size=input_size, rank=rank,
                num_filters=nf, memory_size=mem,
                wf=rng.normal(0, 1 / np.sqrt(input_size), size=(nf, input_size)).astype(np.float32),
                wt=rng.normal(0, 1 / np.sqrt(mem), size=(nf, mem)).astype(np.float32),
                bias=rng.normal(0, 0.5, size=units).astype(np.float32), activation=act)


def svdf_inputs(rng, c, invokes):
    shape = (c["batches"], c["input_size"])
    if c["dtype"] == "float32":
        return [rng.uniform(-2, 2, size=shape).astype(np.float32) for _ in range(invokes)]
    return [rng.integers(-128, 128, size=shape).astype(np.int8) for _ in range(invokes)]


# --------------------------------------------------------------------------------------------
# LSTM


GATES = ("input", "forget", "cell", "output")  # TFLite tensor order (inputs 1-4, 5-8, 12-15)


def lstm_model(c):
    g = Graph()
    tm = c["time_major"]
    B, T, I, S = c["batches"], c["time_steps"], c["input_size"], c["state_size"]
    in_shape = [T, B, I] if tm else [B, T, I]
    out_shape = [T, B, S] if tm else [B, T, S]
    x = g.tensor(in_shape, "int8", quant=c["input"], name="input")
    wx = [g.tensor([S, I], "int8", c["wx"][k], quant=(c["wx_scale"][k], 0), name=f"wx_{n}")
          for k, n in enumerate(GATES)]
    wh = [g.tensor([S, S], "int8", c["wh"][k], quant=(c["wh_scale"][k], 0), name=f"wh_{n}")
          for k, n in enumerate(GATES)]
    bias = [g.tensor([S], "int32", c["bias"][k],
                     quant=(f32(np.float32(c["input"][0]) * np.float32(c["wx_scale"][k])), 0),
                     name=f"b_{n}") for k, n in enumerate(GATES)]
    h = g.tensor([B, S], "int8", quant=c["hidden"], variable=True, name="hidden_state")
    cs = g.tensor([B, S], "int16", quant=(c["cell_scale"], 0), variable=True, name="cell_state")
    y = g.tensor(out_shape, "int8", quant=c["hidden"], name="output")
    inter = [g.tensor([0], "float32", name=f"{n}_intermediate") for n in GATES]
    inter.append(g.tensor([0], "int8", quant=c["hidden"], name="effective_hidden_scale"))
    inputs = [x] + wx + wh + [-1, -1, -1] + bias + [-1, -1, h, cs, -1, -1, -1, -1]
    o = fb.UnidirectionalSequenceLSTMOptionsT()
    o.fusedActivationFunction = TANH
    o.cellClip = float(c["cell_clip"])
    o.projClip = 0.0
    o.timeMajor = bool(tm)
    o.asymmetricQuantizeInputs = False
    o.diagonalRecurrentTensors = False
    return g.serialize("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y],
                       "UnidirectionalSequenceLSTMOptions", o, intermediates=inter)


def gen_lstm(rng):
    B = int(rng.integers(1, 4))
    T = int(rng.integers(1, 6))
    I = int(rng.integers(1, 11))
    S = int(rng.integers(1, 9))
    in_s = f32(10 ** rng.uniform(-2.5, -1))
    h_s = f32(1 / 128 * 10 ** rng.uniform(-0.3, 0.3))
    h_zp = 0 if rng.random() < 0.3 else int(rng.integers(-20, 21))
    # Gate pre-activations with a real spread of ~1.5 (weights uniform in [-127, 127]).
    wx_s = [f32(1.5 / (in_s * np.sqrt(I) * 73 * 74) * 10 ** rng.uniform(-0.3, 0.3))
            for _ in GATES]
    wh_s = [f32(1.5 / (h_s * np.sqrt(S) * 73 * 80) * 10 ** rng.uniform(-0.3, 0.3))
            for _ in GATES]
    bias = [np.round(rng.uniform(-1, 1, size=S) / (np.float32(in_s) * np.float32(s)))
            .astype(np.int64) for s in wx_s]
    r = rng.random()
    clip = 0.0 if r < 0.3 else (10.0 if r < 0.6 else f32(rng.uniform(0.3, 3)))
    return dict(time_major=bool(rng.random() < 0.4), batches=B, time_steps=T, input_size=I,
                state_size=S, input=(in_s, rand_zp(rng)), hidden=(h_s, h_zp),
                cell_scale=f32(2.0 ** int(rng.choice([-11, -12, -12, -13]))), cell_clip=clip,
                wx=[rng.integers(-127, 128, size=(S, I)) for _ in GATES], wx_scale=wx_s,
                wh=[rng.integers(-127, 128, size=(S, S)) for _ in GATES], wh_scale=wh_s,
                bias=bias)


def lstm_inputs(rng, c, invokes):
    n = c["batches"] * c["time_steps"] * c["input_size"]
    shape = ((c["time_steps"], c["batches"], c["input_size"]) if c["time_major"]
             else (c["batches"], c["time_steps"], c["input_size"]))
    return [rng.integers(-128, 128, size=n).astype(np.int8).reshape(shape)
            for _ in range(invokes)]


# --------------------------------------------------------------------------------------------
# Public models' layers


def _quant(t):
    q = t.quantization
    return (float(q.scale[0]), int(q.zeroPoint[0]))


def _data(model, t, dtype):
    return np.frombuffer(bytes(model.buffers[t.buffer].data), dtype=NP[dtype]).reshape(t.shape)


def public_layers(name, op_name):
    data = (tc.SHARED_MODELS / f"{name}.tflite").read_bytes()
    m = tc.load_model(data)
    sg = m.subgraphs[0]
    out = []
    for k, op in enumerate(sg.operators):
        if tc.op_code_name(m, op.opcodeIndex) != op_name:
            continue
        T = [sg.tensors[i] if i >= 0 else None for i in op.inputs]
        y = sg.tensors[op.outputs[0]]
        o = op.builtinOptions
        label = f"{name} op {k}"
        if op_name == "SVDF":
            wt_dtype = tc.TYPE_NAMES[T[2].type]
            out.append(dict(
                label=label, dtype=wt_dtype, batches=int(T[0].shape[0]),
                input_size=int(T[0].shape[1]), rank=int(o.rank),
                num_filters=int(T[1].shape[0]), memory_size=int(T[2].shape[1]),
                input=_quant(T[0]), wf=_data(m, T[1], "int8"), wf_scale=_quant(T[1])[0],
                wt=_data(m, T[2], wt_dtype), wt_scale=_quant(T[2])[0],
                bias=_data(m, T[3], "int32"), bias_scale=_quant(T[3])[0],
                state=_quant(T[4]), output=_quant(y), activation=int(o.fusedActivationFunction)))
        else:
            tm = bool(o.timeMajor)
            shp = [int(d) for d in T[0].shape]
            B, Tn = (shp[1], shp[0]) if tm else (shp[0], shp[1])
            assert all(T[i] is None for i in (9, 10, 11, 16, 17, 20, 21, 22, 23)), label
            assert int(o.fusedActivationFunction) == TANH, label
            out.append(dict(
                label=label, time_major=tm, batches=B, time_steps=Tn, input_size=shp[2],
                state_size=int(T[18].shape[-1]), input=_quant(T[0]), hidden=_quant(T[18]),
                cell_scale=_quant(T[19])[0], cell_clip=float(o.cellClip),
                wx=[_data(m, T[i], "int8") for i in (1, 2, 3, 4)],
                wx_scale=[_quant(T[i])[0] for i in (1, 2, 3, 4)],
                wh=[_data(m, T[i], "int8") for i in (5, 6, 7, 8)],
                wh_scale=[_quant(T[i])[0] for i in (5, 6, 7, 8)],
                bias=[_data(m, T[i], "int32") for i in (12, 13, 14, 15)]))
    return out


# --------------------------------------------------------------------------------------------
# Rust emission


def rs_f32(x):
    bits = int(np.array([x], dtype=np.float32).view(np.uint32)[0])
    return f"f32::from_bits(0x{bits:08x})"


def rs_q(q):
    return f"({rs_f32(q[0])}, {int(q[1])})"


def rs_arr(a, kind):
    a = np.asarray(a).reshape(-1)
    if kind == "f32":
        items = [f"0x{int(v):08x}" for v in a.astype(np.float32).view(np.uint32)]
    else:
        items = [str(int(v)) for v in a]
    lines, line = [], ""
    for it in items:
        if len(line) + len(it) + 2 > 96:
            lines.append(line.rstrip())
            line = ""
        line += it + ", "
    if line:
        lines.append(line.rstrip())
    return "&[\n" + "\n".join("        " + ln for ln in lines) + "\n    ]"


def rs_svdf_case(c, xs, ys):
    dt = c["dtype"]
    if dt == "float32":
        return (
            "SvdfF32Case {\n"
            f"    name: {c['label']!r},\n"
            f"    batches: {c['batches']}, input_size: {c['input_size']}, "
            f"num_filters: {c['num_filters']}, rank: {c['rank']}, "
            f"memory_size: {c['memory_size']}, activation: {c['activation']},\n"
            f"    wf: {rs_arr(c['wf'], 'f32')},\n"
            f"    wt: {rs_arr(c['wt'], 'f32')},\n"
            f"    bias: {rs_arr(c['bias'], 'f32')},\n"
            f"    inputs: {rs_arr(np.concatenate([x.reshape(-1) for x in xs]), 'f32')},\n"
            f"    outputs: {rs_arr(np.concatenate([y.reshape(-1) for y in ys]), 'f32')},\n"
            "}").replace("'", '"')
    return (
        "SvdfCase {\n"
        f"    name: {c['label']!r},\n"
        f"    batches: {c['batches']}, input_size: {c['input_size']}, "
        f"num_filters: {c['num_filters']}, rank: {c['rank']}, memory_size: {c['memory_size']},\n"
        f"    input: {rs_q(c['input'])}, wf_scale: {rs_f32(c['wf_scale'])}, "
        f"wt_scale: {rs_f32(c['wt_scale'])}, bias_scale: {rs_f32(c['bias_scale'])},\n"
        f"    state: {rs_q(c['state'])}, output: {rs_q(c['output'])},\n"
        f"    wf: {rs_arr(c['wf'], 'int')},\n"
        f"    wt: {rs_arr(c['wt'], 'int')},\n"
        f"    bias: {rs_arr(c['bias'], 'int')},\n"
        f"    inputs: {rs_arr(np.concatenate([x.reshape(-1) for x in xs]), 'int')},\n"
        f"    outputs: {rs_arr(np.concatenate([y.reshape(-1) for y in ys]), 'int')},\n"
        "}").replace("'", '"')


def rs_lstm_case(c, xs, ys):
    def four(key, kind):
        return "[" + ", ".join(rs_arr(a, kind) for a in c[key]) + "]"
    return (
        "LstmCase {\n"
        f"    name: {c['label']!r},\n"
        f"    time_major: {str(c['time_major']).lower()}, batches: {c['batches']}, "
        f"time_steps: {c['time_steps']}, input_size: {c['input_size']}, "
        f"state_size: {c['state_size']},\n"
        f"    cell_clip: {rs_f32(c['cell_clip'])}, input: {rs_q(c['input'])}, "
        f"hidden: {rs_q(c['hidden'])}, cell_scale: {rs_f32(c['cell_scale'])},\n"
        f"    wx_scale: [{', '.join(rs_f32(s) for s in c['wx_scale'])}],\n"
        f"    wh_scale: [{', '.join(rs_f32(s) for s in c['wh_scale'])}],\n"
        f"    wx: {four('wx', 'int')},\n"
        f"    wh: {four('wh', 'int')},\n"
        f"    bias: {four('bias', 'int')},\n"
        f"    inputs: {rs_arr(np.concatenate([x.reshape(-1) for x in xs]), 'int')},\n"
        f"    outputs: {rs_arr(np.concatenate([y.reshape(-1) for y in ys]), 'int')},\n"
        "}").replace("'", '"')


RS_HEADER = '''\
//! GENERATED by tools/gen_stateful_cases.py from the pinned TFLM (tflite-micro
//! 0.dev20261023182759) -- do not edit by hand; rerun the script instead.
//!
//! Each case is a single SVDF or UNIDIRECTIONAL_SEQUENCE_LSTM node run for several consecutive
//! invoke() calls from TFLM's reset state (int8 variable tensors filled with their zero point,
//! others zeroed), the state carried over between invokes. Every output must match TFLM's
//! byte for byte (float: bit for bit).

use kiln_kernels::lstm::{self, LstmBiases, LstmConfig, LstmWeights};
use kiln_kernels::quant::{Activation, QuantParams};
use kiln_kernels::svdf;

fn qp(q: (f32, i32)) -> QuantParams {
    QuantParams { scale: q.0, zero_point: q.1 }
}

struct SvdfCase<W: 'static> {
    name: &'static str,
    batches: usize,
    input_size: usize,
    num_filters: usize,
    rank: usize,
    memory_size: usize,
    input: (f32, i32),
    wf_scale: f32,
    wt_scale: f32,
    bias_scale: f32,
    state: (f32, i32),
    output: (f32, i32),
    wf: &'static [i8],
    wt: &'static [W],
    bias: &'static [i32],
    inputs: &'static [i8],
    outputs: &'static [i8],
}

struct SvdfF32Case {
    name: &'static str,
    batches: usize,
    input_size: usize,
    num_filters: usize,
    rank: usize,
    memory_size: usize,
    activation: u8,
    wf: &'static [u32],
    wt: &'static [u32],
    bias: &'static [u32],
    inputs: &'static [u32],
    outputs: &'static [u32],
}

struct LstmCase {
    name: &'static str,
    time_major: bool,
    batches: usize,
    time_steps: usize,
    input_size: usize,
    state_size: usize,
    cell_clip: f32,
    input: (f32, i32),
    hidden: (f32, i32),
    cell_scale: f32,
    wx_scale: [f32; 4],
    wh_scale: [f32; 4],
    wx: [&'static [i8]; 4],
    wh: [&'static [i8]; 4],
    bias: [&'static [i32]; 4],
    inputs: &'static [i8],
    outputs: &'static [i8],
}

fn svdf_params<W>(c: &SvdfCase<W>) -> svdf::Params {
    svdf::prepare_s8(
        c.batches,
        c.input_size,
        c.num_filters,
        c.rank,
        c.memory_size,
        qp(c.input),
        c.wf_scale,
        c.wt_scale,
        Some(c.bias_scale),
        qp(c.state),
        qp(c.output),
    )
    .unwrap_or_else(|e| panic!("{}: {e:?}", c.name))
}

fn check_svdf_s8(c: &SvdfCase<i8>) {
    let p = svdf_params(c);
    let mut state = vec![0i8; p.state_len()];
    svdf::reset_state_s8(&p, &mut state);
    let (n_in, n_out) = (c.batches * c.input_size, p.batches * p.num_units);
    let mut out = vec![0i8; n_out];
    for (k, (x, y)) in c.inputs.chunks(n_in).zip(c.outputs.chunks(n_out)).enumerate() {
        svdf::svdf_s8(&p, x, c.wf, c.wt, Some(c.bias), &mut state, &mut out);
        assert_eq!(out, y, "{} invoke {k}", c.name);
    }
}

fn check_svdf_s16(c: &SvdfCase<i16>) {
    let p = svdf_params(c);
    let mut state = vec![0i16; p.state_len()];
    let (n_in, n_out) = (c.batches * c.input_size, p.batches * p.num_units);
    let mut out = vec![0i8; n_out];
    for (k, (x, y)) in c.inputs.chunks(n_in).zip(c.outputs.chunks(n_out)).enumerate() {
        svdf::svdf_s8_s16(&p, x, c.wf, c.wt, Some(c.bias), &mut state, &mut out);
        assert_eq!(out, y, "{} invoke {k}", c.name);
    }
}

fn check_svdf_f32(c: &SvdfF32Case) {
    let act = match c.activation {
        0 => Activation::None,
        1 => Activation::Relu,
        2 => Activation::ReluN1To1,
        3 => Activation::Relu6,
        a => panic!("activation {a}"),
    };
    let p = svdf::prepare_f32(c.batches, c.input_size, c.num_filters, c.rank, c.memory_size, act)
        .unwrap();
    let f = |v: &[u32]| v.iter().map(|&b| f32::from_bits(b)).collect::<Vec<f32>>();
    let (wf, wt, bias, inputs) = (f(c.wf), f(c.wt), f(c.bias), f(c.inputs));
    let mut state = vec![0f32; p.state_len()];
    let (n_in, n_out) = (c.batches * c.input_size, p.batches * p.num_units);
    let mut out = vec![0f32; n_out];
    for (k, (x, y)) in inputs.chunks(n_in).zip(c.outputs.chunks(n_out)).enumerate() {
        svdf::svdf_f32(&p, x, &wf, &wt, Some(&bias), &mut state, &mut out);
        let bits: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits, y, "{} invoke {k}", c.name);
    }
}

fn check_lstm(c: &LstmCase) {
    let q = |s: &[f32; 4]| s.map(|scale| QuantParams { scale, zero_point: 0 });
    let config = LstmConfig {
        time_major: c.time_major,
        batches: c.batches,
        time_steps: c.time_steps,
        input_size: c.input_size,
        state_size: c.state_size,
        cell_clip: c.cell_clip,
        activation: Activation::Tanh,
        input: qp(c.input),
        hidden_state: qp(c.hidden),
        cell_state_scale: c.cell_scale,
        input_weights: q(&c.wx_scale),
        recurrent_weights: q(&c.wh_scale),
    };
    let weights = LstmWeights {
        input_to_input: c.wx[0],
        input_to_forget: c.wx[1],
        input_to_cell: c.wx[2],
        input_to_output: c.wx[3],
        recurrent_to_input: c.wh[0],
        recurrent_to_forget: c.wh[1],
        recurrent_to_cell: c.wh[2],
        recurrent_to_output: c.wh[3],
    };
    let biases = LstmBiases {
        input_gate: c.bias[0],
        forget_gate: c.bias[1],
        cell_gate: c.bias[2],
        output_gate: c.bias[3],
    };
    let mut eb = vec![0i32; 8 * c.state_size];
    let p = lstm::prepare_s8(&config, &weights, &biases, &mut eb)
        .unwrap_or_else(|e| panic!("{}: {e:?}", c.name));
    assert_eq!(lstm::scratch_bytes(&p), 0);
    let mut hidden = vec![0i8; p.state_len()];
    let mut cell = vec![0i16; p.state_len()];
    lstm::reset_state_s8(&p, &mut hidden, &mut cell);
    let mut out = vec![0i8; p.output_len()];
    let n_in = p.input_len();
    for (k, (x, y)) in c.inputs.chunks(n_in).zip(c.outputs.chunks(p.output_len())).enumerate() {
        lstm::lstm_s8(&p, &eb, x, &weights, &mut hidden, &mut cell, &mut out);
        assert_eq!(out, y, "{} invoke {k}", c.name);
    }
}
'''


def emit(path, svdf8, svdf16, svdff, lstms):
    parts = [RS_HEADER]
    groups = [
        ("SVDF_S8", "SvdfCase<i8>", svdf8, "check_svdf_s8", "svdf_s8_matches_tflm"),
        ("SVDF_S16", "SvdfCase<i16>", svdf16, "check_svdf_s16", "svdf_s8_s16_matches_tflm"),
        ("SVDF_F32", "SvdfF32Case", svdff, "check_svdf_f32", "svdf_f32_matches_tflm"),
        ("LSTM_S8", "LstmCase", lstms, "check_lstm", "lstm_s8_matches_tflm"),
    ]
    for const, ty, cases, check, test in groups:
        if not cases:
            continue
        parts.append(f"static {const}: &[{ty}] = &[\n" + ",\n".join(cases) + ",\n];\n")
        parts.append(f"#[test]\nfn {test}() {{\n    for c in {const} {{\n"
                     f"        {check}(c);\n    }}\n}}\n")
    path.write_text("\n".join(parts))
    # Keep the generated file as `cargo fmt` leaves it (CI runs `cargo fmt --all --check`).
    subprocess.run(["rustfmt", "--edition", "2024", str(path)], check=True)
    print(f"wrote {path} ({path.stat().st_size} bytes)")


def run_svdf(c, rng, invokes):
    xs = svdf_inputs(rng, c, invokes)
    ys = run_tflm(svdf_model(c), xs)
    return rs_svdf_case(c, xs, ys)


def run_lstm(c, rng, invokes):
    xs = lstm_inputs(rng, c, invokes)
    ys = run_tflm(lstm_model(c), xs)
    return rs_lstm_case(c, xs, ys)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--public-big", metavar="OUT_RS",
                    help="write the dtln LSTM layers' cases to OUT_RS instead")
    ap.add_argument("--count", type=int, default=24, help="random cases per kind")
    args = ap.parse_args()
    rng = np.random.default_rng(SEED)
    from pathlib import Path

    if args.public_big:
        lstms = []
        for c in public_layers("tflm_dtln_noise_suppression", "UNIDIRECTIONAL_SEQUENCE_LSTM"):
            lstms.append(run_lstm(c, rng, 4))
        emit(Path(args.public_big), [], [], [], lstms)
        return

    svdf8, svdf16, svdff, lstms = [], [], [], []
    for k in range(args.count):
        c = gen_svdf_int(rng, "int8", saturate=(k % 4 == 3))
        c["label"] = f"random svdf int8 #{k}" + (" (saturating state)" if k % 4 == 3 else "")
        svdf8.append(run_svdf(c, rng, 5))
    for c in public_layers("tflm_keyword_scrambled_int8", "SVDF"):
        (svdf8 if c["dtype"] == "int8" else svdf16).append(run_svdf(c, rng, 4))
    for k in range(args.count // 2):
        c = gen_svdf_int(rng, "int16")
        c["label"] = f"random svdf int16 state #{k}"
        svdf16.append(run_svdf(c, rng, 5))
    for k in range(args.count // 3):
        c = gen_svdf_float(rng)
        c["label"] = f"random svdf float #{k}"
        svdff.append(run_svdf(c, rng, 4))
    for k in range(args.count):
        c = gen_lstm(rng)
        c["label"] = f"random lstm #{k}"
        lstms.append(run_lstm(c, rng, 3))
    for c in public_layers("tflm_mnist_lstm_int8", "UNIDIRECTIONAL_SEQUENCE_LSTM"):
        lstms.append(run_lstm(c, rng, 2))
    emit(Path(args.out), svdf8, svdf16, svdff, lstms)


if __name__ == "__main__":
    sys.exit(main())
