"""Golden data for the keyword-spotting example (examples/kws/, tests/kws.rs): TFLM's
micro_speech pipeline, audio preprocessor then micro_speech, over one seeded 1 s clip.

The clip: neither the pinned `tflite-micro` wheel nor `tensorflow-cpu` ships the micro_speech
test clips (`testdata/*.wav` of TFLM's example are not in the packages), so it is
synthesised, seeded: 16 kHz int16, low background noise all through, a voiced "word"
(a gliding fundamental with its harmonics shaped by three moving formants, under a smooth
envelope) from 0.30 s to 0.68 s, a short fricative (high-passed noise) after it, and a quiet
rising chirp before it.

The pipeline follows TFLM's `tensorflow/lite/micro/examples/micro_speech/micro_speech_test.cc`
(`GenerateFeatures`, `LoadMicroSpeechModelAndPerformInference`):
  * one preprocessor interpreter (its state, the noise estimates of
    SignalFilterBankSpectralSubtraction and PCAN, starts reset), then 49 windows of 30 ms =
    480 samples at a stride of 20 ms = 320 samples (windows start at 0, 320, ..., 15360),
    each one invoke, the state carried from window to window (no reset in between); each
    invoke's 40 int8 features are row k of the 49x40 feature matrix;
  * micro_speech on the 1960 features (row-major), one invoke; its 4 int8 scores are
    (silence, unknown, yes, no), dequantized and argmax'ed for the top category.

Writes examples/kws/golden/:
  clip.bin      16000 int16, little-endian (32000 bytes)
  features.bin  49 x 40 int8 (1960 bytes)
  scores.bin    4 int8
  golden.json   what the files are, the seed, the labels, TFLM's top category, the scores
                dequantized, and sha256 of each file

Run from the repository root: `.venv/bin/python tools/gen_kws_golden.py` (about 2 s).
Deterministic (fixed seed).
"""

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tflite_common as tc  # noqa: E402

OUT = tc.REPO / "examples" / "kws" / "golden"
PREPROCESSOR = tc.SHARED_MODELS / "tflm_audio_preprocessor_int8.tflite"
MICRO_SPEECH = tc.SHARED_MODELS / "tflm_micro_speech_int8.tflite"
SEED = 20261202
RATE = 16000
WINDOW = 480  # kFeatureDurationMs = 30 ms
STRIDE = 320  # kFeatureStrideMs = 20 ms
ROWS = 49  # kFeatureCount
FEATURES = 40  # kFeatureSize
LABELS = ["silence", "unknown", "yes", "no"]  # kCategoryLabels
ARENA = 1 << 16


def synthesise(rng):
    """1 s of speech-like int16 audio at 16 kHz (see the module docs)."""
    n = RATE
    t = np.arange(n) / RATE
    x = rng.normal(0.0, 40.0, n)  # background noise

    # A quiet rising chirp, 0.08-0.22 s, 300 -> 1800 Hz.
    a, b = int(0.08 * RATE), int(0.22 * RATE)
    tc_ = t[a:b] - t[a]
    dur = tc_[-1]
    phase = 2 * np.pi * (300 * tc_ + 0.5 * (1800 - 300) / dur * tc_ ** 2)
    x[a:b] += 900 * np.sin(np.pi * tc_ / dur) ** 2 * np.sin(phase)

    # The voiced "word", 0.30-0.68 s: f0 gliding 150 -> 110 Hz with a little jitter,
    # harmonics weighted by three formants moving from an "e" towards an "s"-like glide.
    a, b = int(0.30 * RATE), int(0.68 * RATE)
    m = b - a
    u = np.linspace(0.0, 1.0, m)
    f0 = 150 - 40 * u + rng.normal(0.0, 1.5, m).cumsum() / np.sqrt(np.arange(1, m + 1))
    ph0 = 2 * np.pi * np.cumsum(f0) / RATE
    formants = [(500 + 200 * u, 90), (1900 - 400 * u, 120), (2600 + 200 * u, 160)]
    voiced = np.zeros(m)
    for h in range(1, 30):
        fh = h * f0
        gain = sum(np.exp(-0.5 * ((fh - fc) / bw) ** 2) for fc, bw in formants)
        gain = gain + 0.05 / h
        voiced += gain * np.sin(h * ph0 + rng.uniform(0, 2 * np.pi))
    envelope = np.sin(np.pi * u) ** 0.6 * (1 - 0.3 * np.sin(2 * np.pi * 3 * u) ** 2)
    voiced *= envelope / np.max(np.abs(voiced)) * 9000
    x[a:b] += voiced

    # A fricative, 0.68-0.78 s: high-passed noise (first difference) under a smooth envelope.
    a, b = int(0.68 * RATE), int(0.78 * RATE)
    noise = np.diff(rng.normal(0.0, 1.0, b - a + 1))
    x[a:b] += 1200 * np.sin(np.pi * np.linspace(0, 1, b - a)) * noise

    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def features_of(clip, carry_state=True):
    """The 49x40 features as micro_speech_test.cc's GenerateFeatures makes them."""
    it = tc.make_interpreter(PREPROCESSOR.read_bytes(), ARENA)
    it.reset()
    rows = []
    for k in range(ROWS):
        if not carry_state:
            it.reset()
        window = clip[k * STRIDE:k * STRIDE + WINDOW]
        assert window.size == WINDOW
        it.set_input(window.reshape(1, WINDOW), 0)
        it.invoke()
        y = np.array(it.get_output(0), dtype=np.int8).reshape(FEATURES)
        rows.append(y.copy())
    return np.stack(rows)


