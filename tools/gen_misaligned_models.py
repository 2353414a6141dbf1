"""Writes test models whose scalars, offsets and vectors of scalars sit at misaligned bytes.

Some converters (older TOCO, MediaPipe tooling) write int64 zero points at 4 mod 8 and other
values off their natural alignment; TFLM runs such files (it runs no flatbuffer verifier).
Kiln must read them too, and read the same values as from an aligned file.

How: a small schema-driven flatbuffer reader and writer over Kiln's own schema
(`planner/schema/tflite_subset.fbs`, parsed here). Each model of `tests/models` listed in
MODELS is read into a tree (the fields Kiln's schema declares; others, such as
`signature_defs`, are dropped) and written anew, front to back, with:

- every scalar and enum field of every table at a misaligned byte (2-, 4- and 8-byte fields
  at each residue in turn: an 8-byte one at 4 mod 8, then 1, 2, 3, 5, 6, 7 mod 8, ...);
- every offset field of every table at a misaligned byte too;
- every vector of scalars (shapes, operator inputs and outputs, scales, int64 zero points,
  custom options) with its length and elements at a misaligned byte (zero points at 4 mod 8
  first, as the converters write them);
- each buffer with data given explicit `offset` = 1 and `size` = its length (two 8-byte
  scalars, misaligned like the rest; TFLM ignores both, and to Kiln as to TensorFlow Lite an
  offset of 0 or 1 means "the data is inline"), its data still 16-aligned as the schema asks
  (`force_align: 16`), so that TFLM's kernels read their weights as before;
- tables, vtables, strings and vectors of tables aligned, as the format requires (the Rust
  `flatbuffers` crate checks those, and Kiln keeps that check).

Outputs:
- `tests/misaligned/<model>.tflite` and TFLM goldens `tests/misaligned/golden/<model>/`
  (`tflite_common.write_golden`, the pinned wheel run on the misaligned file itself), after
  checking that TFLM gives the original model's outputs on the golden inputs, and that the
  file really is misaligned as described (counted and printed);
- the same files as fuzz seeds, `tests/fuzz_regressions/seed_misaligned_<model>.tflite`;
- `tests/ui/fixtures/misaligned_table.tflite` (`mlp_int8` with one table, the second
  tensor, at 2 mod 4: still refused, as a table must be aligned) and
  `tests/ui/fixtures/name_not_utf8.tflite` (`mlp_int8` with a tensor name that is not
  UTF-8): structural failures whose messages `tests/ui` pins;
- `tests/ui/fixtures/external_buffer.tflite` (`mlp_int8` with its first weight buffer's
  bytes after the flatbuffer, `offset`/`size`: the pinned TFLM ignores them and gives other
  outputs, checked here; Kiln refuses it).

Run from the repository root: `.venv/bin/python tools/gen_misaligned_models.py`.
"""

import itertools
import re
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

import tflite_common as tc

REPO = tc.REPO
SCHEMA = REPO / "planner" / "schema" / "tflite_subset.fbs"
OUT = REPO / "tests" / "misaligned"
FIXTURES = REPO / "tests" / "ui" / "fixtures"
SEEDS = REPO / "tests" / "fuzz_regressions"
MODELS = ["mlp_int8", "depthwise_int8", "lstm_int8"]

SCALARS = {
    "bool": ("B", 1), "byte": ("b", 1), "ubyte": ("B", 1), "int8": ("b", 1), "uint8": ("B", 1),
    "short": ("h", 2), "ushort": ("H", 2), "int16": ("h", 2), "uint16": ("H", 2),
    "int": ("i", 4), "uint": ("I", 4), "int32": ("i", 4), "uint32": ("I", 4), "float": ("f", 4),
    "long": ("q", 8), "ulong": ("Q", 8), "int64": ("q", 8), "uint64": ("Q", 8),
    "double": ("d", 8), "float64": ("d", 8),
}


# --- Kiln's schema -------------------------------------------------------------------------

