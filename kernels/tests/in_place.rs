//! The in-place variants of the elementwise kernels (`*_in_place`, `*_in_place1`,
//! `*_in_place2`) give exactly the bytes (floats: the bits) of the out-of-place kernels.
//!
//! Int8 unary kernels are checked on all 256 inputs with several parameter sets from the
//! modules' `prepare*` functions, int8 binary kernels on all 65536 input pairs, int16 and
//! float kernels on seeded pseudo-random inputs plus edge values (for floats: random bit
//! patterns, so NaNs, infinities and subnormals too). Lengths that are not multiples of the
//! in-place kernels' internal chunking are included.

use kiln_kernels::quant::{Activation, QuantParams};
use kiln_kernels::{
    activations_f32, add, hard_swish, leaky_relu, logistic, mul, quantize, relu, requantize, tanh,
};

fn q(scale: f32, zero_point: i32) -> QuantParams {
    QuantParams { scale, zero_point }
}

/// xorshift64*: deterministic pseudo-random numbers without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn i8(&mut self) -> i8 {
        (self.next() >> 56) as i8
    }
    fn i16(&mut self) -> i16 {
        (self.next() >> 48) as i16
    }
    /// Any bit pattern half of the time (NaNs, infinities, subnormals, huge values), a value
    /// in `[-20, 20)` otherwise (where the activations are not saturated).
    fn f32(&mut self) -> f32 {
        let r = self.next();
        if r & 1 == 0 {
            (r >> 32) as u32 as f32 / 2f32.powi(32) * 40.0 - 20.0
        } else {
            f32::from_bits((r >> 32) as u32)
        }
    }
}

/// Element types compared by their bits (`-0.0 != 0.0`, NaN payloads and signs count).
trait Bits: Copy + core::fmt::Debug + Default {
    fn bits(self) -> u64;
    fn is_nan(self) -> bool {
        false
    }
}
impl Bits for i8 {
    fn bits(self) -> u64 {
        self as u8 as u64
    }
}
impl Bits for i16 {
    fn bits(self) -> u64 {
        self as u16 as u64
    }
}
impl Bits for f32 {
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}

/// `got == expected` bit for bit, except that where `two_nans(i)` (element `i` is a float
/// operation on two NaN operands) both only need to be NaN: which operand's payload and sign
/// an `f32` operation returns is not specified by Rust (LLVM may swap the operands of `+` and
/// `*`; the hardware returns the first operand's NaN), so it can differ between two compiled
/// copies of the same expression. One NaN operand propagates deterministically.
fn assert_same<T: Bits>(
    what: &str,
    inputs: &[T],
    expected: &[T],
    got: &[T],
    two_nans: impl Fn(usize) -> bool,
) {
    assert_eq!(expected.len(), got.len(), "{what}: length");
    for (i, (&e, &g)) in expected.iter().zip(got).enumerate() {
        if two_nans(i) {
            assert_eq!(e.is_nan(), g.is_nan(), "{what}: element {i}: {e:?} {g:?}");
            assert!(e.is_nan(), "{what}: element {i} of two NaNs: {e:?}");
            continue;
        }
        assert_eq!(
            e.bits(),
            g.bits(),
            "{what}: element {i} (input {:?}): out-of-place {e:?}, in-place {g:?}",
            inputs.get(i)
        );
    }
}

/// `in_place(data)` leaves in `data` what `out_of_place(input, output)` writes to `output`.
fn check_unary<T: Bits>(
    what: &str,
    input: &[T],
    out_of_place: impl Fn(&[T], &mut [T]),
    in_place: impl Fn(&mut [T]),
) {
    check_unary_two_nans(what, input, out_of_place, in_place, |_| false);
}

