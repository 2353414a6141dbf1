//! The data-movement operators' lowering (tools/kcases_move.py's operators) on bad operands:
//! every one is a diagnostic naming what is wrong (never a panic), and the good forms next
//! to them lower. Graphs of one operator are built directly as `ir::Graph`s.

use kiln_build::lower::lower_op;
use kiln_planner::ErrorKind;
use kiln_planner::ir::{
    DType, Graph, Op, OpId, OpKind, Quantization, Tensor, TensorId, TensorKind,
};

/// A one-operator graph under construction.
#[derive(Default)]
struct G {
    g: Graph,
}

impl G {
    fn add(&mut self, shape: &[usize], dtype: DType, kind: TensorKind) -> TensorId {
        let id = TensorId(self.g.tensors.len());
        let quant = if matches!(dtype, DType::I8 | DType::I16) {
            Quantization::PerTensor {
                scale: 0.1,
                zero_point: 0,
            }
        } else {
            Quantization::None
        };
        self.g.tensors.push(Tensor {
            id,
            name: format!("t{}", id.0),
            shape: shape.to_vec(),
            dtype,
            quant,
            kind,
        });
        id
    }

    fn act(&mut self, shape: &[usize], dtype: DType) -> TensorId {
        self.add(shape, dtype, TensorKind::Activation)
    }

    fn i32s(&mut self, shape: &[usize], values: &[i32]) -> TensorId {
        let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let buffer = self.g.tensors.len() + 1;
        self.add(
            shape,
            DType::I32,
            TensorKind::Constant {
                buffer,
                offset: 0,
                data,
            },
        )
    }

    fn bytes(&mut self, shape: &[usize], dtype: DType, data: Vec<u8>) -> TensorId {
        let buffer = self.g.tensors.len() + 1;
        self.add(
            shape,
            dtype,
            TensorKind::Constant {
                buffer,
                offset: 0,
                data,
            },
        )
    }

    /// Lowers `kind` over `inputs` into `output`: `Ok(())` or the diagnostic's text.
    fn lower(mut self, kind: OpKind, inputs: &[TensorId], output: TensorId) -> Result<(), String> {
        self.g.ops.push(Op {
            id: OpId(0),
            kind,
            inputs: inputs.iter().map(|&t| Some(t)).collect(),
            outputs: vec![output],
            intermediates: Vec::new(),
        });
        match lower_op(&self.g, &self.g.ops[0]) {
            Ok(_) => Ok(()),
            Err(d) => {
                assert_eq!(d.kind, ErrorKind::Unsupported, "{d}");
                Err(d.to_string())
            }
        }
    }
}

fn other(name: &str) -> OpKind {
    OpKind::Other {
        name: name.to_string(),
    }
}

/// Asserts a refusal whose text holds `what`.
#[track_caller]
fn refused(r: Result<(), String>, what: &str) {
    match r {
        Ok(()) => panic!("lowered, but should be refused ({what})"),
        Err(e) => assert!(e.contains(what), "{e:?} does not say {what:?}"),
    }
}

#[test]
fn depth_to_space_and_space_to_depth() {
    let d2s = |shape: &[usize], out: &[usize], bs: i32, dt: DType| {
        let mut g = G::default();
        let (x, y) = (g.act(shape, dt), g.act(out, dt));
        g.lower(OpKind::DepthToSpace { block_size: bs }, &[x], y)
    };
    assert_eq!(d2s(&[1, 1, 2, 8], &[1, 2, 4, 2], 2, DType::I8), Ok(()));
    refused(
        d2s(&[1, 1, 2, 6], &[1, 2, 4, 1], 2, DType::I8),
        "multiple of the block",
    );
    refused(d2s(&[1, 2, 8], &[1, 4, 2], 2, DType::F32), "4-D");
    refused(
        d2s(&[1, 1, 1, 4], &[1, 1, 1, 4], 0, DType::F32),
        "block size",
    );
    refused(d2s(&[1, 1, 1, 4], &[1, 2, 2, 1], 2, DType::I16), "INT16");
    refused(d2s(&[1, 1, 1, 4], &[1, 2, 1, 2], 2, DType::F32), "shape");
    let s2d = |shape: &[usize], out: &[usize], bs: i32| {
        let mut g = G::default();
        let (x, y) = (g.act(shape, DType::F32), g.act(out, DType::F32));
        g.lower(OpKind::SpaceToDepth { block_size: bs }, &[x], y)
    };
    assert_eq!(s2d(&[2, 4, 6, 1], &[2, 2, 3, 4], 2), Ok(()));
    refused(
        s2d(&[1, 3, 2, 1], &[1, 1, 1, 4], 2),
        "multiples of the block",
    );
    refused(s2d(&[1, 2, 2, 1], &[1, 2, 2, 1], -1), "block size");
}

