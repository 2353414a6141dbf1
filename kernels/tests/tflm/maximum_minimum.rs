use crate::cases::{Case, assert_bits_eq, run};
use kiln_kernels::broadcast::Broadcast;
use kiln_kernels::maximum_minimum as mm;

fn apply<T: Copy + PartialOrd + Default>(c: &Case, x1: &[T], x2: &[T]) -> Vec<T> {
    let (s1, s2) = (c.usizes("shape1"), c.usizes("shape2"));
    let b = Broadcast::new(&s1, &s2).unwrap();
    let mut out = vec![T::default(); b.output_size()];
    let max = c.str("op") == "maximum";
    if s1 == s2 {
        if max {
            mm::maximum(x1, x2, &mut out)
        } else {
            mm::minimum(x1, x2, &mut out)
        }
    } else if max {
        mm::maximum_broadcast(&b, x1, x2, &mut out)
    } else {
        mm::minimum_broadcast(&b, x1, x2, &mut out)
    }
    out
}

fn check(c: &Case) {
    if c.str("dtype") == "float32" {
        let out = apply(c, &c.f32s("input1"), &c.f32s("input2"));
        assert_bits_eq(&c.name, &out, &c.f32s("output"));
    } else {
        let out = apply(c, &c.i8s("input1"), &c.i8s("input2"));
        assert_eq!(out, c.i8s("output"), "case {}", c.name);
    }
}

#[test]
fn maximum_minimum() {
    run(
        "maximum_minimum",
        include_str!("data/maximum_minimum.cases"),
        check,
    );
}
