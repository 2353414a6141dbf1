#!/usr/bin/env python3
"""Kiln on a Cortex-M4 (QEMU mps2-an386): sizes, RAM, stack and instructions per invoke()
of every public model Kiln supports, side by side with TFLM, and where the instructions of
the vision models go by operator kind, written into BENCHMARKS.md between
`<!-- kiln:firmware -->` and `<!-- /kiln:firmware -->` (other sections untouched).

Run from the repository root:  .venv/bin/python tools/firmware_bench.py
  --models a,b     only these model stems (default: every ../shared/models/*.tflite Kiln
                   supports, see EXCLUDED)
  --opt 3,s        opt-levels to build (default both: 3 = speed, s = size)
  --no-write       print the section instead of writing BENCHMARKS.md
  --no-cores       skip the Cortex-M0 (microbit) and Cortex-M55 (mps3-an547) table
  --no-breakdown   skip the per-operator-kind breakdown (BREAKDOWN models)
  --per-op         also put the per-operator tables of the breakdown into the section
                   (they are always printed while running)

Per model and opt-level it builds examples/firmware (its own cargo workspace and target dir,
`KILN_MODEL=<stem>`, release profile with `CARGO_PROFILE_RELEASE_OPT_LEVEL`), then runs it
under QEMU three times: once to check the output against TFLM's golden s1 (both invokes) and
read the stack high-water mark, and twice with the instruction-count plugin of
../shared/tools/qemu-insn-count, stopping right before and right after the first invoke()
(semihosting argument `stop=1` / `stop=2`): their difference is one invoke(). Sizes from
`llvm-size -A` and `llvm-nm` (rustup component llvm-tools). MACs from the .tflite (Python
venv with the pinned tflite-micro package, for its flatbuffer schema). Ratios to TFLM
(Kiln / TFLM instructions, < 1 = Kiln executes fewer) use the cmsis8 and ref columns of
../shared/notes/tflm-cortexm.md.

Per-operator breakdown (BREAKDOWN models, each opt-level): `include_model!` gives every
generated statement the line of the macro call, so the firmware is built a second time from
a copy of examples/firmware (TARGET_DIR/bench/lines-crate) whose build.rs compiles the model
with kiln-build's build.rs front end instead (`Model::compile`: the same tokens, formatted
into $OUT_DIR/lines.rs, one line per statement); its flash image is checked to be byte
for byte the measured firmware's. One run with the plugin's per-PC histogram
(`libpchist.so`) gives every instruction executed in invoke(); `arm-none-eabi-addr2line -i`
follows each PC's inline chain (through LTO inlining) to the generated file's line, i.e. to
the operator block (`/// op <k>: <NAME>`) it belongs to. Out-of-line callees (kernels LLVM
did not inline, memcpy) are charged to the operator of their call site: the plugin logs the
running total at each call instruction in invoke() and at the first branch after its return
(both end a translation block, so the totals there are exact). Operators map to kinds by the
.tflite (1x1 CONV_2D / other CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED / other); what is
left (invoke()'s own set-up, the harness's call and stop check) is printed as unattributed.

Needs: qemu-system-arm, rustup target thumbv7em-none-eabihf, llvm-tools, gcc (the plugin),
the venv (`tools/setup_venv.sh`), binutils-arm-none-eabi (addr2line, for the breakdown).
About 3 minutes on the 2-core machine for 13 models x 2 (with the other cores and the
breakdown, whose extra builds and runs take 5-30 s per model and opt-level).
"""

import argparse
import bisect
import collections
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FW = REPO / "examples" / "firmware"
TARGET_DIR = FW / "target"
SHARED = Path(os.environ.get("KILN_SHARED", REPO.parent / "shared"))
MODELS = SHARED / "models"
TFLM_NOTES = SHARED / "notes" / "tflm-cortexm.md"
# The same measurements of TFLM on the Cortex-M55 (Helium), for the M55 rows.
TFLM_NOTES_M55 = SHARED / "notes" / "tflm-cortexm55.md"
PLUGIN_SRC = SHARED / "tools" / "qemu-insn-count"
BENCH = REPO / "BENCHMARKS.md"
BEGIN, END = "<!-- kiln:firmware -->", "<!-- /kiln:firmware -->"

M4 = ("thumbv7em-none-eabihf", "mps2-an386")
OTHER_CORES = [("thumbv6m-none-eabi", "microbit", "Cortex-M0", 16 * 1024),
               ("thumbv8m.main-none-eabihf", "mps3-an547", "Cortex-M55", 512 * 1024)]

EXCLUDED = {}  # model stem -> why it is not measured (none: Kiln compiles every public model)

# ../shared/notes/tflm-cortexm.md names the models it measured by short names.
TFLM_SHORT = {
    "tflm_hello_world_int8": "hello_world",
    "tflm_micro_speech_int8": "micro_speech",
    "mlperf_tiny_kws_dscnn_int8": "kws_dscnn",
    "mlperf_tiny_ic_resnet8_int8": "ic_resnet8",
    "tflm_person_detect_int8": "person_detect",
    "mlperf_tiny_vww_mobilenetv1_025_96_int8": "vww_mbnv1_025",
}

# The per-operator-kind breakdown: these models, at every opt-level built.
BREAKDOWN = ("tflm_person_detect_int8", "mlperf_tiny_ic_resnet8_int8")
KINDS = ("1x1 conv", "windowed conv", "depthwise", "FC", "other")
# The target: at most this many times TFLM + CMSIS-NN's (cmsis8) instructions.
TARGET_VS_CMSIS8 = 0.8


def ensure_venv():
    """Re-runs this script under the repository's venv if the schema module is missing."""
    try:
        import tflite_micro  # noqa: F401
    except ImportError:
        py = REPO / ".venv" / "bin" / "python"
        if py.exists() and Path(sys.executable).resolve() != py.resolve():
            os.execv(str(py), [str(py), *sys.argv])
        sys.exit("needs the venv with tflite-micro: tools/setup_venv.sh")


def run(cmd, env=None, cwd=None, check=True, timeout=None):
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit(f"failed ({r.returncode}): {' '.join(map(str, cmd))}")
    return r


def llvm_bin(name):
    sysroot = run(["rustc", "--print", "sysroot"]).stdout.strip()
    host = re.search(r"host: (\S+)", run(["rustc", "-vV"]).stdout).group(1)
    p = Path(sysroot) / "lib" / "rustlib" / host / "bin" / name
    if not p.exists():
        run(["rustup", "component", "add", "llvm-tools"])
    return str(p)


# ---------------------------------------------------------------------------------------
# MACs from the .tflite


