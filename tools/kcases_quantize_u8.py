"""QUANTIZE between int8 and uint8 (bundles quantize_int8_uint8, quantize_uint8_int8).

TFLM's quantize_common.cc requantizes int8 -> uint8 and uint8 -> int8 with
`reference_ops::Requantize` (multiplier of `input_scale / output_scale`, both zero points;
a bit flip when the scales are equal and the zero points differ by 128, which gives the
same values). Drawn: a random input quantization (uint8 zero points over 0..=255, int8 over
-128..=127); the output scale calibrated from the input's float range (widened or narrowed),
or, in 30 % of the cases, equal to the input scale with the zero point shifted by exactly
128 (the wheel's bit-flip path), or a random ratio of 0.1-10 (saturation both ways).
"""


def _quant(rng, dt, g):
    scale = float(10 ** rng.uniform(-3, 0))
    if dt == "uint8":
        zp = int(rng.integers(0, 256)) if rng.random() < 0.8 else int(rng.choice([0, 128, 255]))
    else:
        zp = int(g.zero_point(rng))
    return scale, zp


def _gen(g, in_dt, out_dt):
    def gen(rng, _dt):
        shape = g.unary_shape(rng, "int8")
        q = g.Graph("QUANTIZE", *g.opts("QuantizeOptions"))
        s_in, zp_in = _quant(rng, in_dt, g)
        q.input(shape, in_dt, g.q1(s_in, zp_in))
        lo, hi = (0, 255) if in_dt == "uint8" else (-128, 127)
        u = rng.random()
        shift = 128 if out_dt == "uint8" else -128
        if u < 0.3:  # always within the output's range
            scale, zp = s_in, zp_in + shift
        elif u < 0.5:
            scale = s_in * float(10 ** rng.uniform(-1, 1))
            zp = int(rng.integers(0, 256)) if out_dt == "uint8" else int(rng.integers(-128, 128))
        else:
            f = [(lo - zp_in) * s_in, (hi - zp_in) * s_in]
            scale, zp = g.calibrate(f, rng)
            if out_dt == "uint8":
                zp += 128
        lo_o, hi_o = (0, 255) if out_dt == "uint8" else (-128, 127)
        zp = max(lo_o, min(hi_o, zp))
        q.output(shape, out_dt, g.q1(scale, zp))
        return q

    return gen


def register(g):
    return [
        ("quantize", "QUANTIZE", _gen(g, "int8", "uint8"), ("int8_uint8",)),
        ("quantize", "QUANTIZE", _gen(g, "uint8", "int8"), ("uint8_int8",)),
    ]
