"""Shared helpers of the tools/kernel_check_<op>.py scripts (not a script itself).

Each kernel_check script builds small single-operator models with the TF converter, runs them
in the pinned TFLM interpreter on seeded random inputs and writes the cases (op parameters read
back from the converted model, inputs, TFLM's outputs) in a small text format that the Rust
test `kernels/tests/tflm/` parses:

    case <name>
    <key> <kind> <values...>      kind: i = integers, f = f32 as 8-hex-digit bit patterns,
    ...                                 s = one word
    end

Every script accepts:
    --n N        number of random models per configuration (default: script-specific)
    --out FILE   where to write all cases (default /tmp/kiln_kernel_check/<op>.cases)
    --emit K     also write the K smallest cases to kernels/tests/tflm/data/<op>.cases (the
                 cases hardcoded in the repository's Rust test)
    --cargo      then run the Rust test on FILE (KILN_TFLM_CASES=<dir of FILE>)

Run from the repository root: .venv/bin/python tools/kernel_check_<op>.py [--emit 8] --cargo
"""

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import flatbuffers  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tflite_micro.python.tflite_micro import runtime  # noqa: E402
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DATA_DIR = REPO / "kernels" / "tests" / "tflm" / "data"
DEFAULT_OUT_DIR = Path("/tmp/kiln_kernel_check")

OP_NAMES = {v: k for k, v in vars(fb.BuiltinOperator).items() if not k.startswith("_")}
TYPE_NAMES = {v: k.lower() for k, v in vars(fb.TensorType).items() if not k.startswith("_")}
NP_DTYPES = {
    "float32": np.float32,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "bool": np.bool_,
}


@contextlib.contextmanager
def quiet_fd2():
    """Silences the C++ side (converter/TFLM logging on fd 2); keeps the text for errors."""
    out = {"text": ""}
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out["text"] = tmp.read().decode(errors="replace")


# --------------------------------------------------------------------------------------------
# Conversion


def convert(fn, input_specs, mode, rep_inputs=None, rng=None, rep_range=(-1.0, 1.0)):
    """Converts a tf.function to .tflite bytes.

    input_specs: list of (shape, tf dtype). mode: "float32", "int8" (full-integer, int8 I/O),
    "16x8" (int16 activations, int8 weights, int16 I/O) or "none" (no optimization, used for
    non-float ops such as CAST). rep_inputs: callable(rng) -> list of arrays for calibration
    (default uniform in rep_range)."""
    specs = [tf.TensorSpec(s, d) for s, d in input_specs]
    tf_fn = tf.function(fn, input_signature=specs)
    cf = tf_fn.get_concrete_function()
    conv = tf.lite.TFLiteConverter.from_concrete_functions([cf], tf_fn)
    if mode in ("int8", "16x8"):
        rng = rng or np.random.default_rng(0)

        def rep():
            for _ in range(24):
                if rep_inputs is not None:
                    yield rep_inputs(rng)
                else:
                    yield [rng.uniform(*rep_range, size=s).astype(np.float32) for s, _ in input_specs]

        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep
        if mode == "int8":
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            conv.inference_input_type = tf.int8
            conv.inference_output_type = tf.int8
        else:
            conv.target_spec.supported_ops = [
                tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
            ]
            conv.inference_input_type = tf.int16
            conv.inference_output_type = tf.int16
    with quiet_fd2() as log:
        try:
            return conv.convert()
        except Exception as e:  # noqa: BLE001
            raise RuntimeError(f"conversion failed: {e}\n{log['text'][-2000:]}") from e


# --------------------------------------------------------------------------------------------
# Reading and editing models


class AlignedBufferT(fb.BufferT):
    """BufferT whose data vector is 16-byte aligned (as the converter writes it)."""

    def Pack(self, builder):
        data = None
        if self.data is not None and len(self.data):
            raw = bytes(bytearray(self.data))
            builder.StartVector(1, len(raw), 16)
            builder.head = builder.head - len(raw)
            builder.Bytes[builder.head:builder.head + len(raw)] = raw
            data = builder.EndVector()
        fb.BufferStart(builder)
        if data is not None:
            fb.BufferAddData(builder, data)
        return fb.BufferEnd(builder)


def load(data):
    return fb.ModelT.InitFromObj(fb.Model.GetRootAsModel(bytearray(data), 0))


def save(model):
    for b in model.buffers or []:
        b.__class__ = AlignedBufferT
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


