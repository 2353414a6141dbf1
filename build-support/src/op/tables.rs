//! The requantization tables a lowering computes and a call emits: per-channel multipliers
//! and shifts ([`PerChannel`]), and a fast int8 kernel's folded biases, multipliers and
//! right shifts ([`Fast`]).

use super::call::Call;
use super::convert::bytemuck_i8;
use super::cx::Cx;
use super::diag::prepare_error;
use kiln_kernels as k;
use kiln_planner::diag::Result;
use kiln_planner::ir::TensorId;
use proc_macro2::TokenStream;

/// Per-channel requantization tables.
#[derive(Clone, Debug, PartialEq)]
pub struct PerChannel {
    pub multiplier: Vec<i32>,
    pub shift: Vec<i32>,
}

impl PerChannel {
    /// Tables of `channels` entries written by a kernel's `prepare*` (`fill(multiplier,
    /// shift)`), returned with what it returns.
    pub(crate) fn prepare<P>(
        channels: usize,
        fill: impl FnOnce(&mut [i32], &mut [i32]) -> std::result::Result<P, k::quant::PrepareError>,
    ) -> Result<(P, PerChannel)> {
        let (mut multiplier, mut shift) = (vec![0; channels], vec![0; channels]);
        let p = fill(&mut multiplier, &mut shift).map_err(prepare_error)?;
        Ok((p, PerChannel { multiplier, shift }))
    }
}

/// The build-time tables of a fast int8 kernel (`kiln_kernels::gemm`): the folded bias,
/// the multipliers and the right shifts, one per output channel.
#[derive(Debug, Clone)]
pub struct Fast {
    pub bias: Vec<i32>,
    pub multiplier: Vec<i32>,
    pub right_shift: Vec<i32>,
}

impl Fast {
    /// The tables, if the kernel's `prepare_fast_*` (`kiln_kernels::gemm::prepare_layer`:
    /// `accept(filter, bias, multiplier, shift, folded, multiplier_out, right_shift)`)
    /// accepts the layer: the filter and the bias (if any) must be constants.
    pub(crate) fn prepare_layer(
        cx: &Cx<'_>,
        filter: TensorId,
        bias: Option<TensorId>,
        t: &PerChannel,
        accept: impl FnOnce(
            &[i8],
            Option<&[i32]>,
            &[i32],
            &[i32],
            &mut [i32],
            &mut [i32],
            &mut [i32],
        ) -> bool,
    ) -> Option<Fast> {
        if !cx.fast_kernels() {
            return None;
        }
        let filter = bytemuck_i8(cx.tensor(filter).data()?);
        let bias = match bias {
            Some(b) => Some(cx.const_i32(b).ok()?),
            None => None,
        };
        let n = t.multiplier.len();
        let (mut folded, mut multiplier, mut right_shift) = (vec![0; n], vec![0; n], vec![0; n]);
        accept(
            filter,
            bias.as_deref(),
            &t.multiplier,
            &t.shift,
            &mut folded,
            &mut multiplier,
            &mut right_shift,
        )
        .then_some(Fast {
            bias: folded,
            multiplier,
            right_shift,
        })
    }
}

impl Call<'_, '_> {
    /// The per-channel multiplier and shift tables, `[&OP<k>_MULTIPLIER, &OP<k>_SHIFT]`.
    pub fn per_channel(&mut self, t: &PerChannel) -> [TokenStream; 2] {
        [
            self.table("MULTIPLIER", &t.multiplier),
            self.table("SHIFT", &t.shift),
        ]
    }

    /// The tables of a fast int8 kernel, `[&OP<k>_BIAS, &OP<k>_MULTIPLIER, &OP<k>_RIGHT_SHIFT]`.
    pub fn fast(&mut self, f: &Fast) -> [TokenStream; 3] {
        [
            self.table("BIAS", &f.bias),
            self.table("MULTIPLIER", &f.multiplier),
            self.table("RIGHT_SHIFT", &f.right_shift),
        ]
    }
}
