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
  negative; every type TFLM has (int8, int16, int32, int64, float32, bool).
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
         ("int8", "int16", "int32", "int64", "float32", "bool")),
    ]
