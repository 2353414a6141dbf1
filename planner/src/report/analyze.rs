//! Per-layer figures of a compiled model (`kiln plan --layers`, the JSON's `layers`): each
//! step's multiply-accumulates, the bytes it moves and the kernel functions it calls, from
//! the graph, the plan and the kernels the emitter named ([`Header::kernel_variants`]);
//! and an estimate of the instructions each runs on a Cortex-M4 and a Cortex-M55, from
//! instructions per unit of work fitted to Kiln's firmware on QEMU ([`rates`]).

use super::header::Header;
use super::rates;
use crate::alias::OpMode;
use crate::ir::{Graph, Op, OpKind, TensorKind};
use crate::plan::Plan;
use serde::Serialize;
use std::fmt::Write;

/// One step of the plan: an operator, what it computes and moves, and its kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Layer {
    /// Position in the plan's order.
    pub step: usize,
    /// The operator's index in the model.
    pub op: usize,
    pub name: String,
    /// Multiply-accumulates (convolutions, depthwise and transposed convolutions, fully
    /// connected layers, batch matrix products; 0 for other operators).
    pub macs: u64,
    /// Elements of the activations it reads and writes (inputs and outputs that are neither
    /// constants nor state): the size of the work of an operator without MACs.
    pub elements: u64,
    /// Bytes of activations and state read, and written.
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Bytes of the model's constant tensors it reads (weights, biases, tables of the model).
    pub weight_bytes: u64,
    /// The kernel functions its code calls (`module::function`, sorted; empty when it has
    /// no code: a view, or slices written in place; and for every operator of a model with
    /// subgraphs, whose kernel list in the header mixes the subgraphs' operator indices).
    pub kernels: Vec<String>,
    /// The kernels as one text, `a + b`; or why there are none: `no code`, `inline code`
    /// (the operator's code calls no kernel function), `see the header` (subgraphs).
    pub kernel: String,
    /// Its work in the units of [`rates::KINDS`](super::rates::KINDS) (what the estimates multiply).
    pub work: [u64; 6],
    /// Estimated instructions on a Cortex-M4 and a Cortex-M55 ([`estimate`]).
    pub est_insns_m4: u64,
    pub est_insns_m55: u64,
}

impl Layer {
    /// Bytes moved: activations and state read and written, and constants read.
    pub fn bytes_moved(&self) -> u64 {
        self.bytes_read + self.bytes_written + self.weight_bytes
    }
}

/// The work of a layer by kind (`rates::KINDS`): its MACs as a convolution's, a depthwise
/// convolution's or another MAC kernel's (by the kernel its code calls); for a layer without
/// MACs, the elements it reads and writes and the constant bytes it reads (recurrent layers
/// count no MACs: their weights stand in); one call. Nothing for a layer without code.
fn work(macs: u64, elements: u64, weights: u64, kernels: &[String], code: bool) -> [u64; 6] {
    let mut w = [0; 6];
    if !code {
        return w;
    }
    let calls = |module: &str| kernels.iter().any(|k| k.starts_with(module));
    if macs == 0 {
        w[3] = elements;
        w[4] = weights;
    } else if calls("depthwise_conv_2d::") {
        w[1] = macs;
    } else if calls("conv_2d::") {
        w[0] = macs;
    } else {
        w[2] = macs;
    }
    w[5] = 1;
    w
}

/// Estimated instructions of `work` at `rates` (instructions per unit of each kind).
pub fn estimate(work: &[u64; 6], rates: &[f64; 6]) -> u64 {
    let sum: f64 = work.iter().zip(rates).map(|(&w, &r)| w as f64 * r).sum();
    sum.round() as u64
}

/// Multiply-accumulates of one operator, as [`crate::tiling::macs`] counts them for the
/// model (the unit test checks they agree).
pub fn op_macs(graph: &Graph, op: &Op) -> u64 {
    let elements = |t: Option<crate::ir::TensorId>| t.map_or(0, |t| graph.tensor(t).elements());
    let shape = |t: Option<crate::ir::TensorId>| t.map_or(&[][..], |t| &graph.tensor(t).shape[..]);
    let out = elements(op.outputs.first().copied()) as u64;
    let f = shape(op.input(1));
    match &op.kind {
        OpKind::Conv2d(_) if f.len() == 4 => out * (f[1] * f[2] * f[3]) as u64,
        OpKind::DepthwiseConv2d(_) if f.len() == 4 => out * (f[1] * f[2]) as u64,
        OpKind::FullyConnected(_) if f.len() == 2 => out * f[1] as u64,
        OpKind::TransposeConv(_) if f.len() == 4 => {
            elements(op.input(2)) as u64 * (f[0] * f[1] * f[2]) as u64
        }
        OpKind::BatchMatMul { .. } => shape(op.input(0)).last().map_or(0, |&k| out * k as u64),
        _ => 0,
    }
}