def operators(path):
    """Per operator of the .tflite's first subgraph, in order: {"name", "macs", "kind"}.
    MACs: CONV_2D out*kh*kw*in_ch + DEPTHWISE_CONV_2D out*kh*kw + FULLY_CONNECTED out*in, plus
    the gate matrix products of UNIDIRECTIONAL_SEQUENCE_LSTM (per step: gates*cells*(in+out))
    and SVDF's feature and time products (batch*filters*(in+memory)). Kind: one of KINDS
    (a CONV_2D with a 1x1 filter is "1x1 conv", any other CONV_2D "windowed conv")."""
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

    names = {v: k for k, v in vars(fb.BuiltinOperator).items() if not k.startswith("_")}
    m = fb.ModelT.InitFromObj(fb.Model.GetRootAsModel(bytearray(path.read_bytes()), 0))
    g = m.subgraphs[0]

    def shape(i):
        return list(g.tensors[i].shape) if i >= 0 else None

    def prod(s):
        n = 1
        for d in s:
            n *= int(d)
        return n

    res = []
    for op in g.operators or []:
        oc = m.operatorCodes[op.opcodeIndex]
        name = names.get(max(oc.builtinCode, oc.deprecatedBuiltinCode), "?")
        ins, outs = list(op.inputs), list(op.outputs)
        n, kind = 0, "other"
        if name == "CONV_2D":
            f = shape(ins[1])  # [out_ch, kh, kw, in_ch]
            n = prod(shape(outs[0])) * f[1] * f[2] * f[3]
            kind = "1x1 conv" if f[1] == f[2] == 1 else "windowed conv"
        elif name == "DEPTHWISE_CONV_2D":
            f = shape(ins[1])  # [1, kh, kw, out_ch]
            n = prod(shape(outs[0])) * f[1] * f[2]
            kind = "depthwise"
        elif name == "FULLY_CONNECTED":
            f = shape(ins[1])  # [out, in]
            n = prod(shape(outs[0])) * f[-1]
            kind = "FC"
        elif name == "UNIDIRECTIONAL_SEQUENCE_LSTM":
            x = shape(ins[0])  # [batch, time, in] (or time-major; the product is the same)
            steps = prod(x[:-1])
            gates = [shape(i) for i in ins[1:9] if i >= 0]  # [cells, in] and [cells, out]
            n = steps * sum(s[0] * s[1] for s in gates)
            if len(ins) > 16 and ins[16] >= 0:  # projection [out, cells]
                p = shape(ins[16])
                n += steps * p[0] * p[1]
        elif name == "SVDF":
            batch = shape(ins[0])[0]
            feat, time = shape(ins[1]), shape(ins[2])  # [filters, in], [filters, memory]
            n = batch * (feat[0] * feat[1] + time[0] * time[1])
        res.append({"name": name, "macs": n, "kind": kind})
    return res


# ---------------------------------------------------------------------------------------
# Build, run, measure


def build(stem, target, opt):
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET_DIR), KILN_MODEL=stem,
               KILN_MODELS=str(MODELS), CARGO_PROFILE_RELEASE_OPT_LEVEL=opt)
    env.pop("KILN_BOARD", None)
    r = run(["cargo", "build", "--release", "--target", target], env=env, cwd=FW, check=False)
    if r.returncode != 0:
        return None, r.stderr
    out = TARGET_DIR / "bench" / f"{stem}.{target}.O{opt}.elf"
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TARGET_DIR / target / "release" / "kiln-firmware", out)
    return out, ""


def qemu(machine, elf, stop=None, plugin=None):
    semi = "enable=on,target=native" + (f",arg=fw,arg=stop={stop}" if stop else "")
    cmd = ["qemu-system-arm", "-machine", machine, "-nographic", "-monitor", "none",
           "-semihosting-config", semi]
    if plugin:
        cmd += ["-plugin", str(plugin), "-d", "plugin"]
    cmd += ["-kernel", str(elf)]
    try:
        r = run(cmd, check=False, timeout=300)
    except subprocess.TimeoutExpired:
        return 124, "TIMEOUT"
    return r.returncode, r.stdout + r.stderr


def instructions(machine, elf, plugin, stop):
    rc, out = qemu(machine, elf, stop=stop, plugin=plugin)
    m = re.search(r"insns total (\d+)", out)
    if rc != 0 or not m:
        raise SystemExit(f"{elf}: stop={stop}: rc {rc}\n{out}")
    return int(m.group(1))


def sizes(elf):
    out = run([llvm_bin("llvm-size"), "-A", str(elf)]).stdout
    sec = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[0].startswith(".") and p[1].isdigit():
            sec[p[0]] = int(p[1])
    return sec


KILN_FN = re.compile(r"^(<)?(kiln_kernels::|kiln::|kiln_firmware::model::|kiln_firmware::run\b)|bytemuck")
CORE_FN = re.compile(r"^(<.* as )?(core::|compiler_builtins::|<core::|__aeabi|mem(cpy|set|move|cmp)\b|"
                     r"__(u|)div|__(ll|lsr|ash)|_?_?fp|__(add|sub|mul|div|cmp|float|fix|extend|trunc|eq|ne|lt|le|gt|ge|un)[a-z]*[sd]f)")


def code_by_origin(elf):
    """Function bytes in .text: Kiln (invoke, kernels, runtime incl. bytemuck's cast checks),
    Rust core/compiler-builtins, the rest (harness, cortex-m-rt, semihosting)."""
    out = run([llvm_bin("llvm-nm"), "-S", "-C", "--defined-only", str(elf)]).stdout
    acc = {"kiln": 0, "core": 0, "harness": 0}
    for line in out.splitlines():
        p = line.split(None, 3)
        if len(p) != 4 or p[2] not in "tT":
            continue
        size, name = int(p[1], 16), p[3]
        if KILN_FN.search(name):
            acc["kiln"] += size
        elif CORE_FN.search(name) or "core..fmt" in name:
            acc["core"] += size
        else:
            acc["harness"] += size
    return acc


def measure(stem, target, machine, opt, plugin):
    elf, err = build(stem, target, opt)
    if elf is None:
        return {"error": err.strip().splitlines()[-8:]}
    rc, out = qemu(machine, elf)
    r = {"elf": str(elf), "rc": rc, "pass": rc == 0 and "RESULT PASS" in out,
         "log": out.strip()}
    for key in ["arena_bytes", "persistent_bytes", "weights_bytes", "stack_invoke_bytes",
                "stack_total_bytes"]:
        m = re.search(key + r"=(\d+)", out)
        r[key] = int(m.group(1)) if m else None
    r["invoke_matches"] = out.count("matches TFLM")
    if r["pass"] and plugin:
        i1, i2 = instructions(machine, elf, plugin, 1), instructions(machine, elf, plugin, 2)
        i3, i4 = instructions(machine, elf, plugin, 3), instructions(machine, elf, plugin, 4)
        r["insns"], r["insns2"] = i2 - i1, i4 - i3
    r["sections"] = sizes(elf)
    r["origin"] = code_by_origin(elf)
    return r


