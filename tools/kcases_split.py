"""SPLIT, SPLIT_V, UNPACK and PACK cases (bundles split_*, split_v_*, unpack_*, pack_*).

Shapes of rank 1-5 (at most a few hundred bytes in all), the axis drawn over -rank..rank-1
(negative axes included); SPLIT into 1-4 equal parts, SPLIT_V into 1-4 parts of drawn sizes
(zero-sized parts excluded, one size given as -1 in a third of the cases), UNPACK and PACK of
1-4 slices. The axis (and SPLIT_V's sizes) are int32 constants, as TFLM requires. int8 and int16
tensors carry one quantization for inputs and outputs (the kernels copy bytes).
"""

import math


def register(g):
    def quant(rng, dt):
        if dt == "int8":
            return g.in_quant(rng)
        if dt == "int16":
            return g.in_quant16(rng)
        return None

    def shape_with(rng, dt, rank, axis, extent):
        elems = max(1, g.IO_SMALL // (2 * g.esize(dt) * max(1, extent)))
        s = g.rand_shape(rng, rank, 4, elems)
        s[axis] = extent
        return s

    def gen_split(rng, dt):
        rank = int(rng.integers(1, 6))
        axis = int(rng.integers(-rank, rank))
        n = int(rng.integers(1, 5))
        shape = shape_with(rng, dt, rank, axis, n * int(rng.integers(1, 4)))
        g.budget_check(dt, 2 * math.prod(shape), limit=g.IO_SMALL * 2)
        gr = g.Graph("SPLIT", *g.opts("SplitOptions", numSplits=n))
        q = quant(rng, dt)
        gr.const([axis], "int32", name="axis")
        gr.input(shape, dt, q)
        out = list(shape)
        out[axis] //= n
        for _ in range(n):
            gr.output(out, dt, q)
        return gr

    def gen_split_v(rng, dt):
        rank = int(rng.integers(1, 6))
        axis = int(rng.integers(-rank, rank))
        n = int(rng.integers(1, 5))
        sizes = [int(rng.integers(1, 4)) for _ in range(n)]
        shape = shape_with(rng, dt, rank, axis, sum(sizes))
        g.budget_check(dt, 2 * math.prod(shape), limit=g.IO_SMALL * 2)
        given = list(sizes)
        if rng.random() < 1 / 3:
            given[int(rng.integers(0, n))] = -1
        gr = g.Graph("SPLIT_V", *g.opts("SplitVOptions", numSplits=n))
        q = quant(rng, dt)
        gr.input(shape, dt, q)
        gr.const(given, "int32", name="size_splits")
        gr.const([axis], "int32", name="axis")
        for s in sizes:
            out = list(shape)
            out[axis] = s
            gr.output(out, dt, q)
        return gr

    def gen_unpack(rng, dt):
        rank = int(rng.integers(1, 6))
        axis = int(rng.integers(-rank, rank))
        n = int(rng.integers(1, 5))
        shape = shape_with(rng, dt, rank, axis, n)
        g.budget_check(dt, 2 * math.prod(shape), limit=g.IO_SMALL * 2)
        gr = g.Graph("UNPACK", *g.opts("UnpackOptions", num=n, axis=axis))
        q = quant(rng, dt)
        gr.input(shape, dt, q)
        out = list(shape)
        del out[axis]
        for _ in range(n):
            gr.output(out, dt, q)
        return gr

    def gen_pack(rng, dt):
        rank = int(rng.integers(0, 5))
        n = int(rng.integers(1, 5))
        axis = int(rng.integers(-(rank + 1), rank + 1))
        elems = max(1, g.IO_SMALL // (2 * g.esize(dt) * n))
        shape = g.rand_shape(rng, rank, 4, elems) if rank else []
        out = list(shape)
        out.insert(axis % (rank + 1), n)
        g.budget_check(dt, 2 * math.prod(out), limit=g.IO_SMALL * 2)
        gr = g.Graph("PACK", *g.opts("PackOptions", valuesCount=n, axis=axis))
        q = quant(rng, dt)
        for _ in range(n):
            gr.input(shape, dt, q)
        gr.output(out, dt, q)
        return gr

    types = ("float32", "int8", "int16", "int32")
    return [
        ("split", "SPLIT", gen_split, types),
        ("split_v", "SPLIT_V", gen_split_v, types),
        ("unpack", "UNPACK", gen_unpack, types),
        ("pack", "PACK", gen_pack, types + ("int64",)),  # TFLM packs int64 only
    ]
