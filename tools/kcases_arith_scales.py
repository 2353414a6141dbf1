"""SUB and ADD cases whose scales make the precision of TFLM's multipliers matter.

TFLM's quantized SUB and ADD rescale both inputs to `2 * max(s1, s2)` with `left_shift`
headroom (20 for int8, 15 for int16), subtract or add, and requantize to the output: three
Q31 multipliers from `s1 / (2 max)`, `s2 / (2 max)` and `2 max / (2^left_shift * s_out)`.
In the pinned wheel both operators divide in double (sub_common.cc: `twice_max` in float,
the quotients of its double and the scales' doubles; add_common.cc: all in double). TFLM's
current sub_common.cc divides in float and widens the quotients, which rounds the real
multipliers to 24 bits: their Q31 forms then differ in the low bits and an output moves by
one where the exact result lies next to a half (seanet's int16 SUB integration tests hit
it in 3 of 5 models). Random inputs meet it about once in a few thousand elements, which
the 200 small cases of sub_int16/sub_int8 never do.

Each case here (bundles sub_scales_int8, sub_scales_int16, add_scales_int8,
add_scales_int16) draws one of these scale patterns:
- `seanet`: the fitted parameters of the seanet SUB tests (s1 / s_out in 1.2..4, s2 / s_out
  in 1e-4..0.03: a large activation minus a small one), broadcast over the last dimension
  as there, or the roles swapped;
- `random`: independent input scales 10**U(-6, 0) (int16) or 10**U(-4, 0) (int8) and an
  output scale 10**U(-0.5, 1.5) times the larger;
- `equal`: equal input scales (both input multipliers exactly 0.5);
- `pow2`: input scales a power of two apart (2^-12..2^12: exact multipliers and shifts);
- `near_half`: the smaller input scale a few float steps below the larger, so its real
  multiplier rounds to 2^31 and TFLM renormalizes it to 2^30 with one more shift;
- `out_edge`: an output scale that puts the output multiplier's mantissa a hair above 0.5
  or below 1 (the Q31 multiplier near 2^30 or 2^31);
with a fused activation (NONE mostly, RELU, RELU6, RELU_N1_TO_1), int8 zero points drawn
as in the other int8 cases, int16 zero points 0, same shapes or broadcasting. It emulates
TFLM's integer arithmetic (QuantizeMultiplier, MultiplyByQuantizedMultiplierSmallerThanOneExp,
offsets, the activation range) with the float-quotient and the double-quotient multipliers
over all 65536 int8 input pairs or 2^17 random int16 pairs; for `seanet` and `random` it
redraws the scales until some pairs give different outputs and plants one to four of them
among the otherwise random inputs. The golden outputs are TFLM's, as for every case, and
the generator checks that they equal the double-quotient emulation on every element (it
stops if the wheel ever disagrees), so the bundles also pin the rule down.

`quantize_multiplier`, `srdhm_rdpot`, `emulate` and `params` are also used by
tools/gen_fidelity_models.py.
"""

import math

import numpy as np

G = None  # gen_kernel_cases, set by register()

NONE, RELU, RELU_N1_TO_1, RELU6 = 0, 1, 2, 3
RANGE = {"int8": (-128, 127), "int16": (-32768, 32767)}
LEFT_SHIFT = {"int8": 20, "int16": 15}


def quantize_multiplier(d):
    """TFLM's QuantizeMultiplier (for QuantizeMultiplierSmallerThanOneExp): (Q31, shift)."""
    if d == 0.0:
        return 0, 0
    q, shift = math.frexp(d)
    q_fixed = int(math.copysign(math.floor(abs(q) * (1 << 31) + 0.5), q))  # TfLiteRound
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q_fixed, shift


def params(s1, s2, so, left_shift, how):
    """The three (multiplier, shift) pairs of CalculateOpDataSub/Add. `how`: "double" (the
    pinned wheel, SUB and ADD) or "float" (TFLM's current sub_common.cc: float quotients)."""
    f32 = np.float32
    s1, s2, so = f32(s1), f32(s2), f32(so)
    twice_max = f32(2) * max(s1, s2)
    if how == "double":
        r1 = float(s1) / float(twice_max)
        r2 = float(s2) / float(twice_max)
        ro = float(twice_max) / ((1 << left_shift) * float(so))
    else:
        r1 = float(f32(s1 / twice_max))
        r2 = float(f32(s2 / twice_max))
        ro = float(f32(twice_max / (f32(1 << left_shift) * so)))
    if not all(0.0 < r < 1.0 for r in (r1, r2, ro)):
        return None  # QuantizeMultiplierSmallerThanOneExp's checks fail
    return quantize_multiplier(r1), quantize_multiplier(r2), quantize_multiplier(ro)


