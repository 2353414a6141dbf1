"""Builds the end-to-end models of the data-movement operators and their TFLM golden data.

Writes tests/models/move_int8.tflite and move_float.tflite, and their golden data in
tests/models/golden/move_int8/ and move_float/ (seeds 1, 2, 3, the format and protocol of
tools/tflite_common.write_golden), for tests/e2e_move.rs: Kiln compiles each with
`include_model!` and must give TFLM's bytes. One graph chains the operators of
tools/kcases_move.py (their kernel cases test each alone; this tests the generated code):

    in0 [1,4,6,2] -> SPACE_TO_DEPTH(2) -> DEPTH_TO_SPACE(2) -> MIRROR_PAD (REFLECT) -> t3 (out)
    t3 -> REVERSE_V2 (axes 2, 1) -> SPACE_TO_BATCH_ND ([2,3], pads [[1,0],[0,0]])
       -> BATCH_TO_SPACE_ND (same, as crops) -> t6
    t6, in1 [1,2,3,2], in2 (int32 start indices, full range: clamped) -> DYNAMIC_UPDATE_SLICE -> t7
    CONCATENATION(t6, t7, axis 3) -> PADV2 (constant value) (out)
    in3 [3,1] -> BROADCAST_TO [2,3,4] (out);  SHAPE(t7) (out, int32);  ZEROS_LIKE(t6) (out)
    FILL([2,3], constant value) (out);  BROADCAST_ARGS([2,1,3], [4,1]) (out, int32)

int8 activations share one quantization (none of these operators requantizes; zero point -3,
so that a zero point that is not 0 shows). The models are built directly as flatbuffers with
the schema object API in tflite-micro, as the kernel cases. Run from the repository root:
    .venv/bin/python tools/gen_move_models.py
Deterministic.
"""

import sys
from pathlib import Path

import flatbuffers
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import gen_kernel_cases as g  # noqa: E402
import tflite_common as tc  # noqa: E402
from tflite_common import schema_fb as fb  # noqa: E402

OUT = tc.REPO / "tests" / "models"