/// [`check_unary`] for a kernel with a NaN parameter: `two_nans(x)` says whether the operation
/// on input `x` has two NaN operands (see [`assert_same`]).
fn check_unary_two_nans<T: Bits>(
    what: &str,
    input: &[T],
    out_of_place: impl Fn(&[T], &mut [T]),
    in_place: impl Fn(&mut [T]),
    two_nans: impl Fn(T) -> bool,
) {
    let mut expected = vec![T::default(); input.len()];
    out_of_place(input, &mut expected);
    let mut data = input.to_vec();
    in_place(&mut data);
    assert_same(what, input, &expected, &data, |i| two_nans(input[i]));
}

/// Both in-place variants of a binary kernel against `out_of_place(input1, input2, output)`.
fn check_binary<T: Bits>(
    what: &str,
    input1: &[T],
    input2: &[T],
    out_of_place: impl Fn(&[T], &[T], &mut [T]),
    in_place1: impl Fn(&mut [T], &[T]),
    in_place2: impl Fn(&[T], &mut [T]),
) {
    let mut expected = vec![T::default(); input1.len()];
    out_of_place(input1, input2, &mut expected);
    let two_nans = |i: usize| input1[i].is_nan() && input2[i].is_nan();
    let mut data = input1.to_vec();
    in_place1(&mut data, input2);
    assert_same(
        &format!("{what} (in_place1)"),
        input1,
        &expected,
        &data,
        two_nans,
    );
    let mut data = input2.to_vec();
    in_place2(input1, &mut data);
    assert_same(
        &format!("{what} (in_place2)"),
        input2,
        &expected,
        &data,
        two_nans,
    );
}

/// Every int8 value, then the lengths around the in-place chunking (0, 1, 63, 64, 65, ...)
/// with random values.
fn int8_inputs(seed: u64) -> Vec<Vec<i8>> {
    let mut rng = Rng(seed);
    let mut all: Vec<Vec<i8>> = vec![(-128..=127).collect()];
    for n in [0, 1, 63, 64, 65, 127, 1000] {
        all.push((0..n).map(|_| rng.i8()).collect());
    }
    all
}

fn int16_inputs(seed: u64) -> Vec<Vec<i16>> {
    let mut rng = Rng(seed);
    let mut edges: Vec<i16> = vec![i16::MIN, i16::MIN + 1, -256, -129, -128, -1, 0, 1, 127];
    edges.extend([128, 255, 256, i16::MAX - 1, i16::MAX]);
    let mut all = vec![edges];
    for n in [0, 1, 63, 65, 4099] {
        all.push((0..n).map(|_| rng.i16()).collect());
    }
    all
}

fn f32_inputs(seed: u64) -> Vec<Vec<f32>> {
    let mut rng = Rng(seed);
    let edges = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        3.0,
        -3.0,
        6.0,
        -6.0,
        -9.0,
        f32::from_bits(0x4184_f3cf),
        16.62,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7fc0_1234),
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::EPSILON,
    ];
    let mut all = vec![edges];
    for n in [0, 1, 63, 65, 4099] {
        all.push((0..n).map(|_| rng.f32()).collect());
    }
    all
}

/// Realistic int8 (scale, zero point) pairs.
const INT8_QUANT: [(f32, i32); 5] = [
    (0.05, -3),
    (0.02, 10),
    (1.0 / 256.0, -128),
    (0.1175, 127),
    (0.5, 0),
];

#[test]
fn relu_s8_and_relu6_s8() {
    for (i, &(si, zi)) in INT8_QUANT.iter().enumerate() {
        let (so, zo) = INT8_QUANT[(i + 2) % INT8_QUANT.len()];
        let pr = relu::prepare_relu_s8(q(si, zi), q(so, zo)).unwrap();
        let pr_same = relu::prepare_relu_s8(q(si, zi), q(si, zi)).unwrap();
        let p6 = relu::prepare_relu6_s8(q(si, zi)).unwrap();
        for input in int8_inputs(i as u64 + 1) {
            for p in [&pr, &pr_same] {
                check_unary(
                    &format!("relu_s8 {p:?}"),
                    &input,
                    |x, o| relu::relu_s8(p, x, o),
                    |d| relu::relu_s8_in_place(p, d),
                );
            }
            check_unary(
                &format!("relu6_s8 {p6:?}"),
                &input,
                |x, o| relu::relu6_s8(&p6, x, o),
                |d| relu::relu6_s8_in_place(&p6, d),
            );
        }
    }
}

