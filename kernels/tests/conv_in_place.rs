//! The in-place pointwise CONV_2D kernels give exactly the out-of-place kernels' output (int8
//! byte for byte, float bit for bit) in the first elements of the shared buffer, for many
//! random shapes (fewer, as many and more output channels than input channels), quantization
//! parameters, biases and activations, with the input placed at the end of the buffer and
//! garbage before it and in the scratch slice.

mod common;
use common::{Rng, random_quant};

use kiln_kernels::conv_2d::{
    self, Options, Params, pointwise_in_place_len, pointwise_in_place_scratch_elements,
    pointwise_in_place_supported,
};
use kiln_kernels::quant::{Activation, Padding, QuantParams};

const ACTIVATIONS: [Activation; 4] = [
    Activation::None,
    Activation::Relu,
    Activation::Relu6,
    Activation::ReluN1To1,
];

/// How the output depth compares with the input depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Depths {
    Fewer,
    Same,
    More,
}

/// One random pointwise node: shapes and options.
#[derive(Debug)]
struct Case {
    input_shape: [usize; 4],
    filter_shape: [usize; 4],
    options: Options,
    depths: Depths,
}

fn random_pointwise_case(rng: &mut Rng) -> Case {
    let batches = rng.range(1, 2);
    let height = rng.range(1, 9);
    let width = rng.range(1, 9);
    let depths = [Depths::Fewer, Depths::Same, Depths::More][rng.range(0, 2)];
    let (cin, cout) = match depths {
        Depths::Fewer => {
            let cin = rng.range(2, 40);
            (cin, rng.range(1, cin - 1))
        }
        Depths::Same => {
            let c = rng.range(1, 40);
            (c, c)
        }
        Depths::More => {
            let cout = rng.range(2, 40);
            (rng.range(1, cout - 1), cout)
        }
    };
    // A 1x1 filter with stride 1 gets no padding from SAME either; dilation is irrelevant.
    let padding = if rng.bool() {
        Padding::Same
    } else {
        Padding::Valid
    };
    Case {
        input_shape: [batches, height, width, cin],
        filter_shape: [cout, 1, 1, cin],
        options: Options {
            padding,
            stride_height: 1,
            stride_width: 1,
            dilation_height_factor: rng.range(1, 2),
            dilation_width_factor: rng.range(1, 2),
            activation: ACTIVATIONS[rng.range(0, 3)],
        },
        depths,
    }
}

fn input_len(p: &Params) -> usize {
    p.batches * p.input_height * p.input_width * p.input_depth
}

fn output_len(p: &Params) -> usize {
    p.batches * p.output_height * p.output_width * p.output_depth
}

/// `[garbage; len - input.len()] ++ input`, `len = pointwise_in_place_len(p)`.
fn in_place_buffer<T: Copy>(p: &Params, input: &[T], mut garbage: impl FnMut() -> T) -> Vec<T> {
    let len = pointwise_in_place_len(p);
    assert_eq!(len, input_len(p).max(output_len(p)));
    let mut data: Vec<T> = (0..len - input.len()).map(|_| garbage()).collect();
    data.extend_from_slice(input);
    data
}

/// Counts of the cases run per [`Depths`], which must all be well covered.
#[derive(Default)]
struct Coverage([usize; 3]);

impl Coverage {
    fn add(&mut self, d: Depths) {
        self.0[d as usize] += 1;
    }

    fn check(&self, at_least: usize) {
        assert!(self.0.iter().all(|&n| n >= at_least), "{:?}", self.0);
    }
}

