//! Aliasing: tensors that share bytes instead of each having a buffer of their own.
//!
//! The operators' kernels declare what they can do ([`crate::kernels::Abilities`], from
//! `kiln-build`'s operator modules); the analysis knows no operator by name. Five kinds,
//! each taken only where it is safe:
//! - **views**: an operator that declares a view (RESHAPE, SQUEEZE, EXPAND_DIMS) gets its
//!   input's bytes as its output when both are arena tensors of one type and size, and does
//!   nothing at run time;
//! - **in place**: an elementwise kernel writes its output over an input it declares (ADD
//!   and MUL without broadcasting, the activations, requantization between equal types)
//!   when that input has the output's shape and type and dies at that operator; a narrowing
//!   kernel (QUANTIZE float32 -> int8 or int16, int16 or int32 -> int8, int32 -> int16)
//!   writes its output, front to back, over the start of its dying input's bytes;
//! - **channel planes in place**: a convolution declaring it (depthwise, depth multiplier 1)
//!   computes one channel at a time into a scratch plane and stores it over that channel of
//!   its dying input (the output is never larger); it is slower than the ordinary kernel,
//!   so it is taken only where it lowers the bound;
//! - **pixels in place**: a convolution declaring it (1x1, stride 1) computes one pixel at a
//!   time into a scratch pixel and stores it at the start of a buffer whose end holds its
//!   dying input (the output pixel `p` never reaches input pixels after `p`); taken only where
//!   it lowers the bound (the output's other bytes are a piece live from the convolution on);
//! - **concatenation slices**: an operator declaring its inputs as slices of its output at
//!   given offsets (CONCATENATION where every output dimension before the axis is 1) gets
//!   them placed there: their producers write straight into the output and it does nothing.
//!   Taken only where it does not raise the lower bound (each slice is a piece live from its
//!   producer on).
//!
//! Tensors that alias form a *group*: one buffer of the root tensor's size (the root is the
//! largest member; every other member sits at an offset inside it), made of pieces each live
//! while a member covering its bytes is ([`crate::lifetimes::pieces_of`]); the groups keep
//! their pieces as they merge, and the bound the decisions compare is over live pieces. A group is accepted only if no operator writes bytes of a
//! member while that member still holds data someone reads later, except an in-place
//! operator overwriting its own dying input; the verifier checks the same rule on the final
//! plan with its own code. As groups only grow, and each group was checked when it formed,
//! a merge checks only the pairs across the two groups: each member of the smaller group
//! against the members of the larger one holding data when it is written, and against the
//! larger one's writes while it holds data (both indexed by step). Merges move the smaller
//! group's members, so the analysis is near-linear on long chains of in-place operators; its
//! work is counted in steps against [`AliasOptions::work_budget`]. A concatenation (or a
//! split) joins many groups at once: only the pairs whose bytes meet are checked (its
//! inputs lie side by side, each meets only the output), and the joined pieces are computed
//! once, so one of 10,000 inputs costs `O(k log k)`, not `k^2`.
//!
//! Views do not depend on the order, so the order search sees them ([`view_roots`]); the
//! other kinds depend on which operator reads a tensor last and are decided for the chosen
//! order ([`analyse`]).

use crate::ir::{Graph, Op, OpId, TensorId, TensorKind};
use crate::kernels::{ConvInPlaceKind, Kernels};
use std::cell::Cell;
use std::collections::BTreeSet;

mod groups;
use groups::*;

/// Which kinds of aliasing a plan may use. The default takes all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AliasOptions {
    /// RESHAPE, SQUEEZE and EXPAND_DIMS share their input's bytes.
    pub views: bool,
    /// Elementwise and narrowing operators overwrite an input that dies at them.
    pub in_place: bool,
    /// CONCATENATION inputs are placed as slices of the output.
    pub concat: bool,
    /// DEPTHWISE_CONV_2D overwrites its dying input where that lowers the bound.
    pub depthwise: bool,
    /// CONV_2D shares its dying input's buffer where that lowers the bound: a pointwise
    /// (1x1, stride 1) one a pixel at a time, another a row at a time.
    pub pointwise: bool,
    /// Work the analysis may do, in steps: a group member visited by a safety check, and the
    /// trials of the convolution search (which copy the groups, merge and count bytes).
    /// When it runs out, no further group is merged (every later candidate keeps its own
    /// buffer) and the convolution search keeps what it chose so far.
    pub work_budget: usize,
}

