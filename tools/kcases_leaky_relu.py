"""LEAKY_RELU cases whose scales make TFLM's double-precision multipliers matter.

TFLM computes LEAKY_RELU's two requantization multipliers, `input_scale * alpha / output_scale`
and `input_scale / output_scale`, in double (leaky_relu_common.cc in the pinned wheel). Computed
in float they come out a few units of the 24th bit away, and QuantizeMultiplier keeps 31 bits,
so the Q31 multipliers differ; an output changes only for the few inputs whose product lands
next to a rounding boundary, which random inputs almost never hit (the 200 cases of
leaky_relu_int16/int8 never do).

Each case here (bundles leaky_relu_scales_int8, leaky_relu_scales_int16) draws the input scale,
zero points and alpha as leaky_relu_<dt> does and an output scale (see gen), emulates TFLM's integer arithmetic (QuantizeMultiplier,
MultiplyByQuantizedMultiplier, offsets, clamping) with both the float and the double
multipliers over every input value, redraws the scales until some input values give different
outputs, and puts one to three of those values among otherwise random inputs. The golden
outputs are TFLM's, as for every case; the emulation only chooses inputs.
"""

import math

import numpy as np


def quantize_multiplier(d):
    """TFLM's QuantizeMultiplier: (Q31 multiplier, shift) of a double."""
    if d == 0.0:
        return 0, 0
    q, shift = math.frexp(d)
    q_fixed = int(math.copysign(math.floor(abs(q) * (1 << 31) + 0.5), q))  # std::round
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q_fixed, shift


def multiply_by_quantized_multiplier(x, m, shift):
    """TFLM's MultiplyByQuantizedMultiplier (double rounding) on an int64 array."""
    left, right = max(shift, 0), max(-shift, 0)
    a = x * (1 << left)
    ab = a * m
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    s = ab + nudge
    high = np.where(s >= 0, s >> 31, -((-s) >> 31))  # C++ division truncates toward zero
    if right == 0:
        return high
    mask = (1 << right) - 1
    threshold = (mask >> 1) + (high < 0)
    return (high >> right) + ((high & mask) > threshold)


def outputs(values, in_zp, out_zp, alpha_mq, ident_mq, lo, hi):
    v = values - in_zp
    y = np.where(v >= 0, multiply_by_quantized_multiplier(v, *ident_mq),
                 multiply_by_quantized_multiplier(v, *alpha_mq))
    return np.clip(y + out_zp, lo, hi)


def register(g):
    def gen(rng, dt):
        for _ in range(200):
            case = g.gen_leaky_relu(rng, dt)
            x = case.tensors[case.inputs[0]]
            y = case.tensors[case.outputs[0]]
            in_s, in_zp = x.quant[0][0], x.quant[1][0]
            alpha = float(case.options.alpha)
            lo, hi = (-128, 127) if dt == "int8" else (-32768, 32767)
            # The output quantization: for int16 a scale near the input's (some of the 65536
            # input values then always straddle a rounding boundary); for int8, with only 256
            # values, a scale that puts one input value's exact output on a half integer
            # (v * multiplier = t + 1/2 up to float rounding), so that the two multipliers
            # round it to different sides about half the time.
            if dt == "int16":
                out_s = float(np.float32(in_s * 10 ** rng.uniform(-1.0, 1.0)))
                out_zp = 0
            else:
                out_zp = g.zero_point(rng)
                v = int(rng.integers(lo, hi + 1)) - in_zp
                t = int(rng.integers(-100, 100)) + 0.5
                m = alpha if v < 0 else 1.0
                if v == 0 or m == 0.0 or (v * m) * t <= 0:
                    continue
                out_s = float(np.float32(in_s * m * v / t))
            f32 = np.float32
            pairs = {
                "float": (float(f32(in_s) * f32(alpha) / f32(out_s)), float(f32(in_s) / f32(out_s))),
                "double": (float(f32(in_s)) * float(f32(alpha)) / float(f32(out_s)),
                           float(f32(in_s)) / float(f32(out_s))),
            }
            mq = {k: (quantize_multiplier(a), quantize_multiplier(i)) for k, (a, i) in pairs.items()}
            values = np.arange(lo, hi + 1, dtype=np.int64)
            ys = {k: outputs(values, in_zp, out_zp, a, i, lo, hi) for k, (a, i) in mq.items()}
            differ = values[ys["float"] != ys["double"]]
            if len(differ) == 0:
                continue
            y.quant = g.q1(out_s, out_zp)
            shape = x.shape
            chosen = rng.choice(differ, size=int(rng.integers(1, min(3, len(differ)) + 1)))

            def make_inputs(rng, shape=shape, chosen=chosen, dt=dt):
                v = g.tc.random_input(rng, shape, dt).reshape(-1)
                at = rng.choice(v.size, size=min(len(chosen), v.size), replace=False)
                v[at] = chosen[:len(at)]
                return [v.reshape(shape)]

            case.draw = make_inputs
            return case
        raise g.Reject("no scales found where the multipliers' precision matters")

    return [("leaky_relu_scales", "LEAKY_RELU", gen, ("int8", "int16"))]