#[test]
fn s8_pointwise_in_place_matches_out_of_place() {
    let mut rng = Rng(0x5eed_c0de);
    let mut coverage = Coverage::default();
    for _ in 0..3000 {
        let case = random_pointwise_case(&mut rng);
        let cout = case.filter_shape[0];
        let (input_q, filter_scales, output_q) = random_quant(&mut rng, cout, true);
        let mut m = vec![0; cout];
        let mut s = vec![0; cout];
        let p = conv_2d::prepare_s8(
            case.input_shape,
            case.filter_shape,
            &case.options,
            input_q,
            &filter_scales,
            output_q,
            &mut m,
            &mut s,
        )
        .unwrap();
        assert!(pointwise_in_place_supported(&p), "{case:?}");
        assert_eq!(pointwise_in_place_scratch_elements(&p), cout);
        let input: Vec<i8> = (0..input_len(&p)).map(|_| rng.i8()).collect();
        let filter: Vec<i8> = (0..case.filter_shape.iter().product())
            .map(|_| rng.i8())
            .collect();
        let bias: Vec<i32> = (0..cout).map(|_| rng.next() as i32 % 20_000).collect();
        let bias = rng.bool().then_some(&bias[..]);
        let mut expected = vec![0i8; output_len(&p)];
        conv_2d::conv_2d_s8(&p, &m, &s, &input, &filter, bias, &mut expected);
        let mut data = in_place_buffer(&p, &input, || rng.i8());
        let mut scratch: Vec<i8> = (0..cout).map(|_| rng.i8()).collect();
        conv_2d::conv_2d_s8_pointwise_in_place(&p, &m, &s, &mut data, &filter, bias, &mut scratch);
        assert_eq!(&data[..expected.len()], &expected[..], "{case:?}");
        coverage.add(case.depths);
    }
    coverage.check(800);
}

#[test]
fn f32_pointwise_in_place_matches_out_of_place() {
    let mut rng = Rng(0x0f10_a7ed);
    let mut coverage = Coverage::default();
    for _ in 0..3000 {
        let case = random_pointwise_case(&mut rng);
        let cout = case.filter_shape[0];
        let p = conv_2d::prepare_f32(case.input_shape, case.filter_shape, &case.options).unwrap();
        assert!(pointwise_in_place_supported(&p), "{case:?}");
        let input: Vec<f32> = (0..input_len(&p)).map(|_| rng.f32() * 4.0).collect();
        let filter: Vec<f32> = (0..case.filter_shape.iter().product())
            .map(|_| rng.f32())
            .collect();
        let bias: Vec<f32> = (0..cout).map(|_| rng.f32()).collect();
        let bias = rng.bool().then_some(&bias[..]);
        let mut expected = vec![0f32; output_len(&p)];
        conv_2d::conv_2d_f32(&p, &input, &filter, bias, &mut expected);
        let mut data = in_place_buffer(&p, &input, || rng.f32() * 1000.0);
        let mut scratch: Vec<f32> = (0..cout).map(|_| rng.f32() * 1000.0).collect();
        conv_2d::conv_2d_f32_pointwise_in_place(&p, &mut data, &filter, bias, &mut scratch);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&data[..expected.len()]), bits(&expected), "{case:?}");
        coverage.add(case.depths);
    }
    coverage.check(800);
}

/// A `[2, 1, 2, 2]` input (4 pixels) to 3 channels, worked by hand: the input occupies the
/// last 8 of the 12 elements, the output all 12.
#[test]
fn s8_more_channels_by_hand() {
    let unit = QuantParams {
        scale: 1.0,
        zero_point: 0,
    };
    let options = Options {
        padding: Padding::Valid,
        stride_height: 1,
        stride_width: 1,
        dilation_height_factor: 1,
        dilation_width_factor: 1,
        activation: Activation::None,
    };
    let mut m = [0; 3];
    let mut s = [0; 3];
    let p = conv_2d::prepare_s8(
        [2, 1, 2, 2],
        [3, 1, 1, 2],
        &options,
        unit,
        &[1.0],
        unit,
        &mut m,
        &mut s,
    )
    .unwrap();
    assert!(pointwise_in_place_supported(&p));
    assert_eq!(pointwise_in_place_len(&p), 12);
    assert_eq!(pointwise_in_place_scratch_elements(&p), 3);
    // Pixel k holds (k + 1, 10 * (k + 1)).
    let mut data = [99i8, 99, 99, 99, 1, 10, 2, 20, 3, 30, 4, 40];
    // Outputs: first channel, second channel, their sum.
    let filter = [1i8, 0, 0, 1, 1, 1];
    let mut scratch = [-7i8; 3];
    conv_2d::conv_2d_s8_pointwise_in_place(
        &p,
        &m,
        &s,
        &mut data,
        &filter,
        Some(&[0, 0, 1]),
        &mut scratch,
    );
    assert_eq!(data, [1, 10, 12, 2, 20, 23, 3, 30, 34, 4, 40, 45]);
}

