"""Build-time benchmark: the compile time `kiln::include_model!` adds to a crate.

Writes the `build_time` section of BENCHMARKS.md. Standard library only (no venv needed):

  python3 tools/bench_build_time.py [--reps N] [--models STEM,STEM] [--no-write] [--tmp]

It creates a probe binary crate (its own workspace and target directory, Cargo.lock copied
from the repository) that depends on `kiln` by path, in target/bench-build-time/ (kept, so
the dependencies stay built for the next run; --tmp: a temporary directory, removed), and
builds it in two variants:
  without  `fn main` that only prints a black-boxed byte (kiln linked, no model)
  <model>  the same plus `mod model { kiln::include_model!("<abs path>"); }` and a main that
           takes the model, writes its first input, invokes and prints an output byte
for each profile (release and dev/debug) and each of two profile configurations:
  default         what a new crate gets (build scripts and proc macros, i.e. Kiln's planner
                  and emitter inside `include_model!`, compiled at opt-level 0)
  build-override  `[profile.<p>.build-override] opt-level = 2` (as examples/firmware sets)
Dependencies are built first (untimed); each timed build is `cargo clean -p <crate>` of that
profile then `cargo build`, so only the probe crate is compiled (macro expansion, type
checking, code generation, linking; each must print `Compiling <crate>`). Variants are
interleaved over N repetitions (default 5);
the reported times are medians; added = median(with model) - median(without), in wall time
and in CPU time (user + system of cargo and its children).
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("KILN_SHARED", REPO.parent / "shared"))
CRATE = "kiln-build-time-probe"
DEFAULT_MODELS = ["tflm_dtln_noise_suppression", "tflm_person_detect_int8"]

MAIN_WITHOUT = """fn main() {
    let x: u8 = std::hint::black_box(7);
    println!("{x}");
}
"""

MAIN_WITH = """mod model {
    kiln::include_model!(%s);
}

fn main() {
    let mut m = model::Model::take().unwrap();
    m.input_bytes_mut(0).fill(std::hint::black_box(0));
    m.invoke();
    println!("{}", m.output_bytes(0)[0]);
}
"""


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs (`nproc`), {cpu} ({os.uname().machine}), shared with other builds"


def write_section(name, body):
    """Replaces the text between <!-- kiln:NAME --> and <!-- /kiln:NAME --> in BENCHMARKS.md
    (appending the section if missing), as planner/benches/planning.rs does."""
    path = REPO / "BENCHMARKS.md"
    try:
        old = path.read_text()
    except OSError:
        old = "# Benchmarks\n\nWritten by the benchmarks; do not edit by hand.\n"
    start, end = f"<!-- kiln:{name} -->", f"<!-- /kiln:{name} -->"
    section = f"{start}\n{body}{end}"
    a, b = old.find(start), old.find(end)
    if a >= 0 and b > a:
        new = old[:a] + section + old[b + len(end):]
    else:
        new = old.rstrip() + "\n" + section + "\n"
    path.write_text(new)


def clean_env(target):
    """The environment without what an enclosing cargo sets, with a private target dir."""
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("CARGO_") or k in ("RUSTFLAGS", "RUSTC_WRAPPER", "RUSTC",
                                                    "RUSTDOC", "OUT_DIR", "TARGET", "HOST"))}
    for keep in ("CARGO_HOME",):
        if keep in os.environ:
            env[keep] = os.environ[keep]
    env["CARGO_TARGET_DIR"] = str(target)
    env["CARGO_INCREMENTAL"] = "0"
    env["CARGO_TERM_COLOR"] = "never"
    return env


def cargo(args, cwd, env):
    """Runs cargo; returns (wall seconds, CPU seconds of cargo and everything it ran)."""
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(["cargo", *args], cwd=cwd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"cargo {' '.join(args)} failed:\n{r.stderr[-4000:]}")
    if args[0] == "build" and f"Compiling {CRATE}" not in r.stderr:
        raise SystemExit(f"cargo {' '.join(args)} did not compile {CRATE}:\n{r.stderr[-2000:]}")
    return dt, (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)


def manifest(override):
    text = f"""[package]
name = "{CRATE}"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
kiln = {{ path = "{REPO}" }}
"""
    if override:
        text += """
[profile.release.build-override]
opt-level = 2

