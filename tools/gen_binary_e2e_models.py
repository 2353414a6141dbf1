"""End-to-end models of the binary family (tests/e2e_binary.rs): single-operator models taken
from the kernel-case bundles of tools/kcases_binary.py, with golden data from the pinned TFLM
(tflite_common.write_golden: seeds 1, 2, 3, random inputs over each type's range).

For each entry, the first case of the bundle whose input shapes differ (broadcast) or are all
equal, as listed, is written to tests/models/binary/<name>.tflite and its golden data to
tests/models/binary/golden/<name>/. The Rust test compiles each with include_model! (so the
emitted kernel calls type-check) and compares its outputs byte for byte.

Run from the repository root:  .venv/bin/python tools/gen_binary_e2e_models.py
"""

import sys
from pathlib import Path

import gen_kernel_cases as g
import tflite_common as tc

OUT = tc.REPO / "tests" / "models" / "binary"

# (bundle, broadcast?). No int32 SUB/MUL/SQUARED_DIFFERENCE and no DIV: the golden inputs span
# each type's whole range, where TFLM's C++ would overflow or divide by a zero point.
MODELS = [
    ("equal_bool", True),
    ("not_equal_int64", False),
    ("greater_int8", True),
    ("less_equal_float32", False),
    ("logical_and_bool", True),
    ("logical_or_bool", False),
    ("logical_not_bool", False),
    ("select_v2_int8", True),
    ("select_v2_float32", False),
    ("select_v2_int16", True),
    ("prelu_int8", True),
    ("prelu_int16", True),
    ("prelu_float32", False),
    ("squared_difference_int8", True),
    ("squared_difference_int16", False),
    ("floor_div_float32", True),
    ("floor_mod_float32", False),
    ("add_n_int8", False),
    ("add_n_float32", False),
    ("sub_int16", True),
    ("mul_int16", False),
    ("maximum_int64", True),
    ("minimum_int16", False),
]


def pick(bundle, broadcast):
    for model, _, _ in g.read_bundle(g.OUT / f"{bundle}.kcase"):
        m = tc.load_model(model)
        sg = m.subgraphs[0]
        shapes = [list(sg.tensors[i].shape) for i in sg.inputs]
        if (len(shapes) > 1 and any(s != shapes[0] for s in shapes)) == broadcast:
            return model
    raise SystemExit(f"{bundle}: no case with broadcast={broadcast}")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for bundle, broadcast in MODELS:
        path = OUT / f"{bundle}.tflite"
        path.write_bytes(pick(bundle, broadcast))
        tc.write_golden(path, OUT / "golden" / bundle)
        print(path.relative_to(tc.REPO))


if __name__ == "__main__":
    sys.exit(main())
