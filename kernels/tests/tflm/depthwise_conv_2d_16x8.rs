use crate::cases::{Case, activation, padding, run};
use kiln_kernels::depthwise_conv_2d;

fn check(c: &Case) {
    let input_shape: [usize; 4] = c.shape("input_shape");
    let filter_shape: [usize; 4] = c.shape("filter_shape");
    let stride = c.usizes("stride");
    let dilation = c.usizes("dilation");
    let options = depthwise_conv_2d::Options {
        padding: padding(c.str("padding")),
        stride_height: stride[0],
        stride_width: stride[1],
        dilation_height_factor: dilation[0],
        dilation_width_factor: dilation[1],
        depth_multiplier: c.usize("depth_multiplier"),
        activation: activation(c.str("activation")),
    };
    let channels = filter_shape[3];
    let mut m = vec![0; channels];
    let mut s = vec![0; channels];
    let p = depthwise_conv_2d::prepare_s16(
        input_shape,
        filter_shape,
        &options,
        c.quant("input"),
        &c.f32s("filter_scales"),
        c.quant("output"),
        &mut m,
        &mut s,
    )
    .unwrap();
    let out_shape: [usize; 4] = c.shape("output_shape");
    assert_eq!(
        [p.batches, p.output_height, p.output_width, p.output_depth],
        out_shape,
        "case {}",
        c.name
    );
    let mut out = vec![0i16; out_shape.iter().product()];
    assert_eq!(c.str("bias_type"), "int64");
    depthwise_conv_2d::depthwise_conv_2d_s16(
        &p,
        &m,
        &s,
        &c.i16s("input"),
        &c.i8s("filter"),
        &c.i64s("bias"),
        &mut out,
    );
    assert_eq!(out, c.i16s("output"), "case {}", c.name);
}

#[test]
fn depthwise_conv_2d_16x8() {
    run(
        "depthwise_conv_2d_16x8",
        include_str!("data/depthwise_conv_2d_16x8.cases"),
        check,
    );
}
