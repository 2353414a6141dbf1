//! Compiles every case of one kernel golden-case bundle into the firmware, as a user's
//! `build.rs` compiles a model: with `kiln_build::Model::compile`.
//!
//! - `KILN_KCASE`: the bundle, `tests/kernel_cases/<name>.kcase` (e.g. `conv_2d_int8`), or a
//!   path to a `.kcase` file. Required.
//! - `KILN_KCASE_RANGE`: `a..b`, the cases `a` to `b - 1` only (to split a bundle over
//!   several firmwares); default every case.
//!
//! For each case `i` it writes to `$OUT_DIR` the model (`case<i>.tflite`), its inputs and
//! TFLM's outputs (`case<i>_in<j>.bin`, `case<i>_out<j>.bin`) and the generated module
//! `case<i>.rs` (with `case<i>.plan.txt` and `.svg`); then `cases.rs`: one module per case
//! (each with its own static arena), the vectors as `include_bytes!` statics and the table
//! `CASES` that `main.rs` runs. Also `memory.x` (the board's memory map, which cortex-m-rt's
//! `link.x` includes) and an empty `device.x`.
//!
//! As in the host test (`tests/kernel_cases.rs`), a bundle must be fully supported: a case
//! kiln-build refuses fails the build, unless it refuses every case of the range as
//! unsupported; then the firmware is built without cases and reports the bundle as
//! unsupported at run time (`RESULT UNSUPPORTED`).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

use kiln_build::ErrorKind;

/// One case of a `.kcase` bundle (format in `tests/kernel_cases/README.md`).
struct Case {
    model: Vec<u8>,
    inputs: Vec<Vec<u8>>,
    outputs: Vec<Vec<u8>>,
}

/// A read position in a bundle.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let s = self
            .bytes
            .get(self.at..self.at.saturating_add(n))
            .ok_or_else(|| format!("truncated at byte {}", self.at))?;
        self.at += n;
        Ok(s)
    }

    fn u32(&mut self) -> Result<usize, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().unwrap()) as usize)
    }

    fn blob(&mut self) -> Result<Vec<u8>, String> {
        let n = self.u32()?;
        Ok(self.take(n)?.to_vec())
    }
}

/// Parses a `.kcase` bundle.
fn parse_kcase(bytes: &[u8]) -> Result<Vec<Case>, String> {
    if bytes.get(..8) != Some(b"KCASE1\0\0".as_slice()) {
        return Err("bad magic (not a KCASE1 bundle)".into());
    }
    let mut cur = Cursor { bytes, at: 8 };
    let count = cur.u32()?;
    let mut cases = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let model = cur.blob()?;
        let n = cur.u32()?;
        let inputs = (0..n).map(|_| cur.blob()).collect::<Result<_, _>>()?;
        let n = cur.u32()?;
        let outputs = (0..n).map(|_| cur.blob()).collect::<Result<_, _>>()?;
        cases.push(Case {
            model,
            inputs,
            outputs,
        });
    }
    if cur.at != bytes.len() {
        return Err(format!("{} trailing bytes", bytes.len() - cur.at));
    }
    Ok(cases)
}

/// Parses `KILN_KCASE_RANGE` (`a..b`) against the bundle's case count.
fn parse_range(s: &str, count: usize) -> Result<Range<usize>, String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("KILN_KCASE_RANGE={s}: expected a..b"))?;
    let num = |t: &str, default: usize| -> Result<usize, String> {
        let t = t.trim();
        if t.is_empty() {
            Ok(default)
        } else {
            t.parse()
                .map_err(|e| format!("KILN_KCASE_RANGE={s}: {t:?}: {e}"))
        }
    };
    let r = num(a, 0)?..num(b, count)?;
    if r.start >= r.end || r.end > count {
        return Err(format!(
            "KILN_KCASE_RANGE={s}: not a non-empty range within the bundle's {count} cases"
        ));
    }
    Ok(r)
}

