"""Kernel cases of the unary elementwise family (Kiln's ops/elementwise.rs and the int16 forms
of TANH, LOGISTIC, ...): one input, one output of the same shape (ranks 1-4, up to 48 float32
elements), drawn with gen_kernel_cases' helpers.

Float32 inputs are uniform in a range chosen per operator so that each function's branches
are reached, and carry a share of special values (signed zeros, infinities, NaN, denormals,
+-3e38, +-1, halves such as 127.5):
- ABS, SQUARE, CEIL, FLOOR: +-10**U(-0.5, 3); ROUND: the same, half of the cases snapped to
  multiples of 0.5 (ties, both parities, negative halves);
- SQRT, RSQRT, LOG: mostly positive ranges 10**U(-3, 4) with a share of negatives (NaN);
- SIN, COS: +-10**U(-1, 5), so the small-argument path, the fast reduction (|x| < 120) and
  the large reduction are all reached;
- EXP: [-110, 95] narrowed at random (underflow, overflow); ELU: +-10**U(-1, 2).
Quantized: ABS int8 (input scale 10**U(-3, 0), zero points at the extremes too; the output
either the input's quantization (no rescale), a calibrated one, or the input scale times
10**U(-1, 1)), ABS int16 (zero points 0, as TFLM requires; same three kinds of output scale),
ABS int16_raw (int16 tensors without quantization: plain std::abs, -32768 included); ELU int8
(TFLM's lookup table; output calibrated from the float twin).
QUANTIZE additions: float32 -> int16 (range +-10**U(-2, 2) or one-sided, 10% beyond it,
symmetric calibrated scale, zero point 0 in 75% of the cases else U(-1000, 1000)); int32 ->
int8 and int32 -> int16 (full-range int32 inputs, input scale 10**U(-6, -3), zero point 0 or
U(-1e5, 1e5), multipliers 10**U(-8.5, -6) resp. 10**U(-6, -4) so that part of the outputs
saturate). DEQUANTIZE int16 -> float32 (input scale 10**U(-5, -2), zero point 0 or
U(-1000, 1000)).
TANH and LOGISTIC int16: zero points 0 (TFLM requires them), output scale 2^-15; input scale
2^-12 (or 2^-11 for TANH: the power-of-two paths) in 30% of the cases, else 10**U(-5, -2.5)
(the rescaled path), so that inputs reach the saturated ends of the table.
RSQRT int8: input scale 10**U(-3, 0), any zero point; inputs below the zero point (TFLM
fails Invoke on them) are replaced by uniform values from the zero point up, and some by the
zero point itself (the "largest output" branch); output scale 1 / sqrt(input scale) / 255
times 10**U(-1, 0.7) (a float twin cannot calibrate it: 1 / sqrt(0) is infinite), zero point
anywhere.
L2_NORMALIZATION (options decoded, activation NONE): ranks 1-4 (the last dimension is the
normalized one), float32 values +-10**U(-4, 2) with, in 20% of the cases, rows or elements
set to zero (the epsilon path: a zero row stays zero); int8 with any input quantization and
TFLM's output quantization 1/128, zero point 0 (its kernel ignores the output's); some int8
inputs set to the zero point.
LOG_SOFTMAX float32: ranks 1-4, last dimension 1-20, values +-10**U(-1, 2) (rows whose
exponentials underflow), 10% special values; int8: input scale 10**U(-2.5, 0) (zero points
at the extremes too), output TFLM's 16/256 and 127.
Seeds come from the bundle names (gen_kernel_cases.family_ops).
"""

import numpy as np


def _float_unary(g, op, rng, lo, hi, specials=0.1, transform=None):
    shape = g.unary_shape(rng, "float32")
    graph = g.Graph(op)
    graph.float_inputs = [(float(lo), float(hi))]
    graph.specials = specials
    graph.transform = transform
    graph.input(shape, "float32")
    graph.output(shape, "float32")
    return graph


def _float_unary_shape(g, op, shape, lo, hi, specials):
    graph = g.Graph(op, *g.opts("LogSoftmaxOptions")) if op == "LOG_SOFTMAX" else g.Graph(op)
    graph.float_inputs = [(float(lo), float(hi))]
    graph.specials = specials
    graph.input(shape, "float32")
    graph.output(shape, "float32")
    return graph


def _sym(rng, lo_exp, hi_exp):
    m = float(10 ** rng.uniform(lo_exp, hi_exp))
    return -m, m


