//! Aliasing: tensors that share bytes instead of each having a buffer of their own.
//!
//! Five kinds, each taken only where it is safe:
//! - **views**: the output of RESHAPE, SQUEEZE and EXPAND_DIMS is its input's bytes; the
//!   operator does nothing at run time;
//! - **in place**: an elementwise operator (ADD and MUL without broadcasting, RELU, RELU6,
//!   LOGISTIC, TANH, LEAKY_RELU, HARD_SWISH, QUANTIZE between equal types) writes its output
//!   over an input that dies at that operator;
//! - **depthwise in place**: a DEPTHWISE_CONV_2D with depth multiplier 1 computes one channel
//!   at a time into a scratch plane and stores it over that channel of its dying input (the
//!   output is never larger); it is slower than the ordinary kernel, so it is taken only
//!   where it lowers the bound;
//! - **pointwise in place**: a 1x1, stride-1 CONV_2D computes one pixel at a time into a
//!   scratch of one output pixel and stores it at the start of a buffer whose end holds its
//!   dying input (the output pixel `p` never reaches input pixels after `p`); taken only where
//!   it lowers the bound, as it moves the input's producer to the end of a larger buffer;
//! - **concatenation slices**: when every dimension of a CONCATENATION's output before the
//!   axis is 1, each input is a contiguous slice of the output; the inputs are placed there,
//!   their producers write straight into the output and the concatenation does nothing.
//!   Taken only where it does not raise the lower bound (the output's bytes are held from
//!   the first input's producer on).
//!
//! Tensors that alias form a *group*: one buffer of the root tensor's size (the root is the
//! largest member; every other member sits at an offset inside it), live from the first
//! step of any member to the last. A group is accepted only if no operator writes bytes of a
//! member while that member still holds data someone reads later, except an in-place
//! operator overwriting its own dying input ([`Aliases::is_safe`]); the verifier checks the
//! same rule on the final plan with its own code.
//!
//! Views do not depend on the order, so the order search sees them ([`view_roots`]); the
//! other kinds depend on which operator reads a tensor last and are decided for the chosen
//! order ([`analyse`]).

use crate::ir::{DType, Graph, Op, OpId, OpKind, TensorId, TensorKind};
use crate::lifetimes::ScratchFn;

/// Which kinds of aliasing a plan may use. The default takes all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AliasOptions {
    /// RESHAPE, SQUEEZE and EXPAND_DIMS share their input's bytes.
    pub views: bool,
    /// Elementwise operators overwrite an input that dies at them.
    pub in_place: bool,
    /// CONCATENATION inputs are placed as slices of the output.
    pub concat: bool,
    /// DEPTHWISE_CONV_2D overwrites its dying input where that lowers the bound.
    pub depthwise: bool,
    /// Pointwise (1x1, stride 1) CONV_2D shares its dying input's buffer where that lowers
    /// the bound.
    pub pointwise: bool,
}

impl Default for AliasOptions {
    fn default() -> Self {
        AliasOptions {
            views: true,
            in_place: true,
            concat: true,
            depthwise: true,
            pointwise: true,
        }
    }
}

impl AliasOptions {
    /// No aliasing: every tensor has its own buffer.
    pub fn none() -> Self {
        AliasOptions {
            views: false,
            in_place: false,
            concat: false,
            depthwise: false,
            pointwise: false,
        }
    }

