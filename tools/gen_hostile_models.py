"""Builds Kiln's hostile test models and records what TFLM does with each.

Writes (paths relative to the repository root):
  tests/hostile/<name>.tflite     small models an attacker (or a broken converter) could
                                  produce: no operators, no tensors, extreme scales, sizes no
                                  32-bit core can address, out-of-range zero points, zero
                                  strides, wrong output shapes, unknown custom operators;
                                  cf_*: several subgraphs (IF, WHILE, CALL_ONCE, resource
                                  variables) with calls that cannot run, recursion, operands
                                  that do not match the callee, misused variables, calls
                                  nested or repeated past Kiln's limits, and odd but valid
                                  subgraphs
  tests/hostile/tflm.json         per model: whether the pinned TFLM wheel accepts it
                                  ("ok") or refuses it (its error, first line; for cf_*
                                  also TFLM's log line, and which BOOL inputs failed), so
                                  the Rust tests can check that Kiln refuses what TFLM
                                  refuses
  tests/hostile/golden/<name>/    for the models TFLM runs (of the cf_ models, those Kiln
                                  compiles: CF_GOLDEN): golden data (seeds 1, 2, 3), same
                                  format and protocol as ../shared/models/golden

The expected Kiln diagnostics are in tests/hostile.rs, not here. Every model is built with
the schema object API shipped in tflite-micro and stays under 2 KB, but the nested-call
models (LARGE: one subgraph per level, up to 47 KB).

Run from the repository root:  .venv/bin/python tools/gen_hostile_models.py   (about 30 s: TFLM
never finishes cf_while_cond_no_output, killed after TFLM_TIMEOUT_S). TFLM's outputs for
signal_energy_extra_option and signal_filter_bank_past_input change from run to run (it
reads past an input or leaves output bytes unwritten); Kiln refuses both, so their golden
files are unused: keep the committed ones (git checkout) rather than commit the churn.
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
ARENA_LARGE = 1024 * 1024  # the nested-call models (TFLM plans every subgraph at once)


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


# --------------------------------------------------------------------------------------------
# Multi-subgraph models (IF, WHILE, CALL_ONCE, resource variables), built like
# tests/control_flow's (gen_control_flow_models.Builder): calls naming subgraphs that do not
# exist, are the main one or call each other, operands that do not match the called
# subgraph's inputs and outputs, and resource variables read but never assigned, used with
# two types or shapes, or reached through a handle that is no VAR_HANDLE's.

F4 = ([1, 4], "float32")


class Cf:
    """A multi-subgraph model: `Builder` with float32 [1, 4] defaults."""

    def __init__(self, what, n):
        from gen_control_flow_models import Builder

        self.b = Builder(f"Kiln hostile model: {what}")
        self.sg = [self.b.subgraph("main" if i == 0 else f"sg{i}") for i in range(n)]

    def t(self, s, name, shape=F4[0], dtype=F4[1], data=None):
        return self.b.tensor(self.sg[s], shape, dtype, name, data=data)

    def op(self, s, name, ins, outs, options=None):
        self.b.op(self.sg[s], name, ins, outs, options)

    def io(self, s, ins, outs):
        self.sg[s].inputs, self.sg[s].outputs = list(ins), list(outs)

    def add_leaf(self, s, n_in=1, n_out=1, shape=F4[0], dtype=F4[1], op="ADD"):
        """Subgraph s: n_in inputs, each output ADD (or SUB) of input 0 with itself."""
        ins = [self.t(s, f"in{i}", shape, dtype) for i in range(n_in)]
        outs = [self.t(s, f"out{i}", shape, dtype) for i in range(n_out)]
        for o in outs:
            self.op(s, op, [ins[0], ins[0]], [o], fb.AddOptionsT() if op == "ADD" else fb.SubOptionsT())
        self.io(s, ins, outs)

    def bytes(self):
        return self.b.finish()


def _cf_opts(kind, **fields):
    from gen_control_flow_models import _opts

    return _opts(getattr(fb, kind + "T"), **fields)


def if_model(then_=1, else_=2, cond=([], "bool"), n_in=1, n_out=1, branch_in=1, branch_out=1,
             branch_shape=F4[0], branch_dtype=F4[1]):
    """main(c, x...) -> IF(c, x...) with then/else subgraphs `then_`, `else_` (leaves taking
    `branch_in` inputs and giving `branch_out` outputs of `branch_dtype` `branch_shape`)."""
    m = Cf("IF", 3)
    c = m.t(0, "cond", cond[0], cond[1])
    xs = [m.t(0, f"x{i}") for i in range(n_in)]
    ys = [m.t(0, f"y{i}") for i in range(n_out)]
    m.op(0, "IF", [c] + xs, ys, _cf_opts("IfOptions", thenSubgraphIndex=then_,
                                         elseSubgraphIndex=else_))
    m.io(0, [c] + xs, ys)
    m.add_leaf(1, branch_in, branch_out, branch_shape, branch_dtype)
    m.add_leaf(2, branch_in, branch_out, branch_shape, branch_dtype, op="SUB")
    return m.bytes()


def while_model(cond_=1, body_=2, cond_out=([], "bool"), n_out=None, body_shape=F4[0]):
    """main(x) -> WHILE(n = 0, x) (loop while n < 3; the body adds 1 to n and x to x);
    `cond_out` is the condition's output (None: it has none), `n_out` the WHILE's output
    count (2), `body_shape` the shape of the body's x output."""
    m = Cf("WHILE", 3)
    n = m.t(0, "n", [], "int32", data=0)
    x = m.t(0, "x")
    outs = [m.t(0, "n_out", [], "int32"), m.t(0, "x_out")][: 2 if n_out is None else n_out]
    if n_out is not None and n_out > 2:
        outs += [m.t(0, f"extra{i}") for i in range(n_out - 2)]
    m.op(0, "WHILE", [n, x], outs, _cf_opts("WhileOptions", condSubgraphIndex=cond_,
                                            bodySubgraphIndex=body_))
    m.io(0, [x], outs)
    cn, cx = m.t(1, "n", [], "int32"), m.t(1, "x")
    three = m.t(1, "three", [], "int32", data=3)
    if cond_out is None:
        m.io(1, [cn, cx], [])
    else:
        go = m.t(1, "go", cond_out[0], cond_out[1])
        if cond_out[1] == "bool":
            m.op(1, "LESS", [cn, three], [go])
        else:
            m.op(1, "SUB", [three, cn], [go], fb.SubOptionsT())
        m.io(1, [cn, cx], [go])
    bn, bx = m.t(2, "n", [], "int32"), m.t(2, "x")
    one = m.t(2, "one", [], "int32", data=1)
    bn2, bx2 = m.t(2, "n_next", [], "int32"), m.t(2, "x_next", body_shape)
    m.op(2, "ADD", [bn, one], [bn2], fb.AddOptionsT())
    if body_shape == F4[0]:
        m.op(2, "ADD", [bx, bx], [bx2], fb.AddOptionsT())
    else:
        m.op(2, "CONCATENATION", [bx, bx], [bx2], _cf_opts("ConcatenationOptions", axis=1))
    m.io(2, [bn, bx], [bn2, bx2])
    return m.bytes()


