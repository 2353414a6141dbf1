//! Reader unit tests: small models built with the generated builder, each breaking one rule,
//! and the diagnostic each must give.

use super::fb;
use super::read_model;
use crate::diag::ErrorKind;
use crate::ir::{OpKind, Quantization};
use flatbuffers::FlatBufferBuilder;

/// A tensor of a test model.
struct T {
    shape: Vec<i32>,
    ty: fb::TensorType,
    buffer: u32,
    scales: Vec<f32>,
    axis: i32,
}

fn t(shape: &[i32], buffer: u32) -> T {
    T {
        shape: shape.to_vec(),
        ty: fb::TensorType::INT8,
        buffer,
        scales: vec![],
        axis: 0,
    }
}

/// One operator: builtin code, inputs, outputs, and whether to attach Conv2D options.
struct O {
    code: i32,
    inputs: Vec<i32>,
    outputs: Vec<i32>,
    conv_options: bool,
}

/// Builds a model: tensors, buffers (buffer 0 is the empty sentinel), operators, I/O.
fn model(
    tensors: &[T],
    buffers: &[Vec<u8>],
    ops: &[O],
    io: (&[i32], &[i32]),
    subgraphs: usize,
) -> Vec<u8> {
    let mut b = FlatBufferBuilder::new();
    let mut codes: Vec<i32> = ops.iter().map(|o| o.code).collect();
    codes.dedup();
    let code_offsets: Vec<_> = codes
        .iter()
        .map(|&c| {
            fb::OperatorCode::create(
                &mut b,
                &fb::OperatorCodeArgs {
                    deprecated_builtin_code: c.min(127) as i8,
                    builtin_code: fb::BuiltinOperator(c),
                    version: 1,
                    custom_code: None,
                },
            )
        })
        .collect();
    let mut tensor_offsets = Vec::new();
    for (i, x) in tensors.iter().enumerate() {
        let shape = b.create_vector(&x.shape);
        let name = b.create_string(&format!("tensor{i}"));
        let quantization = (!x.scales.is_empty()).then(|| {
            let scale = b.create_vector(&x.scales);
            let zp = b.create_vector(&vec![0i64; x.scales.len()]);
            fb::QuantizationParameters::create(
                &mut b,
                &fb::QuantizationParametersArgs {
                    scale: Some(scale),
                    zero_point: Some(zp),
                    quantized_dimension: x.axis,
                    ..Default::default()
                },
            )
        });
        tensor_offsets.push(fb::Tensor::create(
            &mut b,
            &fb::TensorArgs {
                shape: Some(shape),
                type_: x.ty,
                buffer: x.buffer,
                name: Some(name),
                quantization,
                ..Default::default()
            },
        ));
    }
    let mut op_offsets = Vec::new();
    for o in ops {
        let inputs = b.create_vector(&o.inputs);
        let outputs = b.create_vector(&o.outputs);
        let opts = o.conv_options.then(|| {
            fb::Conv2DOptions::create(
                &mut b,
                &fb::Conv2DOptionsArgs {
                    stride_w: 1,
                    stride_h: 1,
                    dilation_w_factor: 1,
                    dilation_h_factor: 1,
                    ..Default::default()
                },
            )
            .as_union_value()
        });
        op_offsets.push(fb::Operator::create(
            &mut b,
            &fb::OperatorArgs {
                opcode_index: codes.iter().position(|&c| c == o.code).unwrap() as u32,
                inputs: Some(inputs),
                outputs: Some(outputs),
                builtin_options_type: if opts.is_some() {
                    fb::BuiltinOptions::Conv2DOptions
                } else {
                    fb::BuiltinOptions::NONE
                },
                builtin_options: opts,
                ..Default::default()
            },
        ));
    }
    let tensors_v = b.create_vector(&tensor_offsets);
    let ops_v = b.create_vector(&op_offsets);
    let ins = b.create_vector(io.0);
    let outs = b.create_vector(io.1);
    let sg = fb::SubGraph::create(
        &mut b,
        &fb::SubGraphArgs {
            tensors: Some(tensors_v),
            inputs: Some(ins),
            outputs: Some(outs),
            operators: Some(ops_v),
            name: None,
        },
    );
    let sgs = b.create_vector(&vec![sg; subgraphs]);
    let mut buffer_offsets = vec![fb::Buffer::create(&mut b, &fb::BufferArgs::default())];
    for d in buffers {
        let data = b.create_vector(d);
        buffer_offsets.push(fb::Buffer::create(
            &mut b,
            &fb::BufferArgs {
                data: Some(data),
                ..Default::default()
            },
        ));
    }
    let buffers_v = b.create_vector(&buffer_offsets);
    let codes_v = b.create_vector(&code_offsets);
    let m = fb::Model::create(
        &mut b,
        &fb::ModelArgs {
            version: 3,
            operator_codes: Some(codes_v),
            subgraphs: Some(sgs),
            buffers: Some(buffers_v),
            ..Default::default()
        },
    );
    fb::finish_model_buffer(&mut b, m);
    b.finished_data().to_vec()
}