#[test]
fn space_to_batch_and_batch_to_space() {
    let s2b = |shape: &[usize], block: &[i32], pads: &[i32], out: &[usize]| {
        let mut g = G::default();
        let x = g.act(shape, DType::I8);
        let b = g.i32s(&[block.len()], block);
        let p = g.i32s(&[pads.len() / 2, 2], pads);
        let y = g.act(out, DType::I8);
        g.lower(other("SPACE_TO_BATCH_ND"), &[x, b, p], y)
    };
    assert_eq!(
        s2b(&[1, 3, 4, 2], &[2, 2], &[1, 0, 0, 0], &[4, 2, 2, 2]),
        Ok(())
    );
    assert_eq!(s2b(&[1, 3, 2], &[2], &[0, 1], &[2, 2, 2]), Ok(()));
    refused(
        s2b(&[1, 3, 4, 2], &[2, 2], &[0, 0, 0, 0], &[4, 2, 2, 2]),
        "multiples",
    );
    refused(
        s2b(&[1, 4, 4, 2], &[2, 0], &[0, 0, 0, 0], &[4, 2, 2, 2]),
        "positive",
    );
    refused(
        s2b(&[1, 4, 4, 2], &[2, 2], &[0, -1, 0, 0], &[4, 2, 2, 2]),
        "negative",
    );
    refused(
        s2b(&[1, 4, 4, 2], &[2], &[0, 0], &[4, 2, 2, 2]),
        "one entry per spatial",
    );
    refused(
        s2b(&[1, 4, 4, 2], &[2, 2], &[0, 0], &[4, 2, 2, 2]),
        "pair per spatial",
    );
    refused(
        s2b(&[1, 4, 4, 2, 1], &[2, 2, 1], &[0; 6], &[4, 2, 2, 2, 1]),
        "4-D",
    );
    refused(s2b(&[1, 4, 4, 2], &[2, 2], &[0; 4], &[4, 2, 2, 1]), "shape");
    // A runtime block shape.
    let mut g = G::default();
    let x = g.act(&[1, 4, 4, 2], DType::F32);
    let b = g.act(&[2], DType::I32);
    let p = g.i32s(&[2, 2], &[0; 4]);
    let y = g.act(&[4, 2, 2, 2], DType::F32);
    refused(
        g.lower(other("SPACE_TO_BATCH_ND"), &[x, b, p], y),
        "constant",
    );
    let b2s = |shape: &[usize], block: &[i32], crops: &[i32], out: &[usize]| {
        let mut g = G::default();
        let x = g.act(shape, DType::F32);
        let b = g.i32s(&[block.len()], block);
        let p = g.i32s(&[crops.len() / 2, 2], crops);
        let y = g.act(out, DType::F32);
        g.lower(other("BATCH_TO_SPACE_ND"), &[x, b, p], y)
    };
    assert_eq!(
        b2s(&[4, 2, 2, 2], &[2, 2], &[1, 0, 0, 0], &[1, 3, 4, 2]),
        Ok(())
    );
    refused(
        b2s(&[3, 2, 2, 2], &[2, 2], &[0; 4], &[1, 4, 4, 2]),
        "multiple of the block",
    );
    refused(
        b2s(&[4, 1, 1, 2], &[2, 2], &[2, 1, 0, 0], &[1, 0, 2, 2]),
        "crops",
    );
}

