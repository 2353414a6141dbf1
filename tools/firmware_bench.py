#!/usr/bin/env python3
"""Kiln on a Cortex-M4 (QEMU mps2-an386): sizes, RAM, stack and instructions per invoke()
of every model that runs on it (the public models of ../shared/models and the vendors' models
of ../shared/models/realworld, and the streaming model of tests/streaming), side by side
with TFLM, and where the instructions of every
model go by operator kind, written into BENCHMARKS.md between `<!-- kiln:firmware -->` and
`<!-- /kiln:firmware -->` (other sections untouched), and the per-model results into
tools/data/firmware.json (read by other benchmarks for their code column).

Run from the repository root:  .venv/bin/python tools/firmware_bench.py
  --models a,b     only these model stems (default: every ../shared/models/*.tflite,
                   ../shared/models/realworld/*.tflite and tests/streaming/*.tflite)
  --opt s,3        opt-levels to build (default both: s = size, 3 = speed, `cargo build
                   --release`'s default)
  --no-write       print the section instead of writing BENCHMARKS.md and firmware.json
  --no-cores       skip the Cortex-M0 (microbit) and Cortex-M55 (mps3-an547) table
  --no-breakdown   skip the per-operator-kind tables
  --no-reference   skip the reference-kernel build of each model (the per-kind reference
                   column)
  --per-op         also put the per-operator tables of the breakdown into the section
                   (they are always printed while running)

Per model and opt-level it builds examples/firmware (its own cargo workspace and target dir,
`KILN_MODEL=<stem or path>`, `KILN_GOLDEN=tests/realworld/<stem>` for a real-world model,
release profile with `CARGO_PROFILE_RELEASE_OPT_LEVEL`), then runs it under QEMU: once to
check the output against TFLM's golden s1 (both invokes) and read the stack high-water mark,
and four times with the instruction-count plugin of ../shared/tools/qemu-insn-count, stopping
right before and right after each invoke() (semihosting argument `stop=1`..`stop=4`): the
differences are the invokes. A model that does not build is listed as not built, with the
end of its error. Sizes from `llvm-size -A` and `llvm-nm` (rustup component llvm-tools).
MACs from the .tflite (Python venv with the pinned tflite-micro package, for its flatbuffer
schema). Ratios to TFLM (Kiln / TFLM instructions, < 1 = Kiln executes fewer) use the cmsis8
and ref columns of ../shared/notes/tflm-cortexm.md and the cmsis and ref columns of
../shared/notes/tflm-cortexm-realworld.md (the real-world models; its 3rd invoke).

Per-operator breakdown (every model, each opt-level): `include_model!` gives every generated
statement the line of the macro call, so the firmware is built a second time from a copy of
examples/firmware (TARGET_DIR/bench/lines-crate) whose build.rs compiles the model with
kiln-build's build.rs front end instead (`Model::compile`: the same tokens, formatted into
$OUT_DIR/lines.rs, one line per statement); its flash image is checked to be byte for byte
the measured firmware's. One run with the plugin's per-PC histogram (`libpchist.so`) gives
every instruction executed in invoke(); `arm-none-eabi-addr2line -i` follows each PC's inline
chain (through LTO inlining) to the generated file's line, i.e. to the operator block
(`/// op <k>: <NAME>`) it belongs to. Out-of-line callees (kernels LLVM did not inline,
memcpy) are charged to the operator of their call site: the plugin logs the running total at
each call instruction in invoke() and at the first branch after its return (both end a
translation block, so the totals there are exact). Operators map to kinds by the .tflite
(the TFLite operator, CONV_2D split into 1x1 and windowed); per kind, instructions per
element: per MAC for CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED (and the LSTM and SVDF
products), per output element for every other operator.

Reference column: a third copy (TARGET_DIR/bench/lines-ref-crate) compiles the model with
`Model::reference_kernels(true)`: every operator on Kiln's reference kernel (the loops of
TFLM's reference kernels, no folded bias, no DSP instructions), built at opt-level 3 and
broken down the same way: the stand-in for TFLM's reference kernels, which cannot be built
here (see the section's text for what that comparison is and is not).

Needs: qemu-system-arm, rustup targets thumbv7em-none-eabihf (and thumbv6m-none-eabi,
thumbv8m.main-none-eabihf for the other cores), llvm-tools, gcc (the plugin), the venv
(`tools/setup_venv.sh`), binutils-arm-none-eabi (addr2line, for the breakdown). About 40
minutes on the 2-core machine for 23 models with every part (about 8 without the breakdown
and the reference builds).
"""

import argparse
import bisect
import collections
import datetime
import functools
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
REALWORLD = MODELS / "realworld"
REALWORLD_GOLDEN = REPO / "tests" / "realworld"
# A streaming keyword-spotting step (STRIDED_SLICE + CONCATENATION rings), tools/gen_streaming_model.py.
STREAMING = REPO / "tests" / "streaming"
TILING = REPO / "tests" / "models" / "tiling"
TFLM_NOTES = SHARED / "notes" / "tflm-cortexm.md"
# The same measurements of TFLM on three real-world models (variants cmsis and ref).
TFLM_NOTES_RW = SHARED / "notes" / "tflm-cortexm-realworld.md"
# The same measurements of TFLM on the Cortex-M55 (Helium), for the M55 rows.
TFLM_NOTES_M55 = SHARED / "notes" / "tflm-cortexm55.md"
PLUGIN_SRC = SHARED / "tools" / "qemu-insn-count"
BENCH = REPO / "BENCHMARKS.md"
JSON_OUT = REPO / "tools" / "data" / "firmware.json"
BEGIN, END = "<!-- kiln:firmware -->", "<!-- /kiln:firmware -->"

M4 = ("thumbv7em-none-eabihf", "mps2-an386")
M55 = ("thumbv8m.main-none-eabihf", "mps3-an547")
M0 = ("thumbv6m-none-eabi", "microbit")
# The opt-level of the reference-kernel builds (closest to TFLM's -O2 kernels).
REF_OPT = "3"

# ../shared/notes/tflm-cortexm.md names the models it measured by short names.
TFLM_SHORT = {
    "tflm_hello_world_int8": "hello_world",
    "tflm_micro_speech_int8": "micro_speech",
    "mlperf_tiny_kws_dscnn_int8": "kws_dscnn",
    "mlperf_tiny_ic_resnet8_int8": "ic_resnet8",
    "tflm_person_detect_int8": "person_detect",
    "mlperf_tiny_vww_mobilenetv1_025_96_int8": "vww_mbnv1_025",
}

