"""Control-flow test models (IF, WHILE, CALL_ONCE with resource variables) and their TFLM goldens.

Writes to tests/control_flow/:
  From the TensorFlow 2.20 converter:
  if_float.tflite, if_int8.tflite    tf.cond on sum(x) > 0; the branches do different arithmetic
                                     (FULLY_CONNECTED, RESHAPE, ADD, MUL, SUB); int8 I/O for
                                     if_int8 (the converter keeps float32 at the IF boundary)
  while_counted.tflite               tf.while_loop with 5 trips carrying a counter and a tensor
  while_data.tflite                  tf.while_loop halving a tensor until max|y| <= 1
                                     (0 to 10 trips depending on the input), accumulating
  while_if_float.tflite              a tf.cond inside a tf.while_loop body (nested subgraphs)
  call_once_var.tflite               resource variables (tf.Variable in a tf.Module): CALL_ONCE
                                     runs the init subgraph (VAR_HANDLE + ASSIGN_VARIABLE), main
                                     reads, updates and assigns them; int8 I/O
  call_once_var_float.tflite         the same model with float32 I/O
  From the schema object API (forms the converter does not produce):
  if_int8_direct.tflite              an IF with two int8 inputs and an int8 output per branch
  while_int8.tflite                  while_data in int8 (the converter crashes quantizing a
                                     tf.while_loop: SIGSEGV while calibrating), 0 to 6 trips
  var_read_first_int8.tflite         READ_VARIABLE before the one ASSIGN_VARIABLE, no CALL_ONCE;
                                     an int8 variable with a non-zero zero point (TFLM's fill)
  And:
  <model>.json                       golden data of every model (format below)
  README.md                          the part between the GENERATED markers (model dumps and
                                     the semantics checks below, each of which raises if the
                                     wheel disagrees)

Golden protocol (per model): one interpreter from the pinned tflite-micro wheel (arena 64 KB),
then CALLS_BEFORE_RESET invoke() calls with no reset in between (state carries over), then
reset(), then CALLS_AFTER_RESET more calls. Inputs are seeded (numpy default_rng) and chosen so
both IF branches and several WHILE trip counts (including 0) occur. <model>.json:
  {"model", "protocol", "arena": {"head", "tail", "total"} (print_allocations after the last
   call; x86-64 numbers), "inputs": [tensor details], "outputs": [tensor details],
   "calls": [{"reset_before": bool, "inputs": [hex], "outputs": [hex], "note": str}]}
Tensor details are those of ../shared/models/golden (tensor_index, name, shape, dtype, bytes,
quantization). Bytes are raw little-endian tensor bytes, lowercase hex.

Run from the repository root:  .venv/bin/python tools/gen_control_flow_models.py
Deterministic (fixed seeds; the converter's output is byte-identical across runs). ~10 s.
"""

import json
import os
import re
import sys
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import flatbuffers  # noqa: E402
import numpy as np  # noqa: E402

import tflite_common as tc  # noqa: E402
from gen_stateful_cases import AlignedBufferT  # noqa: E402
from tflite_common import schema_fb as fb  # noqa: E402

OUT = tc.REPO / "tests" / "control_flow"
README = OUT / "README.md"
ARENA = 64 * 1024
CALLS_BEFORE_RESET = 6
CALLS_AFTER_RESET = 2
SEED = 20261202
PROTOCOL = (
    f"one interpreter; {CALLS_BEFORE_RESET} invoke() calls with no reset in between, then "
    f"reset(), then {CALLS_AFTER_RESET} invoke() calls; raw little-endian tensor bytes (hex)"
)

# --------------------------------------------------------------------------------------------
# Models from TensorFlow


def _tf():
    import tensorflow as tf  # imported lazily: slow, and noisy on stderr

    tf.get_logger().setLevel("ERROR")
    return tf


def _convert(tf, fn, trackable, rep=None, resource_vars=False):
    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], trackable)
    if resource_vars:
        conv.experimental_enable_resource_variables = True
    if rep is not None:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    with tc.captured_stderr():
        return conv.convert()


def _rep(shape, seed, n=64, lo=-1.0, hi=1.0):
    def gen():
        r = np.random.default_rng(seed)
        for _ in range(n):
            yield [r.uniform(lo, hi, size=shape).astype(np.float32)]

    return gen


def if_models(tf):
    rng = np.random.default_rng(SEED)
    w1 = rng.uniform(-0.5, 0.5, (8, 8)).astype(np.float32)
    b1 = rng.uniform(-0.2, 0.2, (8,)).astype(np.float32)
    w2 = rng.uniform(-0.5, 0.5, (8, 8)).astype(np.float32)
    c = rng.uniform(0.5, 1.5, (2, 4)).astype(np.float32)

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
    def f(x):
        pred = tf.reduce_sum(x) > 0.0

        def then_branch():
            y = tf.nn.relu(tf.matmul(x, w1) + b1)
            return tf.reshape(y, [2, 4]) * c + 0.25

        def else_branch():
            y = tf.matmul(x, w2) * x
            return tf.reshape(y - 0.5, [2, 4])

        return tf.cond(pred, then_branch, else_branch) + tf.reshape(x, [2, 4]) * 0.5

    return {
        "if_float": _convert(tf, f, f),
        "if_int8": _convert(tf, f, f, rep=_rep([1, 8], SEED + 1)),
    }


