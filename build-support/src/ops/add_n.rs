//! ADD_N: float32 and int8 (TFLM's types), two or more inputs of one shape, type and (int8)
//! quantization (`kiln_kernels::add_n`).

use crate::op::{Call, Cx, Kernel, Operand, Step, kernel_fn, prepare_error, unsupported};
#[cfg(feature = "exec")]
use crate::op::{Io, f32s, i8s, o8, of};
use kiln_kernels::add_n;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;
use quote::quote;

/// The kernels, by type.
#[derive(Debug)]
enum AddN {
    S8(add_n::Params),
    F32,
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let n = cx.op.inputs.len();
    if n < 2 {
        return Err(unsupported("ADD_N needs at least 2 inputs")
            .expected_found(">= 2 inputs", format!("{n} inputs")));
    }
    let inputs: Vec<_> = (0..n).map(|i| cx.input(i)).collect::<Result<_>>()?;
    let output = cx.output()?;
    let first = inputs[0];
    let dtype = cx.dtype(first);
    if cx.dtype(output) != dtype {
        return Err(unsupported("ADD_N's output must have its inputs' type")
            .expected_found(dtype.name(), cx.dtype(output).name()));
    }
    for &t in &inputs[1..] {
        let tensor = cx.tensor(t);
        if tensor.shape != cx.tensor(first).shape || tensor.dtype != dtype {
            return Err(unsupported("ADD_N's inputs must have one shape and type")
                .at_tensor(t.0, tensor.name.clone())
                .expected_found(
                    format!("{dtype} {:?}", cx.tensor(first).shape),
                    format!("{} {:?}", tensor.dtype, tensor.shape),
                ));
        }
    }
    cx.check_same_elements(first, output)?;
    let kernel = match dtype {
        DType::F32 => AddN::F32,
        DType::I8 => {
            let q = cx.quant(first)?;
            for &t in &inputs[1..] {
                let qt = cx.quant(t)?;
                if qt != q {
                    return Err(
                        unsupported("ADD_N's int8 inputs must share one quantization")
                            .at_tensor(t.0, cx.tensor(t).name.clone())
                            .expected_found(
                                format!("scale {} zero point {}", q.scale, q.zero_point),
                                format!("scale {} zero point {}", qt.scale, qt.zero_point),
                            ),
                    );
                }
            }
            AddN::S8(add_n::prepare_s8(q, cx.quant(output)?).map_err(prepare_error)?)
        }
        other => {
            return Err(unsupported("unsupported type for ADD_N")
                .expected_found("FLOAT32 or INT8", other.name()));
        }
    };
    Ok(cx.step(
        kernel,
        inputs.into_iter().map(Operand::Tensor).collect(),
        output,
    ))
}

impl Kernel for AddN {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let (inputs, out) = (call.inputs().to_vec(), call.output());
        Ok(match self {
            AddN::S8(p) => {
                let p = call.params("add_n", p);
                let f = kernel_fn("add_n", "add_n_s8");
                quote!(#f(#p, &[#(#inputs),*], #out);)
            }
            AddN::F32 => {
                let f = kernel_fn("add_n", "add_n_f32");
                quote!(#f(&[#(#inputs),*], #out);)
            }
        })
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        match self {
            AddN::S8(p) => io.with_inputs(i8s, |v, out| add_n::add_n_s8(p, v, o8(out))),
            AddN::F32 => io.with_inputs(f32s, |v, out| add_n::add_n_f32(v, of(out))),
        }
    }
}
