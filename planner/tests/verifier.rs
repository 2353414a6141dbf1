//! The verifier rejects deliberately broken plans, each for the right reason.

mod common;
use common::*;
use kiln_planner::ir::{OpId, TensorId};
use kiln_planner::lifetimes::BufferOwner;
use kiln_planner::plan::PersistentBuffer;
use kiln_planner::{ErrorKind, Graph, Plan, PlanOptions, read_model, verify};

fn seed() -> (Graph, Plan) {
    let g = seed_example(&["A", "B", "C", "D", "E", "F"]);
    let p = plan(&g, &PlanOptions::default()).unwrap();
    (g, p)
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

fn expect_error_with(g: &Graph, p: &Plan, scratch: &dyn kiln_planner::Kernels, needle: &str) {
    let e = verify::verify(g, p, scratch).expect_err("the broken plan must be rejected");
    assert!(
        e.to_string().contains(needle),
        "{e} does not mention {needle:?}"
    );
}

fn buffer_of(p: &Plan, t: usize) -> usize {
    p.buffers
        .iter()
        .position(|b| b.owner == BufferOwner::Tensor(TensorId(t)))
        .unwrap()
}

#[test]
fn the_real_plan_passes() {
    let (g, p) = seed();
    check(&g, &p).unwrap();
}

#[test]
fn overlapping_live_buffers() {
    let (g, mut p) = seed();
    // A (tensor 1) and B (tensor 2) are live together at step 1: put them on one offset.
    let a = buffer_of(&p, 1);
    let b = buffer_of(&p, 2);
    p.buffers[b].offset = p.buffers[a].offset;
    p.arena_bytes = p.buffers.iter().map(|b| b.offset + b.size).max().unwrap();
    expect_error(&g, &p, "overlap");
}

#[test]
fn misaligned_offset() {
    let (g, mut p) = seed();
    let i = p
        .buffers
        .iter()
        .position(|b| b.offset + b.size < p.arena_bytes)
        .unwrap();
    p.buffers[i].offset += 8;
    expect_error(&g, &p, "misaligned");
}

#[test]
fn buffer_outside_the_arena() {
    let (g, mut p) = seed();
    p.arena_bytes -= 16;
    expect_error(&g, &p, "outside the arena");
}

#[test]
fn arena_larger_than_its_last_buffer() {
    let (g, mut p) = seed();
    p.arena_bytes += 16;
    expect_error(&g, &p, "not the end of its last buffer");
}

#[test]
fn lifetime_too_short() {
    let (g, mut p) = seed();
    // A is read by D at step 3; end its life at step 1.
    let a = buffer_of(&p, 1);
    p.buffers[a].last = 1;
    expect_error(&g, &p, "not live at every step that uses it");
}

#[test]
fn graph_output_must_live_to_the_end_and_input_from_the_start() {
    let (g, mut p) = seed();
    let i = buffer_of(&p, 0);
    p.buffers[i].first = 1;
    expect_error(&g, &p, "not live at every step");
}

#[test]
fn wrong_size() {
    let (g, mut p) = seed();
    p.buffers[0].size -= 1;
    expect_error(&g, &p, "wrong size");
}

#[test]
fn missing_and_duplicate_buffers() {
    let (g, p) = seed();
    let mut missing = p.clone();
    missing.buffers.remove(buffer_of(&p, 3));
    expect_error(&g, &missing, "has no buffer");
    let mut dup = p.clone();
    dup.buffers.push(dup.buffers[0].clone());
    expect_error(&g, &dup, "two buffers");
}

#[test]
fn stray_scratch_buffer() {
    let (g, mut p) = seed();
    let mut b = p.buffers[0].clone();
    b.owner = BufferOwner::Scratch(OpId(0));
    b.first = 0;
    b.last = 0;
    p.buffers.push(b);
    expect_error(&g, &p, "needs no arena memory");
}

#[test]
fn order_not_topological_or_incomplete() {
    let (g, p) = seed();
    let mut swapped = p.clone();
    swapped.order.swap(0, 1);
    expect_error(&g, &swapped, "reads tensor");
    let mut short = p.clone();
    short.order.pop();
    expect_error(&g, &short, "every operator once");
    let mut twice = p.clone();
    twice.order[5] = OpId(0);
    expect_error(&g, &twice, "runs twice");
}

#[test]
fn wrong_lower_bound() {
    let (g, mut p) = seed();
    p.lower_bound_bytes -= 1;
    expect_error(&g, &p, "lower bound");
}

#[test]
fn persistent_region_is_checked() {
    // The mnist LSTM model has variable tensors (the LSTM state).
    let path = shared_models_dir().join("tflm_mnist_lstm_int8.tflite");
    let g = read_model(&std::fs::read(path).unwrap()).unwrap();
    let p = plan(&g, &PlanOptions::default()).unwrap();
    assert!(p.persistent.len() >= 2, "{:?}", p.persistent);
    check(&g, &p).unwrap();
    let mut overlap = p.clone();
    overlap.persistent[1].offset = overlap.persistent[0].offset;
    expect_error(&g, &overlap, "overlap");
    let mut missing = p.clone();
    missing.persistent.pop();
    expect_error(&g, &missing, "variable tensors");
    let mut stray = p.clone();
    stray.persistent.push(PersistentBuffer {
        tensor: TensorId(0),
        size: 4,
        offset: 4096,
    });
    expect_error(&g, &stray, "variable tensors");
}

#[test]
fn scratch_buffers_are_planned_and_checked() {
    // A contract that gives every operator 1000 bytes of scratch.
    let g = seed_example(&["A", "B", "C", "D", "E", "F"]);
    let declared = kernels(&g);
    let scratch =
        kiln_planner::kernels::WithScratch(|_: &Graph, _: &kiln_planner::ir::Op| 1000, &declared);
    let lt =
        kiln_planner::lifetimes::lifetimes(&g, &kiln_planner::schedule::stored_order(&g), &scratch);
    assert_eq!(lt.buffers.len(), 7 + 6);
    assert_eq!(lt.lower_bound(), 136 * 1024 + 1000);
    let p = kiln_planner::plan(&g, &scratch, &PlanOptions::default()).unwrap();
    assert_eq!(p.lower_bound_bytes, 136 * 1024 + 1000);
    assert!(p.arena_bytes >= p.lower_bound_bytes);
    // A scratch buffer that outlives its operator is rejected.
    let mut long = p.clone();
    let s = long
        .buffers
        .iter()
        .position(|b| matches!(b.owner, BufferOwner::Scratch(_)))
        .unwrap();
    long.buffers[s].last = long.buffers[s].first + 1;
    expect_error_with(&g, &long, &scratch, "outlives");
    // The default plan has no scratch: under this contract it misses six buffers.
    let p = plan(&g, &PlanOptions::default()).unwrap();
    let e = verify::verify(&g, &p, &scratch).unwrap_err();
    assert!(
        e.to_string().contains("scratch of op 0 has no buffer"),
        "{e}"
    );
}

/// vww planned with the declared kernels: its widening pointwise convolution runs in place
/// over its input at the end of its output, their group a buffer of pieces.
fn split_plan() -> (Graph, Plan, usize) {
    let path = shared_models_dir().join("mlperf_tiny_vww_mobilenetv1_025_96_int8.tflite");
    let g = read_model(&std::fs::read(path).unwrap()).unwrap();
    let p = plan(&g, &PlanOptions::default()).unwrap();
    let s = p
        .buffers
        .iter()
        .position(|b| b.pieces.len() > 1)
        .expect("a group of pieces");
    (g, p, s)
}

/// The buffer other than `s` and the piece of `s` that it meets in time, with both at
/// different bytes in the real plan.
fn live_with_a_piece(p: &Plan, s: usize) -> (usize, usize) {
    for (j, b) in p.buffers.iter().enumerate() {
        for (k, q) in p.buffers[s].pieces.iter().enumerate() {
            let meets = b
                .pieces
                .iter()
                .any(|r| r.first <= q.last && q.first <= r.last);
            if j != s && meets && b.size <= q.size {
                return (j, k);
            }
        }
    }
    panic!("no buffer is live with a piece of the group");
}

#[test]
fn split_groups_verify_and_other_buffers_use_their_idle_bytes() {
    let (g, p, s) = split_plan();
    check(&g, &p).unwrap();
    assert!(p.lower_bound_bytes < p.unaliased_bound_bytes);
    // Some buffer lives in the group's bytes at a step of the group, where the piece over
    // those bytes is not live yet (a buffer per group would not allow it).
    let group = &p.buffers[s];
    let shares = p.buffers.iter().enumerate().any(|(j, b)| {
        j != s
            && b.first <= group.last
            && group.first <= b.last
            && b.offset < group.offset + group.size
            && group.offset < b.offset + b.size
    });
    assert!(shares, "{:?}", p.buffers);
}

#[test]
fn a_buffer_over_a_live_piece_of_a_group_is_rejected() {
    let (g, mut p, s) = split_plan();
    let (j, k) = live_with_a_piece(&p, s);
    p.buffers[j].offset = p.buffers[s].offset + p.buffers[s].pieces[k].offset;
    p.arena_bytes = p.buffers.iter().map(|b| b.offset + b.size).max().unwrap();
    expect_error(&g, &p, "are live at the same step and overlap");
}

#[test]
fn pieces_must_cover_their_members_and_stay_inside() {
    let (g, p, s) = split_plan();
    let (first, last) = (p.buffers[s].first, p.buffers[s].last);
    // A piece that starts later than the hull: shortened by a step, a member misses it.
    // (One that another piece outlasts, so that dropping it leaves the hull's span.)
    let pieces = &p.buffers[s].pieces;
    let k = (0..pieces.len())
        .find(|&i| {
            let q = pieces[i];
            q.first > first
                && q.first < q.last
                && (0..pieces.len()).any(|j| j != i && pieces[j].last == last)
        })
        .expect("a piece live from later on");
    let mut late = p.clone();
    late.buffers[s].pieces[k].first += 1;
    expect_error(&g, &late, "not in live pieces of its buffer");
    // A piece dropped.
    let mut dropped = p.clone();
    dropped.buffers[s].pieces.remove(k);
    expect_error(&g, &dropped, "not in live pieces of its buffer");
    // A piece past the buffer's bytes or steps.
    let mut outside = p.clone();
    outside.buffers[s].pieces[0].size += p.buffers[s].size;
    expect_error(&g, &outside, "pieces outside its bytes or steps");
    let mut later = p.clone();
    later.buffers[s].pieces[0].last = last + 1;
    expect_error(&g, &later, "pieces outside its bytes or steps");
    // Two pieces of one buffer over the same bytes at one step.
    let mut doubled = p.clone();
    let copy = doubled.buffers[s].pieces[0];
    doubled.buffers[s].pieces.push(copy);
    expect_error(&g, &doubled, "overlap");
}

/// A plan over two regions: a random graph with a first region too small for all of it.
fn seed_regions() -> (Graph, Plan) {
    use kiln_planner::synthetic::{Flavor, dag};
    let g = dag(40, Flavor::Plain, 3);
    let one = plan(&g, &PlanOptions::default()).unwrap();
    let o = PlanOptions {
        regions: vec![
            kiln_planner::regions::Region::new(".dtcm", one.arena_bytes / 2),
            kiln_planner::regions::Region::new(".sram", one.arena_bytes),
        ],
        ..PlanOptions::default()
    };
    let p = plan(&g, &o).unwrap();
    assert!(p.buffers.iter().any(|b| b.region == 0));
    assert!(p.buffers.iter().any(|b| b.region == 1));
    (g, p)
}

#[test]
fn the_real_region_plan_passes() {
    let (g, p) = seed_regions();
    check(&g, &p).unwrap();
}

#[test]
fn region_overlapping_live_buffers() {
    let (g, mut p) = seed_regions();
    // Two buffers of one region live at a common step, moved onto one offset.
    let n = p.buffers.len();
    let pair = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .find(|&(i, j)| {
            let (a, b) = (&p.buffers[i], &p.buffers[j]);
            i != j
                && a.region == b.region
                && a.first <= b.last
                && b.first <= a.last
                && a.size >= b.size
                && [a, b].iter().all(|x| {
                    let r = &p.regions[x.region];
                    x.offset + x.size < r.base + r.bytes
                })
        })
        .expect("two live buffers in one region");
    p.buffers[pair.1].offset = p.buffers[pair.0].offset;
    expect_error(&g, &p, "overlap");
}

#[test]
fn region_buffer_past_its_region() {
    let (g, mut p) = seed_regions();
    // The region reports fewer bytes than its last buffer needs.
    p.regions[0].bytes -= 16;
    expect_error(&g, &p, "outside its region");
    // The region uses more than the user gave it.
    let (g, mut p) = seed_regions();
    p.regions[0].size = p.regions[0].bytes - 1;
    expect_error(&g, &p, "more bytes than it has");
    // A buffer moved from region 0 into region 1's bytes without saying so.
    let (g, mut p) = seed_regions();
    let i = p.buffers.iter().position(|b| b.region == 0).unwrap();
    p.buffers[i].region = 1;
    expect_error(&g, &p, "starts before its region");
}

#[test]
fn region_misaligned_or_overlapping_regions() {
    let (g, mut p) = seed_regions();
    p.regions[1].base -= 16;
    expect_error(&g, &p, "inside the region before it");
    let (g, mut p) = seed_regions();
    p.regions[1].align = 24;
    expect_error(&g, &p, "alignment 24");
    let (g, mut p) = seed_regions();
    p.buffers[0].region = 7;
    expect_error(&g, &p, "does not exist");
}