# Issue 28's targets: at most these times TFLM + CMSIS-NN's instructions (cmsis8 of the M4
# note, cmsis of the real-world note; cmsis8 of the M55 note on the M55).
TARGET_M4 = 0.60
TARGET_M55 = 0.55
# person_detect's code without weights at opt-level s.
CODE_TARGET = 16 * 1024
MAC_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "UNIDIRECTIONAL_SEQUENCE_LSTM",
           "SVDF"}


class Model:
    """A model to build: its stem, .tflite, golden directory (None: examples/firmware's
    default, `golden/<stem>/` beside the model), group ("public" or "realworld") and any
    build variables of examples/firmware to set (e.g. `KILN_RAM_BUDGET`, which
    tools/bench_tiling.py sets; the environment's own are ignored)."""

    def __init__(self, path, golden=None, group="public", build_vars=None):
        self.path, self.golden, self.group = Path(path), golden, group
        self.stem = self.path.stem
        self.build_vars = dict(build_vars or {})

    def env(self):
        e = {"KILN_MODEL": self.stem if self.group == "public" else str(self.path),
             "KILN_MODELS": str(MODELS)}
        if self.golden:
            e["KILN_GOLDEN"] = str(self.golden)
        return e


def all_models():
    res = [Model(p) for p in sorted(MODELS.glob("*.tflite"))]
    res += [Model(p, REALWORLD_GOLDEN / p.stem, "realworld")
            for p in sorted(REALWORLD.glob("*.tflite"))]
    # Kiln's own streaming model (tools/gen_streaming_model.py): its goldens beside it.
    res += [Model(p, STREAMING / "golden" / p.stem, "own")
            for p in sorted(STREAMING.glob("*.tflite"))]
    # Kiln's own tiling models (tools/gen_tiling_models.py): their goldens beside them.
    res += [Model(p, TILING / "golden" / p.stem, "own")
            for p in sorted(TILING.glob("*.tflite"))]
    return res


def ensure_venv():
    """Re-runs this script under the repository's venv if the schema module is missing."""
    try:
        import tflite_micro  # noqa: F401
    except ImportError:
        py = REPO / ".venv" / "bin" / "python"
        if not py.exists():
            py = REPO.parent / "main" / ".venv" / "bin" / "python"
        if py.exists() and Path(sys.executable).resolve() != py.resolve():
            os.execv(str(py), [str(py), *sys.argv])
        sys.exit("needs the venv with tflite-micro: tools/setup_venv.sh")


def run(cmd, env=None, cwd=None, check=True, timeout=None):
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit(f"failed ({r.returncode}): {' '.join(map(str, cmd))}")
    return r


@functools.cache
def llvm_bin(name):
    sysroot = run(["rustc", "--print", "sysroot"]).stdout.strip()
    host = re.search(r"host: (\S+)", run(["rustc", "-vV"]).stdout).group(1)
    p = Path(sysroot) / "lib" / "rustlib" / host / "bin" / name
    if not p.exists():
        run(["rustup", "component", "add", "llvm-tools"])
    return str(p)


# ---------------------------------------------------------------------------------------
# MACs and elements from the .tflite


def kind_of(name, f=None):
    """The kind of an operator: its TFLite name, CONV_2D split by its filter's window."""
    if name == "CONV_2D":
        return "CONV_2D 1x1" if f and f[1] == f[2] == 1 else "CONV_2D windowed"
    return name


def operators(path):
    """Per operator of the .tflite's first subgraph, in order: {"name", "kind", "macs",
    "elements"}. MACs: CONV_2D out*kh*kw*in_ch + DEPTHWISE_CONV_2D out*kh*kw +
    FULLY_CONNECTED out*in, plus the gate matrix products of UNIDIRECTIONAL_SEQUENCE_LSTM (per
    step: gates*cells*(in+out)) and SVDF's feature and time products (batch*filters*(in+memory)).
    elements: the MACs for those operators (MAC_OPS), the output elements of every other one.
    A custom operator is named by its custom code."""
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

    names = {v: k for k, v in vars(fb.BuiltinOperator).items() if not k.startswith("_")}
    m = fb.ModelT.InitFromObj(fb.Model.GetRootAsModel(bytearray(path.read_bytes()), 0))
    g = m.subgraphs[0]

    def shape(i):
        return list(g.tensors[i].shape) if i >= 0 and g.tensors[i].shape is not None else []

    def prod(s):
        n = 1
        for d in s:
            n *= int(d)
        return n

    res = []
    for op in g.operators or []:
        oc = m.operatorCodes[op.opcodeIndex]
        name = names.get(max(oc.builtinCode, oc.deprecatedBuiltinCode), "?")
        if name == "CUSTOM" and oc.customCode:
            name = oc.customCode.decode() if isinstance(oc.customCode, bytes) else oc.customCode
        ins, outs = list(op.inputs), list(op.outputs)
        n, f = 0, None
        if name == "CONV_2D":
            f = shape(ins[1])  # [out_ch, kh, kw, in_ch]
            n = prod(shape(outs[0])) * f[1] * f[2] * f[3]
        elif name == "DEPTHWISE_CONV_2D":
            f = shape(ins[1])  # [1, kh, kw, out_ch]
            n = prod(shape(outs[0])) * f[1] * f[2]
        elif name == "FULLY_CONNECTED":
            f = shape(ins[1])  # [out, in]
            n = prod(shape(outs[0])) * f[-1]
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
        elements = n if name in MAC_OPS else sum(prod(shape(o)) for o in outs if o >= 0)
        res.append({"name": name, "kind": kind_of(name, f), "macs": int(n),
                    "elements": int(elements)})
    return res


# ---------------------------------------------------------------------------------------
# Build, run, measure


def build_env(model, opt):
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET_DIR),
               CARGO_PROFILE_RELEASE_OPT_LEVEL=opt, **model.env())
    for k in ("KILN_BOARD", "KILN_REGIONS", "KILN_RAM_BUDGET", "KILN_LAYERS", "KILN_EXTRAM",
              "KILN_STREAMED"):
        env.pop(k, None)
    env.update(model.build_vars)
    if not model.golden:
        env.pop("KILN_GOLDEN", None)
    return env


def build(model, target, opt, crate=FW, tag=""):
    """Builds the firmware of `crate` (examples/firmware or a line-info copy); its ELF copied
    to TARGET_DIR/bench, or (None, the end of the error)."""
    r = run(["cargo", "build", "--release", "--target", target], env=build_env(model, opt),
            cwd=crate, check=False)
    if r.returncode != 0:
        return None, r.stderr
    out = TARGET_DIR / "bench" / f"{model.stem}.{target}.O{opt}{tag}.elf"
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
        r = run(cmd, check=False, timeout=600)
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