def call_once_model(init=1, init_inputs=0):
    """main(x) -> ADD(x, x) after CALL_ONCE(init); subgraph 1 (the init) takes `init_inputs`
    float inputs (the schema allows them; a CALL_ONCE has no operands to give them)."""
    m = Cf("CALL_ONCE", 2)
    x, y = m.t(0, "x"), m.t(0, "y")
    m.op(0, "CALL_ONCE", [], [], _cf_opts("CallOnceOptions", initSubgraphIndex=init))
    m.op(0, "ADD", [x, x], [y], fb.AddOptionsT())
    m.io(0, [x], [y])
    if init_inputs:
        m.add_leaf(1, init_inputs, 1)
    return m.bytes()


def call_once_calls_itself():
    """main: CALL_ONCE(1), ADD; subgraph 1: CALL_ONCE(1) (its has-run flag is set only after
    the init subgraph returns)."""
    m = Cf("CALL_ONCE recursion", 2)
    x, y = m.t(0, "x"), m.t(0, "y")
    m.op(0, "CALL_ONCE", [], [], _cf_opts("CallOnceOptions", initSubgraphIndex=1))
    m.op(0, "ADD", [x, x], [y], fb.AddOptionsT())
    m.io(0, [x], [y])
    m.op(1, "CALL_ONCE", [], [], _cf_opts("CallOnceOptions", initSubgraphIndex=1))
    return m.bytes()


