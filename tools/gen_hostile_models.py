"""Builds Kiln's hostile test models and records what TFLM does with each.

Writes (paths relative to the repository root):
  tests/hostile/<name>.tflite     small models an attacker (or a broken converter) could
                                  produce: no operators, no tensors, extreme scales, sizes no
                                  32-bit core can address, out-of-range zero points, zero
                                  strides, wrong output shapes, unknown custom operators
  tests/hostile/tflm.json         per model: whether the pinned TFLM wheel accepts it
                                  ("ok") or refuses it (its error, first line), so the Rust
                                  tests can check that Kiln refuses what TFLM refuses
  tests/hostile/golden/<name>/    for the models TFLM runs: golden data (seeds 1, 2, 3),
                                  same format and protocol as ../shared/models/golden

The expected Kiln diagnostics are in tests/hostile.rs, not here. Every model is built with
the schema object API shipped in tflite-micro and stays under 2 KB.

Run from the repository root:  .venv/bin/python tools/gen_hostile_models.py   (a few seconds)
"""

import json
import shutil
import sys

import flatbuffers
import numpy as np

import tflite_common as tc
from gen_kernel_cases import opts, run_tflm

fb = tc.schema_fb
OUT = tc.REPO / "tests" / "hostile"
ARENA = 64 * 1024


def tensor(shape, dtype, name, scale=None, zero_point=0, buffer=0, per_channel=None):
    t = fb.TensorT()
    t.shape = list(shape)
    t.type = getattr(fb.TensorType, dtype.upper())
    t.name = name
    t.buffer = buffer
    if per_channel is not None:
        scales, zps, axis = per_channel
        q = fb.QuantizationParametersT()
        q.scale, q.zeroPoint, q.quantizedDimension = list(scales), list(zps), axis
        t.quantization = q
    elif scale is not None:
        q = fb.QuantizationParametersT()
        q.scale, q.zeroPoint, q.quantizedDimension = [float(scale)], [int(zero_point)], 0
        t.quantization = q
    return t


class Model:
    """One subgraph, built up tensor by tensor."""

    def __init__(self):
        self.tensors = []
        self.buffers = [fb.BufferT()]  # buffer 0: empty, shared by tensors without data
        self.codes = []
        self.ops = []

    def add(self, t, data=None):
        if data is not None:
            b = fb.BufferT()
            b.data = list(np.ascontiguousarray(data).tobytes())
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        self.tensors.append(t)
        return len(self.tensors) - 1

    def op(self, name, inputs, outputs, options=None, custom=None, custom_options=None):
        code = fb.OperatorCodeT()
        if custom is not None:
            code.builtinCode = fb.BuiltinOperator.CUSTOM
            code.deprecatedBuiltinCode = fb.BuiltinOperator.CUSTOM
            code.customCode = custom
        else:
            c = getattr(fb.BuiltinOperator, name)
            code.builtinCode = c
            code.deprecatedBuiltinCode = min(c, 127)
        code.version = 1
        self.codes.append(code)
        o = fb.OperatorT()
        o.opcodeIndex = len(self.codes) - 1
        o.inputs, o.outputs = list(inputs), list(outputs)
        if options is not None:
            kind, value = options
            o.builtinOptionsType = getattr(fb.BuiltinOptions, kind)
            o.builtinOptions = value
        if custom_options is not None:  # raw bytes (a flexbuffer, or not)
            o.customOptions = list(custom_options)
        self.ops.append(o)

    def bytes(self, inputs, outputs):
        sg = fb.SubGraphT()
        sg.tensors = self.tensors
        sg.inputs, sg.outputs = list(inputs), list(outputs)
        sg.operators = self.ops
        m = fb.ModelT()
        m.version = 3
        m.operatorCodes = self.codes
        m.subgraphs = [sg]
        m.buffers = self.buffers
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def conv(in_scale=0.5, w_scale=0.01, out_scale=0.1, stride=1, out_hw=4, w_zp=0):
    """CONV_2D 1x1: int8 [1,4,4,2] -> [1,out_hw,out_hw,2], per-channel weights."""
    m = Model()
    x = m.add(tensor([1, 4, 4, 2], "int8", "input", in_scale, 0))
    w = m.add(
        tensor([2, 1, 1, 2], "int8", "weights", per_channel=([w_scale] * 2, [w_zp] * 2, 0)),
        np.array([1, -2, 3, -4], np.int8),
    )
    b = m.add(
        tensor([2], "int32", "bias", per_channel=([in_scale * w_scale] * 2, [0, 0], 0)),
        np.array([10, -10], np.int32),
    )
    y = m.add(tensor([1, out_hw, out_hw, 2], "int8", "output", out_scale, 0))
    m.op("CONV_2D", [x, w, b], [y], opts("Conv2DOptions", padding=fb.Padding.VALID,
                                          strideW=stride, strideH=stride))
    return m.bytes([x], [y])


