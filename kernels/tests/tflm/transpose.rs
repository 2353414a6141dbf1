use crate::cases::{Case, assert_bits_eq, run};
use kiln_kernels::transpose;

fn check(c: &Case) {
    let p = transpose::prepare(&c.usizes("input_shape"), &c.i32s("perm")).unwrap();
    if c.str("dtype") == "float32" {
        let input = c.f32s("input");
        let mut out = vec![0.0f32; input.len()];
        transpose::transpose(&p, &input, &mut out);
        assert_bits_eq(&c.name, &out, &c.f32s("output"));
    } else {
        let input = c.i8s("input");
        let mut out = vec![0i8; input.len()];
        transpose::transpose(&p, &input, &mut out);
        assert_eq!(out, c.i8s("output"), "case {}", c.name);
    }
}

#[test]
fn transpose() {
    run("transpose", include_str!("data/transpose.cases"), check);
}