def while_models(tf):
    rng = np.random.default_rng(SEED + 2)
    w = rng.uniform(-0.5, 0.5, (8, 8)).astype(np.float32)
    b = rng.uniform(-0.1, 0.1, (8,)).astype(np.float32)

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
    def counted(x):
        def cond(i, y):
            return i < 5

        def body(i, y):
            return i + 1, tf.nn.relu(tf.matmul(y, w) + b) * 0.75 + x

        i, y = tf.while_loop(cond, body, [tf.constant(0), x])
        return i, y

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
    def data_dependent(x):
        def cond(n, y, acc):
            return tf.reduce_max(tf.abs(y)) > 1.0

        def body(n, y, acc):
            return n + 1, y * 0.5, acc + y

        n, y, acc = tf.while_loop(cond, body, [tf.constant(0), x, tf.zeros([1, 8])])
        return n, y, acc

    return {
        "while_counted": _convert(tf, counted, counted),
        "while_data": _convert(tf, data_dependent, data_dependent),
    }


def nested_model(tf):
    """A tf.cond inside a tf.while_loop body: WHILE -> body -> IF (three levels of subgraphs)."""

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
    def f(x):
        def cond(i, y):
            return i < 4

        def body(i, y):
            def up():
                return y * 0.5 - 0.25

            def down():
                return tf.reshape(tf.reverse(tf.reshape(y, [8]), [0]), [1, 8]) + 0.125

            return i + 1, tf.cond(tf.reduce_sum(y) > 0.0, up, down)

        i, y = tf.while_loop(cond, body, [tf.constant(0), x])
        return y

    return {"while_if_float": _convert(tf, f, f)}


def call_once_models(tf):
    rng = np.random.default_rng(SEED + 3)
    acc0 = rng.uniform(-0.5, 0.5, (1, 8)).astype(np.float32)

    class Accumulator(tf.Module):
        def __init__(self):
            super().__init__()
            # Non-zero initial values: a reset to zeros and the init subgraph differ.
            self.acc = tf.Variable(acc0, name="acc")
            self.count = tf.Variable(np.array([1.0], np.float32), name="count")

        @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
        def __call__(self, x):
            a = self.acc.assign(self.acc * 0.5 + x)
            n = self.count.assign_add(tf.ones([1]))
            return a + n * 0.125

    m = Accumulator()
    return {
        "call_once_var": _convert(tf, m.__call__, m, rep=_rep([1, 8], SEED + 4), resource_vars=True),
        "call_once_var_float": _convert(tf, m.__call__, m, resource_vars=True),
    }


# --------------------------------------------------------------------------------------------
# Models from the schema object API (forms the converter does not produce)


class Builder:
    """A model with several subgraphs, built with the schema object API."""

    def __init__(self, description):
        self.codes = []
        self.buffers = [AlignedBufferT()]
        self.subgraphs = []
        self.description = description

    def subgraph(self, name):
        sg = fb.SubGraphT()
        sg.name = name
        sg.tensors, sg.operators, sg.inputs, sg.outputs = [], [], [], []
        self.subgraphs.append(sg)
        return sg

    def tensor(self, sg, shape, dtype, name, quant=None, data=None):
        t = fb.TensorT()
        t.shape = [int(d) for d in shape]
        t.type = getattr(fb.TensorType, dtype.upper())
        t.name = name
        t.buffer = 0
        if quant is not None:
            q = fb.QuantizationParametersT()
            q.scale = [float(quant[0])]
            q.zeroPoint = [int(quant[1])]
            q.quantizedDimension = 0
            t.quantization = q
        if data is not None:
            arr = np.ascontiguousarray(np.asarray(data, dtype=tc.NP_DTYPES[dtype]).reshape(shape))
            buf = AlignedBufferT()
            buf.data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
            self.buffers.append(buf)
            t.buffer = len(self.buffers) - 1
        sg.tensors.append(t)
        return len(sg.tensors) - 1

    def op(self, sg, name, ins, outs, options=None):
        if name not in self.codes:
            self.codes.append(name)
        o = fb.OperatorT()
        o.opcodeIndex = self.codes.index(name)
        o.inputs = list(ins)
        o.outputs = list(outs)
        if options is not None:
            o.builtinOptionsType = getattr(fb.BuiltinOptions, type(options).__name__[:-1])
            o.builtinOptions = options
        sg.operators.append(o)

    def finish(self):
        m = fb.ModelT()
        m.version = 3
        m.description = self.description
        m.operatorCodes = [_opcode(n) for n in self.codes]
        m.subgraphs = self.subgraphs
        m.buffers = self.buffers
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def _opcode(name):
    code = getattr(fb.BuiltinOperator, name)
    oc = fb.OperatorCodeT()
    oc.builtinCode = code
    oc.deprecatedBuiltinCode = min(code, 127)
    oc.version = 1
    return oc


def _opts(cls, **fields):
    o = cls()
    for k, v in fields.items():
        setattr(o, k, v)
    return o