#[test]
fn mirror_pad() {
    let mp = |shape: &[usize], pads: &[i32], symmetric: bool, out: &[usize]| {
        let mut g = G::default();
        let x = g.act(shape, DType::I8);
        let p = g.i32s(&[pads.len() / 2, 2], pads);
        let y = g.act(out, DType::I8);
        g.lower(OpKind::MirrorPad { symmetric }, &[x, p], y)
    };
    assert_eq!(mp(&[2, 3], &[1, 1, 2, 2], false, &[4, 7]), Ok(()));
    assert_eq!(mp(&[2, 3], &[2, 2, 3, 3], true, &[6, 9]), Ok(()));
    refused(
        mp(&[2, 3], &[2, 0, 0, 0], false, &[4, 3]),
        "paddings in 0..=dim - 1",
    );
    refused(
        mp(&[2, 3], &[3, 0, 0, 0], true, &[5, 3]),
        "paddings in 0..=dim",
    );
    refused(mp(&[2, 3], &[1, 1], false, &[4, 3]), "[rank, 2]");
    refused(mp(&[2, 3], &[1, 1, 0, 0], false, &[4, 4]), "shape");
    let mut g = G::default();
    let x = g.act(&[2], DType::F32);
    let p = g.bytes(&[1, 2], DType::F32, vec![0; 8]);
    let y = g.act(&[2], DType::F32);
    refused(
        g.lower(OpKind::MirrorPad { symmetric: true }, &[x, p], y),
        "INT32 or INT64",
    );
}

#[test]
fn reverse_v2() {
    let rv = |shape: &[usize], axes: &[i32], dt: DType| {
        let mut g = G::default();
        let x = g.act(shape, dt);
        let a = g.i32s(&[axes.len()], axes);
        let y = g.act(shape, dt);
        g.lower(other("REVERSE_V2"), &[x, a], y)
    };
    assert_eq!(rv(&[2, 3, 4], &[2, -2], DType::Bool), Ok(()));
    assert_eq!(rv(&[2, 3, 4], &[0], DType::I64), Ok(()));
    refused(rv(&[2, 3, 4], &[0, 2], DType::I8), "contiguous");
    refused(rv(&[2, 3, 4], &[1, 1], DType::I8), "contiguous");
    refused(rv(&[2, 3, 4], &[3], DType::I8), "contiguous");
    refused(
        rv(&[1, 1, 1, 1, 1, 1, 2], &[6], DType::I8),
        "rank at most 6",
    );
    refused(rv(&[2], &[0], DType::U16), "UINT16");
}

#[test]
fn broadcast_to_and_broadcast_args() {
    let bt = |shape: &[usize], target: &[i32], out: &[usize]| {
        let mut g = G::default();
        let x = g.act(shape, DType::I16);
        let s = g.i32s(&[target.len()], target);
        let y = g.act(out, DType::I16);
        g.lower(other("BROADCAST_TO"), &[x, s], y)
    };
    assert_eq!(bt(&[3, 1], &[2, 3, 4], &[2, 3, 4]), Ok(()));
    refused(bt(&[3, 2], &[2, 3, 4], &[2, 3, 4]), "broadcastable");
    refused(
        bt(&[3, 1], &[2, 3, 5], &[2, 3, 4]),
        "differs from the output",
    );
    refused(bt(&[1], &[1; 6], &[1; 6]), "at most 5 dimensions");
    refused(bt(&[1], &[2, 2], &[2]), "one entry per output dimension");
    let ba = |a: &[i32], b: &[i32], n: usize| {
        let mut g = G::default();
        let x = g.i32s(&[a.len()], a);
        let y = g.i32s(&[b.len()], b);
        let o = g.act(&[n], DType::I32);
        g.lower(other("BROADCAST_ARGS"), &[x, y], o)
    };
    assert_eq!(ba(&[2, 1, 3], &[4, 1], 3), Ok(()));
    refused(ba(&[2, 3], &[4], 2), "do not broadcast");
    refused(ba(&[2, 3], &[3], 5), "longer than both");
    let mut g = G::default();
    let x = g.act(&[2], DType::I16);
    let y = g.act(&[2], DType::I16);
    let o = g.act(&[2], DType::I16);
    refused(g.lower(other("BROADCAST_ARGS"), &[x, y], o), "INT16");
}

