use crate::cases::{Case, activation, run};
use kiln_kernels::fully_connected as fc;
use kiln_kernels::quant::QuantParams;

fn check(c: &Case) {
    let (batches, depth, units) = (
        c.usize("batches"),
        c.usize("accum_depth"),
        c.usize("output_depth"),
    );
    let act = activation(c.str("activation"));
    let scales = c.f32s("filter_scales");
    let (input, weights) = (c.i16s("input"), c.i8s("filter"));
    let bias_type = c.str("bias_type");
    let mut out = vec![0i16; batches * units];
    if scales.len() > 1 {
        let mut m = vec![0; units];
        let mut s = vec![0; units];
        let p = fc::prepare_per_channel_s16(
            batches,
            depth,
            units,
            c.quant("input"),
            &scales,
            c.quant("output"),
            act,
            &mut m,
            &mut s,
        )
        .unwrap();
        match bias_type {
            "int64" => fc::fully_connected_per_channel_s16(
                &p,
                &m,
                &s,
                &input,
                &weights,
                Some(&c.i64s("bias")),
                &mut out,
            ),
            "int32" => fc::fully_connected_per_channel_s16_bias32(
                &p,
                &m,
                &s,
                &input,
                &weights,
                &c.i32s("bias"),
                &mut out,
            ),
            _ => fc::fully_connected_per_channel_s16(&p, &m, &s, &input, &weights, None, &mut out),
        }
    } else {
        let filter = QuantParams {
            scale: scales[0],
            zero_point: c.i32("filter_zero_point"),
        };
        let bias_scale = c.has("bias_scale").then(|| c.f32("bias_scale"));
        let p = fc::prepare_s16(
            batches,
            depth,
            units,
            c.quant("input"),
            filter,
            bias_scale,
            c.quant("output"),
            act,
        )
        .unwrap();
        match bias_type {
            "int64" => {
                fc::fully_connected_s16(&p, &input, &weights, Some(&c.i64s("bias")), &mut out)
            }
            "int32" => {
                fc::fully_connected_s16_bias32(&p, &input, &weights, &c.i32s("bias"), &mut out)
            }
            _ => fc::fully_connected_s16(&p, &input, &weights, None, &mut out),
        }
    }
    assert_eq!(out, c.i16s("output"), "case {}", c.name);
}

#[test]
fn fully_connected_16x8() {
    run(
        "fully_connected_16x8",
        include_str!("data/fully_connected_16x8.cases"),
        check,
    );
}