#[test]
fn logistic_s8_and_tanh_s8() {
    for (i, &(s, z)) in INT8_QUANT
        .iter()
        .chain(&[(0.0001, 0), (2.5, -20)])
        .enumerate()
    {
        let pl = logistic::prepare_s8(q(s, z), q(1.0 / 256.0, -128)).unwrap();
        let pt = tanh::prepare_s8(q(s, z)).unwrap();
        for input in int8_inputs(100 + i as u64) {
            check_unary(
                &format!("logistic_s8 {pl:?}"),
                &input,
                |x, o| logistic::logistic_s8(&pl, x, o),
                |d| logistic::logistic_s8_in_place(&pl, d),
            );
            check_unary(
                &format!("tanh_s8 {pt:?}"),
                &input,
                |x, o| tanh::tanh_s8(&pt, x, o),
                |d| tanh::tanh_s8_in_place(&pt, d),
            );
        }
    }
}

#[test]
fn leaky_relu_s8_and_hard_swish_s8() {
    for (i, &(si, zi)) in INT8_QUANT.iter().enumerate() {
        let (so, zo) = INT8_QUANT[(i + 1) % INT8_QUANT.len()];
        let mut leaky = vec![];
        for alpha in [0.2, 0.01, -0.5, 1.5] {
            leaky.push(leaky_relu::prepare_s8(q(si, zi), q(so, zo), alpha).unwrap());
        }
        let hard_swish = [(q(si, zi), q(so, zo)), (q(0.05, -10), q(0.03, -50))]
            .map(|(a, b)| hard_swish::prepare_s8(a, b));
        assert!(hard_swish[1].is_ok());
        for input in int8_inputs(200 + i as u64) {
            for p in &leaky {
                check_unary(
                    &format!("leaky_relu_s8 {p:?}"),
                    &input,
                    |x, o| leaky_relu::leaky_relu_s8(p, x, o),
                    |d| leaky_relu::leaky_relu_s8_in_place(p, d),
                );
            }
            // Some scale pairs are outside HARD_SWISH's supported range; use the others.
            for p in hard_swish.iter().flatten() {
                check_unary(
                    &format!("hard_swish_s8 {p:?}"),
                    &input,
                    |x, o| hard_swish::hard_swish_s8(p, x, o),
                    |d| hard_swish::hard_swish_s8_in_place(p, d),
                );
            }
        }
    }
}

#[test]
fn requantize_s8_s8() {
    for (i, &(si, zi)) in INT8_QUANT.iter().enumerate() {
        for &(so, zo) in &INT8_QUANT {
            let p = quantize::prepare_s8_s8(q(si, zi), q(so, zo)).unwrap();
            for input in int8_inputs(300 + i as u64) {
                check_unary(
                    &format!("requantize_s8_s8 {p:?}"),
                    &input,
                    |x, o| quantize::requantize_s8_s8(&p, x, o),
                    |d| quantize::requantize_s8_s8_in_place(&p, d),
                );
            }
        }
    }
}

#[test]
fn int16_unary() {
    let scales = [1.0 / 32768.0, 1.0 / 4096.0, 0.001, 0.25];
    for (i, &si) in scales.iter().enumerate() {
        let so = scales[(i + 1) % scales.len()];
        let mut leaky = vec![];
        for alpha in [0.2, -0.3, 1.5] {
            leaky.push(leaky_relu::prepare_s16(q(si, 0), q(so, 0), alpha).unwrap());
        }
        let requant = [
            requantize::prepare(q(si, 0), q(so, 0)).unwrap(),
            requantize::prepare(q(si, 5), q(si, -7)).unwrap(),
        ];
        for input in int16_inputs(400 + i as u64) {
            for p in &leaky {
                check_unary(
                    &format!("leaky_relu_s16 {p:?}"),
                    &input,
                    |x, o| leaky_relu::leaky_relu_s16(p, x, o),
                    |d| leaky_relu::leaky_relu_s16_in_place(p, d),
                );
            }
            for p in &requant {
                check_unary(
                    &format!("requantize_s16_s16 {p:?}"),
                    &input,
                    |x, o| requantize::requantize_s16_s16(p, x, o),
                    |d| requantize::requantize_s16_s16_in_place(p, d),
                );
            }
        }
    }
}

