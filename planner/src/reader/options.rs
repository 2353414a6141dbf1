//! The reader's operator options: each builtin operator's options decoded into its
//! [`OpKind`] (padding, activations, strides, axes, subgraph indices, ...), every value
//! checked; a missing or unknown value is a diagnostic naming it.

use super::tflite_generated::tflite as fb;
use super::{Reader, opcodes};
use crate::diag::{Diagnostic, Result};
use crate::ir::*;

fn padding(p: fb::Padding) -> Result<Padding> {
    match p {
        fb::Padding::SAME => Ok(Padding::Same),
        fb::Padding::VALID => Ok(Padding::Valid),
        other => Err(Diagnostic::malformed("unknown padding mode")
            .expected_found("SAME (0) or VALID (1)", other.0.to_string())),
    }
}

fn activation(a: fb::ActivationFunctionType) -> Result<Activation> {
    Ok(match a {
        fb::ActivationFunctionType::NONE => Activation::None,
        fb::ActivationFunctionType::RELU => Activation::Relu,
        fb::ActivationFunctionType::RELU_N1_TO_1 => Activation::ReluN1To1,
        fb::ActivationFunctionType::RELU6 => Activation::Relu6,
        fb::ActivationFunctionType::TANH => Activation::Tanh,
        fb::ActivationFunctionType::SIGN_BIT => Activation::SignBit,
        other => {
            return Err(Diagnostic::malformed("unknown fused activation")
                .expected_found("a value in 0..=5", other.0.to_string()));
        }
    })
}

