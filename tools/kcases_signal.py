"""TFLM's Signal library operators (custom operators with flexbuffer options).

SignalWindow (bundle signal_window_int16): `clamp((x * w) >> shift)` per frame, int16 input
of rank 1-3 whose last dim is the window's length (1-64 samples; TFLM applies the window to
every run of that many samples), a constant int16 window drawn over the full int16 range (in
half the cases a Hann-like window in Q(shift) as the audio preprocessor has), shift 0-16
(the preprocessor uses 12), inputs over the full int16 range so the products saturate.
"""

import numpy as np


def gen_window(g):
    def gen(rng, dt):
        n = int(rng.integers(1, 65))
        lead = [int(d) for d in rng.integers(1, 5, size=int(rng.integers(0, 3)))]
        shape = lead + [n]
        shift = int(rng.integers(0, 17))
        if rng.random() < 0.5:
            k = np.arange(n)
            w = np.round((0.5 - 0.5 * np.cos(2 * np.pi * (k + 0.5) / n)) * (1 << min(shift, 14)))
            w = np.clip(w, -32768, 32767).astype(np.int16)
        else:
            w = rng.integers(-32768, 32768, size=n).astype(np.int16)
        gr = g.Graph("SignalWindow")
        gr.custom_options = {"shift": shift}
        gr.input(shape, "int16")
        gr.const(w, "int16", name="window")
        gr.output(shape, "int16")
        gr.raw = True
        return gr
    return gen


def register(g):
    return [("signal_window", "SignalWindow", gen_window(g), ("int16",))]