def _positive(rng):
    m = float(10 ** rng.uniform(-3, 4))
    u = rng.random()
    if u < 0.6:
        return 0.0, m
    if u < 0.8:
        return float(10 ** rng.uniform(-3, 0)) * m * 1e-3, m
    return -0.2 * m, m  # some negatives: NaN


def register(g):
    def simple(op, lo_exp=-0.5, hi_exp=3.0):
        def gen(rng, dt):
            return _float_unary(g, op, rng, *_sym(rng, lo_exp, hi_exp))
        return gen

    def gen_round(rng, dt):
        snap = rng.random() < 0.5
        return _float_unary(g, "ROUND", rng, *_sym(rng, -0.5, 3.0),
                            transform=(lambda x, r: np.round(x * 2) / 2) if snap else None)

    def positive(op):
        def gen(rng, dt):
            return _float_unary(g, op, rng, *_positive(rng))
        return gen

    def trig(op):
        def gen(rng, dt):
            return _float_unary(g, op, rng, *_sym(rng, -1.0, 5.0))
        return gen

    def gen_exp(rng, dt):
        lo = -110.0 * rng.uniform(0.05, 1.0)
        hi = 95.0 * rng.uniform(0.05, 1.0)
        return _float_unary(g, "EXP", rng, lo, hi)

    def gen_abs(rng, dt):
        if dt == "float32":
            return _float_unary(g, "ABS", rng, *_sym(rng, -0.5, 3.0))
        shape = g.unary_shape(rng, "int16" if dt.startswith("int16") else dt)
        graph = g.Graph("ABS")
        if dt == "int16_raw":
            graph.raw = True
            graph.input(shape, "int16")
            graph.output(shape, "int16")
            return graph
        q = g.in_quant(rng) if dt == "int8" else g.in_quant16(rng)
        graph.input(shape, dt, q)
        u = rng.random()
        if u < 0.3:
            out = q
        elif u < 0.6:
            out = g.q1(q[0][0] * float(10 ** rng.uniform(-1, 1)),
                       g.zero_point(rng) if dt == "int8" else 0)
        else:
            out = None  # calibrated from the float twin
        graph.output(shape, dt, out)
        return graph

    def gen_elu(rng, dt):
        if dt == "float32":
            return _float_unary(g, "ELU", rng, *_sym(rng, -1.0, 2.0))
        shape = g.unary_shape(rng, dt)
        graph = g.Graph("ELU")
        graph.input(shape, dt, g.in_quant(rng, -2.5, 0.0))
        graph.output(shape, dt)
        return graph

    def gen_quantize(rng, dt):
        in_dt, out_dt = dt.split("_")
        shape = g.unary_shape(rng, "int32" if "int32" in dt else "int16")
        graph = g.Graph("QUANTIZE", *g.opts("QuantizeOptions"))
        zp16 = 0 if rng.random() < 0.75 else int(rng.integers(-1000, 1001))
        if in_dt == "float32":
            u = rng.random()
            mag = float(10 ** rng.uniform(-2, 2))
            lo, hi = (0.0, mag) if u < 0.25 else ((-mag, 0.0) if u < 0.45 else (-mag * rng.uniform(0.1, 1), mag))
            graph.float_inputs = [(lo * 1.1, hi * 1.1)]
            graph.input(shape, "float32")
            scale = max(abs(lo), abs(hi)) / 32767.0 * rng.uniform(0.5, 1.3)
            graph.output(shape, out_dt, g.q1(scale, zp16))
            return graph
        s_in = float(10 ** rng.uniform(-6, -3))
        z_in = 0 if rng.random() < 0.7 else int(rng.integers(-100000, 100001))
        graph.input(shape, "int32", g.q1(s_in, z_in))
        m = float(10 ** (rng.uniform(-8.5, -6) if out_dt == "int8" else rng.uniform(-6, -4)))
        z_out = g.zero_point(rng) if out_dt == "int8" else zp16
        graph.output(shape, out_dt, g.q1(s_in / m, z_out))
        return graph

    def gen_dequantize(rng, dt):
        shape = g.unary_shape(rng, "float32")
        graph = g.Graph("DEQUANTIZE", *g.opts("DequantizeOptions"))
        zp = 0 if rng.random() < 0.6 else int(rng.integers(-1000, 1001))
        graph.input(shape, "int16", g.q1(float(10 ** rng.uniform(-5, -2)), zp))
        graph.output(shape, "float32")
        return graph

    def act16(op):
        def gen(rng, dt):
            shape = g.unary_shape(rng, dt)
            graph = g.Graph(op)
            if rng.random() < 0.3:
                scale = 2.0 ** (-12 if op == "LOGISTIC" or rng.random() < 0.5 else -11)
            else:
                scale = float(10 ** rng.uniform(-5, -2.5))
            graph.input(shape, dt, g.q1(scale, 0))
            graph.output(shape, dt, g.q1(2.0 ** -15, 0))
            return graph
        return gen

    def gen_rsqrt(rng, dt):
        if dt == "float32":
            return _float_unary(g, "RSQRT", rng, *_positive(rng))
        shape = g.unary_shape(rng, dt)
        graph = g.Graph("RSQRT")
        q = g.in_quant(rng)
        zp = q[1][0]

        def keep_defined(x, r):
            low = x < zp
            x = x.copy()
            x[low] = r.integers(zp, 128, size=int(low.sum()))
            x[r.uniform(size=x.shape) < 0.05] = zp
            return x
        graph.transform = keep_defined
        graph.input(shape, dt, q)
        top = 1.0 / np.sqrt(q[0][0])  # the largest finite output (value 1)
        graph.output(shape, dt, g.q1(top / 255 * float(10 ** rng.uniform(-1, 0.7)), g.zero_point(rng)))
        return graph

    def gen_l2(rng, dt):
        shape = g.unary_shape(rng, dt)
        graph = g.Graph("L2_NORMALIZATION", *g.opts("L2NormOptions", fusedActivationFunction=g.NONE))
        zero_share = float(rng.uniform(0.2, 1.0)) if rng.random() < 0.2 else 0.0
        if dt == "float32":
            m = float(10 ** rng.uniform(-4, 2))
            graph.float_inputs = [(-m, m)]

            def zeros(x, r):
                x = x.copy()
                if zero_share:
                    x[r.uniform(size=x.shape) < zero_share] = 0.0
                    if x.ndim > 1 and r.random() < 0.5:
                        x.reshape(-1, x.shape[-1])[0] = 0.0
                return x
            graph.transform = zeros
            graph.input(shape, dt)
            graph.output(shape, dt)
            return graph
        q = g.in_quant(rng)

        def at_zero_point(x, r):
            x = x.copy()
            x[r.uniform(size=x.shape) < zero_share] = q[1][0]
            return x
        graph.transform = at_zero_point
        graph.input(shape, dt, q)
        graph.output(shape, dt, g.q1(1.0 / 128, 0))
        return graph

    def gen_log_softmax(rng, dt):
        shape = g.unary_shape(rng, dt)
        shape[-1] = int(rng.integers(1, 21))
        g.budget_check(dt, 2 * int(np.prod(shape)), limit=g.IO_SMALL * 2)
        if dt == "int8":
            graph = g.Graph("LOG_SOFTMAX", *g.opts("LogSoftmaxOptions"))
            graph.input(shape, dt, g.in_quant(rng, -2.5, 0.0))
            graph.output(shape, dt, g.q1(16.0 / 256, 127))
            return graph
        m = float(10 ** rng.uniform(-1, 2))
        return _float_unary_shape(g, "LOG_SOFTMAX", shape, -m, m, 0.1)

    return [
        ("log_softmax", "LOG_SOFTMAX", gen_log_softmax, ("float32", "int8")),
        ("l2_normalization", "L2_NORMALIZATION", gen_l2, ("float32", "int8")),
        ("tanh", "TANH", act16("TANH"), ("int16",)),
        ("logistic", "LOGISTIC", act16("LOGISTIC"), ("int16",)),
        ("quantize", "QUANTIZE", gen_quantize, ("float32_int16", "int32_int8", "int32_int16")),
        ("dequantize", "DEQUANTIZE", gen_dequantize, ("int16",)),
        ("abs", "ABS", gen_abs, ("float32", "int8", "int16", "int16_raw")),
        ("square", "SQUARE", simple("SQUARE", -1.0, 20.0), ("float32",)),
        ("sqrt", "SQRT", positive("SQRT"), ("float32",)),
        ("rsqrt", "RSQRT", gen_rsqrt, ("float32", "int8")),
        ("sin", "SIN", trig("SIN"), ("float32",)),
        ("cos", "COS", trig("COS"), ("float32",)),
        ("log", "LOG", positive("LOG"), ("float32",)),
        ("ceil", "CEIL", simple("CEIL"), ("float32",)),
        ("floor", "FLOOR", simple("FLOOR"), ("float32",)),
        ("round", "ROUND", gen_round, ("float32",)),
        ("exp", "EXP", gen_exp, ("float32",)),
        ("elu", "ELU", gen_elu, ("float32", "int8")),
    ]

