use crate::cases::{Case, assert_bits_eq, run};
use kiln_kernels::cast::CastTo;

fn go<T: CastTo<U>, U: Copy + Default>(input: &[T]) -> Vec<U> {
    let mut out = vec![U::default(); input.len()];
    kiln_kernels::cast::cast(input, &mut out);
    out
}

fn to_dst<T>(c: &Case, input: &[T])
where
    T: CastTo<i8> + CastTo<i16> + CastTo<i32> + CastTo<f32>,
{
    match c.str("dst") {
        "int8" => assert_eq!(go::<T, i8>(input), c.i8s("output"), "case {}", c.name),
        "int16" => assert_eq!(go::<T, i16>(input), c.i16s("output"), "case {}", c.name),
        "int32" => assert_eq!(go::<T, i32>(input), c.i32s("output"), "case {}", c.name),
        _ => assert_bits_eq(&c.name, &go::<T, f32>(input), &c.f32s("output")),
    }
}

fn check(c: &Case) {
    match c.str("src") {
        "bool" => {
            // BOOL tensors are bytes holding 0 or 1.
            let v: Vec<u8> = c.ints("input").iter().map(|&x| (x != 0) as u8).collect();
            to_dst(c, &v)
        }
        "int8" => to_dst(c, &c.i8s("input")),
        "int16" => to_dst(c, &c.i16s("input")),
        "int32" => to_dst(c, &c.i32s("input")),
        _ => to_dst(c, &c.f32s("input")),
    }
}

#[test]
fn cast() {
    run("cast", include_str!("data/cast.cases"), check);
}
