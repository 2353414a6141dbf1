"""TFLM goldens for the real-world models of ../shared/models/realworld/ (as their vendors ship
them; the models themselves are not copied into the repository).

For each <stem>.tflite there, with the pinned TFLM (tools/requirements.txt), writes
tests/realworld/<stem>/:
  golden.json, s<seed>_in<i>.bin, s<seed>_out<i>.bin
      the model's final outputs, in the format of ../shared/models/golden/ (plus the model's
      sha256 under "model_sha256"). Inputs are seeded (numpy.random.default_rng(seed), one
      draw per input in order): float32 uniform in [-1, 1), int8/uint8 over the full range.
      Seeds 1, 2, 3; only seed 1 for a model whose inputs exceed 64 KiB (the OpenMV vision
      models), to keep the repository small.
  layers.json
      every layer: TFLM runs the model's every-layer variant (every operator output added to
      the subgraph outputs, built here in memory, never written) on the same inputs, and
      layers.json lists each operator-produced tensor (op index, op name, tensor index, name,
      dtype, shape, bytes) with the sha256 of its bytes per seed. Digests, not the bytes:
      movenet's layers are 7.5 MB per sample. A test that finds a digest differing names the
      first layer in op order that differs; `--dump <stem> <dir> [--seed N]` writes that
      model's layers' bytes (TFLM's, seed N, default 1) as <dir>/t<tensor>.bin to look at the
      values.

Run from the repository root:  .venv/bin/python tools/gen_realworld_golden.py [stem ...]
Deterministic; about 1 minute (movenet's every-layer run dominates).
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

import flatbuffers
import numpy as np

import tflite_common as tc

REALWORLD = tc.SHARED_MODELS / "realworld"
OUT = tc.REPO / "tests" / "realworld"
ARENA = 32 << 20
BIG_INPUT = 64 << 10


def every_layer_variant(data):
    """The model with every operator output added to subgraph 0's outputs (its own outputs
    first, then in op order, each once); re-serialized, so aligned whatever the original."""
    m = tc.load_model(data)
    sg = m.subgraphs[0]
    outs = [int(t) for t in sg.outputs]
    for op in sg.operators:
        for t in op.outputs:
            if t >= 0 and int(t) not in outs:
                outs.append(int(t))
    sg.outputs = outs
    b = flatbuffers.Builder(len(data) + 4096)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def layer_list(model):
    """(op index, op name, tensor index) of every operator-produced tensor, each once."""
    sg = model.subgraphs[0]
    names = tc.op_names(model)
    seen, layers = set(), []
    for k, op in enumerate(sg.operators):
        for t in op.outputs:
            if t >= 0 and int(t) not in seen:
                seen.add(int(t))
                layers.append((k, names[k], int(t)))
    return layers


def seeds_for(ins):
    return (1,) if sum(d["bytes"] for d in ins) > BIG_INPUT else tc.GOLDEN_SEEDS


def layer_outputs(data, model, xs):
    """TFLM's bytes of every operator-produced tensor for inputs xs, by tensor index."""
    variant = every_layer_variant(data)
    vm = tc.load_model(variant)
    outs = [int(t) for t in vm.subgraphs[0].outputs]
    it = tc.make_interpreter(variant, ARENA)
    ys = tc.run_tflm(it, xs, len(outs))
    got = {}
    for t, y in zip(outs, ys):
        d = tc.tensor_details(model, t)
        y = np.ascontiguousarray(y, dtype=tc.NP_DTYPES[d["dtype"]])
        if y.nbytes != d["bytes"]:
            raise RuntimeError(f"tensor {t}: {y.nbytes} bytes, expected {d['bytes']}")
        got[t] = y.astype(y.dtype.newbyteorder("<")).tobytes()
    return got


def inputs(model, seed):
    sg = model.subgraphs[0]
    rng = np.random.default_rng(seed)
    return [
        tc.random_input(rng, d["shape"], d["dtype"])
        for d in (tc.tensor_details(model, t) for t in sg.inputs)
    ]


def generate(path):
    stem = path.stem
    data = path.read_bytes()
    model = tc.load_model(data)
    sg = model.subgraphs[0]
    ins = [tc.tensor_details(model, t) for t in sg.inputs]
    seeds = seeds_for(ins)
    out = OUT / stem
    if out.exists():
        for f in out.iterdir():
            f.unlink()
    golden = tc.write_golden(path, out, arena_size=ARENA, seeds=seeds)
    golden["model_sha256"] = hashlib.sha256(data).hexdigest()
    (out / "golden.json").write_text(json.dumps(golden, indent=1) + "\n")

    layers = layer_list(model)
    digests = {}
    for seed in seeds:
        xs = inputs(model, seed)
        # The same inputs as the golden's (one generator, one draw per input in order).
        for i, x in enumerate(xs):
            want = (out / f"s{seed}_in{i}.bin").read_bytes()
            if np.ascontiguousarray(x).tobytes() != want:
                raise RuntimeError(f"{stem}: seed {seed} input {i} differs from the golden's")
        got = layer_outputs(data, model, xs)
        # The every-layer variant's final outputs equal the model's own.
        for i, t in enumerate(int(t) for t in sg.outputs):
            if got[t] != (out / f"s{seed}_out{i}.bin").read_bytes():
                raise RuntimeError(f"{stem}: seed {seed}: the variant's output {i} differs")
        digests[str(seed)] = [hashlib.sha256(got[t]).hexdigest() for _, _, t in layers]
    entries = []
    for k, op, t in layers:
        d = tc.tensor_details(model, t)
        entries.append(
            {
                "op_index": k,
                "op": op,
                "tensor_index": t,
                "name": d["name"],
                "dtype": d["dtype"],
                "shape": d["shape"],
                "bytes": d["bytes"],
            }
        )
    doc = {
        "protocol": tc.GOLDEN_PROTOCOL
        + "; every operator-produced tensor of the every-layer variant, sha256 of its bytes",
        "model": path.name,
        "model_sha256": golden["model_sha256"],
        "layers": entries,
        "sha256": digests,
    }
    (out / "layers.json").write_text(json.dumps(doc, indent=1) + "\n")
    total = sum(e["bytes"] for e in entries)
    print(f"{stem:48s} {len(sg.operators):3d} ops  seeds {seeds}  {len(entries)} layers, {total} B each sample")


def dump(stem, where, seed):
    path = REALWORLD / f"{stem}.tflite"
    data = path.read_bytes()
    model = tc.load_model(data)
    got = layer_outputs(data, model, inputs(model, seed))
    where = Path(where)
    where.mkdir(parents=True, exist_ok=True)
    for t, b in got.items():
        (where / f"t{t}.bin").write_bytes(b)
    print(f"{len(got)} tensors of {stem} (seed {seed}) in {where}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stems", nargs="*", help="only these models (file stems)")
    ap.add_argument("--dump", nargs=2, metavar=("STEM", "DIR"))
    ap.add_argument("--seed", type=int, default=1, help="the sample --dump runs")
    a = ap.parse_args()
    if a.dump:
        dump(*a.dump, a.seed)
        return
    paths = sorted(REALWORLD.glob("*.tflite"))
    if not paths:
        sys.exit(f"no models in {REALWORLD}")
    if a.stems:
        paths = [p for p in paths if p.stem in a.stems]
    for p in paths:
        generate(p)


if __name__ == "__main__":
    main()
