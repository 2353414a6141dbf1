"""Kernel cases for the data-movement operators (family "move").

Operators that only move elements: DEPTH_TO_SPACE, SPACE_TO_DEPTH, BATCH_TO_SPACE_ND,
SPACE_TO_BATCH_ND, MIRROR_PAD and REVERSE_V2, in the types TFLM's reference kernels accept
(the pinned wheel refuses the others). int8 tensors keep their quantization through the op
(TFLM does not requantize any of them), with the zero point drawn over the whole range
(-128, 127, 0 and uniform; `in_quant`): SPACE_TO_BATCH_ND pads int8 with 0 whatever the
zero point in the pinned wheel (its `output_offset` is never set), which these cases show.

How the cases are drawn:
- DEPTH_TO_SPACE / SPACE_TO_DEPTH: NHWC, batch 1-3, block size 1-4 (mostly 2), the
  low-resolution side 1-4 pixels high and wide, 1-4 channels on the high-resolution side.
- BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND: 3-D (NHC) or 4-D (NHWC) inputs, block shape entries
  1-3 (an INT32 constant), crops / paddings INT32 constants 0-3 (paddings completed so that the
  padded extent is a multiple of the block, sometimes one more block), so the padding and the
  crops reach every side.
- MIRROR_PAD: ranks 1-5, REFLECT or SYMMETRIC, paddings INT32 or INT64 from 0 up to the
  largest the mode allows (dim - 1 or dim), each side drawn independently (many zero).
- REVERSE_V2: ranks 1-5, a run of 1..rank consecutive axes given in any order, each possibly
  negative; every type TFLM has (int8, uint8, int16, int32, int64, float32, bool; uint8
  unquantized).
- BROADCAST_TO: output ranks 1-5 (TFLM's limit), the input a right-aligned part of it with
  dimensions set to 1 at random (down to a scalar); the shape an INT32 or INT64 constant; every
  type the kernel copies (int8, uint8, int16, int32, int64, float32, bool).
- BROADCAST_ARGS: two broadcastable shapes of ranks 1-5 (`broadcast_shapes`), int32 and int64,
  both runtime inputs or the first a constant; the drawn shapes are the inputs.
- SHAPE: the shape of an int8, float32 or bool tensor of ranks 1-5, as INT32 (the wheel refuses
  INT64).
- FILL: output ranks 1-4, the dims an INT32 or INT64 constant (the wheel refuses runtime dims),
  the scalar value a runtime input drawn over the type's range; int8, int32, float32.
- ZEROS_LIKE: int8, int32, int64, float32 (int8 gets 0, not the zero point).
- DYNAMIC_UPDATE_SLICE: ranks 1-5, update dimensions 1..operand's (sometimes all equal), start
  indices INT32 or INT64 runtime inputs drawn from -2 to 2 past the last valid start, 10% at
  the extremes of the index type (TFLM clamps them); int8, int16 (the wheel has it), int32,
  float32.
- More types of older operators, drawn by their generators in gen_kernel_cases.py as float32
  and the activations retyped (one quantization for int8/int16, as these do not requantize):
  PAD int16/int32, CONCATENATION int16/int32/int64/bool, TRANSPOSE int16, STRIDED_SLICE
  int16/int32/bool, RESHAPE int16/int32/int64/bool/uint8 (the types the pinned wheel runs:
  it refuses int64 and bool PAD, int32/int64/bool TRANSPOSE, int64 STRIDED_SLICE, uint8
  CONCATENATION, and int8 CONCATENATION inputs quantized unlike the output).
  `concatenation_mixed_int16`: int16 inputs and output each with its own scale (the wheel
  copies the values unchanged). PADV2 int8/int16/int32/float32: a constant pad value drawn
  over the type's range, 30% at its extremes.
Sizes keep inputs and outputs to a few hundred bytes per case.
"""

import math

import numpy as np

