"""TFLM's Signal library, the FFT operators (custom operators with flexbuffer options).

SignalFftAutoScale (bundle signal_fft_auto_scale_int16): a rank-1 int16 frame of 1-600 samples
(the preprocessor's is 512) whose magnitude is drawn as 2**U(0, 15) so that every shift 0-15
appears; some frames all zero, some holding -32768 (TFLM's MaxAbs16 int16 quirk: -(-32768)
is -32768 again, and a later larger sample becomes the maximum), some with a lone -32768 or
32767. Outputs: the scaled frame and the rank-0 int32 scale bits.
"""

import numpy as np


def _frame(rng, n):
    """An int16 frame of `n` samples with a random magnitude and, sometimes, edge values."""
    kind = rng.random()
    if kind < 0.05:
        return np.zeros(n, np.int16)
    amp = 2.0 ** rng.uniform(0, 15)
    x = np.clip(np.round(rng.uniform(-amp, amp, size=n)), -32768, 32767).astype(np.int16)
    if kind < 0.15:
        x[rng.integers(0, n)] = -32768
    elif kind < 0.2:
        x[rng.integers(0, n)] = 32767
    elif kind < 0.25:
        x[:] = -32768
    return x


def gen_fft_auto_scale(g):
    def gen(rng, dt):
        n = int(rng.integers(1, 601)) if rng.random() < 0.8 else 512
        x = _frame(rng, n)
        gr = g.Graph("SignalFftAutoScale")
        gr.custom_options = {}
        gr.input([n], "int16")
        gr.output([n], "int16")
        gr.output([], "int32")
        gr.raw = True
        gr.draw = lambda rng: [x]
        return gr
    return gen


def register(g):
    return [
        ("signal_fft_auto_scale", "SignalFftAutoScale", gen_fft_auto_scale(g), ("int16",)),
    ]