impl Default for AliasOptions {
    fn default() -> Self {
        AliasOptions {
            views: true,
            in_place: true,
            concat: true,
            depthwise: true,
            pointwise: true,
            work_budget: DEFAULT_WORK_BUDGET,
        }
    }
}

/// The default [`AliasOptions::work_budget`].
pub const DEFAULT_WORK_BUDGET: usize = 20_000_000;

impl AliasOptions {
    /// No aliasing: every tensor has its own buffer.
    pub fn none() -> Self {
        AliasOptions {
            views: false,
            in_place: false,
            concat: false,
            depthwise: false,
            pointwise: false,
            work_budget: DEFAULT_WORK_BUDGET,
        }
    }

    /// Whether any kind is on.
    pub fn any(&self) -> bool {
        self.views || self.in_place || self.concat || self.depthwise || self.pointwise
    }

    /// Whether convolutions that run in place this way may.
    pub fn conv_kind(&self, kind: ConvInPlaceKind) -> bool {
        match kind {
            ConvInPlaceKind::ChannelPlanes => self.depthwise,
            ConvInPlaceKind::Pixels | ConvInPlaceKind::Rows => self.pointwise,
        }
    }
}

/// What an operator does about aliasing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OpMode {
    /// Reads its inputs, writes its outputs to their own bytes.
    #[default]
    Normal,
    /// A RESHAPE, SQUEEZE or EXPAND_DIMS whose output is its input's bytes: does nothing.
    View,
    /// Writes its output over its input `input` (an index into the operator's inputs),
    /// which dies there.
    InPlace { input: usize },
    /// A CONCATENATION whose inputs are all placed as slices of its output: does nothing.
    ConcatSlices,
    /// A SPLIT (SPLIT_V, UNPACK, SLICE) whose outputs are all slices of its input: does
    /// nothing.
    SplitSlices,
}

impl OpMode {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            OpMode::Normal => "normal",
            OpMode::View => "view",
            OpMode::InPlace { .. } => "in place",
            OpMode::ConcatSlices => "concatenation of slices",
            OpMode::SplitSlices => "split into slices",
        }
    }

    /// Whether the operator does nothing at run time.
    pub fn elided(self) -> bool {
        matches!(
            self,
            OpMode::View | OpMode::ConcatSlices | OpMode::SplitSlices
        )
    }
}

/// A tensor without a buffer of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alias {
    pub tensor: TensorId,
    /// The tensor whose buffer holds it (the root of its group, which has a buffer).
    pub buffer: TensorId,
    /// Byte offset of `tensor` inside that buffer.
    pub offset: usize,
}

/// The aliasing of a graph for one order: every tensor's root and offset, every operator's
/// mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aliases {
    /// Per tensor: the root of its group and its byte offset in the root.
    place: Vec<(usize, usize)>,
    /// Per operator (by id).
    mode: Vec<OpMode>,
    /// Per tensor: the operator producing it.
    producer: Vec<Option<OpId>>,
    /// Work the analysis did, in the steps of [`AliasOptions::work_budget`].
    work: usize,
}

impl Aliases {
    /// No aliasing.
    pub fn none(graph: &Graph) -> Aliases {
        let mut producer = vec![None; graph.tensors.len()];
        for op in &graph.ops {
            for &t in &op.outputs {
                producer[t.0] = Some(op.id);
            }
        }
        Aliases {
            place: (0..graph.tensors.len()).map(|t| (t, 0)).collect(),
            mode: vec![OpMode::Normal; graph.ops.len()],
            producer,
            work: 0,
        }
    }

    /// The root of `t`'s group and `t`'s byte offset in it.
    pub fn root(&self, t: TensorId) -> (TensorId, usize) {
        let (r, o) = self.place[t.0];
        (TensorId(r), o)
    }

    /// What operator `op` does about aliasing.
    pub fn mode(&self, op: OpId) -> OpMode {
        self.mode[op.0]
    }

    /// Every operator's mode, by operator id.
    pub fn modes(&self) -> &[OpMode] {
        &self.mode
    }

    /// Work the analysis did, in the steps of [`AliasOptions::work_budget`].
    pub fn work(&self) -> usize {
        self.work
    }

    /// The tensors that live in another tensor's buffer, in tensor order.
    pub fn list(&self) -> Vec<Alias> {
        self.place
            .iter()
            .enumerate()
            .filter(|&(t, p)| p.0 != t)
            .map(|(t, &(r, offset))| Alias {
                tensor: TensorId(t),
                buffer: TensorId(r),
                offset,
            })
            .collect()
    }

