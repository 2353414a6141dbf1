"""Integer forms of existing arithmetic operators (bundle add_int32).

ADD int32 as TFLM's add.cc runs it (the audio preprocessor's form): drawn like add_<dt>
(broadcasting shapes, fused activations NONE/RELU/RELU6, which the wheel ignores for int32),
inputs over the full int32 range, so sums wrap as TFLM's two's-complement additions do.
"""


def register(g):
    return [("add", "ADD", g.gen_add, ("int32",))]