def fully_connected(in_scale=0.5, w_scale=0.01, out_scale=0.1):
    m = Model()
    x = m.add(tensor([1, 4], "int8", "input", in_scale, 0))
    w = m.add(tensor([3, 4], "int8", "weights", w_scale, 0),
              np.arange(-6, 6, dtype=np.int8).reshape(3, 4))
    y = m.add(tensor([1, 3], "int8", "output", out_scale, 0))
    m.op("FULLY_CONNECTED", [x, w, -1], [y], opts("FullyConnectedOptions"))
    return m.bytes([x], [y])


def unary(op, dtype="int8", shape=(1, 8), in_zp=0, out_zp=0, in_scale=0.05, out_scale=0.05,
          options=None):
    m = Model()
    x = m.add(tensor(shape, dtype, "input", in_scale, in_zp))
    y = m.add(tensor(shape, dtype, "output", out_scale, out_zp))
    m.op(op, [x], [y], options)
    return m.bytes([x], [y])


def add(shape, dtype="int8", zp=0):
    m = Model()
    a = m.add(tensor(shape, dtype, "a", 0.05, zp))
    b = m.add(tensor(shape, dtype, "b", 0.05, zp))
    y = m.add(tensor(shape, dtype, "sum", 0.1, zp))
    m.op("ADD", [a, b], [y], opts("AddOptions"))
    return m.bytes([a, b], [y])


def empty_identity():
    """No operators: one int8 tensor that is both the input and the output."""
    m = Model()
    t = m.add(tensor([4], "int8", "x", 1.0, 0))
    return m.bytes([t], [t])


def no_tensors():
    return Model().bytes([], [])


def custom_op():
    m = Model()
    x = m.add(tensor([1, 8], "int8", "input", 0.05, 0))
    y = m.add(tensor([1, 8], "int8", "output", 0.05, 0))
    m.op(None, [x], [y], custom="MyCustomOp")
    return m.bytes([x], [y])


def several_unsupported_ops():
    """Two operators Kiln has no kernel for around one it has: two custom operators unknown
    to both (MyCustomOp, MyOtherCustomOp), around an ADD."""
    m = Model()
    x = m.add(tensor([1, 8], "int8", "input", 0.05, 0))
    a = m.add(tensor([1, 8], "int8", "custom_out", 0.05, 0))
    b = m.add(tensor([1, 8], "int8", "sum", 0.05, 0))
    c = m.add(tensor([1, 8], "int8", "output", 0.05, 0))
    m.op(None, [x], [a], custom="MyCustomOp")
    m.op("ADD", [a, a], [b], options=("AddOptions", fb.AddOptionsT()))
    m.op(None, [b], [c], custom="MyOtherCustomOp")
    return m.bytes([x], [c])


def signal_framer(options, n=8, out=(1, 4)):
    """TFLM's SignalFramer (custom) on int16 [1, n] -> [1, *out] frames and a bool."""
    m = Model()
    x = m.add(tensor([1, n], "int16", "input"))
    y = m.add(tensor([1, *out], "int16", "frames"))
    v = m.add(tensor([], "bool", "output_valid"))
    m.op(None, [x], [y, v], custom="SignalFramer", custom_options=flex(options))
    return m.bytes([x], [y, v])


def signal_stacker(options, n=8, out=24):
    """TFLM's SignalStacker (custom) on int16 [n] -> [out] and a bool."""
    m = Model()
    x = m.add(tensor([n], "int16", "input"))
    y = m.add(tensor([out], "int16", "stacked"))
    v = m.add(tensor([], "bool", "output_valid"))
    m.op(None, [x], [y, v], custom="SignalStacker", custom_options=flex(options))
    return m.bytes([x], [y, v])


def signal_delay(delay_length):
    """TFLM's SignalDelay (custom) on int16 [2, 8]."""
    m = Model()
    x = m.add(tensor([2, 8], "int16", "input"))
    y = m.add(tensor([2, 8], "int16", "output"))
    m.op(None, [x], [y], custom="SignalDelay", custom_options=flex({"delay_length": delay_length}))
    return m.bytes([x], [y])


