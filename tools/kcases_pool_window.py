"""AVERAGE_POOL_2D and MAX_POOL_2D cases whose window is larger than the input (family
"pool_window", bundles average_pool_2d_window_<dt> and max_pool_2d_window_<dt> for int8,
int16 and float32).

TFLM places a pooling window at `out * stride - padding` and clips it to the input
(`filter_y_start = max(0, -origin)`, `filter_y_end = min(filter_height, input_height -
origin)`), over the model's output shape. The padding is what the pinned wheel computes
(tensorflow/lite/micro/kernels/padding.h: output sizes `(in + stride - 1) / stride` (SAME) or
`(in + stride - filter) / stride` (VALID) in 64 bits, truncating; a negative one leaves both
paddings 0; else `max(0, (out - 1) * stride + filter - in) / 2`), narrowed to the int16_t of
`PoolParams::padding_values` (tensorflow/lite/kernels/internal/types.h), modulo 2^16.
`tflm_windows` below is that rule; every case's TFLM output is checked against it (the
generator stops if the wheel ever disagrees).

How the cases are drawn: input [1..2, 1..6, 1..6, 1..3]; each axis's window one of input
+ 1, twice the input, 2^16, 2^16 + 1..8, 2^17 - 1, 2^30 + small, 2^31 - 1, a random size up
to 2^31 - 1, or (a third of the axes) an ordinary size within the input; strides 1, 2, 3 or
up to 7; SAME or VALID; fused NONE/RELU/RELU6; output extents TFLM's computed size where it
is positive, else (a VALID window larger than the input) 1..3. Draws Kiln refuses, because
TFLM's kernel computes a window position with overflowing int arithmetic or (AVERAGE) meets a
window without input cells (it then returns and leaves the rest of the output unwritten),
are redrawn; MAX_POOL_2D keeps its empty windows (the type's lowest value, clamped).
int8 and int16 take one quantization for input and output (TFLM requires it), int16
symmetric.
"""

import numpy as np

G = None  # gen_kernel_cases, set by register()
SAME, VALID = 0, 1
I32 = (-(1 << 31), (1 << 31) - 1)


def cdiv(a, b):
    """C's integer division (truncating toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def out_size(padding, n, f, s):
    """TFLM's ComputeOutSizeChecked (64 bits); None where it fails (a negative size)."""
    v = cdiv(n + s - (1 if padding == SAME else f), s)
    return v if v >= 0 else None