g = None  # the gen_kernel_cases module, set by register()


def _quant(rng, dt):
    if dt == "int16":
        return g.in_quant16(rng)
    return g.in_quant(rng) if dt == "int8" else None


def _block_pair(rng):
    return int(rng.choice([1, 2, 2, 2, 3, 4]))


def gen_depth_to_space(rng, dt):
    B = int(rng.choice([1, 1, 2, 3]))
    bs = _block_pair(rng)
    H, W, C = int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
    n = B * H * W * C * bs * bs
    g.budget_check(dt, n, n, limit=g.IO_SMALL * 2)
    gr = g.Graph("DEPTH_TO_SPACE", *g.opts("DepthToSpaceOptions", blockSize=bs))
    q = _quant(rng, dt)
    gr.input([B, H, W, C * bs * bs], dt, q)
    gr.output([B, H * bs, W * bs, C], dt, q)
    return gr


def gen_space_to_depth(rng, dt):
    B = int(rng.choice([1, 1, 2, 3]))
    bs = _block_pair(rng)
    H, W, C = int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
    n = B * H * W * C * bs * bs
    g.budget_check(dt, n, n, limit=g.IO_SMALL * 2)
    gr = g.Graph("SPACE_TO_DEPTH", *g.opts("SpaceToDepthOptions", blockSize=bs))
    q = _quant(rng, dt)
    gr.input([B, H * bs, W * bs, C], dt, q)
    gr.output([B, H, W, C * bs * bs], dt, q)
    return gr


def _spatial(rng):
    rank = int(rng.choice([3, 4]))
    m = rank - 2
    block = [int(rng.integers(1, 4)) for _ in range(m)]
    return rank, m, block


def gen_batch_to_space_nd(rng, dt):
    rank, m, block = _spatial(rng)
    ob = int(rng.choice([1, 1, 2, 3]))
    sp = [int(rng.integers(1, 5)) for _ in range(m)]
    C = int(rng.integers(1, 5))
    crops, out_sp = [], []
    for k, b in zip(sp, block):
        full = k * b
        c0 = int(rng.integers(0, min(3, full - 1) + 1)) if rng.random() < 0.5 else 0
        c1 = int(rng.integers(0, min(3, full - 1 - c0) + 1)) if rng.random() < 0.5 else 0
        crops.append([c0, c1])
        out_sp.append(full - c0 - c1)
    in_shape = [ob * math.prod(block)] + sp + [C]
    out_shape = [ob] + out_sp + [C]
    g.budget_check(dt, math.prod(in_shape), math.prod(out_shape), limit=g.IO_SMALL * 2)
    gr = g.Graph("BATCH_TO_SPACE_ND", *g.opts("BatchToSpaceNDOptions"))
    q = _quant(rng, dt)
    gr.input(in_shape, dt, q)
    gr.const(np.array(block, np.int32), "int32", name="block_shape")
    gr.const(np.array(crops, np.int32).reshape(m, 2), "int32", name="crops")
    gr.output(out_shape, dt, q)
    return gr


