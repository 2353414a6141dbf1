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

unidirectional_sequence_lstm_int16: the 16x8 LSTM TFLM runs (int16 input, hidden state and
output with zero points 0, int8 weights, int64 biases, int16 cell state), drawn as
gen_stateful_cases' int8 LSTM: 1-3 batches, 1-4 steps, input size 1-8, state size 1-6, batch-
or time-major, cell state scales 2^-11..2^-13, cell clip 0 / 10 / 0.3-3; the input scale
10^U(-5, -3.5), the hidden scale ~2^-15, weight scales that give gate pre-activations a spread
of ~1.5 (so the sigmoid/tanh LUTs and the int16 saturations are reached), int64 biases within
+-1. Inputs over the whole int16 range.

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

    def gen_lstm_int16(rng, dt):
        c = draw_int16_lstm(rng)
        B, T, I, S = c["batches"], c["time_steps"], c["input_size"], c["state_size"]
        tm = c["time_major"]
        return g.Prebuilt(int16_lstm_model(c), [([T, B, I] if tm else [B, T, I], "int16")],
                          [([T, B, S] if tm else [B, T, S], "int16")])

    return [
        ("svdf", "SVDF", gen_svdf_float, ("float32",)),
        ("unidirectional_sequence_lstm", "UNIDIRECTIONAL_SEQUENCE_LSTM", gen_lstm_float,
         ("float32",)),
        ("unidirectional_sequence_lstm", "UNIDIRECTIONAL_SEQUENCE_LSTM", gen_lstm_int16,
         ("int16",)),
        ("transpose_conv_dynamic", "TRANSPOSE_CONV", gen_transpose_conv_dynamic,
         ("int8", "float32", "int16")),
        ("transpose_conv", "TRANSPOSE_CONV", gen_transpose_conv16, ("int16",)),
    ]


def int16_lstm_model(c):
    """The int8 LSTM of gen_stateful_cases with int16 input, hidden state and output, int64
    biases (16x8 quantization: zero points 0)."""
    g = st.Graph()
    tm = c["time_major"]
    B, T, I, S = c["batches"], c["time_steps"], c["input_size"], c["state_size"]
    x = g.tensor([T, B, I] if tm else [B, T, I], "int16", quant=c["input"])
    wx = [g.tensor([S, I], "int8", c["wx"][k], quant=(c["wx_scale"][k], 0)) for k in range(4)]
    wh = [g.tensor([S, S], "int8", c["wh"][k], quant=(c["wh_scale"][k], 0)) for k in range(4)]
    bias = []
    for k in range(4):
        t = g.tensor([S], "int32", np.zeros(S, np.int32),
                     quant=(st.f32(np.float32(c["input"][0]) * np.float32(c["wx_scale"][k])), 0))
        g.tensors[t].type = st.fb.TensorType.INT64
        g.buffers[g.tensors[t].buffer].data = np.asarray(c["bias"][k], np.int64).tobytes()
        bias.append(t)
    h = g.tensor([B, S], "int16", quant=c["hidden"], variable=True)
    cs = g.tensor([B, S], "int16", quant=(c["cell_scale"], 0), variable=True)
    y = g.tensor([T, B, S] if tm else [B, T, S], "int16", quant=c["hidden"])
    inter = [g.tensor([0], "float32") for _ in range(4)]
    inter.append(g.tensor([0], "int16", quant=c["hidden"]))
    inputs = [x] + wx + wh + [-1, -1, -1] + bias + [-1, -1, h, cs, -1, -1, -1, -1]
    o = st.fb.UnidirectionalSequenceLSTMOptionsT()
    o.fusedActivationFunction = TANH
    o.cellClip = float(c["cell_clip"])
    o.projClip = 0.0
    o.timeMajor = bool(tm)
    return g.serialize("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y],
                       "UnidirectionalSequenceLSTMOptions", o, intermediates=inter)


def draw_int16_lstm(rng):
    B, T = int(rng.integers(1, 4)), int(rng.integers(1, 5))
    I, S = int(rng.integers(1, 9)), int(rng.integers(1, 7))
    in_s = st.f32(10 ** rng.uniform(-5, -3.5))
    h_s = st.f32(1 / 32768 * 10 ** rng.uniform(-0.3, 0.3))
    # Gate pre-activations with a real spread of ~1.5 (int16 inputs over ~ +-18000).
    wx_s = [st.f32(1.5 / (in_s * np.sqrt(I) * 18000 * 73) * 10 ** rng.uniform(-0.3, 0.3))
            for _ in range(4)]
    wh_s = [st.f32(1.5 / (h_s * np.sqrt(S) * 18000 * 73) * 10 ** rng.uniform(-0.3, 0.3))
            for _ in range(4)]
    bias = [np.round(rng.uniform(-1, 1, size=S) / (np.float32(in_s) * np.float32(s)))
            .astype(np.int64) for s in wx_s]
    r = rng.random()
    clip = 0.0 if r < 0.3 else (10.0 if r < 0.6 else st.f32(rng.uniform(0.3, 3)))
    return dict(time_major=bool(rng.random() < 0.4), batches=B, time_steps=T, input_size=I,
                state_size=S, input=(in_s, 0), hidden=(h_s, 0),
                cell_scale=st.f32(2.0 ** int(rng.choice([-11, -12, -12, -13]))), cell_clip=clip,
                wx=[rng.integers(-127, 128, size=(S, I)) for _ in range(4)], wx_scale=wx_s,
                wh=[rng.integers(-127, 128, size=(S, S)) for _ in range(4)], wh_scale=wh_s,
                bias=bias)
