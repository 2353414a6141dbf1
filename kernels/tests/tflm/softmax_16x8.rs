use crate::cases::{Case, run};
use kiln_kernels::softmax;

fn check(c: &Case) {
    let mut exp_lut = [0i16; softmax::LUT_SIZE];
    let mut recip_lut = [0i16; softmax::LUT_SIZE];
    let p = softmax::prepare_s16(
        c.usize("outer_size"),
        c.usize("depth"),
        c.quant("input"),
        c.quant("output"),
        c.f32("beta"),
        &mut exp_lut,
        &mut recip_lut,
    )
    .unwrap();
    let input = c.i16s("input");
    let mut out = vec![0i16; input.len()];
    softmax::softmax_s16(&p, &exp_lut, &recip_lut, &input, &mut out);
    assert_eq!(out, c.i16s("output"), "case {} {p:?}", c.name);
}

#[test]
fn softmax_16x8() {
    run(
        "softmax_16x8",
        include_str!("data/softmax_16x8.cases"),
        check,
    );
}