def gen_space_to_batch_nd(rng, dt):
    rank, m, block = _spatial(rng)
    B = int(rng.choice([1, 1, 2, 3]))
    sp = [int(rng.integers(1, 7)) for _ in range(m)]
    C = int(rng.integers(1, 5))
    pads, out_sp = [], []
    for k, b in zip(sp, block):
        p0 = int(rng.integers(0, 4)) if rng.random() < 0.6 else 0
        p1 = (-(k + p0)) % b + (b if rng.random() < 0.2 else 0)
        pads.append([p0, p1])
        out_sp.append((k + p0 + p1) // b)
    in_shape = [B] + sp + [C]
    out_shape = [B * math.prod(block)] + out_sp + [C]
    g.budget_check(dt, math.prod(in_shape), math.prod(out_shape), limit=g.IO_SMALL * 2)
    gr = g.Graph("SPACE_TO_BATCH_ND", *g.opts("SpaceToBatchNDOptions"))
    q = _quant(rng, dt)
    gr.input(in_shape, dt, q)
    gr.const(np.array(block, np.int32), "int32", name="block_shape")
    gr.const(np.array(pads, np.int32).reshape(m, 2), "int32", name="paddings")
    gr.output(out_shape, dt, q)
    return gr


def gen_mirror_pad(rng, dt):
    rank = int(rng.integers(1, 6))
    shape = g.rand_shape(rng, rank, 5, 48)
    symmetric = bool(rng.random() < 0.5)
    pads = []
    for d in shape:
        lim = d if symmetric else d - 1
        pads.append([int(rng.integers(0, lim + 1)) if rng.random() < 0.6 else 0 for _ in range(2)])
    out = [d + p[0] + p[1] for d, p in zip(shape, pads)]
    g.budget_check(dt, math.prod(shape), math.prod(out), limit=g.IO_SMALL * 2)
    gr = g.Graph("MIRROR_PAD", *g.opts("MirrorPadOptions", mode=1 if symmetric else 0))
    q = _quant(rng, dt)
    gr.input(shape, dt, q)
    pdt = "int64" if rng.random() < 0.4 else "int32"
    gr.const(np.array(pads, g.NP[pdt]).reshape(rank, 2), pdt, name="paddings")
    gr.output(out, dt, q)
    return gr


def gen_reverse_v2(rng, dt):
    rank = int(rng.integers(1, 6))
    shape = g.rand_shape(rng, rank, 5, max(1, g.IO_SMALL // (2 * g.esize(dt))))
    k = int(rng.integers(1, rank + 1))
    lo = int(rng.integers(0, rank - k + 1))
    axes = [int(a) for a in rng.permutation(np.arange(lo, lo + k))]
    axes = [a - rank if rng.random() < 0.3 else a for a in axes]
    gr = g.Graph("REVERSE_V2", *g.opts("ReverseV2Options"))
    q = _quant(rng, dt)
    gr.input(shape, dt, q)
    gr.const(np.array(axes, np.int32), "int32", name="axis")
    gr.output(shape, dt, q)
    return gr


def register(mod):
    global g
    g = mod
    return [
        ("depth_to_space", "DEPTH_TO_SPACE", gen_depth_to_space, ("int8", "float32")),
        ("space_to_depth", "SPACE_TO_DEPTH", gen_space_to_depth, ("int8", "float32")),
        ("batch_to_space_nd", "BATCH_TO_SPACE_ND", gen_batch_to_space_nd, ("int8", "float32")),
        ("space_to_batch_nd", "SPACE_TO_BATCH_ND", gen_space_to_batch_nd, ("int8", "float32")),
        ("mirror_pad", "MIRROR_PAD", gen_mirror_pad, ("int8", "float32")),
        ("reverse_v2", "REVERSE_V2", gen_reverse_v2,
         ("int8", "int16", "int32", "int64", "float32", "bool", "uint8")),
    ] + _register_rest() + _register_retyped()


# --------------------------------------------------------------------------------------------
# BROADCAST_TO, BROADCAST_ARGS, SHAPE, FILL, ZEROS_LIKE, DYNAMIC_UPDATE_SLICE


def _random(rng, shape, dt):
    if dt == "float32":
        return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
    return g.tc.random_input(rng, shape, dt)


def gen_broadcast_to(rng, dt):
    rank = int(rng.integers(1, 6))
    out = g.rand_shape(rng, rank, 4, max(1, g.IO_SMALL // (2 * g.esize(dt))))
    keep = int(rng.integers(0, rank + 1))
    inp = [d if rng.random() < 0.5 else 1 for d in out[rank - keep:]]
    gr = g.Graph("BROADCAST_TO", *g.opts("BroadcastToOptions"))
    q = _quant(rng, dt)
    gr.input(inp, dt, q)
    sdt = "int64" if rng.random() < 0.3 else "int32"
    gr.const(np.array(out, g.NP[sdt]), sdt, name="shape")
    gr.output(out, dt, q)
    return gr


def gen_broadcast_args(rng, dt):
    a, b, full = g.broadcast_shapes(rng, "int8", max_rank=5)
    if rng.random() < 0.5:
        a, b = b, a
    gr = g.Graph("BROADCAST_ARGS")
    va, vb = np.array(a, g.NP[dt]), np.array(b, g.NP[dt])
    const = rng.random() < 0.3
    if const:  # one constant (TFLM needs a runtime input to run), the other runtime
        gr.const(va, dt, name="shape1")
        gr.input([len(b)], dt)
        gr.draw = lambda rng: [vb]
    else:
        gr.input([len(a)], dt)
        gr.input([len(b)], dt)
        gr.draw = lambda rng: [va, vb]
    gr.output([len(full)], dt)
    return gr


def gen_shape(rng, dt):
    shape = g.unary_shape(rng, dt)
    if rng.random() < 0.2:
        shape = shape + [int(rng.integers(1, 3))]
    gr = g.Graph("SHAPE", *g.opts("ShapeOptions", outType=g.TYPE["int32"]))
    gr.input(shape, dt, _quant(rng, dt))
    gr.output([len(shape)], "int32")  # the pinned wheel refuses INT64
    return gr


def gen_fill(rng, dt):
    rank = int(rng.integers(1, 5))  # (an empty dims constant has no buffer: not constant)
    out = g.rand_shape(rng, rank, 6, max(1, g.IO_SMALL // g.esize(dt)))
    gr = g.Graph("FILL", *g.opts("FillOptions"))
    q = _quant(rng, dt)
    ddt = "int64" if rng.random() < 0.3 else "int32"
    dims = np.array(out, g.NP[ddt]).reshape(rank)
    value = _random(rng, [], dt)
    runtime_dims = False  # the pinned wheel refuses a non-constant dims tensor in Prepare
    draws = []
    if runtime_dims:
        gr.input([rank], ddt)
        draws.append(dims)
    else:
        gr.const(dims, ddt, name="dims")
    if runtime_dims and rng.random() < 0.5:
        gr.const(np.array(value, g.NP[dt]), dt, quant=q, name="value")
    else:
        gr.input([], dt, q)
        draws.append(np.array(value, g.NP[dt]))
    gr.draw = lambda rng: draws
    gr.output(out, dt, q)
    return gr


def gen_zeros_like(rng, dt):
    shape = g.unary_shape(rng, dt)
    gr = g.Graph("ZEROS_LIKE", *g.opts("ZerosLikeOptions"))
    q = _quant(rng, dt)
    gr.input(shape, dt, q)
    gr.output(shape, dt, q)
    return gr


def gen_dynamic_update_slice(rng, dt):
    rank = int(rng.integers(1, 6))
    shape = g.rand_shape(rng, rank, 5, max(1, g.IO_SMALL // (3 * g.esize(dt))))
    if rng.random() < 0.1:
        upd = list(shape)
    else:
        upd = [int(rng.integers(1, d + 1)) if rng.random() < 0.7 else d for d in shape]
    idt = "int64" if rng.random() < 0.3 else "int32"
    start = [int(rng.integers(-2, d - u + 3)) for d, u in zip(shape, upd)]
    if rng.random() < 0.1:  # far out of range: clamped
        start = [int(rng.choice([-(2**31), 2**31 - 1])) if idt == "int32" else
                 int(rng.choice([-(2**40), 2**40])) for _ in shape]
    gr = g.Graph("DYNAMIC_UPDATE_SLICE", *g.opts("DynamicUpdateSliceOptions"))
    q = _quant(rng, dt)
    gr.input(shape, dt, q)
    gr.input(upd, dt, q)
    gr.input([rank], idt)
    gr.output(shape, dt, q)
    gr.draw = lambda rng: [_random(rng, shape, dt), _random(rng, upd, dt),
                           np.array(start, g.NP[idt])]
    return gr


def _register_rest():
    return [
        ("broadcast_to", "BROADCAST_TO", gen_broadcast_to,
         ("int8", "int16", "int32", "int64", "float32", "bool", "uint8")),
        ("broadcast_args", "BROADCAST_ARGS", gen_broadcast_args, ("int32", "int64")),
        ("shape", "SHAPE", gen_shape, ("int8", "float32", "bool")),
        ("fill", "FILL", gen_fill, ("int8", "int32", "float32")),
        ("zeros_like", "ZEROS_LIKE", gen_zeros_like, ("int8", "int32", "int64", "float32")),
        ("dynamic_update_slice", "DYNAMIC_UPDATE_SLICE", gen_dynamic_update_slice,
         ("int8", "int16", "int32", "float32")),
    ]


# --------------------------------------------------------------------------------------------
# More types of the existing data-movement operators (PAD, PADV2, CONCATENATION, TRANSPOSE,
# STRIDED_SLICE, RESHAPE): the existing generators drawn as float32, the activations then
# retyped (int8/int16 tensors get one quantization, as those operators do not requantize).


def _retyped(gen):
    def f(rng, dt):
        gr = gen(rng, "float32")
        q = _quant(rng, dt)
        for i in gr.inputs + gr.outputs:
            t = gr.tensors[i]
            if t.dtype == "float32":
                t.dtype, t.quant = dt, q
        return gr
    f.__name__ = gen.__name__ + "_retyped"
    return f


def gen_concatenation_mixed16(rng, dt):
    """int16 inputs each with its own scale: the pinned wheel checks only int8 quantization
    and copies int16 bytes unchanged (no requantization)."""
    gr = g.gen_concatenation(rng, "float32")
    for i in gr.inputs + gr.outputs:
        t = gr.tensors[i]
        t.dtype, t.quant = dt, g.in_quant16(rng)
    return gr


def gen_padv2(rng, dt):
    """PADV2 with a constant pad value drawn over the type's range (int8 and int16 also at
    the extremes)."""
    gr = g.gen_pad(rng, "float32")
    gr.op = "PADV2"
    gr.options_type, gr.options = g.opts("PadV2Options")
    q = _quant(rng, dt)
    for i in gr.inputs + gr.outputs:
        t = gr.tensors[i]
        t.dtype, t.quant = dt, q
    if dt == "float32":
        v = np.float32(rng.uniform(-3, 3))
    elif dt == "bool":
        v = bool(rng.random() < 0.5)
    else:
        info = np.iinfo(g.NP[dt])
        v = int(rng.choice([info.min, info.max])) if rng.random() < 0.3 else \
            int(rng.integers(max(info.min, -1000), min(info.max, 1000)))
    gr.const(np.array([v], g.NP[dt]).reshape([]), dt, quant=q, name="value")
    return gr


def _register_retyped():
    return [
        ("pad", "PAD", _retyped(g.gen_pad), ("int16", "int32")),
        ("padv2", "PADV2", gen_padv2, ("int8", "int16", "int32", "float32")),
        ("concatenation", "CONCATENATION", _retyped(g.gen_concatenation),
         ("int16", "int32", "int64", "bool")),
        ("concatenation_mixed", "CONCATENATION", gen_concatenation_mixed16, ("int16",)),
        ("transpose", "TRANSPOSE", _retyped(g.gen_transpose), ("int16",)),
        ("strided_slice", "STRIDED_SLICE", _retyped(g.gen_strided_slice),
         ("int16", "int32", "bool")),
        ("reshape", "RESHAPE", _retyped(g.gen_reshape),
         ("int16", "int32", "int64", "bool", "uint8")),
    ]