def var_read_first_model():
    """main(x: int8[1,4]) -> (old: int8[1,4], new: int8[1,4]):
    h = VAR_HANDLE("state"); old = READ_VARIABLE(h); new = ADD(old, x); ASSIGN_VARIABLE(h, new).
    One subgraph, no CALL_ONCE: the variable's first value is TFLM's fill (the zero point of the
    ASSIGN_VARIABLE value tensor, here -7)."""
    mb = Builder("Kiln control-flow test: READ_VARIABLE before ASSIGN_VARIABLE")
    sg = mb.subgraph("main")
    q = (0.05, -7)
    x = mb.tensor(sg, [1, 4], "int8", "x", q)
    h = mb.tensor(sg, [], "resource", "handle")
    old = mb.tensor(sg, [1, 4], "int8", "old", q)
    new = mb.tensor(sg, [1, 4], "int8", "new", q)
    mb.op(sg, "VAR_HANDLE", [], [h], _opts(fb.VarHandleOptionsT, container="", sharedName="state"))
    mb.op(sg, "READ_VARIABLE", [h], [old])
    mb.op(sg, "ADD", [old, x], [new], fb.AddOptionsT())
    mb.op(sg, "ASSIGN_VARIABLE", [h, new], [])
    sg.inputs, sg.outputs = [x], [old, new]
    return mb.finish()


def if_int8_direct_model():
    """An IF whose branch inputs and outputs are int8 (the converter's if_int8 keeps float32 at
    the IF boundary): main(x: int8[1,8]) -> int8[1,8]:
    r = RELU(x); c = SUM(x) > 0; t = IF(c, x, r) with then: ADD(x, r), else: SUB(x, r);
    out = ADD(t, x) (x stays live across the IF)."""
    mb = Builder("Kiln control-flow test: IF with int8 tensors at the branch boundary")
    main, then_, else_ = mb.subgraph("main"), mb.subgraph("then"), mb.subgraph("else")
    qx, qt, qs = (0.05, 3), (0.1, -2), (0.4, 0)
    x = mb.tensor(main, [1, 8], "int8", "x", qx)
    r = mb.tensor(main, [1, 8], "int8", "relu", qx)
    axes = mb.tensor(main, [2], "int32", "axes", data=[0, 1])
    s = mb.tensor(main, [], "int8", "sum", qs)
    zero = mb.tensor(main, [], "int8", "zero", qs, data=0)
    c = mb.tensor(main, [], "bool", "cond")
    t = mb.tensor(main, [1, 8], "int8", "if_out", qt)
    out = mb.tensor(main, [1, 8], "int8", "out", qt)
    mb.op(main, "RELU", [x], [r])
    mb.op(main, "SUM", [x, axes], [s], _opts(fb.ReducerOptionsT, keepDims=False))
    mb.op(main, "GREATER", [s, zero], [c])
    mb.op(main, "IF", [c, x, r], [t], _opts(fb.IfOptionsT, thenSubgraphIndex=1, elseSubgraphIndex=2))
    mb.op(main, "ADD", [t, x], [out], fb.AddOptionsT())
    main.inputs, main.outputs = [x], [out]
    for sg, op in ((then_, "ADD"), (else_, "SUB")):
        a = mb.tensor(sg, [1, 8], "int8", f"{sg.name}_x", qx)
        b = mb.tensor(sg, [1, 8], "int8", f"{sg.name}_relu", qx)
        o = mb.tensor(sg, [1, 8], "int8", f"{sg.name}_out", qt)
        mb.op(sg, op, [a, b], [o], fb.AddOptionsT() if op == "ADD" else fb.SubOptionsT())
        sg.inputs, sg.outputs = [a, b], [o]
    return mb.finish()


WHILE_INT8_Y = (0.125, 0)
WHILE_INT8_ACC = (0.25, 0)
WHILE_INT8_THRESHOLD = 2  # 0.25 in y's scale


def while_int8_model():
    """while_data in int8 (the converter cannot quantize a WHILE): main(x: int8[1,8]) ->
    (n: int32[], y: int8[1,8], acc: int8[1,8]); cond: REDUCE_MAX(ABS(y)) > 0.25;
    body: n + 1, y * 0.5 (MUL by an int8 constant), acc + y (ADD of two scales)."""
    mb = Builder("Kiln control-flow test: int8 WHILE with a data-dependent trip count")
    main, cond, body = mb.subgraph("main"), mb.subgraph("while_cond"), mb.subgraph("while_body")

    def loop_vars(sg, tag):
        return (mb.tensor(sg, [], "int32", f"n_{tag}"),
                mb.tensor(sg, [1, 8], "int8", f"y_{tag}", WHILE_INT8_Y),
                mb.tensor(sg, [1, 8], "int8", f"acc_{tag}", WHILE_INT8_ACC))

    x = mb.tensor(main, [1, 8], "int8", "x", WHILE_INT8_Y)
    n0 = mb.tensor(main, [], "int32", "n0", data=0)
    acc0 = mb.tensor(main, [1, 8], "int8", "acc0", WHILE_INT8_ACC, data=np.zeros((1, 8)))
    outs = loop_vars(main, "out")
    mb.op(main, "WHILE", [n0, x, acc0], outs,
          _opts(fb.WhileOptionsT, condSubgraphIndex=1, bodySubgraphIndex=2))
    main.inputs, main.outputs = [x], list(outs)

    cin = loop_vars(cond, "in")
    a = mb.tensor(cond, [1, 8], "int8", "abs", WHILE_INT8_Y)
    axes = mb.tensor(cond, [2], "int32", "axes", data=[0, 1])
    mx = mb.tensor(cond, [], "int8", "max", WHILE_INT8_Y)
    thr = mb.tensor(cond, [], "int8", "threshold", WHILE_INT8_Y, data=WHILE_INT8_THRESHOLD)
    go = mb.tensor(cond, [], "bool", "go")
    mb.op(cond, "ABS", [cin[1]], [a])
    mb.op(cond, "REDUCE_MAX", [a, axes], [mx], _opts(fb.ReducerOptionsT, keepDims=False))
    mb.op(cond, "GREATER", [mx, thr], [go])
    cond.inputs, cond.outputs = list(cin), [go]

    bin_ = loop_vars(body, "in")
    one = mb.tensor(body, [], "int32", "one", data=1)
    half = mb.tensor(body, [], "int8", "half", (1.0 / 128, 0), data=64)
    bout = loop_vars(body, "out")
    mb.op(body, "ADD", [bin_[0], one], [bout[0]], fb.AddOptionsT())
    mb.op(body, "MUL", [bin_[1], half], [bout[1]], fb.MulOptionsT())
    mb.op(body, "ADD", [bin_[2], bin_[1]], [bout[2]], fb.AddOptionsT())
    body.inputs, body.outputs = list(bin_), list(bout)
    return mb.finish()


