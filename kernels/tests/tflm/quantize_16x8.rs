use crate::cases::{Case, run};
use kiln_kernels::requantize;

fn check(c: &Case) {
    let p = requantize::prepare(c.quant("input"), c.quant("output")).unwrap();
    match (c.str("input_dtype"), c.str("output_dtype")) {
        ("int16", "int8") => {
            let input = c.i16s("input");
            let mut out = vec![0i8; input.len()];
            requantize::requantize_s16_s8(&p, &input, &mut out);
            assert_eq!(out, c.i8s("output"), "case {}", c.name);
        }
        ("int8", "int16") => {
            let input = c.i8s("input");
            let mut out = vec![0i16; input.len()];
            requantize::requantize_s8_s16(&p, &input, &mut out);
            assert_eq!(out, c.i16s("output"), "case {}", c.name);
        }
        ("int16", "int16") => {
            let input = c.i16s("input");
            let mut out = vec![0i16; input.len()];
            requantize::requantize_s16_s16(&p, &input, &mut out);
            assert_eq!(out, c.i16s("output"), "case {}", c.name);
        }
        other => panic!("case {}: {other:?}", c.name),
    }
}

#[test]
fn quantize_16x8() {
    run(
        "quantize_16x8",
        include_str!("data/quantize_16x8.cases"),
        check,
    );
}