class TensorInfo:
    def __init__(self, model, index):
        sg = model.subgraphs[0]
        t = sg.tensors[index]
        self.index = index
        self.shape = [int(d) for d in (t.shape if t.shape is not None else [])]
        self.dtype = TYPE_NAMES[t.type]
        q = t.quantization
        if q is not None and q.scale is not None and len(q.scale) > 0:
            self.scales = np.array(q.scale, dtype=np.float32)
            self.zero_points = [int(z) for z in q.zeroPoint]
            self.quantized_dimension = int(q.quantizedDimension)
        else:
            self.scales = None
            self.zero_points = None
            self.quantized_dimension = 0
        buf = model.buffers[t.buffer] if t.buffer < len(model.buffers) else None
        if buf is not None and buf.data is not None and len(buf.data) > 0:
            raw = bytes(bytearray(buf.data))
            self.data = np.frombuffer(raw, dtype=NP_DTYPES[self.dtype]).reshape(self.shape)
        else:
            self.data = None

    @property
    def scale(self):
        return float(self.scales[0])

    @property
    def zero_point(self):
        return self.zero_points[0]


class SingleOp:
    """The one operator of a converted model."""

    def __init__(self, data):
        self.bytes = data
        self.model = load(data)
        sg = self.model.subgraphs[0]
        ops = sg.operators or []
        self.op_names = []
        for o in ops:
            oc = self.model.operatorCodes[o.opcodeIndex]
            self.op_names.append(OP_NAMES[max(oc.builtinCode, oc.deprecatedBuiltinCode)])
        self.op = ops[0] if len(ops) == 1 else None
        self.name = self.op_names[0] if len(ops) == 1 else None
        self.options = self.op.builtinOptions if self.op is not None else None
        self.inputs = [TensorInfo(self.model, i) if i >= 0 else None for i in self.op.inputs] if self.op else []
        self.outputs = [TensorInfo(self.model, i) for i in self.op.outputs] if self.op else []
        self.graph_inputs = [TensorInfo(self.model, i) for i in sg.inputs]
        self.graph_outputs = [TensorInfo(self.model, i) for i in sg.outputs]


def set_quantization(data, tensor_index, scale, zero_point):
    """Returns the model with one tensor's (per-tensor) quantization replaced."""
    m = load(data)
    t = m.subgraphs[0].tensors[tensor_index]
    q = fb.QuantizationParametersT()
    q.scale = [float(scale)]
    q.zeroPoint = [int(zero_point)]
    q.quantizedDimension = 0
    t.quantization = q
    return save(m)


def edit(data, fn):
    """Returns the model after fn(ModelT) edits it in place."""
    m = load(data)
    fn(m)
    return save(m)


# --------------------------------------------------------------------------------------------
# Running TFLM


def run_tflm(data, inputs, n_outputs=1, arena_size=1 << 20):
    with quiet_fd2() as log:
        try:
            ip = runtime.Interpreter.from_bytes(bytes(data), arena_size=arena_size)
            ip.reset()
            for i, x in enumerate(inputs):
                ip.set_input(x, i)
            ip.invoke()
            outs = [np.array(ip.get_output(i)) for i in range(n_outputs)]
        except Exception as e:  # noqa: BLE001
            err = e
        else:
            err = None
    if err is not None:
        raise RuntimeError(f"TFLM failed: {err}\n{log['text'][-2000:]}")
    return outs


def random_tensor(rng, shape, dtype, lo=None, hi=None):
    dt = np.dtype(NP_DTYPES[dtype])
    if dt.kind == "f":
        return rng.uniform(-1.0 if lo is None else lo, 1.0 if hi is None else hi, size=shape).astype(dt)
    info = np.iinfo(dt)
    lo = int(info.min) if lo is None else lo
    hi = int(info.max) if hi is None else hi
    return rng.integers(lo, hi + 1, size=shape).astype(dt)


# --------------------------------------------------------------------------------------------
# Case files


def _fmt(value):
    if isinstance(value, str):
        return "s", [value]
    if isinstance(value, (bool, np.bool_)):
        return "i", [str(int(value))]
    if isinstance(value, (int, np.integer)):
        return "i", [str(int(value))]
    if isinstance(value, (float, np.floating)):
        return "f", ["%08x" % np.float32(value).view(np.uint32)]
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        a32 = arr.astype(np.float32).reshape(-1)
        return "f", ["%08x" % v for v in a32.view(np.uint32)]
    if arr.dtype.kind in "iub":
        return "i", [str(int(v)) for v in arr.reshape(-1)]
    raise TypeError(f"cannot write {value!r}")


def format_case(name, fields):
    assert "case" not in fields and "end" not in fields, "reserved field name"
    lines = [f"case {name}"]
    for k, v in fields.items():
        if v is None:
            continue
        kind, vals = _fmt(v)
        lines.append(" ".join([k, kind] + vals))
    lines.append("end")
    return "\n".join(lines) + "\n"


