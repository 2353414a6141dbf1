//! Aliasing: views, in-place operators (elementwise, narrowing, convolutions) and
//! concatenation slices are taken where safe, lower the bound, can be switched off, and the
//! verifier rejects every unsafe variant.

mod common;
use common::*;
use kiln_planner::alias::{AliasOptions, OpMode};
use kiln_planner::ir::{
    Activation, AddSubOptions, ConcatenationOptions, DType, OpId, OpKind, TensorId,
};
use kiln_planner::lifetimes::BufferOwner;
use kiln_planner::plan::Plan;
use kiln_planner::{ErrorKind, Graph, PlanOptions, verify};

fn add() -> OpKind {
    OpKind::Add(AddSubOptions {
        activation: Activation::None,
        pot_scale_int16: false,
    })
}

fn concat(axis: i32) -> OpKind {
    OpKind::Concatenation(ConcatenationOptions {
        axis,
        activation: Activation::None,
    })
}

/// in 16 -> A 64 -> R = RESHAPE(A) -> X = RELU(R) -> {P 16, Q 16} -> Y = CONCAT(P, Q) 32
/// -> Y' = RESHAPE(Y) -> Z = RELU(Y'), output Z.
fn chain() -> Graph {
    let mut g = GraphBuilder::default();
    let i = g.input("in", 16);
    let a = g.op("A", &[i], 64);
    let r = g.op_kind(OpKind::Reshape, &[a], &[8, 8]);
    let x = g.op_kind(OpKind::Relu, &[r], &[8, 8]);
    let p = g.op_kind(OpKind::Other { name: "P".into() }, &[x], &[1, 16]);
    let q = g.op_kind(OpKind::Other { name: "Q".into() }, &[x], &[1, 16]);
    let y = g.op_kind(concat(1), &[p, q], &[1, 32]);
    let y = g.op_kind(OpKind::Reshape, &[y], &[32]);
    let z = g.op_kind(OpKind::Relu, &[y], &[32]);
    g.finish(&[z])
}

fn check(g: &Graph, p: &Plan) -> Result<(), String> {
    verify::verify(g, p, &kernels(g)).map_err(|d| {
        assert_eq!(d.kind, ErrorKind::InvalidPlan);
        d.to_string()
    })
}

fn expect_error(g: &Graph, p: &Plan, needle: &str) {
    let e = check(g, p).expect_err("the broken plan must be rejected");
    assert!(e.contains(needle), "{e:?} does not mention {needle:?}");
}