/// input(1x4x4x1) -> CONV_2D(weights 2x1x1x1, bias) -> output.
fn conv_model(weights: Vec<u8>, subgraphs: usize) -> Vec<u8> {
    let mut w = t(&[2, 1, 1, 1], 1);
    w.scales = vec![0.5, 0.25];
    w.axis = 0;
    let mut bias = t(&[2], 2);
    bias.ty = fb::TensorType::INT32;
    model(
        &[t(&[1, 4, 4, 1], 0), w, bias, t(&[1, 4, 4, 2], 0)],
        &[weights, vec![0; 8]],
        &[O {
            code: 3,
            inputs: vec![0, 1, 2],
            outputs: vec![3],
            conv_options: true,
        }],
        (&[0], &[3]),
        subgraphs,
    )
}

#[test]
fn a_well_formed_model_reads() {
    let g = read_model(&conv_model(vec![1, 2], 1)).unwrap();
    assert_eq!(g.ops.len(), 1);
    assert!(matches!(g.ops[0].kind, OpKind::Conv2d(_)));
    assert_eq!(g.ops[0].kind.name(), "CONV_2D");
    assert!(matches!(
        g.tensors[1].quant,
        Quantization::PerChannel { axis: 0, .. }
    ));
    assert_eq!(g.weights_bytes(), 2 + 8);
}

#[test]
fn buffer_length_must_match_shape_and_type() {
    let e = read_model(&conv_model(vec![1, 2, 3], 1)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Malformed);
    assert_eq!(e.tensor.as_ref().map(|t| t.index), Some(1));
    assert_eq!(
        e.to_string(),
        "tensor 1 `tensor1`: the buffer's length does not match the tensor's shape and type \
         (expected 2 bytes (2 elements x 1 bytes of INT8), found 3 bytes)"
    );
}

#[test]
fn other_subgraphs_are_read_for_control_flow() {
    // Subgraph 1 is nothing's callee: read (and checked) all the same, never planned.
    let g = read_model(&conv_model(vec![1, 2], 2)).unwrap();
    assert_eq!(g.subgraphs.len(), 1);
    assert_eq!(g.subgraph(1).map(|s| s.ops.len()), Some(g.ops.len()));
    assert!(g.subgraph(0).is_none() && g.subgraph(2).is_none());
}

#[test]
fn an_op_may_not_read_a_tensor_nobody_produced() {
    // Tensor 1 is neither constant, input nor produced.
    let bytes = model(
        &[t(&[4], 0), t(&[4], 0), t(&[4], 0)],
        &[],
        &[O {
            code: 0,
            inputs: vec![0, 1],
            outputs: vec![2],
            conv_options: false,
        }],
        (&[0], &[2]),
        1,
    );
    let e = read_model(&bytes).unwrap_err();
    assert_eq!(
        e.to_string(),
        "op 0 (ADD): tensor 1 `tensor1`: reads a tensor that no operator produces and that \
         is not a graph input"
    );
}

#[test]
fn unknown_builtin_codes_are_rejected() {
    let bytes = model(
        &[t(&[4], 0), t(&[4], 0)],
        &[],
        &[O {
            code: 250,
            inputs: vec![0],
            outputs: vec![1],
            conv_options: false,
        }],
        (&[0], &[1]),
        1,
    );
    let e = read_model(&bytes).unwrap_err();
    assert!(
        e.to_string()
            .contains("not a known TensorFlow Lite builtin"),
        "{e}"
    );
    assert!(e.to_string().contains("found 250"), "{e}");
}

#[test]
fn options_of_another_operator_are_rejected() {
    // ADD carrying Conv2DOptions.
    let bytes = model(
        &[t(&[4], 0), t(&[4], 0), t(&[4], 0)],
        &[],
        &[O {
            code: 0,
            inputs: vec![0, 1],
            outputs: vec![2],
            conv_options: true,
        }],
        (&[0, 1], &[2]),
        1,
    );
    let e = read_model(&bytes).unwrap_err();
    assert_eq!(e.op.as_ref().map(|o| o.name.as_str()), Some("ADD"));
    assert!(
        e.to_string()
            .contains("expected AddOptions, found Conv2DOptions"),
        "{e}"
    );
}

#[test]
fn per_channel_scales_must_match_the_quantized_dimension() {
    let mut w = t(&[2, 1, 1, 1], 1);
    w.scales = vec![0.5, 0.25, 0.125];
    let bytes = model(
        &[t(&[1, 4, 4, 1], 0), w, t(&[1, 4, 4, 2], 0)],
        &[vec![1, 2]],
        &[O {
            code: 3,
            inputs: vec![0, 1, -1],
            outputs: vec![2],
            conv_options: true,
        }],
        (&[0], &[2]),
        1,
    );
    let e = read_model(&bytes).unwrap_err();
    assert_eq!(e.tensor.as_ref().map(|t| t.index), Some(1));
    assert!(e.to_string().contains("expected 2 scales"), "{e}");
}

#[test]
fn indices_out_of_range_are_rejected() {
    let bytes = model(
        &[t(&[4], 0), t(&[4], 0)],
        &[],
        &[O {
            code: 19,
            inputs: vec![0],
            outputs: vec![7],
            conv_options: false,
        }],
        (&[0], &[1]),
        1,
    );
    let e = read_model(&bytes).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("op 0 (RELU): an operator output names a tensor"),
        "{e}"
    );
}

#[test]
fn unsupported_tensor_types_are_named() {
    let mut x = t(&[4], 0);
    x.ty = fb::TensorType::COMPLEX64;
    let bytes = model(&[x], &[], &[], (&[0], &[0]), 1);
    let e = read_model(&bytes).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.to_string().contains("found COMPLEX64"), "{e}");
}
