//! The emitter: a verified plan to Rust tokens. The only one; both front ends call it.
//!
//! For each operator in plan order it runs the kernel's `prepare` (on the host, now) and
//! emits one kernel call with constant parameters and arena slices at constant offsets.
//! Weights become aligned byte-string statics. The output is deterministic: names come from
//! indices, and items are emitted in model order.

use crate::Options;
use kiln_kernels as k;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{self, DType, Graph, Op, OpKind, Quantization, TensorId, TensorKind};
use kiln_planner::lifetimes::BufferOwner;
use kiln_planner::plan::Plan;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Operators the emitter can compile (with the dtypes their kernels take).
pub const SUPPORTED_OPS: &[&str] = &[
    "ADD",
    "AVERAGE_POOL_2D",
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "EXPAND_DIMS",
    "FULLY_CONNECTED",
    "MAX_POOL_2D",
    "RESHAPE",
    "SOFTMAX",
    "SQUEEZE",
];

/// What the emitter produced, besides the tokens.
pub struct Emitted {
    pub tokens: TokenStream,
    /// Bytes of weights and other constants in flash (model buffers plus per-channel tables).
    pub flash_bytes: usize,
}

/// Emits the items of a compiled model. `model_path` (absolute) is tracked for rebuilds
/// when given.
pub fn emit(graph: &Graph, plan: &Plan, options: &Options) -> Result<Emitted> {
    let mut e = Emitter {
        graph,
        plan,
        items: Vec::new(),
        body: Vec::new(),
        weights: BTreeMap::new(),
        constant_bytes: 0,
    };
    for (step, &id) in plan.order.iter().enumerate() {
        let op = graph.op(id);
        let at = |d: Diagnostic| d.at_op(op.id.0, op.kind.name());
        e.op(step, op).map_err(at)?;
    }
    let flash_bytes = graph.weights_bytes() + e.constant_bytes;
    let tokens = e.finish(options, flash_bytes)?;
    Ok(Emitted {
        tokens,
        flash_bytes,
    })
}

struct Emitter<'a> {
    graph: &'a Graph,
    plan: &'a Plan,
    /// Consts and statics, in emission order.
    items: Vec<TokenStream>,
    /// Statements of `invoke()`.
    body: Vec<TokenStream>,
    /// Weight statics emitted so far, by model buffer index.
    weights: BTreeMap<usize, Ident>,
    /// Bytes of per-channel tables and other emitted constants.
    constant_bytes: usize,
}

fn unsupported(message: impl Into<String>) -> Diagnostic {
    Diagnostic::unsupported(message)
}

fn prepare_error(e: k::quant::PrepareError) -> Diagnostic {
    use k::quant::PrepareError as P;
    let why = match e {
        P::MultiplierOutOfRange => "a requantization multiplier is out of the range TFLM accepts",
        P::ActivationRangeOverflow => "the fused activation's range overflows the output type",
        P::InvalidShape => "the tensor shapes do not fit the operator",
        P::UnsupportedQuantization => {
            "the quantization parameters are not supported by TFLM's kernel"
        }
    };
    unsupported(why)
}

/// Element type tokens and the byte-view functions for a dtype.
fn elem(dtype: DType) -> Result<(TokenStream, TokenStream, TokenStream)> {
    Ok(match dtype {
        DType::I8 => (quote!(i8), quote!(i8s), quote!(i8s_mut)),
        DType::I16 => (quote!(i16), quote!(i16s), quote!(i16s_mut)),
        DType::I32 => (quote!(i32), quote!(i32s), quote!(i32s_mut)),
        DType::F32 => (quote!(f32), quote!(f32s), quote!(f32s_mut)),
        DType::I64 => (quote!(i64), quote!(i64s), quote!(i64s_mut)),
        DType::U8 | DType::Bool => (quote!(u8), quote!(u8s), quote!(u8s_mut)),
        other => return Err(unsupported(format!("{other} tensors are not supported"))),
    })
}

fn activation(a: ir::Activation) -> k::quant::Activation {
    match a {
        ir::Activation::None => k::quant::Activation::None,
        ir::Activation::Relu => k::quant::Activation::Relu,
        ir::Activation::ReluN1To1 => k::quant::Activation::ReluN1To1,
        ir::Activation::Relu6 => k::quant::Activation::Relu6,
        ir::Activation::Tanh => k::quant::Activation::Tanh,
        ir::Activation::SignBit => k::quant::Activation::SignBit,
    }
}

fn padding(p: ir::Padding) -> k::quant::Padding {
    match p {
        ir::Padding::Same => k::quant::Padding::Same,
        ir::Padding::Valid => k::quant::Padding::Valid,
    }
}

fn stride(s: i32, what: &str) -> Result<usize> {
    usize::try_from(s).ok().filter(|&s| s > 0).ok_or_else(|| {
        unsupported(format!("the {what} must be positive")).expected_found(">= 1", s.to_string())
    })
}

