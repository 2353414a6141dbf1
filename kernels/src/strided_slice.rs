//! STRIDED_SLICE (any element type).
//!
//! Follows TFLM's `strided_slice.cc` / `strided_slice_common.cc` and
//! `reference_ops::StridedSlice`: the begin/end/strides tensors (constant) and the masks are
//! padded to 5 dimensions (`StridedSlicePadIndices`: leading dims take the whole extent),
//! each axis gets a start and stop from `StridedSliceStartForAxis` / `StridedSliceEndForAxis`
//! (negative indices count from the end, clamping depends on the stride's sign, `begin_mask` /
//! `end_mask` select the whole extent, `shrink_axis_mask` keeps one element, `offset` makes
//! `end` relative to `begin`), and five nested loops copy `input[o0, .., o4]` for
//! `o = start; stride > 0 ? o < stop : o > stop; o += stride` to consecutive outputs.
//!
//! As in TFLM, `ellipsis_mask` and `new_axis_mask` are ignored (TFLM zeroes them; the
//! converter does not emit them for supported models), inputs may have at most 4 dimensions
//! (TFLM's `Prepare` limit), and the planner must check the output shape against
//! [`output_dims`]. Unlike TFLM, [`prepare`] rejects a shrunk axis with a negative stride or
//! an out-of-range begin: TFLM accepts those but then writes nothing to the output.

use crate::quant::PrepareError;

/// Dimensions of the padded iteration space (`reference_ops::StridedSlice` works in 5-D).
pub const PADDED_DIMS: usize = 5;
/// Largest input rank TFLM's STRIDED_SLICE accepts.
pub const MAX_DIMS: usize = 4;

/// Builtin options of a STRIDED_SLICE node (`TfLiteStridedSliceParams`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Bit `i` set: ignore `begin[i]` and start at the first element (last for a negative
    /// stride).
    pub begin_mask: i32,
    /// Bit `i` set: ignore `end[i]` and run to the end (the beginning for a negative stride).
    pub end_mask: i32,
    /// Ignored by TFLM (set to 0).
    pub ellipsis_mask: i32,
    /// Ignored by TFLM (set to 0).
    pub new_axis_mask: i32,
    /// Bit `i` set: take the single element at `begin[i]` and drop the axis from the output.
    pub shrink_axis_mask: i32,
    /// `end` is relative to `begin`.
    pub offset: bool,
}

/// Constant parameters of a STRIDED_SLICE node: the input shape and per-axis loop bounds,
/// right-aligned to [`PADDED_DIMS`] dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Input extents, outermost first (leading padded dims are 1).
    pub input_dims: [usize; PADDED_DIMS],
    /// First index of each axis.
    pub start: [i32; PADDED_DIMS],
    /// Loop bound of each axis (exclusive; `-1` is a valid bound for negative strides).
    pub stop: [i32; PADDED_DIMS],
    /// Step of each axis (non-zero).
    pub stride: [i32; PADDED_DIMS],
}

impl Params {
    /// Number of iterations of each padded axis' loop.
    pub const fn loop_counts(&self) -> [usize; PADDED_DIMS] {
        let mut counts = [0usize; PADDED_DIMS];
        let mut i = 0;
        while i < PADDED_DIMS {
            let (start, stop, stride) = (
                self.start[i] as i64,
                self.stop[i] as i64,
                self.stride[i] as i64,
            );
            let n = if stride > 0 {
                (stop - start + stride - 1) / stride
            } else {
                (start - stop + (-stride) - 1) / (-stride)
            };
            counts[i] = if n > 0 { n as usize } else { 0 };
            i += 1;
        }
        counts
    }

    /// Number of output elements.
    pub const fn output_size(&self) -> usize {
        let c = self.loop_counts();
        c[0] * c[1] * c[2] * c[3] * c[4]
    }

    /// Number of input elements.
    pub const fn input_size(&self) -> usize {
        let d = &self.input_dims;
        d[0] * d[1] * d[2] * d[3] * d[4]
    }
}