# --------------------------------------------------------------------------------------------
# Inputs: seeded, chosen per model so the control flow varies


def _quantize(v, d):
    q = d["quantization"]
    if d["dtype"] == "float32":
        return v.astype(np.float32)
    s, z = q["scale"][0], q["zero_point"][0]
    info = np.iinfo(tc.NP_DTYPES[d["dtype"]])
    return np.clip(np.round(v / s) + z, info.min, info.max).astype(tc.NP_DTYPES[d["dtype"]])


def _dequantize(x, d):
    if d["dtype"] == "float32":
        return x.astype(np.float32)
    q = d["quantization"]
    return ((x.astype(np.float32) - q["zero_point"][0]) * q["scale"][0]).astype(np.float32)


def if_inputs(ins, rng, margin=0.1):
    """Branch pattern then, else, else, then, then, else | reset | then, else; the predicate
    sum(x) > 0 is kept at least `margin` away from 0 (after quantization) so it is unambiguous."""
    (d,) = ins
    calls = []
    for want in (True, False, False, True, True, False, True, False):
        while True:
            v = rng.uniform(-1.0, 1.0, size=d["shape"]).astype(np.float32)
            if (v.sum() > 0) != want:
                v = -v
            x = _quantize(v, d)
            s = float(_dequantize(x, d).sum())
            if abs(s) > margin and (s > 0) == want:
                break
        calls.append(([x], f"sum(x) = {s:.4f}: {'then' if want else 'else'} branch"))
    return calls


def while_counted_inputs(ins, rng):
    (d,) = ins
    return [([_quantize(rng.uniform(-1.0, 1.0, size=d["shape"]), d)], "5 trips")
            for _ in range(CALLS_BEFORE_RESET + CALLS_AFTER_RESET)]


def while_data_inputs(ins, rng):
    """x = u * 2^k, u uniform in [-1, 1): about k trips (0 for k = 0 and for max|x| <= 1)."""
    (d,) = ins
    calls = []
    for k in (3, 0, 7, 1, 10, 5, 2, 0):
        v = rng.uniform(-1.0, 1.0, size=d["shape"]) * float(2**k)
        x = _quantize(v, d)
        m = float(np.abs(x).max())
        trips = 0
        while m > 1.0:
            m *= 0.5
            trips += 1
        calls.append(([x], f"max|x| = {float(np.abs(x).max()):.4f}: {trips} trips"))
    return calls


def while_int8_inputs(ins, rng):
    """x = u * 2^k in y's scale (int8, saturating): 0 to 6 trips."""
    (d,) = ins
    calls = []
    for k in (2, -3, 4, 0, 5, 1, 3, -2):
        v = rng.uniform(-1.0, 1.0, size=d["shape"]) * float(2.0**k)
        calls.append(([_quantize(v, d)], ""))
    return calls


def plain_inputs(ins, rng):
    calls = []
    for _ in range(CALLS_BEFORE_RESET + CALLS_AFTER_RESET):
        xs = []
        for d in ins:
            if d["dtype"] == "float32":
                xs.append(rng.uniform(-1.0, 1.0, size=d["shape"]).astype(np.float32))
            else:
                xs.append(tc.random_input(rng, d["shape"], d["dtype"]))
        calls.append((xs, ""))
    return calls


INPUTS = {
    "if_float": if_inputs,
    "if_int8": if_inputs,
    "while_counted": while_counted_inputs,
    "while_data": while_data_inputs,
    "while_int8": while_int8_inputs,
    "if_int8_direct": lambda ins, rng: if_inputs(ins, rng, margin=0.5),
    "while_if_float": plain_inputs,
    "call_once_var": plain_inputs,
    "call_once_var_float": plain_inputs,
    "var_read_first_int8": plain_inputs,
}


# --------------------------------------------------------------------------------------------
# Goldens


def _hex(a, dtype):
    a = np.ascontiguousarray(a, dtype=tc.NP_DTYPES[dtype])
    return a.astype(a.dtype.newbyteorder("<")).tobytes().hex()


def allocations(it):
    with tc.captured_stderr() as log:
        it.print_allocations()
    got = {}
    for key in ("head", "tail", "total"):
        m = re.search(rf"Arena allocation {key} (\d+) bytes", log["text"])
        got[key] = int(m.group(1)) if m else None
    return got