/// Turns a `Debug`-printed parameter struct into an expression at `path`.
///
/// Parameter structs of the kernels hold only integers, floats and arrays of them, so their
/// derived `Debug` output is Rust syntax but for non-finite floats, which become constants.
fn debug_expr(path: TokenStream, debug: &str) -> TokenStream {
    let fields = debug
        .split_once('{')
        .map_or("", |(_, rest)| rest.trim_end().trim_end_matches('}'));
    let fixed = fields
        .replace("-inf", "f32::NEG_INFINITY")
        .replace("inf", "f32::INFINITY")
        .replace("NaN", "f32::NAN");
    let fields: TokenStream = fixed
        .parse()
        .expect("kernel parameters print as Rust syntax");
    quote!(#path { #fields })
}

impl<'a> Emitter<'a> {
    fn tensor(&self, t: TensorId) -> &'a ir::Tensor {
        self.graph.tensor(t)
    }

    fn input(&self, op: &Op, slot: usize) -> Result<TensorId> {
        op.input(slot)
            .ok_or_else(|| unsupported(format!("input {slot} is missing")))
    }

    fn output(&self, op: &Op, slot: usize) -> Result<TensorId> {
        op.outputs
            .get(slot)
            .copied()
            .ok_or_else(|| unsupported(format!("output {slot} is missing")))
    }

    fn quant(&self, t: TensorId) -> Result<k::quant::QuantParams> {
        let tensor = self.tensor(t);
        match &tensor.quant {
            Quantization::PerTensor { scale, zero_point } => Ok(k::quant::QuantParams {
                scale: *scale,
                zero_point: i32::try_from(*zero_point).map_err(|_| {
                    unsupported("the zero point does not fit in 32 bits")
                        .at_tensor(t.0, tensor.name.clone())
                })?,
            }),
            _ => Err(
                unsupported("a per-tensor quantized tensor is expected here")
                    .at_tensor(t.0, tensor.name.clone()),
            ),
        }
    }

    fn scales(&self, t: TensorId) -> Result<Vec<f32>> {
        let tensor = self.tensor(t);
        match &tensor.quant {
            Quantization::PerTensor { scale, .. } => Ok(vec![*scale]),
            Quantization::PerChannel { scales, .. } => Ok(scales.clone()),
            Quantization::None => Err(unsupported("quantized weights are expected here")
                .at_tensor(t.0, tensor.name.clone())),
        }
    }

    fn shape4(&self, t: TensorId) -> Result<[usize; 4]> {
        let tensor = self.tensor(t);
        <[usize; 4]>::try_from(tensor.shape.as_slice()).map_err(|_| {
            unsupported("a 4-D tensor is expected")
                .at_tensor(t.0, tensor.name.clone())
                .expected_found("rank 4", format!("shape {:?}", tensor.shape))
        })
    }

    fn expect_dtype(&self, t: TensorId, want: DType) -> Result<()> {
        let tensor = self.tensor(t);
        if tensor.dtype == want {
            Ok(())
        } else {
            Err(unsupported("unsupported tensor type for this operator")
                .at_tensor(t.0, tensor.name.clone())
                .expected_found(want.name(), tensor.dtype.name()))
        }
    }

    /// An expression for a constant tensor as a typed slice; emits its static once.
    fn constant(&mut self, t: TensorId) -> Result<TokenStream> {
        let (_, view, _) = elem(self.tensor(t).dtype)?;
        let name = self.weight_static(t)?;
        Ok(quote!(::kiln::runtime::#view(#name.bytes())))
    }

    /// The name of a constant tensor's static (emitted on first use).
    fn weight_static(&mut self, t: TensorId) -> Result<Ident> {
        let tensor = self.tensor(t);
        let TensorKind::Constant { buffer, data } = &tensor.kind else {
            return Err(unsupported("a constant tensor (weights) is expected here")
                .at_tensor(t.0, tensor.name.clone()));
        };
        let name = match self.weights.get(buffer) {
            Some(n) => n.clone(),
            None => {
                let name = format_ident!("BUFFER_{}", buffer);
                let len = data.len();
                let lit = Literal::byte_string(data);
                let doc = format!(" Model buffer {buffer}: `{}` ({len} bytes).", tensor.name);
                self.items.push(quote! {
                    #[doc = #doc]
                    static #name: ::kiln::runtime::Weights<#len> = ::kiln::runtime::Weights(*#lit);
                });
                self.weights.insert(*buffer, name.clone());
                name
            }
        };
        Ok(name)
    }

    fn optional_constant(&mut self, t: Option<TensorId>) -> Result<TokenStream> {
        match t {
            Some(t) => {
                let c = self.constant(t)?;
                Ok(quote!(Some(#c)))
            }
            None => Ok(quote!(None)),
        }
    }

    /// Emits `const OP<k>: path = ...;` and returns `&OP<k>`.
    fn params(&mut self, op: &Op, path: TokenStream, debug: String) -> TokenStream {
        let name = format_ident!("OP{}", op.id.0);
        let value = debug_expr(path.clone(), &debug);
        let doc = format!(" Parameters of op {} ({}).", op.id.0, op.kind.name());
        self.items.push(quote! {
            #[doc = #doc]
            const #name: #path = #value;
        });
        quote!(&#name)
    }

    /// Emits a per-channel table `static OP<k>_<WHAT>: [i32; N]` and returns `&OP<k>_<WHAT>`.
    fn table(&mut self, op: &Op, what: &str, values: &[i32]) -> TokenStream {
        let name = format_ident!("OP{}_{}", op.id.0, what);
        let n = values.len();
        self.constant_bytes += 4 * n;
        self.items.push(quote! {
            static #name: [i32; #n] = [#(#values),*];
        });
        quote!(&#name)
    }

    fn buffer_of(&self, t: TensorId) -> Result<(usize, usize)> {
        self.plan
            .buffers
            .iter()
            .find(|b| b.owner == BufferOwner::Tensor(t))
            .map(|b| (b.offset, b.size))
            .ok_or_else(|| {
                Diagnostic::new(
                    ErrorKind::InvalidPlan,
                    format!("tensor {} has no buffer", t.0),
                )
            })
    }

    /// Emits one step: slices the arena into the arena-resident `inputs` and the `output`,
    /// binds them as `in0..`, `out`, and runs `call` (which refers to those names).
    fn step(
        &mut self,
        op: &Op,
        inputs: &[TensorId],
        output: TensorId,
        call: TokenStream,
    ) -> Result<()> {
        let mut spans = Vec::new();
        let mut names = Vec::new();
        for (i, &t) in inputs.iter().enumerate() {
            let (off, len) = self.buffer_of(t)?;
            spans.push(quote!((#off, #len)));
            names.push(format_ident!("in{}", i));
        }
        let (off, len) = self.buffer_of(output)?;
        let comment = format!(
            " op {}: {} ({} -> t{})",
            op.id.0,
            op.kind.name(),
            op.present_inputs()
                .map(|t| format!("t{}", t.0))
                .collect::<Vec<_>>()
                .join(", "),
            output.0
        );
        self.body.push(quote! {
            #[doc = #comment]
            {
                let ([#(#names),*], out) = ::kiln::runtime::split(&mut *arena, [#(#spans),*], (#off, #len));
                #call
            }
        });
        Ok(())
    }

    /// `in<i>` viewed as the tensor's type, or the constant if the tensor is one.
    fn operand(&mut self, t: TensorId, arena_inputs: &mut Vec<TensorId>) -> Result<TokenStream> {
        if self.tensor(t).is_constant() {
            return self.constant(t);
        }
        let (_, view, _) = elem(self.tensor(t).dtype)?;
        let name = format_ident!("in{}", arena_inputs.len());
        arena_inputs.push(t);
        Ok(quote!(::kiln::runtime::#view(#name)))
    }

    fn out_view(&self, t: TensorId) -> Result<TokenStream> {
        let (_, _, view) = elem(self.tensor(t).dtype)?;
        Ok(quote!(::kiln::runtime::#view(out)))
    }

    fn op(&mut self, _step: usize, op: &Op) -> Result<()> {
        match &op.kind {
            OpKind::FullyConnected(o) => self.fully_connected(op, o),
            OpKind::Conv2d(o) => self.conv_2d(op, o),
            OpKind::DepthwiseConv2d(o) => self.depthwise_conv_2d(op, o),
            OpKind::AveragePool2d(o) => self.pool(op, o, false),
            OpKind::MaxPool2d(o) => self.pool(op, o, true),
            OpKind::Softmax { beta } => self.softmax(op, *beta),
            OpKind::Add(o) => self.add(op, o),
            OpKind::Reshape | OpKind::Squeeze { .. } | OpKind::ExpandDims => self.copy(op),
            other => Err(unsupported(format!(
                "Kiln has no kernel for {} (supported: {})",
                other.name(),
                SUPPORTED_OPS.join(", ")
            ))),
        }
    }

    fn copy(&mut self, op: &Op) -> Result<()> {
        let input = self.input(op, 0)?;
        let output = self.output(op, 0)?;
        if self.tensor(input).bytes() != self.tensor(output).bytes() {
            return Err(unsupported("input and output sizes differ"));
        }
        let mut ins = Vec::new();
        let src = if self.tensor(input).is_constant() {
            let name = self.weight_static(input)?;
            quote!(#name.bytes())
        } else {
            ins.push(input);
            quote!(in0)
        };
        self.step(op, &ins, output, quote!(out.copy_from_slice(#src);))
    }

    fn fully_connected(&mut self, op: &Op, o: &ir::FullyConnectedOptions) -> Result<()> {
        let (input, weights, bias) = (self.input(op, 0)?, self.input(op, 1)?, op.input(2));
        let output = self.output(op, 0)?;
        let wshape = &self.tensor(weights).shape;
        let [output_depth, accum_depth] =
            <[usize; 2]>::try_from(wshape.as_slice()).map_err(|_| {
                unsupported("FULLY_CONNECTED weights must be 2-D")
                    .expected_found("[outputs, inputs]", format!("{wshape:?}"))
            })?;
        let elements = self.tensor(input).elements();
        if accum_depth == 0 || elements % accum_depth != 0 {
            return Err(unsupported(
                "the input size is not a multiple of the weights' depth",
            ));
        }
        let batches = elements / accum_depth;
        if self.tensor(output).elements() != batches * output_depth {
            return Err(unsupported(
                "the output size does not match batches x output depth",
            ));
        }
        let act = activation(o.activation);
        let mut ins = Vec::new();
        match self.tensor(input).dtype {
            DType::I8 => {
                self.expect_dtype(weights, DType::I8)?;
                self.expect_dtype(output, DType::I8)?;
                if let Some(b) = bias {
                    self.expect_dtype(b, DType::I32)?;
                }
                let iq = self.quant(input)?;
                let oq = self.quant(output)?;
                let scales = self.scales(weights)?;
                let x = self.operand(input, &mut ins)?;
                let w = self.constant(weights)?;
                let b = self.optional_constant(bias)?;
                let out = self.out_view(output)?;
                let call = if scales.len() == 1 {
                    let wq = self.quant(weights)?;
                    let bias_scale = bias
                        .map(|b| self.quant(b).map(|q| q.scale))
                        .transpose()
                        .ok()
                        .flatten();
                    let p = k::fully_connected::prepare_s8(
                        batches,
                        accum_depth,
                        output_depth,
                        iq,
                        wq,
                        bias_scale,
                        oq,
                        act,
                    )
                    .map_err(prepare_error)?;
                    let p = self.params(
                        op,
                        quote!(::kiln::kernels::fully_connected::Params),
                        format!("{p:?}"),
                    );
                    quote!(::kiln::kernels::fully_connected::fully_connected_s8(#p, #x, #w, #b, #out);)
                } else {
                    let mut m = vec![0; output_depth];
                    let mut s = vec![0; output_depth];
                    let p = k::fully_connected::prepare_per_channel_s8(
                        batches,
                        accum_depth,
                        output_depth,
                        iq,
                        &scales,
                        oq,
                        act,
                        &mut m,
                        &mut s,
                    )
                    .map_err(prepare_error)?;
                    let p = self.params(
                        op,
                        quote!(::kiln::kernels::fully_connected::Params),
                        format!("{p:?}"),
                    );
                    let m = self.table(op, "MULTIPLIER", &m);
                    let s = self.table(op, "SHIFT", &s);
                    quote!(::kiln::kernels::fully_connected::fully_connected_per_channel_s8(#p, #m, #s, #x, #w, #b, #out);)
                };
                self.step(op, &ins, output, call)
            }
            DType::F32 => {
                self.expect_dtype(weights, DType::F32)?;
                self.expect_dtype(output, DType::F32)?;
                let p = k::fully_connected::prepare_f32(batches, accum_depth, output_depth, act)
                    .map_err(prepare_error)?;
                let x = self.operand(input, &mut ins)?;
                let w = self.constant(weights)?;
                let b = self.optional_constant(bias)?;
                let out = self.out_view(output)?;
                let p = self.params(
                    op,
                    quote!(::kiln::kernels::fully_connected::Params),
                    format!("{p:?}"),
                );
                let call = quote!(::kiln::kernels::fully_connected::fully_connected_f32(#p, #x, #w, #b, #out););
                self.step(op, &ins, output, call)
            }
            other => Err(unsupported("unsupported input type for FULLY_CONNECTED")
                .expected_found("INT8 or FLOAT32", other.name())),
        }
    }

    fn conv_2d(&mut self, op: &Op, o: &ir::Conv2dOptions) -> Result<()> {
        let (input, filter, bias) = (self.input(op, 0)?, self.input(op, 1)?, op.input(2));
        let output = self.output(op, 0)?;
        let opts = k::conv_2d::Options {
            padding: padding(o.padding),
            stride_height: stride(o.stride_h, "stride")?,
            stride_width: stride(o.stride_w, "stride")?,
            dilation_height_factor: stride(o.dilation_h, "dilation")?,
            dilation_width_factor: stride(o.dilation_w, "dilation")?,
            activation: activation(o.activation),
        };
        let (is, fs) = (self.shape4(input)?, self.shape4(filter)?);
        let mut ins = Vec::new();
        let path = quote!(::kiln::kernels::conv_2d::Params);
        let call = match self.tensor(input).dtype {
            DType::I8 => {
                self.expect_dtype(filter, DType::I8)?;
                self.expect_dtype(output, DType::I8)?;
                let (iq, oq) = (self.quant(input)?, self.quant(output)?);
                let scales = self.scales(filter)?;
                let mut m = vec![0; fs[0]];
                let mut s = vec![0; fs[0]];
                let scales = if scales.len() == 1 {
                    vec![scales[0]; fs[0]]
                } else {
                    scales
                };
                let p = k::conv_2d::prepare_s8(is, fs, &opts, iq, &scales, oq, &mut m, &mut s)
                    .map_err(prepare_error)?;
                self.check_out_shape(
                    output,
                    [p.batches, p.output_height, p.output_width, p.output_depth],
                )?;
                let p = self.params(op, path, format!("{p:?}"));
                let m = self.table(op, "MULTIPLIER", &m);
                let s = self.table(op, "SHIFT", &s);
                let x = self.operand(input, &mut ins)?;
                let w = self.constant(filter)?;
                let b = self.optional_constant(bias)?;
                let out = self.out_view(output)?;
                quote!(::kiln::kernels::conv_2d::conv_2d_s8(#p, #m, #s, #x, #w, #b, #out);)
            }
            DType::F32 => {
                let p = k::conv_2d::prepare_f32(is, fs, &opts).map_err(prepare_error)?;
                self.check_out_shape(
                    output,
                    [p.batches, p.output_height, p.output_width, p.output_depth],
                )?;
                let p = self.params(op, path, format!("{p:?}"));
                let x = self.operand(input, &mut ins)?;
                let w = self.constant(filter)?;
                let b = self.optional_constant(bias)?;
                let out = self.out_view(output)?;
                quote!(::kiln::kernels::conv_2d::conv_2d_f32(#p, #x, #w, #b, #out);)
            }
            other => {
                return Err(unsupported("unsupported input type for CONV_2D")
                    .expected_found("INT8 or FLOAT32", other.name()));
            }
        };
        self.step(op, &ins, output, call)
    }

    fn check_out_shape(&self, output: TensorId, want: [usize; 4]) -> Result<()> {
        let t = self.tensor(output);
        if t.shape.as_slice() == want {
            Ok(())
        } else {
            Err(
                unsupported("the output shape does not match the operator's parameters")
                    .at_tensor(output.0, t.name.clone())
                    .expected_found(format!("{want:?}"), format!("{:?}", t.shape)),
            )
        }
    }

    fn depthwise_conv_2d(&mut self, op: &Op, o: &ir::DepthwiseConv2dOptions) -> Result<()> {
        let (input, filter, bias) = (self.input(op, 0)?, self.input(op, 1)?, op.input(2));
        let output = self.output(op, 0)?;
        let opts = k::depthwise_conv_2d::Options {
            padding: padding(o.padding),
            stride_height: stride(o.stride_h, "stride")?,
            stride_width: stride(o.stride_w, "stride")?,
            dilation_height_factor: stride(o.dilation_h, "dilation")?,
            dilation_width_factor: stride(o.dilation_w, "dilation")?,
            depth_multiplier: stride(o.depth_multiplier, "depth multiplier")?,
            activation: activation(o.activation),
        };
        let (is, fs) = (self.shape4(input)?, self.shape4(filter)?);
        let mut ins = Vec::new();
        let path = quote!(::kiln::kernels::depthwise_conv_2d::Params);
        let call = match self.tensor(input).dtype {
            DType::I8 => {
                self.expect_dtype(filter, DType::I8)?;
                self.expect_dtype(output, DType::I8)?;
                let (iq, oq) = (self.quant(input)?, self.quant(output)?);
                let channels = fs[3];
                let scales = self.scales(filter)?;
                let scales = if scales.len() == 1 {
                    vec![scales[0]; channels]
                } else {
                    scales
                };
                let mut m = vec![0; channels];
                let mut s = vec![0; channels];
                let p = k::depthwise_conv_2d::prepare_s8(
                    is, fs, &opts, iq, &scales, oq, &mut m, &mut s,
                )
                .map_err(prepare_error)?;
                self.check_out_shape(
                    output,
                    [p.batches, p.output_height, p.output_width, p.output_depth],
                )?;
                let p = self.params(op, path, format!("{p:?}"));
                let m = self.table(op, "MULTIPLIER", &m);
                let s = self.table(op, "SHIFT", &s);
                let x = self.operand(input, &mut ins)?;
                let w = self.constant(filter)?;
                let b = self.optional_constant(bias)?;
                let out = self.out_view(output)?;
                quote!(::kiln::kernels::depthwise_conv_2d::depthwise_conv_2d_s8(#p, #m, #s, #x, #w, #b, #out);)
            }
            DType::F32 => {
                let p = k::depthwise_conv_2d::prepare_f32(is, fs, &opts).map_err(prepare_error)?;
                self.check_out_shape(
                    output,
                    [p.batches, p.output_height, p.output_width, p.output_depth],
                )?;
                let p = self.params(op, path, format!("{p:?}"));
                let x = self.operand(input, &mut ins)?;
                let w = self.constant(filter)?;
                let b = self.optional_constant(bias)?;
                let out = self.out_view(output)?;
                quote!(::kiln::kernels::depthwise_conv_2d::depthwise_conv_2d_f32(#p, #x, #w, #b, #out);)
            }
            other => {
                return Err(unsupported("unsupported input type for DEPTHWISE_CONV_2D")
                    .expected_found("INT8 or FLOAT32", other.name()));
            }
        };
        self.step(op, &ins, output, call)
    }

    fn pool(&mut self, op: &Op, o: &ir::Pool2dOptions, max: bool) -> Result<()> {
        let input = self.input(op, 0)?;
        let output = self.output(op, 0)?;
        let opts = k::pooling::Options {
            padding: padding(o.padding),
            stride_height: stride(o.stride_h, "stride")?,
            stride_width: stride(o.stride_w, "stride")?,
            filter_height: stride(o.filter_h, "filter height")?,
            filter_width: stride(o.filter_w, "filter width")?,
            activation: activation(o.activation),
        };
        let is = self.shape4(input)?;
        let dtype = self.tensor(input).dtype;
        self.expect_dtype(output, dtype)?;
        let p = match dtype {
            DType::I8 => k::pooling::prepare_s8(is, &opts, self.quant(input)?, self.quant(output)?),
            DType::F32 => k::pooling::prepare_f32(is, &opts),
            other => {
                return Err(unsupported("unsupported input type for pooling")
                    .expected_found("INT8 or FLOAT32", other.name()));
            }
        }
        .map_err(prepare_error)?;
        self.check_out_shape(
            output,
            [p.batches, p.output_height, p.output_width, p.depth],
        )?;
        let p = self.params(
            op,
            quote!(::kiln::kernels::pooling::Params),
            format!("{p:?}"),
        );
        let mut ins = Vec::new();
        let x = self.operand(input, &mut ins)?;
        let out = self.out_view(output)?;
        let f = match (max, dtype) {
            (true, DType::I8) => quote!(max_pool_s8),
            (true, _) => quote!(max_pool_f32),
            (false, DType::I8) => quote!(average_pool_s8),
            (false, _) => quote!(average_pool_f32),
        };
        let call = if max {
            quote!(::kiln::kernels::pooling::#f(#p, #x, #out);)
        } else {
            quote!(let _ = ::kiln::kernels::pooling::#f(#p, #x, #out);)
        };
        self.step(op, &ins, output, call)
    }

    fn softmax(&mut self, op: &Op, beta: f32) -> Result<()> {
        let input = self.input(op, 0)?;
        let output = self.output(op, 0)?;
        let shape = &self.tensor(input).shape;
        let depth = *shape
            .last()
            .ok_or_else(|| unsupported("SOFTMAX needs a tensor of rank >= 1"))?;
        let outer = if depth == 0 {
            0
        } else {
            self.tensor(input).elements() / depth
        };
        let path = quote!(::kiln::kernels::softmax::Params);
        let mut ins = Vec::new();
        let (p, f) = match (self.tensor(input).dtype, self.tensor(output).dtype) {
            (DType::I8, DType::I8) => (
                k::softmax::prepare_s8(outer, depth, self.quant(input)?, self.quant(output)?, beta),
                quote!(softmax_s8),
            ),
            (DType::I8, DType::I16) => (
                k::softmax::prepare_s8_s16(
                    outer,
                    depth,
                    self.quant(input)?,
                    self.quant(output)?,
                    beta,
                ),
                quote!(softmax_s8_s16),
            ),
            (DType::F32, DType::F32) => (
                k::softmax::prepare_f32(outer, depth, beta),
                quote!(softmax_f32),
            ),
            (a, b) => {
                return Err(unsupported("unsupported types for SOFTMAX")
                    .expected_found("INT8->INT8, INT8->INT16 or FLOAT32", format!("{a}->{b}")));
            }
        };
        let p = p.map_err(prepare_error)?;
        let p = self.params(op, path, format!("{p:?}"));
        let x = self.operand(input, &mut ins)?;
        let out = self.out_view(output)?;
        self.step(
            op,
            &ins,
            output,
            quote!(::kiln::kernels::softmax::#f(#p, #x, #out);),
        )
    }

    fn add(&mut self, op: &Op, o: &ir::AddSubOptions) -> Result<()> {
        let (a, b) = (self.input(op, 0)?, self.input(op, 1)?);
        let output = self.output(op, 0)?;
        let dtype = self.tensor(output).dtype;
        self.expect_dtype(a, dtype)?;
        self.expect_dtype(b, dtype)?;
        let act = activation(o.activation);
        let p = match dtype {
            DType::I8 => {
                k::add::prepare_s8(self.quant(a)?, self.quant(b)?, self.quant(output)?, act)
            }
            DType::I16 => {
                k::add::prepare_s16(self.quant(a)?, self.quant(b)?, self.quant(output)?, act)
            }
            DType::F32 => Ok(k::add::prepare_f32(act)),
            other => {
                return Err(unsupported("unsupported type for ADD")
                    .expected_found("INT8, INT16 or FLOAT32", other.name()));
            }
        }
        .map_err(prepare_error)?;
        let p = self.params(op, quote!(::kiln::kernels::add::Params), format!("{p:?}"));
        let suffix = match dtype {
            DType::I8 => "s8",
            DType::I16 => "s16",
            _ => "f32",
        };
        let mut ins = Vec::new();
        let x = self.operand(a, &mut ins)?;
        let y = self.operand(b, &mut ins)?;
        let out = self.out_view(output)?;
        let (sa, sb) = (&self.tensor(a).shape, &self.tensor(b).shape);
        let call = if sa == sb {
            let f = format_ident!("add_{}", suffix);
            quote!(::kiln::kernels::add::#f(#p, #x, #y, #out);)
        } else {
            let bc = k::broadcast::Broadcast::new(sa, sb).map_err(prepare_error)?;
            let name = format_ident!("OP{}_BROADCAST", op.id.0);
            let value = debug_expr(
                quote!(::kiln::kernels::broadcast::Broadcast),
                &format!("{bc:?}"),
            );
            self.items.push(quote! {
                const #name: ::kiln::kernels::broadcast::Broadcast = #value;
            });
            let f = format_ident!("add_broadcast_{}", suffix);
            quote!(::kiln::kernels::add::#f(#p, &#name, #x, #y, #out);)
        };
        self.step(op, &ins, output, call)
    }

    /// The module items around the collected kernel calls.
    fn finish(self, options: &Options, flash_bytes: usize) -> Result<TokenStream> {
        let g = self.graph;
        let plan = self.plan;
        let arena_bytes = plan.arena_bytes;
        let persistent_bytes = plan.persistent_bytes;
        let weights_bytes = g.weights_bytes();
        let n_in = g.inputs.len();
        let n_out = g.outputs.len();
        let align = format_ident!(
            "A{}",
            match plan.alignment {
                0..=4 => 4usize,
                5..=8 => 8,
                9..=16 => 16,
                17..=32 => 32,
                _ => 64,
            }
        );
        if plan.alignment > 64 {
            return Err(unsupported("alignments above 64 bytes are not supported")
                .expected_found("at most 64", plan.alignment.to_string()));
        }
        let mut io_items = Vec::new();
        let mut accessors = Vec::new();
        let mut in_arms = Vec::new();
        let mut out_arms = Vec::new();
        for (kind, list) in [("INPUT", &g.inputs), ("OUTPUT", &g.outputs)] {
            for (i, &t) in list.iter().enumerate() {
                let tensor = g.tensor(t);
                let (ty, view, view_mut) = elem(tensor.dtype)?;
                let (off, len) = self.buffer_of(t)?;
                let n = tensor.elements();
                let prefix = if list.len() == 1 {
                    kind.to_string()
                } else {
                    format!("{kind}{i}")
                };
                let shape_name = format_ident!("{}_SHAPE", prefix);
                let dtype_name = format_ident!("{}_DTYPE", prefix);
                let scale_name = format_ident!("{}_SCALE", prefix);
                let zp_name = format_ident!("{}_ZERO_POINT", prefix);
                let rank = tensor.shape.len();
                let dims = &tensor.shape;
                let dtype = Ident::new(
                    match tensor.dtype {
                        DType::F32 => "F32",
                        DType::I8 => "I8",
                        DType::U8 => "U8",
                        DType::I16 => "I16",
                        DType::I32 => "I32",
                        DType::I64 => "I64",
                        _ => "Bool",
                    },
                    Span::call_site(),
                );
                let (scale, zp) = match &tensor.quant {
                    Quantization::PerTensor { scale, zero_point } => (*scale, *zero_point as i32),
                    _ => (0.0, 0),
                };
                let doc = format!(" `{}` (tensor {}).", tensor.name, t.0);
                io_items.push(quote! {
                    #[doc = #doc]
                    pub const #shape_name: [usize; #rank] = [#(#dims),*];
                    pub const #dtype_name: ::kiln::DType = ::kiln::DType::#dtype;
                    pub const #scale_name: f32 = #scale;
                    pub const #zp_name: i32 = #zp;
                });
                let lower = prefix.to_lowercase();
                let end = off + len;
                if kind == "INPUT" {
                    let f = format_ident!("{}_mut", lower);
                    let doc = format!(" Input {i}: `{}`, shape {:?}.", tensor.name, tensor.shape);
                    accessors.push(quote! {
                        #[doc = #doc]
                        pub fn #f(&mut self) -> &mut [#ty; #n] {
                            ::kiln::runtime::#view_mut(&mut self.arena[#off..#end]).try_into().expect("planned size")
                        }
                    });
                    in_arms.push(quote!(#i => &mut self.arena[#off..#end],));
                } else {
                    let f = format_ident!("{}", lower);
                    let doc = format!(" Output {i}: `{}`, shape {:?}.", tensor.name, tensor.shape);
                    accessors.push(quote! {
                        #[doc = #doc]
                        pub fn #f(&self) -> &[#ty; #n] {
                            ::kiln::runtime::#view(&self.arena[#off..#end]).try_into().expect("planned size")
                        }
                    });
                    out_arms.push(quote!(#i => &self.arena[#off..#end],));
                }
            }
        }
        let items = &self.items;
        let body = &self.body;
        let (state_field, state_init, state_take, reset_body) = if persistent_bytes > 0 {
            (
                quote!(state: &'static mut [u8; PERSISTENT_BYTES],),
                quote!(static STATE: ::kiln::runtime::Arena<::kiln::runtime::align::#align, PERSISTENT_BYTES> = ::kiln::runtime::Arena::new();),
                quote!(state: STATE.take()?,),
                quote!(self.state.fill(0);),
            )
        } else {
            (quote!(), quote!(), quote!(), quote!())
        };
        let budget = budget_checks(options, plan, g, flash_bytes)?;
        let arena_binding = if body.is_empty() {
            quote!()
        } else {
            quote!(let arena = &mut self.arena[..];)
        };
        Ok(quote! {
            /// Bytes of the activation arena (scratch included).
            pub const ARENA_BYTES: usize = #arena_bytes;
            /// Bytes of state kept between `invoke()` calls (LSTM/SVDF variables).
            pub const PERSISTENT_BYTES: usize = #persistent_bytes;
            /// Bytes of the model's constant buffers (weights, biases) in flash.
            pub const WEIGHTS_BYTES: usize = #weights_bytes;
            /// Number of model inputs.
            pub const INPUTS: usize = #n_in;
            /// Number of model outputs.
            pub const OUTPUTS: usize = #n_out;
            #(#io_items)*
            #budget

            static ARENA: ::kiln::runtime::Arena<::kiln::runtime::align::#align, ARENA_BYTES> = ::kiln::runtime::Arena::new();
            #state_init

            #(#items)*

            /// The compiled model. There is one: [`Model::take`] hands it out once.
            pub struct Model {
                arena: &'static mut [u8; ARENA_BYTES],
                #state_field
            }

            impl Model {
                /// The model, the first time only (it owns the static arena).
                pub fn take() -> Option<Model> {
                    Some(Model {
                        arena: ARENA.take()?,
                        #state_take
                    })
                }

                /// Zeroes the state kept between calls (a no-op for stateless models).
                pub fn reset(&mut self) {
                    #reset_body
                }

                /// Runs the model once: inputs to outputs.
                pub fn invoke(&mut self) {
                    #arena_binding
                    #(#body)*
                }

                #(#accessors)*

                /// The raw bytes of input `i` (little-endian). Panics if `i >= INPUTS`.
                pub fn input_bytes_mut(&mut self, i: usize) -> &mut [u8] {
                    match i {
                        #(#in_arms)*
                        _ => panic!("no such input"),
                    }
                }

                /// The raw bytes of output `i` (little-endian). Panics if `i >= OUTPUTS`.
                pub fn output_bytes(&self, i: usize) -> &[u8] {
                    match i {
                        #(#out_arms)*
                        _ => panic!("no such output"),
                    }
                }
            }
        })
    }
}

/// The largest tensors live at the peak step, for budget messages.
fn peak_summary(plan: &Plan, graph: &Graph) -> String {
    let Some(step) = plan.peak_step() else {
        return String::new();
    };
    let op = graph.op(plan.order[step]);
    let mut live: Vec<_> = plan
        .buffers
        .iter()
        .filter(|b| b.first <= step && step <= b.last)
        .collect();
    live.sort_by_key(|b| std::cmp::Reverse(b.size));
    let mut s = format!("peak at op {} ({}): ", op.id.0, op.kind.name());
    for (i, b) in live.iter().take(3).enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let name = match b.owner {
            BufferOwner::Tensor(t) => format!("`{}`", graph.tensor(t).name),
            BufferOwner::Scratch(o) => format!("scratch of op {}", o.0),
        };
        let _ = write!(s, "{name} {} B", b.size);
    }
    s
}

/// Budget checks: literal budgets are checked now; others become `const` assertions.
fn budget_checks(
    options: &Options,
    plan: &Plan,
    graph: &Graph,
    flash: usize,
) -> Result<TokenStream> {
    let ram = plan.arena_bytes + plan.persistent_bytes;
    let mut out = TokenStream::new();
    let checks = [
        (
            "RAM",
            &options.ram_budget,
            ram,
            format!(
                "arena {} B + persistent {} B; {}",
                plan.arena_bytes,
                plan.persistent_bytes,
                peak_summary(plan, graph)
            ),
            quote!(ARENA_BYTES + PERSISTENT_BYTES),
        ),
        (
            "flash",
            &options.flash_budget,
            flash,
            format!(
                "weights {} B + constants {} B",
                graph.weights_bytes(),
                flash - graph.weights_bytes()
            ),
            quote!(#flash),
        ),
    ];
    for (what, budget, need, detail, need_expr) in checks {
        match budget {
            None => {}
            Some(Budget::Bytes(b)) => {
                if need > *b {
                    return Err(Diagnostic::unsupported(format!(
                        "the model needs {need} bytes of {what}, over the budget of {b} bytes by {} bytes ({detail})",
                        need - b
                    )));
                }
            }
            Some(Budget::Expr(expr)) => {
                let msg = format!(
                    "the model needs {need} bytes of {what}, over the {what} budget `{}` ({detail})",
                    expr.to_string()
                );
                out.extend(quote! {
                    const _: () = assert!(#need_expr <= (#expr), #msg);
                });
            }
        }
    }
    Ok(out)
}

/// A RAM or flash budget: a number, or a constant expression checked by the compiler.
#[derive(Clone, Debug)]
pub enum Budget {
    Bytes(usize),
    Expr(TokenStream),
}