# ---------------------------------------------------------------------------------------
# Per-operator breakdown (see the module docstring)

LINES_CRATE = TARGET_DIR / "bench" / "lines-crate"
# The line of examples/firmware/build.rs that the copy replaces.
INCLUDE_MODEL_LINE = '''writeln!(
        rs,
        "kiln::include_model!({}, ram_budget = {});",
        lit(&path),
        ram - 4096
    )
    .unwrap();'''
# `lines.rs` as long a name as the macro's `model.rs`, so that panic locations in generated
# code (if any) are strings of the same length and the two flash images can be identical.
LINES_INCLUDE = ('let generated = kiln_build::Model::new(&path)\n'
                 '        .ram_budget(ram - 4096)\n'
                 '        .compile("lines")\n'
                 '        .unwrap();\n'
                 '    writeln!(rs, "include!({});", lit(&generated)).unwrap();')
GENERATED = "/out/lines.rs"
OP_COMMENT = re.compile(r"^\s*/// op (\d+): (\w+)")

COND = "(?:eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)?"
BRANCH = re.compile(rf"^(?:b|bl|blx|bx){COND}(?:\.w|\.n)?$"
                    r"|^(?:cbz|cbnz|tbb|tbh|udf|bkpt|svc)(?:\.w)?$")
CALL = re.compile(rf"^(?:bl|blx){COND}$")


def lines_crate():
    """Writes TARGET_DIR/bench/lines-crate: examples/firmware's sources, memory maps and lock
    file, its manifest with absolute paths and kiln-build as a build dependency, and its
    build.rs with the `include_model!` line replaced by `Model::compile` + `include!`. It
    sits under examples/firmware, so the same .cargo/config.toml (rustflags) applies."""
    if LINES_CRATE.exists():
        shutil.rmtree(LINES_CRATE)
    LINES_CRATE.mkdir(parents=True)
    shutil.copytree(FW / "src", LINES_CRATE / "src")
    shutil.copytree(FW / "memory", LINES_CRATE / "memory")
    shutil.copyfile(FW / "Cargo.lock", LINES_CRATE / "Cargo.lock")
    toml = re.sub(r'path\s*=\s*"([^"]+)"',
                  lambda m: f'path = "{(FW / m.group(1)).resolve()}"',
                  (FW / "Cargo.toml").read_text())
    dep = f'kiln-build = {{ path = "{REPO / "build-support"}" }}'
    if "[build-dependencies]" in toml:
        toml = toml.replace("[build-dependencies]", "[build-dependencies]\n" + dep, 1)
    else:
        toml += f"\n[build-dependencies]\n{dep}\n"
    (LINES_CRATE / "Cargo.toml").write_text(toml)
    rs = (FW / "build.rs").read_text()
    if INCLUDE_MODEL_LINE not in rs:
        raise RuntimeError("examples/firmware/build.rs no longer has the line "
                           f"`{INCLUDE_MODEL_LINE}`: update LINES_INCLUDE in this script")
    (LINES_CRATE / "build.rs").write_text(rs.replace(INCLUDE_MODEL_LINE, LINES_INCLUDE))


def build_lines(stem, target, opt):
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET_DIR), KILN_MODEL=stem,
               KILN_MODELS=str(MODELS), CARGO_PROFILE_RELEASE_OPT_LEVEL=opt)
    env.pop("KILN_BOARD", None)
    r = run(["cargo", "build", "--release", "--target", target], env=env, cwd=LINES_CRATE,
            check=False)
    if r.returncode != 0:
        raise RuntimeError("the line-info copy does not build:\n"
                           + "\n".join(r.stderr.strip().splitlines()[-8:]))
    out = TARGET_DIR / "bench" / f"{stem}.{target}.O{opt}.lines.elf"
    shutil.copyfile(TARGET_DIR / target / "release" / "kiln-firmware", out)
    return out


def flash_image(elf):
    """The loadable bytes (llvm-objcopy -O binary): code, constants, .data's initial values."""
    out = Path(str(elf) + ".bin")
    run([llvm_bin("llvm-objcopy"), "-O", "binary", str(elf), str(out)])
    return out.read_bytes()


def disassemble(elf):
    """[(address, mnemonic, operands)] of every instruction in .text, in address order."""
    out = run([llvm_bin("llvm-objdump"), "-d", "--no-show-raw-insn", str(elf)]).stdout
    res = []
    for line in out.splitlines():
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m and not m.group(2).startswith("."):  # .word/.short: literal pools
            res.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
    return res


def ends_block(mnemonic, operands):
    """Whether an instruction writes the PC (so QEMU ends its translation block there)."""
    if BRANCH.match(mnemonic):
        return True
    base = mnemonic.split(".")[0]
    if re.match(r"^(pop|ldm)", base) and re.search(r"\bpc\b", operands):
        return True
    return bool(re.match(r"^(ldr|mov|add|sub)", base) and re.match(r"pc\b", operands))


def pchist(machine, elf, plugin, stop, out, marks=()):
    """Runs to a stop point with libpchist.so: ({pc: count}, [(pc, total)] marks, total)."""
    arg = f"{plugin},out={out}" + (",mark=" + ":".join(f"{m:x}" for m in marks) if marks else "")
    total = instructions(machine, elf, arg, stop)
    hist = {}
    for line in Path(out).read_text().splitlines():
        pc, n = line.split()
        hist[int(pc, 16)] = int(n)
    events = []
    mp = Path(f"{out}.marks")
    if mp.exists():
        for line in mp.read_text().splitlines():
            _, pc, t = line.split()
            events.append((int(pc, 16), int(t)))
    return hist, events, total


def inline_chains(elf, pcs):
    """{pc: [file:line, ...]} innermost first, through inlined frames (addr2line -i)."""
    out = subprocess.run(["arm-none-eabi-addr2line", "-e", str(elf), "-i", "-a"],
                         input="\n".join(hex(p) for p in pcs), capture_output=True, text=True,
                         check=True).stdout
    chains, cur = {}, None
    for line in out.splitlines():
        if line.startswith("0x"):
            cur = int(line, 16)
            chains[cur] = []
        elif cur is not None:
            chains[cur].append(line.split(" (discriminator")[0].strip())
    return chains


def op_blocks(path):
    """[(first line, last line, op index, NAME)] of the generated invoke()'s operator blocks:
    the `/// op <k>: <NAME> (...)` comment and the `{ ... }` block after it (1-based lines)."""
    lines = Path(path).read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = OP_COMMENT.match(lines[i])
        if not m:
            i += 1
            continue
        j, depth, opened = i + 1, 0, False
        while j < len(lines):
            depth += lines[j].count("{") - lines[j].count("}")
            opened = opened or "{" in lines[j]
            if opened and depth <= 0:
                break
            j += 1
        blocks.append((i + 1, j + 1, int(m.group(1)), m.group(2)))
        i = j + 1
    return blocks


