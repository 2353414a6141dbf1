//! Synthetic graphs, for tests and benchmarks only (they are not models: most operators are
//! `Other`, tensors are bytes, nothing has weights). Generated from a seed by a fixed
//! pseudo-random sequence, so the same spec always gives the same graph.
//!
//! - [`graph`] builds random DAGs from a [`Spec`] ([`Spec::nn_like`], [`Spec::random`]), some
//!   of whose operators are RESHAPE, RELU or CONCATENATION so that aliasing has work;
//!   [`cells`] builds multi-branch cells as in NAS networks;
//! - [`chain`], [`fan_out`], [`branches`] and [`dag`] build graphs of any size (in time linear
//!   in it) for planning at scale, of plain `Other` operators or of in-place-capable ones
//!   (RELU, ADD over int8 NHWC tensors: [`Flavor`]); [`shared_adds`], one input read by many
//!   ADDs (issue 27's shape, in the variants [`Addend`] and [`Sums`]);
//! - [`declared`] (`synthetic/declared.rs`) restates from the graph what the operator modules
//!   declare to the planner, for graphs the build side cannot lower.

use crate::ir::{DType, Graph, Op, OpId, OpKind, Quantization, Tensor, TensorId, TensorKind};

mod declared;
pub use declared::declared;

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

/// What the structured graphs ([`chain`], [`fan_out`], [`branches`], [`dag`]) are made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// `Other` operators over 1-D byte tensors of 512 B to 64 KiB: nothing aliases.
    Plain,
    /// int8 NHWC tensors of a realistic size (2 to 18 KiB) and operators that can run in
    /// place: RELU, ADD (to merge), with some RESHAPE views and concatenations in [`dag`].
    InPlace,
}

/// Shapes of the [`Flavor::InPlace`] graphs: NHWC int8 activations as in small CNNs.
const NHWC: [[usize; 4]; 6] = [
    [1, 48, 48, 8],
    [1, 32, 32, 16],
    [1, 24, 24, 16],
    [1, 16, 16, 32],
    [1, 12, 12, 32],
    [1, 6, 6, 64],
];

/// Builds the structured graphs: tensors, operators, one graph input per source.
struct Builder {
    g: Graph,
    rng: Rng,
    flavor: Flavor,
    /// The shape of the [`Flavor::InPlace`] tensors.
    shape: Vec<usize>,
}

impl Builder {
    fn new(flavor: Flavor, seed: u64, salt: u64) -> Builder {
        let mut rng = Rng(seed ^ salt);
        let shape = NHWC[rng.below(NHWC.len())].to_vec();
        Builder {
            g: Graph::default(),
            rng,
            flavor,
            shape,
        }
    }

    /// A new activation tensor: of the flavor's shape, or of `512 B..64 KiB` (plain).
    fn tensor(&mut self) -> TensorId {
        let shape = match self.flavor {
            Flavor::InPlace => self.shape.clone(),
            Flavor::Plain => {
                let u = (self.rng.next() >> 11) as f64 / (1u64 << 53) as f64;
                let bytes = ((512f64).ln() + u * ((65536f64).ln() - (512f64).ln())).exp();
                vec![(bytes as usize).div_ceil(16) * 16]
            }
        };
        self.tensor_of(shape)
    }

    fn tensor_of(&mut self, shape: Vec<usize>) -> TensorId {
        let id = TensorId(self.g.tensors.len());
        self.g.tensors.push(Tensor {
            id,
            name: format!("t{}", id.0),
            shape,
            dtype: DType::I8,
            quant: Quantization::None,
            kind: TensorKind::Activation,
        });
        id
    }

    fn input(&mut self) -> TensorId {
        let t = self.tensor();
        self.g.inputs.push(t);
        t
    }

    fn op_to(&mut self, kind: OpKind, inputs: &[TensorId], out: TensorId) -> TensorId {
        let id = OpId(self.g.ops.len());
        self.g.ops.push(Op {
            id,
            kind,
            inputs: inputs.iter().copied().map(Some).collect(),
            outputs: vec![out],
            intermediates: vec![],
        });
        out
    }

    /// A unary operator: RELU (in place) or an `Other` one (plain).
    fn unary(&mut self, x: TensorId) -> TensorId {
        let kind = match self.flavor {
            Flavor::InPlace => OpKind::Relu,
            Flavor::Plain => OpKind::Other {
                name: format!("op{}", self.g.ops.len()),
            },
        };
        let out = self.tensor();
        self.op_to(kind, &[x], out)
    }

    /// A binary operator merging two tensors: ADD (in place) or an `Other` one (plain).
    fn merge(&mut self, a: TensorId, b: TensorId) -> TensorId {
        let kind = match self.flavor {
            Flavor::InPlace => add(),
            Flavor::Plain => OpKind::Other {
                name: format!("op{}", self.g.ops.len()),
            },
        };
        let out = self.tensor();
        self.op_to(kind, &[a, b], out)
    }