    /// The reference rule, for debug checks of the incremental one on small graphs: whether
    /// no operator clobbers bytes of the group rooted at `root` that a member still needs
    /// (every pair of members, as the verifier; see [`Groups::compatible`]).
    #[cfg(debug_assertions)]
    fn is_safe(&self, graph: &Graph, times: &Times, root: usize) -> bool {
        let members: Vec<usize> = (0..self.place.len())
            .filter(|&t| self.place[t].0 == root)
            .collect();
        for &m in &members {
            let (Some(w), Some(p)) = (times.written[m], self.producer[m]) else {
                continue;
            };
            let mode = self.mode[p.0];
            if mode.elided() {
                continue;
            }
            let (om, sm) = (self.place[m].1, graph.tensors[m].bytes());
            let in_place_input = match mode {
                OpMode::InPlace { input } => graph.op(p).input(input),
                _ => None,
            };
            for &n in &members {
                if n == m {
                    continue;
                }
                let (on, sn) = (self.place[n].1, graph.tensors[n].bytes());
                if !(om < on + sn && on < om + sm) {
                    continue;
                }
                let held = times.written[n].is_none_or(|wn| wn < w) && times.read[n] >= w;
                if !held {
                    continue;
                }
                let overwritten = in_place_input
                    .is_some_and(|a| self.place[a.0].1 == on && graph.tensors[a.0].bytes() == sn);
                if !(overwritten && times.read[n] == w && !times.kept[n]) {
                    return false;
                }
            }
        }
        true
    }
}

/// When each tensor is written and read for one order (`usize::MAX`-free: graph inputs have
/// no write step, graph outputs are read at the last step and `kept`).
struct Times {
    written: Vec<Option<usize>>,
    read: Vec<usize>,
    kept: Vec<bool>,
    /// Per tensor: first and last step at which it is live (the lifetime rule of
    /// [`crate::lifetimes`]), `None` if no step touches it.
    span: Vec<Option<(usize, usize)>>,
}

impl Times {
    fn new(graph: &Graph, order: &[OpId]) -> Times {
        let n = graph.tensors.len();
        let last_step = order.len().saturating_sub(1);
        let mut written = vec![None; n];
        let mut read = vec![0usize; n];
        let mut kept = vec![false; n];
        let mut span: Vec<Option<(usize, usize)>> = vec![None; n];
        let mut touch = |t: TensorId, s: usize| {
            let e = span[t.0].get_or_insert((s, s));
            e.0 = e.0.min(s);
            e.1 = e.1.max(s);
        };
        for &i in &graph.inputs {
            touch(i, 0);
        }
        for (s, &id) in order.iter().enumerate() {
            let op = graph.op(id);
            for t in op.present_inputs() {
                read[t.0] = read[t.0].max(s);
                touch(t, s);
            }
            for &t in &op.outputs {
                written[t.0] = Some(s);
                read[t.0] = read[t.0].max(s);
                touch(t, s);
            }
        }
        for &o in &graph.outputs {
            read[o.0] = last_step;
            kept[o.0] = true;
            touch(o, last_step);
        }
        Times {
            written,
            read,
            kept,
            span,
        }
    }
}

fn is_arena(graph: &Graph, t: TensorId) -> bool {
    let t = graph.tensor(t);
    matches!(t.kind, TensorKind::Activation) && t.bytes() > 0
}

/// The scratch bytes an operator needs because it runs in place: its convolution's declared
/// in-place scratch (a channel plane, a pixel or a ring of rows), or its narrowing kernel's
/// (an LSTM's row); elementwise operators need none.
pub fn in_place_scratch(graph: &Graph, kernels: &dyn Kernels, op: &Op, mode: OpMode) -> usize {
    let a = kernels.abilities(graph, op);
    match (mode, &a.conv_in_place, &a.narrowing_in_place) {
        (OpMode::InPlace { input: 0 }, Some(c), _) => c.scratch_bytes,
        (OpMode::InPlace { input: 0 }, None, Some(n)) => n.scratch_bytes,
        _ => 0,
    }
}

/// A view operator's input and output, where the output can share the input's bytes: the
/// operator declares it (its output's bytes are its input's: a RESHAPE, or a CAST from int32
/// to uint32, so the types may differ), both are arena tensors of one size.
fn view_pair(graph: &Graph, kernels: &dyn Kernels, op: &Op) -> Option<(TensorId, TensorId)> {
    if !kernels.abilities(graph, op).view {
        return None;
    }
    let (a, v) = (op.input(0)?, *op.outputs.first()?);
    let same = graph.tensor(a).bytes() == graph.tensor(v).bytes();
    (is_arena(graph, a) && is_arena(graph, v) && same && a != v).then_some((a, v))
}