def if_branches_call_each_other():
    """main(c, x): IF(c, c, x) 1 / 3; subgraph 1(c, x): IF(c, c, x) 2 / 3; subgraph 2(c, x):
    IF(c, c, x) 1 / 3; subgraph 3: x + x. With c true, 1 and 2 call each other forever."""
    m = Cf("IF recursion", 4)
    for s, then_ in ((0, 1), (1, 2), (2, 1)):
        c, x, y = m.t(s, "c", [], "bool"), m.t(s, "x"), m.t(s, "y")
        m.op(s, "IF", [c, c, x], [y], _cf_opts("IfOptions", thenSubgraphIndex=then_,
                                               elseSubgraphIndex=3))
        m.io(s, [c, x], [y])
    c, x, y = m.t(3, "c", [], "bool"), m.t(3, "x"), m.t(3, "y")
    m.op(3, "ADD", [x, x], [y], fb.AddOptionsT())
    m.io(3, [c, x], [y])
    return m.bytes()


def nested_if_chain(depth):
    """main(c, x) -> IF(c, c, x) 1 / depth + 1; subgraph k < depth: IF(c, c, x) k + 1 /
    depth + 1; subgraph depth: x + x; subgraph depth + 1: x - x. With c true, `depth` + 1
    subgraphs are active at once (x + x), else x - x (zeros)."""
    m = Cf(f"{depth} nested IFs", depth + 2)
    for s in range(depth):
        c, x, y = m.t(s, "c", [], "bool"), m.t(s, "x"), m.t(s, "y")
        m.op(s, "IF", [c, c, x], [y], _cf_opts("IfOptions", thenSubgraphIndex=s + 1,
                                               elseSubgraphIndex=depth + 1))
        m.io(s, [c, x], [y])
    for s, op in ((depth, "ADD"), (depth + 1, "SUB")):
        c, x, y = m.t(s, "c", [], "bool"), m.t(s, "x"), m.t(s, "y")
        m.op(s, op, [x, x], [y], fb.AddOptionsT() if op == "ADD" else fb.SubOptionsT())
        m.io(s, [c, x], [y])
    return m.bytes()


def doubled_if_chain(depth):
    """main(c, x) -> IF(c, c, x) with both branches subgraph 1; subgraph k < depth: IF(c, c,
    x), both branches k + 1; subgraph depth: x + x. Small for TFLM (each subgraph once), but
    a compiler writing a callee at each call writes 2^depth copies of the last one."""
    m = Cf(f"{depth} IFs calling the next subgraph from both branches", depth + 1)
    for s in range(depth):
        c, x, y = m.t(s, "c", [], "bool"), m.t(s, "x"), m.t(s, "y")
        m.op(s, "IF", [c, c, x], [y], _cf_opts("IfOptions", thenSubgraphIndex=s + 1,
                                               elseSubgraphIndex=s + 1))
        m.io(s, [c, x], [y])
    c, x, y = m.t(depth, "c", [], "bool"), m.t(depth, "x"), m.t(depth, "y")
    m.op(depth, "ADD", [x, x], [y], fb.AddOptionsT())
    m.io(depth, [c, x], [y])
    return m.bytes()


def if_branch_odd(kind):
    """main(c, x, z) -> IF(c, x, z) 1 / 2 where subgraph 1 is odd but valid: "through" has
    no operators (its output is its input x, z unused), "twice" lists one tensor as both its
    inputs (x + x of the second one copied). Subgraph 2: x + x."""
    m = Cf(f"IF branch: {kind}", 3)
    c, x, z, y = m.t(0, "c", [], "bool"), m.t(0, "x"), m.t(0, "z"), m.t(0, "y")
    m.op(0, "IF", [c, x, z], [y], _cf_opts("IfOptions", thenSubgraphIndex=1, elseSubgraphIndex=2))
    m.io(0, [c, x, z], [y])
    t = m.t(1, "x")
    if kind == "through":
        m.io(1, [t, m.t(1, "z")], [t])
    else:
        o = m.t(1, "y")
        m.op(1, "ADD", [t, t], [o], fb.AddOptionsT())
        m.io(1, [t, t], [o])
    m.add_leaf(2, 2)
    return m.bytes()


