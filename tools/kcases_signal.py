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
SignalFilterBank (bundle signal_filter_bank_uint32): uint32 spectrum [L] (L 1-300, values
over the full uint32 range, a tenth at 2^32 - 1) through 1-48 channels (the preprocessor's
40 over 257 bins); each of the num_channels + 1 table entries a width 0-16 (1 in 20 negative:
TFLM reads nothing then), a frequency start inside the spectrum, a weight start inside the
weights (consecutive, as mel tables are, or random); weights in Q12 with unweights
4096 - w (as the preprocessor's) or both over the full int16 range (negative ones wrap in
uint64); in 1 case of 10 an output shorter than num_channels (TFLM copies that many).
SignalFilterBankSquareRoot (bundle signal_filter_bank_square_root_uint64): uint64 channels
[1-64] (the preprocessor's 40) drawn as full-range values, values below 2^32 (TFLM's 32-bit
routine), perfect squares and their neighbours, values at the 2^32 boundary and 0 and
2^64 - 1; the runtime scale bits (a scalar int32 input) in 0..=31 (the preprocessor's come
from SignalFftAutoScale). Outside 0..=31 the C++ shift is undefined (the wheel shifts modulo
32): those values are not drawn; the kernel's unit test holds Kiln's definition.
SignalFilterBankLog (bundle signal_filter_bank_log_uint32): uint32 channels [1-64] (the
preprocessor's 40) drawn over the full range, below 2^16, and 0, 1, 2 and 2^32 - 1;
input_correction_bits 0-31 (the preprocessor's 3: large shifts drop the top bits, as the C++
does), output_scale mostly 1-2^15 (the preprocessor's 64, TFLM's tests 1600 and 32768, so
some outputs saturate at 32767), sometimes over the whole int32 range (the C++ converts it to
uint32 and its product wraps).
SignalPCAN (bundle signal_pcan_uint32): uint32 channels [1-64] (the preprocessor's 40), each
over the full range or below 2^p for p uniform in 0-32; noise estimates 0-2 or uniform
inside a power-of-two interval drawn uniformly (every segment of the gain table is read);
gain table of 125 entries (sometimes a few more) as the preprocessor's (read from
../shared/models/tflm_audio_preprocessor_int8.tflite) or over the full int16 range (negative
gains wrap in the C++'s uint32); snr_shift 0-63, mostly 0-16 (the preprocessor's 6).
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

def gen_filter_bank(g):
    def gen(rng, dt):
        n = 40 if rng.random() < 0.2 else int(rng.integers(1, 49))
        length = 257 if rng.random() < 0.2 else int(rng.integers(1, 301))
        widths = rng.integers(0, min(16, length) + 1, size=n + 1)
        negative = rng.random(n + 1) < 0.05
        widths[negative] = -rng.integers(1, 100, size=int(negative.sum()))
        pos = np.maximum(widths, 0)
        fstarts = np.array([int(rng.integers(0, length - w + 1)) for w in pos])
        if rng.random() < 0.5:
            wstarts = np.concatenate([[0], np.cumsum(pos)[:-1]])
            n_w = int(pos.sum()) + int(rng.integers(0, 4))
        else:
            n_w = int(rng.integers(max(1, int(pos.max())), 400))
            wstarts = np.array([int(rng.integers(0, n_w - w + 1)) for w in pos])
        fstarts[negative] = rng.integers(-32768, 32768, size=int(negative.sum()))
        wstarts[negative] = rng.integers(-32768, 32768, size=int(negative.sum()))
        if rng.random() < 0.5:
            w = rng.integers(0, 4097, size=n_w)
            u = 4096 - w
        else:
            w = rng.integers(-32768, 32768, size=n_w)
            u = rng.integers(-32768, 32768, size=n_w)
        n_out = int(rng.integers(1, n + 1)) if rng.random() < 0.1 else n
        gr = g.Graph("SignalFilterBank")
        gr.custom_options = {"num_channels": n}
        gr.input([length], "uint32")
        gr.const(w.astype(np.int16), "int16", name="weights")
        gr.const(u.astype(np.int16), "int16", name="unweights")
        gr.const(fstarts.astype(np.int16), "int16", name="channel_frequency_starts")
        gr.const(wstarts.astype(np.int16), "int16", name="channel_weight_starts")
        gr.const(widths.astype(np.int16), "int16", name="channel_widths")
        gr.output([n_out], "uint64")
        gr.raw = True
        gr.transform = extremes(0.1, [2**32 - 1])
        return gr
    return gen


def gen_filter_bank_square_root(g):
    def draw_channels(rng, n):
        kind = rng.integers(0, 5, size=n)
        full = rng.integers(0, 2**64, size=n, dtype=np.uint64)
        low = rng.integers(0, 2**32, size=n, dtype=np.uint64)
        root = rng.integers(0, 2**32, size=n, dtype=np.uint64)
        near = root * root + rng.integers(-1, 2, size=n).astype(np.uint64) + root * rng.integers(0, 2, size=n).astype(np.uint64)
        edge = rng.choice(np.array([0, 1, 2**32 - 1, 2**32, 2**32 + 1, 2**64 - 1, 2**64 - 2, 2**63], dtype=np.uint64), size=n)
        return np.choose(kind, [full, low, near, edge, low >> rng.integers(0, 32, size=n).astype(np.uint64)])

    def gen(rng, dt):
        n = 40 if rng.random() < 0.2 else int(rng.integers(1, 65))
        bits = int(rng.integers(0, 16)) if rng.random() < 0.5 else int(rng.integers(0, 32))
        gr = g.Graph("SignalFilterBankSquareRoot")
        gr.input([n], "uint64")
        gr.input([], "int32")
        gr.output([n], "uint32")
        gr.raw = True
        gr.draw = lambda r: [draw_channels(r, n), np.array(bits, np.int32)]
        return gr
    return gen


def gen_filter_bank_log(g):
    def gen(rng, dt):
        n = 40 if rng.random() < 0.2 else int(rng.integers(1, 65))
        r = rng.random()
        bits = 3 if r < 0.3 else int(rng.integers(0, 8)) if r < 0.7 else int(rng.integers(0, 32))
        r = rng.random()
        scale = (64 if r < 0.3 else int(rng.integers(1, 2**15 + 1)) if r < 0.85
                 else int(rng.integers(-2**31, 2**31)))
        gr = g.Graph("SignalFilterBankLog")
        gr.custom_options = {"input_correction_bits": bits, "output_scale": scale}
        gr.input([n], "uint32")
        gr.output([n], "int16")
        gr.raw = True

        def draw(r):
            kind = r.integers(0, 3, size=n)
            full = r.integers(0, 2**32, size=n, dtype=np.uint64)
            low = r.integers(0, 2**16, size=n, dtype=np.uint64)
            edge = r.choice(np.array([0, 1, 2, 3, 2**32 - 1], dtype=np.uint64), size=n)
            return [np.choose(kind, [full, low, edge]).astype(np.uint32)]
        gr.draw = draw
        return gr
    return gen


def preprocessor_gain_lut():
    """The audio preprocessor's PCAN gain table (its SignalPCAN's third input)."""
    import tflite_common as tc
    m = tc.load_model((tc.SHARED_MODELS / "tflm_audio_preprocessor_int8.tflite").read_bytes())
    sg = m.subgraphs[0]
    for op in sg.operators:
        if m.operatorCodes[op.opcodeIndex].customCode == b"SignalPCAN":
            t = sg.tensors[op.inputs[2]]
            return np.frombuffer(bytes(m.buffers[t.buffer].data), dtype="<i2").copy()
    raise SystemExit("the audio preprocessor has no SignalPCAN")


def gen_pcan(g):
    cache = {}

    def gen(rng, dt):
        n = 40 if rng.random() < 0.2 else int(rng.integers(1, 65))
        if rng.random() < 0.5:
            if "lut" not in cache:
                cache["lut"] = preprocessor_gain_lut()
            lut = cache["lut"]
        else:
            lut = rng.integers(-32768, 32768, size=125 + int(rng.integers(0, 4)))
        r = rng.random()
        shift = 6 if r < 0.3 else int(rng.integers(0, 17)) if r < 0.7 else int(rng.integers(0, 64))
        gr = g.Graph("SignalPCAN")
        gr.custom_options = {"snr_shift": shift}
        gr.input([n], "uint32")
        gr.input([n], "uint32", name="noise_estimate")
        gr.const(np.asarray(lut).astype(np.int16), "int16", name="gain_lut")
        gr.output([n], "uint32")
        gr.raw = True

        def draw(r):
            top = r.integers(0, 33, size=n)
            x = r.integers(0, 2**32, size=n, dtype=np.uint64) >> (32 - top).astype(np.uint64)
            p = r.integers(2, 33, size=n)
            lo = np.left_shift(np.uint64(1), (p - 1).astype(np.uint64))
            noise = lo + (r.integers(0, 2**31, size=n, dtype=np.uint64) % lo)
            small = r.random(n) < 0.15
            noise[small] = r.integers(0, 3, size=int(small.sum()))
            return [x.astype(np.uint32), noise.astype(np.uint32)]
        gr.draw = draw
        return gr
    return gen


def register(g):
    return [
        ("signal_window", "SignalWindow", gen_window(g), ("int16",)),
        ("signal_energy", "SignalEnergy", gen_energy(g), ("int16",)),
        ("signal_filter_bank", "SignalFilterBank", gen_filter_bank(g), ("uint32",)),
        ("signal_filter_bank_square_root", "SignalFilterBankSquareRoot",
         gen_filter_bank_square_root(g), ("uint64",)),
        ("signal_filter_bank_log", "SignalFilterBankLog", gen_filter_bank_log(g), ("uint32",)),
        ("signal_pcan", "SignalPCAN", gen_pcan(g), ("uint32",)),
    ]
