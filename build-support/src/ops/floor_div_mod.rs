//! FLOOR_DIV and FLOOR_MOD: float32 (the only type the pinned TFLM runs), broadcasting over
//! at most 4 dimensions or not (`kiln_kernels::floor_div_mod`). A constant FLOOR_DIV
//! denominator holding a zero is refused (TFLM's Eval fails with "Division by 0"); FLOOR_MOD
//! has no such check in the pinned wheel (its remainder by zero is NaN, as here).

#[cfg(feature = "exec")]
use crate::op::Io;
use crate::op::{Call, Cx, Kernel, Operand, Step, unsupported};
use kiln_kernels::broadcast::Broadcast;
use kiln_planner::diag::Result;
use kiln_planner::ir::DType;
use proc_macro2::TokenStream;

/// FLOOR_DIV (`div`) or FLOOR_MOD; `None`: the inputs have the output's shape.
#[derive(Debug)]
struct Floor {
    div: bool,
    broadcast: Option<Broadcast>,
}

pub(super) fn lower_div(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, true)
}

pub(super) fn lower_mod(cx: &Cx<'_>) -> Result<Step> {
    lower(cx, false)
}

fn lower(cx: &Cx<'_>, div: bool) -> Result<Step> {
    let name = if div { "FLOOR_DIV" } else { "FLOOR_MOD" };
    let (a, b, output) = (cx.input(0)?, cx.input(1)?, cx.output()?);
    let (ta, tb, to) = (cx.dtype(a), cx.dtype(b), cx.dtype(output));
    if (ta, tb, to) != (DType::F32, DType::F32, DType::F32) {
        return Err(
            unsupported(format!("{name} is supported for FLOAT32 (as in TFLM)"))
                .expected_found("FLOAT32, FLOAT32 -> FLOAT32", format!("{ta}, {tb} -> {to}")),
        );
    }
    let broadcast = cx.broadcast(a, b, output)?;
    if broadcast.is_some() {
        let rank = cx.tensor(a).shape.len().max(cx.tensor(b).shape.len());
        if rank > 4 {
            return Err(unsupported(format!(
                "{name} broadcasts at most 4 dimensions (TFLM's 4-D helper)"
            ))
            .expected_found("rank <= 4", format!("rank {rank}")));
        }
    }
    let zero = |bytes: &[u8]| {
        bytes
            .chunks_exact(4)
            .any(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) == 0.0)
    };
    if div && cx.tensor(b).data().is_some_and(zero) {
        return Err(unsupported(format!(
            "the denominator of {name} holds a zero (TFLM fails on it)"
        ))
        .at_tensor(b.0, cx.tensor(b).name.clone()));
    }
    Ok(cx.step(
        Floor { div, broadcast },
        vec![Operand::Tensor(a), Operand::Tensor(b)],
        output,
    ))
}

impl Kernel for Floor {
    fn emit(&self, call: &mut Call<'_, '_>) -> Result<TokenStream> {
        let name = if self.div { "floor_div" } else { "floor_mod" };
        match &self.broadcast {
            None => call.standard("floor_div_mod", &format!("{name}_f32"), &[]),
            Some(b) => {
                let pre = [call.broadcast(b)];
                call.standard("floor_div_mod", &format!("{name}_broadcast_f32"), &pre)
            }
        }
    }

    #[cfg(feature = "exec")]
    fn run(&self, io: &mut Io<'_>) {
        use kiln_kernels::floor_div_mod as f;
        let (x, y) = (io.f32(0), io.f32(1));
        let out = io.out_f32();
        match (self.div, &self.broadcast) {
            (true, None) => f::floor_div_f32(x, y, out),
            (true, Some(b)) => f::floor_div_broadcast_f32(b, x, y, out),
            (false, None) => f::floor_mod_f32(x, y, out),
            (false, Some(b)) => f::floor_mod_broadcast_f32(b, x, y, out),
        }
    }
}
