//! What the generated module and the reports tell about a compiled model: the plan's
//! summary and the reproducibility header (model sha256, Kiln's version, options,
//! alignment, plan variant, kernel functions), the same in the docs of `ModelIn`, the text
//! report and the JSON; and `Model::report_dir`, which writes the reports where asked.

use kiln_build::{Model, compile_tokens, format_file, sha256_hex};
use std::path::{Path, PathBuf};

fn shared(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/models")
        .join(name)
}

#[test]
fn sha256_is_sha256() {
    // FIPS 180-2's test vectors.
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn the_generated_docs_carry_the_plan_and_the_header() {
    let path = shared("tflm_person_detect_int8.tflite");
    let bytes = std::fs::read(&path).unwrap();
    // A budget only the smallest untiled plan meets: lean scratch and convolutions in place
    // (with tiling, a strip plan with the fastest kernels would meet it).
    let m = Model::new(&path)
        .ram_budget(40_000)
        .tile(false)
        .link_section(".sram2");
    let text = format_file(&m.tokens().unwrap(), "person_detect");
    let c = compile_tokens(
        &bytes,
        &kiln_build::Options {
            ram_budget: Some(kiln_build::Budget::Bytes(40_000)),
            link_section: Some(".sram2".into()),
            tiling: kiln_build::TilingOptions {
                enabled: false,
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .unwrap();
    let h = &c.header;
    assert_eq!(h.model_sha256, sha256_hex(&bytes));
    assert_eq!(h.kiln_version, env!("CARGO_PKG_VERSION"));
    assert!(h.plan_variant.starts_with("smallest"), "{}", h.plan_variant);
    // In place over their inputs: the pointwise convolutions' in-place kernel is named.
    assert!(
        h.kernel_variants
            .iter()
            .any(|k| k.kernel.contains("in_place")),
        "{:?}",
        h.kernel_variants
    );
    let peak = c.plan.peak_step().unwrap();
    let op = c.plan.order[peak].0;
    for needle in [
        format!("/// - arena: {} bytes ([`ARENA_BYTES`]); lower bound {} bytes", c.plan.arena_bytes, c.plan.lower_bound_bytes),
        format!(
            "/// - peak: op {op} ({}) at step {peak}, {} bytes live",
            c.graph.op(c.plan.order[peak]).kind.name(),
            c.plan.live_bytes[peak]
        ),
        "/// - persistent: 0 bytes ([`PERSISTENT_BYTES`])".to_string(),
        format!(
            "/// - flash: {} bytes = weights {} ([`WEIGHTS_BYTES`]) + prepared constants {} ",
            h.flash.total(),
            h.flash.weights,
            h.flash.prepared_constants
        ),
        format!("/// - RAM: {} of the budget's 40000 bytes", c.plan.arena_bytes),
        format!("/// - model sha256: `{}`", sha256_hex(&bytes)),
        format!("/// - Kiln {}", env!("CARGO_PKG_VERSION")),
        "/// - options: `ram_budget = 40000, flash_budget = none, reserved_ram = none, align = 16, optimize = true, reorder = true, alias = true, preserve_all_tensors = false, preserve_inputs = false, link_section = \".sram2\", tiling = off`".to_string(),
        "/// - alignment: 16 bytes".to_string(),
        format!("/// - plan: {}", h.plan_variant),
    ] {
        assert!(text.contains(&needle), "missing {needle:?} in the generated docs");
    }
    for k in &h.kernel_variants {
        assert!(text.contains(&format!("///   - `{}` x{}", k.kernel, k.ops.len())));
        // Each kernel is called in the generated code for each of its operators.
        let call = format!("::kiln::kernels::{}(", k.kernel);
        assert!(text.matches(&call).count() >= k.ops.len(), "{call}");
    }
    // The text report and the JSON say the same.
    let report = c.report_text("person_detect");
    assert!(report.contains(&format!("model sha256     {}", h.model_sha256)));
    assert!(report.contains(&format!("plan variant     {}", h.plan_variant)));
    assert!(report.contains("options          ram_budget = 40000,"));
    let v: serde_json::Value = serde_json::from_str(&c.report_json()).unwrap();
    assert_eq!(v["header"]["model_sha256"], h.model_sha256.as_str());
    assert_eq!(v["header"]["options"]["link_section"], ".sram2");
    assert_eq!(v["header"]["plan_variant"], h.plan_variant.as_str());
    assert_eq!(v["peak_op"], op);
    assert_eq!(v["arena_bytes"], c.plan.arena_bytes);
}

#[test]
fn report_dir_gets_the_three_reports() {
    let path = shared("tflm_hello_world_int8.tflite");
    let base = std::env::temp_dir().join(format!("kiln-report-dir-{}", std::process::id()));
    let (out, reports) = (base.join("out"), base.join("reports/nested"));
    std::fs::create_dir_all(&out).unwrap();
    let m = Model::new(&path).out_dir(&out).report_dir(&reports);
    m.compile("hello").unwrap();
    for ext in ["txt", "svg", "json"] {
        let name = format!("hello.plan.{ext}");
        let a = std::fs::read_to_string(out.join(&name)).unwrap();
        let b = std::fs::read_to_string(reports.join(&name)).unwrap();
        assert_eq!(a, b, "{name}");
        assert!(!a.is_empty());
    }
    // Compiling again writes the same bytes.
    let before = std::fs::read(reports.join("hello.plan.json")).unwrap();
    m.compile("hello").unwrap();
    assert_eq!(
        std::fs::read(reports.join("hello.plan.json")).unwrap(),
        before
    );
    let _ = std::fs::remove_dir_all(&base);
}
