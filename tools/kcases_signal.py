"""TFLM's Signal library operators (custom operators with flexbuffer options).

SignalWindow (bundle signal_window_int16): `clamp((x * w) >> shift)` per frame, int16 input
of rank 1-3 whose last dim is the window's length (1-64 samples; TFLM applies the window to
every run of that many samples), a constant int16 window drawn over the full int16 range (in
half the cases a Hann-like window in Q(shift) as the audio preprocessor has), shift 0-16
(the preprocessor uses 12), inputs over the full int16 range so the products saturate.
SignalEnergy (bundle signal_energy_int16): the uint32 energy `re² + im²` of the bins
`start_index..end_index` of an int16 complex spectrum (K bins, 1-300, in 1/5 of the cases the
preprocessor's 257), inputs over the full int16 range, a tenth of them at -32768 or 32767
(-32768 in both parts gives 2^31). TFLM leaves the bins outside the range as they were in
its arena, which holds its allocator's leftovers (pointers among them) in these runs, so the
cases write every bin: start 0, end K, the input 2K values or more (the preprocessor's is
514 for 257 bins). Kiln writes zeros outside the range, as TFLM's `energy_test.cc` expects
of a zeroed output; those tests (sub-ranges 2..4, 0..4, 4..8 of 8) are a unit test.
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


def extremes(share, values):
    """A transform putting `values` at a `share` of the positions (saturation cases)."""
    def transform(x, rng):
        mask = rng.random(x.shape) < share
        x = x.copy()
        x[mask] = rng.choice(np.asarray(values, dtype=x.dtype), size=int(mask.sum()))
        return x
    return transform


def gen_energy(g):
    def gen(rng, dt):
        k = 257 if rng.random() < 0.2 else int(rng.integers(1, 301))
        extra = 0 if rng.random() < 0.5 else int(rng.integers(1, 20))
        gr = g.Graph("SignalEnergy")
        gr.custom_options = {"end_index": k, "start_index": 0}
        gr.input([2 * k + extra], "int16")
        gr.output([k], "uint32")
        gr.raw = True
        gr.transform = extremes(0.1, [-32768, 32767])
        return gr
    return gen

def register(g):
    return [
        ("signal_window", "SignalWindow", gen_window(g), ("int16",)),
        ("signal_energy", "SignalEnergy", gen_energy(g), ("int16",)),
    ]
