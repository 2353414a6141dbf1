//! Synthetic graphs, for tests and benchmarks only (they are not models: operators are
//! `Other` and tensors are bytes). Generated from a seed by a fixed pseudo-random sequence, so
//! the same spec always gives the same graph.

use crate::ir::{DType, Graph, Op, OpId, OpKind, Quantization, Tensor, TensorId, TensorKind};

/// The shape of a random graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// Number of operators.
    pub ops: usize,
    /// Graph inputs.
    pub inputs: usize,
    /// Most inputs an operator reads (at least 1).
    pub max_fan_in: usize,
    /// Most operators reading one tensor (at least 1).
    pub max_fan_out: usize,
    /// Operators read among the last `window` tensors produced (0: any earlier tensor).
    pub window: usize,
    /// Percent of operators reading more than one input.
    pub multi_input_percent: u32,
    /// Percent of operators writing two outputs.
    pub multi_output_percent: u32,
    /// Percent of operators also reading a variable (state) tensor, which is not in the arena.
    pub variable_percent: u32,
    /// Tensor sizes are drawn log-uniformly in `[min_bytes, max_bytes]`, rounded up to a
    /// multiple of `granule`.
    pub min_bytes: usize,
    pub max_bytes: usize,
    pub granule: usize,
    /// Percent of operators that are RESHAPE (same bytes as its input), RELU (the same) or
    /// CONCATENATION along axis 0 (the sum of its inputs), so that aliasing has work.
    pub alias_percent: u32,
    pub seed: u64,
}

impl Spec {
    /// A multi-branch network in the style of the planning notes: operators read recent
    /// tensors (window 6), 20 % of them two to four inputs, sizes 512 B to 64 KiB in 16-byte
    /// steps.
    pub fn nn_like(ops: usize, seed: u64) -> Spec {
        Spec {
            ops,
            inputs: 1,
            max_fan_in: 4,
            max_fan_out: 4,
            window: 6,
            multi_input_percent: 20,
            multi_output_percent: 0,
            variable_percent: 0,
            min_bytes: 512,
            max_bytes: 64 * 1024,
            granule: 16,
            alias_percent: 0,
            seed,
        }
    }

