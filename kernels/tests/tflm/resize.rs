use crate::cases::{Case, assert_bits_eq, run};
use kiln_kernels::{resize_bilinear, resize_nearest_neighbor as rnn};

fn check(c: &Case) {
    let shape: [usize; 4] = c.shape("input_shape");
    let size = c.i32s("output_hw");
    let size = [size[0], size[1]];
    let options = rnn::Options {
        align_corners: c.bool("align_corners"),
        half_pixel_centers: c.bool("half_pixel_centers"),
    };
    let float = c.str("dtype") == "float32";
    if c.str("op") == "nn" {
        let p = rnn::prepare(shape, size, &options).unwrap();
        if float {
            let mut out = vec![0.0f32; p.output_size()];
            rnn::resize_nearest_neighbor(&p, &c.f32s("input"), &mut out);
            assert_bits_eq(&c.name, &out, &c.f32s("output"));
        } else {
            let mut out = vec![0i8; p.output_size()];
            rnn::resize_nearest_neighbor(&p, &c.i8s("input"), &mut out);
            assert_eq!(out, c.i8s("output"), "case {} {p:?}", c.name);
        }
    } else {
        let p = resize_bilinear::prepare(shape, size, &options).unwrap();
        if float {
            let mut out = vec![0.0f32; p.output_size()];
            resize_bilinear::resize_bilinear_f32(&p, &c.f32s("input"), &mut out);
            assert_bits_eq(&c.name, &out, &c.f32s("output"));
        } else {
            let mut out = vec![0i8; p.output_size()];
            resize_bilinear::resize_bilinear_s8(&p, &c.i8s("input"), &mut out);
            assert_eq!(out, c.i8s("output"), "case {} {p:?}", c.name);
        }
    }
}

#[test]
fn resize() {
    run("resize", include_str!("data/resize.cases"), check);
}
