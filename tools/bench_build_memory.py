"""Build-memory benchmark: the compiler's peak memory for a crate that includes a large model.

Writes the `build_memory` section of BENCHMARKS.md. Run in the tools venv (it builds the model
with the tflite-micro schema):

  .venv/bin/python tools/bench_build_memory.py [--mb 50] [--no-write]

It writes a FULLY_CONNECTED int8 model with about `--mb` MB of weights into
target/bench-build-memory/, then builds three probe library crates there (own workspace and
target directory, dependencies built first), each once per profile (dev and release), and
reports the peak resident memory of the build (the largest process cargo ran: rustc, with
Kiln's macro inside it):
  empty        `pub fn f() -> u8` (kiln linked): the compiler's own floor
  bare static  `pub static W: [u8; N] = *include_bytes!("model")`: the least any Rust crate
               holding the bytes costs (no Kiln)
  kiln         `pub mod model { kiln::include_model!("model"); }` (public, so the weights are
               compiled as in a firmware that uses them)
"""

import argparse
import resource
import shutil
import subprocess
import sys

import numpy as np

import tflite_common as tc
from bench_build_time import clean_env, log, machine, write_section
from gen_hostile_models import Model, opts, tensor

ROOT = tc.REPO / "target" / "bench-build-memory"
CRATE = "kiln-build-memory-probe"


def big_model(mb):
    n_in = 7168
    n_out = max(1, mb * 1_000_000 // n_in)
    m = Model()
    x = m.add(tensor([1, n_in], "int8", "input", 0.05, 0))
    w = m.add(tensor([n_out, n_in], "int8", "weights", 0.01, 0),
              np.random.default_rng(1).integers(-127, 128, size=(n_out, n_in)).astype(np.int8))
    y = m.add(tensor([1, n_out], "int8", "output", 0.1, 0))
    m.op("FULLY_CONNECTED", [x, w, -1], [y], opts("FullyConnectedOptions"))
    return m.bytes([x], [y]), n_out * n_in


SOURCES = {
    "empty": "pub fn f() -> u8 {\n    7\n}\n",
    "bare static": "pub static W: [u8; %(len)d] = *include_bytes!(\"%(path)s\");\n",
    "kiln": "pub mod model {\n    kiln::include_model!(\"%(path)s\");\n}\n",
}


def peak_rss_kb(args, cwd, env):
    """Runs cargo in a fresh child whose only child is cargo: the peak RSS of its largest
    descendant (rustc), in KiB."""
    probe = ("import resource, subprocess, sys\n"
             "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "sys.stderr.write(r.stderr)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "sys.exit(r.returncode)\n")
    r = subprocess.run([sys.executable, "-c", probe, "cargo", *args], cwd=cwd, env=env,
                       capture_output=True, text=True)
    if r.returncode != 0 or f"Compiling {CRATE}" not in r.stderr:
        raise SystemExit(f"cargo {' '.join(args)} failed:\n{r.stderr[-3000:]}")
    return int(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=50, help="MB of weights")
    ap.add_argument("--no-write", action="store_true", help="do not write BENCHMARKS.md")
    args = ap.parse_args()
    ROOT.mkdir(parents=True, exist_ok=True)
    data, weights = big_model(args.mb)
    model = ROOT / "big.tflite"
    model.write_bytes(data)
    crate = ROOT / "probe"
    (crate / "src").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text(f"""[package]
name = "{CRATE}"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
kiln = {{ path = "{tc.REPO}" }}
""")
    shutil.copy(tc.REPO / "Cargo.lock", crate / "Cargo.lock")
    env = clean_env(ROOT / "target")
    lib = crate / "src" / "lib.rs"
    rows = []
    for profile in ("debug", "release"):
        flag = ["--release"] if profile == "release" else []
        lib.write_text(SOURCES["empty"])
        subprocess.run(["cargo", "build", *flag], cwd=crate, env=env, capture_output=True,
                       check=True)
        for name, src in SOURCES.items():
            lib.write_text(src % {"len": len(data), "path": model})
            subprocess.run(["cargo", "clean", "-p", CRATE, *flag], cwd=crate, env=env,
                           capture_output=True, check=True)
            kb = peak_rss_kb(["build", *flag], crate, env)
            log(f"{profile} {name}: {kb / 1024:.0f} MiB")
            rows.append((profile, name, kb))
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    mb = weights / 1e6
    body = (
        "## Build memory\n\n"
        "Written by `.venv/bin/python tools/bench_build_memory.py`. A FULLY_CONNECTED int8 model "
        f"with {weights:,} bytes ({mb:.1f} MB) of weights, included by a probe library crate "
        "(own workspace, dependencies built first); peak resident memory of the build (the "
        "largest process: rustc with Kiln's macro inside it). *empty*: the crate without the "
        "model (the compiler's floor); *bare static*: `pub static W: [u8; N] = "
        "*include_bytes!(model)`, the least any Rust crate holding the bytes costs; *kiln*: "
        "`pub mod model { kiln::include_model!(model); }`. Kiln reads each weight buffer from the file with "
        "`include_bytes!` at its offset (before: as byte-string literals, 1,023 MB in debug and "
        "1,188 MB in release for this model). In release, rustc's crate-local ThinLTO over 16 "
        "codegen units holds the constant several times (the bare static peaks at about 310 "
        "MB with `lto = \"off\"` or `codegen-units = 1`). " + rustc + ".\n\n"
        f"Machine: {machine()}.\n\n"
        "| profile | crate | peak MB | x weights |\n|---|---|--:|--:|\n")
    for profile, name, kb in rows:
        body += f"| {profile} | {name} | {kb * 1024 / 1e6:.0f} | {kb * 1024 / weights:.1f} |\n"
    body += "\n"
    print(body)
    if not args.no_write:
        write_section("build_memory", body)
        log("wrote the build_memory section of BENCHMARKS.md")


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
