use crate::cases::{Case, assert_bits_eq, run};
use kiln_kernels::mean;
use kiln_kernels::quant::QuantParams;

fn check(c: &Case) {
    let shape = c.usizes("input_shape");
    let axis = c.i32s("axis");
    let out_len: usize = c.usizes("output_shape").iter().product();
    match c.str("dtype") {
        "float32" => {
            let p = mean::prepare_f32(&shape, &axis).unwrap();
            let mut out = vec![0.0f32; out_len];
            mean::mean_f32(&p, &c.f32s("input"), &mut out);
            assert_bits_eq(&c.name, &out, &c.f32s("output"));
        }
        dtype => {
            let input = QuantParams {
                scale: c.f32("input_scale"),
                zero_point: c.i32("input_zero_point"),
            };
            let output = QuantParams {
                scale: c.f32("output_scale"),
                zero_point: c.i32("output_zero_point"),
            };
            if dtype == "int8" {
                let p = mean::prepare_s8(&shape, &axis, input, output).unwrap();
                let mut out = vec![0i8; out_len];
                mean::mean_s8(&p, &c.i8s("input"), &mut out);
                assert_eq!(out, c.i8s("output"), "case {} {p:?}", c.name);
            } else {
                let p = mean::prepare_s16(&shape, &axis, input, output).unwrap();
                let mut out = vec![0i16; out_len];
                mean::mean_s16(&p, &c.i16s("input"), &mut out);
                assert_eq!(out, c.i16s("output"), "case {} {p:?}", c.name);
            }
        }
    }
}

#[test]
fn mean() {
    run("mean", include_str!("data/mean.cases"), check);
}
