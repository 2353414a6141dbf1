"""Builds Kiln's large-graph test model and its TFLM golden data.

Writes (paths relative to the repository root):
  tests/models/scale_chain_2000.tflite     2,000 operators: 1,000 x (FULLY_CONNECTED 16 -> 16
                                           with int8 per-tensor weights near the identity and
                                           an int32 bias, RELU), int8 [1, 16] in and out,
                                           seeded weights
  tests/models/scale_relu_2000.tflite      2,000 RELUs in a chain (int8 [1, 64]): the worst
                                           case of in-place grouping (one group of 2,001
                                           tensors)
  tests/models/golden/<name>/              golden data (seeds 1, 2, 3), same format and
                                           protocol as ../shared/models/golden

They are the 2,000-operator models `include_model!` must compile quickly (tests/e2e_scale.rs).
Built with the schema object API shipped in tflite-micro (the converter would fold it).

Run from the repository root:  .venv/bin/python tools/gen_scale_models.py   (a few seconds)
"""

import numpy as np

import tflite_common as tc
from gen_hostile_models import Model, opts, tensor

OUT = tc.REPO / "tests" / "models"
SEED = 20261201
BLOCKS = 1000
WIDTH = 16


def chain():
    rng = np.random.default_rng(SEED)
    m = Model()
    x = m.add(tensor([1, WIDTH], "int8", "input", 0.05, 0))
    first = x
    for i in range(BLOCKS):
        # Close to the identity (100 / 100 = 1 on the diagonal, a little noise elsewhere), so
        # the values neither die nor saturate over 1,000 layers.
        wq = 100 * np.eye(WIDTH, dtype=np.int64) + rng.integers(-3, 4, size=(WIDTH, WIDTH))
        w = m.add(tensor([WIDTH, WIDTH], "int8", f"fc{i}/weights", 0.01, 0), wq.astype(np.int8))
        b = m.add(tensor([WIDTH], "int32", f"fc{i}/bias", 0.05 * 0.01, 0),
                  rng.integers(-20, 21, size=WIDTH).astype(np.int32))
        y = m.add(tensor([1, WIDTH], "int8", f"fc{i}/out", 0.05, -3))
        m.op("FULLY_CONNECTED", [x, w, b], [y], opts("FullyConnectedOptions"))
        r = m.add(tensor([1, WIDTH], "int8", f"relu{i}", 0.05, -3))
        m.op("RELU", [y], [r])
        x = r
    return m.bytes([first], [x])


def relus(n=2000):
    m = Model()
    x = m.add(tensor([1, 64], "int8", "input", 0.05, 0))
    first = x
    for i in range(n):
        # Alternating zero points, so every RELU changes something.
        y = m.add(tensor([1, 64], "int8", f"relu{i}", 0.05, -1 - (i % 3)))
        m.op("RELU", [x], [y])
        x = y
    return m.bytes([first], [x])


def main():
    for name, build in [("scale_chain_2000", chain), ("scale_relu_2000", relus)]:
        path = OUT / f"{name}.tflite"
        path.write_bytes(build())
        tc.write_golden(path, OUT / "golden" / name)
        print(f"{path.name}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
