"""Shared helpers for Kiln's tools/ scripts (not a script itself).

- reading a .tflite flatbuffer (op names, tensor details) with the schema module shipped in
  the pinned `tflite-micro` package;
- running the pinned TFLM Python interpreter, with its C++ stderr captured;
- writing golden data in the format of ../shared/models/golden/ (golden.json + raw .bin).

Imported by the scripts in this folder; they run as `.venv/bin/python tools/<script>.py` from
the repository root, which puts tools/ on sys.path.
"""

import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from tflite_micro import runtime
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema_fb

REPO = Path(__file__).resolve().parent.parent
SHARED_MODELS = REPO.parent / "shared" / "models"

GOLDEN_PROTOCOL = (
    "per sample: all variable (state) tensors reset to zero, inputs written, one invoke; "
    "raw little-endian tensor bytes"
)
GOLDEN_SEEDS = (1, 2, 3)

OP_NAMES = {
    v: k for k, v in vars(schema_fb.BuiltinOperator).items() if not k.startswith("_")
}
TYPE_NAMES = {
    v: k.lower() for k, v in vars(schema_fb.TensorType).items() if not k.startswith("_")
}
NP_DTYPES = {
    "float32": np.float32,
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "bool": np.bool_,
    "uint32": np.uint32,
    "uint64": np.uint64,
}


def load_model(data):
    """Parses .tflite bytes into the object API (schema_fb.ModelT)."""
    return schema_fb.ModelT.InitFromObj(schema_fb.Model.GetRootAsModel(bytearray(data), 0))


def op_code_name(model, opcode_index):
    oc = model.operatorCodes[opcode_index]
    code = max(oc.builtinCode, oc.deprecatedBuiltinCode)
    if code == schema_fb.BuiltinOperator.CUSTOM:
        cc = oc.customCode
        return "CUSTOM:" + (cc.decode() if isinstance(cc, bytes) else str(cc))
    return OP_NAMES[code]


def op_names(model, subgraph=0):
    """Op names of a subgraph, in stored order."""
    ops = model.subgraphs[subgraph].operators or []
    return [op_code_name(model, o.opcodeIndex) for o in ops]


def _name(n):
    return n.decode() if isinstance(n, bytes) else (n or "")


def tensor_details(model, tensor_index, subgraph=0):
    """One golden.json tensor entry (same keys as ../shared/models/golden)."""
    t = model.subgraphs[subgraph].tensors[tensor_index]
    dtype = TYPE_NAMES[t.type]
    shape = [int(d) for d in (t.shape if t.shape is not None else [])]
    q = t.quantization
    quant = None
    if q is not None and q.scale is not None and len(q.scale) > 0:
        quant = {
            "scale": [float(s) for s in q.scale],
            "zero_point": [int(z) for z in q.zeroPoint],
            "quantized_dimension": int(q.quantizedDimension),
        }
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(NP_DTYPES[dtype]).itemsize
    return {
        "tensor_index": int(tensor_index),
        "name": _name(t.name),
        "shape": shape,
        "dtype": dtype,
        "bytes": int(nbytes),
        "quantization": quant,
    }


@contextlib.contextmanager
def captured_stderr():
    """Redirects fd 2 (where TFLM's C++ side prints) into a buffer.

    Yields a dict whose "text" key holds the captured output after the block.
    """
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


def make_interpreter(data, arena_size):
    """TFLM interpreter for .tflite bytes; raises RuntimeError (with TFLM's log) on failure."""
    with captured_stderr() as log:
        try:
            return runtime.Interpreter.from_bytes(bytes(data), arena_size=arena_size)
        except RuntimeError as e:
            err = e
    raise RuntimeError(f"{err}\n{log['text']}".strip())


def random_input(rng, shape, dtype):
    """Seeded random input over the dtype's range, as for ../shared/models/golden:
    integers over the full range, floats uniform in [-1, 1)."""
    dt = np.dtype(NP_DTYPES[dtype])
    if dt.kind == "f":
        return rng.uniform(-1.0, 1.0, size=shape).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dt)
    info = np.iinfo(dt)
    if dt == np.uint64:  # beyond int64: drawn in its own dtype
        return rng.integers(0, int(info.max), endpoint=True, size=shape, dtype=dt)
    return rng.integers(int(info.min), int(info.max) + 1, size=shape).astype(dt)


def run_tflm(interp, inputs, n_outputs):
    """Golden protocol for one sample: reset state, write inputs, one invoke; returns outputs."""
    interp.reset()
    for i, x in enumerate(inputs):
        interp.set_input(x, i)
    interp.invoke()
    return [np.array(interp.get_output(i)) for i in range(n_outputs)]


def write_golden(model_path, out_dir, arena_size=1 << 20, seeds=GOLDEN_SEEDS):
    """Writes out_dir/golden.json and s<seed>_in<i>.bin / s<seed>_out<i>.bin for a model."""
    data = Path(model_path).read_bytes()
    model = load_model(data)
    sg = model.subgraphs[0]
    ins = [tensor_details(model, t) for t in sg.inputs]
    outs = [tensor_details(model, t) for t in sg.outputs]
    interp = make_interpreter(data, arena_size)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    samples = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        xs = [random_input(rng, d["shape"], d["dtype"]) for d in ins]
        ys = run_tflm(interp, xs, len(outs))
        in_files, out_files = [], []
        for i, x in enumerate(xs):
            f = f"s{seed}_in{i}.bin"
            (out_dir / f).write_bytes(np.ascontiguousarray(x).astype(x.dtype.newbyteorder("<")).tobytes())
            in_files.append(f)
        for i, (y, d) in enumerate(zip(ys, outs)):
            y = np.ascontiguousarray(y, dtype=NP_DTYPES[d["dtype"]])
            if y.nbytes != d["bytes"]:
                raise RuntimeError(f"{model_path}: output {i} has {y.nbytes} bytes, expected {d['bytes']}")
            f = f"s{seed}_out{i}.bin"
            (out_dir / f).write_bytes(y.astype(y.dtype.newbyteorder("<")).tobytes())
            out_files.append(f)
        samples.append({"seed": seed, "inputs": in_files, "outputs": out_files})
    golden = {
        "protocol": GOLDEN_PROTOCOL,
        "model": Path(model_path).name,
        "inputs": ins,
        "outputs": outs,
        "samples": samples,
    }
    (out_dir / "golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    return golden