def signal_overlap_add(t, frame_step, frame_size=4, dtype="int16"):
    """TFLM's SignalOverlapAdd (custom) on [2, frame_size] frames -> [2 * frame_step]."""
    m = Model()
    x = m.add(tensor([2, frame_size], dtype, "frames"))
    y = m.add(tensor([2 * frame_step], dtype, "output"))
    m.op(None, [x], [y], custom="SignalOverlapAdd",
         custom_options=flex({"T": t, "frame_step": frame_step}))
    return m.bytes([x], [y])


def signal_window(custom_options, n=8):
    """TFLM's SignalWindow (custom) on [1, 8] int16 with a window of length n."""
    m = Model()
    x = m.add(tensor([1, 8], "int16", "input"))
    w = m.add(tensor([n], "int16", "window"), np.full(n, 4096, np.int16))
    y = m.add(tensor([1, 8], "int16", "output"))
    m.op(None, [x, w], [y], custom="SignalWindow", custom_options=custom_options)
    return m.bytes([x], [y])


def signal_rfft(fft_length, n=8, out=None):
    """TFLM's SignalRfft (custom) on [1, n] int16 frames, output [1, out] (fft_length + 2)."""
    m = Model()
    x = m.add(tensor([1, n], "int16", "input"))
    y = m.add(tensor([1, fft_length + 2 if out is None else out], "int16", "spectrum"))
    m.op(None, [x], [y], custom="SignalRfft", custom_options=flex({"T": 7, "fft_length": fft_length}))
    return m.bytes([x], [y])


def signal_irfft(fft_length, n_in, n_out):
    """TFLM's SignalIrfft (custom): int16 [1, n_in] complex frames to [1, n_out] samples."""
    m = Model()
    x = m.add(tensor([1, n_in], "int16", "spectrum"))
    y = m.add(tensor([1, n_out], "int16", "samples"))
    m.op(None, [x], [y], custom="SignalIrfft", custom_options=flex({"T": 7, "fft_length": fft_length}))
    return m.bytes([x], [y])


def signal_fft_auto_scale(shape):
    """TFLM's SignalFftAutoScale (custom) on an int16 input of `shape`."""
    m = Model()
    x = m.add(tensor(shape, "int16", "input"))
    y = m.add(tensor(shape, "int16", "output"))
    s = m.add(tensor([], "int32", "scale_bits"))
    m.op(None, [x], [y, s], custom="SignalFftAutoScale", custom_options=flex({}))
    return m.bytes([x], [y, s])


SPECTRAL = {"alternate_one_minus_smoothing": 15401, "alternate_smoothing": 983, "clamping": False,
            "min_signal_remaining": 819, "num_channels": 8, "one_minus_smoothing": 15729,
            "smoothing": 655, "smoothing_bits": 10, "spectral_subtraction_bits": 14}


def signal_spectral_subtraction(n=8, **changes):
    """TFLM's SignalFilterBankSpectralSubtraction (custom) on uint32[n], the preprocessor's
    options with `changes` (a value None drops the key)."""
    opts = {k: v for k, v in {**SPECTRAL, **changes}.items() if v is not None}
    m = Model()
    x = m.add(tensor([n], "uint32", "input"))
    y = m.add(tensor([n], "uint32", "output"))
    e = m.add(tensor([n], "uint32", "noise_estimate"))
    m.op(None, [x], [y, e], custom="SignalFilterBankSpectralSubtraction",
         custom_options=flex(opts))
    return m.bytes([x], [y, e])


def flex(d):
    from flatbuffers import flexbuffers
    return flexbuffers.Dumps(d)


def signal_energy(options):
    """SignalEnergy on an int16 spectrum [16] (8 bins) -> uint32 [8]."""
    m = Model()
    x = m.add(tensor([16], "int16", "spectrum"))
    y = m.add(tensor([8], "uint32", "energy"))
    m.op(None, [x], [y], custom="SignalEnergy", custom_options=flex(options))
    return m.bytes([x], [y])


def signal_filter_bank_past_input():
    """SignalFilterBank, 2 channels over a uint32 [8] spectrum; channel 2 (the second output)
    reads bins 4..9."""
    m = Model()
    x = m.add(tensor([8], "uint32", "spectrum"))
    tables = [("weights", [1] * 8), ("unweights", [1] * 8), ("frequency_starts", [0, 2, 4]),
              ("weight_starts", [0, 2, 4]), ("widths", [2, 2, 5])]
    ts = [m.add(tensor([len(v)], "int16", n), np.array(v, np.int16)) for n, v in tables]
    y = m.add(tensor([2], "uint64", "channels"))
    m.op(None, [x] + ts, [y], custom="SignalFilterBank", custom_options=flex({"num_channels": 2}))
    return m.bytes([x], [y])