def golden(name, data, seed):
    model = tc.load_model(data)
    sg = model.subgraphs[0]
    ins = [tc.tensor_details(model, t) for t in sg.inputs]
    outs = [tc.tensor_details(model, t) for t in sg.outputs]
    rng = np.random.default_rng(seed)
    calls = INPUTS[name](ins, rng)
    it = tc.make_interpreter(data, ARENA)
    rows = []
    for k, (xs, note) in enumerate(calls):
        reset = k == CALLS_BEFORE_RESET
        if reset:
            it.reset()
        for i, x in enumerate(xs):
            it.set_input(x, i)
        with tc.captured_stderr() as log:
            try:
                it.invoke()
            except RuntimeError as e:
                raise RuntimeError(f"{name} call {k}: {e}\n{log['text']}") from None
        ys = [np.array(it.get_output(i)) for i in range(len(outs))]
        for y, d in zip(ys, outs):
            assert y.nbytes == d["bytes"], (name, k, y.nbytes, d)
        if name == "while_int8":
            note = f"max|x| = {int(np.abs(xs[0].astype(np.int32)).max())}: {int(ys[0].reshape(-1)[0])} trips (TFLM)"
        if name == "while_if_float":
            note = f"IF branches over the 4 trips: {_while_if_replay(xs[0])[1]}"
        if name == "while_data":
            note += f" (TFLM: {int(ys[0].reshape(-1)[0])})"
            assert note.split(": ")[1].split(" ")[0] == str(int(ys[0].reshape(-1)[0])), note
        rows.append({
            "reset_before": reset,
            "inputs": [_hex(x, d["dtype"]) for x, d in zip(xs, ins)],
            "outputs": [_hex(y, d["dtype"]) for y, d in zip(ys, outs)],
            "note": note,
        })
    return {
        "model": f"{name}.tflite",
        "generator": "tools/gen_control_flow_models.py",
        "protocol": PROTOCOL,
        "arena_size": ARENA,
        "arena": allocations(it),
        "inputs": ins,
        "outputs": outs,
        "calls": rows,
    }


# --------------------------------------------------------------------------------------------
# TFLM semantics, checked against the wheel (each check raises if the wheel disagrees)


def _unhex(h, d):
    a = np.frombuffer(bytes.fromhex(h), dtype=np.dtype(tc.NP_DTYPES[d["dtype"]]).newbyteorder("<"))
    return a.reshape(d["shape"]).astype(tc.NP_DTYPES[d["dtype"]])


def _const(model, si, shape):
    """The one constant tensor of subgraph si with this shape (float32)."""
    sg = model.subgraphs[si]
    hits = [t for t in sg.tensors
            if list(t.shape) == shape and model.buffers[t.buffer].data is not None
            and len(model.buffers[t.buffer].data)]
    assert len(hits) == 1, (si, shape, len(hits))
    return np.frombuffer(bytes(model.buffers[hits[0].buffer].data), "<f4").reshape(shape)


def _fresh_run(data, inputs):
    """Outputs of a fresh interpreter (CALL_ONCE not yet run) over a list of calls' inputs."""
    it = tc.make_interpreter(data, ARENA)
    outs = []
    for xs in inputs:
        for i, x in enumerate(xs):
            it.set_input(x, i)
        it.invoke()
        outs.append([np.array(it.get_output(0))])
    return outs


def check_call_once_float(data, g):
    """float32 numpy replay: CALL_ONCE's init values on the first invoke, state carried, and
    after reset() both variables zero with the init subgraph NOT run again."""
    model = tc.load_model(data)
    acc0, count0 = _const(model, 1, [1, 8]), _const(model, 1, [1])
    d_in, d_out = g["inputs"][0], g["outputs"][0]
    acc, count = acc0.copy(), count0.copy()
    rerun = None
    for k, c in enumerate(g["calls"]):
        if c["reset_before"]:
            rerun = (acc0.copy(), count0.copy())
            acc, count = np.zeros_like(acc0), np.zeros_like(count0)
        x = _unhex(c["inputs"][0], d_in)
        count = (count + np.float32(1.0)).astype(np.float32)
        acc = (acc * np.float32(0.5) + x).astype(np.float32)
        want = (acc + count * np.float32(0.125)).astype(np.float32)
        assert want.tobytes().hex() == c["outputs"][0], f"call {k}"
        if rerun is not None and c["reset_before"]:
            ra, rc = rerun
            alt = ((ra * np.float32(0.5) + x) + (rc + np.float32(1.0)) * np.float32(0.125)).astype(np.float32)
            assert alt.tobytes().hex() != c["outputs"][0]
    return ("call_once_var_float: every output equals a float32 replay in which CALL_ONCE's "
            "init subgraph sets acc/count on the first invoke() only, and reset() sets both "
            "resource variables to 0.0 without running the init subgraph again")


def check_reset_is_not_fresh(name, data, g):
    """After reset(), outputs differ from a fresh interpreter's (which runs CALL_ONCE)."""
    after = [c for c in g["calls"] if c["reset_before"]] + g["calls"][CALLS_BEFORE_RESET + 1:]
    ins = [[_unhex(h, d) for h, d in zip(c["inputs"], g["inputs"])] for c in after]
    fresh = _fresh_run(data, ins)
    same = [f[0].tobytes().hex() == c["outputs"][0] for f, c in zip(fresh, after)]
    assert not any(same), (name, same)
    return (f"{name}: the calls after reset() differ from the same inputs on a fresh "
            "interpreter (which runs CALL_ONCE first): reset() is not a fresh start")


