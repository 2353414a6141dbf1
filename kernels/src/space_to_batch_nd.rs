//! SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND for 3-D (NHC) and 4-D (NHWC) tensors
//! (`reference_ops::SpaceToBatchND` / `BatchToSpaceND`, any element type).
//!
//! A 3-D tensor is taken as NH1C with a block width of 1 and no width padding or crops, as
//! TFLM does. SPACE_TO_BATCH_ND pads the spatial dimensions and moves each block offset into
//! the batch: output batch `(sh * block_w + sw) * in_batch + b` holds the padded pixels
//! `(h * block_h + sh, w * block_w + sw)` of input batch `b`; the padding holds the value the
//! caller passes (TFLM's `output_offset`, see the operator module). BATCH_TO_SPACE_ND is the
//! inverse, with crops instead of padding.

use crate::quant::PrepareError;
use crate::util::{copy_run, fill_run, for_each_run_mut};

/// Constant parameters of either operator, in terms of its *batched* side (the
/// SPACE_TO_BATCH_ND output, the BATCH_TO_SPACE_ND input) and its *spatial* side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// The spatial side: `[batch, height, width, depth]`.
    pub spatial_batch: usize,
    pub spatial_height: usize,
    pub spatial_width: usize,
    pub depth: usize,
    /// The batched side's height and width (its batch is `spatial_batch * block_h * block_w`).
    pub batched_height: usize,
    pub batched_width: usize,
    pub block_height: usize,
    pub block_width: usize,
    /// Padding (SPACE_TO_BATCH_ND) or crop (BATCH_TO_SPACE_ND) before the height and width.
    pub before_height: usize,
    pub before_width: usize,
}

impl Params {
    /// Elements of the spatial side.
    pub const fn spatial_size(&self) -> usize {
        self.spatial_batch * self.spatial_height * self.spatial_width * self.depth
    }

