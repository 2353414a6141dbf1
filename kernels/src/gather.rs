//! GATHER, GATHER_ND and EMBEDDING_LOOKUP: slices of the input chosen by a runtime index
//! tensor (int32), copied in order. The kernels are generic over the element type (TFLM runs
//! float32 and int8 for all three, and EMBEDDING_LOOKUP's hybrid int8 -> float32 form,
//! [`embedding_lookup_hybrid`]).
//!
//! * GATHER (`gather.cc`): the input viewed as `[batch, outer, axis_size, inner]`, the
//!   positions as `[batch, coord_size]`; output `[batch, outer, coord_size, inner]` copies
//!   input row `position` of each (batch, outer).
//! * GATHER_ND (`gather_nd.cc`): each of `n_slices` index tuples of `nd` entries selects the
//!   slice starting at `sum(index[j] * stride[j])` of `slice_size` elements.
//! * EMBEDDING_LOOKUP (`embedding_lookup.cc`): GATHER on axis 0 of the value tensor; the
//!   hybrid form dequantizes int8 rows as `(float)(q - 0) * scale` (TFLM's `Dequantize`,
//!   zero point 0 required).
//!
//! Indices are runtime data. TFLM fails the invoke on an index out of range (GATHER and
//! EMBEDDING_LOOKUP check it; the pinned GATHER_ND too); Kiln's `invoke` has no error path,
//! so these kernels write zeros for the slice of an out-of-range index and carry on (never
//! reading outside the input).

/// Constant parameters of a GATHER (and EMBEDDING_LOOKUP: `batch = outer = 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Product of the first `batch_dims` input dims.
    pub batch: usize,
    /// Product of the input dims from `batch_dims` to the axis.
    pub outer: usize,
    /// The gathered axis's extent.
    pub axis_size: usize,
    /// Product of the input dims after the axis.
    pub inner: usize,
    /// Positions per batch (product of the position dims after `batch_dims`).
    pub coord_size: usize,
}

impl Params {
    /// Number of input elements.
    pub const fn input_size(&self) -> usize {
        self.batch * self.outer * self.axis_size * self.inner
    }
    /// Number of positions.
    pub const fn positions(&self) -> usize {
        self.batch * self.coord_size
    }
    /// Number of output elements.
    pub const fn output_size(&self) -> usize {
        self.batch * self.outer * self.coord_size * self.inner
    }
}

/// The kernels need no scratch memory.
pub const fn scratch_bytes() -> usize {
    0
}

/// Largest index depth of GATHER_ND (TFLM's `MAX_INDICES_ND`).
pub const MAX_ND: usize = 5;

/// Constant parameters of a GATHER_ND.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdParams {
    /// Entries per index tuple (the last indices dim, `1..=MAX_ND`).
    pub nd: usize,
    /// Number of index tuples.
    pub n_slices: usize,
    /// Elements per slice (product of the params dims after the first `nd`).
    pub slice_size: usize,
    /// Extents of the first `nd` params dims (unused entries 0).
    pub dims: [usize; MAX_ND],
    /// Element stride of each of the first `nd` params dims.
    pub strides: [usize; MAX_ND],
}

impl NdParams {
    /// Number of index entries.
    pub const fn indices_size(&self) -> usize {
        self.n_slices * self.nd
    }
    /// Number of output elements.
    pub const fn output_size(&self) -> usize {
        self.n_slices * self.slice_size
    }
}

/// GATHER parameters for `input_shape` along `axis` with `batch_dims` and positions of
/// `positions_shape`, with TFLM's checks; `None` if they fail. The output shape is
/// `input[..axis] ++ positions[batch_dims..] ++ input[axis + 1..]` (axes resolved).
pub fn prepare(
    input_shape: &[usize],
    positions_shape: &[usize],
    axis: i32,
    batch_dims: i32,
) -> Option<Params> {
    let (rank, prank) = (input_shape.len() as i32, positions_shape.len() as i32);
    let axis = if axis < 0 { axis + rank } else { axis };
    let batch_dims = if batch_dims < 0 {
        batch_dims + prank
    } else {
        batch_dims
    };
    if !(0..rank).contains(&axis)
        || batch_dims > axis
        || !(0..rank).contains(&batch_dims)
        || batch_dims > prank
    {
        return None;
    }
    let (axis, bd) = (axis as usize, batch_dims as usize);
    if input_shape[..bd] != positions_shape[..bd] {
        return None;
    }
    let p = Params {
        batch: input_shape[..bd].iter().product(),
        outer: input_shape[bd..axis].iter().product(),
        axis_size: input_shape[axis],
        inner: input_shape[axis + 1..].iter().product(),
        coord_size: positions_shape[bd..].iter().product(),
    };
    Some(p)
}

