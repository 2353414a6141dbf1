//! The system budget (`reserved_ram`) and the visibility options of `include_model!`, end
//! to end.
//!
//! - `ram_budget` with `reserved_ram` is the device's whole RAM: person detection fits 60 KiB
//!   with 20 KiB reserved only through its smaller plan (lean scratch, convolutions in place,
//!   37,440 B instead of 55,296 B), which must still give TFLM's outputs byte for byte; the
//!   same model is refused when the reserved bytes leave too little, with the numbers (the
//!   compile errors themselves are the UI tests `tests/ui/ram_over_budget_reserved*.rs`).
//! - `report = "..."` writes the plan reports into a known folder while the crate compiles.

mod common;

/// 60 KiB of RAM, 20 KiB of it the firmware's (stack, buffers).
const RAM: usize = 60 * 1024;
const STACK_AND_BUFFERS: usize = 20 * 1024;

mod person_detect {
    kiln::include_model!(
        "../../shared/models/tflm_person_detect_int8.tflite",
        ram_budget = crate::RAM,
        reserved_ram = crate::STACK_AND_BUFFERS,
        report = "target/kiln-test-reports",
    );
}

mod person_detect_literal {
    kiln::include_model!(
        "../../shared/models/tflm_person_detect_int8.tflite",
        ram_budget = 60 * 1024,
        reserved_ram = 20 * 1024,
    );
}

#[test]
fn a_model_that_fits_beside_the_reserved_ram_runs_as_tflm() {
    // A constant budget is unknown while planning: the smallest plan is taken.
    const {
        assert!(
            person_detect::ARENA_BYTES + person_detect::PERSISTENT_BYTES + STACK_AND_BUFFERS <= RAM
        )
    };
    assert_eq!(person_detect::ARENA_BYTES, 37440);
    // A literal budget: the fastest kernels that fit beside the reserved bytes (not the
    // fastest plan of all, 55,296 B): the first operators in two strips of rows with the
    // fastest kernels (39,360 B), rather than the smallest untiled plan with its slow
    // in-place convolutions (tests/tiling.rs checks that plan against TFLM).
    const {
        assert!(person_detect_literal::ARENA_BYTES + STACK_AND_BUFFERS <= RAM);
        assert!(person_detect_literal::ARENA_BYTES == 39360);
    };
    check_golden!(
        person_detect,
        common::shared_models()
            .join("golden")
            .join("tflm_person_detect_int8")
    );
}

#[test]
fn the_builder_refuses_a_model_that_does_not_fit_beside_the_reserved_ram() {
    let path = common::shared_models().join("tflm_person_detect_int8.tflite");
    // Fits without the reserved bytes (the fastest plan, 55,296 B, within 60 KiB).
    let fits = kiln_build::Model::new(&path).ram_budget(RAM).tokens();
    assert!(fits.is_ok());
    // Beside 30 KiB of the firmware's own, it fits only with its first operators run in
    // strips of rows (tiling, 19,008 B); without tiling it is refused with the numbers.
    let tiled = kiln_build::Model::new(&path)
        .ram_budget(RAM)
        .reserved_ram(30 * 1024)
        .tokens();
    assert!(tiled.is_ok());
    let e = kiln_build::Model::new(&path)
        .ram_budget(RAM)
        .reserved_ram(30 * 1024)
        .tile(false)
        .tokens()
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "tflm_person_detect_int8.tflite: the model and the reserved RAM need 68160 bytes, \
             over the RAM budget of 61440 bytes by 6720 bytes (arena 37440 B + persistent 0 B \
             + reserved_ram 30720 B; the model's 37440 B leave 24000 B of the budget for the \
             firmware; 37440 B is the smallest arena Kiln reaches; tiling is off (`tile = \
             false` or `optimize = false`; `kiln plan --no-tile`); peak at op "
        ),
        "{e}"
    );
    // Reserved bytes without a budget to count them against.
    let e = kiln_build::Model::new(&path)
        .reserved_ram(1024)
        .tokens()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`reserved_ram` counts against `ram_budget`"),
        "{e}"
    );
}

#[test]
fn report_option_writes_the_reports_into_the_folder() {
    let dir = common::repo_root().join("target/kiln-test-reports");
    let read = |ext: &str| {
        std::fs::read_to_string(dir.join(format!("tflm_person_detect_int8.plan.{ext}")))
            .unwrap_or_else(|e| panic!("{ext} report: {e}"))
    };
    let (text, svg, json) = (read("txt"), read("svg"), read("json"));
    let sha = kiln_build::sha256_hex(
        &std::fs::read(common::shared_models().join("tflm_person_detect_int8.tflite")).unwrap(),
    );
    assert!(text.starts_with("model            tflm_person_detect_int8.tflite\n"));
    assert!(text.contains(&format!("model sha256     {sha}")), "{text}");
    assert!(
        text.contains("reserved_ram = crate::STACK_AND_BUFFERS"),
        "{text}"
    );
    assert!(text.contains("arena bytes      37440"), "{text}");
    assert!(svg.starts_with("<svg") && svg.contains("arena offset (KiB)"));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["arena_bytes"], 37440);
    assert_eq!(v["header"]["model_sha256"], sha.as_str());
    assert_eq!(v["header"]["options"]["ram_budget"], "crate::RAM");
    // The same as the build.rs front end writes for the same model and options: the reports
    // are deterministic.
    let out = std::env::temp_dir().join(format!("kiln-reports-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let c = kiln_build::compile_tokens(
        &std::fs::read(common::shared_models().join("tflm_person_detect_int8.tflite")).unwrap(),
        &kiln_build::Options {
            ram_budget: Some(kiln_build::Budget::Expr(quote_expr("crate::RAM"))),
            reserved_ram: Some(kiln_build::Budget::Expr(quote_expr(
                "crate::STACK_AND_BUFFERS",
            ))),
            ..kiln_build::Options::default()
        },
    )
    .unwrap();
    c.write_reports(
        &out,
        "tflm_person_detect_int8",
        "tflm_person_detect_int8.tflite",
    )
    .unwrap();
    for ext in ["txt", "svg", "json"] {
        let again =
            std::fs::read_to_string(out.join(format!("tflm_person_detect_int8.plan.{ext}")))
                .unwrap();
        assert_eq!(again, read(ext), "{ext}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

fn quote_expr(s: &str) -> proc_macro2::TokenStream {
    s.parse().unwrap()
}