def signal_filter_bank_square_root_vector_bits():
    """SignalFilterBankSquareRoot with scale bits of shape [2] (TFLM wants a scalar)."""
    m = Model()
    x = m.add(tensor([4], "uint64", "channels"))
    b = m.add(tensor([2], "int32", "scale_bits"))
    y = m.add(tensor([4], "uint32", "roots"))
    m.op(None, [x, b], [y], custom="SignalFilterBankSquareRoot", custom_options=flex({}))
    return m.bytes([x, b], [y])


def signal_filter_bank_log(options):
    """SignalFilterBankLog on uint32 [4] -> int16 [4]."""
    m = Model()
    x = m.add(tensor([4], "uint32", "channels"))
    y = m.add(tensor([4], "int16", "log"))
    m.op(None, [x], [y], custom="SignalFilterBankLog", custom_options=flex(options))
    return m.bytes([x], [y])


def signal_pcan(options, lut_len=125):
    """SignalPCAN on uint32 [4] with a noise estimate [4] and a gain table [lut_len]."""
    m = Model()
    x = m.add(tensor([4], "uint32", "channels"))
    n = m.add(tensor([4], "uint32", "noise_estimate"))
    lut = m.add(tensor([lut_len], "int16", "gain_lut"), np.full(lut_len, 1000, np.int16))
    y = m.add(tensor([4], "uint32", "normalized"))
    m.op(None, [x, n, lut], [y], custom="SignalPCAN", custom_options=flex(options))
    return m.bytes([x, n], [y])


MODELS = {
    # graphs without operators or tensors
    "empty_identity": empty_identity,
    "no_tensors": no_tensors,
    # requantization multipliers no kernel can apply
    "conv_output_scale_denormal": lambda: conv(out_scale=1.4e-45),
    "conv_input_scale_huge": lambda: conv(in_scale=3e38),
    "fc_output_scale_tiny": lambda: fully_connected(out_scale=1e-30),
    "relu_output_scale_tiny": lambda: unary("RELU", out_scale=1e-30),
    "logistic_input_scale_tiny": lambda: unary("LOGISTIC", in_scale=1e-12, out_scale=1 / 256,
                                               out_zp=-128),
    # extreme, but within what the kernels apply: TFLM and Kiln agree byte for byte
    "conv_output_scale_small": lambda: conv(out_scale=1e-6),
    "logistic_input_scale_large": lambda: unary("LOGISTIC", in_scale=16.0, out_scale=1 / 256,
                                                out_zp=-128),
    # sizes no 32-bit core can address (65535 x 65535 bytes each, in a file of 1 KB)
    "huge_tensors": lambda: add([65535, 65535]),
    # tensors that fit one by one (1.6 GB each) but not in one arena
    "arena_over_address_space": lambda: add([40000, 40000]),
    # zero points outside the dtype's range, and non-zero weight zero points
    "relu_zero_point_1000": lambda: unary("RELU", in_zp=1000),
    "relu_output_zero_point_minus_300": lambda: unary("RELU", out_zp=-300),
    "conv_weights_zero_point_3": lambda: conv(w_zp=3),
    "add_int16_zero_point_5": lambda: add([1, 8], "int16", zp=5),
    # operators TFLM's Prepare or Kiln's lowering refuse
    "conv_stride_zero": lambda: conv(stride=0),
    "conv_wrong_output_shape": lambda: conv(out_hw=3),
    "custom_op": custom_op,
    # several operators without kernels: the diagnostic names each (tests/ui/unsupported_op)
    "several_unsupported_ops": several_unsupported_ops,
    # custom options: a shift the C++ cannot apply, bytes that are no flexbuffer, a window
    # whose length does not divide the input
    "signal_window_shift_40": lambda: signal_window(flex({"shift": 40})),
    "signal_window_options_garbage": lambda: signal_window(bytes([0x24, 0x01, 0xff, 0x7f, 0x24, 0x08])),
    "signal_window_length_3": lambda: signal_window(flex({"shift": 12}), n=3),
    # more Signal operators: bins, table entries or shifts past what the C++ can read or
    # apply, an option key that shifts what TFLM reads by position, a non-scalar scale
    "signal_energy_end_past_output": lambda: signal_energy({"end_index": 12, "start_index": 0}),
    "signal_energy_extra_option": lambda: signal_energy({"a": 3, "end_index": 8, "start_index": 0}),
    "signal_filter_bank_past_input": signal_filter_bank_past_input,
    "signal_filter_bank_square_root_vector_bits": signal_filter_bank_square_root_vector_bits,
    "signal_filter_bank_log_correction_bits_32":
        lambda: signal_filter_bank_log({"input_correction_bits": 32, "output_scale": 64}),
    "signal_pcan_snr_shift_64": lambda: signal_pcan({"snr_shift": 64}),
    "signal_pcan_short_gain_lut": lambda: signal_pcan({"snr_shift": 6}, lut_len=100),
    # SignalRfft: TFLM crashes in kiss_fft's generic butterfly (fft_length / 2 = 7), and
    # writes 9 complex values per frame into an output frame of 8 values
    "signal_rfft_fft_length_14": lambda: signal_rfft(14),
    "signal_rfft_output_short": lambda: signal_rfft(16, out=8),
    # SignalFftAutoScale: TFLM's Prepare wants a rank-1 frame
    "signal_fft_auto_scale_rank_2": lambda: signal_fft_auto_scale([2, 8]),
    # SignalFilterBankSpectralSubtraction: a 32-bit value shifted by 40 (undefined), fewer
    # channels than the tensors hold (TFLM processes and copies num_channels values, leaving
    # the rest unwritten)
    "signal_spectral_subtraction_smoothing_bits_40":
        lambda: signal_spectral_subtraction(smoothing_bits=40),
    "signal_spectral_subtraction_channels_4": lambda: signal_spectral_subtraction(num_channels=4),
    # SignalIrfft: TFLM reads 9 complex values per frame from an input frame of 8 values
    "signal_irfft_input_short": lambda: signal_irfft(16, 8, 16),
    # The streaming operators: TFLM divides by a zero frame_step, writes a negative count of
    # prefill zeros (frame_size < frame_step) or of delay zeros as a huge size_t, reads past a
    # stacker input shorter than num_channels, discards frames a stacker does not hold
    # (stacker_step beyond the stack) or never any (0), moves a negative number of bytes
    # (overlap-add frame_step beyond the frame), and refuses a `T` naming another type
    "signal_framer_step_0":
        lambda: signal_framer({"frame_size": 4, "frame_step": 0, "prefill": False}),
    "signal_framer_prefill_step_past_frame":
        lambda: signal_framer({"frame_size": 2, "frame_step": 8, "prefill": True}, out=(1, 2)),
    "signal_stacker_step_0": lambda: signal_stacker(
        {"num_channels": 8, "stacker_left_context": 1, "stacker_right_context": 1, "stacker_step": 0}),
    "signal_stacker_step_past_stack": lambda: signal_stacker(
        {"num_channels": 8, "stacker_left_context": 1, "stacker_right_context": 1, "stacker_step": 4}),
    "signal_stacker_input_short": lambda: signal_stacker(
        {"num_channels": 8, "stacker_left_context": 1, "stacker_right_context": 1, "stacker_step": 1},
        n=4),
    "signal_delay_negative": lambda: signal_delay(-3),
    "signal_overlap_add_step_past_frame": lambda: signal_overlap_add(7, 6),
    "signal_overlap_add_t_float32": lambda: signal_overlap_add(0, 2),
}


