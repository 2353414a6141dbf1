use crate::cases::{Case, assert_bits_eq, run};
use kiln_kernels::activations_f32;

fn check(c: &Case) {
    let input = c.f32s("input");
    let mut out = vec![0.0f32; input.len()];
    match c.str("op") {
        "logistic" => activations_f32::logistic_f32(&input, &mut out),
        _ => activations_f32::tanh_f32(&input, &mut out),
    }
    assert_bits_eq(&c.name, &out, &c.f32s("output"));
}

#[test]
fn logistic_tanh_f32() {
    run(
        "logistic_tanh_f32",
        include_str!("data/logistic_tanh_f32.cases"),
        check,
    );
}