impl<'a> Reader<'a> {
    /// Decodes an operator's builtin options into its [`OpKind`].
    pub(super) fn kind(
        &self,
        code: i32,
        name: &str,
        op: &fb::Operator<'a>,
        resources: &mut Vec<String>,
    ) -> Result<OpKind> {
        use fb::BuiltinOptions as O;
        use opcodes as c;
        let ty = op.builtin_options_type();
        // Checks the options' type tag: NONE (defaults) or the one this operator takes.
        let expect = |want: O| -> Result<bool> {
            if ty == O::NONE {
                Ok(false)
            } else if ty == want {
                Ok(true)
            } else {
                Err(
                    Diagnostic::malformed("the operator carries options of another operator")
                        .expected_found(
                            want.variant_name().unwrap_or("?"),
                            ty.variant_name()
                                .map_or_else(|| format!("options type {}", ty.0), str::to_string),
                        ),
                )
            }
        };
        Ok(match code {
            c::CONV_2D => {
                expect(O::Conv2DOptions)?;
                match op.builtin_options_as_conv_2_doptions() {
                    Some(o) => OpKind::Conv2d(Conv2dOptions {
                        padding: padding(o.padding())?,
                        stride_w: o.stride_w(),
                        stride_h: o.stride_h(),
                        dilation_w: o.dilation_w_factor(),
                        dilation_h: o.dilation_h_factor(),
                        activation: activation(o.fused_activation_function())?,
                    }),
                    None => return Err(missing_options()),
                }
            }
            c::DEPTHWISE_CONV_2D => {
                expect(O::DepthwiseConv2DOptions)?;
                match op.builtin_options_as_depthwise_conv_2_doptions() {
                    Some(o) => OpKind::DepthwiseConv2d(DepthwiseConv2dOptions {
                        padding: padding(o.padding())?,
                        stride_w: o.stride_w(),
                        stride_h: o.stride_h(),
                        depth_multiplier: o.depth_multiplier(),
                        dilation_w: o.dilation_w_factor(),
                        dilation_h: o.dilation_h_factor(),
                        activation: activation(o.fused_activation_function())?,
                    }),
                    None => return Err(missing_options()),
                }
            }
            c::TRANSPOSE_CONV => {
                expect(O::TransposeConvOptions)?;
                match op.builtin_options_as_transpose_conv_options() {
                    Some(o) => OpKind::TransposeConv(TransposeConvOptions {
                        padding: padding(o.padding())?,
                        stride_w: o.stride_w(),
                        stride_h: o.stride_h(),
                        activation: activation(o.fused_activation_function())?,
                    }),
                    None => return Err(missing_options()),
                }
            }
            c::AVERAGE_POOL_2D | c::MAX_POOL_2D | c::L2_POOL_2D => {
                expect(O::Pool2DOptions)?;
                let Some(o) = op.builtin_options_as_pool_2_doptions() else {
                    return Err(missing_options());
                };
                let p = Pool2dOptions {
                    padding: padding(o.padding())?,
                    stride_w: o.stride_w(),
                    stride_h: o.stride_h(),
                    filter_w: o.filter_width(),
                    filter_h: o.filter_height(),
                    activation: activation(o.fused_activation_function())?,
                };
                match code {
                    c::MAX_POOL_2D => OpKind::MaxPool2d(p),
                    c::L2_POOL_2D => OpKind::L2Pool2d(p),
                    _ => OpKind::AveragePool2d(p),
                }
            }
            c::FULLY_CONNECTED => {
                let (act, keep, shuffled) = if expect(O::FullyConnectedOptions)? {
                    let o = op.builtin_options_as_fully_connected_options();
                    let o = o.ok_or_else(missing_options)?;
                    (
                        o.fused_activation_function(),
                        o.keep_num_dims(),
                        o.weights_format() != fb::FullyConnectedOptionsWeightsFormat::DEFAULT,
                    )
                } else {
                    (fb::ActivationFunctionType::NONE, false, false)
                };
                if shuffled {
                    return Err(Diagnostic::unsupported(
                        "shuffled FULLY_CONNECTED weights are not supported",
                    ));
                }
                OpKind::FullyConnected(FullyConnectedOptions {
                    activation: activation(act)?,
                    keep_num_dims: keep,
                })
            }
            c::MEAN | c::SUM | c::REDUCE_MAX | c::REDUCE_MIN | c::REDUCE_ALL => {
                let keep_dims = expect(O::ReducerOptions)?
                    && op
                        .builtin_options_as_reducer_options()
                        .is_some_and(|o| o.keep_dims());
                match code {
                    c::MEAN => OpKind::Mean { keep_dims },
                    c::SUM => OpKind::Sum { keep_dims },
                    c::REDUCE_MAX => OpKind::ReduceMax { keep_dims },
                    c::REDUCE_ALL => OpKind::ReduceAll { keep_dims },
                    _ => OpKind::ReduceMin { keep_dims },
                }
            }
            c::ADD | c::SUB => {
                let o = if code == c::ADD {
                    expect(O::AddOptions)?;
                    op.builtin_options_as_add_options()
                        .map(|o| (o.fused_activation_function(), o.pot_scale_int16()))
                } else {
                    expect(O::SubOptions)?;
                    op.builtin_options_as_sub_options()
                        .map(|o| (o.fused_activation_function(), o.pot_scale_int16()))
                };
                let (act, pot) = o.unwrap_or((fb::ActivationFunctionType::NONE, true));
                let o = AddSubOptions {
                    activation: activation(act)?,
                    pot_scale_int16: pot,
                };
                if code == c::ADD {
                    OpKind::Add(o)
                } else {
                    OpKind::Sub(o)
                }
            }
            c::MUL => {
                expect(O::MulOptions)?;
                let act = op
                    .builtin_options_as_mul_options()
                    .map_or(fb::ActivationFunctionType::NONE, |o| {
                        o.fused_activation_function()
                    });
                OpKind::Mul {
                    activation: activation(act)?,
                }
            }
            c::DIV => {
                expect(O::DivOptions)?;
                let act = op
                    .builtin_options_as_div_options()
                    .map_or(fb::ActivationFunctionType::NONE, |o| {
                        o.fused_activation_function()
                    });
                OpKind::Div {
                    activation: activation(act)?,
                }
            }
            c::MAXIMUM | c::MINIMUM => {
                expect(O::MaximumMinimumOptions)?;
                if code == c::MAXIMUM {
                    OpKind::Maximum
                } else {
                    OpKind::Minimum
                }
            }
            c::SOFTMAX => {
                expect(O::SoftmaxOptions)?;
                let beta = op
                    .builtin_options_as_softmax_options()
                    .map_or(1.0, |o| o.beta());
                OpKind::Softmax { beta }
            }
            c::LOGISTIC => OpKind::Logistic,
            c::TANH => OpKind::Tanh,
            c::RELU => OpKind::Relu,
            c::RELU6 => OpKind::Relu6,
            c::LEAKY_RELU => {
                expect(O::LeakyReluOptions)?;
                let alpha = op
                    .builtin_options_as_leaky_relu_options()
                    .map_or(0.0, |o| o.alpha());
                OpKind::LeakyRelu { alpha }
            }
            c::HARD_SWISH => OpKind::HardSwish,
            c::CONCATENATION => {
                expect(O::ConcatenationOptions)?;
                let o = op.builtin_options_as_concatenation_options();
                let o = o.ok_or_else(missing_options)?;
                OpKind::Concatenation(ConcatenationOptions {
                    axis: o.axis(),
                    activation: activation(o.fused_activation_function())?,
                })
            }
            c::RESHAPE => {
                expect(O::ReshapeOptions)?;
                OpKind::Reshape
            }
            c::SQUEEZE => {
                expect(O::SqueezeOptions)?;
                let dims = op
                    .builtin_options_as_squeeze_options()
                    .and_then(|o| o.squeeze_dims())
                    .map(|v| v.iter().collect())
                    .unwrap_or_default();
                OpKind::Squeeze { dims }
            }
            c::EXPAND_DIMS => OpKind::ExpandDims,
            c::PAD => OpKind::Pad,
            c::PADV2 => OpKind::PadV2,
            c::STRIDED_SLICE => {
                expect(O::StridedSliceOptions)?;
                let o = op.builtin_options_as_strided_slice_options();
                let o = o.ok_or_else(missing_options)?;
                OpKind::StridedSlice(StridedSliceOptions {
                    begin_mask: o.begin_mask(),
                    end_mask: o.end_mask(),
                    ellipsis_mask: o.ellipsis_mask(),
                    new_axis_mask: o.new_axis_mask(),
                    shrink_axis_mask: o.shrink_axis_mask(),
                    offset: o.offset(),
                })
            }
            c::TRANSPOSE => OpKind::Transpose,
            c::RESIZE_NEAREST_NEIGHBOR => {
                expect(O::ResizeNearestNeighborOptions)?;
                let o = op.builtin_options_as_resize_nearest_neighbor_options();
                OpKind::ResizeNearestNeighbor(ResizeOptions {
                    align_corners: o.is_some_and(|o| o.align_corners()),
                    half_pixel_centers: o.is_some_and(|o| o.half_pixel_centers()),
                })
            }
            c::RESIZE_BILINEAR => {
                expect(O::ResizeBilinearOptions)?;
                let o = op.builtin_options_as_resize_bilinear_options();
                OpKind::ResizeBilinear(ResizeOptions {
                    align_corners: o.is_some_and(|o| o.align_corners()),
                    half_pixel_centers: o.is_some_and(|o| o.half_pixel_centers()),
                })
            }
            c::QUANTIZE => OpKind::Quantize,
            c::DEQUANTIZE => OpKind::Dequantize,
            c::CAST => OpKind::Cast,
            c::SVDF => {
                expect(O::SVDFOptions)?;
                let o = op.builtin_options_as_svdfoptions();
                let o = o.ok_or_else(missing_options)?;
                OpKind::Svdf(SvdfOptions {
                    rank: o.rank(),
                    activation: activation(o.fused_activation_function())?,
                    asymmetric_quantize_inputs: o.asymmetric_quantize_inputs(),
                })
            }
            c::UNIDIRECTIONAL_SEQUENCE_LSTM => {
                expect(O::UnidirectionalSequenceLSTMOptions)?;
                let o = op.builtin_options_as_unidirectional_sequence_lstmoptions();
                let o = o.ok_or_else(missing_options)?;
                OpKind::UnidirectionalSequenceLstm(LstmOptions {
                    activation: activation(o.fused_activation_function())?,
                    cell_clip: o.cell_clip(),
                    proj_clip: o.proj_clip(),
                    time_major: o.time_major(),
                    asymmetric_quantize_inputs: o.asymmetric_quantize_inputs(),
                    diagonal_recurrent_tensors: o.diagonal_recurrent_tensors(),
                })
            }
            c::L2_NORMALIZATION => {
                expect(O::L2NormOptions)?;
                let act = op
                    .builtin_options_as_l2_norm_options()
                    .map_or(fb::ActivationFunctionType::NONE, |o| {
                        o.fused_activation_function()
                    });
                OpKind::L2Normalization {
                    activation: activation(act)?,
                }
            }
            c::CUMSUM => {
                expect(O::CumsumOptions)?;
                let o = op.builtin_options_as_cumsum_options();
                OpKind::Cumsum {
                    exclusive: o.is_some_and(|o| o.exclusive()),
                    reverse: o.is_some_and(|o| o.reverse()),
                }
            }
            c::GATHER => {
                expect(O::GatherOptions)?;
                let o = op.builtin_options_as_gather_options();
                OpKind::Gather {
                    axis: o.map_or(0, |o| o.axis()),
                    batch_dims: o.map_or(0, |o| o.batch_dims()),
                }
            }
            c::SPLIT => {
                expect(O::SplitOptions)?;
                let o = op.builtin_options_as_split_options();
                OpKind::Split {
                    num_splits: o.ok_or_else(missing_options)?.num_splits(),
                }
            }
            c::SPLIT_V => {
                expect(O::SplitVOptions)?;
                let o = op.builtin_options_as_split_voptions();
                OpKind::SplitV {
                    num_splits: o.ok_or_else(missing_options)?.num_splits(),
                }
            }
            c::PACK => {
                expect(O::PackOptions)?;
                let o = op.builtin_options_as_pack_options();
                let o = o.ok_or_else(missing_options)?;
                OpKind::Pack {
                    values_count: o.values_count(),
                    axis: o.axis(),
                }
            }
            c::UNPACK => {
                expect(O::UnpackOptions)?;
                let o = op.builtin_options_as_unpack_options();
                let o = o.ok_or_else(missing_options)?;
                OpKind::Unpack {
                    num: o.num(),
                    axis: o.axis(),
                }
            }
            c::SPACE_TO_DEPTH => {
                expect(O::SpaceToDepthOptions)?;
                let o = op.builtin_options_as_space_to_depth_options();
                OpKind::SpaceToDepth {
                    block_size: o.ok_or_else(missing_options)?.block_size(),
                }
            }
            c::DEPTH_TO_SPACE => {
                expect(O::DepthToSpaceOptions)?;
                let o = op.builtin_options_as_depth_to_space_options();
                OpKind::DepthToSpace {
                    block_size: o.ok_or_else(missing_options)?.block_size(),
                }
            }
            c::MIRROR_PAD => {
                expect(O::MirrorPadOptions)?;
                let mode = op
                    .builtin_options_as_mirror_pad_options()
                    .map_or(fb::MirrorPadMode::REFLECT, |o| o.mode());
                OpKind::MirrorPad {
                    symmetric: match mode {
                        fb::MirrorPadMode::REFLECT => false,
                        fb::MirrorPadMode::SYMMETRIC => true,
                        m => {
                            return Err(Diagnostic::malformed("unknown MIRROR_PAD mode")
                                .expected_found("REFLECT or SYMMETRIC", m.0.to_string()));
                        }
                    },
                }
            }
            c::BATCH_MATMUL => {
                expect(O::BatchMatMulOptions)?;
                let o = op.builtin_options_as_batch_mat_mul_options();
                OpKind::BatchMatMul {
                    adj_x: o.is_some_and(|o| o.adj_x()),
                    adj_y: o.is_some_and(|o| o.adj_y()),
                    asymmetric_quantize_inputs: o.is_some_and(|o| o.asymmetric_quantize_inputs()),
                }
            }
            c::IF => {
                expect(O::IfOptions)?;
                let o = op
                    .builtin_options_as_if_options()
                    .ok_or_else(missing_options)?;
                OpKind::If {
                    then_subgraph: subgraph_index("then_subgraph_index", o.then_subgraph_index())?,
                    else_subgraph: subgraph_index("else_subgraph_index", o.else_subgraph_index())?,
                }
            }
            c::WHILE => {
                expect(O::WhileOptions)?;
                let o = op
                    .builtin_options_as_while_options()
                    .ok_or_else(missing_options)?;
                OpKind::While {
                    cond_subgraph: subgraph_index("cond_subgraph_index", o.cond_subgraph_index())?,
                    body_subgraph: subgraph_index("body_subgraph_index", o.body_subgraph_index())?,
                }
            }
            c::CALL_ONCE => {
                expect(O::CallOnceOptions)?;
                let o = op
                    .builtin_options_as_call_once_options()
                    .ok_or_else(missing_options)?;
                OpKind::CallOnce {
                    init_subgraph: subgraph_index("init_subgraph_index", o.init_subgraph_index())?,
                }
            }
            c::VAR_HANDLE => {
                expect(O::VarHandleOptions)?;
                let o = op.builtin_options_as_var_handle_options();
                let name = format!(
                    "{}/{}",
                    o.and_then(|o| o.container()).unwrap_or(""),
                    o.and_then(|o| o.shared_name()).unwrap_or("")
                );
                let resource = match resources.iter().position(|r| *r == name) {
                    Some(r) => r,
                    None => {
                        resources.push(name);
                        resources.len() - 1
                    }
                };
                OpKind::VarHandle { resource }
            }
            // The variable is resolved from the handle's VAR_HANDLE by `control`.
            c::READ_VARIABLE => OpKind::ReadVariable {
                resource: usize::MAX,
            },
            c::ASSIGN_VARIABLE => OpKind::AssignVariable {
                resource: usize::MAX,
            },
            _ => OpKind::Other {
                name: name.to_string(),
            },
        })
    }
}

/// A subgraph index of a control flow operator's options (checked against the model's
/// subgraphs by `control::check_calls`).
fn subgraph_index(what: &str, i: i32) -> Result<usize> {
    usize::try_from(i).map_err(|_| {
        Diagnostic::malformed(format!("the operator's {what} is negative"))
            .expected_found("a subgraph index >= 1", i.to_string())
    })
}

fn missing_options() -> Diagnostic {
    Diagnostic::malformed("the operator's options are missing")
}