def srdhm_rdpot(x, m, shift):
    """MultiplyByQuantizedMultiplierSmallerThanOneExp on an int64 array of int32 values:
    gemmlowp's SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT(-shift)."""
    ab = x * m
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    s = ab + nudge
    high = np.where(s >= 0, s >> 31, -((-s) >> 31))  # C++ division truncates toward zero
    high = np.where((x == -(1 << 31)) & (m == -(1 << 31)), (1 << 31) - 1, high)
    e = -shift
    if e == 0:
        return high
    mask = (1 << e) - 1
    threshold = (mask >> 1) + (high < 0)
    return (high >> e) + ((high & mask) > threshold)


def wrap32(v):
    return ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def activation_range(act, so, zo, dt):
    """CalculateActivationRangeQuantized: zero_point + round(f / scale) in float, clamped."""
    lo, hi = RANGE[dt]

    def q(f):
        v = np.float32(f) / np.float32(so)
        return zo + int(math.copysign(math.floor(abs(float(v)) + 0.5), float(v)))

    if act == RELU:
        return max(lo, q(0.0)), hi
    if act == RELU6:
        return max(lo, q(0.0)), min(hi, q(6.0))
    if act == RELU_N1_TO_1:
        return max(lo, q(-1.0)), min(hi, q(1.0))
    return lo, hi


def emulate(op, x, y, p, left_shift, z1, z2, zo, lo, hi):
    """TFLM's SubFunc/AddFunc on int64 arrays of inputs, with the multipliers `p`."""
    (m1, e1), (m2, e2), (mo, eo) = p
    a = srdhm_rdpot(wrap32((x - z1) * (1 << left_shift)), m1, e1)
    b = srdhm_rdpot(wrap32((y - z2) * (1 << left_shift)), m2, e2)
    raw = wrap32(a - b if op == "SUB" else a + b)
    out = wrap32(srdhm_rdpot(raw, mo, eo) + zo)
    return np.clip(out, lo, hi)


def draw_scales(rng, dt, kind):
    lo, hi = (-6.0, 0.0) if dt == "int16" else (-4.0, 0.0)
    s1 = 10 ** rng.uniform(lo, hi)
    if kind == "seanet":
        so = s1 / rng.uniform(1.2, 4.0)
        s2 = so * 10 ** rng.uniform(-4.0, -1.5)
    elif kind == "random":
        s2 = 10 ** rng.uniform(lo, hi)
        so = max(s1, s2) * 10 ** rng.uniform(-0.5, 1.5)
    elif kind == "equal":
        s2 = s1
        so = s1 * 10 ** rng.uniform(-0.5, 1.5)
    elif kind == "pow2":
        s2 = s1 * 2.0 ** int(rng.choice([k for k in range(-12, 13) if k != 0]))
        so = max(s1, s2) * 10 ** rng.uniform(-0.5, 1.5)
    elif kind == "near_half":
        s2 = float(np.float32(s1))
        for _ in range(int(rng.integers(1, 40))):
            s2 = float(np.nextafter(np.float32(s2), np.float32(0)))
        so = s1 * 10 ** rng.uniform(-0.5, 1.5)
    else:  # out_edge: 2 max / (2^ls so) = 2^-k * (1 - tiny) or 2^-k / 2 * (1 + tiny)
        s2 = 10 ** rng.uniform(lo, hi)
        tw = 2.0 * max(float(np.float32(s1)), float(np.float32(s2)))
        k = int(rng.integers(1, 8))
        tiny = 10 ** rng.uniform(-9.0, -6.5)
        mant = 1.0 - tiny if rng.random() < 0.5 else 0.5 * (1.0 + tiny)
        so = tw / ((1 << LEFT_SHIFT[dt]) * 2.0 ** -k * mant)
    if rng.random() < 0.5:
        s1, s2 = s2, s1
    return float(np.float32(s1)), float(np.float32(s2)), float(np.float32(so))


