//! `kiln::Quant` against TFLM's QUANTIZE and DEQUANTIZE, byte for byte (floats bit for bit).
//!
//! The golden outputs come from the pinned wheel: the kernel-case bundles
//! `tests/kernel_cases/{quantize_float32,quantize_float32_int16,dequantize_int8,dequantize_int16}`
//! (seeded random values) and `tests/quant/quant_edges.kcase` (`tools/gen_quant_golden.py`:
//! ties, saturation, zero points at the type's extremes, signed zeros, denormals). Each
//! case's model holds the quantization parameters; its inputs go through a `Quant` built from
//! them. Then the generated `*_QUANT` consts of real models.

mod common;

use common::Case;
use kiln::Quant;
use kiln_planner::ir::{DType, Quantization};

fn bundle(path: &str) -> Vec<Case> {
    let bytes = std::fs::read(common::repo_root().join(path)).unwrap();
    let cases = common::parse_kcase(&bytes);
    assert!(!cases.is_empty(), "{path}");
    cases
}

/// The per-tensor quantization of a case's quantized tensor, and its type.
fn quant_of(case: &Case, output: bool) -> (DType, f32, i32) {
    let g = kiln_planner::read_model(&case.model).unwrap();
    let t = g.tensor(if output { g.outputs[0] } else { g.inputs[0] });
    match t.quant {
        Quantization::PerTensor { scale, zero_point } => (t.dtype, scale, zero_point as i32),
        ref q => panic!("not per-tensor: {q:?}"),
    }
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The first differing element, as a message.
fn differs(what: &str, got: &[u8], want: &[u8], width: usize) -> Option<String> {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let at = got
        .chunks(width)
        .zip(want.chunks(width))
        .position(|(a, b)| a != b)?;
    Some(format!(
        "{what}: element {at} differs (got {:02x?}, want {:02x?})",
        &got[at * width..][..width],
        &want[at * width..][..width]
    ))
}

/// QUANTIZE float32 -> int8/int16 through `Quant::quantize_slice` and `Quant::quantize`.
fn check_quantize(name: &str, i: usize, case: &Case) -> Option<String> {
    let (dtype, scale, zp) = quant_of(case, true);
    let x = f32s(&case.inputs[0]);
    let want = &case.outputs[0];
    let what = format!("{name} case {i} (scale {scale:e}, zero point {zp})");
    let (slice, one, width) = match dtype {
        DType::I8 => {
            let q = Quant::<i8>::new(scale, zp);
            let mut out = vec![0i8; x.len()];
            q.quantize_slice(&x, &mut out);
            let one: Vec<u8> = x.iter().map(|&v| q.quantize(v) as u8).collect();
            (out.iter().map(|&v| v as u8).collect::<Vec<u8>>(), one, 1)
        }
        DType::I16 => {
            let q = Quant::<i16>::new(scale, zp);
            let mut out = vec![0i16; x.len()];
            q.quantize_slice(&x, &mut out);
            let one: Vec<u8> = x
                .iter()
                .flat_map(|&v| q.quantize(v).to_le_bytes())
                .collect();
            (out.iter().flat_map(|v| v.to_le_bytes()).collect(), one, 2)
        }
        other => panic!("{what}: output type {other:?}"),
    };
    differs(&format!("{what}, quantize_slice"), &slice, want, width)
        .or_else(|| differs(&format!("{what}, quantize"), &one, want, width))
}

/// DEQUANTIZE int8/int16 -> float32 through `Quant::dequantize_slice` and `Quant::dequantize`.
fn check_dequantize(name: &str, i: usize, case: &Case) -> Option<String> {
    let (dtype, scale, zp) = quant_of(case, false);
    let b = &case.inputs[0];
    let want = &case.outputs[0];
    let what = format!("{name} case {i} (scale {scale:e}, zero point {zp})");
    let (slice, one) = match dtype {
        DType::I8 => {
            let q = Quant::<i8>::new(scale, zp);
            let v: Vec<i8> = b.iter().map(|&x| x as i8).collect();
            let mut out = vec![0f32; v.len()];
            q.dequantize_slice(&v, &mut out);
            let one: Vec<f32> = v.iter().map(|&x| q.dequantize(x)).collect();
            (out, one)
        }
        DType::I16 => {
            let q = Quant::<i16>::new(scale, zp);
            let v: Vec<i16> = b
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect();
            let mut out = vec![0f32; v.len()];
            q.dequantize_slice(&v, &mut out);
            let one: Vec<f32> = v.iter().map(|&x| q.dequantize(x)).collect();
            (out, one)
        }
        other => panic!("{what}: input type {other:?}"),
    };
    differs(
        &format!("{what}, dequantize_slice"),
        &f32_bytes(&slice),
        want,
        4,
    )
    .or_else(|| differs(&format!("{what}, dequantize"), &f32_bytes(&one), want, 4))
}

fn op_of(case: &Case) -> String {
    let g = kiln_planner::read_model(&case.model).unwrap();
    assert_eq!(g.ops.len(), 1);
    g.ops[0].kind.name().to_string()
}

fn check_bundle(path: &str) -> (usize, Vec<String>) {
    let cases = bundle(path);
    let failures = cases
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match op_of(c).as_str() {
            "QUANTIZE" => check_quantize(path, i, c),
            "DEQUANTIZE" => check_dequantize(path, i, c),
            other => Some(format!("{path} case {i}: unexpected {other}")),
        })
        .collect();
    (cases.len(), failures)
}