    /// An unstructured DAG: any earlier tensor may be read, fan-in and fan-out up to 4, some
    /// operators with two outputs or a variable input, sizes 1 B to 4 KiB.
    pub fn random(ops: usize, seed: u64) -> Spec {
        Spec {
            ops,
            inputs: 2,
            max_fan_in: 4,
            max_fan_out: 4,
            window: 0,
            multi_input_percent: 40,
            multi_output_percent: 10,
            variable_percent: 5,
            min_bytes: 1,
            max_bytes: 4096,
            granule: 1,
            alias_percent: 0,
            seed,
        }
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn percent(&mut self, p: u32) -> bool {
        self.below(100) < p as usize
    }
}

fn tensor(g: &mut Graph, bytes: usize, kind: TensorKind) -> TensorId {
    let id = TensorId(g.tensors.len());
    g.tensors.push(Tensor {
        id,
        name: format!("t{}", id.0),
        shape: vec![bytes],
        dtype: DType::I8,
        quant: Quantization::None,
        kind,
    });
    id
}

/// A network of multi-branch cells, as NAS and Inception-style models: each cell fans its
/// input out to 1 to 4 branches of 1 to 4 operators (a branch sometimes also reads the
/// previous cell's input, a skip connection), and one operator merges the branch ends. Sizes
/// are 512 B to 64 KiB in 16-byte steps, one graph input and one graph output.
pub fn cells(ops: usize, seed: u64) -> Graph {
    let mut rng = Rng(seed ^ 0xCE11_0000);
    let mut g = Graph::default();
    let size = |rng: &mut Rng| {
        let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let bytes = ((512f64).ln() + u * ((65536f64).ln() - (512f64).ln())).exp() as usize;
        bytes.div_ceil(16) * 16
    };
    let op = |g: &mut Graph, rng: &mut Rng, inputs: Vec<TensorId>| {
        let bytes = size(rng);
        let t = tensor(g, bytes, TensorKind::Activation);
        let id = OpId(g.ops.len());
        g.ops.push(Op {
            id,
            kind: OpKind::Other {
                name: format!("op{}", id.0),
            },
            inputs: inputs.into_iter().map(Some).collect(),
            outputs: vec![t],
            intermediates: vec![],
        });
        t
    };
    let bytes = size(&mut rng);
    let mut x = tensor(&mut g, bytes, TensorKind::Activation);
    g.inputs.push(x);
    let mut previous: Option<TensorId> = None;
    while g.ops.len() < ops {
        let left = ops - g.ops.len();
        let branches = 1 + rng.below(4);
        let lengths: Vec<usize> = (0..branches).map(|_| 1 + rng.below(4)).collect();
        let need = lengths.iter().sum::<usize>() + usize::from(branches > 1);
        if need > left {
            // The last few operators: a chain.
            for _ in 0..left {
                x = op(&mut g, &mut rng, vec![x]);
            }
            break;
        }
        let mut ends = Vec::new();
        let mut skips = 0;
        for &len in &lengths {
            let mut t = x;
            for k in 0..len {
                let mut inputs = vec![t];
                if k == 0
                    && let Some(p) = previous
                    && skips < 2
                    && rng.percent(30)
                {
                    inputs.push(p);
                    skips += 1;
                }
                t = op(&mut g, &mut rng, inputs);
            }
            ends.push(t);
        }
        previous = Some(x);
        x = if branches > 1 {
            op(&mut g, &mut rng, ends)
        } else {
            ends[0]
        };
    }
    g.outputs = vec![x];
    debug_assert!(crate::validate::validate(&g).is_ok());
    g
}

/// A random graph. Every tensor nobody reads is a graph output; the graph validates.
pub fn graph(spec: &Spec) -> Graph {
    let mut rng = Rng(spec.seed ^ 0x5EED_0000);
    let mut g = Graph::default();
    let size = |rng: &mut Rng| {
        let (lo, hi) = (spec.min_bytes.max(1) as f64, spec.max_bytes.max(1) as f64);
        let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let bytes = (lo.ln() + u * (hi.ln() - lo.ln())).exp().round() as usize;
        bytes.max(1).div_ceil(spec.granule.max(1)) * spec.granule.max(1)
    };
    // Readable tensors with how many operators read them.
    let mut readable: Vec<(TensorId, usize)> = Vec::new();
    for _ in 0..spec.inputs {
        let bytes = size(&mut rng);
        let t = tensor(&mut g, bytes, TensorKind::Activation);
        g.inputs.push(t);
        readable.push((t, 0));
    }
    let state = (spec.variable_percent > 0).then(|| tensor(&mut g, 64, TensorKind::Variable));
    for i in 0..spec.ops {
        let fan_in = if rng.percent(spec.multi_input_percent) && spec.max_fan_in > 1 {
            2 + rng.below(spec.max_fan_in - 1)
        } else {
            1
        };
        let lo = if spec.window == 0 {
            0
        } else {
            readable.len().saturating_sub(spec.window)
        };
        let mut inputs: Vec<Option<TensorId>> = Vec::new();
        for k in 0..fan_in {
            let open: Vec<usize> = (lo..readable.len())
                .filter(|&k| readable[k].1 < spec.max_fan_out.max(1))
                .filter(|&k| !inputs.contains(&Some(readable[k].0)))
                .collect();
            if open.is_empty() {
                break;
            }
            // The first input of a windowed graph is the oldest tensor nobody read yet (as in
            // networks, where almost every tensor is read); others favour recent tensors: the
            // most recent of two draws.
            let unread = open.iter().copied().find(|&k| readable[k].1 == 0);
            let k = match unread {
                Some(u) if k == 0 && spec.window > 0 => u,
                _ => open[rng.below(open.len())].max(open[rng.below(open.len())]),
            };
            readable[k].1 += 1;
            inputs.push(Some(readable[k].0));
        }
        if inputs.is_empty() {
            // Everything recent is read enough: start a new branch from a new graph input.
            let bytes = size(&mut rng);
            let t = tensor(&mut g, bytes, TensorKind::Activation);
            g.inputs.push(t);
            readable.push((t, 1));
            inputs.push(Some(t));
        }
        if spec.alias_percent > 0 && rng.percent(spec.alias_percent) {
            let bytes_of = |t: &Option<TensorId>| t.map_or(0, |t| g.tensors[t.0].bytes());
            let (kind, bytes) = if inputs.len() > 1 {
                let kind = OpKind::Concatenation(crate::ir::ConcatenationOptions {
                    axis: 0,
                    activation: crate::ir::Activation::None,
                });
                (kind, inputs.iter().map(bytes_of).sum())
            } else if rng.percent(50) {
                (OpKind::Reshape, bytes_of(&inputs[0]))
            } else {
                (OpKind::Relu, bytes_of(&inputs[0]))
            };
            let t = tensor(&mut g, bytes, TensorKind::Activation);
            readable.push((t, 0));
            g.ops.push(Op {
                id: OpId(i),
                kind,
                inputs,
                outputs: vec![t],
                intermediates: vec![],
            });
            continue;
        }
        if let Some(s) = state
            && rng.percent(spec.variable_percent)
        {
            inputs.push(Some(s));
        }
        let outputs = if rng.percent(spec.multi_output_percent) {
            2
        } else {
            1
        };
        let outputs: Vec<TensorId> = (0..outputs)
            .map(|_| {
                let bytes = size(&mut rng);
                let t = tensor(&mut g, bytes, TensorKind::Activation);
                readable.push((t, 0));
                t
            })
            .collect();
        g.ops.push(Op {
            id: OpId(i),
            kind: OpKind::Other {
                name: format!("op{i}"),
            },
            inputs,
            outputs,
            intermediates: vec![],
        });
    }
    let produced: std::collections::BTreeSet<TensorId> = g
        .ops
        .iter()
        .flat_map(|op| op.outputs.iter().copied())
        .collect();
    g.outputs = readable
        .iter()
        .filter(|&&(t, reads)| reads == 0 && produced.contains(&t))
        .map(|&(t, _)| t)
        .collect();
    debug_assert!(crate::validate::validate(&g).is_ok());
    g
}