#[test]
fn fill_shape_zeros_like() {
    let fill = |dims: Option<&[i32]>, value_shape: &[usize], out: &[usize], dt: DType| {
        let mut g = G::default();
        let d = match dims {
            Some(d) => g.i32s(&[d.len()], d),
            None => g.act(&[out.len()], DType::I32),
        };
        let v = g.act(value_shape, dt);
        let y = g.act(out, dt);
        g.lower(other("FILL"), &[d, v], y)
    };
    assert_eq!(fill(Some(&[2, 3]), &[], &[2, 3], DType::I8), Ok(()));
    refused(fill(None, &[], &[2, 3], DType::F32), "constant");
    refused(fill(Some(&[2, 3]), &[1], &[2, 3], DType::F32), "scalar");
    refused(fill(Some(&[3, 2]), &[], &[2, 3], DType::I32), "differ");
    refused(fill(Some(&[2, 3]), &[], &[2, 3], DType::I16), "INT16");
    let shape = |out: &[usize], dt: DType| {
        let mut g = G::default();
        let x = g.act(&[2, 3, 4], DType::F32);
        let y = g.act(out, dt);
        g.lower(other("SHAPE"), &[x], y)
    };
    assert_eq!(shape(&[3], DType::I32), Ok(()));
    refused(shape(&[3], DType::I64), "INT32");
    refused(shape(&[2], DType::I32), "shape");
    let zl = |dt: DType| {
        let mut g = G::default();
        let x = g.act(&[2, 3], dt);
        let y = g.act(&[2, 3], dt);
        g.lower(other("ZEROS_LIKE"), &[x], y)
    };
    assert_eq!(zl(DType::I64), Ok(()));
    refused(zl(DType::Bool), "BOOL");
    refused(zl(DType::I16), "INT16");
}

#[test]
fn dynamic_update_slice() {
    let dus = |shape: &[usize], upd: &[usize], start: &[usize], it: DType, dt: DType| {
        let mut g = G::default();
        let x = g.act(shape, dt);
        let u = g.act(upd, dt);
        let s = g.act(start, it);
        let y = g.act(shape, dt);
        g.lower(other("DYNAMIC_UPDATE_SLICE"), &[x, u, s], y)
    };
    assert_eq!(dus(&[3, 4], &[2, 2], &[2], DType::I64, DType::I16), Ok(()));
    refused(
        dus(&[3, 4], &[4, 2], &[2], DType::I32, DType::I8),
        "no larger dimension",
    );
    refused(dus(&[3, 4], &[2], &[2], DType::I32, DType::I8), "rank");
    refused(
        dus(&[3, 4], &[2, 2], &[3], DType::I32, DType::I8),
        "one per operand dimension",
    );
    refused(
        dus(&[3, 4], &[2, 2], &[2], DType::F32, DType::I8),
        "INT32 or INT64",
    );
    refused(dus(&[3, 4], &[2, 2], &[2], DType::I32, DType::I64), "INT64");
    let r7 = [1; 7];
    refused(dus(&r7, &r7, &[7], DType::I32, DType::F32), "at most 6");
}

#[test]
fn pad_and_concatenation_types() {
    let pad = |dt: DType, value: Option<DType>| {
        let mut g = G::default();
        let x = g.act(&[2], dt);
        let p = g.i32s(&[1, 2], &[1, 1]);
        let mut inputs = vec![x, p];
        if let Some(vt) = value {
            inputs.push(g.bytes(&[], vt, vec![0; vt.size()]));
        }
        let y = g.act(&[4], dt);
        g.lower(
            other(if value.is_some() { "PADV2" } else { "PAD" }),
            &inputs,
            y,
        )
    };
    assert_eq!(pad(DType::I16, None), Ok(()));
    assert_eq!(pad(DType::I32, Some(DType::I32)), Ok(()));
    refused(pad(DType::I64, None), "INT64");
    refused(
        pad(DType::I16, Some(DType::I32)),
        "value must have the output's type",
    );
    let concat = |dt: DType, zero_points: [i64; 3]| {
        let mut g = G::default();
        let mut t = |shape: &[usize], z: i64| {
            let id = g.act(shape, dt);
            if let Quantization::PerTensor { zero_point, .. } = &mut g.g.tensors[id.0].quant {
                *zero_point = z;
            }
            id
        };
        let (a, b, y) = (
            t(&[1, 2], zero_points[0]),
            t(&[1, 3], zero_points[1]),
            t(&[1, 5], zero_points[2]),
        );
        g.lower(
            OpKind::Concatenation(kiln_planner::ir::ConcatenationOptions {
                axis: 1,
                activation: kiln_planner::ir::Activation::None,
            }),
            &[a, b],
            y,
        )
    };
    assert_eq!(concat(DType::Bool, [0; 3]), Ok(()));
    assert_eq!(concat(DType::I16, [0, 1, 2]), Ok(()));
    refused(concat(DType::I8, [0, 1, 0]), "quantization");
    refused(concat(DType::U8, [0; 3]), "UINT8");
}