/// The output shape TFLM's `CheckOutputSize` expects: the loop count of every input axis
/// whose `shrink_axis_mask` bit is clear, for an input of `rank` dims. Returns the dims and
/// how many there are.
pub fn output_dims(p: &Params, rank: usize, options: &Options) -> ([usize; MAX_DIMS], usize) {
    let counts = p.loop_counts();
    let mut dims = [0usize; MAX_DIMS];
    let mut n = 0;
    for axis in 0..rank.min(MAX_DIMS) {
        if options.shrink_axis_mask & (1 << axis) == 0 {
            dims[n] = counts[PADDED_DIMS - rank + axis];
            n += 1;
        }
    }
    (dims, n)
}

/// `strided_slice::Clamp`.
const fn clamp(v: i64, lo: i64, hi: i64) -> i64 {
    if hi < v {
        hi
    } else if v < lo {
        lo
    } else {
        v
    }
}

/// Build-time parameters from the input shape (1 to 4 dims, none zero), the constant
/// `begin`, `end` and `strides` tensors (one entry per input dim, strides non-zero) and the
/// options.
pub fn prepare(
    input_shape: &[usize],
    begin: &[i32],
    end: &[i32],
    strides: &[i32],
    options: &Options,
) -> Result<Params, PrepareError> {
    let rank = input_shape.len();
    if rank == 0
        || rank > MAX_DIMS
        || begin.len() != rank
        || end.len() != rank
        || strides.len() != rank
        || strides.contains(&0)
        || input_shape.contains(&0)
        || input_shape.iter().any(|&d| d > i32::MAX as usize)
    {
        return Err(PrepareError::InvalidShape);
    }
    // StridedSlicePadIndices(.., 5).
    let pad = PADDED_DIMS - rank;
    let mut start_indices = [0i64; PADDED_DIMS];
    let mut stop_indices = [1i64; PADDED_DIMS];
    let mut stride = [1i64; PADDED_DIMS];
    let mut input_dims = [1usize; PADDED_DIMS];
    for i in 0..rank {
        start_indices[pad + i] = begin[i] as i64;
        stop_indices[pad + i] = end[i] as i64;
        stride[pad + i] = strides[i] as i64;
        input_dims[pad + i] = input_shape[i];
    }
    let pad_bits = (1i32 << pad) - 1;
    let begin_mask = (options.begin_mask << pad) | pad_bits;
    let end_mask = (options.end_mask << pad) | pad_bits;
    let shrink_axis_mask = options.shrink_axis_mask << pad;

    let mut p = Params {
        input_dims,
        start: [0; PADDED_DIMS],
        stop: [0; PADDED_DIMS],
        stride: [0; PADDED_DIMS],
    };
    for axis in 0..PADDED_DIMS {
        let axis_size = input_dims[axis] as i64;
        let s = stride[axis];
        // StridedSliceStartForAxis.
        let mut start = start_indices[axis];
        if start < 0 {
            start += axis_size;
        }
        start = if s > 0 {
            clamp(start, 0, axis_size)
        } else {
            clamp(start, -1, axis_size - 1)
        };
        if begin_mask & (1 << axis) != 0 {
            start = if s > 0 { 0 } else { axis_size - 1 };
        }
        // StridedSliceEndForAxis.
        let stop = if shrink_axis_mask & (1 << axis) != 0 {
            // TFLM's Prepare expects one element here, but with a negative stride or an
            // out-of-range begin its loop runs zero times and leaves the output unwritten.
            if s < 0 || start >= axis_size {
                return Err(PrepareError::InvalidShape);
            }
            start + 1
        } else {
            let mut e = stop_indices[axis];
            if options.offset {
                e += start;
            }
            if e < 0 {
                e += axis_size;
            }
            e = if s > 0 {
                clamp(e, 0, axis_size)
            } else {
                clamp(e, -1, axis_size - 1)
            };
            if end_mask & (1 << axis) != 0 {
                e = if s > 0 { axis_size } else { -1 };
            }
            e
        };
        p.start[axis] = start as i32;
        p.stop[axis] = stop as i32;
        p.stride[axis] = s as i32;
    }
    Ok(p)
}