class Schema:
    """Tables (name -> [(id, field name, type)]), enums (name -> base scalar), unions
    (name -> {tag: table}) of a .fbs file, as far as Kiln's subset uses the grammar."""

    def __init__(self, text):
        text = re.sub(r"//[^\n]*", "", text)
        self.enums, self.unions, self.tables = {}, {}, {}
        for kind, name, base, body in re.findall(
                r"\b(enum|union|table)\s+(\w+)\s*(?::\s*(\w+))?\s*\{(.*?)\}", text, re.S):
            if kind == "enum":
                self.enums[name] = base
            elif kind == "union":
                self.unions[name] = {
                    int(v): t for t, v in re.findall(r"(\w+)\s*=\s*(\d+)", body)}
            else:
                self.tables[name] = self._fields(body)
        self.root = re.search(r"root_type\s+(\w+)", text)[1]

    def _fields(self, body):
        fields, next_id = [], 0
        for decl in filter(None, (d.strip() for d in body.split(";"))):
            m = re.fullmatch(r"(\w+)\s*:\s*(\[?\w+\]?)\s*(?:=\s*[\w.-]+)?\s*(?:\((.*)\))?",
                             decl, re.S)
            if not m:
                raise ValueError(f"cannot parse field {decl!r}")
            name, ty, attrs = m[1], m[2], m[3] or ""
            explicit = re.search(r"\bid\s*:\s*(\d+)", attrs)
            is_union = ty in self.unions
            fid = int(explicit[1]) if explicit else next_id + (1 if is_union else 0)
            next_id = fid + 1
            if "deprecated" in attrs:
                continue
            if is_union:
                fields.append((fid - 1, name + "_type", "ubyte"))
            fields.append((fid, name, ty))
        return fields

    def scalar(self, ty):
        """(struct format, size) of a scalar or enum type, or None."""
        return SCALARS.get(self.enums.get(ty, ty))


# --- Reading (any alignment) ---------------------------------------------------------------

def u32(buf, at):
    return struct.unpack_from("<I", buf, at)[0]


def read_table(schema, buf, pos, table):
    """{field id: (type, value)} of the fields present. Scalars keep their raw bytes."""
    vt = pos - struct.unpack_from("<i", buf, pos)[0]
    vt_len = struct.unpack_from("<H", buf, vt)[0]
    out = {}
    fields = schema.tables[table]
    types = {fid: ty for fid, _, ty in fields}
    for fid, _, ty in fields:
        if 4 + 2 * fid >= vt_len:
            continue
        off = struct.unpack_from("<H", buf, vt + 4 + 2 * fid)[0]
        if off == 0:
            continue
        at = pos + off
        if ty in schema.unions:
            tag_ty = types[fid - 1]
            tag = out.get(fid - 1, (tag_ty, b"\0"))[1][0]
            member = schema.unions[ty].get(tag)
            if member is None:
                raise ValueError(f"{table}: union {ty} member {tag} is not in Kiln's schema")
            out[fid] = (member, read_table(schema, buf, at + u32(buf, at), member))
        elif schema.scalar(ty):
            out[fid] = (ty, bytes(buf[at:at + schema.scalar(ty)[1]]))
        else:
            out[fid] = (ty, read_ref(schema, buf, at + u32(buf, at), ty))
    return out


def read_ref(schema, buf, at, ty):
    if ty == "string":
        return bytes(buf[at + 4:at + 4 + u32(buf, at)])
    if ty in schema.tables:
        return read_table(schema, buf, at, ty)
    elem = ty[1:-1]
    n = u32(buf, at)
    if schema.scalar(elem):
        return bytes(buf[at + 4:at + 4 + n * schema.scalar(elem)[1]])
    return [read_ref(schema, buf, at + 4 + 4 * i + u32(buf, at + 4 + 4 * i), elem)
            for i in range(n)]


# --- Writing (misaligned where the format allows) -------------------------------------------

