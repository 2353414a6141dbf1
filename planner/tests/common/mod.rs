//! Helpers shared by the planner's integration tests: where the models are.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `../shared/models` beside the repository (present in CI), or `$KILN_SHARED/models`.
pub fn shared_models_dir() -> PathBuf {
    let shared = std::env::var_os("KILN_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared"));
    let dir = shared.join("models");
    assert!(
        dir.is_dir(),
        "{} is missing: the public models must sit in ../shared/models",
        dir.display()
    );
    dir
}

fn tflite_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "tflite"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The public models (top level of `../shared/models`).
pub fn shared_models() -> Vec<PathBuf> {
    let v = tflite_files(&shared_models_dir());
    assert!(
        v.len() >= 14,
        "expected the 14 public models, found {}",
        v.len()
    );
    v
}

/// Kiln's own test models (`tests/models`).
pub fn own_models() -> Vec<PathBuf> {
    tflite_files(&repo_root().join("tests/models"))
}

/// Kiln's multi-subgraph test models (`tests/control_flow`): IF, WHILE, CALL_ONCE and
/// resource variables.
#[allow(dead_code)]
pub fn control_flow_models() -> Vec<PathBuf> {
    tflite_files(&repo_root().join("tests/control_flow"))
}

/// A model file's stem, e.g. `tflm_hello_world_int8`.
pub fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// One row of the TFLM reference table in `../shared/models/README.md`.
#[derive(Debug)]
pub struct TflmRow {
    pub ops: usize,
    pub tensors: usize,
    pub weights: usize,
    pub lb_stored: usize,
    pub head: usize,
}

/// The TFLM reference table, keyed by model stem.
pub fn tflm_table() -> std::collections::BTreeMap<String, TflmRow> {
    let readme = std::fs::read_to_string(shared_models_dir().join("README.md")).unwrap();
    readme
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| model"))
        .filter_map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            let n = |i: usize| c.get(i)?.parse::<usize>().ok();
            Some((
                c.get(1)?.to_string(),
                TflmRow {
                    ops: n(2)?,
                    tensors: n(3)?,
                    weights: n(4)?,
                    lb_stored: n(5)?,
                    head: n(7)?,
                },
            ))
        })
        .collect()
}

use kiln_planner::ir::{
    DType, Graph, Op, OpId, OpKind, Quantization, Tensor, TensorId, TensorKind,
};

/// Builds synthetic graphs of byte tensors: `tensor(bytes)`, then `op(inputs, output)`.
#[derive(Default)]
pub struct GraphBuilder {
    graph: Graph,
}

impl GraphBuilder {
    /// Adds an activation tensor of `bytes` bytes.
    pub fn tensor(&mut self, name: &str, bytes: usize) -> TensorId {
        let id = TensorId(self.graph.tensors.len());
        self.graph.tensors.push(Tensor {
            id,
            name: name.to_string(),
            shape: vec![bytes],
            dtype: DType::I8,
            quant: Quantization::None,
            kind: TensorKind::Activation,
        });
        id
    }
    /// Adds a graph input.
    pub fn input(&mut self, name: &str, bytes: usize) -> TensorId {
        let t = self.tensor(name, bytes);
        self.graph.inputs.push(t);
        t
    }
    /// Adds an operator reading `inputs` and writing a new tensor named `name`.
    pub fn op(&mut self, name: &str, inputs: &[TensorId], bytes: usize) -> TensorId {
        let out = self.tensor(name, bytes);
        let id = OpId(self.graph.ops.len());
        self.graph.ops.push(Op {
            id,
            kind: OpKind::Other {
                name: name.to_string(),
            },
            inputs: inputs.iter().map(|&t| Some(t)).collect(),
            outputs: vec![out],
            intermediates: vec![],
        });
        out
    }
    /// Adds an operator of `kind` reading `inputs` and writing a new tensor of `shape`.
    pub fn op_kind(&mut self, kind: OpKind, inputs: &[TensorId], shape: &[usize]) -> TensorId {
        let out = self.tensor(kind.name(), shape.iter().product());
        self.graph.tensors[out.0].shape = shape.to_vec();
        let id = OpId(self.graph.ops.len());
        self.graph.ops.push(Op {
            id,
            kind,
            inputs: inputs.iter().map(|&t| Some(t)).collect(),
            outputs: vec![out],
            intermediates: vec![],
        });
        out
    }
    /// Marks graph outputs and returns the validated graph.
    pub fn finish(mut self, outputs: &[TensorId]) -> Graph {
        self.graph.outputs = outputs.to_vec();
        kiln_planner::validate::validate(&self.graph).expect("a valid synthetic graph");
        self.graph
    }
}

/// The seed example: I 16 KiB -> A 32 -> {B 96 -> C 8, D 64 -> E 8} -> F 16 (KiB), with
/// operators stored in the order given by `order` (names of A..F).
pub fn seed_example(order: &[&str]) -> Graph {
    const K: usize = 1024;
    let mut g = GraphBuilder::default();
    let i = g.input("I", 16 * K);
    let mut made = std::collections::HashMap::new();
    made.insert("I", i);
    let spec: [(&str, &[&str], usize); 6] = [
        ("A", &["I"], 32),
        ("B", &["A"], 96),
        ("C", &["B"], 8),
        ("D", &["A"], 64),
        ("E", &["D"], 8),
        ("F", &["C", "E"], 16),
    ];
    for name in order {
        let (n, ins, kib) = spec.iter().find(|s| s.0 == *name).unwrap();
        let ins: Vec<TensorId> = ins.iter().map(|x| made[x]).collect();
        let t = g.op(n, &ins, kib * K);
        made.insert(n, t);
    }
    let f = made["F"];
    g.finish(&[f])
}

/// What Kiln's kernels declare for the operators of `g` (restated by
/// `kiln_planner::synthetic::declared`, which `kiln-build`'s tests check against the
/// operator modules).
pub fn kernels(g: &kiln_planner::Graph) -> kiln_planner::kernels::Declared {
    kiln_planner::synthetic::declared(g)
}

/// [`kernels`] without the im2col scratch of the fast int8 convolution kernels and the FFT
/// work areas of SignalRfft/SignalIrfft, and the largest scratch left out: the declaration of the reference kernels, which is what TFLM's
/// numbers (its planned head, the README's bounds) are comparable with.
pub fn reference_kernels(g: &kiln_planner::Graph) -> (kiln_planner::kernels::Declared, usize) {
    use kiln_planner::ir::OpKind;
    let mut d = kernels(g);
    let mut largest = 0;
    for (op, k) in g.ops.iter().zip(d.ops.iter_mut()) {
        // The FFT's work area (`fft_length` samples, the zero-padded frame): scratch in TFLM's
        // head as in Kiln's arena, but the table's bounds count tensors only.
        let fft = matches!(&op.kind, OpKind::Custom { name, .. }
            if name == "SignalRfft" || name == "SignalIrfft");
        if let Some((scratch, _)) = k
            && (fft || matches!(op.kind, OpKind::Conv2d(_) | OpKind::DepthwiseConv2d(_)))
        {
            largest = largest.max(*scratch);
            *scratch = 0;
        }
    }
    (d, largest)
}

/// `kiln_planner::plan` for the kernels Kiln declares.
pub fn plan(
    g: &kiln_planner::Graph,
    o: &kiln_planner::PlanOptions,
) -> kiln_planner::diag::Result<kiln_planner::Plan> {
    kiln_planner::plan(g, &kernels(g), o)
}
