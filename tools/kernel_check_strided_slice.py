"""STRIDED_SLICE (float32, int8; ranks 1..4, TFLM's limit) against TFLM; see
kernel_check_common.py for usage.

Random begin/end/strides (negative indices, out-of-range indices, negative strides) and
begin/end/shrink masks, written into a converted model (so that every combination, not only
what the converter emits for a Python slice, is exercised), plus models with `offset`."""

import numpy as np
import tensorflow as tf

import kernel_check_common as kc


def rewrite(shape, begin, end, strides, begin_mask, end_mask, shrink, offset, out_shape):
    def edit(model):
        sg = model.subgraphs[0]
        op = sg.operators[0]
        sg.tensors[op.inputs[0]].shape = list(shape)
        for idx, vals in zip(op.inputs[1:4], (begin, end, strides)):
            t = sg.tensors[idx]
            model.buffers[t.buffer].data = np.array(vals, dtype="<i4").tobytes()
        o = op.builtinOptions
        o.beginMask, o.endMask, o.shrinkAxisMask = begin_mask, end_mask, shrink
        o.ellipsisMask, o.newAxisMask, o.offset = 0, 0, offset
        sg.tensors[op.outputs[0]].shape = list(out_shape)
    return edit


def expected_shape(shape, begin, end, strides, bm, em, sm, offset):
    """TFLM's CheckOutputSize (StartForAxis / StopForAxis)."""
    out = []
    for i, size in enumerate(shape):
        s = strides[i]
        b = begin[i]
        if bm & (1 << i):
            b = -(2**31) if s > 0 else 2**31 - 1
        if b < 0:
            b += size
        b = min(max(b, 0), size) if s > 0 else min(max(b, -1), size - 1)
        if sm & (1 << i):
            continue
        e = end[i]
        if offset:
            e += b
        if em & (1 << i):
            e = 2**31 - 1 if s > 0 else -(2**31)
        if e < 0:
            e += size
        e = min(max(e, 0), size) if s > 0 else min(max(e, -1), size - 1)
        d = int(np.ceil((e - b) / np.float32(s)))
        out.append(max(d, 0))
    return out


def generate(cases, n, rng):
    k = 0
    base = {}
    for mode in ["float32", "int8"]:
        while k < (n if mode == "float32" else 2 * n):
            rank = int(rng.integers(1, 5))
            shape = tuple(int(rng.integers(1, 6)) for _ in range(rank))
            key = (mode, rank)
            if key not in base:
                # A real slice of a 4^rank tensor; the edit below sets every parameter.
                tmpl = [4] * rank
                d = kc.convert(lambda x: tf.strided_slice(x, [0] * rank, tmpl, [1] * (rank - 1) + [2]),
                               [(tmpl, tf.float32)], mode, rng=rng)
                if kc.SingleOp(d).op_names != ["STRIDED_SLICE"]:
                    raise RuntimeError(f"template not a single STRIDED_SLICE: {kc.SingleOp(d).op_names}")
                base[key] = d
            strides = [int(rng.choice([1, 1, 2, 3, -1, -2])) for _ in range(rank)]
            begin = [int(rng.integers(-7, 8)) for _ in range(rank)]
            end = [int(rng.integers(-7, 8)) for _ in range(rank)]
            bm, em = int(rng.integers(0, 1 << rank)), int(rng.integers(0, 1 << rank))
            sm = int(rng.integers(0, 1 << rank)) if rng.integers(0, 3) == 0 else 0
            offset = bool(rng.integers(0, 6) == 0)
            for i in range(rank):
                if sm & (1 << i):  # shrink needs an in-range begin and a positive stride
                    begin[i] = int(rng.integers(-shape[i], shape[i]))
                    bm &= ~(1 << i)
                    strides[i] = abs(strides[i])
            out_shape = expected_shape(shape, begin, end, strides, bm, em, sm, offset)
            if 0 in out_shape:
                continue
            data = kc.edit(base[key], rewrite(shape, begin, end, strides, bm, em, sm, offset, out_shape))
            m = kc.SingleOp(data)
            t_in = m.inputs[0]
            x = kc.random_tensor(rng, list(shape), t_in.dtype)
            try:
                (y,) = kc.run_tflm(data, [x])
            except RuntimeError as e:
                print("TFLM rejected", shape, begin, end, strides, bm, em, sm, offset, str(e)[-200:])
                continue
            cases.add(f"{t_in.dtype}_{k}", x.size, dtype=t_in.dtype, input_shape=np.array(shape),
                      begin_indices=np.array(begin), end_indices=np.array(end), strides=np.array(strides),
                      begin_mask=bm, end_mask=em, shrink_axis_mask=sm, offset=offset,
                      output_shape=np.array(out_shape, dtype=np.int64), input=x, output=y)
            k += 1


if __name__ == "__main__":
    kc.main("strided_slice", generate, default_n=100)