def while_body_odd(kind):
    """main(x) -> WHILE(n = 0, x, k = 5) while n < 3; the body's n + 1 is odd but valid:
    "through": x and k are passed through (output = input tensor); "twice": the body lists
    n + 1 as both its n and k outputs."""
    m = Cf(f"WHILE body: {kind}", 3)
    n, x = m.t(0, "n", [], "int32", data=0), m.t(0, "x")
    k = m.t(0, "k", [], "int32", data=5)
    outs = [m.t(0, "n_out", [], "int32"), m.t(0, "x_out"), m.t(0, "k_out", [], "int32")]
    m.op(0, "WHILE", [n, x, k], outs, _cf_opts("WhileOptions", condSubgraphIndex=1,
                                               bodySubgraphIndex=2))
    m.io(0, [x], outs)
    cn, cx, ck = m.t(1, "n", [], "int32"), m.t(1, "x"), m.t(1, "k", [], "int32")
    three, go = m.t(1, "three", [], "int32", data=3), m.t(1, "go", [], "bool")
    m.op(1, "LESS", [cn, three], [go])
    m.io(1, [cn, cx, ck], [go])
    bn, bx, bk = m.t(2, "n", [], "int32"), m.t(2, "x"), m.t(2, "k", [], "int32")
    one, n2 = m.t(2, "one", [], "int32", data=1), m.t(2, "n_next", [], "int32")
    m.op(2, "ADD", [bn, one], [n2], fb.AddOptionsT())
    if kind == "through":
        m.io(2, [bn, bx, bk], [n2, bx, bk])
    else:
        x2 = m.t(2, "x_next")
        m.op(2, "ADD", [bx, bx], [x2], fb.AddOptionsT())
        m.io(2, [bn, bx, bk], [n2, x2, n2])
    return m.bytes()


def if_edge(kind):
    """IF forms TFLM runs or refuses: "no_inputs" (no condition), "constant_condition" (a
    constant true), "branch_output_unwritten" (subgraph 1's output is nothing's),
    "branch_reads_unwritten" (subgraph 1 adds a tensor nothing writes)."""
    m = Cf(f"IF: {kind}", 3)
    x, y = m.t(0, "x"), m.t(0, "y")
    opts = _cf_opts("IfOptions", thenSubgraphIndex=1, elseSubgraphIndex=2)
    if kind == "no_inputs":
        m.op(0, "IF", [], [y], opts)
        m.io(0, [x], [y])
    elif kind == "constant_condition":
        c = m.t(0, "c", [], "bool", data=True)
        m.op(0, "IF", [c, x], [y], opts)
        m.io(0, [x], [y])
    else:
        c = m.t(0, "c", [], "bool")
        m.op(0, "IF", [c, x], [y], opts)
        m.io(0, [c, x], [y])
    t = m.t(1, "x")
    if kind == "branch_output_unwritten":
        m.io(1, [t], [m.t(1, "never_written")])
    elif kind == "branch_reads_unwritten":
        u, o = m.t(1, "unwritten"), m.t(1, "y")
        m.op(1, "ADD", [t, u], [o], fb.AddOptionsT())
        m.io(1, [t], [o])
    else:
        o = m.t(1, "y")
        m.op(1, "ADD", [t, t], [o], fb.AddOptionsT())
        m.io(1, [t], [o])
    m.add_leaf(2, op="SUB")
    return m.bytes()