def run_checked(machine, elf):
    """One plain run: {"pass", "log", arena/persistent/weights/stack figures}."""
    rc, out = qemu(machine, elf)
    r = {"elf": str(elf), "rc": rc, "pass": rc == 0 and "RESULT PASS" in out,
         "log": out.strip()}
    for key in ["arena_bytes", "persistent_bytes", "weights_bytes", "stack_invoke_bytes",
                "stack_total_bytes"]:
        m = re.search(key + r"=(\d+)", out)
        r[key] = int(m.group(1)) if m else None
    return r


def measure(model, target, machine, opt, plugin):
    elf, err = build(model, target, opt)
    if elf is None:
        return {"error": err.strip().splitlines()[-8:]}
    r = run_checked(machine, elf)
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
LINES_REF_CRATE = TARGET_DIR / "bench" / "lines-ref-crate"
# The statement of examples/firmware/build.rs that the copies replace: the `writeln!` of the
# `include_model!` line, whatever its arguments. Its `ram_budget = {<name>}` (or `{}`, then
# the argument after the path) gives the budget; other options (`{map}`) are empty in the
# benchmark's builds (no KILN_REGIONS, KILN_LAYERS, KILN_EXTRAM).
INCLUDE_MODEL_STMT = re.compile(
    r'writeln!\(\s*rs,\s*"kiln::include_model!\(\{\}, ram_budget = \{(\w*)\}(\{\w*\})?\);",'
    r'\s*lit\(&path\)\s*,?\s*([^;]*?)\)\s*\.unwrap\(\);', re.S)
# `lines.rs` as long a name as the macro's `model.rs`, so that panic locations in generated
# code (if any) are strings of the same length and the two flash images can be identical.
LINES_INCLUDE = ('let generated = kiln_build::Model::new(&path)\n'
                 '        .ram_budget({budget}){reference}\n'
                 '        .compile("lines")\n'
                 '        .unwrap();\n'
                 '    writeln!(rs, "include!({{}});", lit(&generated)).unwrap();')
GENERATED = "/out/lines.rs"
OP_COMMENT = re.compile(r"^\s*/// op (\d+): (\w+)")

COND = "(?:eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)?"
BRANCH = re.compile(rf"^(?:b|bl|blx|bx){COND}(?:\.w|\.n)?$"
                    r"|^(?:cbz|cbnz|tbb|tbh|udf|bkpt|svc)(?:\.w)?$")
CALL = re.compile(rf"^(?:bl|blx){COND}$")


