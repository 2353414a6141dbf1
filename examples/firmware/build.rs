//! Chooses the board's memory map (from the target) and the model (from `KILN_MODEL`).
//!
//! Writes `$OUT_DIR/memory.x` (board MEMORY + `memory/sections.x`), which cortex-m-rt's
//! `link.x` includes, and `$OUT_DIR/model.rs`: `include_model!` of the chosen `.tflite` and
//! TFLM's golden sample s1 (`s1_in<i>.bin`, `s1_out<i>.bin`) as statics.
//!
//! - `KILN_MODEL`: a model stem in the models directory (`tflm_person_detect_int8`), a stem
//!   under it (`all_outputs/tflm_person_detect_int8`: the every-layer variant) or a path to a
//!   `.tflite`; default `tflm_hello_world_int8`. The goldens of `<dir>/<stem>.tflite` are in
//!   `<dir>/golden/<stem>/`, except for a model in a directory named `all_outputs`, whose are
//!   in `<dir>/../golden_all/<stem>/` (the layout of `../shared/models`).
//! - `KILN_GOLDEN`: a directory to read the `s1_*.bin` from instead (e.g. an edited copy, to
//!   see a mismatch caught).
//! - `KILN_MODELS`: the models directory; default `<repo>/../shared/models`
//!   (`$KILN_SHARED/models` if `KILN_SHARED` is set, as the host tests).
//! - `KILN_BOARD`: `mps2-an386`, `microbit`, `mps3-an547` or `qemu-virt`; default from the
//!   target (thumbv7em -> mps2-an386, thumbv6m -> microbit, thumbv8m.main -> mps3-an547,
//!   riscv32 -> qemu-virt).
//! - `KILN_REGIONS=1` (mps2-an386 only): the memory map of `memory/mps2-an386-regions.x`:
//!   `include_model!(..., regions = [(".kiln_bram", 16 KB), (".kiln_psram", 1 MB)])`, the
//!   arena split over the board's block RAM and PSRAM (two memories apart from the RAM of
//!   `.data`, `.bss` and the stack); the firmware checks that each region's static lies in
//!   its memory.
//! - `KILN_RAM_BUDGET`: the RAM budget in bytes instead of the board's RAM less 4 KB (e.g.
//!   `kiln plan --min-ram`'s arena, which Kiln then meets by running the first operators in
//!   strips of rows).
//! - `KILN_LAYERS=1`: every layer in debug mode: the model compiled with
//!   `preserve_all_tensors = true`, and `LAYERS` the tensor index and TFLM's sha256 (sample
//!   s1) of every operator-produced tensor, from `layers.json` in the golden directory (the
//!   format of `tools/gen_realworld_golden.py`, `tests/realworld/<stem>/`); the firmware
//!   hashes each tensor's bytes after `invoke()` and compares.
//! - `KILN_STREAMED=1`: the model compiled with `streamed_input = true` (cfg
//!   `kiln_streamed`): `invoke` reads the input's rows from the golden input in flash
//!   (`kiln::stream::InMemory`), strip by strip, instead of the input in the arena.
//! - `KILN_EXTRAM=1`: the arena in the board's external RAM (`link_section = ".kiln_ext"`,
//!   the `EXTRAM` memory of `memory/<board>.x`: the mps2-an386's PSRAM, the mps3-an547's DDR;
//!   16 MB), for arenas larger than RAM (an every-layer build of a large model).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    for var in [
        "KILN_MODEL",
        "KILN_MODELS",
        "KILN_SHARED",
        "KILN_BOARD",
        "KILN_GOLDEN",
        "KILN_REGIONS",
        "KILN_RAM_BUDGET",
        "KILN_LAYERS",
        "KILN_EXTRAM",
        "KILN_STREAMED",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=memory");

    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let target = env::var("TARGET").unwrap();

    // Board memory map.
    let board = env::var("KILN_BOARD").unwrap_or_else(|_| {
        if target.starts_with("riscv32") {
            "qemu-virt".into()
        } else if target.starts_with("thumbv6m") {
            "microbit".into()
        } else if target.starts_with("thumbv8m.main") {
            "mps3-an547".into()
        } else {
            "mps2-an386".into()
        }
    });
    let regions = env::var("KILN_REGIONS").is_ok_and(|v| !v.is_empty() && v != "0");
    assert!(
        !regions || board == "mps2-an386",
        "KILN_REGIONS: the memory map is for the mps2-an386 (thumbv7em), not {board}"
    );
    let mem = manifest.join("memory").join(if regions {
        format!("{board}-regions.x")
    } else {
        format!("{board}.x")
    });
    let mut memory_x = fs::read_to_string(&mem)
        .unwrap_or_else(|e| panic!("KILN_BOARD={board}: {}: {e}", mem.display()));
    memory_x.push_str(&fs::read_to_string(manifest.join("memory/sections.x")).unwrap());
    fs::write(out.join("memory.x"), memory_x).unwrap();
    // cortex-m-rt's `device` feature includes `device.x` (interrupt handler names of a device
    // crate); the firmware's interrupt table names none.
    fs::write(out.join("device.x"), "/* no device interrupt handlers */\n").unwrap();
    println!("cargo:rustc-link-search={}", out.display());

    // Model and golden sample.
    let models = env::var_os("KILN_MODELS")
        .map(PathBuf::from)
        .or_else(|| env::var_os("KILN_SHARED").map(|s| PathBuf::from(s).join("models")))
        .unwrap_or_else(|| manifest.join("../../../shared/models"));
    let model = env::var("KILN_MODEL").unwrap_or_else(|_| "tflm_hello_world_int8".into());
    let path = if model.ends_with(".tflite") {
        PathBuf::from(&model)
    } else {
        models.join(format!("{model}.tflite"))
    };
    let path = fs::canonicalize(&path)
        .unwrap_or_else(|e| panic!("KILN_MODEL={model}: {}: {e}", path.display()));
    let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
    let dir = path.parent().unwrap();
    // The every-layer variants (`all_outputs/<stem>.tflite`) have their goldens in
    // `golden_all/<stem>/` beside `all_outputs/`; a model elsewhere in `golden/<stem>/`.
    let all_outputs = dir.file_name().is_some_and(|d| d == "all_outputs");
    let name = if all_outputs {
        format!("all_outputs/{stem}")
    } else {
        stem.clone()
    };
    let golden = match env::var_os("KILN_GOLDEN") {
        Some(g) => PathBuf::from(g),
        None if all_outputs => dir.parent().unwrap().join("golden_all").join(&stem),
        None => dir.join("golden").join(&stem),
    };
    let files = |kind: &str| -> Vec<PathBuf> {
        (0..)
            .map(|i| golden.join(format!("s1_{kind}{i}.bin")))
            .take_while(|p| p.exists())
            .collect()
    };
    let (ins, outs) = (files("in"), files("out"));
    assert!(
        !ins.is_empty() && !outs.is_empty(),
        "{}: no s1_in0.bin / s1_out0.bin",
        golden.display()
    );

    for p in ins.iter().chain(&outs) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    println!("cargo:rerun-if-changed={}", golden.display());

    let mut rs = String::new();
    let lit = |p: &Path| format!("{:?}", p.to_str().unwrap());
    writeln!(
        rs,
        "// @generated by build.rs for {name} on {board}, goldens from {}.",
        golden.display()
    )
    .unwrap();
    // The board's RAM less 4 KB (stack, harness) as the RAM budget: Kiln takes its fastest
    // plan that fits (on the microbit's 16 KB, e.g., kws_dscnn's convolutions run in place).
    let flag = |var: &str| env::var(var).is_ok_and(|v| !v.is_empty() && v != "0");
    let (layers, extram) = (flag("KILN_LAYERS"), flag("KILN_EXTRAM"));
    assert!(
        !extram || board != "microbit",
        "KILN_EXTRAM: the microbit has no external RAM"
    );
    let ram = match board.as_str() {
        "microbit" => 16 * 1024,
        _ if extram => 16 * 1024 * 1024 + 4096,
        _ => 4 * 1024 * 1024,
    };
    // With KILN_REGIONS: the memory map of memory/mps2-an386-regions.x, fastest first, and
    // `regions()`: each region's section as linked, its memory, and the bytes the model uses.
    let mut map = if regions {
        r#", regions = [(".kiln_bram", 16 * 1024), (".kiln_psram", 1024 * 1024)]"#
    } else {
        ""
    }
    .to_string();
    if extram {
        map.push_str(r#", link_section = ".kiln_ext""#);
    }
    if layers {
        map.push_str(", preserve_all_tensors = true");
    }
    println!("cargo::rustc-check-cfg=cfg(kiln_streamed)");
    if flag("KILN_STREAMED") {
        map.push_str(", streamed_input = true");
        println!("cargo::rustc-cfg=kiln_streamed");
    }
    let budget = match env::var("KILN_RAM_BUDGET") {
        Ok(b) => b
            .parse::<usize>()
            .unwrap_or_else(|e| panic!("KILN_RAM_BUDGET={b}: {e}")),
        Err(_) => ram - 4096,
    };
    writeln!(
        rs,
        "kiln::include_model!({}, ram_budget = {budget}{map});",
        lit(&path),
    )
    .unwrap();
    if regions {
        rs.push_str(
            r#"unsafe extern "C" {
    static __kiln_bram_start: u8;
    static __kiln_bram_end: u8;
    static __kiln_psram_start: u8;
    static __kiln_psram_end: u8;
}
/// Per region: name, its section's start and end as linked, its memory (start, length), and
/// the bytes of the model's arena in it.
pub fn regions() -> [(&'static str, usize, usize, (usize, usize), usize); 2] {
    [
        (
            "BRAM",
            &raw const __kiln_bram_start as usize,
            &raw const __kiln_bram_end as usize,
            (0x0100_0000, 16 * 1024),
            ARENA0_BYTES,
        ),
        (
            "PSRAM",
            &raw const __kiln_psram_start as usize,
            &raw const __kiln_psram_end as usize,
            (0x2100_0000, 16 * 1024 * 1024),
            ARENA1_BYTES,
        ),
    ]
}
"#,
        );
    } else {
        rs.push_str(
            "/// No memory map: one arena in RAM.
             pub fn regions() -> [(&'static str, usize, usize, (usize, usize), usize); 0] {
    []
}
",
        );
    }
    // Every layer (KILN_LAYERS): tensor index and TFLM's sha256 of sample s1, per layer.
    let mut table = Vec::new();
    if layers {
        let file = golden.join("layers.json");
        println!("cargo:rerun-if-changed={}", file.display());
        let text = fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("KILN_LAYERS: {}: {e}", file.display()));
        let json: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("KILN_LAYERS: {}: {e}", file.display()));
        let digests = json["sha256"]["1"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no sha256 of sample 1", file.display()));
        let entries = json["layers"].as_array().unwrap();
        assert_eq!(entries.len(), digests.len(), "{}", file.display());
        for (l, d) in entries.iter().zip(digests) {
            let t = l["tensor_index"].as_u64().unwrap();
            let hex = d.as_str().unwrap();
            assert_eq!(hex.len(), 64, "{}: a sha256 of 32 bytes", file.display());
            let bytes: Vec<String> = (0..32)
                .map(|i| format!("0x{}", &hex[2 * i..2 * i + 2]))
                .collect();
            table.push(format!("({t}, [{}])", bytes.join(", ")));
        }
    }
    writeln!(
        rs,
        "/// Every layer (KILN_LAYERS): tensor index and TFLM's sha256 of its bytes (sample s1).
pub static LAYERS: [(usize, [u8; 32]); {}] = [{}];",
        table.len(),
        table.join(", ")
    )
    .unwrap();
    if layers {
        rs.push_str(
            "/// The bytes of tensor `t` after `invoke()` (debug mode).
pub fn layer_bytes(m: &Model, t: usize) -> Option<&[u8]> {
    m.tensor_bytes(t)
}
",
        );
    } else {
        rs.push_str(
            "/// No every-layer check in this build.
pub fn layer_bytes(_: &Model, _: usize) -> Option<&'static [u8]> {
    None
}
",
        );
    }
    writeln!(rs, "pub const NAME: &str = {name:?};").unwrap();
    writeln!(rs, "pub const BOARD: &str = {board:?};").unwrap();
    for (kind, list) in [("IN", &ins), ("OUT", &outs)] {
        for (i, p) in list.iter().enumerate() {
            let n = fs::metadata(p).unwrap().len();
            writeln!(
                rs,
                "static GOLDEN_{kind}{i}: [u8; {n}] = *include_bytes!({});",
                lit(p)
            )
            .unwrap();
        }
        let items: Vec<String> = (0..list.len())
            .map(|i| format!("&GOLDEN_{kind}{i}"))
            .collect();
        writeln!(
            rs,
            "pub static GOLDEN_{kind}: [&[u8]; {}] = [{}];",
            list.len(),
            items.join(", ")
        )
        .unwrap();
    }
    // (A streamed input is no model input: `invoke` reads it.)
    let streamed = flag("KILN_STREAMED");
    writeln!(
        rs,
        "const _: () = assert!(INPUTS == {} && OUTPUTS == {}, {:?});",
        if streamed { 0 } else { ins.len() },
        outs.len(),
        format!(
            "{}: the golden sample has {} inputs and {} outputs, the model other counts (a golden directory of another model?)",
            golden.display(),
            ins.len(),
            outs.len()
        )
    )
    .unwrap();
    fs::write(out.join("model.rs"), rs).unwrap();
}
