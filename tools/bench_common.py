"""Shared helpers for the benchmark scripts tools/bench_*.py (not a script itself).

- machine description (nproc, CPU model) for the BENCHMARKS.md sections;
- timing TFLM's invoke(): medians of batch means, after warm-up, in CPU time of the calling
  thread (CLOCK_THREAD_CPUTIME_ID: TFLM runs in the caller's thread; time while the process
  is descheduled by other jobs on the shared machine does not count);
- a model without operators (the floor of invoke() from Python);
- a model with K copies of its one operator (for TFLM's per-operator time without the
  Python and interpreter call overhead: (t_K - t_1) / (K - 1)).

The scripts run as `.venv/bin/python tools/<script>.py` from the repository root.
"""

import copy
import os
import platform
import statistics
import sys
import time

import flatbuffers

import tflite_common as tc
from tflite_common import schema_fb as fb

try:
    from tflite_micro import __version__ as TFLM_VERSION
except ImportError:  # pragma: no cover
    TFLM_VERSION = "unknown"


def serve(handlers):
    """Request loop for a benchmark that interleaves its timings with ours: prints `ready`,
    then for each stdin line `<command> <args...>` calls handlers[command](*args) and prints
    `ok` (`ok <value>` when the handler returns a value other than None), until a line `done`
    (or end of input)."""
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "done":
            return
        value = handlers[words[0]](*words[1:])
        print("ok" if value is None else f"ok {value!r}", flush=True)


def machine():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": cpu, "arch": platform.machine()}


def now_ns():
    """CPU time of this thread in ns (the clock of every timing here)."""
    return time.thread_time_ns()


def batch_mean(fn, n):
    """Mean CPU time of one call over a batch of n calls, in seconds."""
    t0 = now_ns()
    for _ in range(n):
        fn()
    return (now_ns() - t0) / n * 1e-9


def batch_size(fn, target_s):
    """Calls per batch so that one batch takes about target_s (at least 1)."""
    t = batch_mean(fn, 1)
    n = 1
    while t * n < target_s and n < 1 << 20:
        n *= 2
        t = batch_mean(fn, n)
    return max(1, int(round(n * target_s / max(t * n, 1e-9))))


def median_invoke(fn, rounds=21, target_s=0.002, warmup=3):
    """Median over `rounds` batches of the mean time of one call (seconds)."""
    for _ in range(warmup):
        fn()
    n = batch_size(fn, target_s)
    return statistics.median(batch_mean(fn, n) for _ in range(rounds)), n


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


def pack(model):
    """Serializes a schema_fb.ModelT with 16-byte aligned buffers."""
    bufs = []
    for b in model.buffers:
        a = AlignedBufferT()
        a.data = b.data
        bufs.append(a)
    model.buffers = bufs
    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def k_copies(data, k):
    """The single-operator model `data` with its operator repeated k times: every copy reads
    the same input and constant tensors and writes its own output tensor (a graph output)."""
    m = tc.load_model(data)
    sg = m.subgraphs[0]
    assert len(sg.operators) == 1, "a single-operator model"
    op0 = sg.operators[0]
    ops = [op0]
    for _ in range(1, k):
        op = copy.deepcopy(op0)
        outs = []
        for t in op0.outputs:
            nt = copy.deepcopy(sg.tensors[t])
            sg.tensors.append(nt)
            outs.append(len(sg.tensors) - 1)
        op.outputs = outs
        sg.outputs = list(sg.outputs) + outs
        ops.append(op)
    sg.operators = ops
    return pack(m)


def empty_model():
    """A model without operators: one int8 [1] tensor that is both input and output (TFLM
    accepts it; its invoke() from Python is the floor of every invoke time)."""
    m = fb.ModelT()
    m.version = 3
    m.operatorCodes = []
    t = fb.TensorT()
    t.shape = [1]
    t.type = fb.TensorType.INT8
    t.buffer = 0
    q = fb.QuantizationParametersT()
    q.scale, q.zeroPoint, q.quantizedDimension = [1.0], [0], 0
    t.quantization = q
    sg = fb.SubGraphT()
    sg.tensors = [t]
    sg.inputs = [0]
    sg.outputs = [0]
    sg.operators = []
    m.subgraphs = [sg]
    m.buffers = [fb.BufferT()]
    return pack(m)