def check_read_first(g):
    """READ_VARIABLE before the first ASSIGN_VARIABLE reads TFLM's fill: the zero point (-7)
    of the ASSIGN_VARIABLE value tensor; reset() fills it again; `old` is the last `new`."""
    d_old, d_new = g["outputs"]
    prev = None
    for k, c in enumerate(g["calls"]):
        old, new = _unhex(c["outputs"][0], d_old), _unhex(c["outputs"][1], d_new)
        if k == 0 or c["reset_before"]:
            assert (old == -7).all(), (k, old)
        else:
            assert (old == prev).all(), (k, old, prev)
        prev = new
    return ("var_read_first_int8: READ_VARIABLE before any ASSIGN_VARIABLE (no CALL_ONCE) reads "
            "-7 = the zero point of the ASSIGN_VARIABLE value tensor (memset of the int8 zero "
            "point); later calls read the last assigned value; after reset() -7 again")


def check_while_data(g):
    """float32 numpy replay of the loop, including 0 trips (outputs = the WHILE inputs)."""
    d_x = g["inputs"][0]
    zero_trips = 0
    for k, c in enumerate(g["calls"]):
        x = _unhex(c["inputs"][0], d_x)
        n, y, acc = np.int32(0), x.copy(), np.zeros_like(x)
        while np.abs(y).max() > np.float32(1.0):
            n, y, acc = np.int32(n + 1), (y * np.float32(0.5)).astype(np.float32), (acc + y).astype(np.float32)
        want = [np.array([n], np.int32).tobytes().hex(), y.tobytes().hex(), acc.tobytes().hex()]
        assert want == c["outputs"], f"call {k}"
        zero_trips += n == 0
    assert zero_trips >= 2
    return ("while_data: every output equals a float32 replay of cond/body; with 0 trips "
            "(calls 1 and 7) the outputs are the WHILE node's inputs (x and the constant zeros)")


