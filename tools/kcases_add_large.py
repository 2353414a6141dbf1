"""Int8 ADD cases large enough for the table kernels.

Kiln's same-shape int8 ADD takes both inputs' rescaling from two 256-entry build-time tables
once a tensor holds `add::TABLES_FROM_ELEMENTS` (2048) elements or more, and Helium has its own
four-lane form of that kernel; the 200 small cases of add_int8 never reach it. Each case here
(bundle add_large_int8, 24 cases) is a same-shape ADD of 2048 to 2600 elements (any count
modulo 4, so Helium's last step is predicated), rank 1 to 4, a fused activation drawn as for
add_int8; one case in three has a constant first input (weights in flash, so the output can
only go over the second input). Scales, zero points and inputs are drawn as for add_int8; the
outputs are TFLM's.
"""

import numpy as np

CASES = 24


def register(g):
    def shape(rng):
        n = int(rng.integers(2048, 2601))
        rank = int(rng.integers(1, 5))
        dims = [n]
        if rank > 1:
            # A factorization close to n: trailing dimensions of 2..8, the rest in front.
            dims = []
            m = n
            for _ in range(rank - 1):
                d = int(rng.integers(2, 9))
                dims.append(d)
                m = max(1, m // d)
            dims.insert(0, m)
        return dims

    def gen(rng, dt):
        s = shape(rng)
        case = g.Graph("ADD", *g.opts("AddOptions", fusedActivationFunction=g.act(rng)))
        if rng.random() < 1 / 3:
            q = g.in_quant(rng)
            data = g.tc.random_input(rng, s, dt)
            case.const(data, dt, q, name="c", role="act")
        else:
            case.input(s, dt, g.in_quant(rng))
        case.input(s, dt, g.in_quant(rng))
        case.output(s, dt)
        return case

    return [("add_large", "ADD", gen, ("int8",), CASES)]