def scores_of(features):
    it = tc.make_interpreter(MICRO_SPEECH.read_bytes(), ARENA)
    it.reset()
    it.set_input(features.reshape(1, ROWS * FEATURES).astype(np.int8), 0)
    it.invoke()
    return np.array(it.get_output(0), dtype=np.int8).reshape(len(LABELS)).copy()


def main():
    rng = np.random.default_rng(SEED)
    clip = synthesise(rng)
    assert clip.size == RATE and (ROWS - 1) * STRIDE + WINDOW <= clip.size
    features = features_of(clip)
    scores = scores_of(features)

    # The state matters: windows run with a reset before each give other features.
    fresh = features_of(clip, carry_state=False)
    assert not np.array_equal(features, fresh), "the preprocessor's state has no effect"
    changed_rows = int(np.sum(np.any(features != fresh, axis=1)))

    md = tc.load_model(MICRO_SPEECH.read_bytes())
    q = md.subgraphs[0].tensors[md.subgraphs[0].outputs[0]].quantization
    scale, zero = float(q.scale[0]), int(q.zeroPoint[0])
    probs = [(int(s) - zero) * scale for s in scores]
    top = int(np.argmax(probs))

    OUT.mkdir(parents=True, exist_ok=True)
    files = {
        "clip.bin": clip.astype("<i2").tobytes(),
        "features.bin": features.astype(np.int8).tobytes(),
        "scores.bin": scores.astype(np.int8).tobytes(),
    }
    for name, data in files.items():
        (OUT / name).write_bytes(data)
    golden = {
        "generator": "tools/gen_kws_golden.py",
        "tflm": "tflite-micro (PyPI) as pinned in tools/requirements.txt",
        "seed": SEED,
        "clip": "synthesised (the wheel ships no micro_speech clips): noise, a chirp "
        "0.08-0.22 s, a voiced word 0.30-0.68 s, a fricative 0.68-0.78 s; "
        "16000 int16 LE at 16 kHz",
        "protocol": "micro_speech_test.cc: preprocessor reset once, then 49 invokes over "
        "windows of 480 samples at a stride of 320 (state carried, no reset), "
        "features[k] = output of window k; micro_speech one invoke on the 49x40 features",
        "preprocessor": PREPROCESSOR.name,
        "micro_speech": MICRO_SPEECH.name,
        "window": WINDOW,
        "stride": STRIDE,
        "rows": ROWS,
        "features_per_row": FEATURES,
        "labels": LABELS,
        "scores": [int(s) for s in scores],
        "scores_dequantized": probs,
        "top": LABELS[top],
        "rows_differing_without_state": changed_rows,
        "sha256": {k: hashlib.sha256(v).hexdigest() for k, v in files.items()},
    }
    (OUT / "golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    print(f"features: {changed_rows} of {ROWS} rows differ when the state is reset per window")
    print("scores:", list(map(int, scores)), {LABELS[i]: round(p, 4) for i, p in enumerate(probs)})
    print("top:", LABELS[top])


if __name__ == "__main__":
    main()
