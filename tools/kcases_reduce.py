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
SUM float32/int8/int16, REDUCE_MAX/REDUCE_MIN float32/int8. In 15% of the cases the axis is a
runtime input holding one axis (drawn so that the output shape determines it, else redrawn
as a constant). MEAN with a runtime axis (mean_axis_input_*): see gen_mean_axis_input.

ARG_MAX, ARG_MIN (arg_max_*, arg_min_*): float32 or int8 inputs of rank 1-4, int32 outputs
(TFLM runs no other types), the axis a constant int32 scalar or one-element vector, stored
negative with probability 0.3 (in 15% of the cases a runtime input the output shape
determines). Ties are common: float inputs have 15% special values
(including NaN at any index) and in half the cases are drawn from a few values; int8 inputs
are drawn from [-3, 3] in half the cases.

GATHER (gather_*): params float32 or int8 (TFLM runs no others; int32 positions only) of
rank 1-4, axis and batch_dims drawn over their whole valid range (both sometimes stored
negative), positions of rank 0-2 beyond the batch dims, drawn in range as a runtime input.
GATHER_ND (gather_nd_*): params of rank 1-4, indices [.., nd] with nd in 1..rank, constant
(each entry drawn within its dim) or a runtime input (entries below the smallest indexed
dim). EMBEDDING_LOOKUP: embedding_lookup_float32, embedding_lookup_int8 (int8 rows copied)
and embedding_lookup_int8_float32 (the hybrid form: int8 rows, zero point 0, dequantized to
float32; the table constant in half the cases); value tensors of rank 2-4, ids in range.
SLICE (slice_*): float32, int8, int16, int32 and bool inputs of rank 1-5, begin and size
constants of type int32 or int64 (size -1 in 25% of the dims, empty sizes avoided since
Kiln refuses empty tensors).

CUMSUM (cumsum_*): float32 (10% special values) and int8 (the types TFLM runs) of rank 1-4,
a constant axis (a scalar or one-element vector, negative with probability 0.3), exclusive
and reverse at random; int8 outputs calibrated from the float twin, or keeping the input
quantization in 20% of the cases.

BATCH_MATMUL (batch_matmul_*): float32, int8 and int16 (the types TFLM runs; int16 zero
points 0), LHS and RHS of rank 2-5 whose batch dims broadcast (dims set to 1 or dropped at
random on either side), m, n, k in 1..6, adj_x and adj_y at random, the RHS a constant in half
the cases (int8 constants with any zero point); int8/int16 outputs calibrated from the float
twin (the usual widening and narrowing, so some saturate).