#[test]
fn every_kind_is_taken_and_lowers_the_bound() {
    let g = chain();
    let p = plan(&g, &PlanOptions::default()).unwrap();
    let modes: Vec<OpMode> = p.modes.clone();
    assert_eq!(
        modes,
        vec![
            OpMode::Normal,
            OpMode::View,
            OpMode::InPlace { input: 0 },
            OpMode::Normal,
            OpMode::Normal,
            OpMode::ConcatSlices,
            OpMode::View,
            OpMode::InPlace { input: 0 },
        ]
    );
    // A, R and X share one buffer; P and Q are Y's halves; the second view and Z are Y too.
    let place = |t: usize| p.tensor_place(&g, TensorId(t)).unwrap();
    assert_eq!(place(2), place(1));
    assert_eq!(place(3), place(1));
    assert_eq!(place(4).0, place(6).0);
    assert_eq!(place(5).0, place(6).0 + 16);
    assert_eq!(place(7), place(6));
    assert_eq!(place(8), place(6));
    // Without aliasing the RESHAPE and RELU steps hold 128 bytes; with it, P and Q are
    // written while X (64) and Y (32) are live: 96.
    assert_eq!(p.unaliased_bound_bytes, 128);
    assert_eq!(p.lower_bound_bytes, 96);
    assert_eq!(p.arena_bytes, 96);
    check(&g, &p).unwrap();

    let off = plan(
        &g,
        &PlanOptions {
            aliasing: AliasOptions::none(),
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert!(off.aliases.is_empty());
    assert!(off.modes.iter().all(|&m| m == OpMode::Normal));
    assert_eq!(off.lower_bound_bytes, 128);
}

#[test]
fn each_kind_switches_off_alone() {
    let g = chain();
    for (options, gone) in [
        (
            AliasOptions {
                views: false,
                ..AliasOptions::default()
            },
            OpMode::View,
        ),
        (
            AliasOptions {
                in_place: false,
                ..AliasOptions::default()
            },
            OpMode::InPlace { input: 0 },
        ),
        (
            AliasOptions {
                concat: false,
                ..AliasOptions::default()
            },
            OpMode::ConcatSlices,
        ),
    ] {
        let p = plan(
            &g,
            &PlanOptions {
                aliasing: options,
                ..PlanOptions::default()
            },
        )
        .unwrap();
        assert!(!p.modes.contains(&gone), "{options:?}: {:?}", p.modes);
        assert!(p.lower_bound_bytes <= p.unaliased_bound_bytes);
    }
}

#[test]
fn add_overwrites_the_input_that_dies() {
    // in -> A -> B; S = ADD(B, A): A dies at the ADD, B too; the first that fits is taken.
    let mut g = GraphBuilder::default();
    let i = g.input("in", 64);
    let a = g.op("A", &[i], 64);
    let b = g.op("B", &[a], 64);
    let s = g.op_kind(add(), &[b, a], &[64]);
    let t = g.op("T", &[s, b], 64);
    let g = g.finish(&[t]);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    // B is read again by T: the ADD overwrites A, its second input.
    assert_eq!(p.mode(OpId(2)), OpMode::InPlace { input: 1 });
    assert_eq!(p.tensor_place(&g, s), p.tensor_place(&g, a));
    assert_eq!(p.unaliased_bound_bytes, 192);
    assert_eq!(
        p.lower_bound_bytes, 192,
        "T still holds S, B and its output"
    );
    check(&g, &p).unwrap();
}

#[test]
fn no_in_place_over_an_input_read_later() {
    // X = RELU(A), then B reads A again: the RELU must not overwrite A.
    let mut g = GraphBuilder::default();
    let i = g.input("in", 64);
    let a = g.op("A", &[i], 64);
    let x = g.op_kind(OpKind::Relu, &[a], &[64]);
    let b = g.op("B", &[x, a], 64);
    let g = g.finish(&[b]);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    assert_eq!(p.mode(OpId(1)), OpMode::Normal);
    // Forcing it in place is caught by the verifier.
    let mut broken = p.clone();
    force_in_place(&g, &mut broken, 1, a, x);
    expect_error(&g, &broken, "holds data read later");
}

#[test]
fn no_in_place_over_a_graph_output_or_a_shared_input() {
    let mut g = GraphBuilder::default();
    let i = g.input("in", 64);
    let a = g.op("A", &[i], 64);
    let x = g.op_kind(OpKind::Relu, &[a], &[64]);
    let s = g.op_kind(add(), &[x, x], &[64]);
    let g = g.finish(&[s, a]);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    // A is a graph output (read to the end); ADD(x, x) reads the same bytes twice.
    assert_eq!(p.mode(OpId(1)), OpMode::Normal);
    assert_eq!(p.mode(OpId(2)), OpMode::Normal);
    let mut broken = p.clone();
    force_in_place(&g, &mut broken, 2, x, s);
    expect_error(
        &g,
        &broken,
        "another of its inputs shares the overwritten bytes",
    );
}

#[test]
fn concat_slices_need_contiguous_inputs() {
    // Along the last axis of [2, 16] tensors, the inputs are interleaved: no slices.
    let mut g = GraphBuilder::default();
    let i = g.input("in", 64);
    let p0 = g.op_kind(OpKind::Other { name: "P".into() }, &[i], &[2, 16]);
    let q0 = g.op_kind(OpKind::Other { name: "Q".into() }, &[i], &[2, 16]);
    let y = g.op_kind(concat(-1), &[p0, q0], &[2, 32]);
    let g = g.finish(&[y]);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    assert_eq!(p.mode(OpId(2)), OpMode::Normal);
    let mut broken = p.clone();
    broken.modes[2] = OpMode::ConcatSlices;
    // The concatenation declares no slices here, so the verifier refuses them.
    expect_error(&g, &broken, "declares no slices");

    // Contiguous, but with a fused activation to apply: no slices either.
    let mut g = GraphBuilder::default();
    let i = g.input("in", 64);
    let p0 = g.op_kind(OpKind::Other { name: "P".into() }, &[i], &[1, 16]);
    let q0 = g.op_kind(OpKind::Other { name: "Q".into() }, &[i], &[1, 16]);
    let relu = OpKind::Concatenation(ConcatenationOptions {
        axis: 1,
        activation: Activation::Relu,
    });
    let y = g.op_kind(relu, &[p0, q0], &[1, 32]);
    let g = g.finish(&[y]);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    assert_eq!(p.mode(OpId(2)), OpMode::Normal);
    let mut broken = p.clone();
    broken.modes[2] = OpMode::ConcatSlices;
    expect_error(&g, &broken, "declares no slices");
}

/// Marks `op` as in place over `input`, moving `output` into `input`'s buffer.
fn force_in_place(g: &Graph, p: &mut Plan, op: usize, input: TensorId, output: TensorId) {
    let slot = g.ops[op]
        .inputs
        .iter()
        .position(|&t| t == Some(input))
        .unwrap();
    p.modes[op] = OpMode::InPlace { input: slot };
    p.buffers.retain(|b| b.owner != BufferOwner::Tensor(output));
    p.aliases.push(kiln_planner::alias::Alias {
        tensor: output,
        buffer: input,
        offset: 0,
    });
    recompute_totals(p);
}

/// Arena size and bounds after a manual change, so only the aliasing rule can fail (a
/// buffer of one piece keeps it the whole buffer).
fn recompute_totals(p: &mut Plan) {
    for b in &mut p.buffers {
        if let [piece] = &mut b.pieces[..] {
            *piece = kiln_planner::lifetimes::Piece {
                offset: 0,
                size: b.size,
                first: b.first,
                last: b.last,
            };
        }
    }
    p.arena_bytes = p
        .buffers
        .iter()
        .map(|b| b.offset + b.size)
        .max()
        .unwrap_or(0);
    let mut live = vec![0usize; p.order.len().max(1)];
    let mut aligned = vec![(0usize, 0usize); p.order.len().max(1)];
    for b in p.buffers.iter().flat_map(|b| &b.pieces) {
        let r = b.size.div_ceil(p.alignment) * p.alignment;
        for s in b.first..=b.last {
            live[s] += b.size;
            aligned[s].0 += r;
            aligned[s].1 = aligned[s].1.max(r - b.size);
        }
    }
    p.lower_bound_bytes = live.iter().copied().max().unwrap_or(0);
    p.aligned_bound_bytes = aligned
        .iter()
        .zip(&live)
        .map(|(&(sum, slack), &l)| (sum - slack).max(l))
        .max()
        .unwrap_or(0);
    p.live_bytes = live;
}

#[test]
fn the_verifier_checks_each_alias_rule() {
    let g = chain();
    let good = plan(&g, &PlanOptions::default()).unwrap();
    check(&g, &good).unwrap();

    // A view whose output has bytes of its own.
    let mut p = good.clone();
    let v = p
        .aliases
        .iter()
        .position(|a| a.tensor == TensorId(2))
        .unwrap();
    let root = p.aliases.remove(v).buffer;
    let mut own = p
        .buffers
        .iter()
        .find(|b| b.owner == BufferOwner::Tensor(root))
        .unwrap()
        .clone();
    own.owner = BufferOwner::Tensor(TensorId(2));
    own.offset = p.arena_bytes.next_multiple_of(p.alignment);
    p.buffers.push(own);
    recompute_totals(&mut p);
    expect_error(&g, &p, "not its input's bytes");

    // A concatenation input off its slice.
    let mut p = good.clone();
    let s = p
        .aliases
        .iter()
        .position(|a| a.tensor == TensorId(5))
        .unwrap();
    p.aliases[s].offset = 0;
    expect_error(&g, &p, "not at its slice of the output");

    // An alias reaching outside its buffer.
    let mut p = good.clone();
    p.aliases[s].offset = 24;
    expect_error(&g, &p, "is not inside the buffer");

    // In place on an operator without an in-place kernel.
    let mut p = good.clone();
    p.modes[3] = OpMode::InPlace { input: 0 };
    expect_error(&g, &p, "declares no in-place form");

    // A view mode on an operator that is no view.
    let mut p = good.clone();
    p.modes[0] = OpMode::View;
    expect_error(&g, &p, "declares no view");

    // Every operator needs a mode.
    let mut p = good.clone();
    p.modes.pop();
    expect_error(&g, &p, "does not give every operator a mode");

    // The bound without aliasing is recomputed.
    let mut p = good.clone();
    p.unaliased_bound_bytes -= 1;
    expect_error(&g, &p, "bound without aliasing");

    // Dropping a view's mode makes the RESHAPE a real write over live bytes... of itself,
    // which is fine, but then RELU's in-place input must still die there: it does. Dropping
    // the concatenation's mode instead makes it write Y over P and Q while they are read.
    let mut p = good.clone();
    p.modes[5] = OpMode::Normal;
    expect_error(&g, &p, "holds data read later");
}

#[test]
fn depthwise_runs_in_place_only_where_it_lowers_the_bound() {
    let path = repo_root().join("tests/models/depthwise_int8.tflite");
    let g = kiln_planner::read_model(&std::fs::read(path).unwrap()).unwrap();
    let p = plan(&g, &PlanOptions::default()).unwrap();
    // Both depthwise convolutions are at the peak: both overwrite their input, each with a
    // scratch plane of its output's height x width, beside the scratch its fast kernel
    // declares (a band of 3 padded input rows: 14 and 13 pixels of 8 channels, to 16 bytes).
    assert_eq!(p.mode(OpId(0)), OpMode::InPlace { input: 0 });
    assert_eq!(p.mode(OpId(1)), OpMode::InPlace { input: 0 });
    let scratch = |op: usize| {
        p.buffers
            .iter()
            .find(|b| b.owner == BufferOwner::Scratch(OpId(op)))
            .map(|b| b.size)
    };
    assert_eq!(scratch(0), Some(3 * 14 * 8 + 12 * 12));
    assert_eq!(
        scratch(1),
        Some((3 * 13 * 8usize).next_multiple_of(16) + 6 * 6)
    );
    assert_eq!(p.unaliased_bound_bytes, 2 * 12 * 12 * 8 + 3 * 14 * 8);
    assert_eq!(p.lower_bound_bytes, 12 * 12 * 8 + 3 * 14 * 8 + 12 * 12);
    check(&g, &p).unwrap();

    // Switched off alone, the other kinds stay.
    let off = plan(
        &g,
        &PlanOptions {
            aliasing: AliasOptions {
                depthwise: false,
                ..AliasOptions::default()
            },
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert_eq!(off.mode(OpId(0)), OpMode::Normal);
    assert_eq!(off.mode(OpId(3)), OpMode::View);

    // The verifier wants the scratch plane...
    let mut broken = p.clone();
    broken
        .buffers
        .retain(|b| b.owner != BufferOwner::Scratch(OpId(0)));
    recompute_totals(&mut broken);
    expect_error(&g, &broken, "scratch of op 0 has no buffer");
    // ...and an output that starts at the input's bytes.
    let mut broken = p.clone();
    let a = broken
        .aliases
        .iter()
        .position(|a| a.tensor == g.ops[1].outputs[0])
        .unwrap();
    broken.aliases[a].offset = 16;
    expect_error(&g, &broken, "does not start at its input's bytes");
}

#[test]
fn convolutions_run_in_place_only_together_where_that_lowers_the_bound() {
    // kws_dscnn: depthwise layers share the peak with pointwise ones. Depthwise alone in
    // place lowers their own steps (their fast kernel's band of 3 padded rows, 1,344 bytes,
    // would put them above the pointwise layers' peak), not the pointwise layers' peak; with
    // pointwise in place too the whole chain of 25x5x64 layers lives in one buffer.
    let path = shared_models_dir().join("mlperf_tiny_kws_dscnn_int8.tflite");
    let g = kiln_planner::read_model(&std::fs::read(path).unwrap()).unwrap();
    let depthwise_only = plan(
        &g,
        &PlanOptions {
            aliasing: AliasOptions {
                pointwise: false,
                ..AliasOptions::default()
            },
            ..PlanOptions::default()
        },
    )
    .unwrap();
    for op in &g.ops {
        if matches!(op.kind, OpKind::DepthwiseConv2d(_)) {
            let mode = depthwise_only.mode(op.id);
            assert_eq!(mode, OpMode::InPlace { input: 0 }, "op {}", op.id.0);
        }
    }
    // Two 8000-byte buffers and a pointwise layer's 256-byte scratch (its fast kernel widens
    // each pixel pair of 64 inputs).
    assert_eq!(depthwise_only.lower_bound_bytes, 16000 + 256);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    let in_place = g
        .ops
        .iter()
        .filter(|op| matches!(p.mode(op.id), OpMode::InPlace { .. }))
        .count();
    assert_eq!(in_place, 8, "4 depthwise and 4 pointwise layers");
    // One 8000-byte buffer and a depthwise layer's scratch: its fast kernel's band (3 rows of
    // 7 padded pixels of 64 channels, 1,344 bytes; declared whichever kernel runs it) and the
    // 125-byte channel plane of the in-place form. (The first, 10x4 layer: the 490-byte input
    // and its fast kernel's 80-byte im2col and 160-byte widened form, 8730 bytes.)
    assert_eq!(p.lower_bound_bytes, 8000 + 1344 + 125);
    assert_eq!(p.arena_bytes, 9469);
    check(&g, &p).unwrap();
    // Only convolutions that declare an in-place form run in place: not the first, 10x4
    // stride 2; and its im2col scratch must have the size its kernel declares.
    let mut broken = p.clone();
    let scratch = broken
        .buffers
        .iter_mut()
        .find(|b| b.owner == BufferOwner::Scratch(OpId(0)))
        .expect("the first layer's im2col scratch");
    scratch.size = 64;
    recompute_totals(&mut broken);
    expect_error(&g, &broken, "has the wrong size (expected 240, found 64)");
    let mut broken = p.clone();
    broken.modes[0] = OpMode::InPlace { input: 0 };
    expect_error(&g, &broken, "declares no in-place form");
}

/// The order search that knows aliasing: an order where the in-place operator reads its
/// input last wins, though every order has the same peak when nothing runs in place.
#[test]
fn the_order_search_counts_in_place_operators() {
    // in -> X 1024 -> {R = RELU(X) 1024, C 64} -> F(R, C), stored with the RELU first.
    let mut g = GraphBuilder::default();
    let i = g.input("in", 16);
    let x = g.op("X", &[i], 1024);
    let r = g.op_kind(OpKind::Relu, &[x], &[1024]);
    let c = g.op("C", &[x], 64);
    let f = g.op("F", &[r, c], 64);
    let g = g.finish(&[f]);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    // C runs first, so the RELU overwrites X, which dies there: the peak is F's step.
    assert_eq!(p.order, [OpId(0), OpId(2), OpId(1), OpId(3)]);
    assert_eq!(p.mode(OpId(1)), OpMode::InPlace { input: 0 });
    assert_eq!(p.lower_bound_bytes, 1024 + 64 + 64);
    assert_eq!(p.arena_bytes, 1152);
    assert_eq!(p.order_search, "alias-aware search");
    check(&g, &p).unwrap();
    // Counting views only, both orders peak at X + R + C: the stored order is kept and the
    // RELU cannot run in place (C reads X after it).
    let mut views_only = PlanOptions::default();
    views_only.order.alias_aware = false;
    let q = plan(&g, &views_only).unwrap();
    assert_eq!(q.order, [OpId(0), OpId(1), OpId(2), OpId(3)]);
    assert_eq!(q.mode(OpId(1)), OpMode::Normal);
    assert_eq!(q.lower_bound_bytes, 1024 + 1024 + 64);
}

/// The order search that knows aliasing counts a concatenation of slices as free: the
/// concatenation's step no longer hides the peak of the branches, which it then lowers.
#[test]
fn the_order_search_counts_concatenation_slices() {
    // in -> {S 16, A 1200 -> P 1000, B 1200 -> Q 1000}; Y = CONCAT(P, Q); Z(Y, S), stored with
    // the branches interleaved (S, A, B, P, Q). S may run anywhere before Z, so the whole
    // graph is one segment of the search.
    let mut g = GraphBuilder::default();
    let i = g.input("in", 16);
    let side = g.op("S", &[i], 16);
    let a = g.op("A", &[i], 1200);
    let b = g.op("B", &[i], 1200);
    let other = |n: &str| OpKind::Other { name: n.into() };
    let pp = g.op_kind(other("P"), &[a], &[1, 1000]);
    let q = g.op_kind(other("Q"), &[b], &[1, 1000]);
    let y = g.op_kind(concat(1), &[pp, q], &[1, 2000]);
    let z = g.op("Z", &[y, side], 16);
    let g = g.finish(&[z]);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    // One branch, then the other: the peak is Q's step, with S, P and B held.
    assert_eq!(p.mode(OpId(5)), OpMode::ConcatSlices);
    assert_eq!(p.lower_bound_bytes, 16 + 1000 + 1200 + 1000);
    assert_eq!(p.order_search, "alias-aware search");
    check(&g, &p).unwrap();
    // Counting views only, every order peaks at the concatenation (S, P, Q and Y): the
    // stored order is kept, and once the slices make the concatenation free its peak is
    // P's step with S, A and B held.
    let mut views_only = PlanOptions::default();
    views_only.order.alias_aware = false;
    let q = plan(&g, &views_only).unwrap();
    assert_eq!(q.order, (0..7).map(OpId).collect::<Vec<_>>());
    assert_eq!(q.mode(OpId(5)), OpMode::ConcatSlices);
    assert_eq!(q.lower_bound_bytes, 16 + 1200 + 1200 + 1000);
    assert!(p.arena_bytes < q.arena_bytes);
}

/// The order search proves a segment's order optimal when its peak meets the bytes live at
/// the segment's last step, whichever operator runs there; the alias-aware search must count
/// what aliasing saves at that step, or it would stop before finding a better order.
#[test]
fn the_alias_aware_search_counts_the_saving_at_the_last_step() {
    // in -> X 1024 -> {R = RELU(X) 1024, C 1024} -> F = ADD(R, C) 1024, stored with the RELU
    // first. Without aliasing every order peaks at 3 KiB (X, R and C at C's step, or R, C
    // and F). R and C form a segment, whichever runs last holds the other's output and
    // frees X: the RELU last saves its output's bytes (2 KiB live), C last saves nothing
    // (3 KiB). Counting no saving there, the bound would be the stored order's 3 KiB and
    // the alias-aware search would keep it.
    let mut g = GraphBuilder::default();
    let i = g.input("in", 16);
    let x = g.op("X", &[i], 1024);
    let r = g.op_kind(OpKind::Relu, &[x], &[1024]);
    let c = g.op("C", &[x], 1024);
    let f = g.op_kind(add(), &[r, c], &[1024]);
    let g = g.finish(&[f]);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    assert_eq!(p.order, [OpId(0), OpId(2), OpId(1), OpId(3)]);
    assert_eq!(p.mode(OpId(1)), OpMode::InPlace { input: 0 });
    assert!(matches!(p.mode(OpId(3)), OpMode::InPlace { .. }));
    assert_eq!(p.lower_bound_bytes, 2048);
    assert_eq!(p.arena_bytes, 2048);
    assert_eq!(p.order_search, "alias-aware search");
    check(&g, &p).unwrap();
    let mut views_only = PlanOptions::default();
    views_only.order.alias_aware = false;
    let q = plan(&g, &views_only).unwrap();
    assert_eq!(q.lower_bound_bytes, 3072);
}

/// Every topological order of a small graph (the synthetic graphs here have no variables).
fn all_orders(g: &Graph) -> Vec<Vec<OpId>> {
    let mut producer = vec![None; g.tensors.len()];
    for op in &g.ops {
        for &t in &op.outputs {
            producer[t.0] = Some(op.id.0);
        }
    }
    let preds: Vec<Vec<usize>> = g
        .ops
        .iter()
        .map(|op| op.present_inputs().filter_map(|t| producer[t.0]).collect())
        .collect();
    fn rec(preds: &[Vec<usize>], cur: &mut Vec<OpId>, out: &mut Vec<Vec<OpId>>) {
        if cur.len() == preds.len() {
            out.push(cur.clone());
            return;
        }
        for o in 0..preds.len() {
            let done = |q: usize| cur.iter().any(|c| c.0 == q);
            if !done(o) && preds[o].iter().all(|&q| done(q)) {
                cur.push(OpId(o));
                rec(preds, cur, out);
                cur.pop();
            }
        }
    }
    let mut out = Vec::new();
    rec(&preds, &mut Vec::new(), &mut out);
    out
}

/// The alias-aware search's bounds (each operator's, and the first and last steps of each
/// segment, with the savings of aliasing) never exceed the best order by its own model, so
/// an order it proves optimal is: checked against every order of small graphs with
/// in-place operators, views and concatenations.
#[test]
fn the_alias_aware_search_bounds_hold_over_every_order() {
    use kiln_planner::alias;
    use kiln_planner::schedule::{self, OrderOptions};
    use kiln_planner::synthetic::{self, Spec};
    let (mut orders_checked, mut proved) = (0, 0);
    for seed in 0..400u64 {
        let mut spec = Spec::random(3 + seed as usize % 8, seed);
        spec.window = (seed % 3) as usize * 2;
        spec.alias_percent = 50;
        spec.variable_percent = 0;
        spec.multi_output_percent = 0;
        let g = synthetic::graph(&spec);
        let k = kernels(&g);
        let options = AliasOptions::default();
        let roots = alias::view_roots(&g, &k, &options);
        let gains = alias::step_gains(&g, &k, &options, &roots);
        if gains.is_empty() {
            continue;
        }
        let orders = all_orders(&g);
        let best = orders
            .iter()
            .map(|o| schedule::peak_with_gains(&g, &k, &roots, &gains, o))
            .min()
            .unwrap();
        let o = OrderOptions::default();
        let first = schedule::stored_order(&g);
        let s = schedule::schedule_aliased(&g, &k, &o, &roots, &gains, &first);
        assert!(
            s.min_peak_bound_bytes <= best,
            "seed {seed}: bound above the best"
        );
        assert!(s.peak_bytes >= best, "seed {seed}");
        if s.optimal {
            assert_eq!(
                s.peak_bytes, best,
                "seed {seed}: proved optimal, but is not"
            );
            proved += 1;
        }
        orders_checked += orders.len();
    }
    eprintln!("{proved} proved, {orders_checked} orders");
    assert!(proved > 20, "{proved} graphs proved optimal");
    assert!(orders_checked > 10_000, "{orders_checked} orders checked");
}

/// One input read by 10,000 ADDs whose sums one CONCATENATION reads (issue 27): the sums
/// are slices of the concatenation's output (9,999 inputs: their pairs are not all checked
/// against each other, as side by side they cannot clobber one another), so the arena is
/// the output and the input, not twice the output.
#[test]
fn ten_thousand_slices_of_one_concatenation() {
    use kiln_planner::synthetic::{self, Addend, Sums};
    let g = synthetic::shared_adds(10_000, Addend::Itself, Sums::Concatenated, 0);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    let concat = OpId(g.ops.len() - 1);
    assert_eq!(p.mode(concat), OpMode::ConcatSlices);
    let y = g.ops[concat.0].outputs[0];
    let x = g.inputs[0];
    // At the last ADD's step: the input, and the output holding every sum.
    let bytes = g.tensor(y).bytes() + g.tensor(x).bytes();
    assert_eq!(p.lower_bound_bytes, bytes);
    assert_eq!(p.arena_bytes, bytes);
    check(&g, &p).unwrap();
}

/// x `from` [16] -> Q = QUANTIZE(x) `to` [16] -> B 16 bytes, output B (B also reads x when
/// `reread`).
fn quantize_chain(from: DType, to: DType, reread: bool) -> Graph {
    let mut g = GraphBuilder::default();
    let x = g.input("x", 16);
    let q = g.op_kind(OpKind::Quantize, &[x], &[16]);
    let b = if reread {
        g.op("B", &[q, x], 16)
    } else {
        g.op("B", &[q], 16)
    };
    let mut g = g.finish(&[b]);
    g.tensors[x.0].dtype = from;
    g.tensors[q.0].dtype = to;
    g
}

/// Every buffer one piece, live over its whole lifetime, laid one after another: only the
/// aliasing rules can fail.
fn spread(p: &mut Plan) {
    let mut at = 0;
    for b in &mut p.buffers {
        b.offset = at;
        b.pieces = vec![kiln_planner::lifetimes::Piece {
            offset: 0,
            size: b.size,
            first: b.first,
            last: b.last,
        }];
        at = (at + b.size).next_multiple_of(p.alignment);
    }
    recompute_totals(p);
}

#[test]
fn quantize_narrows_in_place_over_its_dying_input() {
    let g = quantize_chain(DType::F32, DType::I8, false);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    assert_eq!(p.mode(OpId(0)), OpMode::InPlace { input: 0 });
    let place = |t: usize| p.tensor_place(&g, TensorId(t)).unwrap();
    assert_eq!(
        place(1).0,
        place(0).0,
        "the int8 output over the floats' start"
    );
    assert_eq!(p.lower_bound_bytes, 64, "the floats alone, not 64 + 16");
    check(&g, &p).unwrap();
    // Switched off with the other in-place forms.
    let mut o = PlanOptions::default();
    o.aliasing.in_place = false;
    let p = plan(&g, &o).unwrap();
    assert_eq!(p.mode(OpId(0)), OpMode::Normal);
    assert_eq!(p.lower_bound_bytes, 80);
    // int16 -> int8 and int32 -> int16 too; not int8 -> int16 (widening).
    for (from, to, taken) in [
        (DType::I16, DType::I8, true),
        (DType::I32, DType::I16, true),
        (DType::I8, DType::I16, false),
    ] {
        let g = quantize_chain(from, to, false);
        let p = plan(&g, &PlanOptions::default()).unwrap();
        let mode = if taken {
            OpMode::InPlace { input: 0 }
        } else {
            OpMode::Normal
        };
        assert_eq!(p.mode(OpId(0)), mode, "{from:?} -> {to:?}");
        check(&g, &p).unwrap();
    }
}

#[test]
fn no_narrowing_over_an_input_read_later() {
    let g = quantize_chain(DType::F32, DType::I8, true);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    assert_eq!(p.mode(OpId(0)), OpMode::Normal);
    let mut broken = p.clone();
    force_in_place(&g, &mut broken, 0, TensorId(0), TensorId(1));
    expect_error(&g, &broken, "holds data read later");
}

/// The verifier takes a narrowing output that starts up to the difference of the element
/// sizes after its input (written front to back, output element `i` covers only input bytes
/// already read), and nothing after that, nor a widening one.
#[test]
fn the_verifier_checks_where_a_narrowing_output_starts() {
    let g = quantize_chain(DType::F32, DType::I8, false);
    let mut good = plan(&g, &PlanOptions::default()).unwrap();
    spread(&mut good);
    check(&g, &good).unwrap();
    let q = good
        .aliases
        .iter()
        .position(|a| a.tensor == TensorId(1))
        .unwrap();
    assert_eq!(good.aliases[q].offset, 0);
    for offset in 1..=3 {
        let mut p = good.clone();
        p.aliases[q].offset = offset;
        check(&g, &p).unwrap_or_else(|e| panic!("at +{offset}: {e}"));
    }
    // At +4 output element 0 lies over input element 1, not read yet.
    let mut p = good.clone();
    p.aliases[q].offset = 4;
    expect_error(&g, &p, "its output starts too far into its input");

    // int16 -> int8: one byte of slack.
    let g = quantize_chain(DType::I16, DType::I8, false);
    let mut p = plan(&g, &PlanOptions::default()).unwrap();
    spread(&mut p);
    let q = p
        .aliases
        .iter()
        .position(|a| a.tensor == TensorId(1))
        .unwrap();
    p.aliases[q].offset = 1;
    check(&g, &p).unwrap();
    p.aliases[q].offset = 2;
    expect_error(&g, &p, "its output starts too far into its input");

    // A widening QUANTIZE (int8 -> int16) planned over its input at the output's start is
    // refused, even were it declared narrowing.
    let g = quantize_chain(DType::I8, DType::I16, false);
    let mut p = plan(&g, &PlanOptions::default()).unwrap();
    assert_eq!(p.mode(OpId(0)), OpMode::Normal);
    p.buffers
        .retain(|b| b.owner != BufferOwner::Tensor(TensorId(0)));
    p.aliases.push(kiln_planner::alias::Alias {
        tensor: TensorId(0),
        buffer: TensorId(1),
        offset: 0,
    });
    p.modes[0] = OpMode::InPlace { input: 0 };
    spread(&mut p);
    expect_error(&g, &p, "declares no in-place form");
    let mut declared = kernels(&g);
    let op0 = declared.ops[0].get_or_insert_with(Default::default);
    op0.1.narrowing_in_place = Some(kiln_planner::kernels::Narrowing {
        units: g.tensors[0].elements(),
        scratch_bytes: 0,
    });
    let e = verify::verify(&g, &p, &declared).expect_err("a widening output over its input");
    assert!(e.to_string().contains("the output's are wider"), "{e}");
}

#[test]
fn windowed_convolutions_run_in_place_a_row_at_a_time() {
    // ic_resnet8: its residual blocks' 3x3 SAME convolutions can write each output row over
    // the input through a ring of two rows (one padding row above), which no other kind of
    // aliasing does; in place, they lower the bound.
    let path = shared_models_dir().join("mlperf_tiny_ic_resnet8_int8.tflite");
    let g = kiln_planner::read_model(&std::fs::read(path).unwrap()).unwrap();
    let p = plan(&g, &PlanOptions::default()).unwrap();
    let off = plan(
        &g,
        &PlanOptions {
            aliasing: AliasOptions {
                pointwise: false,
                ..AliasOptions::default()
            },
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert!(
        p.lower_bound_bytes < off.lower_bound_bytes,
        "{} < {}",
        p.lower_bound_bytes,
        off.lower_bound_bytes
    );
    check(&g, &p).unwrap();
    let windowed = |op: &kiln_planner::ir::Op| {
        matches!(op.kind, OpKind::Conv2d(o) if o.stride_h == 1)
            && g.tensor(op.inputs[1].unwrap()).shape[1] == 3
    };
    let in_place: Vec<&kiln_planner::ir::Op> = g
        .ops
        .iter()
        .filter(|op| windowed(op) && p.mode(op.id) == OpMode::InPlace { input: 0 })
        .collect();
    assert!(!in_place.is_empty(), "a 3x3 convolution runs in place");
    for op in &in_place {
        // Its scratch: the fast kernel's (an im2col of two windows of 9 x C inputs and
        // their widened form, 6 bytes per input) and two output rows.
        let (x, c) = (g.tensor(op.inputs[0].unwrap()), g.tensor(op.outputs[0]));
        let scratch = p
            .buffers
            .iter()
            .find(|b| b.owner == BufferOwner::Scratch(op.id))
            .map(|b| b.size);
        let row = c.shape[2] * c.shape[3];
        assert_eq!(scratch, Some(2 * row + 6 * 9 * x.shape[3]));
    }
    // The verifier wants output rows no longer than input rows: the same plan of a graph
    // whose output has half the rows, twice as long, is refused (with the kernels declared
    // for the real graph), and one that puts the output past the input's start.
    let c = in_place[0].outputs[0];
    let mut wide = g.clone();
    let shape = &mut wide.tensors[c.0].shape;
    (shape[1], shape[2]) = (shape[1] / 2, shape[2] * 2);
    let e = verify::verify(&wide, &p, &kernels(&g)).expect_err("wider output rows");
    assert!(
        e.to_string()
            .contains("do not have the shapes its in-place form needs"),
        "{e}"
    );
    let mut broken = p.clone();
    let a = broken.aliases.iter().position(|a| a.tensor == c).unwrap();
    broken.aliases[a].offset = 16;
    expect_error(&g, &broken, "is not inside the buffer");
}
