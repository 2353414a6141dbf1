"""TFLM's Signal library, the FFT operators (custom operators with flexbuffer options).

SignalFftAutoScale (bundle signal_fft_auto_scale_int16): a rank-1 int16 frame of 1-600 samples
(the preprocessor's is 512) whose magnitude is drawn as 2**U(0, 15) so that every shift 0-15
appears; some frames all zero, some holding -32768 (TFLM's MaxAbs16 int16 quirk: -(-32768)
is -32768 again, and a later larger sample becomes the maximum), some with a lone -32768 or
32767. Outputs: the scaled frame and the rank-0 int32 scale bits.

SignalRfft (bundles signal_rfft_int16, signal_rfft_int32, signal_rfft_float32; options `T`,
`fft_length`): inputs of
rank 1-3 whose frames (the last dim, 1-fft_length samples) are zero-padded to fft_length; in
60% of the cases fft_length is a power of two 2-1024 (the preprocessor's 512: radix 4 and 2
stages), otherwise any even length 4-600 whose half has no prime factor above 5 (radix 3 and 5
stages; the pinned wheel crashes in kiss_fft's generic butterfly, for fft_length 2 too). Samples
over the full range of the type, or with magnitudes 2**U(0, bits) (the auto-scaled frames the
preprocessor feeds it), sometimes all at the type's extremes so that butterflies saturate and
wrap as the C does.

SignalIrfft (bundles signal_irfft_int16, signal_irfft_int32, signal_irfft_float32; options `T`,
`fft_length`): the inverse, drawn like SignalRfft: frames of fft_length / 2 + 1 complex values
(fft_length + 2 numbers) over the same lengths and magnitudes, fft_length samples out.

SignalFilterBankSpectralSubtraction (bundle signal_filter_bank_spectral_subtraction_uint32): a
rank-1 uint32 input of num_channels 1-64 values (the preprocessor's 40), one invoke after reset
(the noise estimate starts at zero; `sequences()` covers invocations carrying it over):
spectral_subtraction_bits 0-20 (the preprocessor's 14), smoothing and its alternate drawn in
[0, 2**bits] with one_minus_smoothing = 2**bits - smoothing (as TFLM's Python op computes it)
or, in a fifth of the cases, any int32 (negative values wrap to uint32 as in the C++),
min_signal_remaining likewise, smoothing_bits 0-16 (the preprocessor's 10; large ones shift
input bits out), clamping either way; inputs with magnitudes 2**U(0, 32).
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
    if dt == np.float32:
        scale = 10.0 ** rng.uniform(-3, 4)
        return rng.uniform(-scale, scale, size=shape).astype(np.float32)
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
        np_dt = {"int16": np.int16, "int32": np.int32, "float32": np.float32}[dt]
        x = _rfft_frame(rng, lead + [length], np_dt)
        gr = g.Graph("SignalRfft")
        gr.custom_options = {"T": {"int16": 7, "int32": 2, "float32": 0}[dt], "fft_length": n}
        gr.input(lead + [length], dt)
        gr.output(lead + [n + 2], dt)
        gr.raw = True
        gr.draw = lambda rng: [x]
        return gr
    return gen


def gen_irfft(g):
    def gen(rng, dt):
        if rng.random() < 0.6:
            n = 1 << int(rng.integers(2, 11))
        else:
            n = 2 * int(rng.choice(SMOOTH))
        lead = [int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
        if n > 256:
            lead = lead[:1]
        np_dt = {"int16": np.int16, "int32": np.int32, "float32": np.float32}[dt]
        x = _rfft_frame(rng, lead + [n + 2], np_dt)
        gr = g.Graph("SignalIrfft")
        gr.custom_options = {"T": {"int16": 7, "int32": 2, "float32": 0}[dt], "fft_length": n}
        gr.input(lead + [n + 2], dt)
        gr.output(lead + [n], dt)
        gr.raw = True
        gr.draw = lambda rng: [x]
        return gr
    return gen


def spectral_subtraction_options(rng):
    bits = int(rng.integers(0, 21)) if rng.random() < 0.8 else 14
    one = 1 << bits

    def coeff():
        if rng.random() < 0.2:
            return int(rng.integers(-(1 << 31), 1 << 31))
        return int(rng.integers(0, one + 1))

    smoothing, alternate = coeff(), coeff()
    wrap = rng.random() < 0.2
    return {
        "alternate_one_minus_smoothing": coeff() if wrap else one - alternate,
        "alternate_smoothing": alternate,
        "clamping": bool(rng.random() < 0.5),
        "min_signal_remaining": coeff(),
        "num_channels": int(rng.integers(1, 65)) if rng.random() < 0.8 else 40,
        "one_minus_smoothing": coeff() if wrap else one - smoothing,
        "smoothing": smoothing,
        "smoothing_bits": int(rng.integers(0, 17)),
        "spectral_subtraction_bits": bits,
    }


def spectral_subtraction_input(rng, n):
    mags = 2.0 ** rng.uniform(0, 32, size=n)
    return np.minimum(np.floor(rng.uniform(0, 1, size=n) * mags), 2**32 - 1).astype(np.uint32)


def gen_spectral_subtraction(g):
    def gen(rng, dt):
        opts = spectral_subtraction_options(rng)
        n = opts["num_channels"]
        x = spectral_subtraction_input(rng, n)
        gr = g.Graph("SignalFilterBankSpectralSubtraction")
        gr.custom_options = opts
        gr.input([n], "uint32")
        gr.output([n], "uint32")
        gr.output([n], "uint32")
        gr.raw = True
        gr.draw = lambda rng: [x]
        return gr
    return gen


def register(g):
    return [
        ("signal_fft_auto_scale", "SignalFftAutoScale", gen_fft_auto_scale(g), ("int16",)),
        ("signal_rfft", "SignalRfft", gen_rfft(g), ("int16", "int32", "float32")),
        ("signal_filter_bank_spectral_subtraction", "SignalFilterBankSpectralSubtraction",
         gen_spectral_subtraction(g), ("uint32",)),
        ("signal_irfft", "SignalIrfft", gen_irfft(g), ("int16", "int32", "float32")),
    ]


# --------------------------------------------------------------------------------------------
# Sequences: the noise estimate carried over between invocations (run as a script).

SEQ_SEED = 4711
SEQ_CASES = 24
SEQ_INVOKES = 6
E2E_MODEL = "tests/kernel_cases/models/signal_filter_bank_spectral_subtraction_uint32.tflite"


def _invokes(model, xs, n_out, reset_after=None):
    """TFLM: reset once, then one invoke per input without resetting (the state carries
    over); with `reset_after` k, reset() before input k as well. Outputs per invoke."""
    import tflite_common as tc
    it = tc.make_interpreter(model, 1 << 16)
    it.reset()
    ys = []
    for k, x in enumerate(xs):
        if k == reset_after:
            it.reset()
        it.set_input(x, 0)
        it.invoke()
        ys.append([np.array(it.get_output(i)) for i in range(n_out)])
    return ys


def _rs(a):
    return "&[" + ", ".join(str(int(v)) for v in np.asarray(a).reshape(-1)) + "]"


def sequences():
    """Writes kernels/tests/signal_spectral_subtraction_tflm.rs (random configurations, the
    kernel run SEQ_INVOKES times from TFLM's reset state) and tests/e2e_signal_state/golden.rs
    (the bundle's e2e model through Kiln's generated code: invokes, then reset() and again)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    import gen_kernel_cases as g
    repo = Path(__file__).resolve().parent.parent
    rng = np.random.default_rng(SEQ_SEED)
    cases = []
    while len(cases) < SEQ_CASES:
        gr = gen_spectral_subtraction(g)(rng, "uint32")
        opts = gr.custom_options
        n = opts["num_channels"]
        xs = [spectral_subtraction_input(rng, n) for _ in range(SEQ_INVOKES)]
        # Half the sequences keep the level steady so that the estimate converges.
        if rng.random() < 0.5:
            xs = [xs[0]] * SEQ_INVOKES
        ys = _invokes(g.serialize(gr), xs, 2)
        cases.append((opts, xs, ys))
    out = [
        "//! GENERATED by `tools/kcases_signal_fft.py` (`sequences()`) from the pinned TFLM -- do",
        "//! not edit by hand; rerun the script instead.",
        "//!",
        f"//! SignalFilterBankSpectralSubtraction run for {SEQ_INVOKES} consecutive invokes from TFLM's",
        "//! reset state (noise estimate zero), the estimate carried over: both outputs of every",
        "//! invoke must match TFLM's.",
        "",
        "use kiln_kernels::signal_filter_bank_spectral_subtraction as ss;",
        "",
        "struct Case {",
        "    p: ss::Params,",
        "    inputs: &'static [&'static [u32]],",
        "    outputs: &'static [&'static [u32]],",
        "    noise: &'static [&'static [u32]],",
        "}",
        "",
        "const CASES: &[Case] = &[",
    ]
    for opts, xs, ys in cases:
        u = lambda k: int(opts[k]) & 0xFFFFFFFF  # noqa: E731  (the C++'s uint32 fields)
        out += [
            "    Case {",
            "        p: ss::Params {",
            f"            num_channels: {opts['num_channels']},",
            f"            smoothing: {u('smoothing')},",
            f"            one_minus_smoothing: {u('one_minus_smoothing')},",
            f"            alternate_smoothing: {u('alternate_smoothing')},",
            f"            alternate_one_minus_smoothing: {u('alternate_one_minus_smoothing')},",
            f"            min_signal_remaining: {u('min_signal_remaining')},",
            f"            smoothing_bits: {opts['smoothing_bits']},",
            f"            spectral_subtraction_bits: {opts['spectral_subtraction_bits']},",
            f"            clamping: {'true' if opts['clamping'] else 'false'},",
            "        },",
            "        inputs: &[" + ", ".join(_rs(x) for x in xs) + "],",
            "        outputs: &[" + ", ".join(_rs(y[0]) for y in ys) + "],",
            "        noise: &[" + ", ".join(_rs(y[1]) for y in ys) + "],",
            "    },",
        ]
    out += [
        "];",
        "",
        "#[test]",
        "fn noise_estimate_carries_over_like_tflm() {",
        "    for (c, case) in CASES.iter().enumerate() {",
        "        let p = ss::prepare(case.p).expect(\"TFLM ran these options\");",
        "        let n = p.num_channels;",
        "        let mut state = vec![0u32; n];",
        "        for (k, x) in case.inputs.iter().enumerate() {",
        "            let (mut out, mut noise) = (vec![0u32; n], vec![0u32; n]);",
        "            ss::signal_filter_bank_spectral_subtraction(&p, x, &mut state, &mut out, &mut noise);",
        "            assert_eq!(out, case.outputs[k], \"case {c} invoke {k}: output\");",
        "            assert_eq!(noise, case.noise[k], \"case {c} invoke {k}: noise estimate\");",
        "        }",
        "    }",
        "}",
        "",
    ]
    (repo / "kernels/tests/signal_spectral_subtraction_tflm.rs").write_text("\n".join(out))
    # The e2e model: SEQ_INVOKES invokes, then reset() before one more with the first input.
    model = (repo / E2E_MODEL).read_bytes()
    sg = g.tc.load_model(model).subgraphs[0]
    n = int(sg.tensors[sg.inputs[0]].shape[0])
    xs = [spectral_subtraction_input(rng, n) for _ in range(SEQ_INVOKES)]
    xs = xs + [xs[0]]
    ys = _invokes(model, xs, 2, reset_after=SEQ_INVOKES)
    e2e = [
        "// GENERATED by `tools/kcases_signal_fft.py` (`sequences()`) from the pinned TFLM: the",
        f"// inputs and both outputs of {SEQ_INVOKES} invokes of {E2E_MODEL},",
        "// then reset() and one more invoke with the first input. Included by",
        "// tests/e2e_signal_state.rs.",
        "",
        "const INPUTS: &[&[u32]] = &[" + ", ".join(_rs(x) for x in xs) + "];",
        "const OUTPUTS: &[&[u32]] = &[" + ", ".join(_rs(y[0]) for y in ys) + "];",
        "const NOISE: &[&[u32]] = &[" + ", ".join(_rs(y[1]) for y in ys) + "];",
        "",
    ]
    (repo / "tests/e2e_signal_state").mkdir(exist_ok=True)
    (repo / "tests/e2e_signal_state/golden.rs").write_text("\n".join(e2e))


if __name__ == "__main__":
    sequences()
