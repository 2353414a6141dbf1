//! The `kiln plan` switches for each optimisation, and the order and bound report.

#[path = "../../planner/tests/common/mod.rs"]
mod common;
use common::*;
use std::process::Command;

fn plan_json(args: &[&str]) -> serde_json::Value {
    let model = shared_models_dir().join("mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite");
    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("plan")
        .arg("--json")
        .args(args)
        .arg(model)
        .output()
        .expect("kiln runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn every_optimisation_has_a_switch() {
    let on = plan_json(&[]);
    assert_eq!(on["arena_bytes"], 55296);
    assert_eq!(on["lower_bound_bytes"], 55296);
    assert_eq!(on["stored_order_bound_bytes"], 55296);
    assert_eq!(on["gap_bytes"], 0);
    assert_eq!(on["order_optimal"], true);
    assert_eq!(on["placement_optimal"], true);
    assert_eq!(on["reordered"], false);
    // All off: the stored order placed by TFLM's greedy rule, which misses the bound here.
    let off = plan_json(&["--unoptimised"]);
    assert_eq!(off["order_search"], "reordering off");
    assert_eq!(off["strategy"], "size-desc/first-fit (TFLM)");
    assert!(off["arena_bytes"].as_u64().unwrap() > 55296);
    // The placement switches alone give the same.
    let greedy = plan_json(&["--no-portfolio", "--no-hill-climb", "--no-exact-offsets"]);
    assert_eq!(greedy["arena_bytes"], off["arena_bytes"]);
    // The order switches keep the bound here (the stored order is optimal).
    for flag in ["--no-reorder", "--no-exact-order"] {
        let v = plan_json(&[flag]);
        assert_eq!(v["lower_bound_bytes"], 55296, "{flag}");
        assert_eq!(v["arena_bytes"], 55296, "{flag}");
    }
    // Aliasing: the final RESHAPE is a view of the pooled tensor, SOFTMAX is not in place.
    assert!(!on["aliases"].as_array().unwrap().is_empty());
    assert!(off["aliases"].as_array().unwrap().is_empty());
    for flag in ["--no-alias", "--no-views"] {
        let v = plan_json(&[flag]);
        assert!(v["aliases"].as_array().unwrap().is_empty(), "{flag}");
        assert_eq!(v["arena_bytes"], 55296, "{flag}");
    }
}

#[test]
fn aliasing_switches_change_the_bound() {
    let model = shared_models_dir().join("tflm_simple_add.tflite");
    let json = |args: &[&str]| -> serde_json::Value {
        let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
            .args(["plan", "--json"])
            .args(args)
            .arg(&model)
            .output()
            .expect("kiln runs");
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // ADD of two 16 KiB inputs writes over the first: two buffers instead of three.
    let on = json(&[]);
    assert_eq!(on["arena_bytes"], 32768);
    assert_eq!(on["unaliased_bound_bytes"], 49152);
    assert_eq!(on["aliases"][0]["reason"], "in place");
    for flag in ["--no-in-place", "--no-alias", "--unoptimised"] {
        let v = json(&[flag]);
        assert_eq!(v["arena_bytes"], 49152, "{flag}");
    }
    assert_eq!(
        json(&["--no-views", "--no-concat-slices"])["arena_bytes"],
        32768
    );
}

#[test]
fn text_report_names_the_bounds_and_the_order() {
    let model = shared_models_dir().join("tflm_dtln_noise_suppression.tflite");
    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["plan", model.to_str().unwrap()])
        .output()
        .expect("kiln runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "lower bound      385 (gap 15 bytes, 3.90 %; placement optimal)",
        "no aliasing      514 (bound of this order with a buffer per tensor, 129 bytes above)",
        "stored bound     514 (lower bound of the stored order without aliasing, 129 bytes above)",
        "alias            t44 in the buffer of t43 at +0 (in place, op 3 LOGISTIC)",
        "   3     3  LOGISTIC (in place)",
        "order            stored order kept (exact search; no order has a smaller bound)",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

#[test]
fn region_flags_split_the_arena_and_report_each_region() {
    let v = plan_json(&["--region", ".dtcm:16384", "--region", ".sram:131072:32"]);
    let regions = v["regions"].as_array().expect("regions in the JSON");
    assert_eq!(regions.len(), 2);
    assert_eq!(regions[0]["section"], ".dtcm");
    assert_eq!(regions[0]["size"], 16384);
    assert_eq!(regions[1]["section"], ".sram");
    assert_eq!(regions[1]["align"], 32);
    let buffers = v["buffers"].as_array().unwrap();
    let mut listed = 0;
    for (r, region) in regions.iter().enumerate() {
        let bytes = region["bytes"].as_u64().unwrap();
        assert!(
            bytes <= region["size"].as_u64().unwrap() && bytes > 0,
            "region {r}"
        );
        for i in region["buffers"].as_array().unwrap() {
            let b = &buffers[i.as_u64().unwrap() as usize];
            assert_eq!(b["region"], region["section"]);
            let end = b["region_offset"].as_u64().unwrap() + b["size"].as_u64().unwrap();
            assert!(end <= bytes);
            listed += 1;
        }
    }
    assert_eq!(listed, buffers.len(), "every buffer in one region");
    assert!(
        v["header"]["options"]["regions"]
            .as_str()
            .is_some_and(|r| r == ".dtcm:16384 .sram:131072:32"),
        "{}",
        v["header"]["options"]
    );
    // Without the flag: no regions in the report.
    assert!(plan_json(&[])["regions"].is_null());
    // A bad flag and a map too small are errors that say so.
    let model = shared_models_dir().join("mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite");
    for (flag, needle) in [
        ("dtcm", "SECTION:BYTES"),
        (
            ".dtcm:4096",
            "does not fit the memory map: region `.dtcm` (4096 bytes)",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
            .args(["plan", "--region", flag])
            .arg(&model)
            .output()
            .expect("kiln runs");
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{err}");
    }
}
