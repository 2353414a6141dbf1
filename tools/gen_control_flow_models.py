"""Control-flow test models (IF, WHILE, CALL_ONCE with resource variables) and their TFLM goldens.

Writes to tests/control_flow/:
  if_float.tflite, if_int8.tflite    tf.cond on sum(x) > 0; the branches do different arithmetic
                                     (FULLY_CONNECTED, RESHAPE, ADD, MUL, SUB); int8 I/O for
                                     if_int8 (the converter keeps float32 at the IF boundary)
  while_counted.tflite               tf.while_loop with 5 trips carrying a counter and a tensor
  while_data.tflite                  tf.while_loop halving a tensor until max|y| <= 1
                                     (0 to ~10 trips depending on the input), accumulating
  call_once_var.tflite               resource variables (tf.Variable in a tf.Module): CALL_ONCE
                                     runs the init subgraph (VAR_HANDLE + ASSIGN_VARIABLE), main
                                     reads, updates and assigns them; int8 I/O
  call_once_var_float.tflite         the same model with float32 I/O
  var_read_first_int8.tflite         built with the schema object API (no converter): READ_VARIABLE
                                     before the one ASSIGN_VARIABLE, no CALL_ONCE; an int8 resource
                                     variable with a non-zero zero point (what TFLM fills it with)
  <model>.json                       golden data of every model (format below)
  README.md                          the part between the GENERATED markers (model dumps)

The WHILE models are float32: full-integer conversion of a tf.while_loop crashes the pinned
converter (SIGSEGV while calibrating; tried with TensorFlow 2.20).

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
Deterministic (fixed seeds; the converter's output is byte-identical across runs). ~20 s.
"""

import json
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import flatbuffers  # noqa: E402
import numpy as np  # noqa: E402

import tflite_common as tc  # noqa: E402
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
# A model from the schema object API: READ_VARIABLE before ASSIGN_VARIABLE


def _opcode(name):
    code = getattr(fb.BuiltinOperator, name)
    oc = fb.OperatorCodeT()
    oc.builtinCode = code
    oc.deprecatedBuiltinCode = min(code, 127)
    oc.version = 1
    return oc


def var_read_first_model():
    """main(x: int8[1,4]) -> (old: int8[1,4], new: int8[1,4]):
    h = VAR_HANDLE("state"); old = READ_VARIABLE(h); new = ADD(old, x); ASSIGN_VARIABLE(h, new).
    One subgraph, no CALL_ONCE: the variable's first value is TFLM's fill (the zero point of the
    ASSIGN_VARIABLE value tensor, here -7)."""
    q = fb.QuantizationParametersT()
    q.scale = [0.05]
    q.zeroPoint = [-7]
    q.quantizedDimension = 0

    def tensor(shape, ttype, name, quant=True):
        t = fb.TensorT()
        t.shape = list(shape)
        t.type = ttype
        t.buffer = 0
        t.name = name
        if quant:
            t.quantization = q
        return t

    tensors = [
        tensor([1, 4], fb.TensorType.INT8, "x"),
        tensor([], fb.TensorType.RESOURCE, "handle", quant=False),
        tensor([1, 4], fb.TensorType.INT8, "old"),
        tensor([1, 4], fb.TensorType.INT8, "new"),
    ]
    ops = []

    def op(opcode, ins, outs, opt_type, opt):
        o = fb.OperatorT()
        o.opcodeIndex = opcode
        o.inputs = ins
        o.outputs = outs
        o.builtinOptionsType = opt_type
        o.builtinOptions = opt
        ops.append(o)

    vh = fb.VarHandleOptionsT()
    vh.container = ""
    vh.sharedName = "state"
    op(0, [], [1], fb.BuiltinOptions.VarHandleOptions, vh)
    op(1, [1], [2], fb.BuiltinOptions.NONE, None)
    add = fb.AddOptionsT()
    op(2, [2, 0], [3], fb.BuiltinOptions.AddOptions, add)
    op(3, [1, 3], [], fb.BuiltinOptions.NONE, None)
    sg = fb.SubGraphT()
    sg.tensors = tensors
    sg.inputs = [0]
    sg.outputs = [2, 3]
    sg.operators = ops
    sg.name = "main"
    m = fb.ModelT()
    m.version = 3
    m.description = "Kiln control-flow test: READ_VARIABLE before ASSIGN_VARIABLE"
    m.operatorCodes = [_opcode(n) for n in ("VAR_HANDLE", "READ_VARIABLE", "ADD", "ASSIGN_VARIABLE")]
    m.subgraphs = [sg]
    m.buffers = [fb.BufferT()]
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


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


def if_inputs(ins, rng):
    """Branch pattern then, else, else, then, then, else | reset | then, else; the predicate
    sum(x) > 0 is kept at least 0.1 away from 0 (after quantization) so it is unambiguous."""
    (d,) = ins
    calls = []
    for want in (True, False, False, True, True, False, True, False):
        while True:
            v = rng.uniform(-1.0, 1.0, size=d["shape"]).astype(np.float32)
            if (v.sum() > 0) != want:
                v = -v
            x = _quantize(v, d)
            s = float(_dequantize(x, d).sum())
            if abs(s) > 0.1 and (s > 0) == want:
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


def check_facts(models, goldens):
    return [
        check_if_branches("if_float", models["if_float"], goldens["if_float"]),
        check_if_branches("if_int8", models["if_int8"], goldens["if_int8"]),
        check_while_counted(goldens["while_counted"]),
        check_while_data(goldens["while_data"]),
        check_call_once_float(models["call_once_var_float"], goldens["call_once_var_float"]),
        check_reset_is_not_fresh("call_once_var", models["call_once_var"], goldens["call_once_var"]),
        check_reset_is_not_fresh(
            "call_once_var_float", models["call_once_var_float"], goldens["call_once_var_float"]),
        check_read_first(goldens["var_read_first_int8"]),
    ]


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
    models.update(call_once_models(tf))
    models["var_read_first_int8"] = var_read_first_model()
    OUT.mkdir(parents=True, exist_ok=True)
    sections, goldens = [], {}
    for k, (name, data) in enumerate(models.items()):
        (OUT / f"{name}.tflite").write_bytes(data)
        g = goldens[name] = golden(name, data, SEED + 100 + k)
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