/// What `pointwise_in_place_supported` must say, from first principles.
fn expect_supported(p: &Params) -> bool {
    p.filter_height == 1
        && p.filter_width == 1
        && p.stride_height == 1
        && p.stride_width == 1
        && p.padding_height == 0
        && p.padding_width == 0
        && p.output_height == p.input_height
        && p.output_width == p.input_width
        && p.filter_input_depth == p.input_depth
}

#[test]
fn supported_only_for_pointwise() {
    let mut rng = Rng(0x0005_0ed5);
    let (mut yes, mut no) = (0, 0);
    for _ in 0..3000 {
        let groups = if rng.range(0, 3) == 0 { 2 } else { 1 };
        let fid = rng.range(1, 8);
        let cin = fid * groups;
        let cout = groups * rng.range(1, 8);
        let kh = rng.range(1, 3);
        let kw = if rng.bool() { kh } else { rng.range(1, 3) };
        let options = Options {
            padding: if rng.bool() {
                Padding::Same
            } else {
                Padding::Valid
            },
            stride_height: if rng.range(0, 3) == 0 { 2 } else { 1 },
            stride_width: if rng.range(0, 3) == 0 { 2 } else { 1 },
            dilation_height_factor: rng.range(1, 2),
            dilation_width_factor: rng.range(1, 2),
            activation: Activation::None,
        };
        let Ok(p) = conv_2d::prepare_f32(
            [rng.range(1, 2), rng.range(1, 9), rng.range(1, 9), cin],
            [cout, kh, kw, fid],
            &options,
        ) else {
            continue;
        };
        let expected = expect_supported(&p);
        assert_eq!(pointwise_in_place_supported(&p), expected, "{p:?}");
        if expected {
            yes += 1;
        } else {
            no += 1;
        }
    }
    assert!(yes > 100 && no > 1000, "{yes} supported, {no} not");

    let pointwise = conv_2d::prepare_f32(
        [1, 4, 4, 8],
        [16, 1, 1, 8],
        &Options {
            padding: Padding::Same,
            stride_height: 1,
            stride_width: 1,
            dilation_height_factor: 1,
            dilation_width_factor: 1,
            activation: Activation::Relu6,
        },
    )
    .unwrap();
    assert!(pointwise_in_place_supported(&pointwise));
    assert_eq!(pointwise_in_place_len(&pointwise), 16 * 16);
    assert_eq!(pointwise_in_place_scratch_elements(&pointwise), 16);
    let narrower = Params {
        output_depth: 4,
        ..pointwise
    };
    assert_eq!(pointwise_in_place_len(&narrower), 16 * 8);
    // Each condition on its own (parameters `prepare_*` would not all produce).
    for bad in [
        Params {
            filter_height: 3,
            ..pointwise
        },
        Params {
            filter_width: 3,
            ..pointwise
        },
        Params {
            stride_height: 2,
            ..pointwise
        },
        Params {
            stride_width: 2,
            ..pointwise
        },
        Params {
            padding_height: 1,
            ..pointwise
        },
        Params {
            padding_width: 1,
            ..pointwise
        },
        Params {
            output_height: 3,
            ..pointwise
        },
        Params {
            output_width: 5,
            ..pointwise
        },
        // Two groups.
        Params {
            filter_input_depth: 4,
            ..pointwise
        },
        Params {
            input_depth: 0,
            filter_input_depth: 0,
            ..pointwise
        },
        Params {
            output_depth: 0,
            ..pointwise
        },
        // Lengths overflowing `usize` are refused rather than wrapping.
        Params {
            batches: usize::MAX / 2,
            ..pointwise
        },
        Params {
            output_depth: usize::MAX / 4,
            ..pointwise
        },
    ] {
        assert!(!pointwise_in_place_supported(&bad), "{bad:?}");
    }
    // Dilation does not matter for a 1x1 filter.
    assert!(pointwise_in_place_supported(&Params {
        dilation_height_factor: 3,
        dilation_width_factor: 2,
        ..pointwise
    }));
}