/// Writes `bytes` to `path` unless it already holds them (so nothing rebuilds needlessly).
fn write(path: &Path, bytes: &[u8]) {
    if fs::read(path).ok().as_deref() != Some(bytes) {
        fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("error(kiln-kernel-cases): {msg}");
    std::process::exit(1)
}

fn main() {
    for var in ["KILN_KCASE", "KILN_KCASE_RANGE"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=memory");

    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());

    // Board memory map, from the target: the Cortex-M55 (QEMU mps3-an547) for Armv8-M
    // Mainline, else the Cortex-M4F (QEMU mps2-an386).
    let target = env::var("TARGET").unwrap_or_default();
    let board = if target.starts_with("thumbv8m.main") {
        "mps3-an547"
    } else {
        "mps2-an386"
    };
    println!("cargo:rustc-env=KILN_KCASE_BOARD={board}");
    let mut memory_x = fs::read_to_string(manifest.join(format!("memory/{board}.x"))).unwrap();
    memory_x.push_str(&fs::read_to_string(manifest.join("memory/sections.x")).unwrap());
    write(&out.join("memory.x"), memory_x.as_bytes());
    // cortex-m-rt's `device` feature includes `device.x` (interrupt handler names of a device
    // crate); the firmware's interrupt table names none.
    write(
        &out.join("device.x"),
        b"/* no device interrupt handlers */\n",
    );
    println!("cargo:rustc-link-search={}", out.display());

    // The bundle and the range of cases.
    let Ok(name) = env::var("KILN_KCASE") else {
        fail("set KILN_KCASE to a bundle of tests/kernel_cases (e.g. KILN_KCASE=conv_2d_int8)");
    };
    let path = if name.ends_with(".kcase") {
        PathBuf::from(&name)
    } else {
        manifest.join(format!("../../tests/kernel_cases/{name}.kcase"))
    };
    let path = fs::canonicalize(&path)
        .unwrap_or_else(|e| fail(format_args!("KILN_KCASE={name}: {}: {e}", path.display())));
    println!("cargo:rerun-if-changed={}", path.display());
    let bundle = path.file_stem().unwrap().to_string_lossy().into_owned();
    let bytes = fs::read(&path).unwrap_or_else(|e| fail(format_args!("{}: {e}", path.display())));
    let cases =
        parse_kcase(&bytes).unwrap_or_else(|e| fail(format_args!("{}: {e}", path.display())));
    let range = match env::var("KILN_KCASE_RANGE") {
        Ok(s) if !s.trim().is_empty() => parse_range(&s, cases.len()).unwrap_or_else(|e| fail(e)),
        _ => 0..cases.len(),
    };
    if range.is_empty() {
        fail(format_args!("{}: no cases", path.display()));
    }

    // Every case through kiln-build, as a user's build.rs would compile its model.
    let mut compiled = Vec::new();
    let mut unsupported = Vec::new();
    let mut errors = Vec::new();
    for i in range.clone() {
        let case = &cases[i];
        let model = out.join(format!("case{i}.tflite"));
        write(&model, &case.model);
        for (kind, list) in [("in", &case.inputs), ("out", &case.outputs)] {
            for (j, b) in list.iter().enumerate() {
                write(&out.join(format!("case{i}_{kind}{j}.bin")), b);
            }
        }
        match kiln_build::Model::new(&model).compile(&format!("case{i}")) {
            Ok(_) => compiled.push(i),
            Err(kiln_build::Error::Model(_, d)) if d.kind == ErrorKind::Unsupported => {
                unsupported.push((i, d.to_string()))
            }
            Err(e) => errors.push(format!("{bundle} case {i}: {e}")),
        }
    }
    if !errors.is_empty() {
        fail(errors.join("\n"));
    }
    if !compiled.is_empty() && !unsupported.is_empty() {
        let list: Vec<String> = unsupported
            .iter()
            .take(5)
            .map(|(i, e)| format!("{bundle} case {i}: {e}"))
            .collect();
        fail(format_args!(
            "{bundle}: kiln-build refuses {} of {} cases as unsupported (a bundle must be \
             supported completely):\n{}",
            unsupported.len(),
            range.len(),
            list.join("\n")
        ));
    }
    if !unsupported.is_empty() {
        println!(
            "cargo:warning={bundle}: every case of {range:?} is unsupported (e.g. case {}: {})",
            unsupported[0].0, unsupported[0].1
        );
    }

    // cases.rs: the modules, the vectors and the table main.rs runs.
    let lit = |p: &Path| format!("{:?}", p.to_str().unwrap());
    let mut rs = String::new();
    writeln!(
        rs,
        "// @generated by build.rs for {bundle}, cases {range:?}."
    )
    .unwrap();
    writeln!(rs, "pub const BUNDLE: &str = {bundle:?};").unwrap();
    writeln!(rs, "pub const FIRST: usize = {};", range.start).unwrap();
    writeln!(rs, "pub const END: usize = {};", range.end).unwrap();
    let reason = unsupported.first().map(|(i, e)| format!("case {i}: {e}"));
    writeln!(rs, "pub const UNSUPPORTED: Option<&str> = {reason:?};").unwrap();
    for &i in &compiled {
        let case = &cases[i];
        writeln!(
            rs,
            "\n// The generated module has the whole API (typed accessors, shape and \
             quantization consts); the runner uses only the byte accessors.\n\
             #[allow(dead_code)]\nmod case{i} {{\n    include!({});\n}}",
            lit(&out.join(format!("case{i}.rs")))
        )
        .unwrap();
        writeln!(rs, "crate::compiled!(case{i}::Model);").unwrap();
        writeln!(
            rs,
            "const _: () = assert!(case{i}::INPUTS == {} && case{i}::OUTPUTS == {});",
            case.inputs.len(),
            case.outputs.len()
        )
        .unwrap();
        for (kind, list) in [("IN", &case.inputs), ("OUT", &case.outputs)] {
            for (j, b) in list.iter().enumerate() {
                let file = out.join(format!("case{i}_{}{j}.bin", kind.to_lowercase()));
                writeln!(
                    rs,
                    "static GOLDEN_{i}_{kind}{j}: [u8; {}] = *include_bytes!({});",
                    b.len(),
                    lit(&file)
                )
                .unwrap();
            }
        }
    }
    writeln!(
        rs,
        "\npub static CASES: [crate::Case; {}] = [",
        compiled.len()
    )
    .unwrap();
    for &i in &compiled {
        let case = &cases[i];
        let refs = |kind: &str, n: usize| -> String {
            (0..n)
                .map(|j| format!("&GOLDEN_{i}_{kind}{j}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(
            rs,
            "    crate::Case {{ index: {i}, inputs: &[{}], outputs: &[{}], run: crate::run::<case{i}::Model> }},",
            refs("IN", case.inputs.len()),
            refs("OUT", case.outputs.len())
        )
        .unwrap();
    }
    writeln!(rs, "];").unwrap();
    write(&out.join("cases.rs"), rs.as_bytes());
}