/// GATHER_ND parameters, with TFLM's checks; `None` if they fail. The output shape is
/// `indices[..-1] ++ params[nd..]`.
pub fn prepare_nd(params_shape: &[usize], indices_shape: &[usize]) -> Option<NdParams> {
    let (&nd, lead) = indices_shape.split_last()?;
    if params_shape.is_empty() || nd > params_shape.len() || nd > MAX_ND || nd == 0 {
        return None;
    }
    let mut p = NdParams {
        nd,
        n_slices: lead.iter().product(),
        slice_size: params_shape[nd..].iter().product(),
        dims: [0; MAX_ND],
        strides: [0; MAX_ND],
    };
    for j in 0..nd {
        p.dims[j] = params_shape[j];
        p.strides[j] = params_shape[j + 1..].iter().product();
    }
    Some(p)
}

/// GATHER (`Gather<T, int32_t>`).
pub fn gather<T: Copy + Default>(p: &Params, input: &[T], positions: &[i32], output: &mut [T]) {
    debug_assert_eq!(input.len(), p.input_size());
    debug_assert_eq!(positions.len(), p.positions());
    debug_assert_eq!(output.len(), p.output_size());
    match p.inner {
        1 => return gather_rows::<T, 1>(p, input, positions, output),
        2 => return gather_rows::<T, 2>(p, input, positions, output),
        3 => return gather_rows::<T, 3>(p, input, positions, output),
        4 => return gather_rows::<T, 4>(p, input, positions, output),
        _ => {}
    }
    let inner = p.inner;
    // The output walked as a shrinking slice (`chunks_exact_mut` would divide to size itself,
    // as much as copying a few rows costs).
    let mut rest = output;
    for b in 0..p.batch {
        let ids = positions.get(b * p.coord_size..).unwrap_or(&[]);
        for o in 0..p.outer {
            let row = (b * p.outer + o) * p.axis_size;
            for c in 0..p.coord_size {
                let Some((dst, tail)) = core::mem::take(&mut rest).split_at_mut_checked(inner)
                else {
                    return;
                };
                rest = tail;
                let pos = ids.get(c).copied().unwrap_or(-1);
                copy_or_zero(input, pos, p.axis_size, |i| (row + i) * inner, dst);
            }
        }
    }
}

/// [`gather`] for rows of `N` (`inner == N`) elements: input and output viewed as arrays of
/// `[T; N]`, so each row is one bounds-checked array copy of a known size (short rows, where
/// a copy of a run-time length costs more than the copy itself).
#[inline(always)]
fn gather_rows<T: Copy + Default, const N: usize>(
    p: &Params,
    input: &[T],
    positions: &[i32],
    output: &mut [T],
) {
    let rows = input.as_chunks::<N>().0;
    let mut out = output.as_chunks_mut::<N>().0.iter_mut();
    for b in 0..p.batch {
        let ids = positions.get(b * p.coord_size..).unwrap_or(&[]);
        for o in 0..p.outer {
            let row = (b * p.outer + o) * p.axis_size;
            for c in 0..p.coord_size {
                let Some(dst) = out.next() else {
                    return;
                };
                let pos = ids.get(c).copied().unwrap_or(-1);
                let src = usize::try_from(pos)
                    .ok()
                    .filter(|&i| i < p.axis_size)
                    .and_then(|i| rows.get(row + i));
                *dst = match src {
                    Some(r) => *r,
                    None => [T::default(); N],
                };
            }
        }
    }
}

