//! The in-place DEPTHWISE_CONV_2D kernels give exactly the out-of-place kernels' output (int8
//! and int16 byte for byte, float bit for bit) in the first elements of the input buffer, for
//! many random shapes, strides, dilations, paddings, activations and quantization parameters.

mod common;
use common::{Rng, random_quant};

use kiln_kernels::depthwise_conv_2d::{
    self, Options, Params, in_place_scratch_elements, in_place_supported,
};
use kiln_kernels::quant::{Activation, Padding, PrepareError, QuantParams};

/// One random node: shapes and options.
#[derive(Debug)]
struct Case {
    input_shape: [usize; 4],
    filter_shape: [usize; 4],
    options: Options,
}

fn random_case(rng: &mut Rng) -> Case {
    let batches = rng.range(1, 2);
    let height = rng.range(1, 12);
    let width = rng.range(1, 12);
    let channels = rng.range(1, 16);
    // Mostly multiplier 1 (the in-place case); sometimes 2 or 3, which must be refused.
    let depth_multiplier = if rng.range(0, 7) == 0 {
        rng.range(2, 3)
    } else {
        1
    };
    let activation = [
        Activation::None,
        Activation::Relu,
        Activation::Relu6,
        Activation::ReluN1To1,
    ][rng.range(0, 3)];
    Case {
        input_shape: [batches, height, width, channels],
        filter_shape: [
            1,
            rng.range(1, 5),
            rng.range(1, 5),
            channels * depth_multiplier,
        ],
        options: Options {
            padding: if rng.bool() {
                Padding::Same
            } else {
                Padding::Valid
            },
            stride_height: rng.range(1, 3),
            stride_width: rng.range(1, 3),
            dilation_height_factor: rng.range(1, 2),
            dilation_width_factor: rng.range(1, 2),
            depth_multiplier,
            activation,
        },
    }
}

fn input_len(p: &Params) -> usize {
    p.batches * p.input_height * p.input_width * p.input_depth
}

fn output_len(p: &Params) -> usize {
    p.batches * p.output_height * p.output_width * p.output_depth
}

/// What `in_place_supported` must say, from first principles.
fn expect_supported(p: &Params) -> bool {
    p.depth_multiplier == 1
        && p.output_depth == p.input_depth
        && p.output_height * p.output_width <= p.input_height * p.input_width
}

/// Runs `check` on `cases` random cases and returns how many were done in place.
fn for_random_cases(
    seed: u32,
    cases: usize,
    mut check: impl FnMut(&mut Rng, &Case) -> bool,
) -> usize {
    let mut rng = Rng(seed);
    let mut in_place = 0;
    for _ in 0..cases {
        let case = random_case(&mut rng);
        if check(&mut rng, &case) {
            in_place += 1;
        }
    }
    in_place
}

fn valid_shape<T>(r: Result<T, PrepareError>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        // VALID with a window larger than the input.
        Err(PrepareError::InvalidShape) => None,
        Err(e) => panic!("unexpected {e:?}"),
    }
}

#[test]
fn s8_in_place_matches_out_of_place() {
    let done = for_random_cases(0x1234_5678, 3000, |rng, case| {
        let channels = case.filter_shape[3];
        let (input_q, filter_scales, output_q) = random_quant(rng, channels, true);
        let mut m = vec![0; channels];
        let mut s = vec![0; channels];
        let Some(p) = valid_shape(depthwise_conv_2d::prepare_s8(
            case.input_shape,
            case.filter_shape,
            &case.options,
            input_q,
            &filter_scales,
            output_q,
            &mut m,
            &mut s,
        )) else {
            return false;
        };
        assert_eq!(in_place_supported(&p), expect_supported(&p), "{case:?}");
        if !in_place_supported(&p) {
            return false;
        }
        let input: Vec<i8> = (0..input_len(&p)).map(|_| rng.i8()).collect();
        let filter: Vec<i8> = (0..case.filter_shape.iter().product())
            .map(|_| rng.i8())
            .collect();
        let bias: Vec<i32> = (0..channels).map(|_| rng.next() as i32 % 5000).collect();
        let bias = rng.bool().then_some(&bias[..]);
        let mut expected = vec![0i8; output_len(&p)];
        depthwise_conv_2d::depthwise_conv_2d_s8(&p, &m, &s, &input, &filter, bias, &mut expected);
        let mut data = input.clone();
        let mut scratch: Vec<i8> = (0..in_place_scratch_elements(&p))
            .map(|_| rng.i8())
            .collect();
        depthwise_conv_2d::depthwise_conv_2d_s8_in_place(
            &p,
            &m,
            &s,
            &mut data,
            &filter,
            bias,
            &mut scratch,
        );
        assert_eq!(&data[..expected.len()], &expected[..], "{case:?}");
        true
    });
    assert!(done > 1500, "only {done} cases in place");
}

#[test]
fn f32_in_place_matches_out_of_place() {
    let done = for_random_cases(0x0bad_cafe, 3000, |rng, case| {
        let channels = case.filter_shape[3];
        let Some(p) = valid_shape(depthwise_conv_2d::prepare_f32(
            case.input_shape,
            case.filter_shape,
            &case.options,
        )) else {
            return false;
        };
        assert_eq!(in_place_supported(&p), expect_supported(&p), "{case:?}");
        if !in_place_supported(&p) {
            return false;
        }
        let input: Vec<f32> = (0..input_len(&p)).map(|_| rng.f32() * 4.0).collect();
        let filter: Vec<f32> = (0..case.filter_shape.iter().product())
            .map(|_| rng.f32())
            .collect();
        let bias: Vec<f32> = (0..channels).map(|_| rng.f32()).collect();
        let bias = rng.bool().then_some(&bias[..]);
        let mut expected = vec![0f32; output_len(&p)];
        depthwise_conv_2d::depthwise_conv_2d_f32(&p, &input, &filter, bias, &mut expected);
        let mut data = input.clone();
        let mut scratch: Vec<f32> = (0..in_place_scratch_elements(&p))
            .map(|_| rng.f32())
            .collect();
        depthwise_conv_2d::depthwise_conv_2d_f32_in_place(
            &p,
            &mut data,
            &filter,
            bias,
            &mut scratch,
        );
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&data[..expected.len()]), bits(&expected), "{case:?}");
        true
    });
    assert!(done > 1500, "only {done} cases in place");
}

