"""TFLM's Signal library, the FFT operators (custom operators with flexbuffer options).

SignalFftAutoScale (bundle signal_fft_auto_scale_int16): a rank-1 int16 frame of 1-600 samples
(the preprocessor's is 512) whose magnitude is drawn as 2**U(0, 15) so that every shift 0-15
appears; some frames all zero, some holding -32768 (TFLM's MaxAbs16 int16 quirk: -(-32768)
is -32768 again, and a later larger sample becomes the maximum), some with a lone -32768 or
32767. Outputs: the scaled frame and the rank-0 int32 scale bits.

SignalRfft (bundles signal_rfft_int16, signal_rfft_int32; options `T`, `fft_length`): inputs of
rank 1-3 whose frames (the last dim, 1-fft_length samples) are zero-padded to fft_length; in
60% of the cases fft_length is a power of two 2-1024 (the preprocessor's 512: radix 4 and 2
stages), otherwise any even length 4-600 whose half has no prime factor above 5 (radix 3 and 5
stages; the pinned wheel crashes in kiss_fft's generic butterfly, for fft_length 2 too). Samples
over the full range of the type, or with magnitudes 2**U(0, bits) (the auto-scaled frames the
preprocessor feeds it), sometimes all at the type's extremes so that butterflies saturate and
wrap as the C does.
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


def _smooth(k):
    """Whether k has no prime factor above 5."""
    for p in (2, 3, 5):
        while k % p == 0:
            k //= p
    return k == 1


# fft_length / 2 in 2..300 with no prime factor above 5 (kiss_fft's radix 2, 3, 4, 5 stages).
SMOOTH = [k for k in range(2, 301) if _smooth(k)]


def _rfft_frame(rng, shape, dt):
    info = np.iinfo(dt)
    kind = rng.random()
    if kind < 0.1:
        return rng.choice([info.min, info.max, 0], size=shape).astype(dt)
    bits = info.bits - 1
    amp = 2.0 ** rng.uniform(0, bits) if kind < 0.7 else float(info.max)
    x = np.round(rng.uniform(-amp, amp, size=shape))
    return np.clip(x, info.min, info.max).astype(dt)


def gen_rfft(g):
    def gen(rng, dt):
        if rng.random() < 0.6:
            n = 1 << int(rng.integers(2, 11))
        else:
            n = 2 * int(rng.choice(SMOOTH))
        length = n if rng.random() < 0.4 else int(rng.integers(1, n + 1))
        lead = [int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
        if n > 256:
            lead = lead[:1]
        np_dt = {"int16": np.int16, "int32": np.int32}[dt]
        x = _rfft_frame(rng, lead + [length], np_dt)
        gr = g.Graph("SignalRfft")
        gr.custom_options = {"T": {"int16": 7, "int32": 2}[dt], "fft_length": n}
        gr.input(lead + [length], dt)
        gr.output(lead + [n + 2], dt)
        gr.raw = True
        gr.draw = lambda rng: [x]
        return gr
    return gen


def register(g):
    return [
        ("signal_fft_auto_scale", "SignalFftAutoScale", gen_fft_auto_scale(g), ("int16",)),
        ("signal_rfft", "SignalRfft", gen_rfft(g), ("int16", "int32")),
    ]
