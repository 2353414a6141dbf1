"""Kernel cases of the LSTM family: float32 UNIDIRECTIONAL_SEQUENCE_LSTM and TRANSPOSE_CONV with
a runtime (non-constant) output_shape input.

unidirectional_sequence_lstm_float32: single-op float LSTM models (gen_stateful_cases'
builder, the standard LSTM TFLM accepts: all four gates, no peephole, projection or layer
norm, TANH cell activation), one invoke after reset() (zero hidden and cell state). Drawn:
1-3 batches, 1-4 time steps, input size 1-6, state size 1-5, batch- or time-major (40 %),
cell clip 0 (no clip) / 10 / small (0.05-1.5, clipping often); weights with a typical spread
(1/sqrt(n) times 0.5-3), a saturating one (gate pre-activations past the logistic's cutoffs
-9 and 16.6, 20 %), a huge one (around 1e37-3e38: the FCs overflow to infinity and TFLM's
FLT_MAX clamp matters, 5 %), and in 10 % of the cases a few weights or biases replaced by
special values (0, -0, +-inf, NaN, +-3e38, subnormals). Inputs uniform in [-1, 1).

svdf_float32: float SVDF from gen_stateful_cases.gen_svdf_float (1-3 batches, input size
1-12, rank 1-3, 1-6 units, memory 1-8, NONE/RELU/RELU_N1_TO_1/RELU6), one invoke after
reset() (zero state), inputs uniform in [-1, 1).

transpose_conv_int16: 16x8 TRANSPOSE_CONV (int16 activations with zero point 0, int8
per-channel weights), drawn as gen_kernel_cases' int8 TRANSPOSE_CONV (1-2 batches, 1-5 x 1-5
input, 1-4 -> 1-6 channels, 1-4 x 1-4 filter, strides 1-3, SAME/VALID, NONE/RELU/RELU6), the
input scale 10^U(-5, -2), the bias int64 (60 %), int16 (25 %, TFLM widens it to int64) or absent
(TFLM reads an int32 bias as int64 data, so none is drawn), the output scale calibrated on the
float twin (sometimes tight or narrowed, so that outputs saturate).

transpose_conv_dynamic_{int8,float32,int16}: the TRANSPOSE_CONV cases above (int8/float32 from
gen_kernel_cases) with the output_shape tensor (input 0) a second model input instead of a
constant; each case feeds it the true output shape (TFLM takes the output tensor's dims; Kiln
takes the output tensor's static shape and checks the runtime values in debug builds only).
"""

import numpy as np

import gen_stateful_cases as st

TANH = 4
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-40, -1e-40],
                   dtype=np.float32)


def float_lstm_model(c):
    g = st.Graph()
    tm = c["time_major"]
    B, T, I, S = c["batches"], c["time_steps"], c["input_size"], c["state_size"]
    x = g.tensor([T, B, I] if tm else [B, T, I], "float32")
    wx = [g.tensor([S, I], "float32", c["wx"][k]) for k in range(4)]
    wh = [g.tensor([S, S], "float32", c["wh"][k]) for k in range(4)]
    bias = [g.tensor([S], "float32", c["bias"][k]) for k in range(4)]
    h = g.tensor([B, S], "float32", variable=True)
    cs = g.tensor([B, S], "float32", variable=True)
    y = g.tensor([T, B, S] if tm else [B, T, S], "float32")
    inputs = [x] + wx + wh + [-1, -1, -1] + bias + [-1, -1, h, cs, -1, -1, -1, -1]
    o = st.fb.UnidirectionalSequenceLSTMOptionsT()
    o.fusedActivationFunction = TANH
    o.cellClip = float(c["cell_clip"])
    o.projClip = 0.0
    o.timeMajor = bool(tm)
    o.asymmetricQuantizeInputs = False
    o.diagonalRecurrentTensors = False
    return g.serialize("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y],
                       "UnidirectionalSequenceLSTMOptions", o)


def draw_float_lstm(rng):
    B, T = int(rng.integers(1, 4)), int(rng.integers(1, 5))
    I, S = int(rng.integers(1, 7)), int(rng.integers(1, 6))
    mode = rng.random()

    def w(shape, n):
        if mode < 0.05:  # huge: the FCs overflow
            return (rng.uniform(-1, 1, size=shape) * 3e38).astype(np.float32)
        spread = 1 / np.sqrt(n) * rng.uniform(0.5, 3)
        if mode < 0.25:  # saturating gates
            spread *= rng.uniform(6, 30)
        return rng.normal(0, spread, size=shape).astype(np.float32)

    wx = [w((S, I), I) for _ in range(4)]
    wh = [w((S, S), S) for _ in range(4)]
    bias = [rng.normal(0, 1, size=S).astype(np.float32) for _ in range(4)]
    if rng.random() < 0.1:
        for arr in wx + wh + bias:
            flat = arr.reshape(-1)
            k = int(rng.integers(0, 2))
            idx = rng.choice(flat.size, size=min(k, flat.size), replace=False)
            flat[idx] = rng.choice(SPECIAL, size=idx.size)
    r = rng.random()
    clip = 0.0 if r < 0.3 else (10.0 if r < 0.5 else st.f32(rng.uniform(0.05, 1.5)))
    return dict(time_major=bool(rng.random() < 0.4), batches=B, time_steps=T, input_size=I,
                state_size=S, wx=wx, wh=wh, bias=bias, cell_clip=clip)