/// Per tensor: the root of its view group (itself when it is no view), for the order
/// search. Empty groups when `options.views` is off.
pub fn view_roots(graph: &Graph, kernels: &dyn Kernels, options: &AliasOptions) -> Vec<usize> {
    let mut root: Vec<usize> = (0..graph.tensors.len()).collect();
    if options.views {
        for op in &graph.ops {
            if let Some((a, v)) = view_pair(graph, kernels, op) {
                root[v.0] = root[a.0];
            }
        }
    }
    root
}

/// What aliasing can save at each operator's step (by id), for the alias-aware order search
/// ([`crate::schedule::schedule_aliased`]), over view roots `roots` ([`view_roots`]):
/// - an elementwise or narrowing operator in place over a candidate input saves the output's
///   bytes when it reads that input last;
/// - a convolution in place saves the smaller of its input's and
///   output's bytes (less the in-place form's extra scratch) when it reads its input last;
/// - a concatenation of slices saves its output's bytes in any order.
///
/// These are what the kinds can save, not what [`analyse`] takes: it may find a merge unsafe,
/// or decline a slower convolution that does not lower the bound. Empty when none applies.
pub fn step_gains(
    graph: &Graph,
    kernels: &dyn Kernels,
    options: &AliasOptions,
    roots: &[usize],
) -> Vec<crate::schedule::Gain> {
    let mut gains = vec![crate::schedule::Gain::default(); graph.ops.len()];
    let mut any = false;
    for op in &graph.ops {
        let Some(&c) = op.outputs.first() else {
            continue;
        };
        if op.outputs.len() != 1 || !is_arena(graph, c) {
            continue;
        }
        let g = &mut gains[op.id.0];
        let root_of = |slot: usize| op.input(slot).map(|t| roots[t.0]);
        let alone = |slot: usize| {
            let r = root_of(slot);
            (0..op.inputs.len()).all(|j| j == slot || root_of(j) != r)
        };
        if options.in_place {
            for k in in_place_candidates(graph, kernels, op) {
                if let Some(a) = op.input(k).filter(|&a| is_arena(graph, a))
                    && alone(k)
                {
                    let scratch = match (k, &kernels.abilities(graph, op).narrowing_in_place) {
                        (0, Some(n)) => n.scratch_bytes,
                        _ => 0,
                    };
                    let saved = graph.tensor(c).bytes().saturating_sub(scratch);
                    if saved > 0 {
                        g.if_dies.push((roots[a.0], saved));
                    }
                }
            }
        }
        if let Some(conv) = &kernels.abilities(graph, op).conv_in_place {
            let on = options.conv_kind(conv.kind);
            if let Some(a) = op
                .input(0)
                .filter(|&a| on && is_arena(graph, a) && alone(0))
            {
                let shared = graph.tensor(a).bytes().min(graph.tensor(c).bytes());
                let saved =
                    (shared + kernels.scratch_bytes(graph, op)).saturating_sub(conv.scratch_bytes);
                if saved > 0 {
                    g.if_dies.push((roots[a.0], saved));
                }
            }
        }
        if options.concat && concat_slices(graph, kernels, op).is_some() {
            let mut seen = BTreeSet::new();
            let distinct = op
                .present_inputs()
                .all(|x| is_arena(graph, x) && roots[x.0] != roots[c.0] && seen.insert(roots[x.0]));
            if distinct && seen.len() == op.inputs.len() {
                g.always = graph.tensor(c).bytes();
            }
        }
        any |= g.always > 0 || !g.if_dies.is_empty();
    }
    if !any {
        gains.clear();
    }
    gains
}