class Model:
    def __init__(self):
        self.tensors, self.inputs, self.outputs, self.ops, self.codes = [], [], [], [], []

    def tensor(self, shape, dtype, data=None, quant=None):
        self.tensors.append(g.Tensor(shape, dtype, data=data, quant=quant, name=f"t{len(self.tensors)}"))
        return len(self.tensors) - 1

    def const(self, data, dtype, quant=None):
        data = np.asarray(data, dtype=g.NP[dtype])
        return self.tensor(data.shape, dtype, data=data, quant=quant)

    def op(self, name, inputs, outputs, options=None):
        if name not in self.codes:
            self.codes.append(name)
        self.ops.append((self.codes.index(name), inputs, outputs, options))
        return outputs[0]

    def serialize(self):
        codes = []
        for name in self.codes:
            c = fb.OperatorCodeT()
            c.builtinCode = getattr(fb.BuiltinOperator, name)
            c.deprecatedBuiltinCode = min(c.builtinCode, 127)
            c.version = 1
            codes.append(c)
        buffers = [g.AlignedBufferT()]
        tensors = []
        for t in self.tensors:
            tt = fb.TensorT()
            tt.shape = list(t.shape)
            tt.type = g.TYPE[t.dtype]
            tt.buffer = 0
            tt.name = t.name
            if t.data is not None:
                b = g.AlignedBufferT()
                b.data = np.ascontiguousarray(t.data).astype(t.data.dtype.newbyteorder("<")).tobytes()
                buffers.append(b)
                tt.buffer = len(buffers) - 1
            if t.quant is not None:
                q = fb.QuantizationParametersT()
                q.scale = [float(s) for s in t.quant[0]]
                q.zeroPoint = [int(z) for z in t.quant[1]]
                q.quantizedDimension = int(t.quant[2])
                tt.quantization = q
            tensors.append(tt)
        ops = []
        for code, ins, outs, options in self.ops:
            o = fb.OperatorT()
            o.opcodeIndex = code
            o.inputs, o.outputs = list(ins), list(outs)
            if options is not None:
                o.builtinOptionsType = getattr(fb.BuiltinOptions, options[0])
                o.builtinOptions = options[1]
            ops.append(o)
        sg = fb.SubGraphT()
        sg.tensors, sg.inputs, sg.outputs, sg.operators = tensors, self.inputs, self.outputs, ops
        m = fb.ModelT()
        m.version, m.operatorCodes, m.subgraphs, m.buffers = 3, codes, [sg], buffers
        b = flatbuffers.Builder(4096)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def build(dt):
    q = g.q1(0.05, -3) if dt == "int8" else None
    m = Model()
    act = lambda shape: m.tensor(shape, dt, quant=q)  # noqa: E731
    in0, in1 = act([1, 4, 6, 2]), act([1, 2, 3, 2])
    in2 = m.tensor([4], "int32")
    in3 = act([3, 1])
    m.inputs = [in0, in1, in2, in3]
    t1 = m.op("SPACE_TO_DEPTH", [in0], [act([1, 2, 3, 8])], g.opts("SpaceToDepthOptions", blockSize=2))
    t2 = m.op("DEPTH_TO_SPACE", [t1], [act([1, 4, 6, 2])], g.opts("DepthToSpaceOptions", blockSize=2))
    pads = m.const([[0, 0], [1, 2], [2, 1], [0, 0]], "int32")
    t3 = m.op("MIRROR_PAD", [t2, pads], [act([1, 7, 9, 2])], g.opts("MirrorPadOptions", mode=0))
    t4 = m.op("REVERSE_V2", [t3, m.const([2, 1], "int32")], [act([1, 7, 9, 2])], g.opts("ReverseV2Options"))
    block = m.const([2, 3], "int32")
    t5 = m.op("SPACE_TO_BATCH_ND", [t4, block, m.const([[1, 0], [0, 0]], "int32")], [act([6, 4, 3, 2])],
              g.opts("SpaceToBatchNDOptions"))
    t6 = m.op("BATCH_TO_SPACE_ND", [t5, block, m.const([[1, 0], [0, 0]], "int32")], [act([1, 7, 9, 2])],
              g.opts("BatchToSpaceNDOptions"))
    t7 = m.op("DYNAMIC_UPDATE_SLICE", [t6, in1, in2], [act([1, 7, 9, 2])], g.opts("DynamicUpdateSliceOptions"))
    t8 = m.op("CONCATENATION", [t6, t7], [act([1, 7, 9, 4])],
              g.opts("ConcatenationOptions", axis=3, fusedActivationFunction=0))
    value = m.const(np.array(5 if dt == "int8" else 0.25, g.NP[dt]).reshape([]), dt, quant=q)
    t9 = m.op("PADV2", [t8, m.const([[0, 0], [0, 1], [1, 0], [0, 0]], "int32"), value], [act([1, 8, 10, 4])],
              g.opts("PadV2Options"))
    t10 = m.op("BROADCAST_TO", [in3, m.const([2, 3, 4], "int32")], [act([2, 3, 4])], g.opts("BroadcastToOptions"))
    t11 = m.op("SHAPE", [t7], [m.tensor([4], "int32")], g.opts("ShapeOptions", outType=fb.TensorType.INT32))
    t12 = m.op("ZEROS_LIKE", [t6], [act([1, 7, 9, 2])], g.opts("ZerosLikeOptions"))
    fill_value = m.const(np.array(-7 if dt == "int8" else 1.5, g.NP[dt]).reshape([]), dt, quant=q)
    t13 = m.op("FILL", [m.const([2, 3], "int32"), fill_value], [act([2, 3])], g.opts("FillOptions"))
    t14 = m.op("BROADCAST_ARGS", [m.const([2, 1, 3], "int32"), m.const([4, 1], "int32")],
               [m.tensor([3], "int32")])
    m.outputs = [t3, t9, t10, t11, t12, t13, t14]
    return m.serialize()


def main():
    for dt, name in (("int8", "move_int8"), ("float32", "move_float")):
        path = OUT / f"{name}.tflite"
        path.write_bytes(build(dt))
        tc.write_golden(path, OUT / "golden" / name)
        print(f"wrote {path.relative_to(tc.REPO)} and its golden data")


if __name__ == "__main__":
    main()