/// Indices of one axis' loop: `start, start + stride, ...` while before `stop`.
#[inline(always)]
fn axis_indices(start: i32, stop: i32, stride: i32) -> impl Iterator<Item = usize> {
    let mut o = start;
    core::iter::from_fn(move || {
        let inside = if stride < 0 { o > stop } else { o < stop };
        if inside {
            let v = o as usize;
            o += stride;
            Some(v)
        } else {
            None
        }
    })
}

/// STRIDED_SLICE (`reference_ops::StridedSlice`): copies the selected elements in loop order.
pub fn strided_slice<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(output.len(), p.output_size());
    let [_, n1, n2, n3, n4] = p.input_dims;
    let (st, sp, sd) = (&p.start, &p.stop, &p.stride);
    let mut out = output.iter_mut();
    for o0 in axis_indices(st[0], sp[0], sd[0]) {
        for o1 in axis_indices(st[1], sp[1], sd[1]) {
            let b1 = (o0 * n1 + o1) * n2;
            for o2 in axis_indices(st[2], sp[2], sd[2]) {
                let b2 = (b1 + o2) * n3;
                for o3 in axis_indices(st[3], sp[3], sd[3]) {
                    let b3 = (b2 + o3) * n4;
                    for o4 in axis_indices(st[4], sp[4], sd[4]) {
                        let Some(o) = out.next() else { return };
                        *o = input[b3 + o4];
                    }
                }
            }
        }
    }
}

/// Loops around the contiguous runs of [`Runs`] (the padded dimensions, one of which may be
/// the elements of a run).
pub const RUN_LOOPS: usize = PADDED_DIMS;

/// A copy of selected input elements to consecutive outputs as contiguous runs, computed at
/// build time (STRIDED_SLICE, SLICE, TRANSPOSE): for each position of the loops (outermost
/// first, `count[a]` iterations, the input index moving by `step[a]` elements per
/// iteration, from `start`), `run` consecutive input elements are copied to the next `run`
/// outputs. The loops of a slice are its axes; the innermost axes with unit stride that a
/// slice takes whole become one run ([`Runs::new`]), so a box of a tensor is one copy per
/// row of the outer axes instead of one per element, and a slice of whole rows one copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Runs {
    /// Input index of the first element.
    pub start: usize,
    /// Elements per run.
    pub run: usize,
    /// Iterations of each loop (1 for unused loops).
    pub count: [usize; RUN_LOOPS],
    /// Input step of each loop, in elements (negative for a negative stride).
    pub step: [isize; RUN_LOOPS],
}