def while_edge(kind):
    """WHILE forms: "condition_is_loop_variable" (main(b, x) -> WHILE(b, x); the condition
    outputs its BOOL input, the body negates it and doubles x: 0 or 1 trips),
    "constant_condition" (no loop variables; the condition outputs a constant false)."""
    m = Cf(f"WHILE: {kind}", 3)
    opts = _cf_opts("WhileOptions", condSubgraphIndex=1, bodySubgraphIndex=2)
    if kind == "constant_condition":
        x, y = m.t(0, "x"), m.t(0, "y")
        m.op(0, "WHILE", [], [], opts)
        m.op(0, "ADD", [x, x], [y], fb.AddOptionsT())
        m.io(0, [x], [y])
        m.io(1, [], [m.t(1, "false", [], "bool", data=False)])
        m.io(2, [], [])
        return m.bytes()
    b, x = m.t(0, "b", [], "bool"), m.t(0, "x")
    ob, ox = m.t(0, "b_out", [], "bool"), m.t(0, "x_out")
    m.op(0, "WHILE", [b, x], [ob, ox], opts)
    m.io(0, [b, x], [ob, ox])
    cb, cx = m.t(1, "b", [], "bool"), m.t(1, "x")
    m.io(1, [cb, cx], [cb])
    bb, bx, nb, x2 = m.t(2, "b", [], "bool"), m.t(2, "x"), m.t(2, "not_b", [], "bool"), m.t(2, "x2")
    m.op(2, "LOGICAL_NOT", [bb], [nb])
    m.op(2, "ADD", [bx, bx], [x2], fb.AddOptionsT())
    m.io(2, [bb, bx], [nb, x2])
    return m.bytes()


def variable_model(init_value=("float32", [1, 4]), read=("float32", [1, 4]), assign=True,
                   same_subgraph=False, handle_from_input=None):
    """Resource variable "v": CALL_ONCE's init (subgraph 1) assigns it a constant of
    `init_value` (dtype, shape) -- or main does, before reading, if `same_subgraph` -- and
    main reads it as `read` and outputs x + the value. `assign=False`: nothing assigns it.
    `handle_from_input`: "read" or "assign", that operator's handle is a subgraph input (of
    main for "read", of an IF branch for "assign") instead of a VAR_HANDLE's output."""
    m = Cf("resource variable", 3 if handle_from_input == "assign" else 2)
    x = m.t(0, "x", read[1], read[0])
    val = m.t(0, "value", read[1], read[0])
    y = m.t(0, "y", read[1], read[0])
    ins = [x]
    if handle_from_input == "read":
        h = m.t(0, "handle_input", [], "resource")
        ins.append(h)
    else:
        h = m.t(0, "handle", [], "resource")
    m.op(0, "CALL_ONCE", [], [], _cf_opts("CallOnceOptions", initSubgraphIndex=1))
    if handle_from_input != "read":
        m.op(0, "VAR_HANDLE", [], [h], _cf_opts("VarHandleOptions", container="", sharedName="v"))
    s_init = 0 if same_subgraph else 1
    if assign:
        dt, shape = init_value
        k = m.t(s_init, "init", shape, dt, data=np.full(shape, 3, tc.NP_DTYPES[dt]))
        if same_subgraph:
            m.op(0, "ASSIGN_VARIABLE", [h, k], [])
        else:
            hi = m.t(1, "handle", [], "resource")
            m.op(1, "VAR_HANDLE", [], [hi], _cf_opts("VarHandleOptions", container="",
                                                     sharedName="v"))
            m.op(1, "ASSIGN_VARIABLE", [hi, k], [])
    m.op(0, "READ_VARIABLE", [h], [val])
    m.op(0, "ADD", [x, val], [y], fb.AddOptionsT())
    if handle_from_input == "assign":
        # main: IF(c, handle, x) whose branches assign x to the handle they are given.
        c, z = m.t(0, "c", [], "bool"), m.t(0, "if_out")
        m.op(0, "IF", [c, h, x], [z], _cf_opts("IfOptions", thenSubgraphIndex=2,
                                               elseSubgraphIndex=2))
        ins.append(c)
        bh, bx, by = m.t(2, "handle_input", [], "resource"), m.t(2, "x"), m.t(2, "y")
        m.op(2, "ASSIGN_VARIABLE", [bh, bx], [])
        m.op(2, "ADD", [bx, bx], [by], fb.AddOptionsT())
        m.io(2, [bh, bx], [by])
        m.io(0, ins, [y, z])
    else:
        m.io(0, ins, [y])
    return m.bytes()