#[test]
fn s16_in_place_matches_out_of_place() {
    let done = for_random_cases(0x5eed_0016, 2000, |rng, case| {
        let channels = case.filter_shape[3];
        let (input_q, filter_scales, output_q) = random_quant(rng, channels, false);
        let mut m = vec![0; channels];
        let mut s = vec![0; channels];
        let Some(p) = valid_shape(depthwise_conv_2d::prepare_s16(
            case.input_shape,
            case.filter_shape,
            &case.options,
            input_q,
            &filter_scales,
            output_q,
            &mut m,
            &mut s,
        )) else {
            return false;
        };
        assert_eq!(in_place_supported(&p), expect_supported(&p), "{case:?}");
        if !in_place_supported(&p) {
            return false;
        }
        let input: Vec<i16> = (0..input_len(&p)).map(|_| rng.i16()).collect();
        let filter: Vec<i8> = (0..case.filter_shape.iter().product())
            .map(|_| rng.i8())
            .collect();
        let bias: Vec<i64> = (0..channels)
            .map(|_| rng.next() as i32 as i64 % 1_000_000)
            .collect();
        let mut expected = vec![0i16; output_len(&p)];
        depthwise_conv_2d::depthwise_conv_2d_s16(&p, &m, &s, &input, &filter, &bias, &mut expected);
        let mut data = input.clone();
        let mut scratch: Vec<i16> = (0..in_place_scratch_elements(&p))
            .map(|_| rng.i16())
            .collect();
        depthwise_conv_2d::depthwise_conv_2d_s16_in_place(
            &p,
            &m,
            &s,
            &mut data,
            &filter,
            &bias,
            &mut scratch,
        );
        assert_eq!(&data[..expected.len()], &expected[..], "{case:?}");
        true
    });
    assert!(done > 1000, "only {done} cases in place");
}

/// A 2x2 VALID window with stride 1 over a `[2, 3, 3, 2]` input, worked by hand.
#[test]
fn s8_by_hand() {
    let options = Options {
        padding: Padding::Valid,
        stride_height: 1,
        stride_width: 1,
        dilation_height_factor: 1,
        dilation_width_factor: 1,
        depth_multiplier: 1,
        activation: Activation::None,
    };
    let unit = QuantParams {
        scale: 1.0,
        zero_point: 0,
    };
    let mut m = [0; 2];
    let mut s = [0; 2];
    let p = depthwise_conv_2d::prepare_s8(
        [2, 3, 3, 2],
        [1, 2, 2, 2],
        &options,
        unit,
        &[1.0],
        unit,
        &mut m,
        &mut s,
    )
    .unwrap();
    assert_eq!((p.output_height, p.output_width), (2, 2));
    assert!(in_place_supported(&p));
    assert_eq!(in_place_scratch_elements(&p), 8);
    // Channel 0 of batch b holds 10 * b + pixel, channel 1 its negation.
    let mut data = [0i8; 36];
    for (i, px) in data.chunks_exact_mut(2).enumerate() {
        let v = (10 * (i / 9) + i % 9) as i8;
        px.copy_from_slice(&[v, -v]);
    }
    // Channel 0 sums its window, channel 1 takes its top-left tap.
    let filter = [1, 1, 1, 0, 1, 0, 1, 0];
    let mut scratch = [0i8; 8];
    depthwise_conv_2d::depthwise_conv_2d_s8_in_place(
        &p,
        &m,
        &s,
        &mut data,
        &filter,
        Some(&[0, 100]),
        &mut scratch,
    );
    // Window sums of pixels (p, p+1, p+3, p+4) are 4p + 8 for top-left pixel p.
    let mut expected = [0i8; 16];
    for b in 0..2 {
        for (k, tl) in [0, 1, 3, 4].into_iter().enumerate() {
            let base = 10 * b + tl;
            let o = (b * 4 + k) * 2;
            expected[o] = (4 * base + 8) as i8;
            expected[o + 1] = (100 - base) as i8;
        }
    }
    assert_eq!(data[..16], expected);
}

#[test]
fn refused_when_not_applicable() {
    let options = Options {
        padding: Padding::Same,
        stride_height: 1,
        stride_width: 1,
        dilation_height_factor: 1,
        dilation_width_factor: 1,
        depth_multiplier: 2,
        activation: Activation::None,
    };
    let p = depthwise_conv_2d::prepare_f32([1, 4, 4, 3], [1, 3, 3, 6], &options).unwrap();
    assert!(!in_place_supported(&p));
    let p = depthwise_conv_2d::prepare_f32(
        [1, 4, 4, 3],
        [1, 3, 3, 3],
        &Options {
            depth_multiplier: 1,
            ..options
        },
    )
    .unwrap();
    assert!(in_place_supported(&p));
    assert_eq!(in_place_scratch_elements(&p), 16);
    // More output pixels than input pixels (not produced by `prepare_*`, but refused).
    let wider = Params {
        output_width: 5,
        ..p
    };
    assert!(!in_place_supported(&wider));
    // Overflowing sizes are refused rather than wrapping.
    let huge = Params {
        output_height: usize::MAX,
        ..p
    };
    assert!(!in_place_supported(&huge));
}
