use crate::cases::{Case, activation, assert_bits_eq, run};
use kiln_kernels::broadcast::Broadcast;
use kiln_kernels::div;

fn check(c: &Case) {
    let p = div::prepare_f32(activation(c.str("activation")));
    let (s1, s2) = (c.usizes("shape1"), c.usizes("shape2"));
    let (x1, x2) = (c.f32s("input1"), c.f32s("input2"));
    let b = Broadcast::new(&s1, &s2).unwrap();
    let mut out = vec![0.0f32; b.output_size()];
    if s1 == s2 {
        div::div_f32(&p, &x1, &x2, &mut out);
    } else {
        div::div_broadcast_f32(&p, &b, &x1, &x2, &mut out);
    }
    assert_bits_eq(&c.name, &out, &c.f32s("output"));
}

#[test]
fn div() {
    run("div", include_str!("data/div.cases"), check);
}