def breakdown(stem, target, machine, opt, measured, ops, plugin_dir):
    """Instructions of one invoke() per operator of the model (see the module docstring).
    `measured` is measure()'s result for the firmware built with include_model!."""
    elf = build_lines(stem, target, opt)
    same_image = flash_image(elf) == flash_image(measured["elf"])
    pch = plugin_dir / "libpchist.so"
    work = TARGET_DIR / "bench" / f"{stem}.O{opt}"
    h1, _, t1 = pchist(machine, elf, pch, 1, f"{work}.hist1")
    h2, _, t2 = pchist(machine, elf, pch, 2, f"{work}.hist2")
    diff = {pc: n - h1.get(pc, 0) for pc, n in h2.items() if n > h1.get(pc, 0)}
    chains = inline_chains(elf, sorted(diff))
    gen = next((loc.rsplit(":", 1)[0] for ch in chains.values() for loc in ch
                if loc.rsplit(":", 1)[0].endswith(GENERATED)), None)
    if gen is None:
        raise RuntimeError(f"no executed instruction has a line in {GENERATED}")
    blocks = op_blocks(gen)
    if not blocks:
        raise RuntimeError(f"{gen}: no `/// op <k>: <NAME>` comments (OP_COMMENT)")
    for _, _, k, name in blocks:
        if k >= len(ops) or ops[k]["name"] != name:
            raise RuntimeError(f"{GENERATED}: op {k} is {name}, the .tflite says "
                               f"{ops[k]['name'] if k < len(ops) else 'nothing'}")
    starts = [b[0] for b in blocks]

    def owner(pc):
        """The operator a PC of invoke() belongs to, "glue" for invoke()'s own lines outside
        every operator block, None for a PC outside invoke()."""
        for loc in chains.get(pc, []):
            f, _, line = loc.rpartition(":")
            if f != gen:
                continue
            n = int(line) if line.isdigit() else 0
            b = bisect.bisect_right(starts, n) - 1
            return blocks[b][2] if b >= 0 and n <= blocks[b][1] else "glue"
        return None

    per_op = collections.Counter()
    for pc, n in diff.items():
        o = owner(pc)
        if o is not None:
            per_op[o] += n
    # Calls out of invoke(): the running totals at the call and at the first
    # block-ending instruction after its return give the callee's instructions exactly.
    code = disassemble(elf)
    at = {a: i for i, (a, _, _) in enumerate(code)}
    calls = {}
    for pc in diff:
        i = at.get(pc)
        o = owner(pc) if i is not None else None
        if o is None or not CALL.match(code[i][1]):
            continue
        j = i + 1
        while j < len(code) and not ends_block(code[j][1], code[j][2]):
            j += 1
        if j == len(code):
            raise RuntimeError(f"no branch after the call at {pc:#x}")
        calls[pc] = (o, code[j][0], j - i)  # owner, next block end, instructions after return
    marks = sorted(set(calls) | {c[1] for c in calls.values()})
    if len(marks) > 256:
        raise RuntimeError(f"{len(marks)} marks, the plugin takes 256")
    callees = 0
    if marks:
        _, events, _ = pchist(machine, elf, pch, 2, f"{work}.hist2m", marks)
        for e, (pc, total) in enumerate(events):
            if pc not in calls:
                continue
            o, end, after = calls[pc]
            if e + 1 >= len(events) or events[e + 1][0] != end:
                raise RuntimeError(f"call at {pc:#x}: the next mark is not {end:#x}")
            per_op[o] += events[e + 1][1] - total - after
            callees += events[e + 1][1] - total - after
    glue = per_op.pop("glue", 0)
    kinds = {k: {"layers": 0, "macs": 0, "insns": 0, "ops": collections.Counter()}
             for k in KINDS}
    emitted = {b[2] for b in blocks}
    for k, op in enumerate(ops):
        d = kinds[op["kind"]]
        d["layers"] += 1
        d["macs"] += op["macs"]
        d["insns"] += per_op.get(k, 0)
        d["ops"][op["name"] + ("" if k in emitted else " (no code)")] += 1
    total = measured.get("insns") or (t2 - t1)
    return {"per_op": dict(per_op), "kinds": kinds, "glue": glue, "callees": callees,
            "calls": len(calls), "total": total, "lines_total": t2 - t1,
            "residue": total - sum(per_op.values()), "same_image": same_image,
            "emitted": emitted}


def print_breakdown(stem, opt, bd, ops):
    odd = not 0 <= bd["residue"] < 1000 or bd["lines_total"] != bd["total"]
    print(f"  per operator ({stem} O{opt}; {bd['calls']} out-of-line calls, "
          f"{bd['callees']} insns in callees, invoke() glue {bd['glue']}, "
          f"unattributed {bd['residue']}{' CHECK' if odd else ''}, line-info copy "
          f"{bd['lines_total']} insns, flash image identical: {bd['same_image']}):",
          flush=True)
    for k, op in enumerate(ops):
        n = bd["per_op"].get(k, 0)
        per = f"{n / op['macs']:.2f}/MAC" if op["macs"] and n else ""
        code = "" if k in bd["emitted"] else " (no code)"
        print(f"    op {k:>3} {op['name']:<20} {op['kind']:<14} macs {op['macs']:>9} "
              f"insns {n:>10} {per}{code}", flush=True)


# ---------------------------------------------------------------------------------------
# TFLM numbers


def tflm_notes(path=TFLM_NOTES):
    """{variant: {short model name: {column: value}}} from the notes' markdown tables."""
    if not path.exists():
        return {}
    res, variant, header = {}, None, None
    for line in path.read_text().splitlines():
        m = re.match(r"### variant (\S+)", line)
        if m:
            variant, header = m.group(1), None
            res[variant] = {}
            continue
        if variant and line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not set(cells[0]) <= set("-:"):
                res[variant][cells[0]] = dict(zip(header, cells))
        elif variant and header and not line.strip():
            variant = None
    return res


def tflm_col(notes, variant, stem, col):
    row = notes.get(variant, {}).get(TFLM_SHORT.get(stem, ""), {})
    v = row.get(col)
    return int(v) if v and v.isdigit() else None


# ---------------------------------------------------------------------------------------
# Report


def fmt(v, nd=None):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd or 2}f}"
    return str(v)


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def code_bytes(s):
    """Flash without weights and test data: vector table + .text + .rodata + .data."""
    return sum(s.get(k, 0) for k in (".vector_table", ".text", ".rodata", ".data"))


