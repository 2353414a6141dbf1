//! SignalEnergy (TFLM's Signal library; a custom operator): an int16 complex spectrum of
//! rank 1 (interleaved real and imaginary parts) to the uint32 energy of its bins
//! `start_index..end_index` (`kiln_kernels::signal_energy`), also in place over its input,
//! each energy in its bin's word.
//!
//! Also the checks the Signal operators of this family share ([`int_options`], [`options`],
//! [`check_tensor`]).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::signal_energy;
use kiln_planner::diag::Result;
use kiln_planner::ir::{CustomValue, DType, OpKind, TensorId};
use kiln_planner::kernels::Narrowing;
use proc_macro2::TokenStream;

/// The integer options `keys` of a Signal operator, in `i32`. TFLM reads its options by
/// position in the key-sorted flexbuffer map, so the map must hold exactly these keys
/// (`keys` sorted): another key would shift what TFLM reads.
pub(super) fn int_options<const N: usize>(cx: &Cx<'_>, keys: [&str; N]) -> Result<[i64; N]> {
    options(cx, keys, &[])
}

/// The options `keys` (exactly those, in order, as [`int_options`]), each an integer within
/// int32, or a bool where `bools` names it (TFLM's `ElementAsBool` also takes an integer:
/// nonzero is true), as 0 or 1.
pub(super) fn options<const N: usize>(
    cx: &Cx<'_>,
    keys: [&str; N],
    bools: &[&str],
) -> Result<[i64; N]> {
    let name = cx.op.kind.name();
    let want = keys.join(", ");
    let OpKind::Custom { options, .. } = &cx.op.kind else {
        return Err(unsupported(format!("{name} must be a custom operator")));
    };
    let Some(options) = options else {
        let what = if bools.is_empty() {
            "integer options"
        } else {
            "options"
        };
        return Err(
            unsupported(format!("{name} needs a flexbuffer map of its options"))
                .expected_found(format!("the {what} {want}"), "no flexbuffer options"),
        );
    };
    let found: Vec<&str> = options.entries.iter().map(|(k, _)| k.as_str()).collect();
    if found != keys {
        return Err(unsupported(format!(
            "{name}'s options must be exactly {want} (TFLM reads them by position)"
        ))
        .expected_found(want, format!("keys [{}]", found.join(", "))));
    }
    let mut values = [0i64; N];
    for (v, key) in values.iter_mut().zip(keys) {
        let value = options.get(key);
        let is_bool = bools.contains(&key);
        let got = if is_bool {
            match value {
                Some(CustomValue::Bool(b)) => Some(i64::from(b)),
                Some(CustomValue::Int(x)) => Some(i64::from(x != 0)),
                Some(CustomValue::UInt(x)) => Some(i64::from(x != 0)),
                _ => None,
            }
        } else {
            options.int(key).filter(|v| i32::try_from(*v).is_ok())
        };
        *v = got.ok_or_else(|| {
            let (kind, want) = if is_bool {
                ("a bool", format!("a bool `{key}`"))
            } else {
                ("a 32-bit integer", format!("an integer `{key}`"))
            };
            unsupported(format!("{name}'s option `{key}` must be {kind}"))
                .expected_found(want, format!("{key} = {value:?}"))
        })?;
    }
    Ok(values)
}

/// Checks that `t` (the operator's `what`) is of `dtype`, of rank `rank` if given.
pub(super) fn check_tensor(
    cx: &Cx<'_>,
    t: TensorId,
    what: &str,
    dtype: DType,
    rank: Option<usize>,
) -> Result<()> {
    let name = cx.op.kind.name();
    let tensor = cx.tensor(t);
    if tensor.dtype != dtype {
        return Err(
            unsupported(format!("{name}'s {what} must be {}", dtype.name()))
                .at_tensor(t.0, tensor.name.clone())
                .expected_found(dtype.name(), tensor.dtype.name()),
        );
    }
    if let Some(r) = rank.filter(|&r| r != tensor.shape.len()) {
        return Err(unsupported(format!("{name}'s {what} must be of rank {r}"))
            .at_tensor(t.0, tensor.name.clone())
            .expected_found(format!("rank {r}"), format!("shape {:?}", tensor.shape)));
    }
    Ok(())
}

/// Checks the number of inputs.
pub(super) fn check_inputs(cx: &Cx<'_>, n: usize, names: &str) -> Result<()> {
    if cx.op.inputs.len() == n {
        return Ok(());
    }
    Err(
        unsupported(format!("{} has {n} inputs ({names})", cx.op.kind.name())).expected_found(
            format!("{n} inputs"),
            format!("{} inputs", cx.op.inputs.len()),
        ),
    )
}

/// The int16 -> uint32 kernel.
#[derive(Debug)]
struct Energy(signal_energy::Params);

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    check_inputs(cx, 1, "input")?;
    let (input, output) = (cx.input(0)?, cx.output()?);
    check_tensor(cx, input, "input", DType::I16, Some(1))?;
    check_tensor(cx, output, "output", DType::U32, Some(1))?;
    let [end, start] = int_options(cx, ["end_index", "start_index"])?;
    let (n_in, n_out) = (cx.tensor(input).elements(), cx.tensor(output).elements());
    let p = signal_energy::prepare(start, end, n_in, n_out).ok_or_else(|| {
        unsupported(
            "SignalEnergy's bins start_index..end_index must lie inside the output and the input's complex values",
        )
        .at_tensor(output.0, cx.tensor(output).name.clone())
        .expected_found(
            format!(
                "0 <= start_index, end_index <= {}",
                n_out.min(n_in / 2)
            ),
            format!("start_index {start}, end_index {end}"),
        )
    })?;
    let mut step = cx.step(Energy(p), vec![Operand::Tensor(input)], output);
    // A bin (two int16) and its energy (a uint32) are both 4 bytes: in place, bin by bin,
    // where the output has a word per input bin.
    if n_in == 2 * n_out {
        step.abilities.narrowing_in_place = Some(Narrowing {
            units: n_out,
            scratch_bytes: 0,
        });
    }
    Ok(step)
}

impl Kernel for Energy {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("signal_energy", &self.0)];
        match call.in_place() {
            None => call.standard("signal_energy", "signal_energy", &pre),
            // Over its input, each energy in its bin's word (the plan puts the output at
            // the input's start).
            Some(0) if call.in_place_at == (0, 0) => {
                let f = crate::op::kernel_fn("signal_energy", "signal_energy_in_place");
                let (data, [p]) = (call.output(), pre);
                Ok(quote::quote!(#f(#p, #data);))
            }
            Some(_) => Err(call.no_in_place_form()),
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let input = io.i16(0);
        signal_energy::signal_energy(&self.0, input, bytemuck::cast_slice_mut(io.out()))
    }
}
