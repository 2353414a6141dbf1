"""Instructions per invoke() of every public model on emulated RV32 cores (riscv32imc,
riscv32imac), written into BENCHMARKS.md's `riscv` section next to the Cortex-M4's.

For each model of ../shared/models and each target, builds examples/firmware (its own cargo
workspace; Kiln's RISC-V microkernels, `kiln_arch = "riscv"`) with KILN_MODEL=<stem>, runs it
on `qemu-system-riscv32 -machine virt` (the CPU restricted to the target's extensions) and
requires `RESULT PASS` (both invokes equal TFLM's outputs), then counts instructions as the
Cortex-M benchmark does: the firmware exits at semihosting stop point 1 (just before the first
invoke()) and 2 (just after it), and the QEMU TCG plugin of ../shared/tools/qemu-insn-count
(`libfncount.so`, built into target/qemu-insn-count if missing) prints the instructions
executed; the difference is one invoke() plus ~5 instructions of call and stop check.
Execution is deterministic.

MACs and the Cortex-M4's instructions per MAC are read from BENCHMARKS.md's `firmware`
section (its opt-level "s" table, the firmware's profile), so both columns count the same
MACs. Standard library only. Usage, from the repository root:

    python3 tools/riscv_bench.py            # measure, print, write the section
    python3 tools/riscv_bench.py --dry-run  # measure and print only
    python3 tools/riscv_bench.py --models tflm_person_detect_int8 --dry-run

About 3 minutes on the 2-core machine with the firmware's target directory
(target/firmware-riscv, shared with .ci/firmware_riscv.sh) built.
"""

import argparse
import datetime
import os
import re
import subprocess
import sys
from pathlib import Path

from firmware_bench import llvm_bin

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "examples" / "firmware"
SHARED = Path(os.environ.get("KILN_SHARED", ROOT.parent / "shared"))
MODELS = Path(os.environ.get("KILN_MODELS", SHARED / "models"))
TARGET_DIR = Path(os.environ.get("KILN_FIRMWARE_RISCV_TARGET", ROOT / "target" / "firmware-riscv"))
PLUGIN_DIR = ROOT / "target" / "qemu-insn-count"
BENCH = ROOT / "BENCHMARKS.md"
BEGIN, END = "<!-- kiln:riscv -->", "<!-- /kiln:riscv -->"
# Target -> QEMU -cpu: only the target's extensions.
TARGETS = {
    "riscv32imc-unknown-none-elf": "rv32,a=off,f=off,d=off",
    "riscv32imac-unknown-none-elf": "rv32,f=off,d=off",
}
# The models the issue names as conv-heavy (target: at most 4 instructions per MAC).
CONV_HEAVY = [
    "tflm_person_detect_int8",
    "mlperf_tiny_vww_mobilenetv1_025_96_int8",
    "mlperf_tiny_ic_resnet8_int8",
    "mlperf_tiny_kws_dscnn_int8",
]


def run(cmd, env=None, cwd=None):
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def qemu(target, elf, stop=None):
    """Runs the firmware; with `stop`, exits at that stop point under the counting plugin and
    returns the instructions executed; else returns the output."""
    arg = "enable=on,target=native" + (f",arg=fw,arg=stop={stop}" if stop else "")
    cmd = ["timeout", "120", "qemu-system-riscv32", "-machine", "virt", "-bios", "none",
           "-cpu", TARGETS[target], "-nographic", "-monitor", "none",
           "-semihosting-config", arg]
    if stop:
        cmd += ["-plugin", str(PLUGIN_DIR / "libfncount.so"), "-d", "plugin"]
    r = subprocess.run(cmd + ["-kernel", str(elf)], capture_output=True, text=True)
    out = r.stdout + r.stderr
    if not stop:
        return r.returncode, out
    m = re.search(r"insns total (\d+)", out)
    if r.returncode != 0 or not m:
        sys.exit(f"{elf} stop={stop}: exit {r.returncode}\n{out[-2000:]}")
    return int(m.group(1))


