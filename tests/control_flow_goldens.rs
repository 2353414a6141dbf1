//! The control-flow goldens (`tests/control_flow/<model>.json`, written from the pinned TFLM
//! by `tools/gen_control_flow_models.py`) are readable without Python and self-consistent:
//! every model has its `.tflite`, eight calls with one `reset()` before call 6, and every
//! input and output holds exactly its tensor's bytes. `load` is the reader an end-to-end test
//! of multi-subgraph models can use (see `tests/control_flow/README.md`).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The models of `tests/control_flow/`, each with a `.tflite` and a `.json`.
const MODELS: &[&str] = &[
    "if_float",
    "if_int8",
    "if_int8_direct",
    "while_counted",
    "while_data",
    "while_int8",
    "while_if_float",
    "call_once_var",
    "call_once_var_float",
    "var_read_first_int8",
];

/// One `invoke()` of a golden sequence.
struct Call {
    reset_before: bool,
    inputs: Vec<Vec<u8>>,
    outputs: Vec<Vec<u8>>,
}

/// A model's golden sequence: the byte sizes of its inputs and outputs, and the calls.
struct Golden {
    input_bytes: Vec<usize>,
    output_bytes: Vec<usize>,
    calls: Vec<Call>,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/control_flow")
}

fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd hex length {}", s.len()));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| format!("hex at {i}: {e}")))
        .collect()
}

fn byte_sizes(v: &Value, key: &str) -> Result<Vec<usize>, String> {
    v[key]
        .as_array()
        .ok_or(format!("no {key}"))?
        .iter()
        .map(|t| {
            t["bytes"]
                .as_u64()
                .map(|b| b as usize)
                .ok_or(format!("{key}: a tensor without bytes"))
        })
        .collect()
}

fn hex_list(v: &Value, key: &str) -> Result<Vec<Vec<u8>>, String> {
    v[key]
        .as_array()
        .ok_or(format!("no {key}"))?
        .iter()
        .map(|h| unhex(h.as_str().ok_or(format!("{key}: not a string"))?))
        .collect()
}

/// Reads `tests/control_flow/<name>.json`.
fn load(name: &str) -> Result<Golden, String> {
    let path = dir().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{name}.json: {e}"))?;
    let calls = v["calls"]
        .as_array()
        .ok_or("no calls")?
        .iter()
        .map(|c| {
            Ok(Call {
                reset_before: c["reset_before"].as_bool().ok_or("no reset_before")?,
                inputs: hex_list(c, "inputs")?,
                outputs: hex_list(c, "outputs")?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Golden {
        input_bytes: byte_sizes(&v, "inputs")?,
        output_bytes: byte_sizes(&v, "outputs")?,
        calls,
    })
}

#[test]
fn control_flow_goldens_are_complete() {
    let mut failures = Vec::new();
    for name in MODELS {
        if !dir().join(format!("{name}.tflite")).is_file() {
            failures.push(format!("{name}.tflite is missing"));
        }
        let g = match load(name) {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let resets: Vec<usize> = (0..g.calls.len())
            .filter(|&k| g.calls[k].reset_before)
            .collect();
        if g.calls.len() != 8 || resets != [6] {
            failures.push(format!(
                "{name}: {} calls, resets before {resets:?} (want 8, [6])",
                g.calls.len()
            ));
        }
        for (k, c) in g.calls.iter().enumerate() {
            let ins: Vec<usize> = c.inputs.iter().map(Vec::len).collect();
            let outs: Vec<usize> = c.outputs.iter().map(Vec::len).collect();
            if ins != g.input_bytes || outs != g.output_bytes {
                failures.push(format!(
                    "{name} call {k}: input bytes {ins:?} (tensors {:?}), output bytes {outs:?} (tensors {:?})",
                    g.input_bytes, g.output_bytes
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `var_read_first_int8` carries its resource variable across calls: the first read, and the
/// first after `reset()`, give TFLM's fill (the int8 zero point -7 of the ASSIGN_VARIABLE
/// value), every other read gives the previous call's assigned value (output 1).
#[test]
fn var_read_first_goldens_carry_the_variable() {
    let g = load("var_read_first_int8").unwrap();
    let fill = vec![(-7i8) as u8; 4];
    for (k, c) in g.calls.iter().enumerate() {
        let want = if k == 0 || c.reset_before {
            &fill
        } else {
            &g.calls[k - 1].outputs[1]
        };
        assert_eq!(&c.outputs[0], want, "call {k}: the value read");
    }
}