def register(g):
    def gen_lstm_float(rng, dt):
        c = draw_float_lstm(rng)
        B, T, I, S = c["batches"], c["time_steps"], c["input_size"], c["state_size"]
        tm = c["time_major"]
        return g.Prebuilt(float_lstm_model(c), [([T, B, I] if tm else [B, T, I], "float32")],
                          [([T, B, S] if tm else [B, T, S], "float32")])

    def gen_transpose_conv16(rng, dt):
        B = int(rng.choice([1, 1, 1, 2]))
        H, W = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        cin, cout = int(rng.integers(1, 5)), int(rng.integers(1, 7))
        kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        sh, sw = int(rng.choice([1, 2, 2, 3])), int(rng.choice([1, 2, 2, 3]))
        pad = int(rng.choice([g.SAME, g.VALID]))
        if pad == g.SAME:
            oh, ow = H * sh, W * sw
        else:
            oh, ow = (H - 1) * sh + kh, (W - 1) * sw + kw
        g.budget_check("int16", B * H * W * cin, B * oh * ow * cout, limit=g.IO_BIG)
        g.budget_check("int8", cout * kh * kw * cin, limit=g.W_BIG)
        gr = g.Graph("TRANSPOSE_CONV", *g.opts("TransposeConvOptions", padding=pad, strideW=sw,
                                                strideH=sh, fusedActivationFunction=g.act(rng)))
        gr.const(np.array([B, oh, ow, cout], np.int32), "int32", name="output_shape")
        w = g.channel_weights(rng, (cout, kh, kw, cin), 0)
        xq = g.in_quant16(rng)
        # TFLite order: output_shape, weights, input, [bias]: the input goes between.
        wq, ws = g.quantize_weights(w, 0, rng)
        gr.const(wq, "int8", quant=(ws, [0] * cout, 0), name="w", role="weight")
        gr.tight_scale = xq[0][0] * max(ws)
        gr.input([B, H, W, cin], "int16", xq)
        # The bias: int64 (the converter's), int16 (TFLM widens it) or none; TFLM reads an
        # int32 one as int64 data, so none is drawn.
        kind = ["int64", "int16", "none"][int(rng.choice(3, p=(0.6, 0.25, 0.15)))]
        if kind == "none":
            gr.none_input()
        else:
            lim = 32767 if kind == "int16" else int(32767 * 128 * np.sqrt(kh * kw * cin))
            bq = rng.integers(-lim, lim + 1, size=cout).astype(g.NP[kind])
            gr.const(bq, kind, quant=([xq[0][0] * s for s in ws], [0] * cout, 0), name="b",
                     role="bias")
        gr.output([B, oh, ow, cout], "int16")
        return gr

    def gen_transpose_conv_dynamic(rng, dt):
        gr = gen_transpose_conv16(rng, dt) if dt == "int16" else g.gen_transpose_conv(rng, dt)
        k = next(i for i, t in enumerate(gr.tensors) if t.name == "output_shape")
        t = gr.tensors[k]
        value, t.data, t.role = t.data, None, "act"
        gr.inputs.append(k)
        gr.fixed_inputs = {len(gr.inputs) - 1: value}
        return gr

    def gen_svdf_float(rng, dt):
        c = st.gen_svdf_float(rng)
        units = c["num_filters"] // c["rank"]
        return g.Prebuilt(st.svdf_model(c), [([c["batches"], c["input_size"]], "float32")],
                          [([c["batches"], units], "float32")])

    return [
        ("svdf", "SVDF", gen_svdf_float, ("float32",)),
        ("unidirectional_sequence_lstm", "UNIDIRECTIONAL_SEQUENCE_LSTM", gen_lstm_float,
         ("float32",)),
        ("transpose_conv_dynamic", "TRANSPOSE_CONV", gen_transpose_conv_dynamic,
         ("int8", "float32", "int16")),
        ("transpose_conv", "TRANSPOSE_CONV", gen_transpose_conv16, ("int16",)),
    ]