def _ids(v):
    """A subgraph's input or output list (None or a numpy array in the object API)."""
    return [] if v is None else [int(i) for i in v]


def tflm_verdict(data):
    """"ok" if TFLM prepares and invokes the model on seeded inputs, else "error: <first line
    of its message>" (`gen_kernel_cases.run_tflm` runs it in a forked child: TFLM may crash
    on a hostile model)."""
    model = tc.load_model(data)
    sg = model.subgraphs[0]
    ins = [tc.tensor_details(model, t) for t in _ids(sg.inputs)]
    rng = np.random.default_rng(1)
    # Inputs beyond any arena are not drawn: TFLM refuses to allocate such a model before
    # it would read them.
    fits = sum(d["bytes"] for d in ins) <= 1 << 24
    xs = [tc.random_input(rng, d["shape"], d["dtype"]) for d in ins] if fits else []
    try:
        run_tflm(data, xs, len(_ids(sg.outputs)))
        return "ok"
    except RuntimeError as e:
        first = str(e).strip().splitlines()
        return "error: " + (first[0] if first else "TFLM failed")


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "golden").mkdir(parents=True)
    verdicts = {}
    for name, build in MODELS.items():
        data = build()
        assert len(data) < 2048, f"{name}: {len(data)} bytes"
        path = OUT / f"{name}.tflite"
        path.write_bytes(data)
        verdict = tflm_verdict(data)
        verdicts[name] = verdict
        if verdict == "ok" and _ids(tc.load_model(data).subgraphs[0].inputs):
            tc.write_golden(path, OUT / "golden" / name, arena_size=ARENA)
        print(f"{name:36} {len(data):5} B  TFLM: {verdict}", file=sys.stderr)
    (OUT / "tflm.json").write_text(json.dumps(verdicts, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
