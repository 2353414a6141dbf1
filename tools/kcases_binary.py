"""Kernel cases of the comparison, logical and select operators and further binary operators
(family "binary", see tools/gen_kernel_cases.py for the bundle format and seeding).

How the cases are drawn:
- Shapes: gen_kernel_cases.broadcast_shapes up to rank 6 (the pinned TFLM wheel broadcasts
  comparisons, logical ops and SELECT_V2 over 6-D); half of the cases broadcast, one side
  sometimes of lower rank, sizes within the elementwise budget.
- Values (comparisons, select, MAXIMUM/MINIMUM): each input's elements are picked from a small pool drawn per
  case, so that equal pairs are frequent; the pool holds the type's extremes and, for
  float32, the special values of gen_kernel_cases.SPECIALS (NaN, +-inf, +-0, denormals).
  Bools are 0/1 uniformly, or mostly one value.
- int8 comparisons: input quantizations drawn as the other int8 ops (scales 10**U(-3, 0),
  zero points at -128, 127, 0 or uniform), equal for both inputs in a third of the cases and
  sometimes with scales just under 1, so that requantized values collide or differ by one.
- MAXIMUM/MINIMUM int16/int32/int64: pooled values as the comparisons (ties, extremes),
  int16 with one symmetric quantization for inputs and output (TFLM compares raw values).
- SUB/MUL int16: gen_kernel_cases._binary (symmetric int16 inputs, output calibrated from the
  float twin, fused activations; SUB inputs with zero points at the extremes or uniform in
  30% of the cases); int32 (unquantized): values small enough that TFLM's C++
  difference/product does not overflow (|x| < 2**30 for SUB, mostly |x| < 2**15 for MUL,
  so the fused RELU/RELU6 clamps are reached).
- SQUARED_DIFFERENCE: broadcast_shapes up to rank 4 (TFLM's 4-D helper); int8 inputs with
  their own quantizations, int16 symmetric, outputs calibrated from the float twin (widened or
  narrowed, so some saturate); int32 values below 2**15 in magnitude (no C++ overflow).
- PRELU (float32, int8 with int8 alpha, int16 with int8 alpha): input rank 1-4, alpha of
  the input's shape or with broadcast (1) dimensions and fewer leading ones, a constant (as
  the converter writes it) in 70% of the cases, else a second input; alpha values in
  [-1.5, 1.5] (float) or int8 with its own quantization; quantized outputs calibrated from
  the float twin.
- FLOOR_DIV/FLOOR_MOD (float32): broadcast_shapes up to rank 4; numerators in +-10**U(0, 2),
  denominators in +-10**U(-1, 1), so quotients and remainders of both signs occur; 10% of
  the elements special values (inf, NaN, +-0, denormals, huge); FLOOR_DIV models whose
  denominator holds a zero are refused by TFLM and redrawn (FLOOR_MOD runs them: NaN);
  half the denominators are constants.
- ADD_N (float32, int8): 2 to 6 inputs of one shape (rank 1-4), int8 inputs sharing one
  quantization (TFLM requires it), output calibrated from the float twin; now and then one
  input a constant.
- DIV int8: broadcast_shapes up to rank 4, input quantizations as the other int8 ops, the
  output scale chosen so that s1 / (s2 * s_out) is 2**U(6.5, 9) (80%) or 2**U(9, 21): TFLM's
  int8 DIV shifts by a data-dependent amount without checking it, and Kiln refuses quantizations for which some
  input pair needs a shift outside 0..=31 (the same check is made here, others redrawn);
  divisor elements equal to their zero point (undefined in TFLM) are replaced by a
  neighbour; fused activations NONE/RELU/RELU6.
- DIV int32 (unquantized): broadcast_shapes up to rank 4; numerators over a wide or a narrow
  range, divisors mostly small (|y| <= 20) so quotients vary and fused RELU/RELU6/RELU_N1_TO_1
  clamp them; zero divisors (TFLM traps) replaced by 1.
- SELECT_V2: a bool condition broadcast with both values (three shapes drawn around one
  output shape); value types float32, int8, int16 (int8/int16 with any quantization, copied).
"""