/// The layers of the main graph, in plan order.
pub fn layers(graph: &Graph, plan: &Plan, header: &Header) -> Vec<Layer> {
    let mut kernels: Vec<Vec<String>> = vec![Vec::new(); graph.ops.len()];
    // A subgraph's operators are numbered in their subgraph: not attributable here.
    let attributable = graph.subgraphs.is_empty();
    for k in header.kernel_variants.iter().filter(|_| attributable) {
        for &o in &k.ops {
            if let Some(v) = kernels.get_mut(o)
                && !v.contains(&k.kernel)
            {
                v.push(k.kernel.clone());
            }
        }
    }
    plan.order
        .iter()
        .enumerate()
        .map(|(step, &id)| {
            let op = graph.op(id);
            let no_code = matches!(
                plan.mode(id),
                OpMode::View | OpMode::ConcatSlices | OpMode::SplitSlices
            );
            let (mut read, mut written, mut weights, mut elements) = (0u64, 0u64, 0u64, 0u64);
            if !no_code {
                let mut constants = Vec::new();
                for t in op.present_inputs() {
                    let tensor = graph.tensor(t);
                    match &tensor.kind {
                        TensorKind::Constant { buffer, data, .. } => {
                            if !constants.contains(buffer) {
                                constants.push(*buffer);
                                weights += data.len() as u64;
                            }
                        }
                        TensorKind::Variable => read += tensor.bytes() as u64,
                        TensorKind::Activation => {
                            read += tensor.bytes() as u64;
                            elements += tensor.elements() as u64;
                        }
                    }
                }
                for &t in &op.outputs {
                    let tensor = graph.tensor(t);
                    written += tensor.bytes() as u64;
                    elements += tensor.elements() as u64;
                }
            }
            let mut ks = kernels[id.0].clone();
            ks.sort();
            let kernel = if no_code {
                "no code".to_string()
            } else if !attributable {
                "see the header".to_string()
            } else if ks.is_empty() {
                "inline code".to_string()
            } else {
                ks.join(" + ")
            };
            let macs = op_macs(graph, op);
            let work = work(macs, elements, weights, &ks, !no_code);
            Layer {
                step,
                op: id.0,
                name: op.kind.name().to_string(),
                macs,
                work,
                est_insns_m4: estimate(&work, &rates::M4),
                est_insns_m55: estimate(&work, &rates::M55),
                elements,
                bytes_read: read,
                bytes_written: written,
                weight_bytes: weights,
                kernels: ks,
                kernel,
            }
        })
        .collect()
}

/// The per-layer table of `kiln plan --layers`: the totals and the estimates (with their
/// measured error, and the time at `clock_mhz` if given), then one row per step.
pub fn layers_text(layers: &[Layer], clock_mhz: Option<u32>) -> String {
    let mut s = String::new();
    let macs: u64 = layers.iter().map(|l| l.macs).sum();
    let moved: u64 = layers.iter().map(Layer::bytes_moved).sum();
    let m4: u64 = layers.iter().map(|l| l.est_insns_m4).sum();
    let m55: u64 = layers.iter().map(|l| l.est_insns_m55).sum();
    let _ = writeln!(
        s,
        "\n## Layers\n\nwork             {macs} MACs, {moved} bytes moved (activations and state \
         read and written, constants read)"
    );
    let (e4, e55) = (rates::M4_ERROR, rates::M55_ERROR);
    let worst = if e4.2 == e55.2 {
        e4.2.to_string()
    } else {
        format!("{}, {}", e4.2, e55.2)
    };
    let _ = writeln!(
        s,
        "instructions     ~{m4} (Cortex-M4), ~{m55} (Cortex-M55) per invoke(), estimated from\n\
         \x20                instructions per MAC, element and call fitted to Kiln on QEMU ({} \
         models:\n\
         \x20                median error {:.0} % (M4), {:.0} % (M55); worst {:.0} %, {:.0} %: \
         {worst})",
        rates::MODELS,
        e4.0,
        e55.0,
        e4.1,
        e55.1,
    );
    if let Some(mhz) = clock_mhz.filter(|&m| m > 0) {
        let ms = |insns: u64| insns as f64 / (f64::from(mhz) * 1000.0);
        let _ = writeln!(
            s,
            "time             ~{:.2} ms (M4), ~{:.2} ms (M55) at {mhz} MHz, one instruction per \
             cycle\n\
             \x20                (flash wait states and multi-cycle instructions add to it)",
            ms(m4),
            ms(m55)
        );
    }
    let _ = writeln!(
        s,
        "\n{:>4}  {:>4}  {:<24} {:>12} {:>11} {:>11} {:>11}  kernel",
        "step", "op", "operator", "MACs", "bytes moved", "~M4 insns", "~M55 insns"
    );
    for l in layers {
        let _ = writeln!(
            s,
            "{:>4}  {:>4}  {:<24} {:>12} {:>11} {:>11} {:>11}  {}",
            l.step,
            l.op,
            l.name,
            l.macs,
            l.bytes_moved(),
            l.est_insns_m4,
            l.est_insns_m55,
            l.kernel
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-layer MACs add up to the model's, as the tiling counts them.
    #[test]
    fn layer_macs_add_up_to_the_models() {
        // The public models beside the repository (`KILN_SHARED`, as the integration tests).
        let shared = std::env::var_os("KILN_SHARED").map_or_else(
            || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
            std::path::PathBuf::from,
        );
        let dir = shared.join("models");
        for name in [
            "tflm_person_detect_int8.tflite",
            "mlperf_tiny_ic_resnet8_int8.tflite",
            "tflm_micro_speech_int8.tflite",
        ] {
            let g = crate::read_model(&std::fs::read(dir.join(name)).unwrap()).unwrap();
            let sum: u64 = g.ops.iter().map(|op| op_macs(&g, op)).sum();
            assert_eq!(sum, crate::tiling::macs(&g), "{name}");
            assert!(sum > 0, "{name}");
        }
    }
}
