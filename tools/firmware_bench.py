#!/usr/bin/env python3
"""Kiln on a Cortex-M4 (QEMU mps2-an386): sizes, RAM, stack and instructions per invoke()
of every public model Kiln supports, side by side with TFLM, written into BENCHMARKS.md
between `<!-- kiln:firmware -->` and `<!-- /kiln:firmware -->` (other sections untouched).

Run from the repository root:  .venv/bin/python tools/firmware_bench.py
  --models a,b     only these model stems (default: every ../shared/models/*.tflite Kiln
                   supports, see EXCLUDED)
  --opt 3,s        opt-levels to build (default both: 3 = speed, s = size)
  --no-write       print the section instead of writing BENCHMARKS.md
  --no-cores       skip the Cortex-M0 (microbit) and Cortex-M55 (mps3-an547) table

Per model and opt-level it builds examples/firmware (its own cargo workspace and target dir,
`KILN_MODEL=<stem>`, release profile with `CARGO_PROFILE_RELEASE_OPT_LEVEL`), then runs it
under QEMU three times: once to check the output against TFLM's golden s1 (both invokes) and
read the stack high-water mark, and twice with the instruction-count plugin of
../shared/tools/qemu-insn-count, stopping right before and right after the first invoke()
(semihosting argument `stop=1` / `stop=2`): their difference is one invoke(). Sizes from
`llvm-size -A` and `llvm-nm` (rustup component llvm-tools). MACs from the .tflite (Python
venv with the pinned tflite-micro package, for its flatbuffer schema).

Needs: qemu-system-arm, rustup target thumbv7em-none-eabihf, llvm-tools, gcc (the plugin),
the venv (`tools/setup_venv.sh`). About 4 minutes on the 2-core machine for 12 models x 2.
"""

import argparse
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
PLUGIN_SRC = SHARED / "tools" / "qemu-insn-count"
BENCH = REPO / "BENCHMARKS.md"
BEGIN, END = "<!-- kiln:firmware -->", "<!-- /kiln:firmware -->"

M4 = ("thumbv7em-none-eabihf", "mps2-an386")
OTHER_CORES = [("thumbv6m-none-eabi", "microbit", "Cortex-M0", 16 * 1024),
               ("thumbv8m.main-none-eabihf", "mps3-an547", "Cortex-M55", 512 * 1024)]

EXCLUDED = {
    "tflm_audio_preprocessor_int8": "TFLM custom Signal ops (not builtins)",
}

# ../shared/notes/tflm-cortexm.md names the models it measured by short names.
TFLM_SHORT = {
    "tflm_hello_world_int8": "hello_world",
    "tflm_micro_speech_int8": "micro_speech",
    "mlperf_tiny_kws_dscnn_int8": "kws_dscnn",
    "mlperf_tiny_ic_resnet8_int8": "ic_resnet8",
    "tflm_person_detect_int8": "person_detect",
    "mlperf_tiny_vww_mobilenetv1_025_96_int8": "vww_mbnv1_025",
}


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


def macs(path):
    """CONV_2D out*kh*kw*in_ch + DEPTHWISE_CONV_2D out*kh*kw + FULLY_CONNECTED out*in, plus
    the gate matrix products of UNIDIRECTIONAL_SEQUENCE_LSTM (per step: gates*cells*(in+out))
    and SVDF's feature and time products (batch*filters*(in+memory))."""
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

    total = 0
    for op in g.operators:
        oc = m.operatorCodes[op.opcodeIndex]
        name = names.get(max(oc.builtinCode, oc.deprecatedBuiltinCode), "?")
        ins, outs = list(op.inputs), list(op.outputs)
        if name == "CONV_2D":
            f = shape(ins[1])  # [out_ch, kh, kw, in_ch]
            total += prod(shape(outs[0])) * f[1] * f[2] * f[3]
        elif name == "DEPTHWISE_CONV_2D":
            f = shape(ins[1])  # [1, kh, kw, out_ch]
            total += prod(shape(outs[0])) * f[1] * f[2]
        elif name == "FULLY_CONNECTED":
            f = shape(ins[1])  # [out, in]
            total += prod(shape(outs[0])) * f[-1]
        elif name == "UNIDIRECTIONAL_SEQUENCE_LSTM":
            x = shape(ins[0])  # [batch, time, in] (or time-major; the product is the same)
            steps = prod(x[:-1])
            gates = [shape(i) for i in ins[1:9] if i >= 0]  # [cells, in] and [cells, out]
            total += steps * sum(s[0] * s[1] for s in gates)
            if len(ins) > 16 and ins[16] >= 0:  # projection [out, cells]
                p = shape(ins[16])
                total += steps * p[0] * p[1]
        elif name == "SVDF":
            batch = shape(ins[0])[0]
            feat, time = shape(ins[1]), shape(ins[2])  # [filters, in], [filters, memory]
            total += batch * (feat[0] * feat[1] + time[0] * time[1])
    return total


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
# TFLM numbers