def measure(stem, target):
    env = dict(os.environ, KILN_MODEL=stem, KILN_MODELS=str(MODELS),
               CARGO_TARGET_DIR=str(TARGET_DIR))
    for var in ("KILN_BOARD", "KILN_GOLDEN", "KILN_REGIONS", "KILN_RAM_BUDGET", "KILN_LAYERS",
                "KILN_EXTRAM", "KILN_KERNELS"):
        env.pop(var, None)
    run(["cargo", "build", "--release", "--target", target], env=env, cwd=FIRMWARE)
    elf = TARGET_DIR / target / "release" / "kiln-firmware"
    rc, out = qemu(target, elf)
    ok = rc == 0 and "RESULT PASS" in out
    before, after = qemu(target, elf, 1), qemu(target, elf, 2)
    return {"ok": ok, "insns": after - before, "text": text_bytes(elf)}


def text_bytes(elf):
    """Bytes of the ELF's `.text` (`llvm-size -A`): the code, without the model's constants."""
    out = run([llvm_bin("llvm-size"), "-A", str(elf)]).stdout
    return sum(int(m.group(1)) for m in re.finditer(r"^\.text\S*\s+(\d+)", out, re.M))


def m4_table():
    """model -> (MACs, M4 insns/invoke, M4 insns/MAC) from the firmware section's opt-level
    "s" table of BENCHMARKS.md (empty if it is not there)."""
    text = BENCH.read_text()
    sec = text.split("<!-- kiln:firmware -->", 1)[-1].split("<!-- /kiln:firmware -->", 1)[0]
    part = sec.split('opt-level "s"', 1)[-1] if 'opt-level "s"' in sec else ""
    rows = {}
    header = None
    for line in part.splitlines():
        if not line.startswith("|"):
            if header:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set(cells[0]) <= set("-: "):
            continue
        try:
            row = dict(zip(header, cells))
            rows[row["model"]] = (int(row["MACs"]), int(row["insns/invoke"]), row["insns/MAC"])
        except (KeyError, ValueError):
            continue
    return rows


