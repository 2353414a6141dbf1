use crate::cases::{Case, activation, assert_bits_eq, padding, run};
use kiln_kernels::transpose_conv as tc;

fn check(c: &Case) {
    let input_shape: [usize; 4] = c.shape("input_shape");
    let filter_shape: [usize; 4] = c.shape("filter_shape");
    let output_shape: [usize; 4] = c.shape("output_shape");
    let stride = c.usizes("stride");
    let options = tc::Options {
        padding: padding(c.str("padding")),
        stride_height: stride[0],
        stride_width: stride[1],
        activation: activation(c.str("activation")),
    };
    if c.str("dtype") == "float32" {
        let p = tc::prepare_f32(input_shape, filter_shape, output_shape, &options).unwrap();
        assert_eq!(tc::scratch_bytes(&p), 0);
        let bias = c.has("bias").then(|| c.f32s("bias"));
        let mut out = vec![0.0f32; p.output_size()];
        tc::transpose_conv_f32(
            &p,
            &c.f32s("input"),
            &c.f32s("filter"),
            bias.as_deref(),
            &mut out,
        );
        assert_bits_eq(&c.name, &out, &c.f32s("output"));
    } else {
        let channels = filter_shape[0];
        let (mut m, mut s) = (vec![0; channels], vec![0; channels]);
        let p = tc::prepare_s8(
            input_shape,
            filter_shape,
            output_shape,
            &options,
            c.quant("input"),
            &c.f32s("filter_scales"),
            c.quant("output"),
            &mut m,
            &mut s,
        )
        .unwrap();
        let bias = c.has("bias").then(|| c.i32s("bias"));
        let mut scratch = vec![0xAAu8; tc::scratch_bytes(&p)];
        let mut out = vec![0i8; p.output_size()];
        tc::transpose_conv_s8(
            &p,
            &m,
            &s,
            &c.i8s("input"),
            &c.i8s("filter"),
            bias.as_deref(),
            &mut out,
            &mut scratch,
        );
        assert_eq!(out, c.i8s("output"), "case {} {p:?}", c.name);
    }
}

#[test]
fn transpose_conv() {
    run(
        "transpose_conv",
        include_str!("data/transpose_conv.cases"),
        check,
    );
}