def shapes(rng, kind):
    """(input 1 shape, input 2 shape, output shape)."""
    c = int(rng.choice([8, 16, 32, 64])) if kind == "seanet" else int(rng.integers(1, 33))
    t = int(rng.integers(1, max(2, 128 // c) + 1))
    full = [1, t, c]
    u = rng.random()
    if u < 0.45:
        return full, full, full
    if u < 0.8:
        return full, [c], full  # seanet: [1, T, C] - [C]
    return [c], full, full


def gen(op):
    def generate(rng, dt):
        kind = str(rng.choice(["seanet", "random", "equal", "pow2", "near_half", "out_edge"],
                              p=[0.3, 0.3, 0.1, 0.1, 0.1, 0.1]))
        lo, hi = RANGE[dt]
        ls = LEFT_SHIFT[dt]
        if dt == "int8":
            xs = np.repeat(np.arange(lo, hi + 1), hi - lo + 1).astype(np.int64)
            ys = np.tile(np.arange(lo, hi + 1), hi - lo + 1).astype(np.int64)
        else:
            xs = rng.integers(lo, hi + 1, 1 << 17).astype(np.int64)
            ys = rng.integers(lo, hi + 1, 1 << 17).astype(np.int64)
        need_differ = kind in ("seanet", "random")
        for _ in range(400):
            s1, s2, so = draw_scales(rng, dt, kind)
            pd = params(s1, s2, so, ls, "double")
            pf = params(s1, s2, so, ls, "float")
            if pd is None or pf is None:
                continue
            z1, z2, zo = (0, 0, 0) if dt == "int16" else tuple(G.zero_point(rng) for _ in range(3))
            act = int(rng.choice([NONE, RELU, RELU6, RELU_N1_TO_1], p=[0.7, 0.1, 0.1, 0.1]))
            amin, amax = activation_range(act, so, zo, dt)
            if amin > amax:
                continue
            yd = emulate(op, xs, ys, pd, ls, z1, z2, zo, amin, amax)
            yf = emulate(op, xs, ys, pf, ls, z1, z2, zo, amin, amax)
            differ = np.nonzero(yd != yf)[0]
            if need_differ and len(differ) == 0:
                continue
            break
        else:
            raise G.Reject("no scales found where the multipliers' precision matters")
        a, b, out = shapes(rng, kind)
        g = G.Graph(op, *G.opts("SubOptions" if op == "SUB" else "AddOptions",
                                fusedActivationFunction=act))
        g.input(a, dt, G.q1(s1, z1))
        g.input(b, dt, G.q1(s2, z2))
        g.output(out, dt, G.q1(so, zo))
        chosen = rng.choice(differ, size=min(len(differ), int(rng.integers(1, 5))), replace=False) \
            if len(differ) else np.array([], np.int64)
        pairs = [(int(xs[i]), int(ys[i])) for i in chosen]

        def draw(rng, a=a, b=b, out=out, pairs=pairs):
            pairs = list(pairs)
            x = G.tc.random_input(rng, a, dt)
            y = G.tc.random_input(rng, b, dt)
            xf, yf = x.reshape(-1), y.reshape(-1)
            # Plant each pair at an output element whose input elements no other pair uses.
            n = int(np.prod(out))
            used1, used2 = set(), set()
            for k in rng.permutation(n)[: 4 * len(pairs) + 8]:
                if not pairs:
                    break
                i1 = int(k) if len(xf) == n else int(k) % len(xf)
                i2 = int(k) if len(yf) == n else int(k) % len(yf)
                if i1 in used1 or i2 in used2:
                    continue
                xf[i1], yf[i2] = pairs.pop()
                used1.add(i1)
                used2.add(i2)
            return [x, y]

        g.draw = draw
        g.check = (op, pd, ls, z1, z2, zo, amin, amax)
        return g

    return generate


def checked(op):
    """The generator, with TFLM's outputs compared against the double-quotient emulation."""
    inner = gen(op)

    def pad(s, full):
        return [1] * (len(full) - len(s)) + list(s)

    def generate(rng, dt):
        g = inner(rng, dt)
        draw = g.draw
        op_, pd, ls, z1, z2, zo, amin, amax = g.check
        shape = g.tensors[g.outputs[0]].shape

        def draw_and_check(rng):
            x, y = draw(rng)
            bx = np.broadcast_to(x.reshape(pad(x.shape, shape)), shape).astype(np.int64)
            by = np.broadcast_to(y.reshape(pad(y.shape, shape)), shape).astype(np.int64)
            want = emulate(op_, bx.reshape(-1), by.reshape(-1), pd, ls, z1, z2, zo, amin, amax)
            got = G.run_tflm(G.serialize(g), [x, y], 1)[0].astype(np.int64).reshape(-1)
            if not np.array_equal(got, want):
                bad = np.nonzero(got != want)[0]
                raise SystemExit(f"{op_} {dt}: the pinned wheel differs from the double-quotient "
                                 f"emulation at {len(bad)} elements, e.g. {bad[:4]}")
            return [x, y]

        g.draw = draw_and_check
        return g

    return generate


def register(g):
    global G
    G = g
    return [
        ("sub_scales", "SUB", checked("SUB"), ("int8", "int16")),
        ("add_scales", "ADD", checked("ADD"), ("int8", "int16")),
    ]