def tflm_padding(padding, h, w, fh, fw, sh, sw):
    """(height, width) padding as TFLM's pooling kernels see it."""
    ow = out_size(padding, w, fw, sw)
    oh = out_size(padding, h, fh, sh) if ow is not None else None
    if ow is None or oh is None:
        return 0, 0
    narrow = lambda p: ((p + 32768) % 65536) - 32768  # int -> int16_t
    return (narrow(max(0, (oh - 1) * sh + fh - h) // 2),
            narrow(max(0, (ow - 1) * sw + fw - w) // 2))


def tflm_windows(n, f, s, pad, count):
    """Per output index: (first, end) input rows, None if empty, "overflow" where TFLM's
    int arithmetic overflows."""
    out = []
    for o in range(count):
        origin = o * s - pad
        if not all(I32[0] <= v <= I32[1] for v in (o * s, origin, -origin, n - origin)):
            out.append("overflow")
            continue
        start, end = max(0, -origin), min(f, n - origin)
        out.append((origin + start, origin + end) if start < end else None)
    return out


def emulate(op, dt, x, out_hw, opts, q):
    """TFLM's output for input x (NHWC), or None if Kiln refuses the case."""
    padding, fh, fw, sh, sw, act = opts
    b, h, w, c = x.shape
    ph, pw = tflm_padding(padding, h, w, fh, fw, sh, sw)
    ys, xs = tflm_windows(h, fh, sh, ph, out_hw[0]), tflm_windows(w, fw, sw, pw, out_hw[1])
    if "overflow" in ys or "overflow" in xs:
        return None
    if op == "AVERAGE_POOL_2D" and (None in ys or None in xs):
        return None
    if dt == "float32":
        lo, hi = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 3: (0.0, 6.0)}[act]
        lowest = np.float32(-3.4028234663852886e38)
    else:
        info = np.iinfo(G.NP[dt])
        s, z = q
        qz = lambda f: z + int(np.floor(abs(np.float32(f) / np.float32(s)) + 0.5))
        lo, hi = {0: (info.min, info.max), 1: (max(info.min, z), info.max),
                  3: (max(info.min, z), min(info.max, qz(6.0)))}[act]
        lowest = info.min
    y = np.zeros((b, out_hw[0], out_hw[1], c), np.float64)
    for n in range(b):
        for oy, wy in enumerate(ys):
            for ox, wx in enumerate(xs):
                if wy is None or wx is None:
                    y[n, oy, ox] = np.clip(lowest, lo, hi)
                    continue
                win = x[n, wy[0]:wy[1], wx[0]:wx[1]]
                if op == "MAX_POOL_2D":
                    v = win.max(axis=(0, 1)).astype(np.float64)
                elif dt == "float32":
                    acc = np.zeros(c, np.float32)
                    for r in win:
                        for px in r:
                            acc = (acc + px).astype(np.float32)
                    v = (acc / np.float32(win.shape[0] * win.shape[1])).astype(np.float64)
                else:
                    a = win.astype(np.int64).sum(axis=(0, 1))
                    k = win.shape[0] * win.shape[1]
                    v = np.where(a > 0, (a + k // 2) // k, -((-a + k // 2) // k)).astype(np.float64)
                y[n, oy, ox] = np.clip(v, lo, hi)
    return y.astype(G.NP[dt])


def draw_axis(rng, n):
    u = rng.random()
    if u < 0.33:
        return int(rng.integers(1, n + 1))
    return int(rng.choice([n + 1, 2 * n, 1 << 16, (1 << 16) + int(rng.integers(1, 9)),
                           (1 << 17) - 1, (1 << 30) + int(rng.integers(0, 16)), (1 << 31) - 1,
                           int(rng.integers(n + 1, 1 << 31))]))


def gen(op):
    def generate(rng, dt):
        for _ in range(1000):
            b, h, w, c = (int(rng.integers(1, 3)), int(rng.integers(1, 7)),
                          int(rng.integers(1, 7)), int(rng.integers(1, 4)))
            fh, fw = draw_axis(rng, h), draw_axis(rng, w)
            if fh <= h and fw <= w:
                continue  # at least one axis larger than the input
            sh, sw = (int(rng.choice([1, 2, 3, int(rng.integers(1, 8))])) for _ in range(2))
            padding = int(rng.choice([SAME, VALID]))
            act = int(rng.choice([0, 1, 3], p=[0.7, 0.15, 0.15]))
            out_hw = []
            for n, f, s in ((h, fh, sh), (w, fw, sw)):
                o = out_size(padding, n, f, s)
                out_hw.append(o if o else int(rng.integers(1, 4)))
            q = None
            if dt == "int8":
                q = (float(10 ** rng.uniform(-3, 0)), G.zero_point(rng))
            elif dt == "int16":
                q = (float(10 ** rng.uniform(-5, -2)), 0)
            opts = (padding, fh, fw, sh, sw, act)
            probe = G.tc.random_input(rng, [b, h, w, c], dt)
            if emulate(op, dt, probe, out_hw, opts, q) is None:
                continue  # Kiln refuses it (tests/fidelity.rs keeps a few such models)
            g = G.Graph(op, *G.opts("Pool2DOptions", padding=padding, strideW=sw, strideH=sh,
                                    filterWidth=fw, filterHeight=fh,
                                    fusedActivationFunction=act))
            qq = G.q1(*q) if q else None
            g.input([b, h, w, c], dt, qq)
            g.output([b, out_hw[0], out_hw[1], c], dt, qq)

            def draw(rng, g=g, shape=(b, h, w, c), out_hw=tuple(out_hw), opts=opts, q=q):
                x = G.tc.random_input(rng, list(shape), dt)
                want = emulate(op, dt, x, out_hw, opts, q)
                got = G.run_tflm(G.serialize(g), [x], 1)[0]
                same = (np.array_equal(got.view(np.uint32), want.view(np.uint32))
                        if dt == "float32" else np.array_equal(got, want))
                if not same:
                    raise SystemExit(f"{op} {dt} {shape} {opts} {out_hw}: the pinned wheel "
                                     f"differs from tflm_windows: {got.ravel()[:8]} vs "
                                     f"{want.ravel()[:8]}")
                return [x]

            g.draw = draw
            return g
        raise G.Reject("no window draw Kiln compiles")

    return generate


def register(g):
    global G
    G = g
    return [
        ("average_pool_2d_window", "AVERAGE_POOL_2D", gen("AVERAGE_POOL_2D"),
         ("int8", "int16", "float32")),
        ("max_pool_2d_window", "MAX_POOL_2D", gen("MAX_POOL_2D"), ("int8", "int16", "float32")),
    ]