def lines_crate(dest, reference):
    """Writes `dest`: examples/firmware's sources, memory maps and lock file, its manifest
    with absolute paths and kiln-build as a build dependency, and its build.rs with the
    `include_model!` statement replaced by `Model::compile` + `include!` (with
    `.reference_kernels(true)` if `reference`). It sits under examples/firmware, so the same
    .cargo/config.toml (rustflags) applies."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copytree(FW / "src", dest / "src")
    shutil.copytree(FW / "memory", dest / "memory")
    shutil.copyfile(FW / "Cargo.lock", dest / "Cargo.lock")
    toml = re.sub(r'path\s*=\s*"([^"]+)"',
                  lambda m: f'path = "{(FW / m.group(1)).resolve()}"',
                  (FW / "Cargo.toml").read_text())
    if reference:
        # Another package name: cargo's metadata hash of a path package leaves its directory
        # out, so two copies with the same name and manifest would share one build-script
        # output (the binary keeps its name).
        toml = re.sub(r'(?m)^name = "kiln-firmware"$', 'name = "kiln-firmware-ref"', toml,
                      count=1)
        toml = re.sub(r'(?m)^(\[\[bin\]\]\nname = "kiln-firmware")$', r'\1\npath = "src/main.rs"',
                      toml, count=1)
    dep = f'kiln-build = {{ path = "{REPO / "build-support"}" }}'
    if "[build-dependencies]" in toml:
        toml = toml.replace("[build-dependencies]", "[build-dependencies]\n" + dep, 1)
    else:
        toml += f"\n[build-dependencies]\n{dep}\n"
    (dest / "Cargo.toml").write_text(toml)
    rs = (FW / "build.rs").read_text()
    found = list(INCLUDE_MODEL_STMT.finditer(rs))
    if len(found) != 1:
        raise RuntimeError("examples/firmware/build.rs: no single `writeln!(rs, \"kiln::"
                           "include_model!({}, ram_budget = {...}...);\", lit(&path), ...)"
                           ".unwrap();` statement: update INCLUDE_MODEL_STMT in this script")
    m = found[0]
    budget = m.group(1) or m.group(3).strip().rstrip(",").strip()
    if not budget:
        raise RuntimeError("examples/firmware/build.rs: the include_model! line's budget "
                           "is neither a named argument nor the one after the path")
    repl = LINES_INCLUDE.format(budget=budget,
                                reference="\n        .reference_kernels(true)" if reference
                                else "")
    (dest / "build.rs").write_text(rs[:m.start()] + repl + rs[m.end():])


def build_lines(model, target, opt, reference=False):
    crate = LINES_REF_CRATE if reference else LINES_CRATE
    elf, err = build(model, target, opt, crate=crate, tag=".ref" if reference else ".lines")
    if elf is None:
        raise RuntimeError("the line-info copy does not build:\n"
                           + "\n".join(err.strip().splitlines()[-8:]))
    return elf


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


def breakdown(model, target, machine, opt, measured, ops, plugin_dir, reference=False):
    """Instructions of one invoke() per operator of the model (see the module docstring).
    `measured` is measure()'s result for the firmware built with include_model! (None for the
    reference-kernel build, which is checked on its own run instead)."""
    elf = build_lines(model, target, opt, reference)
    if measured is None:
        same_image = None
        ok = run_checked(machine, elf)
        if not ok["pass"]:
            raise RuntimeError("the reference-kernel build does not match TFLM: "
                               + " ".join(ok["log"].split())[-300:])
    else:
        same_image = flash_image(elf) == flash_image(measured["elf"])
    pch = plugin_dir / "libpchist.so"
    work = TARGET_DIR / "bench" / f"{model.stem}.O{opt}{'.ref' if reference else ''}"
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
    # The plugin takes 256 marks: the calls in chunks of at most 128 (two marks each).
    callees = 0
    order = sorted(calls)
    for c in range(0, len(order), 128):
        chunk = {pc: calls[pc] for pc in order[c:c + 128]}
        marks = sorted(set(chunk) | {v[1] for v in chunk.values()})
        _, events, _ = pchist(machine, elf, pch, 2, f"{work}.hist2m", marks)
        for e, (pc, total) in enumerate(events):
            if pc not in chunk:
                continue
            o, end, after = chunk[pc]
            if e + 1 >= len(events) or events[e + 1][0] != end:
                raise RuntimeError(f"call at {pc:#x}: the next mark is not {end:#x}")
            per_op[o] += events[e + 1][1] - total - after
            callees += events[e + 1][1] - total - after
    glue = per_op.pop("glue", 0)
    emitted = {b[2] for b in blocks}
    kinds = {}
    for k, op in enumerate(ops):
        d = kinds.setdefault(op["kind"], {"layers": 0, "macs": 0, "elements": 0, "insns": 0,
                                          "no_code": 0})
        d["layers"] += 1
        d["macs"] += op["macs"]
        d["elements"] += op["elements"]
        d["insns"] += per_op.get(k, 0)
        d["no_code"] += k not in emitted
    total = (measured or {}).get("insns") or (t2 - t1)
    return {"per_op": dict(per_op), "kinds": kinds, "glue": glue, "callees": callees,
            "calls": len(calls), "total": total, "lines_total": t2 - t1,
            "residue": total - sum(per_op.values()), "same_image": same_image,
            "emitted": emitted}


def print_breakdown(stem, opt, bd, ops, label=""):
    odd = not 0 <= bd["residue"] < 1000 or bd["lines_total"] != bd["total"]
    print(f"  per operator ({stem} O{opt}{label}; {bd['calls']} out-of-line calls, "
          f"{bd['callees']} insns in callees, invoke() glue {bd['glue']}, "
          f"unattributed {bd['residue']}{' CHECK' if odd else ''}, line-info copy "
          f"{bd['lines_total']} insns, flash image identical: {bd['same_image']}):",
          flush=True)
    for k, op in enumerate(ops):
        n = bd["per_op"].get(k, 0)
        per = f"{n / op['elements']:.2f}/elem" if op["elements"] and n else ""
        code = "" if k in bd["emitted"] else " (no code)"
        print(f"    op {k:>3} {op['name']:<20} {op['kind']:<18} elems {op['elements']:>9} "
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


def tflm_row(notes, notes_rw, stem):
    """TFLM's figures for a model, or None: {"variant" (the optimized one compared with),
    "insns", "ref", "code", "ref_code", "arena", "ref_arena", "stack", "ref_stack"}."""
    def num(row, col):
        v = (row or {}).get(col)
        return int(v) if v and v.isdigit() else None

    short = TFLM_SHORT.get(stem)
    if short and short in notes.get("cmsis8", {}):
        c, r = notes["cmsis8"][short], notes.get("ref", {}).get(short)
        col = "code bytes w/o weights (text+rodata+data)"
        return {"variant": "cmsis8", "insns": num(c, "insns/Invoke"),
                "ref": num(r, "insns/Invoke"), "code": num(c, col), "ref_code": num(r, col),
                "arena": num(c, "min arena"), "ref_arena": num(r, "min arena"),
                "stack": num(c, "stack peak"), "ref_stack": num(r, "stack peak")}
    if stem in notes_rw.get("cmsis", {}):
        c, r = notes_rw["cmsis"][stem], notes_rw.get("ref", {}).get(stem)
        col = "code bytes w/o weights"
        return {"variant": "cmsis", "insns": num(c, "insns invoke 3"),
                "ref": num(r, "insns invoke 3"), "code": num(c, col), "ref_code": num(r, col),
                "arena": num(c, "min arena"), "ref_arena": num(r, "min arena"),
                "stack": None, "ref_stack": None}
    return None


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


def ok(r):
    return bool(r) and "error" not in r


def label_of(opt):
    return {"3": "opt-level 3 (speed; `cargo build --release`'s default)",
            "s": "opt-level \"s\" (size)"}.get(opt, f"opt-level {opt}")


def render(results, models, opts, mac, notes, notes_rw, arena_json, meta, breakdowns, refs,
           ops_info, per_op, cores):
    L = []
    w = L.append
    stems = [m.stem for m in models]
    w("## Firmware on Cortex-M4 (QEMU mps2-an386)")
    w("")
    w(f"Written by `tools/firmware_bench.py` ({meta}; the per-model figures also in "
      "`tools/data/firmware.json`). Each model is compiled by `include_model!` into "
      "`examples/firmware` (cortex-m-rt, `thumbv7em-none-eabihf`, `-C target-cpu=cortex-m4`, "
      "fat LTO, one codegen unit, `panic = \"abort\"`), which writes TFLM's golden input s1, "
      "calls `invoke()`, does it again, and exits 0 only if both outputs equal TFLM's bytes. "
      "Models: every `../shared/models/*.tflite`, the vendors' models of "
      "`../shared/models/realworld/` (goldens in `tests/realworld/<stem>/`) and Kiln's own "
      "streaming keyword-spotting step `tests/streaming/streaming_kws_int8` "
      "(`tools/gen_streaming_model.py`: microWakeWord's rings of past inputs, kept by "
      "STRIDED_SLICE + CONCATENATION, passed as inputs and outputs instead of resource "
      "variables). All models below pass unless marked.")
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
      "biases) and the per-channel and lookup `OP<k>_*` tables; the operator "
      "parameter structs stay in `.rodata`. LLVM may fold a small weight buffer into the "
      "code, so the weights column can differ by tens of bytes between the two tables.")
    pd = results.get(("tflm_person_detect_int8", opts[0]))
    if ok(pd):
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
        w(f"### Kiln, {label_of(opt)}")
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
                w(f"| {stem} | {mac.get(stem, '-')} | not built | | | | | | | | | | |")
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
    lv = [f"O{op}" for op in opts]
    w("### Side by side with TFLM: instructions per `invoke()` (Cortex-M4, same QEMU)")
    w("")
    w("TFLM numbers from `../shared/notes/tflm-cortexm.md` (TFLM 90b983c, GCC 12.2, kernels "
      "-O2, core -Os; six public models; `cmsis8` = CMSIS-NN kernels with the int8-only "
      "registrations, its smallest optimized build) and `../shared/notes/tflm-cortexm-"
      "realworld.md` (three real-world models, same method, 3rd invoke of seeded inputs; "
      "`cmsis` = CMSIS-NN kernels with the generic registrations, what a TFLM user gets); "
      "`ref` = TFLM's reference kernels. *vs opt* / *vs ref* = Kiln's instructions / TFLM's "
      f"per opt-level: below 1 Kiln executes fewer (issue 28's target: at most {TARGET_M4}x "
      "TFLM + CMSIS-NN on each model, at both opt-levels).")
    w("")
    w("| model | TFLM optimized | MACs | " + " | ".join(f"Kiln {x} insns" for x in lv)
      + " | TFLM optimized insns | TFLM ref insns | "
      + " | ".join(f"{x} vs opt" for x in lv) + " | "
      + " | ".join(f"{x} vs ref" for x in lv) + " | "
      + " | ".join(f"insns/MAC Kiln {x}" for x in lv) + " | insns/MAC TFLM opt | insns/MAC ref |")
    w("|---|---|--:|" + "--:|" * (4 * len(lv) + 4))

    def per_mac(v, stem):
        return fmt(v / mac[stem]) if v and mac.get(stem) else "-"

    for stem in stems:
        t = tflm_row(notes, notes_rw, stem)
        if not t:
            continue
        ki = [(results.get((stem, op)) or {}).get("insns") for op in opts]
        w(f"| {stem} | {t['variant']} | {mac[stem]} | " + " | ".join(fmt(k) for k in ki)
          + f" | {fmt(t['insns'])} | {fmt(t['ref'])} | "
          + " | ".join(ratio(k, t["insns"]) for k in ki) + " | "
          + " | ".join(ratio(k, t["ref"]) for k in ki) + " | "
          + " | ".join(per_mac(k, stem) for k in ki)
          + f" | {per_mac(t['insns'], stem)} | {per_mac(t['ref'], stem)} |")
    w("")
    w("### Side by side with TFLM: memory")
    w("")
    w("*TFLM min arena* = smallest arena its interpreter runs with (Cortex-M4 build; x86-64 "
      "from `tools/data/tflm_arena.json` in parentheses); Kiln needs arena + persistent. "
      "*code* as above (TFLM's \"code bytes w/o weights\"); TFLM opt = cmsis8 (public models) "
      "or cmsis (real-world models).")
    w("")
    w(f"| model | Kiln code B ({' / '.join(lv)}) | TFLM ref code B | TFLM opt code B "
      f"| Kiln arena+persistent B | TFLM min arena B ref / opt (x86-64) "
      f"| Kiln stack total B ({' / '.join(lv)}) | TFLM stack peak B ref / opt |")
    w("|---|--:|--:|--:|--:|--:|--:|--:|")
    for stem in stems:
        rs = [results.get((stem, op)) for op in opts]
        good = [r for r in rs if ok(r)]
        if not good:
            continue
        r = good[0]
        t = tflm_row(notes, notes_rw, stem) or {}
        codes = " / ".join(str(code_bytes(x["sections"])) if ok(x) else "-" for x in rs)
        stacks = " / ".join(fmt(x["stack_total_bytes"]) if ok(x) else "-" for x in rs)
        x86 = arena_json.get(stem, {}).get("min_arena")
        arena_m4 = (f"{fmt(t.get('ref_arena'))} / {fmt(t.get('arena'))}"
                    if t.get("ref_arena") or t.get("arena") else "-")
        w(f"| {stem} | {codes} | {fmt(t.get('ref_code'))} | {fmt(t.get('code'))} "
          f"| {(r['arena_bytes'] or 0) + (r['persistent_bytes'] or 0)} | {arena_m4} "
          f"({fmt(x86)}) | {stacks} | {fmt(t.get('ref_stack'))} / {fmt(t.get('stack'))} |")
    w("")
    L += render_breakdown(results, breakdowns, refs, models, opts, ops_info, notes, notes_rw,
                          per_op)
    L += render_targets(results, breakdowns, refs, models, opts, notes, notes_rw, cores)
    return "\n".join(L)


def kind_rows(bd, ref, ops):
    """{kind: (layers, elements, per, no_code)} in the model's operator order."""
    rows = {}
    for op in ops:
        rows.setdefault(op["kind"], None)
    src = bd or ref
    for kind in rows:
        d = src["kinds"][kind]
        per = "MAC" if any(o["kind"] == kind and o["name"] in MAC_OPS for o in ops) else "out"
        rows[kind] = (d["layers"], d["elements"], per, d["no_code"])
    return rows


