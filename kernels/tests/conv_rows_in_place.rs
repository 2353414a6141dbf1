//! The in-place CONV_2D kernels by rows give exactly the out-of-place kernels' output (int8
//! byte for byte, float bit for bit) at the start of the input's elements, for many random
//! windows, strides, dilations, paddings, groups and depths, including the parameters of a
//! strip of rows (any padding rows above, fewer output rows than the image has), with garbage
//! in the scratch: the reference int8 and float kernels and the fast int8 one, with its lean
//! im2col and with its full scratch.

mod common;
use common::{Rng, random_quant};

use kiln_kernels::conv_2d::{
    self, Options, Params, fast_rows_in_place_scratch_bytes, rows_in_place_scratch_elements,
    rows_in_place_supported,
};
use kiln_kernels::quant::{Activation, Padding, QuantParams};

const ACTIVATIONS: [Activation; 3] = [Activation::None, Activation::Relu, Activation::Relu6];

/// A random windowed convolution: input shape, filter shape, options.
fn random_case(rng: &mut Rng, groups: usize) -> ([usize; 4], [usize; 4], Options) {
    let fid = rng.range(1, 6);
    let cin = fid * groups;
    let cout = groups * rng.range(1, 6);
    let kh = rng.range(1, 4);
    let kw = if rng.bool() { kh } else { rng.range(1, 4) };
    let options = Options {
        padding: if rng.bool() {
            Padding::Same
        } else {
            Padding::Valid
        },
        stride_height: rng.range(1, 2),
        stride_width: rng.range(1, 2),
        dilation_height_factor: if rng.range(0, 3) == 0 { 2 } else { 1 },
        dilation_width_factor: if rng.range(0, 3) == 0 { 2 } else { 1 },
        activation: ACTIVATIONS[rng.range(0, 2)],
    };
    let shape = [rng.range(1, 2), rng.range(1, 10), rng.range(1, 10), cin];
    (shape, [cout, kh, kw, fid], options)
}

/// `p`, or sometimes the parameters of a strip of its rows: other padding rows above (as a
/// strip's first row sits in the image) and fewer output rows.
fn maybe_strip(rng: &mut Rng, p: Params) -> Params {
    if rng.bool() {
        return p;
    }
    let extent = (p.filter_height - 1) * p.dilation_height_factor + 1;
    let padding_height = rng.range(0, extent - 1);
    // Output rows whose window starts above the input's end.
    let most = (p.input_height + padding_height - 1) / p.stride_height + 1;
    Params {
        padding_height,
        output_height: rng.range(1, most),
        ..p
    }
}

fn input_len(p: &Params) -> usize {
    p.batches * p.input_height * p.input_width * p.input_depth
}

fn output_len(p: &Params) -> usize {
    p.batches * p.output_height * p.output_width * p.output_depth
}

/// An int8 layer: its parameters, per-channel multipliers and shifts, and filter shape.
type S8Layer = (Params, Vec<i32>, Vec<i32>, [usize; 4]);

/// A random int8 layer of `groups` groups (sometimes a strip's parameters), if it runs in
/// place by rows.
fn random_s8(rng: &mut Rng, groups: usize) -> Option<S8Layer> {
    let (shape, fshape, options) = random_case(rng, groups);
    let cout = fshape[0];
    let (input_q, scales, output_q) = random_quant(rng, cout, true);
    let (mut m, mut s) = (vec![0; cout], vec![0; cout]);
    let p = conv_2d::prepare_s8(
        shape, fshape, &options, input_q, &scales, output_q, &mut m, &mut s,
    )
    .ok()?;
    let p = maybe_strip(rng, p);
    rows_in_place_supported(&p).then_some((p, m, s, fshape))
}

/// Counts of the cases run: with a delay (padding rows above), as strips with fewer output
/// rows than a whole image, with stride 2, grouped.
#[derive(Default, Debug)]
struct Coverage {
    cases: usize,
    delayed: usize,
    stride2: usize,
    narrower_rows: usize,
}