def render(results, stems, m4, meta):
    out = [BEGIN, "## Firmware on RISC-V (riscv32imc, riscv32imac; QEMU virt)", ""]
    out.append(
        f"Written by `python3 tools/riscv_bench.py` ({meta}). Each public model is compiled by "
        "`include_model!` into `examples/firmware` (riscv-rt, fat LTO, one codegen unit, "
        "`panic = \"abort\"`, opt-level \"s\": the firmware's profile) for "
        "`riscv32imc-unknown-none-elf` and `riscv32imac-unknown-none-elf` (ESP32-C3 and "
        "ESP32-C6-class cores), where Kiln's kernels run on its RISC-V microkernels "
        "(`kernels/src/arch/riscv.rs`: one `MUL` and one `ADD` per MAC, the sums in registers; "
        "pointwise convolutions four pixels by four channels with the input depth a constant, "
        "each `LB` used four times, other convolutions two pixels by four channels; depthwise "
        "two pixels by four channels, the weights loaded once for both; the inner loops as "
        "`asm!` blocks where LLVM's scheduler spilled), and "
        "run on `qemu-system-riscv32 -machine virt` with the CPU restricted to the target's "
        "extensions. *match*: both invokes equal TFLM's outputs byte for byte. *insns/invoke*: "
        "instructions of one `invoke()` (QEMU TCG plugin `../shared/tools/qemu-insn-count`, "
        "count at the stop point after the first `invoke()` less the count at the one before "
        "it, as the Cortex-M table). *MACs* and the Cortex-M4's instructions (opt-level \"s\", "
        "DSP kernels with `SMLAD`) from the firmware section above. Instructions are not "
        "cycles (an ESP32-C3 takes one cycle for most, more for loads, taken branches and "
        "`MUL` on some cores). *.text B*: the code of the riscv32imc firmware (`llvm-size -A`: "
        "`invoke()`, the kernels, riscv-rt and the harness; the model's constants are in "
        "`.rodata`); each input depth a pointwise convolution uses instantiates its own "
        "microkernel (about 2.2 KB), so the models with many depths have the most code.")
    out += ["", "| model | MACs | match | imc insns/invoke | imc insns/MAC | imac insns/invoke "
            "| imac insns/MAC | M4 insns/MAC | imc / M4 | imc .text B |",
            "|---|--:|:-:|--:|--:|--:|--:|--:|--:|--:|"]

    def per_mac(n, macs):
        return f"{n / macs:.2f}" if macs else "-"

    for stem in stems:
        macs, m4_insns, m4_mac = m4.get(stem, (0, 0, "-"))
        a = results[(stem, "riscv32imc-unknown-none-elf")]
        b = results[(stem, "riscv32imac-unknown-none-elf")]
        match = "yes (x2)" if a["ok"] and b["ok"] else "**NO**"
        ratio = f"{a['insns'] / m4_insns:.2f}" if m4_insns else "-"
        out.append(f"| {stem} | {macs or '-'} | {match} | {a['insns']} | "
                   f"{per_mac(a['insns'], macs)} | {b['insns']} | {per_mac(b['insns'], macs)} | "
                   f"{m4_mac} | {ratio} | {a['text']} |")
    worst = []
    for stem in CONV_HEAVY:
        if stem in stems and m4.get(stem):
            macs = m4[stem][0]
            worst += [(results[(stem, t)]["insns"] / macs, stem, t) for t in TARGETS]
    if worst:
        top = max(worst)
        verdict = "met" if top[0] <= 4 else "NOT met"
        each = ", ".join(f"{s} {results[(s, 'riscv32imc-unknown-none-elf')]['insns'] / m4[s][0]:.2f}"
                         for s in CONV_HEAVY if s in stems and m4.get(s))
        out += ["", f"**At most 4 instructions per MAC on the conv-heavy models** (riscv32imc and "
                f"riscv32imac): {verdict}; imc: {each}; worst {top[0]:.2f} ({top[1]} on {top[2]})."]
    out.append(END)
    return "\n".join(out)


def write_section(text):
    doc = BENCH.read_text()
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        doc = head + text + rest.split(END, 1)[1]
    else:
        doc = doc.rstrip("\n") + "\n" + text + "\n"
    BENCH.write_text(doc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="*", help="model stems (default: every public model)")
    ap.add_argument("--dry-run", action="store_true", help="print, do not write BENCHMARKS.md")
    args = ap.parse_args()
    stems = args.models or sorted(p.stem for p in MODELS.glob("*.tflite"))
    if not (PLUGIN_DIR / "libfncount.so").exists():
        run(["bash", str(SHARED / "tools" / "qemu-insn-count" / "build.sh"), str(PLUGIN_DIR)])
    m4 = m4_table()
    results = {}
    for target in TARGETS:
        for stem in stems:
            results[(stem, target)] = r = measure(stem, target)
            macs = m4.get(stem, (0,))[0]
            print(f"{target:30} {stem:45} {'PASS' if r['ok'] else 'FAIL'} {r['insns']:>10}"
                  + (f" {r['insns'] / macs:6.2f}/MAC" if macs else ""), flush=True)
    rustc = run(["rustc", "--version"]).stdout.split(" (")[0]
    qv = run(["qemu-system-riscv32", "--version"]).stdout.splitlines()[0].split(" (")[0]
    meta = f"{datetime.date.today().isoformat()}, {rustc}, {qv}"
    text = render(results, stems, m4, meta)
    print(text)
    if not args.dry_run:
        write_section(text)
        print(f"wrote the riscv section of {BENCH}")
    if not all(r["ok"] for r in results.values()):
        sys.exit("some model did not match TFLM")


if __name__ == "__main__":
    main()