[profile.dev.build-override]
opt-level = 2
"""
    return text


def measure(root, override, models, reps):
    crate = root / ("override" if override else "default")
    (crate / "src").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text(manifest(override))
    shutil.copy(REPO / "Cargo.lock", crate / "Cargo.lock")
    env = clean_env(root / ("target-override" if override else "target-default"))
    main = crate / "src" / "main.rs"
    variants = {"without": MAIN_WITHOUT}
    for m in models:
        variants[m] = MAIN_WITH % ('"' + str(SHARED / "models" / f"{m}.tflite") + '"')
    results = {}
    for profile in ("release", "debug"):
        flag = ["--release"] if profile == "release" else []
        exe = Path(env["CARGO_TARGET_DIR"]) / profile / CRATE
        # Untimed: dependencies (and one build of every variant, which also checks it compiles).
        for name, src in variants.items():
            main.write_text(src)
            t, _ = cargo(["build", *flag], crate, env)
            log(f"[{'override' if override else 'default'} {profile}] warm-up {name}: {t:.1f} s")
        times = {name: [] for name in variants}
        cpus = {name: [] for name in variants}
        sizes = {}
        for r in range(reps):
            for name, src in variants.items():
                main.write_text(src)
                cargo(["clean", "-p", CRATE, *flag], crate, env)
                t, c = cargo(["build", *flag], crate, env)
                times[name].append(t)
                cpus[name].append(c)
                sizes[name] = exe.stat().st_size
                log(f"[{'override' if override else 'default'} {profile}] rep {r + 1}/{reps} "
                    f"{name}: {t:.2f} s wall, {c:.2f} s CPU")
        results[profile] = {n: (statistics.median(times[n]), statistics.median(cpus[n]), sizes[n])
                            for n in variants}
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="timed builds per variant")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help="comma-separated model stems in ../shared/models")
    ap.add_argument("--no-write", action="store_true", help="do not write BENCHMARKS.md")
    ap.add_argument("--tmp", action="store_true",
                    help="work in a temporary directory (removed) instead of target/bench-build-time")
    args = ap.parse_args()
    models = [m for m in args.models.split(",") if m]
    for m in models:
        if not (SHARED / "models" / f"{m}.tflite").exists():
            raise SystemExit(f"no model {SHARED / 'models' / (m + '.tflite')}")
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    if args.tmp:
        root = Path(tempfile.mkdtemp(prefix="kiln-build-time-"))
    else:
        root = REPO / "target" / "bench-build-time"
        root.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    try:
        res = {ov: measure(root, ov, models, args.reps) for ov in (False, True)}
    finally:
        if args.tmp:
            shutil.rmtree(root, ignore_errors=True)
    rows = []
    for ov in (False, True):
        for profile in ("release", "debug"):
            r = res[ov][profile]
            base, base_cpu, base_size = r["without"]
            for m in models:
                t, c, size = r[m]
                kb = (SHARED / "models" / f"{m}.tflite").stat().st_size / 1000
                rows.append(
                    f"| {m} ({kb:.0f} kB) | {profile} | {'build-override opt 2' if ov else 'default'} "
                    f"| {base:.2f} | {t:.2f} | **{t - base:+.2f}** | {c - base_cpu:+.2f} "
                    f"| {size - base_size:+d} |"
                )
    total = time.time() - t0
    body = (
        "## Build time\n\n"
        "Written by `python3 tools/bench_build_time.py` (standard library only). A probe "
        "binary crate depending on `kiln` by path (own workspace and target directory in "
        "`target/bench-build-time/`, the repository's Cargo.lock) is built without and with one "
        "`kiln::include_model!(\"<model>\")` line (plus a `main` that invokes the model); "
        "dependencies are built first, untimed; each timed build is `cargo clean -p` of the "
        "crate then `cargo build [--release]` (wall time: macro expansion with Kiln's reader, "
        "planner, verifier and emitter, type checking, code generation, linking; "
        "`CARGO_INCREMENTAL=0`). Added = median(with model) − median(without), in wall time "
        "and in CPU time (user + system of cargo and everything it ran, less sensitive to the "
        "load of the shared machine). Profile "
        "configuration: *default* = a new crate's profiles (build scripts and proc macros, "
        "hence Kiln's planner inside the macro, are compiled at opt-level 0); *build-override "
        "opt 2* = `[profile.<p>.build-override] opt-level = 2` (as `examples/firmware` sets). "
        "Binary Δ = size of the executable with the model minus without (it holds the "
        f"weights; debug executables also carry debug info). {rustc}.\n\n"
        f"Machine: {machine()}. Medians of {args.reps} builds per variant from one run "
        f"(variants interleaved; {total / 60:.0f} min in all); cargo runs at most 2 jobs "
        "and the cores are shared with other builds: wall times vary by a few tenths of a "
        "second from build to build, CPU times by about 0.05 s.\n\n"
        "| model | profile | profile configuration | without s | with s | added s | added CPU s | binary Δ B |\n"
        "|---|---|---|--:|--:|--:|--:|--:|\n" + "\n".join(rows) + "\n\n"
    )
    print(body)
    if not args.no_write:
        write_section("build_time", body)
        log("wrote the build_time section of BENCHMARKS.md")


if __name__ == "__main__":
    sys.exit(main())