def tflm_notes():
    """{variant: {short model name: {column: value}}} from the notes' markdown tables."""
    if not TFLM_NOTES.exists():
        return {}
    res, variant, header = {}, None, None
    for line in TFLM_NOTES.read_text().splitlines():
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


def render(results, stems, opts, mac, notes, arena_json, meta):
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
    w(f"### Side by side with TFLM (Cortex-M4, same QEMU; Kiln at opt-level {o})")
    w("")
    w("TFLM numbers from `../shared/notes/tflm-cortexm.md` (TFLM 90b983c, GCC 12.2, kernels "
      "-O2, core -Os): `ref` = reference kernels, `cmsis8` = CMSIS-NN int8-only "
      "registrations (its smallest optimized build). TFLM measured six of these models. "
      "*TFLM min arena* = smallest arena its interpreter runs with (Cortex-M4 build; "
      "x86-64 from `tools/data/tflm_arena.json` in parentheses); Kiln needs arena + "
      "persistent. Speed-up > 1 means Kiln executes fewer instructions.")
    w("")
    w("| model | Kiln insns | TFLM ref insns | TFLM cmsis8 insns | speed-up vs ref "
      "| vs cmsis8 | Kiln code B (O3 / Os) | TFLM ref code B | TFLM cmsis8 code B "
      "| Kiln arena+persistent B | TFLM min arena B ref / cmsis8 (x86-64) "
      "| Kiln stack total B | TFLM stack peak B ref / cmsis8 |")
    w("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for stem in stems:
        r = results.get((stem, o))
        if not r or "error" in r:
            continue
        ki = r.get("insns")
        tr = tflm_col(notes, "ref", stem, "insns/Invoke")
        tc = tflm_col(notes, "cmsis8", stem, "insns/Invoke")
        codes = []
        for opt in opts:
            rr = results.get((stem, opt))
            codes.append(str(code_bytes(rr["sections"])) if rr and "sections" in rr else "-")
        col = "code bytes w/o weights (text+rodata+data)"
        ar = tflm_col(notes, "ref", stem, "min arena")
        ac = tflm_col(notes, "cmsis8", stem, "min arena")
        x86 = arena_json.get(stem, {}).get("min_arena")
        arena_m4 = f"{fmt(ar)} / {fmt(ac)}" if ar or ac else "-"
        sr = tflm_col(notes, "ref", stem, "stack peak")
        sc = tflm_col(notes, "cmsis8", stem, "stack peak")
        w(f"| {stem} | {fmt(ki)} | {fmt(tr)} | {fmt(tc)} | {ratio(tr, ki)} | {ratio(tc, ki)} "
          f"| {' / '.join(codes)} | {fmt(tflm_col(notes, 'ref', stem, col))} "
          f"| {fmt(tflm_col(notes, 'cmsis8', stem, col))} "
          f"| {r['arena_bytes'] + r['persistent_bytes']} | {arena_m4} ({fmt(x86)}) "
          f"| {fmt(r['stack_total_bytes'])} | {fmt(sr) if sr else '-'} / {fmt(sc) if sc else '-'} |")
    w("")
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


def render_cores(stems, opt, plugin):
    """Every model that fits, on the Cortex-M0 and Cortex-M55 boards."""
    L = [f"### Other cores (opt-level {opt})", "",
         "The same firmware for `thumbv6m-none-eabi` (`-C target-cpu=cortex-m0`, QEMU "
         "`microbit`: 256 KB flash, 16 KB RAM) and `thumbv8m.main-none-eabihf` "
         "(`-C target-cpu=cortex-m55`, which lets LLVM use the M-profile vector extension "
         "MVE; QEMU `mps3-an547`, 512 KB ITCM as flash, 512 KB DTCM as RAM). Models that do "
         "not fit a board's memory fail to link and are listed below the table.", "",
         "| core (board) | model | match s1 | insns/invoke | code B | weights B "
         "| .bss+.data B | stack invoke B |", "|---|---|:-:|--:|--:|--:|--:|--:|"]
    no_fit = []
    for target, machine, core, _ram in OTHER_CORES:
        for stem in stems:
            r = measure(stem, target, machine, opt, plugin)
            if "error" in r:
                err = "\n".join(r["error"])
                if re.search(r"will not fit|overflowed|does not fit", err):
                    no_fit.append(f"{stem} on {core}")
                    continue
                L.append(f"| {core} ({machine}) | {stem} | build failed | | | | | |")
                print(f"{stem} {core}: BUILD FAILED\n  " + "\n  ".join(r["error"]), flush=True)
                continue
            s = r["sections"]
            print(f"{stem} {core}: {'pass' if r['pass'] else 'FAIL'} insns={r.get('insns')}",
                  flush=True)
            L.append(f"| {core} ({machine}) | {stem} | {'yes (x2)' if r['pass'] else '**NO**'} "
                     f"| {fmt(r.get('insns'))} | {code_bytes(s)} | {s.get('.kiln_weights', 0)} "
                     f"| {s.get('.bss', 0) + s.get('.data', 0)} | {fmt(r['stack_invoke_bytes'])} |")
            if not r["pass"]:
                CORE_FAILURES.append((stem, core))
    if no_fit:
        L += ["", "Do not fit (link error): " + ", ".join(no_fit) + "."]
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
    args = ap.parse_args()
    ensure_venv()

    for tool in ["qemu-system-arm", "cargo", "gcc"]:
        if not shutil.which(tool):
            sys.exit(f"needs {tool}")
    plugin = TARGET_DIR / "qemu-insn-count" / "libfncount.so"
    if not plugin.exists():
        run(["bash", str(PLUGIN_SRC / "build.sh"), str(plugin.parent)])

    if args.models:
        stems = args.models.split(",")
    else:
        stems = sorted(p.stem for p in MODELS.glob("*.tflite") if p.stem not in EXCLUDED)
    opts = args.opt.split(",")
    mac = {s: macs(MODELS / f"{s}.tflite") for s in stems}
    notes = tflm_notes()
    arena_path = REPO / "tools" / "data" / "tflm_arena.json"
    arena_json = json.loads(arena_path.read_text()) if arena_path.exists() else {}

    results = {}
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

    rustc = run(["rustc", "--version"]).stdout.split("(")[0].strip()
    qv = run(["qemu-system-arm", "--version"]).stdout.splitlines()[0]
    qv = re.search(r"version (\S+)", qv).group(1)
    meta = f"{datetime.date.today()}, {rustc}, QEMU {qv}"
    text = render(results, stems, opts, mac, notes, arena_json, meta)

    if not args.no_cores:
        text += "\n\n" + render_cores(stems, opts[0], plugin)

    if args.no_write:
        print(text)
    else:
        write_section(text)
        print(f"wrote {BENCH.relative_to(REPO)} ({BEGIN} ... {END})")
    bad = [k for k, r in results.items() if "error" in r or not r["pass"]] + CORE_FAILURES
    if bad:
        print(f"FAILED: {bad}")
        sys.exit(1)


if __name__ == "__main__":
    main()
