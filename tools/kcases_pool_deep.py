"""Int8 AVERAGE_POOL_2D cases with many channels and large windows (family "pool_deep",
bundle average_pool_2d_deep_int8, 40 cases).

The int8 average pooling sums a window's channels in 16-bit lanes (at most 256 taps per set of
lanes, `pooling::LANE_TAPS`); with Helium it takes 16 channels per tap when the depth allows.
The 200 cases of average_pool_2d_int8 have 1 to 6 channels and small windows, so they never
reach it. Here: depth 16 to 80 (a third of the cases a multiple of 16), input 1..12 x 1..12,
a window up to the whole input (global pooling, as at a classifier's end: kws_dscnn pools
25 x 5 x 64), sometimes exactly 16 x 16 = 256 taps or more than 256; strides 1..3, SAME or
VALID, fused NONE/RELU/RELU6. One case in four has every input at -128 or 127, the sums'
extremes (256 * -128 = -32768 is the lanes' limit). The outputs are TFLM's.
"""

import numpy as np

CASES = 40


def register(g):
    def gen(rng, dt):
        if rng.random() < 1 / 3:
            c = 16 * int(rng.integers(1, 6))
        else:
            c = int(rng.integers(16, 81))
        u = rng.random()
        if u < 0.2:
            h, w, fh, fw = 16, 16, 16, 16  # exactly 256 taps
        elif u < 0.3:
            h, w = int(rng.integers(16, 20)), int(rng.integers(16, 20))  # over 256 taps
            fh, fw = h, w
        else:
            h, w = int(rng.integers(1, 13)), int(rng.integers(1, 13))
            if rng.random() < 0.5:
                fh, fw = h, w  # global
            else:
                fh, fw = int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1))
        sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        pad = int(rng.choice([g.SAME, g.VALID]))
        oh, ow = g.conv_out(h, fh, sh, 1, pad), g.conv_out(w, fw, sw, 1, pad)
        if oh < 1 or ow < 1:
            raise g.Reject("empty output")
        case = g.Graph("AVERAGE_POOL_2D", *g.opts(
            "Pool2DOptions", padding=pad, strideW=sw, strideH=sh, filterWidth=fw,
            filterHeight=fh, fusedActivationFunction=g.act(rng)))
        q = g.in_quant(rng)
        case.input([1, h, w, c], dt, q)
        case.output([1, oh, ow, c], dt, q)
        if rng.random() < 0.25:
            v = int(rng.choice([-128, 127]))
            case.draw = lambda rng, s=(1, h, w, c), v=v: [np.full(s, v, np.int8)]
        return case

    return [("average_pool_2d_deep", "AVERAGE_POOL_2D", gen, ("int8",), CASES)]