/// The inputs an elementwise kernel can overwrite with its output (indices into the
/// operator's inputs): those it declares that have the output's shape and type; and input 0
/// of a narrowing kernel ([`narrows`]).
fn in_place_candidates(graph: &Graph, kernels: &dyn Kernels, op: &Op) -> Vec<usize> {
    let Some(&out) = op.outputs.first() else {
        return Vec::new();
    };
    let o = graph.tensor(out);
    let fits = |slot: usize| {
        op.input(slot).is_some_and(|t| {
            let t = graph.tensor(t);
            t.dtype == o.dtype && t.shape == o.shape
        })
    };
    let declared = &kernels.abilities(graph, op).in_place;
    // A binary kernel overwrites either input only if both have the output's shape; and
    // no kernel does when another of its inputs is an activation of another shape (an
    // extra input a hostile model gives a unary operator, which its kernel ignores: the
    // verifier allows only inputs of the output's shape, or constants, beside it).
    let others_fit = op
        .inputs
        .iter()
        .enumerate()
        .all(|(slot, t)| t.is_none_or(|t| graph.tensor(t).is_constant() || fits(slot)));
    let mut candidates = if others_fit && declared.iter().all(|&k| fits(k)) {
        declared.clone()
    } else {
        Vec::new()
    };
    if narrows(graph, kernels, op) && !candidates.contains(&0) {
        candidates.push(0);
    }
    candidates
}

/// Whether `op` declares a narrowing in-place form and its input 0 and output fit it: one
/// element count, output elements no wider than the input's. Its output then goes at the
/// start of the input's bytes (as an elementwise operator's: [`Groups::overwrite`]), which
/// the kernel, reading element `i` before writing output element `i`, allows.
fn narrows(graph: &Graph, kernels: &dyn Kernels, op: &Op) -> bool {
    let (Some(a), Some(&c)) = (op.input(0), op.outputs.first()) else {
        return false;
    };
    let (a, c) = (graph.tensor(a), graph.tensor(c));
    kernels
        .abilities(graph, op)
        .narrowing_in_place
        .is_some_and(|n| op.outputs.len() == 1 && n.unit_bytes(a.bytes(), c.bytes()).is_some())
}

/// The byte offset of each input of an operator in its output, if it declares that its
/// inputs are slices of its output and they tile it exactly.
fn concat_slices(graph: &Graph, kernels: &dyn Kernels, op: &Op) -> Option<Vec<usize>> {
    let offsets = kernels.abilities(graph, op).concat_slices.as_ref()?;
    let y = graph.tensor(*op.outputs.first()?);
    let mut at = 0usize;
    for (i, &off) in op.inputs.iter().zip(offsets) {
        let t = graph.tensor((*i)?);
        if t.dtype != y.dtype || off != at {
            return None;
        }
        at += t.bytes();
    }
    (offsets.len() == op.inputs.len() && at == y.bytes()).then(|| offsets.clone())
}

/// The input an operator's outputs can be slices of and their byte offsets in it, if it
/// declares that and they follow one another within it without overlapping.
fn split_slices(graph: &Graph, kernels: &dyn Kernels, op: &Op) -> Option<(TensorId, Vec<usize>)> {
    let (slot, offsets) = kernels.abilities(graph, op).split_slices.as_ref()?;
    let x = op.input(*slot)?;
    let xt = graph.tensor(x);
    let mut at = 0usize;
    for (&o, &off) in op.outputs.iter().zip(offsets) {
        let t = graph.tensor(o);
        if t.dtype != xt.dtype || off < at {
            return None;
        }
        at = off.checked_add(t.bytes())?;
    }
    (offsets.len() == op.outputs.len() && at <= xt.bytes()).then(|| (x, offsets.clone()))
}

/// The bytes live at the worst step with these aliases (the lower bound of the order).
fn bound(graph: &Graph, order: &[OpId], kernels: &dyn Kernels, al: &Aliases) -> usize {
    crate::lifetimes::lifetimes_aliased(graph, order, kernels, al).lower_bound()
}

