//! Multi-subgraph models end to end: IF, WHILE (a counted loop, a data-dependent one, one
//! around an IF) and CALL_ONCE with resource variables, compiled by `include_model!` and run
//! over TFLM's sequence of calls (state carried over, then `reset()`, then more calls), every
//! output byte for byte. Models and goldens: `tests/control_flow/` (made by
//! `tools/gen_control_flow_models.py` with the pinned TFLM wheel; its README says what each
//! model exercises and TFLM's semantics). Also run under Miri (`.ci/miri.sh`).

use serde_json::Value;

macro_rules! models {
    ($($name:ident: $path:literal, $golden:literal;)*) => {
        $(
            mod $name {
                kiln::include_model!($path);
                /// TFLM's calls (compiled in: the test also runs under Miri, without files).
                pub const GOLDEN: &str = include_str!($golden);
            }
        )*
    };
}

models!(
    if_float: "control_flow/if_float.tflite", "control_flow/if_float.json";
    if_int8: "control_flow/if_int8.tflite", "control_flow/if_int8.json";
    if_int8_direct: "control_flow/if_int8_direct.tflite", "control_flow/if_int8_direct.json";
    while_counted: "control_flow/while_counted.tflite", "control_flow/while_counted.json";
    while_data: "control_flow/while_data.tflite", "control_flow/while_data.json";
    while_int8: "control_flow/while_int8.tflite", "control_flow/while_int8.json";
    while_if_float: "control_flow/while_if_float.tflite", "control_flow/while_if_float.json";
    call_once_var: "control_flow/call_once_var.tflite", "control_flow/call_once_var.json";
    call_once_var_float:
        "control_flow/call_once_var_float.tflite", "control_flow/call_once_var_float.json";
    var_read_first_int8:
        "control_flow/var_read_first_int8.tflite", "control_flow/var_read_first_int8.json";
);

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Runs the golden's calls on a model through three closures (write input `i`, invoke and
/// read output `i`, reset), checking every output; returns the outputs of all calls.
fn check(
    name: &str,
    golden: &str,
    mut set_input: impl FnMut(usize, &[u8]),
    mut invoke: impl FnMut(),
    mut output: impl FnMut(usize) -> Vec<u8>,
    mut reset: impl FnMut(),
) -> Vec<Vec<Vec<u8>>> {
    let golden: Value = serde_json::from_str(golden).expect("json");
    let calls = golden["calls"].as_array().expect("calls");
    assert!(calls.len() >= 6, "{name}: a sequence of calls");
    let mut all = Vec::new();
    for (k, call) in calls.iter().enumerate() {
        if call["reset_before"].as_bool() == Some(true) {
            reset();
        }
        for (i, x) in call["inputs"]
            .as_array()
            .expect("inputs")
            .iter()
            .enumerate()
        {
            set_input(i, &hex(x.as_str().expect("hex")));
        }
        invoke();
        let mut outs = Vec::new();
        for (i, want) in call["outputs"]
            .as_array()
            .expect("outputs")
            .iter()
            .enumerate()
        {
            let got = output(i);
            assert_eq!(
                got,
                hex(want.as_str().expect("hex")),
                "{name}: call {k} ({}), output {i}",
                call["note"].as_str().unwrap_or("")
            );
            outs.push(got);
        }
        all.push(outs);
    }
    all
}

macro_rules! run {
    ($name:ident) => {{
        let mut m = $name::Model::take().expect("taken once");
        let m = std::cell::RefCell::new(&mut m);
        check(
            stringify!($name),
            $name::GOLDEN,
            |i, b| m.borrow_mut().input_bytes_mut(i).copy_from_slice(b),
            || m.borrow_mut().invoke(),
            |i| m.borrow().output_bytes(i).to_vec(),
            || m.borrow_mut().reset(),
        )
    }};
}

#[test]
fn if_takes_both_branches_like_tflm() {
    for outs in [run!(if_float), run!(if_int8), run!(if_int8_direct)] {
        // Different inputs take different branches: the outputs differ.
        assert!(outs.windows(2).any(|w| w[0] != w[1]));
    }
}

#[test]
fn while_loops_like_tflm() {
    run!(while_counted);
    run!(while_data);
    run!(while_int8);
    run!(while_if_float);
}

#[test]
fn call_once_and_resource_variables_carry_state_like_tflm() {
    run!(call_once_var);
    run!(call_once_var_float);
    run!(var_read_first_int8);
}

// Resource variables (`acc`: 8 floats, `count`: 1) and CALL_ONCE's has-run byte are in the
// state, once each although two subgraphs use them.
const _: () = assert!(call_once_var::PERSISTENT_BYTES > 4 * 8 + 4);
const _: () = assert!(call_once_var::PERSISTENT_BYTES <= 2 * (4 * 8 + 4));
