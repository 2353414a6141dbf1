use crate::cases::{Case, assert_bits_eq, run};
use kiln_kernels::strided_slice as ss;

fn check(c: &Case) {
    let shape = c.usizes("input_shape");
    let options = ss::Options {
        begin_mask: c.i32("begin_mask"),
        end_mask: c.i32("end_mask"),
        ellipsis_mask: 0,
        new_axis_mask: 0,
        shrink_axis_mask: c.i32("shrink_axis_mask"),
        offset: c.bool("offset"),
    };
    let p = ss::prepare(
        &shape,
        &c.i32s("begin_indices"),
        &c.i32s("end_indices"),
        &c.i32s("strides"),
        &options,
    )
    .unwrap();
    let (dims, n) = ss::output_dims(&p, shape.len(), &options);
    assert_eq!(dims[..n], c.usizes("output_shape")[..], "case {}", c.name);
    if c.str("dtype") == "float32" {
        let mut out = vec![0.0f32; p.output_size()];
        ss::strided_slice(&p, &c.f32s("input"), &mut out);
        assert_bits_eq(&c.name, &out, &c.f32s("output"));
    } else {
        let mut out = vec![0i8; p.output_size()];
        ss::strided_slice(&p, &c.i8s("input"), &mut out);
        assert_eq!(out, c.i8s("output"), "case {} {p:?}", c.name);
    }
}

#[test]
fn strided_slice() {
    run(
        "strided_slice",
        include_str!("data/strided_slice.cases"),
        check,
    );
}