/// The aliasing of `graph` run in `order`: views, then in-place operators in step order,
/// then concatenation slices where they do not raise the lower bound.
pub fn analyse(
    graph: &Graph,
    order: &[OpId],
    options: &AliasOptions,
    kernels: &dyn Kernels,
) -> Aliases {
    if !options.any() {
        return Aliases::none(graph);
    }
    let times = Times::new(graph, order);
    let work_left = Cell::new(options.work_budget);
    let mut gs = Groups::new(graph, &times, &work_left);
    let touched = |t: TensorId| times.span[t.0].is_some();
    if options.views {
        for op in &graph.ops {
            if let Some((a, v)) = view_pair(graph, kernels, op)
                && touched(v)
            {
                let (r, off) = gs.place(a.0);
                gs.merge(v.0, r, off);
                gs.set_mode(op.id, OpMode::View);
            }
        }
    }
    if options.in_place {
        for &id in order {
            let op = graph.op(id);
            let Some(&c) = op.outputs.first() else {
                continue;
            };
            if op.outputs.len() != 1 || !is_arena(graph, c) {
                continue;
            }
            for k in in_place_candidates(graph, kernels, op) {
                let Some(a) = op.input(k).filter(|&a| is_arena(graph, a)) else {
                    continue;
                };
                // No other input may share the overwritten bytes.
                let ra = gs.place(a.0).0;
                let shared = op
                    .inputs
                    .iter()
                    .enumerate()
                    .any(|(j, t)| j != k && t.is_some_and(|t| gs.place(t.0).0 == ra));
                if !shared && gs.try_in_place(id, k, a, c) {
                    break;
                }
            }
        }
    }
    if options.depthwise || options.pointwise {
        gs = convolutions_in_place(graph, order, options, kernels, gs);
    }
    let has_concat = graph
        .ops
        .iter()
        .any(|op| kernels.abilities(graph, op).concat_slices.is_some());
    if options.concat && has_concat {
        let lt = crate::lifetimes::lifetimes_aliased(graph, order, kernels, &gs.aliases(0));
        let mut live = LiveMax::new(&lt.live_bytes());
        let mut current = live.max();
        for &id in order {
            let op = graph.op(id);
            let Some(offsets) = concat_slices(graph, kernels, op) else {
                continue;
            };
            let y = op.outputs[0];
            if !is_arena(graph, y) || gs.place(y.0) != (y.0, 0) {
                continue;
            }
            let ry = y.0;
            let mut roots: Vec<usize> = Vec::new();
            let mut seen: BTreeSet<usize> = BTreeSet::new();
            let ok = op.present_inputs().all(|x| {
                let (r, off) = gs.place(x.0);
                let whole = off == 0 && gs.bytes(r) == gs.bytes(x.0);
                let fresh = seen.insert(r) && r != ry;
                roots.push(r);
                is_arena(graph, x) && whole && fresh && touched(x)
            });
            if !ok || roots.len() != op.inputs.len() {
                continue;
            }
            // The bound with the inputs' and the output's pieces gone and those of the joined
            // buffer come (each input's bytes live from its producer on).
            let parts: Vec<(usize, usize)> = std::iter::once((ry, 0))
                .chain(roots.iter().copied().zip(offsets.iter().copied()))
                .collect();
            let changes = gs.join_changes(&parts);
            for &(steps, v) in &changes {
                live.add(steps, v);
            }
            let next = live.max();
            #[cfg(debug_assertions)]
            if order.len() <= 300 {
                let mut merged = gs.clone();
                for (&r, &at) in roots.iter().zip(&offsets) {
                    merged.merge(r, ry, at);
                }
                merged.set_mode(id, OpMode::ConcatSlices);
                let full = bound(graph, order, kernels, &merged.aliases(0));
                debug_assert_eq!(next, full, "incremental and full bounds agree");
            }
            // Every pair of the groups (the output's and each input's) must be safe together.
            let change = (id, OpMode::ConcatSlices);
            let groups: Vec<(usize, usize)> = std::iter::once((gs.group[ry] as usize, 0))
                .chain(
                    roots
                        .iter()
                        .zip(&offsets)
                        .map(|(&r, &at)| (gs.group[r] as usize, at)),
                )
                .collect();
            let safe = next <= current && all_compatible(&gs, &groups, change);
            if safe {
                gs.merge_all(ry, &parts[1..]);
                gs.set_mode(id, OpMode::ConcatSlices);
                current = next;
            } else {
                for &(steps, v) in &changes {
                    live.add(steps, -v);
                }
            }
        }
    }
    let has_split = graph
        .ops
        .iter()
        .any(|op| kernels.abilities(graph, op).split_slices.is_some());
    if options.concat && has_split {
        gs = splits_as_slices(graph, order, kernels, gs, &work_left);
    }
    gs.aliases(options.work_budget - work_left.get())
}