#[test]
fn quant_matches_tflm_on_the_kernel_cases() {
    let mut failures = Vec::new();
    for b in [
        "quantize_float32",
        "quantize_float32_int16",
        "dequantize_int8",
        "dequantize_int16",
    ] {
        let (n, f) = check_bundle(&format!("tests/kernel_cases/{b}.kcase"));
        assert!(n >= 100, "{b}: {n} cases");
        failures.extend(f);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn quant_matches_tflm_on_ties_saturation_and_extreme_zero_points() {
    let path = "tests/quant/quant_edges.kcase";
    let (_, failures) = check_bundle(path);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The golden covers what it is for: exact ties of both signs, outputs saturated at both
    // ends, zero points at both extremes of both types.
    let (mut ties, mut low, mut high) = (0, 0, 0);
    let mut zero_points = std::collections::BTreeSet::new();
    for case in bundle(path) {
        let quantize = op_of(&case) == "QUANTIZE";
        let (dtype, scale, zp) = quant_of(&case, quantize);
        zero_points.insert((format!("{dtype:?}"), zp));
        if !quantize {
            continue;
        }
        for x in f32s(&case.inputs[0]) {
            let v = x / scale;
            if v.fract().abs() == 0.5 {
                ties += 1;
            }
        }
        let (lo, hi) = match dtype {
            DType::I8 => (i8::MIN as i32, i8::MAX as i32),
            _ => (i16::MIN as i32, i16::MAX as i32),
        };
        let width = if dtype == DType::I8 { 1 } else { 2 };
        for c in case.outputs[0].chunks(width) {
            let q = if width == 1 {
                c[0] as i8 as i32
            } else {
                i16::from_le_bytes([c[0], c[1]]) as i32
            };
            low += (q == lo) as usize;
            high += (q == hi) as usize;
        }
    }
    assert!(ties > 1000, "{ties} ties");
    assert!(low > 100 && high > 100, "saturated: {low} low, {high} high");
    for z in [("I8", -128), ("I8", 127), ("I16", -32768), ("I16", 32767)] {
        assert!(
            zero_points.contains(&(z.0.to_string(), z.1)),
            "zero point {z:?}"
        );
    }
}

// The generated consts of real models.

mod quantize_f32_s8 {
    kiln::include_model!("kernel_cases/models/quantize_float32.tflite");
}
mod quantize_f32_s16 {
    kiln::include_model!("kernel_cases/models/quantize_float32_int16.tflite");
}
mod dequantize_s8 {
    kiln::include_model!("kernel_cases/models/dequantize_int8.tflite");
}
mod add_s8 {
    kiln::include_model!("kernel_cases/models/add_int8.tflite");
}
mod mlp_int8 {
    kiln::include_model!("models/mlp_int8.tflite");
}

/// A QUANTIZE model's `OUTPUT_QUANT` quantizes the bundle's float input into what the
/// compiled model and TFLM write.
#[test]
fn output_quant_of_a_quantize_model_is_its_operator() {
    let case = &bundle("tests/kernel_cases/quantize_float32.kcase")[0];
    let x = f32s(&case.inputs[0]);
    let q = quantize_f32_s8::OUTPUT_QUANT;
    assert_eq!(q.scale(), quantize_f32_s8::OUTPUT_SCALE);
    assert_eq!(q.zero_point(), quantize_f32_s8::OUTPUT_ZERO_POINT);
    let mut m = quantize_f32_s8::Model::take().unwrap();
    m.input_mut().copy_from_slice(&x);
    m.invoke();
    let mut ours = [0i8; 1];
    let mut mine = vec![0i8; x.len()];
    q.quantize_slice(&x, &mut mine);
    assert_eq!(mine.as_slice(), m.output().as_slice());
    let want: Vec<i8> = case.outputs[0].iter().map(|&b| b as i8).collect();
    assert_eq!(mine, want);
    q.quantize_slice(&x[..1], &mut ours);
    assert_eq!(ours[0], want[0]);

    let case = &bundle("tests/kernel_cases/quantize_float32_int16.kcase")[0];
    let x = f32s(&case.inputs[0]);
    let mut m = quantize_f32_s16::Model::take().unwrap();
    m.input_mut().copy_from_slice(&x);
    m.invoke();
    let got: Vec<i16> = x
        .iter()
        .map(|&v| quantize_f32_s16::OUTPUT_QUANT.quantize(v))
        .collect();
    assert_eq!(got.as_slice(), m.output().as_slice());
}

/// A DEQUANTIZE model's `INPUT_QUANT` dequantizes as the model does, bit for bit.
#[test]
fn input_quant_of_a_dequantize_model_is_its_operator() {
    let case = &bundle("tests/kernel_cases/dequantize_int8.kcase")[0];
    let v: Vec<i8> = case.inputs[0].iter().map(|&b| b as i8).collect();
    let mut m = dequantize_s8::Model::take().unwrap();
    m.input_mut().copy_from_slice(&v);
    m.invoke();
    let mut mine = vec![0f32; v.len()];
    dequantize_s8::INPUT_QUANT.dequantize_slice(&v, &mut mine);
    assert_eq!(f32_bytes(&mine), f32_bytes(m.output()));
    assert_eq!(f32_bytes(&mine), case.outputs[0]);
}

/// Several inputs: `INPUT0_QUANT`, `INPUT1_QUANT`, with each input's parameters.
#[test]
fn quant_consts_are_numbered_like_the_others() {
    assert_eq!(add_s8::INPUTS, 2);
    assert_eq!(add_s8::INPUT0_QUANT.scale(), add_s8::INPUT0_SCALE);
    assert_eq!(add_s8::INPUT0_QUANT.zero_point(), add_s8::INPUT0_ZERO_POINT);
    assert_eq!(add_s8::INPUT1_QUANT.scale(), add_s8::INPUT1_SCALE);
    assert_eq!(add_s8::INPUT1_QUANT.zero_point(), add_s8::INPUT1_ZERO_POINT);
    assert_eq!(add_s8::OUTPUT_QUANT.scale(), add_s8::OUTPUT_SCALE);
    let _: kiln::Quant<i8> = add_s8::OUTPUT_QUANT;
}

/// An int8 model fed from floats: the golden inputs dequantized with `INPUT_QUANT` and
/// quantized back are the golden inputs again, and the model then gives TFLM's outputs;
/// `OUTPUT_QUANT` dequantizes them as `scale * (q - zero_point)` in double precision, rounded
/// once (TFLM's DEQUANTIZE).
#[test]
fn an_int8_model_fed_from_floats_gives_tflms_outputs() {
    let samples = common::samples(&common::repo_root().join("tests/models/golden/mlp_int8"));
    assert!(!samples.is_empty());
    let mut m = mlp_int8::Model::take().unwrap();
    let (qi, qo) = (mlp_int8::INPUT_QUANT, mlp_int8::OUTPUT_QUANT);
    for s in &samples {
        let golden: Vec<i8> = s.inputs[0].iter().map(|&b| b as i8).collect();
        let mut floats = vec![0f32; golden.len()];
        qi.dequantize_slice(&golden, &mut floats);
        qi.quantize_slice(&floats, m.input_mut());
        assert_eq!(
            m.input_mut().as_slice(),
            golden.as_slice(),
            "sample {}",
            s.seed
        );
        m.invoke();
        assert_eq!(
            m.output_bytes(0),
            s.outputs[0].as_slice(),
            "sample {}",
            s.seed
        );
        for &q in m.output() {
            let want = (f64::from(qo.scale()) * f64::from(q as i32 - qo.zero_point())) as f32;
            assert_eq!(qo.dequantize(q).to_bits(), want.to_bits());
        }
    }
}

mod per_channel {
    kiln::include_model!("quant/per_channel_int8.tflite");
}

/// A per-channel quantized input or output has several scales: its `*_SCALE` is 0 and it has
/// no `*_QUANT` (`tests/ui/no_quant_per_channel.rs` checks that it does not compile).
#[test]
fn per_channel_inputs_and_outputs_report_scale_zero() {
    assert_eq!(per_channel::INPUT_DTYPE, kiln::DType::I8);
    assert_eq!(per_channel::INPUT_SCALE, 0.0);
    assert_eq!(per_channel::OUTPUT_SCALE, 0.0);
    let mut m = per_channel::Model::take().unwrap();
    m.input_mut().copy_from_slice(&[0, 1, 2, 3]);
    m.invoke();
    assert_eq!(m.output(), &[0, 1, 2, 3]);
}