CF_MODELS = {
    # calls naming the main subgraph (TFLM would run it inside itself), a negative index
    # and one past the end
    "cf_if_then_subgraph_0": lambda: if_model(then_=0),
    "cf_if_else_negative": lambda: if_model(else_=-1),
    "cf_if_then_past_end": lambda: if_model(then_=3),
    "cf_while_body_subgraph_0": lambda: while_model(body_=0),
    "cf_while_cond_negative": lambda: while_model(cond_=-2),
    "cf_while_body_past_end": lambda: while_model(body_=7),
    "cf_call_once_subgraph_0": lambda: call_once_model(init=0),
    "cf_call_once_negative": lambda: call_once_model(init=-1),
    "cf_call_once_past_end": lambda: call_once_model(init=2),
    # recursion: a subgraph calling itself, two calling each other
    "cf_call_once_calls_itself": call_once_calls_itself,
    "cf_if_branches_call_each_other": if_branches_call_each_other,
    # IF: the condition, operand counts, a branch input's type and shape
    "cf_if_condition_float": lambda: if_model(cond=([], "float32")),
    "cf_if_condition_two_bools": lambda: if_model(cond=([2], "bool")),
    "cf_if_fewer_inputs_than_branch": lambda: if_model(n_in=1, branch_in=2),
    "cf_if_more_inputs_than_branch": lambda: if_model(n_in=2, branch_in=1),
    "cf_if_more_outputs_than_branch": lambda: if_model(n_out=2, branch_out=1),
    "cf_if_fewer_outputs_than_branch": lambda: if_model(n_out=1, branch_out=2),
    "cf_if_branch_input_int32": lambda: if_model(branch_dtype="int32"),
    "cf_if_branch_input_shape": lambda: if_model(branch_shape=[1, 8]),
    # WHILE: the condition's output, the body's outputs, the loop variables' count
    "cf_while_cond_no_output": lambda: while_model(cond_out=None),
    "cf_while_cond_output_int32": lambda: while_model(cond_out=([], "int32")),
    "cf_while_body_output_shape": lambda: while_model(body_shape=[1, 8]),
    "cf_while_more_outputs_than_inputs": lambda: while_model(n_out=3),
    "cf_while_fewer_outputs_than_inputs": lambda: while_model(n_out=1),
    # CALL_ONCE whose init subgraph has inputs
    "cf_call_once_init_has_inputs": lambda: call_once_model(init_inputs=1),
    # resource variables
    "cf_read_variable_never_assigned": lambda: variable_model(assign=False),
    "cf_variable_two_shapes": lambda: variable_model(init_value=("float32", [1, 8])),
    "cf_variable_two_dtypes": lambda: variable_model(init_value=("int32", [1, 4])),
    "cf_assign_dtype_differs_from_read": lambda: variable_model(init_value=("int32", [1, 4]),
                                                                same_subgraph=True),
    "cf_read_variable_handle_is_input": lambda: variable_model(handle_from_input="read"),
    "cf_assign_variable_handle_is_input": lambda: variable_model(handle_from_input="assign"),
    # calls nested 200 deep (201 subgraphs active at once; TFLM runs it, Kiln refuses more
    # than planner::reader::control::MAX_CALL_DEPTH), and 32 deep (at that limit: compiles,
    # outputs as TFLM's)
    "cf_nested_if_200": lambda: nested_if_chain(200),
    "cf_nested_if_32": lambda: nested_if_chain(32),
    # odd but valid subgraphs: compile, outputs as TFLM's
    "cf_if_branch_passes_input_through": lambda: if_branch_odd("through"),
    "cf_if_branch_lists_input_twice": lambda: if_branch_odd("twice"),
    "cf_while_body_passes_variables_through": lambda: while_body_odd("through"),
    "cf_while_body_lists_output_twice": lambda: while_body_odd("twice"),
    "cf_if_constant_condition": lambda: if_edge("constant_condition"),
    "cf_while_condition_is_loop_variable": lambda: while_edge("condition_is_loop_variable"),
    # an IF without operands, subgraphs reading or outputting tensors nothing writes, a
    # WHILE condition that is a constant
    "cf_if_no_inputs": lambda: if_edge("no_inputs"),
    "cf_if_branch_output_unwritten": lambda: if_edge("branch_output_unwritten"),
    "cf_if_branch_reads_unwritten": lambda: if_edge("branch_reads_unwritten"),
    "cf_while_constant_condition": lambda: while_edge("constant_condition"),
    # IFs 24 deep whose two branches are the same next subgraph: 2^25 - 2 calls in Kiln's
    # inlined code (over planner::reader::control::MAX_INLINED_OPS), one subgraph each in TFLM
    "cf_if_branches_share_next_24": lambda: doubled_if_chain(24),
}