class Writer:
    """Lays a tree out front to back (every offset points forward). `misaligned` puts every
    scalar, offset field and vector of scalars off its alignment; `bad_table` (a path such as
    "subgraphs[0].tensors[1]") puts that table at 2 mod 4."""

    def __init__(self, schema, misaligned=True, bad_table=None):
        self.schema, self.misaligned, self.bad_table = schema, misaligned, bad_table
        self.buf = bytearray()
        # Residues taken in turn, so that each size meets each misalignment.
        self.residues = {w: itertools.cycle(r) for w, r in
                         {2: [1], 4: [1, 2, 3], 8: [4, 1, 2, 3, 5, 6, 7]}.items()}
        self.stats = {"fields": 0, "fields_misaligned": 0, "vectors": 0,
                      "vectors_misaligned": 0}

    def pad_to(self, at):
        assert at >= len(self.buf)
        self.buf.extend(b"\0" * (at - len(self.buf)))

    def spot(self, start, width):
        """The first position >= start for a value of `width` bytes: misaligned or aligned."""
        if width == 1:
            return start
        want = next(self.residues[width]) if self.misaligned else 0
        return start + (want - start) % width

    def write(self, tree):
        self.buf = bytearray(b"\0\0\0\0TFL3")
        root = self.table(tree, self.schema.root, "")
        struct.pack_into("<I", self.buf, 0, root)
        return bytes(self.buf)

    def table(self, fields, name, path):
        ids = sorted(fields)
        slots = (ids[-1] + 1) if ids else 0
        vt = len(self.buf) + len(self.buf) % 2
        vt_len = 4 + 2 * slots
        t = (vt + vt_len + 3) // 4 * 4
        if path == self.bad_table:
            t += 2
        # Inline layout: the signed offset to the vtable, then the fields in id order.
        at, places = t + 4, {}
        for fid in ids:
            ty, _ = fields[fid]
            width = self.schema.scalar(ty)[1] if self.schema.scalar(ty) else 4
            places[fid] = self.spot(at, width)
            at = places[fid] + width
            if width > 1:
                self.stats["fields"] += 1
                self.stats["fields_misaligned"] += places[fid] % width != 0
        self.pad_to(at)
        vtable = [vt_len, at - t] + [places[i] - t if i in places else 0 for i in range(slots)]
        struct.pack_into(f"<{len(vtable)}H", self.buf, vt, *vtable)
        struct.pack_into("<i", self.buf, t, t - vt)
        table_fields = {f: n for f, n, _ in self.schema.tables.get(name, [])}
        for fid in ids:
            ty, value = fields[fid]
            if self.schema.scalar(ty):
                self.buf[places[fid]:places[fid] + len(value)] = value
                continue
            child = f"{path}.{table_fields.get(fid, fid)}".lstrip(".")
            target = self.ref(ty, value, child, data=(name == "Buffer"))
            struct.pack_into("<I", self.buf, places[fid], target - places[fid])
        return t

    def ref(self, ty, value, path, data=False):
        if ty == "string":
            at = (len(self.buf) + 3) // 4 * 4
            self.pad_to(at)
            self.buf += struct.pack("<I", len(value)) + value + b"\0"
            return at
        if ty in self.schema.tables:
            return self.table(value, ty, path)
        elem = ty[1:-1]
        scalar = self.schema.scalar(elem)
        if scalar:
            width = scalar[1]
            if data:
                start = self.spot(len(self.buf) + 4, 1)
                start = (start + 15) // 16 * 16  # the schema's force_align: 16
            elif width == 1:
                start = self.spot(len(self.buf), 4) + 4  # the length at 1, 2 or 3 mod 4
            else:
                start = self.spot(len(self.buf) + 4, width)
            self.pad_to(start - 4)
            self.buf += struct.pack("<I", len(value) // width) + value
            self.stats["vectors"] += 1
            self.stats["vectors_misaligned"] += (start % max(width, 4)) != 0
            return start - 4
        # A vector of tables or strings: aligned, its elements written after it.
        at = (len(self.buf) + 3) // 4 * 4
        self.pad_to(at)
        self.buf += struct.pack("<I", len(value)) + b"\0" * (4 * len(value))
        for i, v in enumerate(value):
            target = self.ref(elem, v, f"{path}[{i}]")
            struct.pack_into("<I", self.buf, at + 4 + 4 * i, target - (at + 4 + 4 * i))
        return at


def field_id(schema, table, name):
    return next(fid for fid, n, _ in schema.tables[table] if n == name)


def with_buffer_offsets(schema, tree):
    """Gives each buffer with data explicit `offset` = 1 and `size` = its length."""
    model_buffers = field_id(schema, "Model", "buffers")
    data, offset, size = (field_id(schema, "Buffer", n) for n in ("data", "offset", "size"))
    for b in tree[model_buffers][1]:
        if data in b and b[data][1]:
            b[offset] = ("ulong", struct.pack("<Q", 1))
            b[size] = ("ulong", struct.pack("<Q", len(b[data][1])))
    return tree


def tflm_outputs(data, seeds=tc.GOLDEN_SEEDS):
    model = tc.load_model(data)
    sg = model.subgraphs[0]
    ins = [tc.tensor_details(model, t) for t in sg.inputs]
    interp = tc.make_interpreter(data, 1 << 20)
    outs = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        xs = [tc.random_input(rng, d["shape"], d["dtype"]) for d in ins]
        outs.append([y.tobytes() for y in tc.run_tflm(interp, xs, len(sg.outputs))])
    return outs


def main():
    schema = Schema(SCHEMA.read_text())
    OUT.mkdir(parents=True, exist_ok=True)
    for name in MODELS:
        original = (REPO / "tests" / "models" / f"{name}.tflite").read_bytes()
        tree = with_buffer_offsets(schema, read_table(
            schema, original, u32(original, 0), schema.root))
        w = Writer(schema)
        data = w.write(tree)
        s = w.stats
        if s["fields_misaligned"] == 0 or s["vectors_misaligned"] == 0:
            raise RuntimeError(f"{name}: nothing misaligned: {s}")
        # The rewrite must be the same model to TFLM.
        if tflm_outputs(data) != tflm_outputs(original):
            raise RuntimeError(f"{name}: TFLM's outputs differ from the original model's")
        path = OUT / f"{name}.tflite"
        path.write_bytes(data)
        (SEEDS / f"seed_misaligned_{name}.tflite").write_bytes(data)
        golden = OUT / "golden" / name
        shutil.rmtree(golden, ignore_errors=True)
        tc.write_golden(path, golden)
        print(f"{path.relative_to(REPO)}: {len(data)} bytes ({len(original)} aligned); "
              f"{s['fields_misaligned']} of {s['fields']} multi-byte table fields and "
              f"{s['vectors_misaligned']} of {s['vectors']} vectors of scalars misaligned "
              "(buffer data stays 16-aligned)")

    # Structural failures that stay refused.
    original = (REPO / "tests" / "models" / "mlp_int8.tflite").read_bytes()
    tree = read_table(schema, original, u32(original, 0), schema.root)
    bad = Writer(schema, bad_table="subgraphs[0].tensors[1]").write(tree)
    (FIXTURES / "misaligned_table.tflite").write_bytes(bad)
    tensors = tree[field_id(schema, "Model", "subgraphs")][1][0][
        field_id(schema, "SubGraph", "tensors")][1]
    name_id = field_id(schema, "Tensor", "name")
    tensors[2][name_id] = ("string", b"dense\xff" + tensors[2][name_id][1])
    (FIXTURES / "name_not_utf8.tflite").write_bytes(Writer(schema).write(tree))
    print("tests/ui/fixtures/misaligned_table.tflite, tests/ui/fixtures/name_not_utf8.tflite")

    # A buffer outside the flatbuffer (`offset` > 1 and `size`, the format of models over
    # 2 GB): the first weight buffer's bytes moved after the flatbuffer. The pinned TFLM
    # ignores `offset`: the tensor has no data to it, and its outputs are not the model's.
    tree = read_table(schema, original, u32(original, 0), schema.root)
    data_id, offset_id, size_id = (field_id(schema, "Buffer", n) for n in ("data", "offset", "size"))
    buffers = tree[field_id(schema, "Model", "buffers")][1]
    k = next(i for i, b in enumerate(buffers) if data_id in b and b[data_id][1])
    moved = bytes(buffers[k][data_id][1])
    del buffers[k][data_id]
    buffers[k][size_id] = ("ulong", struct.pack("<Q", len(moved)))
    buffers[k][offset_id] = ("ulong", struct.pack("<Q", 0))
    at = -(-len(Writer(schema, misaligned=False).write(tree)) // 16) * 16
    buffers[k][offset_id] = ("ulong", struct.pack("<Q", at))
    flat = Writer(schema, misaligned=False).write(tree)
    external = flat + bytes(at - len(flat)) + moved
    if tflm_outputs(external) == tflm_outputs(original):
        raise RuntimeError("external_buffer: the pinned TFLM now reads buffers by offset")
    (FIXTURES / "external_buffer.tflite").write_bytes(external)
    print(f"tests/ui/fixtures/external_buffer.tflite (buffer {k}, {len(moved)} bytes at {at}; "
          "TFLM's outputs differ from the model's)")


if __name__ == "__main__":
    sys.exit(main())