impl Coverage {
    fn add(&mut self, p: &Params) {
        self.cases += 1;
        self.delayed += usize::from(p.padding_height > 0);
        self.stride2 += usize::from(p.stride_height == 2);
        self.narrower_rows +=
            usize::from(p.output_width * p.output_depth < p.input_width * p.input_depth);
    }

    fn check(&self, at_least: usize) {
        let Coverage {
            cases,
            delayed,
            stride2,
            narrower_rows,
        } = *self;
        assert!(
            cases >= 4 * at_least
                && delayed >= at_least
                && stride2 >= at_least
                && narrower_rows >= at_least,
            "{self:?}"
        );
    }
}

#[test]
fn s8_rows_in_place_matches_out_of_place() {
    let mut rng = Rng(0x0c0f_fee5);
    let mut coverage = Coverage::default();
    for _ in 0..4000 {
        let groups = rng.range(1, 2);
        let Some((p, m, s, fshape)) = random_s8(&mut rng, groups) else {
            continue;
        };
        let cout = fshape[0];
        let input: Vec<i8> = (0..input_len(&p)).map(|_| rng.i8()).collect();
        let filter: Vec<i8> = (0..fshape.iter().product()).map(|_| rng.i8()).collect();
        let bias: Vec<i32> = (0..cout).map(|_| rng.next() as i32 % 20_000).collect();
        let bias = rng.bool().then_some(&bias[..]);
        let mut expected = vec![0i8; output_len(&p)];
        conv_2d::conv_2d_s8(&p, &m, &s, &input, &filter, bias, &mut expected);
        let mut data = input.clone();
        let mut scratch: Vec<i8> = (0..rows_in_place_scratch_elements(&p))
            .map(|_| rng.i8())
            .collect();
        conv_2d::conv_2d_s8_rows_in_place(&p, &m, &s, &mut data, &filter, bias, &mut scratch);
        assert_eq!(data[..output_len(&p)], expected, "{p:?}");
        coverage.add(&p);
    }
    coverage.check(300);
}

#[test]
fn f32_rows_in_place_matches_out_of_place() {
    let mut rng = Rng(0x00f1_0a75);
    let mut coverage = Coverage::default();
    for _ in 0..4000 {
        let groups = rng.range(1, 2);
        let (shape, fshape, options) = random_case(&mut rng, groups);
        let Ok(p) = conv_2d::prepare_f32(shape, fshape, &options) else {
            continue;
        };
        let p = maybe_strip(&mut rng, p);
        if !rows_in_place_supported(&p) {
            continue;
        }
        let input: Vec<f32> = (0..input_len(&p)).map(|_| rng.f32() * 4.0).collect();
        let filter: Vec<f32> = (0..fshape.iter().product()).map(|_| rng.f32()).collect();
        let bias: Vec<f32> = (0..fshape[0]).map(|_| rng.f32()).collect();
        let bias = rng.bool().then_some(&bias[..]);
        let mut expected = vec![0f32; output_len(&p)];
        conv_2d::conv_2d_f32(&p, &input, &filter, bias, &mut expected);
        let mut data = input.clone();
        let mut scratch: Vec<f32> = (0..rows_in_place_scratch_elements(&p))
            .map(|_| rng.f32() * 1000.0)
            .collect();
        conv_2d::conv_2d_f32_rows_in_place(&p, &mut data, &filter, bias, &mut scratch);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&data[..output_len(&p)]), bits(&expected), "{p:?}");
        coverage.add(&p);
    }
    coverage.check(300);
}

