"""Kernel cases for the reductions and indexing operators (Kiln's kernels `reduce`, ...).

Every case is a single-operator model run once in the pinned TFLM (see gen_kernel_cases.py).

SUM, REDUCE_MAX, REDUCE_MIN (bundles sum_*, reduce_max_*, reduce_min_*): inputs of rank 1-4
with dims 1-6 (a few hundred bytes), axes drawn as a non-empty subset of the dims (sometimes
repeated, stored negative with probability 0.3, in random order), keep_dims at random.
float32 inputs are uniform in [-1, 1) with 10% special values (0, -0, +-inf, NaN, denormals,
+-3e38) so that the NaN and infinity rules of TFLM's reducers are exercised. SUM int8/int16
requantize: the output quantization is calibrated from the float twin (widened or narrowed at
random so some outputs saturate); int8 zero points at the extremes, int16 symmetric. In 20%
of the int8/int16 SUM cases the output keeps the input quantization. REDUCE_MAX/REDUCE_MIN
int8 keep the input quantization (TFLM requires it). Types are those the pinned TFLM runs:
SUM float32/int8/int16, REDUCE_MAX/REDUCE_MIN float32/int8.

ARG_MAX, ARG_MIN (arg_max_*, arg_min_*): float32 or int8 inputs of rank 1-4, int32 outputs
(TFLM runs no other types), the axis a constant int32 scalar or one-element vector, stored
negative with probability 0.3. Ties are common: float inputs have 15% special values
(including NaN at any index) and in half the cases are drawn from a few values; int8 inputs
are drawn from [-3, 3] in half the cases.
"""

import numpy as np


def _axes(g, rng, rank):
    k = int(rng.integers(1, rank + 1))
    axes = [int(a) for a in rng.choice(rank, size=k, replace=False)]
    if rng.random() < 0.2:
        axes.append(int(rng.choice(axes)))  # a duplicate
    rng.shuffle(axes)
    return sorted(set(axes)), [a - rank if rng.random() < 0.3 else a for a in axes]


def _reduce(g, op, rng, dt, same_quant):
    rank = int(rng.integers(1, 5))
    shape = g.rand_shape(rng, rank, 6, max(1, g.IO_SMALL // (2 * g.esize(dt))))
    axes, stored = _axes(g, rng, rank)
    keep = bool(rng.random() < 0.5)
    out = [1 if i in axes else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in axes]
    gr = g.Graph(op, *g.opts("ReducerOptions", keepDims=keep))
    xq = g.act_quant(rng, dt)
    gr.input(shape, dt, xq)
    gr.const(np.array(stored, np.int32), "int32", name="axis")
    gr.output(out, dt, xq if same_quant else None)
    if dt == "float32":
        gr.specials = 0.1
    return gr


def gen_sum(g):
    def gen(rng, dt):
        return _reduce(g, "SUM", rng, dt, dt != "float32" and rng.random() < 0.2)
    return gen


def gen_max_min(g, op):
    def gen(rng, dt):
        return _reduce(g, op, rng, dt, dt != "float32")
    return gen


def _arg(g, op, rng, dt):
    rank = int(rng.integers(1, 5))
    shape = g.rand_shape(rng, rank, 6, max(1, g.IO_SMALL // 8))
    axis = int(rng.integers(0, rank))
    stored = axis - rank if rng.random() < 0.3 else axis
    cls = "ArgMaxOptions" if op == "ARG_MAX" else "ArgMinOptions"
    gr = g.Graph(op, *g.opts(cls, outputType=g.TYPE["int32"]))
    gr.input(shape, dt, g.in_quant(rng) if dt == "int8" else None)
    gr.const(np.array(stored if rng.random() < 0.5 else [stored], np.int32), "int32", name="axis")
    gr.output([d for i, d in enumerate(shape) if i != axis], "int32")
    if dt == "float32":
        gr.specials = 0.15
        if rng.random() < 0.5:
            gr.float_inputs = [(-1.0, -0.999)]  # nearly equal values
    elif rng.random() < 0.5:
        gr.int_ranges = {0: (-3, 3)}
    return gr


def gen_arg(g, op):
    def gen(rng, dt):
        return _arg(g, op, rng, dt)
    return gen


def register(g):
    return [
        ("sum", "SUM", gen_sum(g), ("int8", "float32", "int16")),
        ("reduce_max", "REDUCE_MAX", gen_max_min(g, "REDUCE_MAX"), ("int8", "float32")),
        ("reduce_min", "REDUCE_MIN", gen_max_min(g, "REDUCE_MIN"), ("int8", "float32")),
        ("arg_max", "ARG_MAX", gen_arg(g, "ARG_MAX"), ("int8", "float32")),
        ("arg_min", "ARG_MIN", gen_arg(g, "ARG_MIN"), ("int8", "float32")),
    ]