class Cases:
    def __init__(self, op):
        self.op = op
        self.items = []  # (size, text)

    def add(self, name, size, **fields):
        self.items.append((size, format_case(name, fields)))

    def write(self, path):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(t for _, t in self.items))
        return path

    def write_smallest(self, k):
        """Writes k small cases spread over the configurations to the repository's data dir."""
        # Keep the generation order (configurations interleave) but prefer small cases.
        chosen = []
        # Prefer cases of a few dozen elements: big enough to be interesting, small to embed.
        order = sorted(range(len(self.items)), key=lambda i: abs(self.items[i][0] - 24))
        # Round-robin over names' configuration prefixes so every configuration is represented.
        by_cfg = {}
        for i in order:
            cfg = self.items[i][1].split("\n", 1)[0].split()[1].rsplit("_", 1)[0]
            by_cfg.setdefault(cfg, []).append(i)
        # Size-0 cases are always embedded (fixed boundary cases).
        chosen = [i for i in range(len(self.items)) if self.items[i][0] == 0]
        for v in by_cfg.values():
            v[:] = [i for i in v if i not in chosen]
        k += len(chosen)
        while len(chosen) < min(k, len(self.items)):
            for cfg in list(by_cfg):
                if by_cfg[cfg] and len(chosen) < k:
                    chosen.append(by_cfg[cfg].pop(0))
        chosen.sort()
        path = DATA_DIR / f"{self.op}.cases"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(self.items[i][1] for i in chosen))
        return path


def main(op, generate, default_n):
    """Common CLI: generate(cases, n, rng) fills `cases`."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=default_n)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(DEFAULT_OUT_DIR / f"{op}.cases"))
    ap.add_argument("--emit", type=int, default=0)
    ap.add_argument("--cargo", action="store_true")
    args = ap.parse_args()
    cases = Cases(op)
    generate(cases, args.n, np.random.default_rng(args.seed))
    out = cases.write(args.out)
    print(f"{op}: {len(cases.items)} cases -> {out}")
    if args.emit:
        print(f"{op}: embedded cases -> {cases.write_smallest(args.emit)}")
    if args.cargo:
        env = dict(os.environ)
        env["KILN_TFLM_CASES"] = str(Path(args.out).resolve().parent)
        env.setdefault("CARGO_TARGET_DIR", str(REPO / "target" / "kernels2"))
        cmd = ["cargo", "test", "-q", "-p", "kiln-kernels", "--test", "tflm", "--", op, "--nocapture"]
        print(" ".join(cmd))
        r = subprocess.run(cmd, cwd=REPO, env=env)
        sys.exit(r.returncode)


# --------------------------------------------------------------------------------------------
# Model edits shared by several scripts


def bias_variant(data, variant, bias_input=2):
    """variant: "int64" (unchanged), "int32" (the int64 bias tensor retyped to int32; None if a
    value does not fit) or "none" (bias input replaced by -1, i.e. absent)."""
    if variant == "int64":
        return data
    m = load(data)
    op = m.subgraphs[0].operators[0]
    if variant == "none":
        op.inputs = list(op.inputs)
        op.inputs[bias_input] = -1
        return save(m)
    t = m.subgraphs[0].tensors[op.inputs[bias_input]]
    buf = m.buffers[t.buffer]
    vals = np.frombuffer(bytes(bytearray(buf.data)), dtype="<i8")
    if np.any(vals > 2**31 - 1) or np.any(vals < -(2**31)):
        return None
    t.type = fb.TensorType.INT32
    buf.data = vals.astype("<i4").tobytes()
    return save(m)


def activation_name(code):
    return {0: "none", 1: "relu", 2: "relu_n1_to_1", 3: "relu6", 4: "tanh", 5: "sign_bit"}[code]


def padding_name(code):
    return {0: "same", 1: "valid"}[code]


def apply_activation(y, act):
    if act == "relu":
        return tf.nn.relu(y)
    if act == "relu6":
        return tf.nn.relu6(y)
    if act == "relu_n1_to_1":
        return tf.clip_by_value(y, -1.0, 1.0)
    return y


def degenerate_multiplier(input_scale, filter_scales, output_scale):
    """True when some requantization multiplier is >= 64 (an output range calibrated to
    ~nothing, e.g. RELU of all-negative values): outside what TFLM's int16 kernels support."""
    eff = float(input_scale) * np.asarray(filter_scales, dtype=np.float64) / float(output_scale)
    return bool(np.any(eff >= 64.0))


SPECIAL_FLOATS = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 1e-30, 3e38, -3e38, 1.0, -1.0],
    dtype=np.float32,
)


def float_input(rng, shape, spread, specials=False):
    """Uniform in [-spread, spread), a tenth replaced by special values when `specials`."""
    x = rng.uniform(-spread, spread, size=shape).astype(np.float32)
    if specials and x.size:
        mask = rng.uniform(size=shape) < 0.1
        x[mask] = rng.choice(SPECIAL_FLOATS, size=int(mask.sum()))
    return x