Pooling: L2_POOL_2D float32 (l2_pool_2d_float32; TFLM's only type) drawn like the existing
pool bundles (batches 1-3, H/W 1-9, C 1-6, filters 1-4, strides 1-3, SAME/VALID, fused
NONE/RELU/RELU6) with 5% special input values; AVERAGE_POOL_2D and MAX_POOL_2D int16
(average_pool_2d_int16, max_pool_2d_int16): the same shapes, symmetric int16 quantization
shared by input and output (TFLM requires it), full-range inputs.
"""

import numpy as np


def _axes(g, rng, rank):
    k = int(rng.integers(1, rank + 1))
    axes = [int(a) for a in rng.choice(rank, size=k, replace=False)]
    if rng.random() < 0.2:
        axes.append(int(rng.choice(axes)))  # a duplicate
    rng.shuffle(axes)
    return sorted(set(axes)), [a - rank if rng.random() < 0.3 else a for a in axes]


def _determined(shape, axis, keep):
    """Whether the output shape of reducing `axis` alone fixes which dims (of extent > 1) are
    reduced, among the single axes."""
    def out(a):
        return [1 if i == a else d for i, d in enumerate(shape)] if keep else \
            [d for i, d in enumerate(shape) if i != a]
    same = [a for a in range(len(shape)) if out(a) == out(axis)]
    return all(shape[a] == 1 for a in same if a != axis) or \
        (shape[axis] > 1 and all(shape[a] == 1 for a in same if a != axis))


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
    if rng.random() < 0.15 and len(axes) == 1 and _determined(shape, axes[0], keep):
        gr.input([1], "int32")
        gr.int_ranges = {1: (stored[0], stored[0])}
    else:
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
    unique = sum(1 for a in range(rank) if shape[:a] + shape[a + 1:] == shape[:axis] + shape[axis + 1:]) == 1
    if rng.random() < 0.15 and unique:
        gr.input([1], "int32")
        gr.int_ranges = {1: (stored, stored)}
    else:
        gr.const(np.array(stored if rng.random() < 0.5 else [stored], np.int32), "int32",
                 name="axis")
    gr.output([d for i, d in enumerate(shape) if i != axis], "int32")
    if dt == "float32":
        gr.specials = 0.15
        if rng.random() < 0.5:
            gr.float_inputs = [(-1.0, -0.999)]  # nearly equal values
    elif rng.random() < 0.5:
        gr.int_ranges = {**getattr(gr, "int_ranges", {}), 0: (-3, 3)}
    return gr


def gen_arg(g, op):
    def gen(rng, dt):
        return _arg(g, op, rng, dt)
    return gen


def gen_gather(g):
    def gen(rng, dt):
        rank = int(rng.integers(1, 5))
        shape = g.rand_shape(rng, rank, 5, 48)
        axis = int(rng.integers(0, rank))
        bd = int(rng.integers(0, axis + 1)) if axis > 0 and rng.random() < 0.4 else 0
        extra = g.rand_shape(rng, int(rng.integers(0, 3)), 4, 12)
        pshape = shape[:bd] + extra
        out = shape[:axis] + extra + shape[axis + 1:]
        g.budget_check(dt, g.math.prod(shape), g.math.prod(out), limit=g.IO_SMALL * 2)
        s_axis = axis - rank if rng.random() < 0.3 else axis
        s_bd = bd - len(pshape) if bd and extra and rng.random() < 0.3 else bd
        gr = g.Graph("GATHER", *g.opts("GatherOptions", axis=s_axis, batchDims=s_bd))
        q = g.in_quant(rng) if dt == "int8" else None
        gr.input(shape, dt, q)
        gr.input(pshape, "int32")
        gr.output(out, dt, q)
        gr.int_ranges = {1: (0, shape[axis] - 1)}
        return gr
    return gen


def gen_gather_nd(g):
    def gen(rng, dt):
        rank = int(rng.integers(1, 5))
        shape = g.rand_shape(rng, rank, 5, 48)
        nd = int(rng.integers(1, rank + 1))
        lead = g.rand_shape(rng, int(rng.integers(0, 3)), 4, 12)
        out = lead + shape[nd:]
        g.budget_check(dt, g.math.prod(shape), g.math.prod(out), limit=g.IO_SMALL * 2)
        gr = g.Graph("GATHER_ND", *g.opts("GatherNdOptions"))
        q = g.in_quant(rng) if dt == "int8" else None
        gr.input(shape, dt, q)
        if rng.random() < 0.5:
            idx = np.stack([rng.integers(0, shape[j], size=lead) for j in range(nd)], axis=-1)
            gr.const(idx.astype(np.int32).reshape(lead + [nd]), "int32", name="indices")
        else:
            gr.input(lead + [nd], "int32")
            gr.int_ranges = {1: (0, min(shape[:nd]) - 1)}
        gr.output(out, dt, q)
        return gr
    return gen


def gen_embedding_lookup(g):
    def gen(rng, dt):
        rank = int(rng.integers(2, 5))
        shape = g.rand_shape(rng, rank, 6, 64)
        n = int(rng.integers(1, 7))
        out = [n] + shape[1:]
        hybrid = dt == "int8_float32"
        vdt, odt = ("int8", "float32") if hybrid else (dt, dt)
        g.budget_check(vdt, g.math.prod(shape), g.math.prod(out), limit=g.IO_SMALL * 2)
        gr = g.Graph("EMBEDDING_LOOKUP")
        gr.input([n], "int32")
        gr.int_ranges = {0: (0, shape[0] - 1)}
        q = g.q1(10 ** rng.uniform(-3, 0), 0) if hybrid else (g.in_quant(rng) if vdt == "int8" else None)
        if hybrid and rng.random() < 0.5:
            table = rng.integers(-128, 128, size=shape).astype(np.int8)
            gr.const(table, "int8", quant=q, name="table", role="weight")
        else:
            gr.input(shape, vdt, q)
        gr.output(out, odt, None if hybrid else q)
        gr.raw = True  # no float twin: the output quantization (if any) is the table's
        return gr
    return gen


def gen_slice(g):
    def gen(rng, dt):
        rank = int(rng.integers(1, 6))
        shape = g.rand_shape(rng, rank, 5, 96)
        begin, size, out = [], [], []
        for d in shape:
            b = int(rng.integers(0, d))
            s = int(rng.integers(1, d - b + 1))
            if rng.random() < 0.25:
                s_stored, s = -1, d - b
            else:
                s_stored = s
            begin.append(b)
            size.append(s_stored)
            out.append(s)
        idt = "int64" if rng.random() < 0.4 else "int32"
        gr = g.Graph("SLICE", *g.opts("SliceOptions"))
        q = g.in_quant(rng) if dt == "int8" else (g.in_quant16(rng) if dt == "int16" else None)
        gr.input(shape, dt, q)
        gr.const(np.array(begin), idt, name="begin")
        gr.const(np.array(size), idt, name="size")
        gr.output(out, dt, q)
        return gr
    return gen


def gen_cumsum(g):
    def gen(rng, dt):
        rank = int(rng.integers(1, 5))
        shape = g.rand_shape(rng, rank, 6, max(1, g.IO_SMALL // (2 * g.esize(dt))))
        axis = int(rng.integers(0, rank))
        stored = axis - rank if rng.random() < 0.3 else axis
        gr = g.Graph("CUMSUM", *g.opts("CumsumOptions", exclusive=bool(rng.random() < 0.5),
                                       reverse=bool(rng.random() < 0.5)))
        q = g.in_quant(rng) if dt == "int8" else None
        gr.input(shape, dt, q)
        gr.const(np.array(stored if rng.random() < 0.5 else [stored], np.int32), "int32", name="axis")
        gr.output(shape, dt, q if q is not None and rng.random() < 0.2 else None)
        if dt == "float32":
            gr.specials = 0.1
        return gr
    return gen


def gen_batch_matmul(g):
    def gen(rng, dt):
        rank = int(rng.integers(2, 6))
        batch = g.rand_shape(rng, rank - 2, 3, 6)
        lb, rb = list(batch), list(batch)
        for side in (lb, rb):
            if rng.random() < 0.4:
                for i in range(len(side)):
                    if rng.random() < 0.5:
                        side[i] = 1
            if rng.random() < 0.3:
                del side[: int(rng.integers(0, len(side) + 1))]
        m, n, k = (int(rng.integers(1, 7)) for _ in range(3))
        adj_x, adj_y = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        ls = lb + ([k, m] if adj_x else [m, k])
        rs = rb + ([n, k] if adj_y else [k, n])
        full = list(np.broadcast_shapes(tuple(lb), tuple(rb))) if lb or rb else []
        out = full + [m, n]
        g.budget_check(dt, g.math.prod(ls), g.math.prod(rs), g.math.prod(out), limit=g.IO_BIG)
        gr = g.Graph("BATCH_MATMUL", *g.opts("BatchMatMulOptions", adjX=adj_x, adjY=adj_y))
        gr.input(ls, dt, g.act_quant(rng, dt))
        rq = g.act_quant(rng, dt)
        if rng.random() < 0.5:
            if dt == "float32":
                gr.const(rng.uniform(-1, 1, size=rs).astype(np.float32), dt, name="rhs", role="weight")
            else:
                info = np.iinfo(g.NP[dt])
                gr.const(rng.integers(info.min, info.max + 1, size=rs), dt, quant=rq, name="rhs",
                         role="weight")
        else:
            gr.input(rs, dt, rq)
        gr.output(out, dt)
        return gr
    return gen


def gen_l2_pool(g):
    def gen(rng, dt):
        gr = g._pool("L2_POOL_2D", rng, dt)
        gr.specials = 0.05
        return gr
    return gen


def gen_pool16(g, op):
    def gen(rng, dt):
        B = int(rng.choice([1, 1, 1, 2, 3]))
        H, W, C = int(rng.integers(1, 10)), int(rng.integers(1, 10)), int(rng.integers(1, 7))
        fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        sh, sw = int(rng.choice([1, 1, 2, 3])), int(rng.choice([1, 1, 2, 3]))
        pad = int(rng.choice([g.SAME, g.VALID]))
        oh, ow = g.conv_out(H, fh, sh, 1, pad), g.conv_out(W, fw, sw, 1, pad)
        g.budget_check(dt, B * H * W * C, B * oh * ow * C, limit=g.IO_BIG)
        gr = g.Graph(op, *g.opts("Pool2DOptions", padding=pad, strideW=sw, strideH=sh,
                                 filterWidth=fw, filterHeight=fh, fusedActivationFunction=g.act(rng)))
        q = g.in_quant16(rng)
        gr.input([B, H, W, C], dt, q)
        gr.output([B, oh, ow, C], dt, q)
        return gr
    return gen


def gen_all(g):
    """REDUCE_ALL over bools drawn true with probability 0.7-0.99 (so that both results
    occur), the axes, keep_dims and the runtime-axis form as for SUM."""
    def gen(rng, dt):
        gr = _reduce(g, "REDUCE_ALL", rng, dt, False)
        p_true = float(rng.uniform(0.7, 0.99))
        shapes = [gr.tensors[i].shape for i in gr.inputs]
        ranges = getattr(gr, "int_ranges", {})

        def draw(rng):
            xs = [rng.uniform(size=shapes[0]) < p_true]
            for k in range(1, len(shapes)):
                lo, hi = ranges[k]
                xs.append(np.full(shapes[k], lo, np.int32) if lo == hi else
                          rng.integers(lo, hi + 1, size=shapes[k]).astype(np.int32))
            return xs

        gr.draw = draw
        return gr
    return gen


def gen_mean_axis_input(g):
    """MEAN whose axis is a runtime input (bundles mean_axis_input_*): one axis, drawn as for
    SUM's runtime form but in every case (shapes redrawn until the output shape determines
    the reduced dim), keep_dims at random, quantization as in gen_mean (int16 outputs keep
    the input quantization in 25% of the cases)."""
    def gen(rng, dt):
        rank = int(rng.integers(1, 5))
        shape = g.rand_shape(rng, rank, 6, max(1, g.IO_SMALL // (2 * g.esize(dt))))
        axis = int(rng.integers(0, rank))
        keep = bool(rng.random() < 0.5)
        if not _determined(shape, axis, keep):
            raise g.Reject("the output shape does not determine the axis")
        stored = axis - rank if rng.random() < 0.3 else axis
        out = [1 if i == axis else d for i, d in enumerate(shape)] if keep else \
            [d for i, d in enumerate(shape) if i != axis]
        gr = g.Graph("MEAN", *g.opts("ReducerOptions", keepDims=keep))
        xq = g.act_quant(rng, dt)
        gr.input(shape, dt, xq)
        gr.input([1], "int32")
        gr.int_ranges = {1: (stored, stored)}
        gr.output(out, dt, xq if dt == "int16" and rng.random() < 0.25 else None)
        return gr
    return gen


def register(g):
    return [
        ("sum", "SUM", gen_sum(g), ("int8", "float32", "int16")),
        ("reduce_max", "REDUCE_MAX", gen_max_min(g, "REDUCE_MAX"), ("int8", "float32")),
        ("reduce_min", "REDUCE_MIN", gen_max_min(g, "REDUCE_MIN"), ("int8", "float32")),
        ("arg_max", "ARG_MAX", gen_arg(g, "ARG_MAX"), ("int8", "float32")),
        ("arg_min", "ARG_MIN", gen_arg(g, "ARG_MIN"), ("int8", "float32")),
        ("gather", "GATHER", gen_gather(g), ("int8", "float32")),
        ("gather_nd", "GATHER_ND", gen_gather_nd(g), ("int8", "float32")),
        ("embedding_lookup", "EMBEDDING_LOOKUP", gen_embedding_lookup(g),
         ("int8", "float32", "int8_float32")),
        ("batch_matmul", "BATCH_MATMUL", gen_batch_matmul(g), ("int8", "float32", "int16")),
        ("l2_pool_2d", "L2_POOL_2D", gen_l2_pool(g), ("float32",)),
        ("average_pool_2d", "AVERAGE_POOL_2D", gen_pool16(g, "AVERAGE_POOL_2D"), ("int16",)),
        ("max_pool_2d", "MAX_POOL_2D", gen_pool16(g, "MAX_POOL_2D"), ("int16",)),
        ("cumsum", "CUMSUM", gen_cumsum(g), ("int8", "float32")),
        ("slice", "SLICE", gen_slice(g), ("int8", "float32", "int16", "int32", "bool")),
        ("reduce_all", "REDUCE_ALL", gen_all(g), ("bool",)),
        ("mean_axis_input", "MEAN", gen_mean_axis_input(g), ("int8", "float32", "int16")),
    ]