def render(results, stems, opts, mac, notes, arena_json, meta, breakdowns=None,
           ops_info=None, per_op=False):
    L = []
    w = L.append
    w("## Firmware on Cortex-M4 (QEMU mps2-an386)")
    w("")
    w(f"Written by `tools/firmware_bench.py` ({meta}). Each model is compiled by "
      "`include_model!` into `examples/firmware` (cortex-m-rt, `thumbv7em-none-eabihf`, "
      "`-C target-cpu=cortex-m4`, fat LTO, one codegen unit, `panic = \"abort\"`), which "
      "writes TFLM's golden input s1, calls `invoke()`, does it again, and exits 0 only if "
      "both outputs equal TFLM's bytes. All models below pass unless marked.")
    w("")
    w("- **insns/invoke**: instructions executed by one `invoke()` (QEMU TCG plugin "
      "`../shared/tools/qemu-insn-count`, every executed instruction). The firmware exits at "
      "a stop point given on the semihosting command line; execution is deterministic, so "
      "count(exit just after the first `invoke()`) - count(exit just before it) is one "
      "`invoke()` plus ~5 instructions of call and stop check. The second `invoke()` gives "
      "the same count for every model. Instructions are not cycles.")
    w("- **MACs**: CONV_2D out x kh x kw x in_ch + DEPTHWISE_CONV_2D out x kh x kw + "
      "FULLY_CONNECTED out x in, plus the gate matrix products of the LSTMs and SVDF's feature and "
      "time products, from the .tflite.")
    w("- **flash**: `llvm-size -A`. *code* = vector table (64 B + 32 interrupt entries) + "
      "`.text` + `.rodata` + `.data`, i.e. everything but the model's constants and the test "
      "vectors (as TFLM's \"code bytes w/o weights\", which also include its harness). "
      "*Kiln fns* = the functions of Kiln's crates in `.text` (`llvm-nm` sizes): `invoke()` "
      "with the operator calls (LTO inlines it into the harness's one-line wrapper), the "
      "kernels, the runtime (and bytemuck's cast-error path); the model's small accessors that "
      "LTO inlines into the harness are not in it. *weights* = the `.kiln_weights` output "
      "section, where `memory/sections.x` gathers the generated `BUFFER_*` statics (weights, "
      "biases) and the per-channel and lookup `OP<k>_MULTIPLIER/_SHIFT/_BIAS/_TABLE/_LUT` tables; the operator "
      "parameter structs stay in `.rodata`. LLVM may fold a small weight buffer into the "
      "code (at opt-level 3: a few 16-64 B bias/weight buffers of the small models), so the "
      "weights column can differ by tens of bytes between the two tables.")
    pd = results.get(("tflm_person_detect_int8", opts[0]))
    if pd and "sections" in pd:
        s, og = pd["sections"], pd["origin"]
        w(f"  Where person_detect's code goes (opt-level {opts[0]}): Kiln fns {og['kiln']} B, "
          f"Rust core and compiler-builtins {og['core']} B (memcpy/memset, and the panic "
          "and formatting code that bounds checks and `expect` pull in even with a panic "
          "handler that never formats), harness and startup "
          f"{og['harness']} B (semihosting output, stop points, stack painting, comparison, "
          f"cortex-m-rt), `.rodata` {s.get('.rodata', 0)} B (operator parameter structs, "
          f"panic locations, formatting tables), vector table {s.get('.vector_table', 0)} B.")
    w("- **RAM**: `.bss` + `.data` = the arena (`ARENA_BYTES`), the persistent state "
      "(`PERSISTENT_BYTES`) and a few bytes of the harness. *stack invoke* = high-water mark "
      "of one `invoke()` measured from the stack pointer at the call (the stack is painted "
      "with a pattern before and scanned after); *stack total* = from the top of RAM, "
      "including `main`'s frame (comparable with TFLM's stack peak).")
    w("")
    for opt in opts:
        label = {"3": "opt-level 3 (speed)", "s": "opt-level \"s\" (size)"}.get(opt, opt)
        w(f"### Kiln, {label}")
        w("")
        w("| model | MACs | match s1 | insns/invoke | insns/MAC | code B | of which Kiln fns B "
          "| weights B | flash total B | .bss+.data B | stack invoke B | stack total B "
          "| RAM total B |")
        w("|---|--:|:-:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        for stem in stems:
            r = results.get((stem, opt))
            if r is None:
                continue
            if "error" in r:
                w(f"| {stem} | {mac.get(stem, '-')} | build failed | | | | | | | | | | |")
                continue
            s = r["sections"]
            code = code_bytes(s)
            wt = s.get(".kiln_weights", 0)
            ram = s.get(".bss", 0) + s.get(".data", 0)
            ins = r.get("insns")
            match = "yes (x2)" if r["pass"] else "**NO**"
            w(f"| {stem} | {mac[stem]} | {match} | {fmt(ins)} | "
              f"{fmt(ins / mac[stem] if ins and mac[stem] else None)} | {code} | "
              f"{r['origin']['kiln']} | {wt} | {code + wt} | {ram} | "
              f"{fmt(r['stack_invoke_bytes'])} | {fmt(r['stack_total_bytes'])} | "
              f"{ram + (r['stack_total_bytes'] or 0)} |")
        w("")
    o = opts[0]
    lv = [f"O{op}" for op in opts]
    w("### Side by side with TFLM: instructions per `invoke()` (Cortex-M4, same QEMU)")
    w("")
    w("TFLM numbers from `../shared/notes/tflm-cortexm.md` (TFLM 90b983c, GCC 12.2, kernels "
      "-O2, core -Os; the six models it measured): `cmsis8` = CMSIS-NN kernels with the int8-only "
      "registrations (TFLM + CMSIS-NN as deployed, its smallest optimized build), `ref` = "
      "reference kernels. *vs cmsis8* / *vs ref* = Kiln's instructions / TFLM's, per "
      "opt-level: below 1 Kiln executes fewer (issue 12's target: at most "
      f"{TARGET_VS_CMSIS8}x cmsis8 on each model). Instructions per MAC for each.")
    w("")
    w("| model | MACs | " + " | ".join(f"Kiln {x} insns" for x in lv)
      + " | TFLM cmsis8 insns | TFLM ref insns | "
      + " | ".join(f"{x} vs cmsis8" for x in lv) + " | "
      + " | ".join(f"{x} vs ref" for x in lv) + " | "
      + " | ".join(f"insns/MAC Kiln {x}" for x in lv) + " | insns/MAC cmsis8 | insns/MAC ref |")
    w("|---|--:|" + "--:|" * (4 * len(lv) + 4))

    def per_mac(v, stem):
        return fmt(v / mac[stem]) if v and mac.get(stem) else "-"

    for stem in stems:
        tc = tflm_col(notes, "cmsis8", stem, "insns/Invoke")
        tr = tflm_col(notes, "ref", stem, "insns/Invoke")
        if not (tc or tr):
            continue
        ki = [(results.get((stem, op)) or {}).get("insns") for op in opts]
        w(f"| {stem} | {mac[stem]} | " + " | ".join(fmt(k) for k in ki)
          + f" | {fmt(tc)} | {fmt(tr)} | " + " | ".join(ratio(k, tc) for k in ki) + " | "
          + " | ".join(ratio(k, tr) for k in ki) + " | "
          + " | ".join(per_mac(k, stem) for k in ki)
          + f" | {per_mac(tc, stem)} | {per_mac(tr, stem)} |")
    w("")
    w("### Side by side with TFLM: memory")
    w("")
    w("*TFLM min arena* = smallest arena its interpreter runs with (Cortex-M4 build; x86-64 "
      "from `tools/data/tflm_arena.json` in parentheses); Kiln needs arena + persistent. "
      "*code* as above (TFLM's \"code bytes w/o weights\").")
    w("")
    w(f"| model | Kiln code B ({' / '.join(lv)}) | TFLM ref code B | TFLM cmsis8 code B "
      f"| Kiln arena+persistent B | TFLM min arena B ref / cmsis8 (x86-64) "
      f"| Kiln stack total B ({' / '.join(lv)}) | TFLM stack peak B ref / cmsis8 |")
    w("|---|--:|--:|--:|--:|--:|--:|--:|")
    for stem in stems:
        rs = [results.get((stem, op)) for op in opts]
        ok = [r for r in rs if r and "error" not in r]
        if not ok:
            continue
        r = ok[0]
        codes = " / ".join(str(code_bytes(x["sections"])) if x and "sections" in x else "-"
                           for x in rs)
        stacks = " / ".join(fmt(x["stack_total_bytes"]) if x and "error" not in x else "-"
                            for x in rs)
        col = "code bytes w/o weights (text+rodata+data)"
        ar = tflm_col(notes, "ref", stem, "min arena")
        ac = tflm_col(notes, "cmsis8", stem, "min arena")
        x86 = arena_json.get(stem, {}).get("min_arena")
        arena_m4 = f"{fmt(ar)} / {fmt(ac)}" if ar or ac else "-"
        sr = tflm_col(notes, "ref", stem, "stack peak")
        sc = tflm_col(notes, "cmsis8", stem, "stack peak")
        w(f"| {stem} | {codes} | {fmt(tflm_col(notes, 'ref', stem, col))} "
          f"| {fmt(tflm_col(notes, 'cmsis8', stem, col))} "
          f"| {r['arena_bytes'] + r['persistent_bytes']} | {arena_m4} ({fmt(x86)}) "
          f"| {stacks} | {fmt(sr) if sr else '-'} / {fmt(sc) if sc else '-'} |")
    w("")
    L += render_breakdown(results, breakdowns or {}, opts, ops_info or {}, notes, per_op)
    w("### Targets")
    w("")
    ok = [(st, r) for (st, op), r in results.items() if "error" not in r and op == o]
    if ok:
        worst = max(ok, key=lambda x: x[1]["stack_total_bytes"] or 0)
        worst_i = max(ok, key=lambda x: x[1]["stack_invoke_bytes"] or 0)
        met = worst[1]["stack_total_bytes"] < 2048
        w(f"- **Stack under 2 KB**: {'met' if met else 'NOT met'}. Largest stack of "
          f"`invoke()`: {worst_i[1]['stack_invoke_bytes']} B ({worst_i[0]}); largest "
          f"including `main`: {worst[1]['stack_total_bytes']} B ({worst[0]}).")
        lines = []
        for st, r in sorted(ok, key=lambda x: x[0]):
            need = r["arena_bytes"] + r["persistent_bytes"] + r["stack_invoke_bytes"]
            tf = tflm_col(notes, "cmsis8", st, "min arena")
            tfs = tflm_col(notes, "cmsis8", st, "stack peak")
            extra = ""
            if tf and tfs:
                extra = f" vs TFLM cmsis8 {tf} + {tfs} = {tf + tfs}"
            lines.append(f"{st} {need}{extra}")
        w("- **RAM = arena + persistent + stack (invoke)**, bytes: " + "; ".join(lines) + ".")
    tflm_models = [st for st in stems if tflm_col(notes, "cmsis8", st, "insns/Invoke")]
    parts = []
    for opt in opts:
        rs = [(st, (results.get((st, opt)) or {}).get("insns")) for st in tflm_models]
        rs = [(st, ki / tflm_col(notes, "cmsis8", st, "insns/Invoke")) for st, ki in rs if ki]
        if not rs:
            continue
        lo, hi = min(rs, key=lambda x: x[1]), max(rs, key=lambda x: x[1])
        met = len(rs) == len(TFLM_SHORT) and hi[1] <= TARGET_VS_CMSIS8
        parts.append(f"opt-level {opt}: {'met' if met else 'NOT met'}, Kiln / cmsis8 from "
                     f"{lo[1]:.2f}x ({TFLM_SHORT[lo[0]]}) to {hi[1]:.2f}x ({TFLM_SHORT[hi[0]]})"
                     + ("" if len(rs) == len(TFLM_SHORT)
                        else f" ({len(rs)} of {len(TFLM_SHORT)} models measured)"))
    if parts:
        w(f"- **At most {TARGET_VS_CMSIS8}x the instructions of TFLM + CMSIS-NN (cmsis8) on "
          "each of its six models**: " + "; ".join(parts) + ".")
    pd = "tflm_person_detect_int8"
    parts = []
    for opt in opts:
        r = results.get((pd, opt))
        if r and "sections" in r:
            c = code_bytes(r["sections"])
            k = r["origin"]["kiln"]
            parts.append(f"opt-level {opt}: {c} B in all ({c - 16384:+d} B vs 16 KB), of which "
                         f"Kiln's functions {k} B")
    if parts:
        w("- **Code without weights under 16 KB for the vision model (person_detect)**: "
          + "; ".join(parts) + ".")
    w("")
    excl = "; ".join(f"{k} ({v})" for k, v in EXCLUDED.items())
    w(f"Not built: {excl}.")
    return "\n".join(L)


def render_breakdown(results, breakdowns, opts, ops_info, notes, per_op):
    """The per-operator-kind section for the BREAKDOWN models built (see the docstring)."""
    models = [st for st in BREAKDOWN if any((st, op) in breakdowns for op in opts)]
    if not models:
        return []
    lv = [f"O{op}" for op in opts]
    L = []
    w = L.append
    w("### Where the instructions go: per operator kind (Cortex-M4)")
    w("")
    w("Every instruction of one `invoke()` is charged to the operator whose generated "
      "statement it comes from. `include_model!` gives all generated code the line of the "
      "macro call, so the benchmark builds each firmware once more from a copy of "
      "`examples/firmware` whose build.rs compiles the model with kiln-build's build.rs front "
      "end instead (`Model::compile`: the same tokens, formatted one statement per line); the "
      "copy's flash image is compared byte for byte with the measured firmware's (*same "
      "image*). The QEMU plugin's per-PC histogram (`libpchist.so`) of one `invoke()` and each "
      "PC's inline chain in the debug info (`arm-none-eabi-addr2line -i`, through LTO's "
      "inlining) give, for every instruction of `invoke()` itself and of the kernels inlined "
      "into it, the generated line and so the operator block (`/// op k: NAME`) it belongs "
      "to. What LLVM left out of line (kernels called from several operators, memcpy) is "
      "charged to the operator that calls it: the plugin logs the running count at each call "
      "instruction in `invoke()` and at the first branch after its return, where the counts "
      "are exact (both end a translation block). No kernel or function name is used, so "
      "renamed kernels and any inlining need no change. Kinds from the .tflite: *1x1 conv* = "
      "CONV_2D with a 1x1 filter, *windowed conv* = any other CONV_2D, *depthwise* = "
      "DEPTHWISE_CONV_2D, *FC* = FULLY_CONNECTED, *other* = the rest (views such as RESHAPE "
      "emit no code). *unattributed* = total - the kinds' sum: `invoke()`'s own instructions "
      "outside every operator block (arena set-up) and the harness's call and stop check. "
      "*share* = of the `invoke()` total; insns/MAC = the kind's instructions / its MACs.")
    for stem in models:
        ops = ops_info[stem]
        bds = [breakdowns.get((stem, op)) for op in opts]
        rs = [results.get((stem, op)) or {} for op in opts]
        w("")
        code = " / ".join(str(code_bytes(r["sections"])) if "sections" in r else "-" for r in rs)
        kiln = " / ".join(str(r["origin"]["kiln"]) if "origin" in r else "-" for r in rs)
        ins = " / ".join(fmt(r.get("insns")) for r in rs)
        tc = tflm_col(notes, "cmsis8", stem, "insns/Invoke")
        vs = " / ".join(ratio(r.get("insns"), tc) + ("x" if r.get("insns") else "")
                        for r in rs)
        same = " / ".join("-" if not b or "error" in b else ("yes" if b["same_image"] else
                          "**NO**") for b in bds)
        w(f"**{stem}** ({' / '.join(lv)}): code {code} B, of which Kiln fns {kiln} B; "
          f"`invoke()` {ins} instructions" + (f", {vs} TFLM cmsis8's {tc}" if tc else "")
          + f"; same image: {same}.")
        for lvl, b in zip(lv, bds):
            if b and "error" in b:
                w(f"{lvl}: breakdown failed: {b['error']}")
        good = [b if b and "error" not in b else None for b in bds]
        ref = next((b for b in good if b), None)
        if ref is None:
            continue
        w("")
        w("| kind | layers | MACs | " + " | ".join(f"{x} insns | {x} insns/MAC | {x} share"
                                                   for x in lv) + " |")
        w("|---|--:|--:|" + "--:|--:|--:|" * len(lv))

        def cells(n, m, total):
            return (f"{n} | {fmt(n / m) if m and n else '-'} | "
                    f"{100 * n / total:.1f} %" if total else f"{n} | - | -")

        for kind in KINDS:
            d = ref["kinds"][kind]
            if not d["layers"]:
                continue
            label = kind
            if kind == "other":
                label += ": " + ", ".join(f"{n} x{c}" if c > 1 else n
                                          for n, c in sorted(d["ops"].items()))
            row = [cells(b["kinds"][kind]["insns"], d["macs"], b["total"]) if b else "- | - | -"
                   for b in good]
            w(f"| {label} | {d['layers']} | {d['macs']} | " + " | ".join(row) + " |")
        row = [f"{b['residue']} | | {100 * b['residue'] / b['total']:.3f} %" if b else "- | | -"
               for b in good]
        w("| unattributed | | | " + " | ".join(row) + " |")
        tm = sum(o["macs"] for o in ops)
        row = [cells(b["total"], tm, b["total"]) if b else "- | - | -" for b in good]
        w(f"| **`invoke()`** | {len(ops)} | {tm} | " + " | ".join(row) + " |")
        if per_op:
            w("")
            w("| op | operator | kind | MACs | " + " | ".join(f"{x} insns | {x} insns/MAC"
                                                       for x in lv) + " |")
            w("|--:|---|---|--:|" + "--:|--:|" * len(lv))
            for k, op in enumerate(ops):
                row = []
                for b in good:
                    n = b["per_op"].get(k, 0) if b else None
                    row.append(f"{fmt(n)} | {fmt(n / op['macs']) if n and op['macs'] else '-'}")
                w(f"| {k} | {op['name']} | {op['kind']} | {op['macs']} | " + " | ".join(row)
                  + " |")
    w("")
    return L


def render_cores(stems, opt, plugin, mac=None):
    """Every model that fits, on the Cortex-M0 and Cortex-M55 boards; on the M55 also the
    ratio to TFLM + CMSIS-NN's Helium kernels (cmsis8 of the M55 note)."""
    mac = mac or {}
    notes55 = tflm_notes(TFLM_NOTES_M55)
    L = [f"### Other cores (opt-level {opt})", "",
         "The same firmware for `thumbv6m-none-eabi` (`-C target-cpu=cortex-m0`, QEMU "
         "`microbit`: 256 KB flash, 16 KB RAM) and `thumbv8m.main-none-eabihf` "
         "(`-C target-cpu=cortex-m55`: Kiln's Helium (MVE) microkernels, `kiln_arch = \"mve\"`; "
         "QEMU `mps3-an547`, 512 KB ITCM as flash, 512 KB DTCM as RAM). Models that do "
         "not fit a board's memory fail to link and are listed below the table. TFLM cmsis8 = "
         "TFLM + CMSIS-NN with its Helium kernels on the same emulated M55 "
         "(`../shared/notes/tflm-cortexm55.md`, variant cmsis8); Kiln / cmsis8 < 1 means Kiln "
         "executes fewer instructions.", "",
         "| core (board) | model | match s1 | insns/invoke | insns/MAC | TFLM cmsis8 insns "
         "| Kiln / cmsis8 | code B | weights B | .bss+.data B | stack invoke B |",
         "|---|---|:-:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    target_rows = []
    no_fit = []
    for target, machine, core, _ram in OTHER_CORES:
        for stem in stems:
            r = measure(stem, target, machine, opt, plugin)
            if "error" in r:
                err = "\n".join(r["error"])
                if re.search(r"will not fit|overflowed|does not fit|over the RAM budget", err):
                    no_fit.append(f"{stem} on {core}")
                    continue
                L.append(f"| {core} ({machine}) | {stem} | build failed | | | | | | | | |")
                print(f"{stem} {core}: BUILD FAILED\n  " + "\n  ".join(r["error"]), flush=True)
                continue
            s = r["sections"]
            print(f"{stem} {core}: {'pass' if r['pass'] else 'FAIL'} insns={r.get('insns')}",
                  flush=True)
            insns = r.get("insns")
            per_mac = insns / mac[stem] if insns and mac.get(stem) else None
            tflm = tflm_col(notes55, "cmsis8", stem, "insns/Invoke") if core == "Cortex-M55" else None
            rel = insns / tflm if insns and tflm else None
            if rel is not None:
                target_rows.append((stem, rel))
            L.append(f"| {core} ({machine}) | {stem} | {'yes (x2)' if r['pass'] else '**NO**'} "
                     f"| {fmt(insns)} | {fmt(per_mac)} | {fmt(tflm)} "
                     f"| {fmt(rel) + 'x' if rel is not None else '-'} | {code_bytes(s)} "
                     f"| {s.get('.kiln_weights', 0)} "
                     f"| {s.get('.bss', 0) + s.get('.data', 0)} | {fmt(r['stack_invoke_bytes'])} |")
            if not r["pass"]:
                CORE_FAILURES.append((stem, core))
    if no_fit:
        L += ["", "Do not fit (over the board's RAM: a compile error from the RAM budget "
              "`examples/firmware` gives, or a link error): " + ", ".join(no_fit) + "."]
    if target_rows:
        met = [st for st, r in target_rows if r <= TARGET_VS_CMSIS8]
        L += ["", f"**Cortex-M55: at most {TARGET_VS_CMSIS8}x the instructions of TFLM + CMSIS-NN (cmsis8) "
              f"on each of the M55 note's {len(target_rows)} models**: "
              f"{'met' if len(met) == len(target_rows) else 'NOT met'} (within it on "
              f"{len(met)} of {len(target_rows)}: " + ", ".join(f"{TFLM_SHORT.get(st, st)} {r:.2f}x"
                                                  for st, r in target_rows) + ")."]
    return "\n".join(L)


CORE_FAILURES = []


def write_section(text):
    doc = BENCH.read_text() if BENCH.exists() else "# Benchmarks\n"
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in doc and END in doc:
        a = doc.index(BEGIN)
        b = doc.index(END) + len(END)
        doc = doc[:a] + block + doc[b:]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    BENCH.write_text(doc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models")
    ap.add_argument("--opt", default="3,s")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--no-cores", action="store_true")
    ap.add_argument("--no-breakdown", action="store_true")
    ap.add_argument("--per-op", action="store_true")
    args = ap.parse_args()
    ensure_venv()

    for tool in ["qemu-system-arm", "cargo", "gcc"]:
        if not shutil.which(tool):
            sys.exit(f"needs {tool}")
    plugin = TARGET_DIR / "qemu-insn-count" / "libfncount.so"
    if not plugin.exists() or not (plugin.parent / "libpchist.so").exists():
        run(["bash", str(PLUGIN_SRC / "build.sh"), str(plugin.parent)])

    if args.models:
        stems = args.models.split(",")
    else:
        stems = sorted(p.stem for p in MODELS.glob("*.tflite") if p.stem not in EXCLUDED)
    opts = args.opt.split(",")
    ops_info = {s: operators(MODELS / f"{s}.tflite") for s in stems}
    mac = {s: sum(op["macs"] for op in ops_info[s]) for s in stems}
    split = [] if args.no_breakdown else [s for s in BREAKDOWN if s in stems]
    results, breakdowns = {}, {}
    if split:
        if not shutil.which("arm-none-eabi-addr2line"):
            sys.exit("the per-operator breakdown needs arm-none-eabi-addr2line (apt-get install "
                     "binutils-arm-none-eabi); --no-breakdown skips it")
        try:
            lines_crate()
        except RuntimeError as e:
            print(f"BREAKDOWN FAILED: {e}", flush=True)
            breakdowns.update({(st, op): {"error": str(e)} for st in split for op in opts})
            split = []
    notes = tflm_notes()
    arena_path = REPO / "tools" / "data" / "tflm_arena.json"
    arena_json = json.loads(arena_path.read_text()) if arena_path.exists() else {}

    for opt in opts:  # one opt-level at a time: the dependencies are rebuilt once per level
        for stem in stems:
            r = measure(stem, *M4, opt, plugin)
            results[(stem, opt)] = r
            if "error" in r:
                print(f"{stem} O{opt}: BUILD FAILED\n  " + "\n  ".join(r["error"]), flush=True)
            else:
                print(f"{stem} O{opt}: {'pass' if r['pass'] else 'FAIL'} "
                      f"insns={r.get('insns')} (2nd {r.get('insns2')}) "
                      f"code={code_bytes(r['sections'])} kiln={r['origin']['kiln']} "
                      f"weights={r['sections'].get('.kiln_weights')} "
                      f"stack={r['stack_invoke_bytes']}/{r['stack_total_bytes']}", flush=True)
                if not r["pass"]:
                    print("  " + r["log"].replace("\n", "\n  "), flush=True)
            if stem in split and r.get("insns"):
                try:
                    bd = breakdown(stem, *M4, opt, r, ops_info[stem], plugin.parent)
                    print_breakdown(stem, opt, bd, ops_info[stem])
                except (RuntimeError, SystemExit, subprocess.CalledProcessError) as e:
                    bd = {"error": " ".join(str(e).split())[:400]}
                    print(f"{stem} O{opt}: BREAKDOWN FAILED: {e}", flush=True)
                breakdowns[(stem, opt)] = bd

    rustc = run(["rustc", "--version"]).stdout.split("(")[0].strip()
    qv = run(["qemu-system-arm", "--version"]).stdout.splitlines()[0]
    qv = re.search(r"version (\S+)", qv).group(1)
    meta = f"{datetime.date.today()}, {rustc}, QEMU {qv}"
    text = render(results, stems, opts, mac, notes, arena_json, meta, breakdowns, ops_info,
                  args.per_op)

    if not args.no_cores:
        text += "\n\n" + render_cores(stems, opts[0], plugin, mac)

    if args.no_write:
        print(text)
    else:
        write_section(text)
        print(f"wrote {BENCH.relative_to(REPO)} ({BEGIN} ... {END})")
    bad = [k for k, r in results.items() if "error" in r or not r["pass"]] + CORE_FAILURES
    bad += [("breakdown",) + k for k, b in breakdowns.items()
            if "error" in b or b["lines_total"] != b["total"]]
    if bad:
        print(f"FAILED: {bad}")
        sys.exit(1)


if __name__ == "__main__":
    main()