    fn finish(mut self, outputs: Vec<TensorId>) -> Graph {
        self.g.outputs = outputs;
        debug_assert!(crate::validate::validate(&self.g).is_ok());
        self.g
    }
}

fn add() -> OpKind {
    OpKind::Add(crate::ir::AddSubOptions {
        activation: crate::ir::Activation::None,
        pot_scale_int16: false,
    })
}

/// A chain of `ops` operators, each reading the previous one's output (RELUs over one NHWC
/// shape for [`Flavor::InPlace`]: the whole chain fits in one buffer).
pub fn chain(ops: usize, flavor: Flavor, seed: u64) -> Graph {
    let mut b = Builder::new(flavor, seed, 0xC4A1_0000);
    let mut x = b.input();
    for _ in 0..ops {
        x = b.unary(x);
    }
    b.finish(vec![x])
}

/// One tensor read by many operators, then merged: the graph input is read by
/// `(ops + 1) / 2` operators whose outputs a chain of two-input operators adds up (ADD for
/// [`Flavor::InPlace`]); for [`Flavor::Plain`], `ops - 1` readers and one operator reading
/// all of them (every reader's output is live at that step).
pub fn fan_out(ops: usize, flavor: Flavor, seed: u64) -> Graph {
    let mut b = Builder::new(flavor, seed, 0xFA40_0000);
    let x = b.input();
    if ops == 0 {
        return b.finish(vec![x]);
    }
    match flavor {
        Flavor::InPlace => {
            let readers = ops.div_ceil(2);
            let outs: Vec<TensorId> = (0..readers).map(|_| b.unary(x)).collect();
            let mut acc = outs[0];
            for &r in &outs[1..] {
                acc = b.merge(acc, r);
            }
            if ops.is_multiple_of(2) {
                acc = b.unary(acc);
            }
            b.finish(vec![acc])
        }
        Flavor::Plain => {
            if ops == 1 {
                let y = b.unary(x);
                return b.finish(vec![y]);
            }
            let outs: Vec<TensorId> = (0..ops - 1).map(|_| b.unary(x)).collect();
            let y = b.tensor();
            let kind = OpKind::Other {
                name: "merge".into(),
            };
            b.op_to(kind, &outs, y);
            b.finish(vec![y])
        }
    }
}

/// What each ADD of [`shared_adds`] reads besides the shared tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addend {
    /// The shared tensor again: `ADD(x, x)` (nothing to overwrite: both inputs are `x`).
    Itself,
    /// One constant of `x`'s shape: `ADD(x, c)` (in place over `x` at its last reader).
    Constant,
    /// The previous ADD's output (the first one reads the constant): `ADD(x, y[i-1])`, a
    /// chain that reads `x` at every step (in place over `y[i-1]`).
    Previous,
}

/// Where the sums of [`shared_adds`] go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sums {
    /// Every ADD's output is a graph output.
    Outputs,
    /// One CONCATENATION (along the height) reads every ADD's output; its output is the
    /// graph output (it counts as one of the operators).
    Concatenated,
    /// Half the operators read `x`, a chain of ADDs adds their outputs up (the first ADD
    /// of the chain reads two of them; for an even count, a last ADD adds the constant).
    Added,
}

/// One graph input `x` read by many ADDs (the user's shape of issue 27: a tensor read by
/// 10,000 ADDs), int8 NHWC of one shape as [`Flavor::InPlace`]: each ADD reads `x` and its
/// [`Addend`], and the sums go where [`Sums`] says, `ops` operators in all. With
/// [`Addend::Previous`] and [`Sums::Added`] the chain of ADDs is its own sum (`ops` ADDs,
/// the last one's output kept).
pub fn shared_adds(ops: usize, addend: Addend, sums: Sums, seed: u64) -> Graph {
    let mut b = Builder::new(Flavor::InPlace, seed, 0xADD5_0000);
    let x = b.input();
    if ops == 0 {
        return b.finish(vec![x]);
    }
    let c = {
        let id = TensorId(b.g.tensors.len());
        let shape = b.shape.clone();
        let bytes = shape.iter().product::<usize>();
        b.g.tensors.push(Tensor {
            id,
            name: format!("t{}", id.0),
            shape,
            dtype: DType::I8,
            quant: Quantization::None,
            kind: TensorKind::Constant {
                buffer: 1,
                offset: 0,
                data: vec![1; bytes],
            },
        });
        id
    };
    // With `Addend::Previous` and `Sums::Added`, the chain is its own sum.
    let readers = match (sums, addend) {
        (Sums::Outputs, _) | (Sums::Added, Addend::Previous) => ops,
        (Sums::Concatenated, _) => (ops - 1).max(1),
        (Sums::Added, _) => ops.div_ceil(2),
    };
    let mut ends = Vec::with_capacity(readers);
    let mut previous = c;
    for _ in 0..readers {
        let other = match addend {
            Addend::Itself => x,
            Addend::Constant => c,
            Addend::Previous => previous,
        };
        let out = b.tensor();
        previous = b.op_to(add(), &[x, other], out);
        ends.push(previous);
    }
    let outputs = match sums {
        Sums::Outputs => ends,
        _ if readers == ops => vec![previous],
        Sums::Concatenated => {
            let mut tall = b.shape.clone();
            tall[1] *= ends.len();
            let y = b.tensor_of(tall);
            let kind = OpKind::Concatenation(crate::ir::ConcatenationOptions {
                axis: 1,
                activation: crate::ir::Activation::None,
            });
            vec![b.op_to(kind, &ends, y)]
        }
        Sums::Added => {
            let mut acc = ends[0];
            for &e in &ends[1..] {
                acc = b.merge(acc, e);
            }
            if b.g.ops.len() < ops {
                let out = b.tensor();
                acc = b.op_to(add(), &[acc, c], out);
            }
            vec![acc]
        }
    };
    b.finish(outputs)
}