def over_reference(breakdowns, refs, models, opts):
    """[(stem, kind, opt, kiln per element, reference per element)] where Kiln's instructions
    per element of a kind exceed the reference build's (by more than 2 %, and by more than 100
    instructions in all: noise of a few instructions on small kinds is not counted)."""
    res = []
    for m in models:
        ref = refs.get(m.stem)
        if not ref or "error" in ref:
            continue
        for opt in opts:
            bd = breakdowns.get((m.stem, opt))
            if not bd or "error" in bd:
                continue
            for kind, d in bd["kinds"].items():
                rd = ref["kinds"].get(kind)
                if not rd or not d["elements"] or not d["insns"]:
                    continue
                if d["insns"] > 1.02 * rd["insns"] and d["insns"] - rd["insns"] > 100:
                    res.append((m.stem, kind, opt, d["insns"] / d["elements"],
                                rd["insns"] / d["elements"]))
    return res


def render_breakdown(results, breakdowns, refs, models, opts, ops_info, notes, notes_rw,
                     per_op):
    """The per-operator-kind section (see the docstring)."""
    done = [m for m in models if any((m.stem, op) in breakdowns for op in opts)]
    if not done:
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
      "are exact (both end a translation block). *kind* = the TFLite operator (CONV_2D split "
      "into *1x1* and *windowed*); operators that emit no code (views such as RESHAPE) are "
      "counted in *layers* and marked. *per elem* = the kind's instructions per MAC (MAC "
      "operators) or per output element (all others). *share* = of the `invoke()` total.")
    w("")
    # How the reference builds' totals compare with TFLM's reference kernels' (its
    # interpreter's per-operator cost included).
    cal = []
    for m in done:
        t, ref = tflm_row(notes, notes_rw, m.stem), refs.get(m.stem)
        if t and t["ref"] and ref and "error" not in ref:
            cal.append((t["ref"] / ref["total"], TFLM_SHORT.get(m.stem, m.stem)))
    calib = ""
    if cal:
        lo, hi = min(cal), max(cal)
        calib = (f"; TFLM's reference totals (GCC -O2, with its interpreter) are {lo[0]:.2f}x "
                 f"({lo[1]}) to {hi[0]:.2f}x ({hi[1]}) these builds' totals on the "
                 f"{len(cal)} models measured both ways")
    w(f"*ref* = the same model built with every operator on Kiln's **reference kernels** "
      f"(`kiln_build::Model::reference_kernels(true)`, opt-level {REF_OPT}) and broken down "
      "the same way: the stand-in for TFLM's reference kernels, which cannot be built here "
      "(no TFLM checkout; the TFLM notes have only their totals per model). Kiln's reference "
      "kernels follow the loops of TFLM's reference kernels (the same per-element arithmetic, "
      "no folded bias, no DSP instructions), so for CONV_2D, DEPTHWISE_CONV_2D, "
      "FULLY_CONNECTED, ADD, int8 SVDF and int16 SignalRfft (KISS FFT's scalar steps; its "
      "recursion run as loops, a little cheaper than the C's calls) the column is what "
      f"TFLM's reference loops cost when compiled by rustc{calib}. For every other operator Kiln "
      "has one kernel, so *ref* is that kernel again at opt-level 3 and *vs ref* only shows "
      "opt-level differences; where TFLM's reference loop is structured differently "
      "(STRIDED_SLICE and the other data movement operators copy contiguous runs with "
      "`memcpy`) the column is not TFLM's cost. *vs ref* = the worse of the opt-levels' "
      "per-element instructions / ref's.")
    for m in done:
        stem = m.stem
        ops = ops_info[stem]
        bds = [breakdowns.get((stem, op)) for op in opts]
        good = [b if b and "error" not in b else None for b in bds]
        ref = refs.get(stem)
        ref = ref if ref and "error" not in ref else None
        rs = [results.get((stem, op)) or {} for op in opts]
        w("")
        ins = " / ".join(fmt(r.get("insns")) for r in rs)
        t = tflm_row(notes, notes_rw, stem)
        vs = ""
        if t and t["insns"]:
            vs = (", " + " / ".join(f"{r['insns'] / t['insns']:.3f}x" if r.get("insns")
                                    else "-" for r in rs)
                  + f" TFLM {t['variant']}'s {t['insns']}")
        same = " / ".join("-" if not b or "error" in b else ("yes" if b["same_image"] else
                          "**NO**") for b in bds)
        w(f"**{stem}** ({' / '.join(lv)}): `invoke()` {ins} instructions{vs}; same image: "
          f"{same}; reference-kernel build {fmt(ref['total']) if ref else '-'}.")
        for lvl, b in zip(lv, bds):
            if b and "error" in b:
                w(f"{lvl}: breakdown failed: {b['error']}")
        if stem in refs and "error" in refs[stem]:
            w(f"reference build failed: {refs[stem]['error']}")
        if not any(good):
            continue
        w("")
        w("| kind | layers | elements | per | " + " | ".join(
            f"{x} insns | {x} per elem | {x} share" for x in lv) + " | ref per elem | vs ref |")
        w("|---|--:|--:|---|" + "--:|--:|--:|" * len(lv) + "--:|--:|")
        for kind, (layers, elems, per, no_code) in kind_rows(
                next(b for b in good if b), ref, ops).items():
            cells, worst = [], None
            for b in good:
                if not b:
                    cells.append("- | - | -")
                    continue
                n = b["kinds"][kind]["insns"]
                pe = n / elems if elems and n else None
                cells.append(f"{n} | {fmt(pe)} | {100 * n / b['total']:.1f} %")
                if pe is not None:
                    worst = pe if worst is None else max(worst, pe)
            rn = ref["kinds"][kind]["insns"] if ref else None
            rpe = rn / elems if rn and elems else None
            vsr = f"{worst / rpe:.2f}" if worst and rpe else "-"
            name = kind + (f" ({no_code} no code)" if no_code else "")
            w(f"| {name} | {layers} | {elems} | {per} | " + " | ".join(cells)
              + f" | {fmt(rpe)} | {vsr} |")
        row = [f"{b['residue']} | | {100 * b['residue'] / b['total']:.3f} %" if b else "- | | -"
               for b in good]
        w("| unattributed | | | | " + " | ".join(row) + " | | |")
        tm = sum(o["macs"] for o in ops)
        row = [f"{b['total']} | {fmt(b['total'] / tm) if tm else '-'} | 100 %" if b
               else "- | - | -" for b in good]
        w(f"| **`invoke()`** | {len(ops)} | {tm} | MAC | " + " | ".join(row)
          + f" | {fmt(ref['total'] / tm) if ref and tm else '-'} | |")
        if per_op:
            w("")
            w("| op | operator | kind | elements | " + " | ".join(
                f"{x} insns | {x} per elem" for x in lv) + " | ref per elem |")
            w("|--:|---|---|--:|" + "--:|--:|" * len(lv) + "--:|")
            for k, op in enumerate(ops):
                row = []
                for b in good:
                    n = b["per_op"].get(k, 0) if b else None
                    row.append(f"{fmt(n)} | "
                               f"{fmt(n / op['elements']) if n and op['elements'] else '-'}")
                rn = ref["per_op"].get(k, 0) if ref else None
                w(f"| {k} | {op['name']} | {op['kind']} | {op['elements']} | "
                  + " | ".join(row)
                  + f" | {fmt(rn / op['elements']) if rn and op['elements'] else '-'} |")
    w("")
    return L


