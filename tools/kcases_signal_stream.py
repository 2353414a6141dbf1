"""TFLM's Signal library, the streaming operators (custom operators with flexbuffer options and
state kept in the kernel). Every case is a sequence: reset() once, then several invokes with
fresh inputs, the state carried over (KCASE2 bundles); Kiln must match every output of every
invoke. Inputs are int16 over the full range or with magnitudes 2**U(0, 15), float32 with
magnitudes 10**U(-3, 3).

SignalFramer (bundle signal_framer_int16; options frame_size, frame_step, prefill): in 30% of
the cases audio framing as the micro_speech front end's (frame_size 400, 480 or 512, frame_step
160 or 320, one frame per invoke), otherwise frame_size 1-64 and frame_step 1-80 (steps longer
than the frame too, without prefill: TFLM defines those), 1-4 frames per invoke, rows of rank
1-3; prefill either way (frame_size >= frame_step with it). Enough invokes for the buffer to
fill and then 3 more (at most 12). Frames TFLM does not produce yet (output_valid false) it
leaves unwritten, whatever its arena held: they are stored as zeros (Kiln writes zeros), their
positions counted from TFLM's rule (a row's frames until its buffer holds frame_size samples)
and checked against TFLM's output_valid.

SignalStacker (bundle signal_stacker_int16; options num_channels, stacker_left_context,
stacker_right_context, stacker_step): num_channels 1-64 (40 in 20% of the cases, as the
preprocessor's), contexts 0-6, stacker_step 1..left + right + 1; left + right + 2 * step + 2
invokes (at most 16). An invoke that stacks nothing (output_valid false: before the first
stack, and between stacks when stacker_step > 1) leaves the output unwritten in TFLM (the
arena's bytes, or the previous stack): stored as zeros.

SignalDelay (bundle signal_delay_int16; option delay_length): rows of rank 1-3 with 1-64
samples (160 in 20% of the cases), delay_length 0-200; enough invokes for the first samples
to come out, plus 3 (at most 12).

SignalOverlapAdd (bundles signal_overlap_add_int16, signal_overlap_add_float32; options T,
frame_step): input [.., n_frames, frame_size] of rank 2-4, frame_size 1-64 (512 with
frame_step 128 or 256 in 20% of the cases, an inverse-FFT resynthesis), frame_step
1..frame_size, 1-4 frames per invoke, 3-6 invokes; int16 sums saturate.
"""

import numpy as np


def _int16(rng, shape):
    if rng.random() < 0.4:
        return rng.integers(-32768, 32768, size=shape).astype(np.int16)
    amp = 2.0 ** rng.uniform(0, 15)
    return np.clip(np.round(rng.uniform(-amp, amp, size=shape)), -32768, 32767).astype(np.int16)


def _float32(rng, shape):
    amp = 10.0 ** rng.uniform(-3, 3)
    return rng.uniform(-amp, amp, size=shape).astype(np.float32)


def _lead(rng, max_dims):
    return [int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, max_dims + 1)))]


def _draw(shape, dt):
    def draw(rng):
        return [_float32(rng, shape) if dt == "float32" else _int16(rng, shape)]
    return draw


def gen_framer(g):
    def gen(rng, dt):
        prefill = bool(rng.random() < 0.5)
        if rng.random() < 0.3:
            size, step, n = int(rng.choice([400, 480, 512])), int(rng.choice([160, 320])), 1
        else:
            size, step = int(rng.integers(1, 65)), int(rng.integers(1, 81))
            if prefill and step > size:
                step = int(rng.integers(1, size + 1))
            n = int(rng.integers(1, 5))
        lead = _lead(rng, 2)
        shape = lead + [n * step]
        history = size - step if prefill else -(-size // step) * step - step
        fill = history // (n * step) + 1 if not prefill else 0
        gr = g.Graph("SignalFramer")
        gr.custom_options = {"frame_size": size, "frame_step": step, "prefill": prefill}
        gr.input(shape, "int16")
        gr.output(lead + [n, size], "int16")
        gr.output([], "bool")
        gr.raw = True
        gr.invokes = min(fill + 3, 12)
        gr.draw = _draw(shape, dt)
        held = [0]

        def unwritten(k, ys):
            if k == 0:
                held[0] = history if prefill else 0
            frames = np.array(ys[0])
            missing = 0
            for f in range(n):
                if held[0] == history:
                    continue
                held[0] += step
                frames[..., f, :] = 0
                missing += 1
            if bool(ys[1]) != (missing == 0):
                raise SystemExit(f"SignalFramer: invoke {k} output_valid {ys[1]}, "
                                 f"{missing} frames not produced by TFLM's rule")
            return [frames, ys[1]]

        gr.unwritten = unwritten
        return gr
    return gen


def gen_stacker(g):
    def gen(rng, dt):
        nc = 40 if rng.random() < 0.2 else int(rng.integers(1, 65))
        left, right = int(rng.integers(0, 7)), int(rng.integers(0, 7))
        step = int(rng.integers(1, left + right + 2))
        gr = g.Graph("SignalStacker")
        gr.custom_options = {"num_channels": nc, "stacker_left_context": left,
                             "stacker_right_context": right, "stacker_step": step}
        gr.input([nc], "int16")
        gr.output([nc * (left + right + 1)], "int16")
        gr.output([], "bool")
        gr.raw = True
        gr.invokes = min(left + right + 2 * step + 2, 16)
        gr.draw = _draw([nc], dt)

        def unwritten(k, ys):
            if bool(ys[1]):
                return ys
            return [np.zeros_like(ys[0]), ys[1]]

        gr.unwritten = unwritten
        return gr
    return gen


def gen_delay(g):
    def gen(rng, dt):
        frame = 160 if rng.random() < 0.2 else int(rng.integers(1, 65))
        delay = int(rng.integers(0, 201))
        shape = _lead(rng, 2) + [frame]
        gr = g.Graph("SignalDelay")
        gr.custom_options = {"delay_length": delay}
        gr.input(shape, "int16")
        gr.output(shape, "int16")
        gr.raw = True
        gr.invokes = min(delay // frame + 4, 12)
        gr.draw = _draw(shape, dt)
        return gr
    return gen


def gen_overlap_add(g):
    def gen(rng, dt):
        if rng.random() < 0.2:
            size, step = 512, int(rng.choice([128, 256]))
        else:
            size = int(rng.integers(1, 65))
            step = int(rng.integers(1, size + 1))
        n = int(rng.integers(1, 5))
        lead = _lead(rng, 2)
        gr = g.Graph("SignalOverlapAdd")
        gr.custom_options = {"T": 0 if dt == "float32" else 7, "frame_step": step}
        gr.input(lead + [n, size], dt)
        gr.output(lead + [n * step], dt)
        gr.raw = True
        gr.invokes = int(rng.integers(3, 7))
        gr.draw = _draw(lead + [n, size], dt)
        return gr
    return gen


def register(g):
    return [
        ("signal_framer", "SignalFramer", gen_framer(g), ("int16",)),
        ("signal_stacker", "SignalStacker", gen_stacker(g), ("int16",)),
        ("signal_delay", "SignalDelay", gen_delay(g), ("int16",)),
        ("signal_overlap_add", "SignalOverlapAdd", gen_overlap_add(g), ("int16", "float32")),
    ]