/// Many independent branches: chains of 1 to 16 operators, each from its own graph input to
/// its own graph output (nothing joins them), `ops` operators in all.
pub fn branches(ops: usize, flavor: Flavor, seed: u64) -> Graph {
    let mut b = Builder::new(flavor, seed, 0xB4A2_0000);
    let mut outputs = Vec::new();
    let mut left = ops;
    while left > 0 {
        let len = (1 + b.rng.below(16)).min(left);
        let mut x = b.input();
        for _ in 0..len {
            x = b.unary(x);
        }
        outputs.push(x);
        left -= len;
    }
    b.finish(outputs)
}

/// A random DAG of `ops` operators, built in a near-linear time: each operator reads the
/// oldest of the 8 most recent tensors nobody read yet (if any, else a random one of them)
/// or, one time in 5, any earlier tensor, and for a two-input operator (one in 4) a second
/// tensor, recent (4 times in 5) or any earlier one. [`Flavor::Plain`]: `Other`
/// operators. [`Flavor::InPlace`]: the same graph of one NHWC shape where unary operators
/// are RELU, binary ones ADD, one operator in 16 a RESHAPE (a view) and one in 16 a
/// concatenation of two tensors along the height (then cut back to the shape by an `Other`
/// operator, which counts as one of the `ops`). Every tensor nobody reads is a graph
/// output.
pub fn dag(ops: usize, flavor: Flavor, seed: u64) -> Graph {
    let mut b = Builder::new(flavor, seed, 0xDA60_0000);
    let mut tensors = vec![b.input()];
    let mut read = vec![false; 1];
    let pick = |b: &mut Builder, tensors: &[TensorId], avoid: Option<TensorId>| {
        for _ in 0..4 {
            let n = tensors.len();
            let k = if b.rng.percent(80) {
                n - 1 - b.rng.below(n.min(8))
            } else {
                b.rng.below(n)
            };
            if Some(tensors[k]) != avoid {
                return Some(k);
            }
        }
        None
    };
    // Tensors nobody read yet, oldest first.
    let mut unread = std::collections::VecDeque::from([0usize]);
    while b.g.ops.len() < ops {
        let n = tensors.len();
        while unread.front().is_some_and(|&k| read[k] || k + 8 < n) {
            unread.pop_front();
        }
        let first = match unread.front() {
            Some(&k) if b.rng.percent(80) => k,
            _ => pick(&mut b, &tensors, None).expect("nothing to avoid"),
        };
        let x = tensors[first];
        read[first] = true;
        let second = if b.rng.percent(25) {
            pick(&mut b, &tensors, Some(x))
        } else {
            None
        };
        let roll = b.rng.below(16);
        let out = match (flavor, second) {
            (Flavor::InPlace, Some(k)) if roll == 0 && ops - b.g.ops.len() >= 2 => {
                read[k] = true;
                let mut tall = b.shape.clone();
                tall[1] *= 2;
                let y = b.tensor_of(tall);
                let kind = OpKind::Concatenation(crate::ir::ConcatenationOptions {
                    axis: 1,
                    activation: crate::ir::Activation::None,
                });
                b.op_to(kind, &[x, tensors[k]], y);
                let out = b.tensor();
                let name = format!("op{}", b.g.ops.len());
                b.op_to(OpKind::Other { name }, &[y], out)
            }
            (_, Some(k)) => {
                read[k] = true;
                b.merge(x, tensors[k])
            }
            (Flavor::InPlace, None) if roll == 1 => {
                let out = b.tensor();
                b.op_to(OpKind::Reshape, &[x], out)
            }
            _ => b.unary(x),
        };
        unread.push_back(tensors.len());
        tensors.push(out);
        read.push(false);
    }
    let outputs = tensors
        .iter()
        .zip(&read)
        .skip(1)
        .filter(|&(_, &r)| !r)
        .map(|(&t, _)| t)
        .collect();
    b.finish(outputs)
}
