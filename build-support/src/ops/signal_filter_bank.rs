//! SignalFilterBank (TFLM's Signal library; a custom operator): a uint32 power spectrum of
//! rank 1 through `num_channels` triangular filters to uint64 (`kiln_kernels::signal_filter_bank`).
//! The five int16 tables (weights, unweights, channel frequency starts, channel weight
//! starts, channel widths) must be constants: every read they make is checked at build time
//! (TFLM reads wherever they point).

use super::signal_energy::{check_inputs, check_tensor, int_options};
#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::signal_filter_bank::{self as fb, Refusal};
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// The uint32 -> uint64 kernel.
#[derive(Debug)]
struct FilterBank(fb::Params);

/// The tables' names, in input order after the spectrum.
const TABLES: [&str; 5] = [
    "weights",
    "unweights",
    "channel frequency starts",
    "channel weight starts",
    "channel widths",
];

pub(super) fn lower(cx: &Cx<'_>) -> Result<Step> {
    check_inputs(
        cx,
        6,
        "input, weights, unweights, channel frequency starts, channel weight starts, channel widths",
    )?;
    let input = cx.input(0)?;
    let output = cx.output()?;
    check_tensor(cx, input, "input", DType::U32, Some(1))?;
    check_tensor(cx, output, "output", DType::U64, Some(1))?;
    let mut tables = Vec::with_capacity(5);
    for (slot, what) in (1..6).zip(TABLES) {
        let t = cx.input(slot)?;
        check_tensor(cx, t, what, DType::I16, Some(1))?;
        let bytes = cx.need_constant(t).map_err(|d| {
            d.expected_found(
                format!("constant {what}"),
                "a runtime tensor (TFLM would read wherever it points)",
            )
        })?;
        let values: Vec<i16> = bytes
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect();
        tables.push((t, values));
    }
    let [num_channels] = int_options(cx, ["num_channels"])?;
    let n_out = cx.tensor(output).elements();
    let num_channels = usize::try_from(num_channels)
        .ok()
        .filter(|&n| n >= 1 && n >= n_out)
        .ok_or_else(|| {
            unsupported(
                "SignalFilterBank's `num_channels` must be at least 1 and the output's size",
            )
            .at_tensor(output.0, cx.tensor(output).name.clone())
            .expected_found(
                format!("num_channels >= {}", n_out.max(1)),
                format!("num_channels {num_channels}"),
            )
        })?;
    let (weights, unweights) = (&tables[0], &tables[1]);
    let p = fb::Params {
        num_channels,
        unweights_complement: fb::complement(&weights.1, &unweights.1),
        unsigned_tables: fb::unsigned(&weights.1, &unweights.1),
    };
    let weights_len = weights.1.len().min(unweights.1.len());
    let input_len = cx.tensor(input).elements();
    fb::check(
        &p,
        input_len,
        weights_len,
        &tables[2].1,
        &tables[3].1,
        &tables[4].1,
    )
    .map_err(|r| {
        let at = |slot: usize| {
            let t = tables[slot].0;
            unsupported("SignalFilterBank's tables point outside their arrays")
                .at_tensor(t.0, cx.tensor(t).name.clone())
        };
        match r {
            Refusal::ShortTable => {
                let short = (2..5)
                    .find(|&s| tables[s].1.len() <= num_channels)
                    .unwrap_or(2);
                at(short).expected_found(
                    format!("{} entries (num_channels + 1)", num_channels + 1),
                    format!("{} entries", tables[short].1.len()),
                )
            }
            Refusal::Frequencies {
                channel,
                start,
                width,
            } => at(2).expected_found(
                format!("bins inside the input's {input_len}"),
                format!(
                    "channel {channel}: bins {start}..{}",
                    start as i32 + width as i32
                ),
            ),
            Refusal::Weights {
                channel,
                start,
                width,
            } => at(3).expected_found(
                format!("weights inside the {weights_len} weights and unweights"),
                format!(
                    "channel {channel}: weights {start}..{}",
                    start as i32 + width as i32
                ),
            ),
        }
    })?;
    let mut operands = vec![Operand::Tensor(input)];
    operands.extend(tables.iter().map(|&(t, _)| Operand::Tensor(t)));
    Ok(cx.step(FilterBank(p), operands, output))
}

impl Kernel for FilterBank {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let pre = [call.params("signal_filter_bank", &self.0)];
        call.standard("signal_filter_bank", "signal_filter_bank", &pre)
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        let input = bytemuck::cast_slice(io.input(0));
        let (w, u, fs, ws, widths) = (io.i16(1), io.i16(2), io.i16(3), io.i16(4), io.i16(5));
        let out = bytemuck::cast_slice_mut(io.out());
        fb::signal_filter_bank(&self.0, input, w, u, fs, ws, widths, out)
    }
}