    /// Elements of the batched side.
    pub const fn batched_size(&self) -> usize {
        self.spatial_batch
            * self.block_height
            * self.block_width
            * self.batched_height
            * self.batched_width
            * self.depth
    }
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

/// The NHWC form of a 3-D or 4-D shape (NHC -> NH1C).
fn nhwc(shape: &[usize]) -> Result<[usize; 4], PrepareError> {
    match *shape {
        [b, h, c] => Ok([b, h, 1, c]),
        [b, h, w, c] => Ok([b, h, w, c]),
        _ => Err(PrepareError::InvalidShape),
    }
}

/// The block shape and the `[before, after]` pairs for height and width (3-D: width 1, no
/// width pair); `block` has `rank - 2` entries and `pairs` `2 * (rank - 2)`.
fn block_and_pairs(
    rank: usize,
    block: &[i32],
    pairs: &[i32],
) -> Result<([usize; 2], [[usize; 2]; 2]), PrepareError> {
    let m = rank - 2;
    if block.len() != m || pairs.len() != 2 * m {
        return Err(PrepareError::InvalidShape);
    }
    let pos = |v: i32| usize::try_from(v).map_err(|_| PrepareError::InvalidShape);
    let mut b = [1usize; 2];
    let mut p = [[0usize; 2]; 2];
    for i in 0..m {
        b[i] = pos(block[i])?;
        if b[i] == 0 {
            return Err(PrepareError::InvalidShape);
        }
        p[i] = [pos(pairs[2 * i])?, pos(pairs[2 * i + 1])?];
    }
    Ok((b, p))
}

/// SPACE_TO_BATCH_ND from the input shape (3-D or 4-D), the block shape and the paddings
/// (`[rank - 2, 2]` values): every padded spatial extent must be a multiple of its block.
/// Returns the parameters and the output shape (same rank as the input).
pub fn prepare_space_to_batch(
    input: &[usize],
    block_shape: &[i32],
    paddings: &[i32],
) -> Result<(Params, [usize; 4]), PrepareError> {
    let [b, h, w, c] = nhwc(input)?;
    let ([bh, bw], [ph, pw]) = block_and_pairs(input.len(), block_shape, paddings)?;
    let padded = |n: usize, p: [usize; 2]| {
        n.checked_add(p[0])
            .and_then(|n| n.checked_add(p[1]))
            .ok_or(PrepareError::InvalidShape)
    };
    let (hp, wp) = (padded(h, ph)?, padded(w, pw)?);
    if hp % bh != 0 || wp % bw != 0 {
        return Err(PrepareError::InvalidShape);
    }
    let ob = b
        .checked_mul(bh)
        .and_then(|n| n.checked_mul(bw))
        .ok_or(PrepareError::InvalidShape)?;
    let p = Params {
        spatial_batch: b,
        spatial_height: h,
        spatial_width: w,
        depth: c,
        batched_height: hp / bh,
        batched_width: wp / bw,
        block_height: bh,
        block_width: bw,
        before_height: ph[0],
        before_width: pw[0],
    };
    Ok((p, [ob, hp / bh, wp / bw, c]))
}

/// BATCH_TO_SPACE_ND from the input shape (3-D or 4-D), the block shape and the crops
/// (`[rank - 2, 2]` values): the batch must be a multiple of the block's size and the crops
/// must leave at least nothing. Returns the parameters and the output shape.
pub fn prepare_batch_to_space(
    input: &[usize],
    block_shape: &[i32],
    crops: &[i32],
) -> Result<(Params, [usize; 4]), PrepareError> {
    let [b, h, w, c] = nhwc(input)?;
    let ([bh, bw], [ch, cw]) = block_and_pairs(input.len(), block_shape, crops)?;
    let blocks = bh.checked_mul(bw).ok_or(PrepareError::InvalidShape)?;
    if b % blocks != 0 {
        return Err(PrepareError::InvalidShape);
    }
    let cropped = |n: usize, k: usize, c: [usize; 2]| {
        n.checked_mul(k)
            .and_then(|n| n.checked_sub(c[0]))
            .and_then(|n| n.checked_sub(c[1]))
            .ok_or(PrepareError::InvalidShape)
    };
    let (oh, ow) = (cropped(h, bh, ch)?, cropped(w, bw, cw)?);
    let p = Params {
        spatial_batch: b / blocks,
        spatial_height: oh,
        spatial_width: ow,
        depth: c,
        batched_height: h,
        batched_width: w,
        block_height: bh,
        block_width: bw,
        before_height: ch[0],
        before_width: cw[0],
    };
    Ok((p, [b / blocks, oh, ow, c]))
}

/// SPACE_TO_BATCH_ND (`reference_ops::SpaceToBatchND`): padding is `pad_value`.
///
/// Row by row of the output: the columns whose padded input column lies inside the input are
/// one range (found once per row), copied pixel by pixel (one run when the block width is 1),
/// the columns around it padding.
pub fn space_to_batch_nd<T: Copy>(p: &Params, input: &[T], pad_value: T, output: &mut [T]) {
    debug_assert_eq!(input.len(), p.spatial_size());
    debug_assert_eq!(output.len(), p.batched_size());
    let d = p.depth;
    let (bw, ow) = (p.block_width, p.batched_width);
    if d == 0 || ow == 0 || bw == 0 {
        return;
    }
    let in_row = p.spatial_width * d;
    let mut rows = output.chunks_exact_mut(ow * d);
    for sh in 0..p.block_height {
        for sw in 0..bw {
            // Output columns `lo..hi` read input column `ow * bw + sw - before_width`.
            let lo = p.before_width.saturating_sub(sw).div_ceil(bw).min(ow);
            let hi = (p.before_width + p.spatial_width)
                .saturating_sub(sw)
                .div_ceil(bw)
                .clamp(lo, ow);
            for b in 0..p.spatial_batch {
                for oh in 0..p.batched_height {
                    let Some(out) = rows.next() else { return };
                    let h = (oh * p.block_height + sh)
                        .checked_sub(p.before_height)
                        .filter(|&h| h < p.spatial_height);
                    let Some(h) = h else {
                        fill_run(out, pad_value);
                        continue;
                    };
                    let (head, rest) = out.split_at_mut(lo * d);
                    let (body, tail) = rest.split_at_mut((hi - lo) * d);
                    fill_run(head, pad_value);
                    fill_run(tail, pad_value);
                    if hi == lo {
                        continue;
                    }
                    // `lo * bw + sw >= before_width` for a column in range.
                    let first = lo * bw + sw - p.before_width;
                    let Some(src) = input.get((b * p.spatial_height + h) * in_row..) else {
                        return;
                    };
                    if bw == 1 {
                        copy_run(body, src.get(first * d..).unwrap_or(&[]));
                    } else {
                        let mut at = first * d;
                        for_each_run_mut(body, d, |px| {
                            copy_run(px, src.get(at..).unwrap_or(&[]));
                            at += bw * d;
                        });
                    }
                }
            }
        }
    }
}

/// BATCH_TO_SPACE_ND (`reference_ops::BatchToSpaceND`).
///
/// Row by row of the output: the input row and block row once per output row, then the
/// columns with the block column stepped (no division per pixel), one run when the block
/// width is 1.
pub fn batch_to_space_nd<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    debug_assert_eq!(input.len(), p.batched_size());
    debug_assert_eq!(output.len(), p.spatial_size());
    let d = p.depth;
    let (bh, bw) = (p.block_height, p.block_width);
    if d == 0 || p.spatial_width == 0 || bh == 0 || bw == 0 {
        return;
    }
    // Elements between the batches of two neighbouring block columns.
    let block_step = p.spatial_batch * p.batched_height * p.batched_width * d;
    let (iw0, sw0) = (p.before_width / bw, p.before_width % bw);
    let mut rows = output.chunks_exact_mut(p.spatial_width * d);
    for b in 0..p.spatial_batch {
        for h in 0..p.spatial_height {
            let Some(out) = rows.next() else { return };
            let (ih, sh) = ((h + p.before_height) / bh, (h + p.before_height) % bh);
            // Input element of (block column 0, column 0) for this row.
            let base =
                (((sh * bw) * p.spatial_batch + b) * p.batched_height + ih) * p.batched_width * d;
            if bw == 1 {
                copy_run(out, input.get(base + iw0 * d..).unwrap_or(&[]));
                continue;
            }
            let (mut iw, mut sw) = (iw0, sw0);
            for_each_run_mut(out, d, |px| {
                let at = base + sw * block_step + iw * d;
                copy_run(px, input.get(at..).unwrap_or(&[]));
                sw += 1;
                if sw == bw {
                    sw = 0;
                    iw += 1;
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn space_to_batch_and_back() {
        // TensorFlow's example: [1, 2, 2, 1] block [2, 2] -> [4, 1, 1, 1].
        let (p, out) = prepare_space_to_batch(&[1, 2, 2, 1], &[2, 2], &[0, 0, 0, 0]).unwrap();
        assert_eq!(out, [4, 1, 1, 1]);
        let mut o = [0i8; 4];
        space_to_batch_nd(&p, &[1, 2, 3, 4], 0, &mut o);
        assert_eq!(o, [1, 2, 3, 4]);
        // Padding: [1, 1, 2, 1] block [1, 2], paddings [[1, 0], [1, 1]] -> [2, 2, 2, 1].
        let (p, out) = prepare_space_to_batch(&[1, 1, 2, 1], &[1, 2], &[1, 0, 1, 1]).unwrap();
        assert_eq!(out, [2, 2, 2, 1]);
        let mut o = [0i8; 8];
        space_to_batch_nd(&p, &[5, 6], -1, &mut o);
        // padded [[-1,-1,-1,-1], [-1,5,6,-1]]: even columns then odd columns.
        assert_eq!(o, [-1, -1, -1, 6, -1, -1, 5, -1]);
        let (q, back) = prepare_batch_to_space(&out, &[1, 2], &[1, 0, 1, 1]).unwrap();
        assert_eq!(back, [1, 1, 2, 1]);
        let mut z = [0i8; 2];
        batch_to_space_nd(&q, &o, &mut z);
        assert_eq!(z, [5, 6]);
    }

    #[test]
    fn round_trip_3d_and_4d() {
        for (shape, block, pads) in [
            (&[2, 6, 3][..], &[3][..], &[1, 2][..]),
            (&[2, 3, 5, 2][..], &[2, 3][..], &[1, 0, 0, 1][..]),
        ] {
            let (p, out) = prepare_space_to_batch(shape, block, pads).unwrap();
            let x: Vec<i32> = (0..p.spatial_size() as i32).collect();
            let mut y = std::vec![0; p.batched_size()];
            space_to_batch_nd(&p, &x, -1, &mut y);
            assert_eq!(y.iter().filter(|&&v| v >= 0).count(), x.len());
            let out = if shape.len() == 3 {
                std::vec![out[0], out[1], out[3]]
            } else {
                out.to_vec()
            };
            let (q, back) = prepare_batch_to_space(&out, block, pads).unwrap();
            assert_eq!(back, nhwc(shape).unwrap());
            let mut z = std::vec![0; x.len()];
            batch_to_space_nd(&q, &y, &mut z);
            assert_eq!(z, x);
        }
    }

    /// TFLM's loops, one pixel at a time (the kernels before they went row by row).
    fn space_to_batch_ref<T: Copy>(p: &Params, input: &[T], pad: T, output: &mut [T]) {
        let d = p.depth;
        let mut runs = output.chunks_exact_mut(d);
        for sh in 0..p.block_height {
            for sw in 0..p.block_width {
                for b in 0..p.spatial_batch {
                    for oh in 0..p.batched_height {
                        let h = (oh * p.block_height + sh).checked_sub(p.before_height);
                        let h = h.filter(|&h| h < p.spatial_height);
                        for ow in 0..p.batched_width {
                            let out = runs.next().unwrap();
                            let w = (ow * p.block_width + sw).checked_sub(p.before_width);
                            match (h, w.filter(|&w| w < p.spatial_width)) {
                                (Some(h), Some(w)) => {
                                    let at = ((b * p.spatial_height + h) * p.spatial_width + w) * d;
                                    out.copy_from_slice(&input[at..at + d]);
                                }
                                _ => out.fill(pad),
                            }
                        }
                    }
                }
            }
        }
    }

    fn batch_to_space_ref<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
        let d = p.depth;
        let mut runs = output.chunks_exact_mut(d);
        for b in 0..p.spatial_batch {
            for h in 0..p.spatial_height {
                let (ih, sh) = (
                    (h + p.before_height) / p.block_height,
                    (h + p.before_height) % p.block_height,
                );
                for w in 0..p.spatial_width {
                    let out = runs.next().unwrap();
                    let (iw, sw) = (
                        (w + p.before_width) / p.block_width,
                        (w + p.before_width) % p.block_width,
                    );
                    let ib = (sh * p.block_width + sw) * p.spatial_batch + b;
                    let at = ((ib * p.batched_height + ih) * p.batched_width + iw) * d;
                    out.copy_from_slice(&input[at..at + d]);
                }
            }
        }
    }

    #[test]
    fn row_kernels_match_pixel_loops() {
        let mut checked = 0;
        for depth in [1usize, 2, 3, 5, 17] {
            for (bh, bw) in [(1, 1), (2, 1), (1, 2), (2, 3), (3, 2)] {
                for (ph0, ph1, pw0, pw1) in [(0, 0, 0, 0), (1, 0, 2, 1), (0, 3, 1, 0), (2, 1, 0, 5)]
                {
                    let (h, w) = (4usize, 5usize);
                    let shape = [2, h, w, depth];
                    let pads = [ph0, ph1, pw0, pw1];
                    let Ok((p, out)) = prepare_space_to_batch(&shape, &[bh, bw], &pads) else {
                        continue;
                    };
                    let x: Vec<i16> = (0..p.spatial_size() as i16).collect();
                    let (mut y, mut y_ref) = (
                        std::vec![0; p.batched_size()],
                        std::vec![0; p.batched_size()],
                    );
                    space_to_batch_nd(&p, &x, -1, &mut y);
                    space_to_batch_ref(&p, &x, -1, &mut y_ref);
                    assert_eq!(y, y_ref, "{shape:?} {bh}x{bw} {pads:?}");
                    let Ok((q, _)) = prepare_batch_to_space(&out, &[bh, bw], &pads) else {
                        continue;
                    };
                    let (mut z, mut z_ref) = (
                        std::vec![0; q.spatial_size()],
                        std::vec![0; q.spatial_size()],
                    );
                    batch_to_space_nd(&q, &y, &mut z);
                    batch_to_space_ref(&q, &y, &mut z_ref);
                    assert_eq!(z, z_ref, "{shape:?} {bh}x{bw} {pads:?}");
                    assert_eq!(z, x);
                    checked += 1;
                }
            }
        }
        assert!(checked >= 40, "{checked}");
    }

    #[test]
    fn refuses_bad_parameters() {
        assert!(prepare_space_to_batch(&[1, 3, 2, 1], &[2, 2], &[0, 0, 0, 0]).is_err());
        assert!(prepare_space_to_batch(&[1, 2, 2, 1], &[2], &[0, 0]).is_err());
        assert!(prepare_space_to_batch(&[1, 2, 2, 1], &[0, 1], &[0, 0, 0, 0]).is_err());
        assert!(prepare_space_to_batch(&[1, 2, 2, 1], &[1, 1], &[-1, 1, 0, 0]).is_err());
        assert!(prepare_batch_to_space(&[3, 1, 1, 1], &[2, 1], &[0, 0, 0, 0]).is_err());
        assert!(prepare_batch_to_space(&[2, 1, 1, 1], &[2, 1], &[2, 1, 0, 0]).is_err());
        assert!(prepare_batch_to_space(&[2, 1, 1, 1, 1], &[2, 1, 1], &[0; 6]).is_err());
    }
}