def render_targets(results, breakdowns, refs, models, opts, notes, notes_rw, cores):
    L = []
    w = L.append
    w("### Targets (issue 28)")
    w("")
    o = opts[0]
    good = [(m.stem, results[(m.stem, o)]) for m in models if ok(results.get((m.stem, o)))]
    if good:
        worst = max(good, key=lambda x: x[1]["stack_total_bytes"] or 0)
        worst_i = max(good, key=lambda x: x[1]["stack_invoke_bytes"] or 0)
        w(f"- **Stack**: largest stack of `invoke()` (opt-level {o}): "
          f"{worst_i[1]['stack_invoke_bytes']} B ({worst_i[0]}); largest including `main`: "
          f"{worst[1]['stack_total_bytes']} B ({worst[0]}).")
    for opt in opts:
        rows = []
        for m in models:
            t = tflm_row(notes, notes_rw, m.stem)
            ki = (results.get((m.stem, opt)) or {}).get("insns")
            if t and t["insns"]:
                rows.append((m.stem, t["variant"], ki / t["insns"] if ki else None))
        if not rows:
            continue
        missing = [st for st, _, r in rows if r is None]
        over = [(st, v, r) for st, v, r in rows if r is not None and r > TARGET_M4]
        met = not missing and not over
        w(f"- **At most {TARGET_M4}x TFLM + CMSIS-NN's instructions, opt-level {opt}**: "
          f"{'met' if met else 'NOT met'} (within it on {len(rows) - len(missing) - len(over)} "
          f"of {len(rows)} models): " + ", ".join(
              f"{TFLM_SHORT.get(st, st)} {r:.3f}x" if r is not None else
              f"{TFLM_SHORT.get(st, st)} not measured" for st, _, r in rows) + ".")
    if "3" in opts and "s" in opts:
        lose = []
        for m in models:
            a, b = results.get((m.stem, "3")) or {}, results.get((m.stem, "s")) or {}
            if a.get("insns") and b.get("insns") and a["insns"] > b["insns"]:
                lose.append(f"{m.stem} {a['insns']} vs {b['insns']} "
                            f"(+{100 * (a['insns'] / b['insns'] - 1):.1f} %)")
        w("- **Opt-level 3 never executes more instructions than opt-level s**: "
          + ("met." if not lose else "NOT met: " + "; ".join(lose) + "."))
    over = over_reference(breakdowns, refs, models, opts)
    measured = sum(1 for m in models if refs.get(m.stem) and "error" not in refs[m.stem])
    if measured:
        w(f"- **No operator kind above the reference kernels' instructions per element** "
          f"({measured} models with a reference build; the comparison as described above, "
          "differences under 2 % or 100 instructions not counted): "
          + ("met." if not over else "NOT met: " + "; ".join(
              f"{st} {kind} O{opt} {k:.2f} vs {r:.2f}" for st, kind, opt, k, r in over) + "."))
    pd = "tflm_person_detect_int8"
    r = results.get((pd, "s"))
    if ok(r):
        c = code_bytes(r["sections"])
        w(f"- **person_detect's code without weights at most 16 KB at opt-level s**: "
          f"{'met' if c <= CODE_TARGET else 'NOT met'}, {c} B ({c - CODE_TARGET:+d} B), of "
          f"which Kiln's functions {r['origin']['kiln']} B.")
    for opt in opts:
        rows = [(st, v) for (core, st, op), v in cores.items()
                if core == "Cortex-M55" and op == opt and v.get("vs") is not None]
        if rows:
            over55 = [(st, v["vs"]) for st, v in rows if v["vs"] > TARGET_M55]
            w(f"- **Cortex-M55: at most {TARGET_M55}x TFLM + CMSIS-NN (cmsis8), opt-level "
              f"{opt}**: {'met' if not over55 else 'NOT met'} ("
              + ", ".join(f"{TFLM_SHORT.get(st, st)} {v['vs']:.2f}x" for st, v in rows) + ").")
    failed = [f"{st} (opt-level {op})" for (st, op), r in results.items() if "error" in r]
    if failed:
        w("")
        w("Not built (the build failed; the end of each error is printed by the benchmark): "
          + ", ".join(failed) + ".")
    w("")
    return L