import math

import numpy as np

G = None  # gen_kernel_cases, set by register()

CMP_TYPES = {
    "EQUAL": ("float32", "int8", "int32", "int64", "bool"),
    "NOT_EQUAL": ("float32", "int8", "int32", "int64", "bool"),
    # No int16 GREATER: the pinned wheel leaves its requantization unprepared (output always
    # false, from parameters it never set), Kiln refuses it.
    "GREATER": ("float32", "int8", "int32", "int64"),
    "GREATER_EQUAL": ("float32", "int8", "int32", "int64"),
    "LESS": ("float32", "int8", "int32", "int64"),
    "LESS_EQUAL": ("float32", "int8", "int32", "int64"),
}


def pool_values(rng, dt, shape, pool):
    return rng.choice(pool, size=shape).astype(G.NP[dt])


def make_pool(rng, dt):
    """A small set of values of dtype dt, the type's extremes among them."""
    k = int(rng.integers(2, 9))
    if dt == "bool":
        p = rng.random()
        return np.array([False, True]) if p < 0.6 else (np.array([True] * 3 + [False]) if p < 0.8
                                                       else np.array([False] * 3 + [True]))
    if dt == "float32":
        vals = list(rng.uniform(-2, 2, size=k).astype(np.float32))
        if rng.random() < 0.5:
            vals += list(rng.choice(G.SPECIALS, size=int(rng.integers(1, 4))))
        return np.array(vals, dtype=np.float32)
    info = np.iinfo(G.NP[dt])
    if rng.random() < 0.5:
        lo, hi = int(info.min), int(info.max) + 1
    else:  # a narrow band, to meet equal values and neighbours
        c = int(rng.integers(int(info.min), int(info.max) + 1))
        lo, hi = max(int(info.min), c - 4), min(int(info.max) + 1, c + 5)
    vals = [int(v) for v in rng.integers(lo, hi, size=k)]
    vals += [int(info.min), int(info.max)][: int(rng.integers(0, 3))]
    return np.array(vals, dtype=G.NP[dt])


def pooled_draw(g, dts):
    def draw(rng):
        xs = []
        shared = {}
        for i, dt in zip(g.inputs, dts):
            if dt not in shared:
                shared[dt] = make_pool(rng, dt)
            xs.append(pool_values(rng, dt, g.tensors[i].shape, shared[dt]))
        return xs
    return draw


def cmp_quant(rng):
    q = G.in_quant(rng)
    if rng.random() < 0.2:
        q = ([float(rng.uniform(0.9, 0.9999))], q[1], 0)
    return q


def gen_comparison(op):
    def gen(rng, dt):
        a, b, out = G.broadcast_shapes(rng, dt, max_rank=6)
        g = G.Graph(op)
        if dt == "int8":
            qa = cmp_quant(rng)
            qb = qa if rng.random() < 0.33 else cmp_quant(rng)
            g.input(a, dt, qa)
            g.input(b, dt, qb)
        else:
            g.input(a, dt)
            g.input(b, dt)
        g.output(out, "bool")
        g.draw = pooled_draw(g, [dt, dt])
        return g
    return gen


def gen_logical(op):
    def gen(rng, dt):
        a, b, out = G.broadcast_shapes(rng, dt, max_rank=6)
        g = G.Graph(op)
        g.input(a, "bool")
        g.input(b, "bool")
        g.output(out, "bool")
        g.draw = pooled_draw(g, ["bool", "bool"])
        return g
    return gen


