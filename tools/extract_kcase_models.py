"""Copies single cases' models out of kernel-case bundles into tests/models/kcases/, for the
end-to-end tests that compile them with `include_model!` (tests/e2e_kcases_reduce.rs); the
tests read each case's inputs and TFLM's outputs from the bundle itself and check that the
copied model is still the bundle's.

Run from the repository root after regenerating the bundles listed here:
    .venv/bin/python tools/extract_kcase_models.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import gen_kernel_cases as g  # noqa: E402

# Bundles of tools/kcases_reduce.py, and the case indices taken from each.
BUNDLES = [
    "sum_int8", "sum_float32", "sum_int16", "reduce_max_int8", "reduce_max_float32",
    "reduce_min_int8", "reduce_min_float32", "arg_max_int8", "arg_max_float32", "arg_min_int8",
    "arg_min_float32", "gather_int8", "gather_float32", "gather_nd_int8", "gather_nd_float32",
    "embedding_lookup_int8", "embedding_lookup_float32", "embedding_lookup_int8_float32",
    "slice_int8", "slice_float32", "slice_int16", "slice_int32", "slice_bool", "cumsum_int8",
    "cumsum_float32", "batch_matmul_int8", "batch_matmul_float32", "batch_matmul_int16",
    "l2_pool_2d_float32", "average_pool_2d_int16", "max_pool_2d_int16",
]
CASES = (0, 7)
OUT = g.tc.REPO / "tests" / "models" / "kcases"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name in BUNDLES:
        for index, (model, _, _) in enumerate(g.read_bundle(g.OUT / f"{name}.kcase")):
            if index in CASES:
                (OUT / f"{name}_{index}.tflite").write_bytes(model)
    print(f"wrote {len(BUNDLES) * len(CASES)} models to {OUT.relative_to(g.tc.REPO)}")


if __name__ == "__main__":
    main()