def measure_cores(models, opts, plugin, mac):
    """{(core, stem, opt): result} on the Cortex-M55 at every opt-level and the Cortex-M0 at
    the first (public models only: the real-world models do not fit its 16 KB)."""
    notes55 = tflm_notes(TFLM_NOTES_M55)
    res = {}
    runs = [(M55, "Cortex-M55", opt, models) for opt in opts]
    runs.append((M0, "Cortex-M0", opts[0], [m for m in models if m.group == "public"]))
    for (target, machine), core, opt, ms in runs:
        for m in ms:
            r = measure(m, target, machine, opt, plugin)
            r["machine"] = machine
            if "error" in r:
                err = "\n".join(r["error"])
                r["no_fit"] = bool(re.search(
                    r"will not fit|overflowed|does not fit|over the RAM budget", err))
                if not r["no_fit"]:
                    print(f"{m.stem} {core} O{opt}: BUILD FAILED\n  " + "\n  ".join(r["error"]),
                          flush=True)
            else:
                ins = r.get("insns")
                short = TFLM_SHORT.get(m.stem, "")
                row = notes55.get("cmsis8", {}).get(short, {})
                t = row.get("insns/Invoke")
                t = int(t) if t and t.isdigit() else None
                r["tflm"] = t if core == "Cortex-M55" else None
                r["vs"] = ins / r["tflm"] if ins and r["tflm"] else None
                print(f"{m.stem} {core} O{opt}: {'pass' if r['pass'] else 'FAIL'} insns={ins}",
                      flush=True)
                if not r["pass"]:
                    CORE_FAILURES.append((m.stem, core, opt))
            res[(core, m.stem, opt)] = r
    return res


