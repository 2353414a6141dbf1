use crate::cases::{Case, assert_bits_eq, run};
use kiln_kernels::leaky_relu;

fn check(c: &Case) {
    let alpha = c.f32("alpha");
    match c.str("dtype") {
        "float32" => {
            let p = leaky_relu::prepare_f32(alpha);
            let input = c.f32s("input");
            let mut out = vec![0.0f32; input.len()];
            leaky_relu::leaky_relu_f32(&p, &input, &mut out);
            assert_bits_eq(&c.name, &out, &c.f32s("output"));
        }
        "int8" => {
            let p = leaky_relu::prepare_s8(c.quant("input"), c.quant("output"), alpha).unwrap();
            let input = c.i8s("input");
            let mut out = vec![0i8; input.len()];
            leaky_relu::leaky_relu_s8(&p, &input, &mut out);
            assert_eq!(out, c.i8s("output"), "case {} {p:?}", c.name);
        }
        _ => {
            let p = leaky_relu::prepare_s16(c.quant("input"), c.quant("output"), alpha).unwrap();
            let input = c.i16s("input");
            let mut out = vec![0i16; input.len()];
            leaky_relu::leaky_relu_s16(&p, &input, &mut out);
            assert_eq!(out, c.i16s("output"), "case {} {p:?}", c.name);
        }
    }
}

#[test]
fn leaky_relu() {
    run("leaky_relu", include_str!("data/leaky_relu.cases"), check);
}