def check_while_int8(g):
    """Integer replay of the trip count and y (MUL by 64 * 2^-7: y / 2 rounded half away from
    zero, TFLM's MultiplyByQuantizedMultiplier), and 0 trips = the inputs."""
    d_x, d_n, d_y, d_acc = g["inputs"][0], *g["outputs"]
    trips = set()
    for k, c in enumerate(g["calls"]):
        x = _unhex(c["inputs"][0], d_x).astype(np.int32)
        y, n = x.copy(), 0
        while np.abs(y).max() > WHILE_INT8_THRESHOLD:
            y, n = np.sign(y) * ((np.abs(y) + 1) // 2), n + 1
        assert int(_unhex(c["outputs"][0], d_n)) == n, (k, n)
        assert (_unhex(c["outputs"][1], d_y) == y).all(), (k, y)
        if n == 0:
            assert (_unhex(c["outputs"][2], d_acc) == 0).all(), k
        trips.add(n)
    assert 0 in trips and len(trips) >= 5, trips
    return ("while_int8: trip counts " + ", ".join(map(str, sorted(trips)))
            + "; n and y equal an integer replay (y / 2 rounded half away from zero); with 0 "
            "trips acc is the constant zeros input")


def _while_if_replay(x):
    """float32 replay of while_if_float; returns (y, branch string). SUM accumulates in order
    from 0, as TFLM's reference reduce does."""
    y, taken = x.astype(np.float32).copy(), ""
    for _ in range(4):
        acc = np.float32(0.0)
        for v in y.reshape(-1):
            acc = np.float32(acc + v)
        if acc > np.float32(0.0):
            y, taken = (y * np.float32(0.5) - np.float32(0.25)).astype(np.float32), taken + "T"
        else:
            y, taken = (y.reshape(-1)[::-1].reshape(1, 8) + np.float32(0.125)).astype(np.float32), taken + "F"
    return y, taken


def check_while_if(g):
    seen = set()
    for k, c in enumerate(g["calls"]):
        y, taken = _while_if_replay(_unhex(c["inputs"][0], g["inputs"][0]))
        assert y.tobytes().hex() == c["outputs"][0], k
        assert c["note"] == f"IF branches over the 4 trips: {taken}", (k, c["note"], taken)
        seen |= set(taken)
    assert seen == {"T", "F"}
    return ("while_if_float: every output equals a float32 replay (4 trips, the IF inside the "
            "body taking the branches given in each call's note)")


def check_while_counted(g):
    for k, c in enumerate(g["calls"]):
        assert _unhex(c["outputs"][0], g["outputs"][0]).tolist() == 5, k
    return "while_counted: the counter output is 5 on every call"


def check_if_branches(name, data, g):
    """The IF condition read back from a kPreserveAllTensors interpreter matches the intended
    branch of every call, and that interpreter gives the same outputs."""
    model = tc.load_model(data)
    sg = model.subgraphs[0]
    (if_op,) = [o for o in sg.operators if tc.op_code_name(model, o.opcodeIndex) == "IF"]
    cond = int(if_op.inputs[0])
    it = tc.runtime.Interpreter.from_bytes(
        data, arena_size=ARENA, intrepreter_config=tc.runtime.InterpreterConfig.kPreserveAllTensors)
    taken = []
    for k, c in enumerate(g["calls"]):
        if c["reset_before"]:
            it.reset()
        for i, (h, d) in enumerate(zip(c["inputs"], g["inputs"])):
            it.set_input(_unhex(h, d), i)
        it.invoke()
        assert [_hex(np.array(it.get_output(i)), d["dtype"]) for i, d in enumerate(g["outputs"])] == c["outputs"]
        b = bool(np.array(it.GetTensor(cond, 0)["tensor_data"]).reshape(-1)[0])
        assert ("then branch" in c["note"]) == b, (name, k, c["note"], b)
        taken.append(b)
    assert any(taken) and not all(taken)
    return (f"{name}: the IF condition (tensor {cond}, read back with kPreserveAllTensors) is "
            f"{''.join('T' if b else 'F' for b in taken)} over the calls, as intended")


def _in_child(fn):
    """Runs fn() in a forked child (TFLM may crash on the malformed models below); returns
    ("ok", value), ("error", message) or ("crash", signal)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            with tc.captured_stderr() as log:
                try:
                    res = ("ok", fn())
                except Exception as e:  # noqa: BLE001
                    res = ("error", str(e))
            if res[0] == "error":
                res = ("error", res[1] + " " + log["text"])
            with os.fdopen(w, "w") as f:
                f.write(json.dumps(res))
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return ("crash", os.WTERMSIG(status))
    return tuple(json.loads(text))


def _probe_model(extra):
    """main(x: float32[1,4]) -> ADD(x, x), plus whatever extra(mb, main, x, y) adds."""
    mb = Builder("Kiln control-flow probe")
    main = mb.subgraph("main")
    x = mb.tensor(main, [1, 4], "float32", "x")
    y = mb.tensor(main, [1, 4], "float32", "y")
    mb.op(main, "ADD", [x, x], [y], fb.AddOptionsT())
    main.inputs, main.outputs = [x], [y]
    extra(mb, main, x, y)
    return mb.finish()


def _invoke_all(data, xs):
    it = tc.make_interpreter(data, ARENA)
    outs = []
    for x in xs:
        it.set_input(x, 0)
        it.invoke()
        outs.append(np.array(it.get_output(0)).tolist())
    return outs


def check_probes():
    """Throwaway models (not committed) for what the committed ones cannot show."""
    ones = np.ones((1, 4), np.float32)
    facts = []

    def unused(bad):
        def extra(mb, main, x, y):
            u = mb.subgraph("unused")
            a = mb.tensor(u, [1, 4], "float32", "a")
            o = mb.tensor(u, [1, 4], "float32", "o")
            mb.op(u, "ADD", [a, a], [o], fb.AddOptionsT())
            if bad:
                mb.op(u, "CALL_ONCE", [], [], _opts(fb.CallOnceOptionsT, initSubgraphIndex=99))
            u.inputs, u.outputs = [a], [o]
        return _probe_model(extra)

    ok = _in_child(lambda: _invoke_all(unused(False), [ones]))
    assert ok == ("ok", [[[2.0] * 4]]), ok
    bad = _in_child(lambda: _invoke_all(unused(True), [ones]))
    assert bad[0] == "error" and "failed to prepare" in bad[1], bad
    facts.append("a subgraph no operator invokes is still prepared: a model whose unused "
                 "subgraph holds a CALL_ONCE with init index 99 fails to load (\"Node CALL_ONCE "
                 "(number 1) failed to prepare\"); with a valid unused subgraph the model runs")

    def if_arity(else_inputs):
        def extra(mb, main, x, y):
            main.operators.clear()
            c = mb.tensor(main, [], "bool", "c")
            s_ = mb.tensor(main, [], "float32", "s")
            zero = mb.tensor(main, [], "float32", "zero", data=0.0)
            axes = mb.tensor(main, [2], "int32", "axes", data=[0, 1])
            mb.op(main, "SUM", [x, axes], [s_], _opts(fb.ReducerOptionsT, keepDims=False))
            mb.op(main, "GREATER", [s_, zero], [c])
            mb.op(main, "IF", [c, x], [y], _opts(fb.IfOptionsT, thenSubgraphIndex=1, elseSubgraphIndex=2))
            for name, n in (("then", 1), ("else", else_inputs)):
                sg = mb.subgraph(name)
                ins = [mb.tensor(sg, [1, 4], "float32", f"a{i}") for i in range(n)]
                o = mb.tensor(sg, [1, 4], "float32", "o")
                mb.op(sg, "ADD", [ins[0], ins[0]], [o], fb.AddOptionsT())
                sg.inputs, sg.outputs = ins, [o]
        return _probe_model(extra)

    then_ok = _in_child(lambda: _invoke_all(if_arity(2), [ones]))
    assert then_ok == ("ok", [[[2.0] * 4]]), then_ok
    else_bad = _in_child(lambda: _invoke_all(if_arity(2), [-ones]))
    assert else_bad[0] == "error", else_bad
    facts.append("IF's Prepare checks the input/output counts against the then subgraph only: "
                 "an else subgraph with 2 inputs (the node passes 1) loads, runs the then "
                 "branch, and fails only when the else branch is invoked")

    def read_only(mb, main, x, y):
        main.operators.clear()
        h = mb.tensor(main, [], "resource", "handle")
        old = mb.tensor(main, [1, 4], "float32", "old")
        mb.op(main, "VAR_HANDLE", [], [h], _opts(fb.VarHandleOptionsT, container="", sharedName="v"))
        mb.op(main, "READ_VARIABLE", [h], [old])
        mb.op(main, "ADD", [old, x], [y], fb.AddOptionsT())

    never = _in_child(lambda: _invoke_all(_probe_model(read_only), [ones, 2 * ones]))
    assert never[0] == "ok", never
    facts.append("READ_VARIABLE of a variable no ASSIGN_VARIABLE ever writes loads and runs "
                 "without an error (the variable has 0 bytes; the READ output keeps whatever "
                 "the arena held)")
    return facts


def check_facts(models, goldens):
    return [
        check_if_branches("if_float", models["if_float"], goldens["if_float"]),
        check_if_branches("if_int8", models["if_int8"], goldens["if_int8"]),
        check_if_branches("if_int8_direct", models["if_int8_direct"], goldens["if_int8_direct"]),
        check_while_counted(goldens["while_counted"]),
        check_while_data(goldens["while_data"]),
        check_while_int8(goldens["while_int8"]),
        check_while_if(goldens["while_if_float"]),
        check_call_once_float(models["call_once_var_float"], goldens["call_once_var_float"]),
        check_reset_is_not_fresh("call_once_var", models["call_once_var"], goldens["call_once_var"]),
        check_reset_is_not_fresh(
            "call_once_var_float", models["call_once_var_float"], goldens["call_once_var_float"]),
        check_read_first(goldens["var_read_first_int8"]),
    ] + check_probes()


# --------------------------------------------------------------------------------------------
# README dump


def _s(v):
    return v.decode() if isinstance(v, bytes) else ("" if v is None else str(v))


def _tensor_line(model, si, ti):
    t = model.subgraphs[si].tensors[ti]
    d = tc.TYPE_NAMES[t.type]
    shape = "[" + ", ".join(str(int(s)) for s in (t.shape if t.shape is not None else [])) + "]"
    extra = []
    q = t.quantization
    if q is not None and q.scale is not None and len(q.scale):
        extra.append(f"q {float(q.scale[0]):.6g}/{int(q.zeroPoint[0])}")
    buf = model.buffers[t.buffer].data if t.buffer < len(model.buffers) else None
    if buf is not None and len(buf):
        extra.append(f"const {len(buf)} B")
    if t.isVariable:
        extra.append("variable")
    return f"{ti}: {d}{shape} `{_s(t.name)}`" + (f" ({', '.join(extra)})" if extra else "")


def _options(model, op):
    o = op.builtinOptions
    name = tc.op_code_name(model, op.opcodeIndex)
    if name == "IF":
        return f"then_subgraph_index={o.thenSubgraphIndex}, else_subgraph_index={o.elseSubgraphIndex}"
    if name == "WHILE":
        return f"cond_subgraph_index={o.condSubgraphIndex}, body_subgraph_index={o.bodySubgraphIndex}"
    if name == "CALL_ONCE":
        return f"init_subgraph_index={o.initSubgraphIndex}"
    if name == "VAR_HANDLE":
        return f"container={_s(o.container)!r}, shared_name={_s(o.sharedName)!r}"
    return ""


def dump(name, data, g):
    model = tc.load_model(data)
    lines = [f"### `{name}.tflite` ({len(data)} bytes)", ""]
    a = g["arena"]
    lines.append(
        f"TFLM arena (x86-64, print_allocations after the last call): head {a['head']} B, "
        f"tail {a['tail']} B, total {a['total']} B. Calls: "
        + "; ".join(
            ("reset, " if c["reset_before"] else "") + (c["note"] or "-") for c in g["calls"]
        )
        + "."
    )
    lines.append("")
    for si, sg in enumerate(model.subgraphs):
        lines.append(
            f"- subgraph {si} `{_s(sg.name)}`: inputs {list(map(int, sg.inputs if sg.inputs is not None else []))}, "
            f"outputs {list(map(int, sg.outputs if sg.outputs is not None else []))}"
        )
        lines.append("  - tensors: " + "; ".join(
            _tensor_line(model, si, ti) for ti in range(len(sg.tensors or []))))
        for oi, op in enumerate(sg.operators or []):
            opt = _options(model, op)
            ins = [int(i) for i in (op.inputs if op.inputs is not None else [])]
            outs = [int(i) for i in (op.outputs if op.outputs is not None else [])]
            lines.append(
                f"  - op {oi} {tc.op_code_name(model, op.opcodeIndex)}: in {ins} -> out {outs}"
                + (f" ({opt})" if opt else "")
            )
    lines.append("")
    return lines


def write_readme(sections):
    begin, end = "<!-- BEGIN GENERATED (tools/gen_control_flow_models.py) -->", "<!-- END GENERATED -->"
    body = "\n".join([begin, ""] + sections + [end])
    text = README.read_text() if README.exists() else f"# Control-flow test models\n\n{begin}\n{end}\n"
    i, j = text.index(begin), text.index(end) + len(end)
    README.write_text(text[:i] + body + text[j:])


def main():
    tf = _tf()
    models = {}
    models.update(if_models(tf))
    models.update(while_models(tf))
    models.update(nested_model(tf))
    models.update(call_once_models(tf))
    models["if_int8_direct"] = if_int8_direct_model()
    models["while_int8"] = while_int8_model()
    models["var_read_first_int8"] = var_read_first_model()
    OUT.mkdir(parents=True, exist_ok=True)
    sections, goldens = [], {}
    for name, data in models.items():
        (OUT / f"{name}.tflite").write_bytes(data)
        g = goldens[name] = golden(name, data, SEED + zlib.crc32(name.encode()))
        (OUT / f"{name}.json").write_text(json.dumps(g, indent=1) + "\n")
        sections += dump(name, data, g)
        print(f"{name}: {len(data)} B, {len(g['calls'])} calls, arena {g['arena']}", flush=True)
    facts = check_facts(models, goldens)
    sections += ["### Checked against the wheel on every run", ""]
    sections += [f"- {f}" for f in facts] + [""]
    for f in facts:
        print("checked:", f)
    write_readme(sections)


if __name__ == "__main__":
    sys.exit(main())
