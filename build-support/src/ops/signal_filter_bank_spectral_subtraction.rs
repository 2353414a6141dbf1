//! SignalFilterBankSpectralSubtraction (TFLM's Signal library; a custom operator): rank-1
//! uint32 channels in, the noise-subtracted channels and a copy of the noise estimate out
//! (`kiln_kernels::signal_filter_bank_spectral_subtraction`). The estimate is the kernel's
//! persistent state, which TFLM keeps outside the tensors: the reader gives it to the
//! operator as a variable tensor (`uint32[num_channels]`), planned in the persistent region
//! and zeroed by `reset()` as TFLM's `Reset` does, so it carries over between invocations.
//!
//! TFLM reads the nine options by position in the flexbuffer's sorted keys, so exactly
//! those nine keys are accepted; integers must fit TFLM's `ElementAsInt32` (they are stored
//! into `uint32` fields as the C++ does, negative values wrapping). Refused where the C++ is
//! undefined: `smoothing_bits` outside 0..=31 or `spectral_subtraction_bits` outside 0..=63
//! (shifts by the type's width or more), and tensors of other than `num_channels` values
//! (TFLM reads and copies `num_channels` values whatever the tensors' sizes).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::signal_filter_bank_spectral_subtraction as ss;
use kiln_planner::diag::{Diagnostic, ErrorKind, Result};
use kiln_planner::ir::{CustomValue, DType, OpKind};
use proc_macro2::TokenStream;
use quote::quote;

/// The uint32 kernel.
#[derive(Debug)]
struct SpectralSubtraction(ss::Params);

/// The options TFLM reads, in its (sorted) order.
const KEYS: [&str; 9] = [
    "alternate_one_minus_smoothing",
    "alternate_smoothing",
    "clamping",
    "min_signal_remaining",
    "num_channels",
    "one_minus_smoothing",
    "smoothing",
    "smoothing_bits",
    "spectral_subtraction_bits",
];

const NAME: &str = "SignalFilterBankSpectralSubtraction";

fn options_error(found: String) -> Diagnostic {
    unsupported(format!(
        "{NAME} needs exactly the options {} (integers within int32; `clamping` a bool)",
        KEYS.join(", ")
    ))
    .expected_found("those nine options", found)
}

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    let OpKind::Custom { options, .. } = &cx.op.kind else {
        return Err(unsupported(format!("{NAME} must be a custom operator")));
    };
    let Some(o) = options else {
        return Err(options_error(
            "custom options that are no map of scalars".into(),
        ));
    };
    let keys: Vec<&str> = o.entries.iter().map(|(k, _)| k.as_str()).collect();
    if keys != KEYS {
        return Err(options_error(format!("options {}", keys.join(", "))));
    }
    let int = |k: &str| -> Result<u32> {
        o.int(k)
            .and_then(|v| i32::try_from(v).ok())
            .map(|v| v as u32)
            .ok_or_else(|| options_error(format!("`{k}` {:?}", o.get(k))))
    };
    let clamping = match o.get("clamping") {
        Some(CustomValue::Bool(b)) => b,
        Some(CustomValue::Int(v)) => v != 0,
        Some(CustomValue::UInt(v)) => v != 0,
        other => return Err(options_error(format!("`clamping` {other:?}"))),
    };
    let num_channels = int("num_channels")? as i32;
    let p = ss::Params {
        num_channels: usize::try_from(num_channels).unwrap_or(0),
        smoothing: int("smoothing")?,
        one_minus_smoothing: int("one_minus_smoothing")?,
        alternate_smoothing: int("alternate_smoothing")?,
        alternate_one_minus_smoothing: int("alternate_one_minus_smoothing")?,
        min_signal_remaining: int("min_signal_remaining")?,
        smoothing_bits: int("smoothing_bits")?,
        spectral_subtraction_bits: int("spectral_subtraction_bits")?,
        clamping,
    };
    let p = ss::prepare(p).ok_or_else(|| {
        unsupported(format!(
            "{NAME} needs smoothing_bits in 0..=31, spectral_subtraction_bits in 0..=63 and num_channels >= 1"
        ))
        .expected_found(
            "smoothing_bits 0..=31, spectral_subtraction_bits 0..=63, num_channels >= 1",
            format!(
                "smoothing_bits {}, spectral_subtraction_bits {}, num_channels {num_channels}",
                p.smoothing_bits as i32, p.spectral_subtraction_bits as i32
            ),
        )
    })?;
    if cx.op.outputs.len() != 2 {
        return Err(
            unsupported(format!("{NAME} has two outputs (output, noise estimate)"))
                .expected_found("2 outputs", format!("{} outputs", cx.op.outputs.len())),
        );
    }
    let input = cx.input(0)?;
    let (output, noise) = (cx.op.outputs[0], cx.op.outputs[1]);
    for t in [input, output, noise] {
        let tensor = cx.tensor(t);
        if tensor.dtype != DType::U32 {
            return Err(unsupported(format!("{NAME} runs on UINT32 tensors"))
                .at_tensor(t.0, tensor.name.clone())
                .expected_found("UINT32", tensor.dtype.name()));
        }
        if tensor.shape != [p.num_channels] {
            return Err(unsupported(format!(
                "{NAME}'s input and outputs are rank 1 of num_channels values"
            ))
            .at_tensor(t.0, tensor.name.clone())
            .expected_found(
                format!("[{}]", p.num_channels),
                format!("shape {:?}", tensor.shape),
            ));
        }
    }
    // The reader adds the state tensor exactly when num_channels matches the input.
    if cx.op.inputs.len() != 2 {
        return Err(unsupported(format!("{NAME} has one input"))
            .expected_found("1 input", format!("{} inputs", cx.op.inputs.len())));
    }
    let state = cx.variable(1)?;
    let mut step = cx.step(SpectralSubtraction(p), vec![Operand::Tensor(input)], output);
    step.outputs = vec![output, noise];
    step.states = vec![state];
    Ok(step)
}

impl Kernel for SpectralSubtraction {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        if call.in_place().is_some() {
            return Err(call.no_in_place_form());
        }
        let p = call.params("signal_filter_bank_spectral_subtraction", &self.0);
        let x = call.input(0);
        let (Some(state), [out, noise]) = (call.states().first(), call.outputs()) else {
            return Err(Diagnostic::new(
                ErrorKind::InvalidPlan,
                format!("{NAME} is lowered with a state and two outputs"),
            ));
        };
        Ok(quote!(
            ::kiln::kernels::signal_filter_bank_spectral_subtraction::signal_filter_bank_spectral_subtraction(
                #p, #x, #state, #out, #noise
            );
        ))
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let x: &[u32] = bytemuck::cast_slice(io.input(0));
        let (states, out, more) = io.states_and_outs();
        ss::signal_filter_bank_spectral_subtraction(
            &self.0,
            x,
            bytemuck::cast_slice_mut(states[0].bytes_mut()),
            bytemuck::cast_slice_mut(out),
            bytemuck::cast_slice_mut(more[0].bytes_mut()),
        );
    }
}
