use crate::cases::{Case, assert_bits_eq, run};
use kiln_kernels::hard_swish;

fn check(c: &Case) {
    if c.str("dtype") == "float32" {
        let input = c.f32s("input");
        let mut out = vec![0.0f32; input.len()];
        hard_swish::hard_swish_f32(&input, &mut out);
        assert_bits_eq(&c.name, &out, &c.f32s("output"));
    } else {
        let p = hard_swish::prepare_s8(c.quant("input"), c.quant("output")).unwrap();
        let input = c.i8s("input");
        let mut out = vec![0i8; input.len()];
        hard_swish::hard_swish_s8(&p, &input, &mut out);
        assert_eq!(out, c.i8s("output"), "case {} {p:?}", c.name);
    }
}

#[test]
fn hard_swish() {
    run("hard_swish", include_str!("data/hard_swish.cases"), check);
}