#[test]
fn f32_unary() {
    let leaky = [0.2, -0.5, 1.5, f32::NAN, -f32::NAN].map(leaky_relu::prepare_f32);
    for input in f32_inputs(500) {
        check_unary("relu_f32", &input, relu::relu_f32, relu::relu_f32_in_place);
        check_unary(
            "relu6_f32",
            &input,
            relu::relu6_f32,
            relu::relu6_f32_in_place,
        );
        check_unary(
            "logistic_f32",
            &input,
            activations_f32::logistic_f32,
            activations_f32::logistic_f32_in_place,
        );
        check_unary(
            "tanh_f32",
            &input,
            activations_f32::tanh_f32,
            activations_f32::tanh_f32_in_place,
        );
        check_unary(
            "hard_swish_f32",
            &input,
            hard_swish::hard_swish_f32,
            hard_swish::hard_swish_f32_in_place,
        );
        for p in &leaky {
            // `x * alpha` for a NaN `x` and a NaN `alpha`.
            check_unary_two_nans(
                &format!("leaky_relu_f32 {p:?}"),
                &input,
                |x, o| leaky_relu::leaky_relu_f32(p, x, o),
                |d| leaky_relu::leaky_relu_f32_in_place(p, d),
                |x: f32| x.is_nan() && p.alpha.is_nan(),
            );
        }
    }
}

/// All 65536 int8 pairs (input 1 varies fastest) and a random odd-length pair.
fn int8_pairs(seed: u64) -> Vec<(Vec<i8>, Vec<i8>)> {
    let x: Vec<i8> = (0..65536).map(|i| (i & 0xff) as u8 as i8).collect();
    let y: Vec<i8> = (0..65536).map(|i| (i >> 8) as u8 as i8).collect();
    let mut rng = Rng(seed);
    let a: Vec<i8> = (0..1001).map(|_| rng.i8()).collect();
    let b: Vec<i8> = (0..1001).map(|_| rng.i8()).collect();
    vec![(x, y), (a, b)]
}

/// Asymmetric int8 (input 1, input 2, output, activation) quantizations for ADD and MUL.
fn int8_binary_params() -> [(QuantParams, QuantParams, QuantParams, Activation); 4] {
    [
        (q(0.05, -128), q(0.02, 127), q(0.07, 3), Activation::None),
        (q(0.5, 0), q(0.001, -5), q(0.3, -128), Activation::Relu),
        (q(0.0125, 17), q(0.0124, -17), q(0.02, 0), Activation::Relu6),
        (
            q(0.1175, 10),
            q(0.03, -2),
            q(0.09, -20),
            Activation::ReluN1To1,
        ),
    ]
}