/// Whether the groups `groups` (`(group, offset)`: distinct groups, each moved by its offset)
/// can share one buffer with `change` made: every pair of them is [`Groups::compatible`].
/// A group's members lie within its root's bytes, so two groups whose bytes do not meet
/// cannot write over each other: only the pairs that meet are checked, found by a sweep over
/// their starts (`O(k log k)` plus the pairs that meet: a concatenation's inputs lie side by
/// side, each meets only the output), in the order `(i, j)`, `i < j`, of all pairs.
/// The sweep costs a step of the budget per group: `false` once the budget is spent (no
/// merge then, as for every other kind).
fn all_compatible(gs: &Groups, groups: &[(usize, usize)], change: (OpId, OpMode)) -> bool {
    if !groups.iter().all(|_| gs.spend()) {
        return false;
    }
    let span = |i: usize| {
        let (g, at) = groups[i];
        (at, at + gs.bytes(gs.root[g] as usize))
    };
    let mut by_start: Vec<usize> = (0..groups.len()).collect();
    by_start.sort_unstable_by_key(|&i| (span(i).0, i));
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (k, &a) in by_start.iter().enumerate() {
        let end_a = span(a).1;
        for &b in &by_start[k + 1..] {
            let (start_b, end_b) = span(b);
            if start_b >= end_a {
                break;
            }
            if start_b < end_b {
                pairs.push((a.min(b), a.max(b)));
            }
        }
    }
    #[cfg(debug_assertions)]
    if gs.graph.tensors.len() <= 300 {
        for &(g, _) in groups {
            let root = gs.root[g] as usize;
            for &t in &gs.groups[g].members {
                let t = t as usize;
                let inside = gs.place(t).1 + gs.bytes(t) <= gs.bytes(root);
                debug_assert!(inside, "t{t} lies within its root t{root}'s bytes");
            }
        }
    }
    pairs.sort_unstable();
    pairs.into_iter().all(|(i, j)| {
        let ((gi, di), (gj, dj)) = (groups[i], groups[j]);
        gs.compatible(gi, di, gj, dj, change)
    })
}

/// SPLIT, SPLIT_V, UNPACK and SLICE with their outputs as slices of their input, one at a
/// time in step order, each kept where it is safe and does not raise the bound (the input's bytes
/// then live until the last output dies, which can cost more than the copies). Each trial
/// computes the bound again and costs [`TRIAL_WORK`] steps of the budget per tensor and
/// operator; when the budget runs out the rest stay copies.
fn splits_as_slices<'a>(
    graph: &Graph,
    order: &[OpId],
    kernels: &dyn Kernels,
    mut gs: Groups<'a>,
    work_left: &Cell<usize>,
) -> Groups<'a> {
    let mut current = bound(graph, order, kernels, &gs.aliases(0));
    let trial = TRIAL_WORK * (graph.tensors.len() + graph.ops.len());
    for &id in order {
        let op = graph.op(id);
        let Some((x, offsets)) = split_slices(graph, kernels, op) else {
            continue;
        };
        if work_left.get() < trial {
            break;
        }
        work_left.set(work_left.get() - trial);
        let alone = |o: TensorId| {
            is_arena(graph, o)
                && gs.place(o.0) == (o.0, 0)
                && gs.bytes(o.0) == graph.tensor(o).bytes()
        };
        if !is_arena(graph, x) || !op.outputs.iter().all(|&o| alone(o)) {
            continue;
        }
        let (rx, ox) = gs.place(x.0);
        if op.outputs.iter().any(|o| o.0 == rx) {
            continue;
        }
        let change = (id, OpMode::SplitSlices);
        let groups: Vec<(usize, usize)> = std::iter::once((gs.group[rx] as usize, 0))
            .chain(
                op.outputs
                    .iter()
                    .zip(&offsets)
                    .map(|(o, &at)| (gs.group[o.0] as usize, ox + at)),
            )
            .collect();
        if !all_compatible(&gs, &groups, change) {
            continue;
        }
        let mut merged = gs.clone();
        let parts: Vec<(usize, usize)> = op
            .outputs
            .iter()
            .zip(&offsets)
            .map(|(o, &at)| (o.0, ox + at))
            .collect();
        merged.merge_all(rx, &parts);
        merged.set_mode(id, OpMode::SplitSlices);
        let next = bound(graph, order, kernels, &merged.aliases(0));
        if next <= current {
            gs = merged;
            current = next;
        }
    }
    gs
}

/// Steps of work a trial of the convolution search costs per tensor and operator (copying
/// the groups, computing the bound) and per convolution it merges.
const TRIAL_WORK: usize = 8;
const MERGE_WORK: usize = 100;