#[test]
fn fast_s8_rows_in_place_matches_the_reference() {
    let mut rng = Rng(0x00fa_57e5);
    let mut coverage = Coverage::default();
    for _ in 0..4000 {
        let Some((p, m, s, fshape)) = random_s8(&mut rng, 1) else {
            continue;
        };
        if conv_2d::pointwise_in_place_supported(&p) {
            continue;
        }
        let cout = fshape[0];
        let filter: Vec<i8> = (0..fshape.iter().product()).map(|_| rng.i8()).collect();
        let bias: Vec<i32> = (0..cout).map(|_| rng.next() as i32 % 20_000).collect();
        let (mut own, mut folded, mut multiplier, mut shift) = (
            vec![0i8; conv_2d::fast_filter_len(&p)],
            vec![0i32; cout],
            vec![0i32; cout],
            vec![0i32; cout],
        );
        let ok = conv_2d::prepare_fast_s8(
            &p,
            &filter,
            Some(&bias),
            &m,
            &s,
            &mut own,
            &mut folded,
            &mut multiplier,
            &mut shift,
        );
        if !ok {
            continue;
        }
        let fast_filter = if own.is_empty() { &filter } else { &own };
        let input: Vec<i8> = (0..input_len(&p)).map(|_| rng.i8()).collect();
        let mut expected = vec![0i8; output_len(&p)];
        conv_2d::conv_2d_s8(&p, &m, &s, &input, &filter, Some(&bias), &mut expected);
        // The lean im2col, or the whole fast scratch after the ring.
        let len = if rng.bool() {
            fast_rows_in_place_scratch_bytes(&p)
        } else {
            rows_in_place_scratch_elements(&p) + conv_2d::fast_scratch_bytes(&p)
        };
        let mut scratch: Vec<i8> = (0..len).map(|_| rng.i8()).collect();
        let mut data = input.clone();
        conv_2d::conv_2d_s8_fast_rows_in_place(
            &p,
            &folded,
            &multiplier,
            &shift,
            fast_filter,
            &mut data,
            &mut scratch,
        );
        assert_eq!(data[..output_len(&p)], expected, "{p:?}");
        coverage.add(&p);
    }
    coverage.check(150);
}

/// A 3x3 SAME convolution of a 4x1 one-channel image, worked by hand: the sum of the three
/// rows around each row, so each output row needs the input row above it, which the ring
/// keeps until the row below is computed.
#[test]
fn s8_rows_by_hand() {
    let unit = QuantParams {
        scale: 1.0,
        zero_point: 0,
    };
    let options = Options {
        padding: Padding::Same,
        stride_height: 1,
        stride_width: 1,
        dilation_height_factor: 1,
        dilation_width_factor: 1,
        activation: Activation::None,
    };
    let (mut m, mut s) = ([0; 1], [0; 1]);
    let p = conv_2d::prepare_s8(
        [1, 4, 1, 1],
        [1, 3, 1, 1],
        &options,
        unit,
        &[1.0],
        unit,
        &mut m,
        &mut s,
    )
    .unwrap();
    assert!(rows_in_place_supported(&p));
    assert_eq!(rows_in_place_scratch_elements(&p), 2);
    let mut data = [1i8, 2, 4, 8];
    let mut scratch = [-7i8; 2];
    conv_2d::conv_2d_s8_rows_in_place(&p, &m, &s, &mut data, &[1, 1, 1], None, &mut scratch);
    assert_eq!(data, [3, 7, 14, 12]);
}

#[test]
fn supported_only_where_rows_fit() {
    let base = conv_2d::prepare_f32(
        [1, 8, 8, 4],
        [4, 3, 3, 4],
        &Options {
            padding: Padding::Same,
            stride_height: 1,
            stride_width: 1,
            dilation_height_factor: 1,
            dilation_width_factor: 1,
            activation: Activation::None,
        },
    )
    .unwrap();
    assert!(rows_in_place_supported(&base));
    assert_eq!(rows_in_place_scratch_elements(&base), 2 * 8 * 4);
    // Narrower output rows, a strip without padding above.
    for good in [
        Params {
            output_depth: 2,
            ..base
        },
        Params {
            padding_height: 0,
            output_height: 6,
            ..base
        },
    ] {
        assert!(rows_in_place_supported(&good), "{good:?}");
    }
    for bad in [
        // Output rows longer than input rows.
        Params {
            output_depth: 5,
            ..base
        },
        // A last output row whose window starts below the input.
        Params {
            output_height: 10,
            output_depth: 3,
            ..base
        },
        // More output rows than the input holds.
        Params {
            output_height: 9,
            ..base
        },
        Params {
            output_height: 0,
            ..base
        },
        Params {
            output_depth: 0,
            ..base
        },
        Params {
            input_width: usize::MAX / 2,
            ..base
        },
    ] {
        assert!(!rows_in_place_supported(&bad), "{bad:?}");
    }
}