#[test]
fn add_s8_and_add_s8_tables() {
    for (i, (a, b, o, act)) in int8_binary_params().into_iter().enumerate() {
        let p = add::prepare_s8(a, b, o, act).unwrap();
        let (mut t1, mut t2) = ([0; 256], [0; 256]);
        add::rescale_tables_s8(&p, &mut t1, &mut t2);
        for (x, y) in int8_pairs(600 + i as u64) {
            // Input roles matter: with these parameters swapping them changes the sums, so a
            // variant that swapped them would fail below.
            let (mut xy, mut yx) = (vec![0; x.len()], vec![0; x.len()]);
            add::add_s8(&p, &x, &y, &mut xy);
            add::add_s8(&p, &y, &x, &mut yx);
            assert_ne!(xy, yx);
            check_binary(
                &format!("add_s8 {p:?}"),
                &x,
                &y,
                |x, y, o| add::add_s8(&p, x, y, o),
                |d, y| add::add_s8_in_place1(&p, d, y),
                |x, d| add::add_s8_in_place2(&p, x, d),
            );
            check_binary(
                &format!("add_s8_tables {p:?}"),
                &x,
                &y,
                |x, y, o| add::add_s8_tables(&p, &t1, &t2, x, y, o),
                |d, y| add::add_s8_tables_in_place1(&p, &t1, &t2, d, y),
                |x, d| add::add_s8_tables_in_place2(&p, &t1, &t2, x, d),
            );
        }
    }
}

#[test]
fn mul_s8() {
    for (i, (a, b, o, act)) in int8_binary_params().into_iter().enumerate() {
        let p = mul::prepare_s8(a, b, o, act).unwrap();
        for (x, y) in int8_pairs(700 + i as u64) {
            check_binary(
                &format!("mul_s8 {p:?}"),
                &x,
                &y,
                |x, y, o| mul::mul_s8(&p, x, y, o),
                |d, y| mul::mul_s8_in_place1(&p, d, y),
                |x, d| mul::mul_s8_in_place2(&p, x, d),
            );
        }
    }
}

#[test]
fn add_s16() {
    let cases = [
        (1.0 / 1024.0, 1.0 / 1024.0, 1.0 / 512.0, Activation::None),
        (1.0 / 32768.0, 1.0 / 4096.0, 1.0 / 2048.0, Activation::Relu),
        (0.002, 0.0005, 0.003, Activation::ReluN1To1),
    ];
    for (i, (s1, s2, so, act)) in cases.into_iter().enumerate() {
        let p = add::prepare_s16(q(s1, 0), q(s2, 0), q(so, 0), act).unwrap();
        let inputs = int16_inputs(800 + i as u64);
        let mut rng = Rng(900 + i as u64);
        for x in &inputs {
            // The edge values against themselves reversed and against random values.
            let reversed: Vec<i16> = x.iter().rev().copied().collect();
            let random: Vec<i16> = x.iter().map(|_| rng.i16()).collect();
            for y in [&reversed, &random] {
                check_binary(
                    &format!("add_s16 {p:?}"),
                    x,
                    y,
                    |x, y, o| add::add_s16(&p, x, y, o),
                    |d, y| add::add_s16_in_place1(&p, d, y),
                    |x, d| add::add_s16_in_place2(&p, x, d),
                );
            }
        }
    }
}

#[test]
fn add_f32_and_mul_f32() {
    let activations = [
        Activation::None,
        Activation::Relu,
        Activation::Relu6,
        Activation::ReluN1To1,
    ];
    let mut rng = Rng(1000);
    for (i, act) in activations.into_iter().enumerate() {
        let pa = add::prepare_f32(act);
        let pm = mul::prepare_f32(act);
        for x in f32_inputs(1100 + i as u64) {
            let reversed: Vec<f32> = x.iter().rev().copied().collect();
            let random: Vec<f32> = x.iter().map(|_| rng.f32()).collect();
            for y in [&reversed, &random] {
                check_binary(
                    &format!("add_f32 {pa:?}"),
                    &x,
                    y,
                    |x, y, o| add::add_f32(&pa, x, y, o),
                    |d, y| add::add_f32_in_place1(&pa, d, y),
                    |x, d| add::add_f32_in_place2(&pa, x, d),
                );
                check_binary(
                    &format!("mul_f32 {pm:?}"),
                    &x,
                    y,
                    |x, y, o| mul::mul_f32(&pm, x, y, o),
                    |d, y| mul::mul_f32_in_place1(&pm, d, y),
                    |x, d| mul::mul_f32_in_place2(&pm, x, d),
                );
            }
        }
    }
}