def render_cores(cores, mac):
    L = ["### Other cores", "",
         "The same firmware for `thumbv8m.main-none-eabihf` (`-C target-cpu=cortex-m55`: "
         "Kiln's Helium (MVE) microkernels, `kiln_arch = \"mve\"`; QEMU `mps3-an547`: code in "
         "the 512 KB ITCM, the model's constants and the test vectors in the 8 MB QSPI ROM, "
         "4 MB of SRAM as RAM), at every opt-level, and for `thumbv6m-none-eabi` "
         "(`-C target-cpu=cortex-m0`, QEMU `microbit`: 256 KB flash, 16 KB RAM; the public "
         "models, at the first opt-level). Models that do not fit a board's memory are listed "
         "below the table. TFLM cmsis8 = TFLM + CMSIS-NN with its Helium kernels on the same "
         "emulated M55 (`../shared/notes/tflm-cortexm55.md`, variant cmsis8); Kiln / cmsis8 < 1 "
         "means Kiln executes fewer instructions.", "",
         "| core (board) | opt | model | match s1 | insns/invoke | insns/MAC | TFLM cmsis8 "
         "insns | Kiln / cmsis8 | code B | weights B | .bss+.data B | stack invoke B |",
         "|---|---|---|:-:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    no_fit = []
    for (core, stem, opt), r in cores.items():
        if "error" in r:
            if r.get("no_fit"):
                no_fit.append(f"{stem} on {core} (O{opt})")
            else:
                L.append(f"| {core} ({r['machine']}) | {opt} | {stem} | not built | | | | | | "
                         "| | |")
            continue
        s = r["sections"]
        ins = r.get("insns")
        per_mac = ins / mac[stem] if ins and mac.get(stem) else None
        L.append(f"| {core} ({r['machine']}) | {opt} | {stem} | "
                 f"{'yes (x2)' if r['pass'] else '**NO**'} | {fmt(ins)} | {fmt(per_mac)} "
                 f"| {fmt(r.get('tflm'))} | {fmt(r.get('vs')) + 'x' if r.get('vs') else '-'} "
                 f"| {code_bytes(s)} | {s.get('.kiln_weights', 0)} "
                 f"| {s.get('.bss', 0) + s.get('.data', 0)} | {fmt(r['stack_invoke_bytes'])} |")
    if no_fit:
        L += ["", "Do not fit (over the board's RAM: a compile error from the RAM budget "
              "`examples/firmware` gives, or a link error): " + ", ".join(no_fit) + "."]
    return "\n".join(L)


CORE_FAILURES = []


def entry(r):
    """One build's figures for firmware.json."""
    if not r:
        return None
    if "error" in r:
        return {"built": False, "no_fit": r.get("no_fit", False)}
    s = r["sections"]
    return {"built": True, "pass": r["pass"], "insns": r.get("insns"),
            "code_bytes": code_bytes(s), "kiln_fn_bytes": r["origin"]["kiln"],
            "weights_bytes": s.get(".kiln_weights", 0),
            "arena_bytes": r["arena_bytes"], "persistent_bytes": r["persistent_bytes"],
            "ram_bytes": s.get(".bss", 0) + s.get(".data", 0),
            "stack_invoke_bytes": r["stack_invoke_bytes"],
            "stack_total_bytes": r["stack_total_bytes"]}


def write_json(results, cores, models, opts, mac, meta):
    doc = {"written": meta, "tool": "tools/firmware_bench.py", "models": {}}
    for m in models:
        d = {"group": m.group, "macs": mac[m.stem], "m4": {}, "m55": {}}
        for opt in opts:
            e = entry(results.get((m.stem, opt)))
            if e:
                d["m4"][opt] = e
            e = entry(cores.get(("Cortex-M55", m.stem, opt)))
            if e:
                d["m55"][opt] = e
        doc["models"][m.stem] = d
    JSON_OUT.parent.mkdir(parents=True, exist_ok=True)
    JSON_OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


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
    ap.add_argument("--opt", default="s,3")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--no-cores", action="store_true")
    ap.add_argument("--no-breakdown", action="store_true")
    ap.add_argument("--no-reference", action="store_true")
    ap.add_argument("--per-op", action="store_true")
    args = ap.parse_args()
    ensure_venv()

    for tool in ["qemu-system-arm", "cargo", "gcc"]:
        if not shutil.which(tool):
            sys.exit(f"needs {tool}")
    plugin = TARGET_DIR / "qemu-insn-count" / "libfncount.so"
    if not plugin.exists() or not (plugin.parent / "libpchist.so").exists():
        run(["bash", str(PLUGIN_SRC / "build.sh"), str(plugin.parent)])

    models = all_models()
    if args.models:
        want = args.models.split(",")
        models = [m for m in models if m.stem in want]
        if len(models) != len(want):
            sys.exit(f"unknown models: {set(want) - {m.stem for m in models}}")
    opts = args.opt.split(",")
    ops_info = {m.stem: operators(m.path) for m in models}
    mac = {st: sum(op["macs"] for op in ops) for st, ops in ops_info.items()}
    split = not args.no_breakdown
    results, breakdowns, refs = {}, {}, {}
    if split:
        if not shutil.which("arm-none-eabi-addr2line"):
            sys.exit("the per-operator breakdown needs arm-none-eabi-addr2line (apt-get install "
                     "binutils-arm-none-eabi); --no-breakdown skips it")
        try:
            lines_crate(LINES_CRATE, False)
            lines_crate(LINES_REF_CRATE, True)
        except RuntimeError as e:
            print(f"BREAKDOWN FAILED: {e}", flush=True)
            breakdowns.update({(m.stem, op): {"error": str(e)} for m in models for op in opts})
            split = False
    notes, notes_rw = tflm_notes(), tflm_notes(TFLM_NOTES_RW)
    arena_path = REPO / "tools" / "data" / "tflm_arena.json"
    arena_json = json.loads(arena_path.read_text()) if arena_path.exists() else {}

    def attempt(f):
        try:
            return f()
        except (RuntimeError, SystemExit, subprocess.CalledProcessError) as e:
            return {"error": " ".join(str(e).split())[:400]}

    # The opt-levels in an order that ends at REF_OPT's builds last... one opt-level at a
    # time: the dependencies are rebuilt once per level.
    for opt in opts:
        for m in models:
            r = measure(m, *M4, opt, plugin)
            results[(m.stem, opt)] = r
            if "error" in r:
                print(f"{m.stem} O{opt}: BUILD FAILED\n  " + "\n  ".join(r["error"]), flush=True)
                continue
            print(f"{m.stem} O{opt}: {'pass' if r['pass'] else 'FAIL'} "
                  f"insns={r.get('insns')} (2nd {r.get('insns2')}) "
                  f"code={code_bytes(r['sections'])} kiln={r['origin']['kiln']} "
                  f"weights={r['sections'].get('.kiln_weights')} "
                  f"stack={r['stack_invoke_bytes']}/{r['stack_total_bytes']}", flush=True)
            if not r["pass"]:
                print("  " + r["log"].replace("\n", "\n  "), flush=True)
            if not (split and r.get("insns")):
                continue
            ops = ops_info[m.stem]
            bd = attempt(lambda: breakdown(m, *M4, opt, r, ops, plugin.parent))
            breakdowns[(m.stem, opt)] = bd
            if "error" in bd:
                print(f"{m.stem} O{opt}: BREAKDOWN FAILED: {bd['error']}", flush=True)
            else:
                print_breakdown(m.stem, opt, bd, ops)
            if opt == REF_OPT and not args.no_reference:
                ref = attempt(lambda: breakdown(m, *M4, opt, None, ops, plugin.parent, True))
                refs[m.stem] = ref
                if "error" in ref:
                    print(f"{m.stem}: REFERENCE BUILD FAILED: {ref['error']}", flush=True)
                else:
                    print_breakdown(m.stem, opt, ref, ops, " reference kernels")

    cores = {} if args.no_cores else measure_cores(models, opts, plugin, mac)
    rustc = run(["rustc", "--version"]).stdout.split("(")[0].strip()
    qv = run(["qemu-system-arm", "--version"]).stdout.splitlines()[0]
    qv = re.search(r"version (\S+)", qv).group(1)
    meta = f"{datetime.date.today()}, {rustc}, QEMU {qv}"
    text = render(results, models, opts, mac, notes, notes_rw, arena_json, meta, breakdowns,
                  refs, ops_info, args.per_op, cores)
    if cores:
        text += "\n" + render_cores(cores, mac)

    if args.no_write:
        print(text)
    else:
        write_section(text)
        write_json(results, cores, models, opts, mac, meta)
        print(f"wrote {BENCH.relative_to(REPO)} ({BEGIN} ... {END}) and "
              f"{JSON_OUT.relative_to(REPO)}")
    bad = [k for k, r in results.items() if "error" not in r and not r["pass"]] + CORE_FAILURES
    bad += [("breakdown",) + k for k, b in breakdowns.items()
            if "error" in b or b["lines_total"] != b["total"]]
    if bad:
        print(f"FAILED: {bad}")
        sys.exit(1)


if __name__ == "__main__":
    main()
