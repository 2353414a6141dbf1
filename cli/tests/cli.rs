//! The `kiln` command line: text report, JSON fields, SVG, and errors.

#[path = "../../planner/tests/common/mod.rs"]
mod common;
use common::*;
use std::path::Path;
use std::process::Command;

fn kiln(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .output()
        .expect("kiln runs")
}

#[test]
fn plan_prints_a_summary_and_a_table() {
    let model = shared_models_dir().join("tflm_person_detect_int8.tflite");
    let out = kiln(&["plan", model.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "ops              31",
        "arena bytes      55296",
        "lower bound      55296",
        "peak op          2 CONV_2D",
        "<- peak",
        "DEPTHWISE_CONV_2D",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

#[test]
fn plan_json_has_the_documented_fields() {
    let model = shared_models_dir().join("tflm_mnist_lstm_int8.tflite");
    let out = kiln(&["plan", "--json", model.to_str().unwrap()]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "arena_bytes",
        "lower_bound_bytes",
        "persistent_bytes",
        "weights_bytes",
        "order",
        "buffers",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    // WEIGHTS_BYTES; the model file has 9808 bytes of constants, some made into Kiln's tables.
    assert_eq!(v["weights_bytes"], 9440);
    assert_eq!(v["flash"]["model_buffers"], 9808);
    assert!(v["persistent_bytes"].as_u64().unwrap() > 0);
    let buffers = v["buffers"].as_array().unwrap();
    assert!(!buffers.is_empty());
    for b in buffers {
        for key in ["tensor", "name", "offset", "size", "first_op", "last_op"] {
            assert!(b.get(key).is_some(), "buffer without {key}: {b}");
        }
        let end = b["offset"].as_u64().unwrap() + b["size"].as_u64().unwrap();
        assert!(end <= v["arena_bytes"].as_u64().unwrap());
    }
}

#[test]
fn plan_draws_an_svg() {
    let model = shared_models_dir().join("mlperf_tiny_ic_resnet8_int8.tflite");
    let svg = std::env::temp_dir().join(format!("kiln-cli-{}.svg", std::process::id()));
    let out = kiln(&[
        "plan",
        model.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(&svg).unwrap();
    let _ = std::fs::remove_file(&svg);
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert!(text.contains("lower bound") && text.contains("peak"));
    // One rectangle per buffer, with its tensor's name; groups of aliases are labelled.
    // (The plan `kiln plan` reports: the fastest, which `compile_tokens` takes without a
    // budget.)
    let bytes = std::fs::read(&model).unwrap();
    let p = kiln_build::compile_tokens(&bytes, &kiln_build::Options::default())
        .unwrap()
        .plan;
    assert!(!p.aliases.is_empty());
    assert_eq!(
        text.matches("<rect").count(),
        p.buffers.len() + 3,
        "a background, a frame, the peak and a rectangle per buffer"
    );
    assert!(text.contains(&format!("{} tensors share a buffer", p.aliases.len())));
    let a = p.aliases[0];
    assert!(text.contains(&format!("; t{} at +{} (", a.tensor.0, a.offset)));
}

#[test]
fn unreadable_models_exit_non_zero_with_the_diagnostic() {
    let bad = std::env::temp_dir().join(format!("kiln-cli-{}.tflite", std::process::id()));
    std::fs::write(&bad, b"definitely not a model").unwrap();
    let out = kiln(&["plan", bad.to_str().unwrap()]);
    let _ = std::fs::remove_file(&bad);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("not a TensorFlow Lite model"), "{err}");
    let out = kiln(&["plan", "/nonexistent/model.tflite"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("cannot read")
    );
    let model = shared_models_dir().join("tflm_hello_world_int8.tflite");
    let out = kiln(&["plan", "--align", "3", model.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("power of two")
    );
}

/// The reproducibility header and the plan summary, in the text report and in the JSON.
#[test]
fn plan_reports_the_header_and_the_summary() {
    let path = shared_models_dir().join("tflm_person_detect_int8.tflite");
    let bytes = std::fs::read(&path).unwrap();
    let sha = kiln_build::sha256_hex(&bytes);
    let model = path.to_str().unwrap();
    let out = kiln(&[
        "plan",
        model,
        "--ram-budget",
        "60000",
        "--reserved-ram",
        "4096",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        format!("model sha256     {sha}"),
        format!("kiln version     {}", env!("CARGO_PKG_VERSION")),
        "options          ram_budget = 60000, flash_budget = none, reserved_ram = 4096, align = 16"
            .to_string(),
        "alignment        16 bytes".to_string(),
        "plan variant     fastest".to_string(),
        "conv_2d::conv_2d_s8_fast x14".to_string(),
        "peak op          2 CONV_2D (55296 bytes live)".to_string(),
    ] {
        assert!(text.contains(&needle), "missing {needle:?} in\n{text}");
    }

    let out = kiln(&["plan", "--json", model, "--align", "8"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["arena_bytes"], 55296);
    assert_eq!(v["lower_bound_bytes"], 55296);
    assert_eq!(v["peak_op"], 2);
    assert_eq!(v["peak_op_name"], "CONV_2D");
    assert_eq!(v["peak_live_bytes"], 55296);
    assert_eq!(v["persistent_bytes"], 0);
    let h = &v["header"];
    assert_eq!(h["model_sha256"], sha.as_str());
    assert_eq!(h["kiln_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(h["alignment"], 8);
    assert_eq!(h["options"]["align"], 8);
    assert_eq!(h["options"]["ram_budget"], serde_json::Value::Null);
    assert_eq!(h["options"]["alias"], "true");
    let kernels = h["kernel_variants"].as_array().unwrap();
    let ops: usize = kernels
        .iter()
        .map(|k| k["ops"].as_array().unwrap().len())
        .sum();
    // Every operator calls one kernel but op 29, a RESHAPE planned as a view (no code).
    assert_eq!(ops, 30, "{kernels:?}");
    assert!(
        kernels
            .iter()
            .all(|k| !k["ops"].as_array().unwrap().contains(&29.into()))
    );
    assert!(
        kernels
            .iter()
            .any(|k| k["kernel"] == "depthwise_conv_2d::depthwise_conv_2d_s8_fast")
    );
}

/// `--reserved-ram` counts against `--ram-budget`: the same model fits without it and is
/// refused with it, with the numbers.
#[test]
fn reserved_ram_counts_against_the_budget() {
    let model = shared_models_dir().join("tflm_person_detect_int8.tflite");
    let model = model.to_str().unwrap();
    let out = kiln(&["plan", model, "--ram-budget", "60000"]);
    assert!(out.status.success());
    let out = kiln(&[
        "plan",
        model,
        "--ram-budget",
        "60000",
        "--reserved-ram",
        "30000",
        "--no-tile",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(
            "the model and the reserved RAM need 67440 bytes, over the RAM budget of 60000 \
             bytes by 7440 bytes (arena 37440 B + persistent 0 B + reserved_ram 30000 B"
        ),
        "{err}"
    );
    // Without a budget there is nothing to reserve from.
    let out = kiln(&["plan", model, "--reserved-ram", "1024"]);
    assert!(!out.status.success());
    // With tiling allowed (the default), the first operators run in strips of rows and the
    // model fits beside the reserved RAM.
    let out = kiln(&[
        "plan",
        model,
        "--ram-budget",
        "60000",
        "--reserved-ram",
        "30000",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("; tiled: the model's operators "), "{text}");
}

/// The SVG reads as a picture: operator names on the x axis, KiB on the y axis, and each
/// MobileNet tensor labelled by the distinctive end of its name (`Conv2d_1_pointwise`),
/// not by the prefix every tensor shares.
#[test]
fn the_svg_names_operators_and_tensors() {
    let model = shared_models_dir().join("tflm_person_detect_int8.tflite");
    let svg = std::env::temp_dir().join(format!("kiln-cli-pd-{}.svg", std::process::id()));
    let out = kiln(&[
        "plan",
        model.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(&svg).unwrap();
    let _ = std::fs::remove_file(&svg);
    assert!(text.contains(">arena offset (KiB)</text>"));
    // Ticks every 10 KiB up to 54 KiB.
    for tick in ["0", "10", "20", "30", "40", "50"] {
        assert!(
            text.contains(&format!(r#"text-anchor="end">{tick}</text>"#)),
            "tick {tick}"
        );
    }
    // Every step's operator under the axis.
    for label in [
        ">DEPTHWISE_CONV_2D 0<",
        ">CONV_2D 2<",
        ">AVERAGE_POOL_2D 27<",
        ">SOFTMAX 30<",
    ] {
        assert!(text.contains(label), "missing {label}");
    }
    // Labels from the end of the names, wrapped: the peak's two tensors.
    for label in [
        r#">Conv2d_1_</tspan>"#,
        r#">depthwise/</tspan>"#,
        r#">pointwise/</tspan>"#,
        r#">Relu6 t54</tspan>"#,
    ] {
        assert!(text.contains(label), "missing {label}");
    }
    assert!(
        !text.contains(">t51 Conv2"),
        "labels from the shared prefix"
    );
    // The full name stays in the tooltip.
    assert!(text.contains(
        "<title>MobilenetV1/MobilenetV1/Conv2d_1_pointwise/Relu6 (t54) [0..36864) 36864 B"
    ));
}

/// One flash figure: `kiln plan`'s text and JSON give the same total, it is weights plus
/// prepared constants, the weights are the generated `WEIGHTS_BYTES`, the generated docs
/// state the same total, and the flash budget passes at that total and fails one byte
/// under it with the same figure and parts. The code estimate is the same in the text, the
/// JSON, the docs and the budget's message, and is added to the total only as an estimate.
#[test]
fn plan_prints_one_flash_total_as_the_code_and_the_budget_count_it() {
    let path = shared_models_dir().join("tflm_person_detect_int8.tflite");
    let model = path.to_str().unwrap();
    let out = kiln(&["plan", "--json", model]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["flash"];
    let n = |k: &str| f[k].as_u64().unwrap_or_else(|| panic!("flash.{k} in {f}")) as usize;
    let (total, weights, prepared) = (n("bytes"), n("weights"), n("prepared_constants"));
    assert_eq!(total, weights + prepared);
    assert!(weights > 0 && prepared > 0, "{f}");
    assert_eq!(v["weights_bytes"].as_u64(), Some(weights as u64));
    let graph = kiln_planner::read_model(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(n("model_buffers"), graph.weights_bytes());

    let parts = format!("weights {weights} B + prepared constants {prepared} B");
    let out = kiln(&["plan", model]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let line = format!("flash bytes      {total} ({parts}; the flash budget's figure)");
    assert!(text.contains(&line), "missing {line:?} in\n{text}");
    // The code estimate: the JSON's, added to the total, never in the budget's figure.
    let code = n("code_estimate_m4_s");
    assert!(code > 1000 && n("code_estimate_m4_3") > 1000, "{f}");
    for line in [
        format!("code estimate    {code} B: invoke() and its kernels on a Cortex-M4"),
        format!("flash with code  {} B (estimated", total + code),
    ] {
        assert!(text.contains(&line), "missing {line:?} in\n{text}");
    }

    // The generated code: WEIGHTS_BYTES and the docs of ModelIn.
    let code = kiln_build::compile_tokens(
        &std::fs::read(&path).unwrap(),
        &kiln_build::Options::default(),
    )
    .unwrap()
    .tokens
    .to_string();
    let weights_const = format!("pub const WEIGHTS_BYTES : usize = {weights}");
    assert!(code.contains(&weights_const), "no {weights_const:?}");
    let doc = format!(
        " - flash: {total} bytes = weights {weights} ([`WEIGHTS_BYTES`]) + prepared constants {prepared} "
    );
    assert!(code.contains(&doc), "no {doc:?} in the docs");
    let doc = format!(
        " - code: about {} bytes on a Cortex-M4",
        n("code_estimate_m4_s")
    );
    assert!(code.contains(&doc), "no {doc:?} in the docs");

    // The flash budget counts the same.
    let at = total.to_string();
    assert!(
        kiln(&["plan", model, "--flash-budget", &at])
            .status
            .success()
    );
    let under = (total - 1).to_string();
    let out = kiln(&["plan", model, "--flash-budget", &under]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    let want = format!(
        "needs {total} bytes of flash, over the flash budget of {under} bytes by 1 bytes ({parts}; \
         code not counted: about {} B on a Cortex-M4",
        n("code_estimate_m4_s")
    );
    assert!(err.contains(&want), "missing {want:?} in\n{err}");
}

/// `--layers`: a row per step with its MACs and kernel; the MACs add up to the model's (as
/// the tiling counts them) and to the JSON's `layers`.
#[test]
fn plan_lists_the_layers_with_their_macs_and_kernels() {
    let path = shared_models_dir().join("mlperf_tiny_ic_resnet8_int8.tflite");
    let model = path.to_str().unwrap();
    let graph = kiln_planner::read_model(&std::fs::read(&path).unwrap()).unwrap();
    let macs = kiln_planner::tiling::macs(&graph);
    assert!(macs > 0);
    let out = kiln(&["plan", "--layers", model]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let table = text.split_once("## Layers").expect("a layer table").1;
    assert!(
        table.contains(&format!("work             {macs} MACs, ")),
        "{table}"
    );
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() >= 8 && w[0].parse::<usize>().is_ok())
        .collect();
    assert_eq!(rows.len(), graph.ops.len(), "{table}");
    let sum: u64 = rows.iter().map(|w| w[3].parse::<u64>().unwrap()).sum();
    assert_eq!(sum, macs);
    assert!(
        rows.iter().any(|w| w[7] == "conv_2d::conv_2d_s8_fast"),
        "{table}"
    );
    // The estimated instructions: the rows add up to the total line.
    let m4: u64 = rows.iter().map(|w| w[5].parse::<u64>().unwrap()).sum();
    assert!(
        table.contains(&format!("instructions     ~{m4} (Cortex-M4), ")),
        "{table}"
    );
    // Without --layers, no table; the JSON has the same layers.
    let out = kiln(&["plan", model]);
    assert!(!String::from_utf8(out.stdout).unwrap().contains("## Layers"));
    let out = kiln(&["plan", "--json", model]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let layers = v["layers"].as_array().unwrap();
    assert_eq!(layers.len(), graph.ops.len());
    let json_sum: u64 = layers.iter().map(|l| l["macs"].as_u64().unwrap()).sum();
    assert_eq!(json_sum, macs);
}

/// A budget no plan meets: a long tiling search says what it searches first (one line on
/// stderr), and the error names the smallest arena Kiln reaches and why not less; a model
/// with no tiling to search prints no note.
#[test]
fn a_long_search_prints_a_note_and_the_error_says_what_is_reachable() {
    let model = shared_models_dir().join("tflm_person_detect_int8.tflite");
    let out = kiln(&["plan", model.to_str().unwrap(), "--ram-budget", "16384"]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    let mut lines = err.lines();
    let note = lines.next().unwrap_or_default();
    assert!(
        note.starts_with("note: kiln: searching a plan within the RAM budget of 16384 bytes: ")
            && note.ends_with("tilings of the first operators (a work budget of 200)"),
        "{err}"
    );
    assert!(
        err.contains(
            "18432 B is the smallest arena Kiln reaches within 20 % extra MACs \
             (`max_extra_macs`), with the first operators run in strips of rows; the tilings \
             through op 9 (DEPTHWISE_CONV_2D) of the model (op 63 tiled), at the peak, are not \
             smaller"
        ),
        "{err}"
    );
    let model = shared_models_dir().join("mlperf_tiny_ad_autoencoder_int8.tflite");
    let out = kiln(&["plan", model.to_str().unwrap(), "--ram-budget", "256"]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("note: kiln"), "{err}");
    assert!(
        err.contains(
            "768 B is the smallest arena Kiln reaches: no tiling within 20 % extra MACs is \
             smaller; tiling stops at op 0 (FULLY_CONNECTED), at the peak: its output, of shape \
             [1, 128], is not an NHWC image of batch 1"
        ),
        "{err}"
    );
}

/// `--layers`' instruction estimates stay within the error they state against the QEMU
/// counts they were fitted to (`tools/data/firmware.json`, opt-level "s"), and
/// `--clock-mhz` turns them into a time.
#[test]
fn layer_estimates_are_within_their_stated_error_of_qemu() {
    use kiln_planner::report::rates;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let measured: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("tools/data/firmware.json")).unwrap())
            .unwrap();
    for stem in [
        "tflm_person_detect_int8",
        "mlperf_tiny_ic_resnet8_int8",
        "mlperf_tiny_kws_dscnn_int8",
    ] {
        let path = shared_models_dir().join(format!("{stem}.tflite"));
        let out = kiln(&["plan", "--json", path.to_str().unwrap()]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for (core, key, worst) in [
            ("m4", "est_insns_m4", rates::M4_ERROR.1),
            ("m55", "est_insns_m55", rates::M55_ERROR.1),
        ] {
            let est: u64 = v["layers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l[key].as_u64().unwrap())
                .sum();
            let qemu = measured["models"][stem][core]["s"]["insns"]
                .as_u64()
                .unwrap();
            let error = (est as f64 - qemu as f64).abs() / qemu as f64 * 100.0;
            assert!(
                est > 0 && error <= worst,
                "{stem} {core}: estimate {est}, QEMU {qemu}, {error:.1} % > {worst} %"
            );
        }
    }
    let path = shared_models_dir().join("tflm_person_detect_int8.tflite");
    let out = kiln(&[
        "plan",
        "--layers",
        "--clock-mhz",
        "100",
        path.to_str().unwrap(),
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("time  "))
        .expect("a time line");
    assert!(
        line.contains(" ms (M4), ~") && line.contains("at 100 MHz"),
        "{line}"
    );
}

#[test]
fn a_region_ending_in_a_sink_is_reported() {
    // kws_dscnn at --min-ram: its strips end in the global average pooling, whose input
    // image is never whole (the text says so; the JSON names the pooling's output).
    let model = shared_models_dir().join("mlperf_tiny_kws_dscnn_int8.tflite");
    let m = model.to_str().unwrap();
    let text = kiln(&["plan", m, "--min-ram"]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("ending in a sink"), "{text}");
    let json = kiln(&["plan", m, "--min-ram", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let sink = v["tiling"]["sink"].as_u64().expect("a sink") as usize;
    let graph = kiln_planner::read_model(&std::fs::read(&model).unwrap()).unwrap();
    assert_eq!(
        graph.tensors[sink].name,
        "functional_1/average_pooling2d/AvgPool"
    );
    assert_ne!(v["tiling"]["cut"].as_u64(), Some(sink as u64));
}

#[test]
fn patches_of_rows_and_columns_are_reported() {
    // The wide spectrogram test model at --min-ram runs in patches of rows and columns (the
    // text and the JSON's `columns` say so); --strips-only keeps strips of rows, in a larger
    // arena.
    let model = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/models/tiling/wide_spectrogram_int8.tflite");
    let m = model.to_str().unwrap();
    let text = kiln(&["plan", m, "--min-ram"]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("patches of columns"), "{text}");
    let json = |extra: &[&str]| -> serde_json::Value {
        let out = kiln(&[&["plan", m, "--min-ram", "--json"], extra].concat());
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (patches, strips) = (json(&[]), json(&["--strips-only"]));
    assert!(patches["tiling"]["columns"].as_u64().unwrap() > 1);
    assert_eq!(strips["tiling"]["columns"].as_u64(), Some(1));
    assert!(patches["arena_bytes"].as_u64() < strips["arena_bytes"].as_u64());
}