    /// Whether any kind is on.
    pub fn any(&self) -> bool {
        self.views || self.in_place || self.concat || self.depthwise || self.pointwise
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
}

impl OpMode {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            OpMode::Normal => "normal",
            OpMode::View => "view",
            OpMode::InPlace { .. } => "in place",
            OpMode::ConcatSlices => "concatenation of slices",
        }
    }

    /// Whether the operator does nothing at run time.
    pub fn elided(self) -> bool {
        matches!(self, OpMode::View | OpMode::ConcatSlices)
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

    fn members(&self, root: usize) -> impl Iterator<Item = usize> + '_ {
        self.place
            .iter()
            .enumerate()
            .filter(move |(_, p)| p.0 == root)
            .map(|(t, _)| t)
    }

    /// Moves every member of the group rooted at `from` into the group rooted at `to`, at
    /// `offset` bytes (members keep their offsets relative to each other).
    fn merge(&mut self, from: usize, to: usize, offset: usize) {
        for p in self.place.iter_mut().filter(|p| p.0 == from) {
            *p = (to, p.1 + offset);
        }
    }

    /// Places `c`, the output of an operator running in place, over its input `a`: starting
    /// where `a` starts when `c` is no larger (elementwise, depthwise, a narrowing pointwise
    /// convolution), else ending where `a` ends (a widening pointwise convolution; `c`'s
    /// group becomes the root when `a` ends its own group). Returns the group's root, or
    /// `None`, changing nothing, if `c` already shares bytes or cannot be placed so.
    fn overwrite(&mut self, graph: &Graph, a: TensorId, c: TensorId) -> Option<usize> {
        if self.place[c.0] != (c.0, 0) {
            return None;
        }
        let (ra, oa) = self.place[a.0];
        let (sa, sc) = (graph.tensors[a.0].bytes(), graph.tensors[c.0].bytes());
        if sc <= sa || oa + sa >= sc {
            self.merge(c.0, ra, if sc <= sa { oa } else { oa + sa - sc });
            Some(ra)
        } else if oa + sa == graph.tensors[ra].bytes() {
            self.merge(ra, c.0, sc - sa - oa);
            Some(c.0)
        } else {
            None
        }
    }

    /// Whether no operator clobbers bytes of the group rooted at `root` that a member still
    /// needs: for every member written at step `w` (by its producer, unless that is a view
    /// or a concatenation of slices: those write nothing), every other member overlapping it
    /// that holds data at `w` (written before `w`, read at `w` or later; graph outputs to the
    /// end) must be the in-place input being overwritten: the same bytes, read last at `w`.
    fn is_safe(&self, graph: &Graph, times: &Times, root: usize) -> bool {
        let members: Vec<usize> = self.members(root).collect();
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

/// Whether a DEPTHWISE_CONV_2D can run in place: depth multiplier 1 (as many output as input
/// channels), the same element type, NHWC tensors, and no more output than input elements
/// (Kiln's in-place kernels, `kiln_kernels::depthwise_conv_2d::*_in_place`).
pub fn depthwise_in_place_ok(graph: &Graph, op: &Op) -> bool {
    let OpKind::DepthwiseConv2d(o) = &op.kind else {
        return false;
    };
    let (Some(a), Some(&c)) = (op.input(0), op.outputs.first()) else {
        return false;
    };
    let (a, c) = (graph.tensor(a), graph.tensor(c));
    a.shape.len() == 4
        && c.shape.len() == 4
        && o.depth_multiplier == 1
        && a.shape[0] == c.shape[0]
        && a.shape[3] == c.shape[3]
        && a.dtype == c.dtype
        && matches!(a.dtype, DType::I8 | DType::I16 | DType::F32)
        && c.elements() <= a.elements()
}

/// Whether a CONV_2D can run in place: a 1x1 filter over all input channels (one group),
/// stride 1, the same height and width in and out, int8 or float (Kiln's
/// `kiln_kernels::conv_2d::conv_2d_*_pointwise_in_place`).
pub fn pointwise_in_place_ok(graph: &Graph, op: &Op) -> bool {
    let OpKind::Conv2d(o) = &op.kind else {
        return false;
    };
    let (Some(a), Some(f), Some(&c)) = (op.input(0), op.input(1), op.outputs.first()) else {
        return false;
    };
    let (a, f, c) = (graph.tensor(a), graph.tensor(f), graph.tensor(c));
    a.shape.len() == 4
        && c.shape.len() == 4
        && f.shape.len() == 4
        && o.stride_h == 1
        && o.stride_w == 1
        && f.shape[1] == 1
        && f.shape[2] == 1
        && f.shape[3] == a.shape[3]
        && a.shape[..3] == c.shape[..3]
        && a.dtype == c.dtype
        && matches!(a.dtype, DType::I8 | DType::F32)
}

/// Scratch bytes an operator needs because it runs in place: a depthwise convolution's
/// output plane (`batches * out_h * out_w` elements), a pointwise convolution's output pixel
/// (`out_channels` elements).
pub fn in_place_scratch(graph: &Graph, op: &Op, mode: OpMode) -> usize {
    let OpMode::InPlace { .. } = mode else {
        return 0;
    };
    let Some(c) = op.outputs.first().map(|&c| graph.tensor(c)) else {
        return 0;
    };
    let channels = c.shape.last().copied().unwrap_or(1).max(1);
    match op.kind {
        OpKind::DepthwiseConv2d(_) => c.elements() / channels * c.dtype.size(),
        OpKind::Conv2d(_) => channels * c.dtype.size(),
        _ => 0,
    }
}

/// The view operators' input and output, where the output can share the input's bytes.
fn view_pair(graph: &Graph, op: &Op) -> Option<(TensorId, TensorId)> {
    if !matches!(
        op.kind,
        OpKind::Reshape | OpKind::Squeeze { .. } | OpKind::ExpandDims
    ) {
        return None;
    }
    let (a, v) = (op.input(0)?, *op.outputs.first()?);
    let same = graph.tensor(a).bytes() == graph.tensor(v).bytes()
        && graph.tensor(a).dtype == graph.tensor(v).dtype;
    (is_arena(graph, a) && is_arena(graph, v) && same && a != v).then_some((a, v))
}

/// Per tensor: the root of its view group (itself when it is no view), for the order
/// search. Empty groups when `options.views` is off.
pub fn view_roots(graph: &Graph, options: &AliasOptions) -> Vec<usize> {
    let mut root: Vec<usize> = (0..graph.tensors.len()).collect();
    if options.views {
        for op in &graph.ops {
            if let Some((a, v)) = view_pair(graph, op) {
                root[v.0] = root[a.0];
            }
        }
    }
    root
}

/// The inputs an elementwise kernel can overwrite with its output (indices into the
/// operator's inputs), by Kiln's in-place kernels: same type and size as the output, no
/// broadcasting.
pub fn in_place_candidates(graph: &Graph, op: &Op) -> Vec<usize> {
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
    let dtype_ok = |types: &[DType]| types.contains(&o.dtype);
    match op.kind {
        OpKind::Add(_) | OpKind::Mul { .. } if op.inputs.len() == 2 && fits(0) && fits(1) => {
            let types: &[DType] = if matches!(op.kind, OpKind::Add(_)) {
                &[DType::I8, DType::I16, DType::F32]
            } else {
                &[DType::I8, DType::F32]
            };
            if dtype_ok(types) {
                vec![0, 1]
            } else {
                Vec::new()
            }
        }
        OpKind::Relu | OpKind::Relu6 | OpKind::Logistic | OpKind::Tanh | OpKind::HardSwish
            if fits(0) && dtype_ok(&[DType::I8, DType::F32]) =>
        {
            vec![0]
        }
        OpKind::LeakyRelu { .. } if fits(0) && dtype_ok(&[DType::I8, DType::I16, DType::F32]) => {
            vec![0]
        }
        OpKind::Quantize if fits(0) && dtype_ok(&[DType::I8, DType::I16]) => vec![0],
        _ => Vec::new(),
    }
}

/// The byte offset of each input of a CONCATENATION in its output, if every input is a
/// contiguous slice (every output dimension before the axis is 1) copied as is (no fused
/// activation).
pub fn concat_slices(graph: &Graph, op: &Op) -> Option<Vec<usize>> {
    let OpKind::Concatenation(o) = &op.kind else {
        return None;
    };
    if o.activation != crate::ir::Activation::None {
        return None;
    }
    let y = graph.tensor(*op.outputs.first()?);
    let rank = y.shape.len() as i64;
    let axis = if o.axis < 0 {
        o.axis as i64 + rank
    } else {
        o.axis as i64
    };
    if !(0..rank).contains(&axis) || y.shape[..axis as usize].iter().product::<usize>() != 1 {
        return None;
    }
    let mut offsets = Vec::with_capacity(op.inputs.len());
    let mut at = 0usize;
    for i in &op.inputs {
        let t = graph.tensor((*i)?);
        if t.dtype != y.dtype {
            return None;
        }
        offsets.push(at);
        at += t.bytes();
    }
    (at == y.bytes()).then_some(offsets)
}

/// The bytes live at the worst step with these aliases (the lower bound of the order).
fn bound(graph: &Graph, order: &[OpId], scratch: ScratchFn<'_>, al: &Aliases) -> usize {
    crate::lifetimes::lifetimes_aliased(graph, order, scratch, al).lower_bound()
}

/// The aliasing of `graph` run in `order`: views, then in-place operators in step order,
/// then concatenation slices where they do not raise the lower bound.
pub fn analyse(
    graph: &Graph,
    order: &[OpId],
    options: &AliasOptions,
    scratch: ScratchFn<'_>,
) -> Aliases {
    let mut al = Aliases::none(graph);
    if !options.any() {
        return al;
    }
    let times = Times::new(graph, order);
    let touched = |t: TensorId| times.span[t.0].is_some();
    if options.views {
        for op in &graph.ops {
            if let Some((a, v)) = view_pair(graph, op)
                && touched(v)
            {
                let (r, off) = al.place[a.0];
                al.merge(v.0, r, off);
                al.mode[op.id.0] = OpMode::View;
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
            for k in in_place_candidates(graph, op) {
                let Some(a) = op.input(k).filter(|&a| is_arena(graph, a)) else {
                    continue;
                };
                // No other input may share the overwritten bytes.
                let ra = al.place[a.0].0;
                let shared = op
                    .inputs
                    .iter()
                    .enumerate()
                    .any(|(j, t)| j != k && t.is_some_and(|t| al.place[t.0].0 == ra));
                if shared {
                    continue;
                }
                let before = al.clone();
                let Some(root) = al.overwrite(graph, a, c) else {
                    continue;
                };
                al.mode[id.0] = OpMode::InPlace { input: k };
                if al.is_safe(graph, &times, root) {
                    break;
                }
                al = before;
            }
        }
    }
    if options.depthwise || options.pointwise {
        al = convolutions_in_place(graph, order, options, scratch, &times, al);
    }
    let has_concat = graph
        .ops
        .iter()
        .any(|op| matches!(op.kind, OpKind::Concatenation(_)));
    if options.concat && has_concat {
        let mut current = bound(graph, order, scratch, &al);
        for &id in order {
            let op = graph.op(id);
            let Some(offsets) = concat_slices(graph, op) else {
                continue;
            };
            let y = op.outputs[0];
            if !is_arena(graph, y) || al.place[y.0] != (y.0, 0) {
                continue;
            }
            let ry = y.0;
            let mut roots: Vec<usize> = Vec::new();
            let ok = op.present_inputs().all(|x| {
                let (r, off) = al.place[x.0];
                let whole = off == 0 && graph.tensors[r].bytes() == graph.tensors[x.0].bytes();
                let fresh = !roots.contains(&r) && r != ry;
                roots.push(r);
                is_arena(graph, x) && whole && fresh && touched(x)
            });
            if !ok || roots.len() != op.inputs.len() {
                continue;
            }
            let before = al.clone();
            for (x, &at) in op.present_inputs().zip(&offsets) {
                let r = al.place[x.0].0;
                al.merge(r, ry, at);
            }
            al.mode[id.0] = OpMode::ConcatSlices;
            let next = bound(graph, order, scratch, &al);
            if next <= current && al.is_safe(graph, &times, ry) {
                current = next;
            } else {
                al = before;
            }
        }
    }
    al
}

/// Depthwise and pointwise convolutions in place, where that lowers the bound (the
/// depthwise kernel is slower; a pointwise one holds a larger buffer from its input's
/// producer on): one at a time while each alone lowers it; then, as peaks are often shared
/// by several layers, all the others together if that lowers it, keeping only those whose
/// removal would raise it.
fn convolutions_in_place(
    graph: &Graph,
    order: &[OpId],
    options: &AliasOptions,
    scratch: ScratchFn<'_>,
    times: &Times,
    base: Aliases,
) -> Aliases {
    let candidates: Vec<OpId> = order
        .iter()
        .copied()
        .filter(|&id| {
            let op = graph.op(id);
            let kind_ok = (options.depthwise && depthwise_in_place_ok(graph, op))
                || (options.pointwise && pointwise_in_place_ok(graph, op));
            kind_ok && {
                let (a, c) = (op.inputs[0].expect("checked"), op.outputs[0]);
                is_arena(graph, a) && is_arena(graph, c) && base.place[c.0] == (c.0, 0)
            }
        })
        .collect();
    if candidates.is_empty() {
        return base;
    }
    // The aliasing with the convolutions of `set` in place, if it can be placed and is safe.
    let apply = |set: &[OpId]| -> Option<(Aliases, usize)> {
        let mut al = base.clone();
        for &id in set {
            let op = graph.op(id);
            let (a, c) = (op.inputs[0].expect("checked"), op.outputs[0]);
            let root = al.overwrite(graph, a, c)?;
            al.mode[id.0] = OpMode::InPlace { input: 0 };
            if !al.is_safe(graph, times, root) {
                return None;
            }
        }
        let b = bound(graph, order, scratch, &al);
        Some((al, b))
    };
    let mut chosen: Vec<OpId> = Vec::new();
    let mut current = bound(graph, order, scratch, &base);
    for &id in &candidates {
        let mut set = chosen.clone();
        set.push(id);
        if let Some((_, b)) = apply(&set)
            && b < current
        {
            chosen = set;
            current = b;
        }
    }
    let all: Vec<OpId> = candidates.clone();
    if chosen.len() < all.len()
        && let Some((_, b)) = apply(&all)
        && b < current
    {
        chosen = all;
        current = b;
        let mut i = 0;
        while i < chosen.len() {
            let mut fewer = chosen.clone();
            fewer.remove(i);
            match apply(&fewer) {
                Some((_, b)) if b <= current => {
                    chosen = fewer;
                    current = b;
                }
                _ => i += 1,
            }
        }
    }
    match apply(&chosen) {
        Some((al, _)) => al,
        None => base,
    }
}