/// Convolutions in place, where that lowers the bound (the depthwise kernel and the fast
/// convolutions' in-place forms are slower; a pointwise one holds a larger buffer from its
/// input's producer on): one at a time while each alone lowers it (each tried on the bytes
/// live at each step, updated in `O(log n)`); then, as peaks are often shared by several
/// layers, all of them together (each where it is safe after those before it), without each
/// one whose removal does not raise the bound (one that is not needed, or that keeps a later
/// one from its place), if that lowers the bound below the first choice.
/// Each trial of the last two phases applies a whole set again and costs [`TRIAL_WORK`]
/// steps of the budget per tensor and operator and [`MERGE_WORK`] per convolution; when the
/// budget runs out the search keeps what it chose.
fn convolutions_in_place<'a>(
    graph: &Graph,
    order: &[OpId],
    options: &AliasOptions,
    kernels: &dyn Kernels,
    base: Groups<'a>,
) -> Groups<'a> {
    let candidates: Vec<OpId> = order
        .iter()
        .copied()
        .filter(|&id| {
            let op = graph.op(id);
            let kind_ok = kernels
                .abilities(graph, op)
                .conv_in_place
                .is_some_and(|c| options.conv_kind(c.kind))
                && op.inputs.first().is_some_and(Option::is_some)
                && op.outputs.len() == 1;
            kind_ok && {
                let (a, c) = (op.inputs[0].expect("checked"), op.outputs[0]);
                is_arena(graph, a) && is_arena(graph, c) && base.place(c.0) == (c.0, 0)
            }
        })
        .collect();
    if candidates.is_empty() {
        return base;
    }
    let afford = |set: usize| {
        let cost = TRIAL_WORK * (graph.tensors.len() + graph.ops.len()) + MERGE_WORK * set;
        let left = base.work_left.get();
        left >= cost && {
            base.work_left.set(left - cost);
            true
        }
    };
    // The aliasing with the convolutions of `set` in place, in step order, each where it can
    // be placed and is safe given those before it (the others run normally).
    let apply = |set: &[OpId]| -> Option<(Groups<'a>, usize)> {
        let mut gs = base.clone();
        for &id in set {
            let op = graph.op(id);
            let (a, c) = (op.inputs[0].expect("checked"), op.outputs[0]);
            gs.try_in_place(id, 0, a, c);
        }
        let b = bound(graph, order, kernels, &gs.aliases(0));
        Some((gs, b))
    };
    let mut step_of = vec![0usize; graph.ops.len()];
    for (s, &id) in order.iter().enumerate() {
        step_of[id.0] = s;
    }
    // One at a time, each on top of those taken.
    let lt = crate::lifetimes::lifetimes_aliased(graph, order, kernels, &base.aliases(0));
    let mut live = LiveMax::new(&lt.live_bytes());
    let mut current = live.max();
    let mut chosen: Vec<OpId> = Vec::new();
    let mut gs = base.clone();
    for &id in &candidates {
        let op = graph.op(id);
        let (a, c) = (op.inputs[0].expect("checked"), op.outputs[0]);
        let mode = OpMode::InPlace { input: 0 };
        let Some(merge) = gs.overwrite(a, c) else {
            continue;
        };
        if !gs.can_merge(merge, (id, mode)) {
            continue;
        }
        let mut changes = gs.merge_changes(merge.0, merge.1, merge.2);
        let s = step_of[id.0];
        changes.push(((s, s), in_place_scratch(graph, kernels, op, mode) as i64));
        for &(steps, v) in &changes {
            live.add(steps, v);
        }
        let b = live.max();
        #[cfg(debug_assertions)]
        if order.len() <= 300 {
            let mut set = chosen.clone();
            set.push(id);
            let full = apply(&set).map(|(_, b)| b);
            debug_assert_eq!(Some(b), full, "incremental and full bounds agree");
        }
        if b < current {
            gs.merge(merge.0, merge.1, merge.2);
            gs.set_mode(id, mode);
            chosen.push(id);
            current = b;
        } else {
            for &(steps, v) in &changes {
                live.add(steps, -v);
            }
        }
    }
    // All together (each where it is safe after those before it, in step order), then
    // without each one that is not needed or that keeps a later one from running in place
    // (an earlier one can take bytes the later one's placement needs); kept where that
    // lowers the bound below the one-at-a-time choice.
    let all: Vec<OpId> = candidates.clone();
    if chosen.len() < all.len()
        && afford(all.len())
        && let Some((_, b)) = apply(&all)
    {
        let (mut set, mut set_bound) = (all, b);
        let mut i = 0;
        while i < set.len() && afford(set.len() - 1) {
            let mut fewer = set.clone();
            fewer.remove(i);
            match apply(&fewer) {
                Some((_, b)) if b <= set_bound => {
                    set = fewer;
                    set_bound = b;
                }
                _ => i += 1,
            }
        }
        if set_bound < current {
            return match apply(&set) {
                Some((gs, _)) => gs,
                None => base,
            };
        }
    }
    gs
}