def gen_logical_not(rng, dt):
    rank = int(rng.integers(1, 7))
    shape = G.rand_shape(rng, rank, 5, G.IO_SMALL // 2)
    g = G.Graph("LOGICAL_NOT")
    g.input(shape, "bool")
    g.output(shape, "bool")
    g.draw = pooled_draw(g, ["bool"])
    return g


def gen_select_v2(rng, dt):
    rank = int(rng.integers(1, 7))
    out = G.rand_shape(rng, rank, 5, max(1, G.IO_SMALL // (4 * G.esize(dt))))
    shapes = []
    equal = rng.random() < 0.3
    for _ in range(3):
        s = list(out)
        if not equal:
            for i in range(rank):
                if rng.random() < 0.4:
                    s[i] = 1
            if rng.random() < 0.3:
                del s[: int(rng.integers(0, rank))]
            if not s:
                s = [1]
        shapes.append(s)
    full = list(np.broadcast_shapes(*map(tuple, shapes)))
    g = G.Graph("SELECT_V2")
    g.input(shapes[0], "bool")
    if dt in ("int8", "int16"):
        q = G.act_quant(rng, dt)
        g.input(shapes[1], dt, q)
        g.input(shapes[2], dt, q if rng.random() < 0.7 else G.act_quant(rng, dt))
        g.output(full, dt, q)
    else:
        g.input(shapes[1], dt)
        g.input(shapes[2], dt)
        g.output(full, dt)
    g.draw = pooled_draw(g, ["bool", dt, dt])
    return g


def gen_maxmin(op):
    def gen(rng, dt):
        a, b, out = G.broadcast_shapes(rng, dt, max_rank=4)
        g = G.Graph(op, *G.opts("MaximumMinimumOptions"))
        q = G.in_quant16(rng) if dt == "int16" else None
        g.input(a, dt, q)
        g.input(b, dt, q)
        g.output(out, dt, q)
        g.draw = pooled_draw(g, [dt, dt])
        return g
    return gen


def small_ints(limit):
    def draw_for(g):
        def draw(rng):
            xs = []
            for i in g.inputs:
                shape = g.tensors[i].shape
                lim = limit if rng.random() < 0.8 else min(2**30, limit * 64)
                x = rng.integers(-lim, lim + 1, size=shape)
                if rng.random() < 0.3:  # small values that the RELU6/RELU_N1_TO_1 clamps meet
                    x = rng.integers(-8, 9, size=shape)
                xs.append(x.astype(np.int32))
            return xs
        return draw
    return draw_for


def gen_arith(op, options_cls):
    def gen(rng, dt):
        options = G.opts(options_cls, fusedActivationFunction=G.act(rng, (G.NONE, G.RELU, G.RELU6, G.RELU_N1_TO_1)))
        g = G._binary(op, options, rng, dt)
        if dt == "int16" and op == "SUB" and rng.random() < 0.3:
            # TFLM's int16 SUB takes any zero points (MUL requires 0): offset inputs too.
            for i in g.inputs:
                s_, _, ax = g.tensors[i].quant
                g.tensors[i].quant = (s_, [int(rng.choice([-32768, 32767, int(rng.integers(-32768, 32768))]))], ax)
        if dt == "int32":
            limit = 2**29 if op == "SUB" else 2**15
            if op == "MUL":
                # products of the wider draws must stay within int32
                g.draw = small_ints(limit)(g)
                base = g.draw

                def draw(rng, base=base):
                    xs = base(rng)
                    return [np.clip(x, -46340, 46340).astype(np.int32) for x in xs]
                g.draw = draw
            else:
                g.draw = small_ints(limit)(g)
        return g
    return gen


def gen_squared_difference(rng, dt):
    g = G._binary("SQUARED_DIFFERENCE", G.opts("SquaredDifferenceOptions"), rng, dt)
    if dt == "float32":
        g.float_inputs = [float(10 ** rng.uniform(-1, 1))] * 2
    if dt == "int32":
        def draw(rng):
            return [rng.integers(-2**15, 2**15, size=g.tensors[i].shape).astype(np.int32)
                    for i in g.inputs]
        g.draw = draw
    return g


def gen_prelu(rng, dt):
    rank = int(rng.integers(1, 5))
    shape = G.rand_shape(rng, rank, 6, max(1, G.IO_SMALL // (3 * G.esize(dt))))
    ashape = list(shape)
    if rng.random() < 0.7:
        for i in range(rank):
            if rng.random() < 0.6:
                ashape[i] = 1
        if rng.random() < 0.5:
            del ashape[: int(rng.integers(0, rank))]
        if not ashape:
            ashape = [1]
    g = G.Graph("PRELU")
    const = rng.random() < 0.7
    if dt == "float32":
        g.input(shape, dt)
        alpha = rng.uniform(-1.5, 1.5, size=ashape).astype(np.float32)
        if const:
            g.const(alpha, dt, name="alpha")
        else:
            g.input(ashape, dt)
            g.float_inputs = [1.0, 1.5]
        g.output(shape, dt)
        return g
    g.input(shape, dt, G.in_quant(rng) if dt == "int8" else G.in_quant16(rng))
    aq = G.in_quant(rng, -2.5, -1.0)
    if const:
        g.const(rng.integers(-128, 128, size=ashape).astype(np.int8), "int8", quant=aq, name="alpha")
    else:
        g.input(ashape, "int8", aq)
    g.output(shape, dt)
    return g


def gen_floor(op):
    def gen(rng, dt):
        a, b, out = G.broadcast_shapes(rng, dt, max_rank=4)
        g = G.Graph(op)
        g.input(a, dt)
        rb = float(10 ** rng.uniform(-1, 1))
        if rng.random() < 0.5:
            y = rng.uniform(-rb, rb, size=b).astype(np.float32)
            y[y == 0] = 1.0
            g.const(y, dt, name="denominator")
            g.float_inputs = [float(10 ** rng.uniform(0, 2))]
        else:
            g.input(b, dt)
            g.float_inputs = [float(10 ** rng.uniform(0, 2)), rb]
        g.specials = 0.1
        g.output(out, dt)
        return g
    return gen


def gen_add_n(rng, dt):
    k = int(rng.integers(2, 7))
    rank = int(rng.integers(1, 5))
    shape = G.rand_shape(rng, rank, 6, max(1, G.IO_SMALL // ((k + 1) * G.esize(dt))))
    g = G.Graph("ADD_N", *G.opts("AddNOptions"))
    q = G.in_quant(rng) if dt == "int8" else None
    const_at = int(rng.integers(0, k)) if rng.random() < 0.2 else -1
    for j in range(k):
        if j == const_at:
            if dt == "int8":
                g.const(rng.integers(-128, 128, size=shape).astype(np.int8), dt, quant=q, name="c")
            else:
                g.const(rng.uniform(-1, 1, size=shape).astype(np.float32), dt, name="c")
        else:
            g.input(shape, dt, q)
    g.output(shape, dt)
    return g


def _bitlen(v):
    v = np.asarray(v, dtype=np.int64)
    out = np.zeros(v.shape, dtype=np.int64)
    x = v.copy()
    while np.any(x > 0):
        out += x > 0
        x >>= 1
    return out


def div_shifts_ok(zp1, zp2, s1, s2, so):
    """Kiln's prepare_s8 check for int8 DIV: every right shift within 0..=31 for a != 0."""
    real = float(np.float32(s1) / (np.float32(s2) * np.float32(so)))
    q, shift = math.frexp(real)
    if round(q * 2**31) == 2**31:
        shift += 1
    x = np.arange(-128, 128)
    a = (x - zp1)[:, None] * np.ones((1, 256), dtype=np.int64)
    b = np.ones((256, 1), dtype=np.int64) * (x - zp2)[None, :]
    keep = b != 0
    a = np.where(b < 0, -a, a)
    b = np.abs(b)
    recip = 31 - (32 - _bitlen(np.where(keep, b, 1)))
    head = np.where(a >= 0, 31 - _bitlen(np.maximum(a, 0)), 31 - _bitlen(np.maximum(-a - 1, 0)))
    right = recip + head - shift
    bad = keep & (a != 0) & ((right < 0) | (right > 31))
    return not bool(np.any(bad))


def gen_div_int8(rng, dt):
    a, b, out = G.broadcast_shapes(rng, dt, max_rank=4)
    g = G.Graph("DIV", *G.opts("DivOptions", fusedActivationFunction=G.act(rng)))
    q1, q2 = G.in_quant(rng), G.in_quant(rng)
    so = q1[0][0] / (q2[0][0] * 2 ** (rng.uniform(6.5, 9) if rng.random() < 0.8 else rng.uniform(9, 21)))
    zo = G.zero_point(rng)
    if not div_shifts_ok(q1[1][0], q2[1][0], q1[0][0], q2[0][0], so):
        raise G.Reject("DIV shift out of range")
    g.input(a, dt, q1)
    g.input(b, dt, q2)
    g.output(out, dt, G.q1(so, zo))
    zp2 = q2[1][0]

    def draw(rng):
        x = G.tc.random_input(rng, a, dt)
        y = G.tc.random_input(rng, b, dt).astype(np.int32)
        y[y == zp2] = zp2 + 1 if zp2 < 127 else zp2 - 1
        return [x, y.astype(np.int8)]
    g.draw = draw
    return g


def gen_div_int32(rng, dt):
    a, b, out = G.broadcast_shapes(rng, dt, max_rank=4)
    g = G.Graph("DIV", *G.opts("DivOptions", fusedActivationFunction=G.act(rng, (G.NONE, G.RELU, G.RELU6, G.RELU_N1_TO_1))))
    g.input(a, dt)
    g.input(b, dt)
    g.output(out, dt)

    def draw(rng):
        lim = 2**31 - 1 if rng.random() < 0.3 else 1000
        x = rng.integers(-lim, lim + 1, size=a).astype(np.int32)
        ylim = 20 if rng.random() < 0.8 else 2**31 - 1
        y = rng.integers(-ylim, ylim + 1, size=b).astype(np.int32)
        y[y == 0] = 1
        return [x, y]
    g.draw = draw
    return g


def register(g):
    global G
    G = g
    entries = []
    for op, dts in CMP_TYPES.items():
        entries.append((op.lower(), op, gen_comparison(op), dts))
    entries += [
        ("logical_and", "LOGICAL_AND", gen_logical("LOGICAL_AND"), ("bool",)),
        ("logical_or", "LOGICAL_OR", gen_logical("LOGICAL_OR"), ("bool",)),
        ("logical_not", "LOGICAL_NOT", gen_logical_not, ("bool",)),
        ("select_v2", "SELECT_V2", gen_select_v2, ("float32", "int8", "int16")),
        ("maximum", "MAXIMUM", gen_maxmin("MAXIMUM"), ("int16", "int32", "int64")),
        ("minimum", "MINIMUM", gen_maxmin("MINIMUM"), ("int16", "int32", "int64")),
        ("sub", "SUB", gen_arith("SUB", "SubOptions"), ("int16", "int32")),
        ("mul", "MUL", gen_arith("MUL", "MulOptions"), ("int16", "int32")),
        ("prelu", "PRELU", gen_prelu, ("float32", "int8", "int16")),
        ("floor_div", "FLOOR_DIV", gen_floor("FLOOR_DIV"), ("float32",)),
        ("floor_mod", "FLOOR_MOD", gen_floor("FLOOR_MOD"), ("float32",)),
        ("add_n", "ADD_N", gen_add_n, ("float32", "int8")),
        ("div", "DIV", gen_div_int8, ("int8",)),
        ("div", "DIV", gen_div_int32, ("int32",)),
        ("squared_difference", "SQUARED_DIFFERENCE", gen_squared_difference,
         ("float32", "int8", "int16", "int32")),
    ]
    return entries