# Multi-subgraph models Kiln compiles (their golden data is written).
CF_GOLDEN = {"cf_nested_if_32", "cf_if_branch_passes_input_through",
             "cf_if_branch_lists_input_twice", "cf_while_body_passes_variables_through",
             "cf_while_body_lists_output_twice", "cf_if_constant_condition",
             "cf_while_condition_is_loop_variable", "cf_if_branches_share_next_24"}
# Models over 2 KB (one subgraph per nesting level).
LARGE = {"cf_nested_if_200", "cf_nested_if_32", "cf_if_branches_share_next_24"}
# How long TFLM may take on one model before it is killed (a recursion that never ends).
TFLM_TIMEOUT_S = 20


def tflm_verdict_cf(data):
    """tflm_verdict for a multi-subgraph model, run twice if it has BOOL inputs: all true
    (the branch that calls on), then all false; "ok" if both runs are, else the first failure ("with
    BOOL inputs true/false: ..."). TFLM runs in a forked child killed after TFLM_TIMEOUT_S;
    an error keeps TFLM's first log line after its exception's (which check failed)."""
    sg = tc.load_model(data).subgraphs[0]
    if not any(sg.tensors[t].type == fb.TensorType.BOOL for t in _ids(sg.inputs)):
        verdict = _tflm_run_cf(data, True)
        return verdict if verdict == "ok" else f"error: {verdict}"
    for flag in (True, False):
        verdict = _tflm_run_cf(data, flag)
        if verdict != "ok":
            return f"error: with BOOL inputs {str(flag).lower()}: {verdict}"
    return "ok"


def _tflm_run_cf(data, flag):
    from gen_kernel_cases import _run_tflm_here
    import os
    import pickle
    import signal

    model = tc.load_model(data)
    sg = model.subgraphs[0]
    rng = np.random.default_rng(1)
    xs = []
    for t in _ids(sg.inputs):
        if sg.tensors[t].type == fb.TensorType.RESOURCE:  # a handle: TFLM's is an int32
            xs.append(np.zeros([], np.int32))
            continue
        d = tc.tensor_details(model, t)
        if d["dtype"] == "bool":
            xs.append(np.full(d["shape"], flag, np.bool_))
        else:
            xs.append(tc.random_input(rng, d["shape"], d["dtype"]))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            signal.alarm(TFLM_TIMEOUT_S)
            try:
                res = ("ok", None)
                _run_tflm_here(data, xs, len(_ids(sg.outputs)))
            except Exception as e:  # noqa: BLE001
                res = ("err", str(e))
            with os.fdopen(w, "wb") as f:
                pickle.dump(res, f)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        out = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGALRM:
            return f"TFLM did not finish within {TFLM_TIMEOUT_S} s (killed)"
        return f"TFLM crashed (signal {sig})"
    kind, val = pickle.loads(out)
    if kind == "ok":
        return "ok"
    lines = [ln.strip() for ln in str(val).strip().splitlines() if ln.strip()]
    return " | ".join(lines[:2]) if lines else "TFLM failed"


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
    for name, build in {**MODELS, **CF_MODELS}.items():
        data = build()
        assert len(data) < 2048 or name in LARGE, f"{name}: {len(data)} bytes"
        path = OUT / f"{name}.tflite"
        path.write_bytes(data)
        verdict = tflm_verdict_cf(data) if name in CF_MODELS else tflm_verdict(data)
        verdicts[name] = verdict
        # Golden data of the multi-subgraph models Kiln compiles only: the others may crash
        # TFLM on some inputs (their verdict's runs are forked, write_golden's are not).
        golden = name not in CF_MODELS or name in CF_GOLDEN
        if verdict == "ok" and golden and _ids(tc.load_model(data).subgraphs[0].inputs):
            tc.write_golden(path, OUT / "golden" / name,
                            arena_size=ARENA_LARGE if name in LARGE else ARENA)
        print(f"{name:36} {len(data):5} B  TFLM: {verdict}", file=sys.stderr)
    (OUT / "tflm.json").write_text(json.dumps(verdicts, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