impl Runs {
    /// The runs of a nested copy: `start` and, outermost first, each loop's iterations and
    /// input step (at most [`RUN_LOOPS`] loops; the innermost one is the elements of a run
    /// where its step is 1). Loops of one iteration are dropped, and a loop whose step is
    /// the length of the runs inside it merges into them. `None` if a step or the input
    /// span overflows.
    pub fn new(start: usize, loops: &[(usize, isize)]) -> Option<Runs> {
        if loops.len() > RUN_LOOPS {
            return None;
        }
        let empty = loops.iter().any(|&(c, _)| c == 0);
        let mut run = 1usize;
        // The loops outside the run, innermost first.
        let mut outer: [(usize, isize); RUN_LOOPS] = [(1, 0); RUN_LOOPS];
        let mut n = 0;
        for &(count, step) in loops.iter().rev() {
            if count == 1 {
                continue;
            }
            if n == 0 && step == isize::try_from(run).ok()? {
                run = run.checked_mul(count)?;
                continue;
            }
            outer[n] = (count, step);
            n += 1;
        }
        let mut r = Runs {
            start,
            run: if empty { 0 } else { run },
            count: [1; RUN_LOOPS],
            step: [0; RUN_LOOPS],
        };
        for (i, &(c, s)) in outer[..n].iter().enumerate() {
            r.count[RUN_LOOPS - 1 - i] = if empty { 0 } else { c };
            r.step[RUN_LOOPS - 1 - i] = s;
        }
        // Every index the copy reaches must be representable (the kernel also checks each
        // run against the input).
        let mut lo = start as i128;
        let mut hi = start as i128 + r.run as i128;
        for (&c, &s) in r.count.iter().zip(&r.step) {
            let span = (c.max(1) as i128 - 1) * s as i128;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        (lo >= 0 && hi <= isize::MAX as i128).then_some(r)
    }

    /// Elements copied.
    pub const fn output_size(&self) -> usize {
        let c = &self.count;
        self.run * c[0] * c[1] * c[2] * c[3] * c[4]
    }
}

/// The runs of a STRIDED_SLICE ([`Runs::new`] over its five padded axes; see
/// [`strided_slice_runs`]).
pub fn runs(p: &Params) -> Option<Runs> {
    let counts = p.loop_counts();
    let d = &p.input_dims;
    // Input elements per index of each axis.
    let mut stride = [1usize; PADDED_DIMS];
    for a in (0..PADDED_DIMS - 1).rev() {
        stride[a] = stride[a + 1].checked_mul(d[a + 1])?;
    }
    let mut start = 0usize;
    let mut loops = [(1usize, 0isize); PADDED_DIMS];
    for a in 0..PADDED_DIMS {
        if counts[a] > 0 {
            start = start.checked_add(usize::try_from(p.start[a]).ok()?.checked_mul(stride[a])?)?;
        }
        let step = (p.stride[a] as isize).checked_mul(isize::try_from(stride[a]).ok()?)?;
        loops[a] = (counts[a], step);
    }
    Runs::new(start, &loops)
}

/// [`strided_slice`] by the build-time runs of [`runs`]: one block copy per run
/// (`arch::copy_block`; an element loop for runs of at most 4 elements), the
/// loops' input index kept as a running sum. Stops at the first run the input or the
/// output does not hold (never, for the runs of the layer's own shapes).
pub fn strided_slice_runs<T: Copy>(r: &Runs, input: &[T], output: &mut [T]) {
    let run = r.run;
    let [c0, c1, c2, c3, c4] = r.count;
    let [s0, s1, s2, s3, s4] = r.step;
    let mut out = output;
    let mut i0 = r.start as isize;
    for _ in 0..c0 {
        let mut i1 = i0;
        for _ in 0..c1 {
            let mut i2 = i1;
            for _ in 0..c2 {
                let mut i3 = i2;
                for _ in 0..c3 {
                    let mut i4 = i3;
                    for _ in 0..c4 {
                        let at = i4 as usize;
                        let (Some(src), Some((dst, rest))) = (
                            input.get(at..at.wrapping_add(run)),
                            core::mem::take(&mut out).split_at_mut_checked(run),
                        ) else {
                            return;
                        };
                        if run <= 4 {
                            for (d, s) in dst.iter_mut().zip(src) {
                                *d = *s;
                            }
                        } else {
                            crate::arch::copy_block(dst, src);
                        }
                        out = rest;
                        i4 += s4;
                    }
                    i3 += s3;
                }
                i2 += s2;
            }
            i1 += s1;
        }
        i0 += s0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn opts(begin_mask: i32, end_mask: i32, shrink: i32) -> Options {
        Options {
            begin_mask,
            end_mask,
            ellipsis_mask: 0,
            new_axis_mask: 0,
            shrink_axis_mask: shrink,
            offset: false,
        }
    }

    fn run(shape: &[usize], b: &[i32], e: &[i32], s: &[i32], o: &Options) -> Vec<i32> {
        let n: usize = shape.iter().product();
        let input: Vec<i32> = (0..n as i32).collect();
        let p = prepare(shape, b, e, s, o).unwrap();
        let mut out = std::vec![0; p.output_size()];
        strided_slice(&p, &input, &mut out);
        out
    }

    /// The runs give the element loop's output for every slice of a few shapes (strides of
    /// both signs, masks, shrunk axes), and merge whole inner axes into one run.
    #[test]
    fn runs_equal_the_element_loop() {
        let shapes: [&[usize]; 4] = [&[7], &[3, 5], &[2, 3, 4], &[2, 3, 2, 5]];
        let mut seed = 7u64;
        let mut next = |m: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as i64
        };
        for shape in shapes {
            let n: usize = shape.iter().product();
            let input: Vec<i32> = (0..n as i32).collect();
            for _ in 0..400 {
                let r = shape.len();
                let b: Vec<i32> = shape
                    .iter()
                    .map(|&d| (next(2 * d as i64 + 1) - d as i64) as i32)
                    .collect();
                let e: Vec<i32> = shape
                    .iter()
                    .map(|&d| (next(2 * d as i64 + 1) - d as i64) as i32)
                    .collect();
                let st: Vec<i32> = (0..r)
                    .map(|_| [1, 1, 1, 2, 3, -1, -2][next(7) as usize])
                    .collect();
                let o = Options {
                    begin_mask: next(1 << r) as i32,
                    end_mask: next(1 << r) as i32,
                    ellipsis_mask: 0,
                    new_axis_mask: 0,
                    shrink_axis_mask: if next(4) == 0 { next(1 << r) as i32 } else { 0 },
                    offset: false,
                };
                let Ok(p) = prepare(shape, &b, &e, &st, &o) else {
                    continue;
                };
                let mut want = std::vec![0; p.output_size()];
                strided_slice(&p, &input, &mut want);
                let runs = runs(&p).unwrap();
                assert_eq!(
                    runs.output_size(),
                    want.len(),
                    "{shape:?} {b:?} {e:?} {st:?}"
                );
                let mut got = std::vec![-1; want.len()];
                strided_slice_runs(&runs, &input, &mut got);
                assert_eq!(got, want, "{shape:?} {b:?} {e:?} {st:?} {runs:?}");
            }
        }
        // A box of whole inner axes is one run; a row-wise box one run per row.
        let p = prepare(
            &[4, 3, 5],
            &[1, 0, 0],
            &[3, 3, 5],
            &[1, 1, 1],
            &opts(0, 0, 0),
        )
        .unwrap();
        let r = runs(&p).unwrap();
        assert_eq!((r.start, r.run, r.output_size()), (15, 30, 30));
        let p = prepare(
            &[4, 3, 5],
            &[0, 1, 0],
            &[4, 3, 5],
            &[1, 1, 1],
            &opts(0, 0, 0),
        )
        .unwrap();
        let r = runs(&p).unwrap();
        assert_eq!((r.start, r.run, r.count[4], r.step[4]), (5, 10, 4, 15));
    }

    #[test]
    fn slices() {
        assert_eq!(run(&[6], &[1], &[5], &[2], &opts(0, 0, 0)), [1, 3]);
        assert_eq!(run(&[6], &[-1], &[0], &[-2], &opts(0, 0, 0)), [5, 3, 1]);
        assert_eq!(run(&[6], &[3], &[0], &[-1], &opts(0, 1, 0)), [3, 2, 1, 0]);
        assert_eq!(
            run(&[2, 3], &[1, 0], &[2, 3], &[1, 1], &opts(0, 0, 1)),
            [3, 4, 5]
        );
        assert_eq!(
            run(&[2, 3], &[0, -1], &[2, 0], &[1, 1], &opts(1, 0, 2)),
            [2, 5]
        );
        let p = prepare(&[2, 3], &[0, -1], &[2, 0], &[1, 1], &opts(1, 0, 2)).unwrap();
        assert_eq!(output_dims(&p, 2, &opts(1, 0, 2)), ([2, 0, 0, 0], 1));
        assert!(prepare(&[2, 3], &[0, 0], &[1, 1], &[1, 0], &opts(0, 0, 0)).is_err());
    }
}