/// Copies the `dst.len()` elements at `offset(pos)` if `0 <= pos < limit`, else zeros.
#[inline(always)]
fn copy_or_zero<T: Copy + Default>(
    input: &[T],
    pos: i32,
    limit: usize,
    offset: impl Fn(usize) -> usize,
    dst: &mut [T],
) {
    let src = usize::try_from(pos)
        .ok()
        .filter(|&i| i < limit)
        .and_then(|i| input.get(offset(i)..offset(i) + dst.len()));
    match src {
        Some(s) => copy(dst, s),
        None => dst.fill(T::default()),
    }
}

/// `dst.copy_from_slice(src)` (equal lengths), element by element for a few elements, where
/// the call of a general copy costs more than the copy (rows of one to four elements).
#[inline(always)]
fn copy<T: Copy>(dst: &mut [T], src: &[T]) {
    if dst.len() <= 4 {
        for (o, x) in dst.iter_mut().zip(src) {
            *o = *x;
        }
    } else {
        dst.copy_from_slice(src);
    }
}

/// GATHER_ND (`GatherNd<T, int32_t>`).
pub fn gather_nd<T: Copy + Default>(p: &NdParams, params: &[T], indices: &[i32], output: &mut [T]) {
    debug_assert_eq!(indices.len(), p.indices_size());
    debug_assert_eq!(output.len(), p.output_size());
    if p.slice_size == 0 {
        return;
    }
    for (i, dst) in output.chunks_exact_mut(p.slice_size).enumerate() {
        let tuple = indices.get(i * p.nd..(i + 1) * p.nd).unwrap_or(&[]);
        let mut from = Some(0usize);
        for j in 0..p.nd {
            let ok = tuple
                .get(j)
                .and_then(|&x| usize::try_from(x).ok())
                .filter(|&x| x < p.dims[j]);
            from = match (from, ok) {
                (Some(f), Some(x)) => Some(f + x * p.strides[j]),
                _ => None,
            };
        }
        match from.and_then(|f| params.get(f..f + p.slice_size)) {
            Some(s) => copy(dst, s),
            None => dst.fill(T::default()),
        }
    }
}

/// EMBEDDING_LOOKUP (`EvalSimple`): rows of `value` (`axis_size` rows of `inner`) by `ids`.
pub fn embedding_lookup<T: Copy + Default>(p: &Params, ids: &[i32], value: &[T], output: &mut [T]) {
    gather(p, value, ids, output);
}

/// Hybrid EMBEDDING_LOOKUP (`EvalHybrid`): int8 rows dequantized with `scale` (zero point 0).
pub fn embedding_lookup_hybrid(
    p: &Params,
    scale: f32,
    ids: &[i32],
    value: &[i8],
    output: &mut [f32],
) {
    debug_assert_eq!(output.len(), p.output_size());
    let inner = p.inner.max(1);
    for (dst, &id) in output.chunks_exact_mut(inner).zip(ids) {
        let row = usize::try_from(id)
            .ok()
            .filter(|&i| i < p.axis_size)
            .and_then(|i| value.get(i * inner..(i + 1) * inner));
        match row {
            Some(r) => {
                for (d, &q) in dst.iter_mut().zip(r) {
                    *d = q as i32 as f32 * scale;
                }
            }
            None => dst.fill(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_rows_and_tuples() {
        let p = prepare(&[2, 3, 2], &[2, 2], 1, 1).unwrap();
        assert_eq!(p.output_size(), 8);
        let x: std::vec::Vec<i32> = (0..12).collect();
        let mut y = [0i32; 8];
        gather(&p, &x, &[2, 0, 1, 7], &mut y);
        assert_eq!(y, [4, 5, 0, 1, 8, 9, 0, 0]);

        let p = prepare_nd(&[2, 3, 2], &[2, 2]).unwrap();
        assert_eq!(p.output_size(), 4);
        let mut y = [0i32; 4];
        gather_nd(&p, &x, &[1, 2, -1, 0], &mut y);
        assert_eq!(y, [10, 11, 0, 0]);

        let p = prepare(&[3, 2], &[2], 0, 0).unwrap();
        let mut y = [0f32; 4];
        embedding_lookup_hybrid(&p, 0.5, &[2, 0], &[1, 2, 3, 4, -5, 6], &mut y);
        assert_eq!(y, [-2.5, 3.0, 0.5, 1.0]);
        assert!(prepare(&[3, 2], &[2], 2, 0).is_none());
        assert!(prepare(&[3, 2], &[2], 1, 1).is_none());
    }
}
