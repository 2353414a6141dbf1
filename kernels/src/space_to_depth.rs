//! SPACE_TO_DEPTH and DEPTH_TO_SPACE: move `block_size x block_size` pixel blocks of an NHWC
//! tensor into the channels and back (`reference_ops::SpaceToDepth` / `DepthToSpace`, any
//! element type: they only move elements).
//!
//! DEPTH_TO_SPACE: `output[b, h * bs + dh, w * bs + dw, c] = input[b, h, w, (dh * bs + dw) *
//! output_depth + c]`; SPACE_TO_DEPTH is its inverse. TFLM's `Prepare` wants 4-D tensors, a
//! block size dividing the height and width (SPACE_TO_DEPTH) or the depth by its square
//! (DEPTH_TO_SPACE); [`prepare_depth_to_space`] and [`prepare_space_to_depth`] check the same
//! and return the output shape.

use crate::quant::PrepareError;

/// Constant parameters of either operator, in terms of its *low-resolution* side (the
/// DEPTH_TO_SPACE input, the SPACE_TO_DEPTH output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub batches: usize,
    /// Height and width of the low-resolution side.
    pub height: usize,
    pub width: usize,
    /// Channels of the high-resolution side (the low-resolution side has `depth * block^2`).
    pub depth: usize,
    pub block_size: usize,
}

impl Params {
    /// Elements of input and output.
    pub const fn size(&self) -> usize {
        self.batches * self.height * self.width * self.depth * self.block_size * self.block_size
    }
}

/// Reference kernels need no scratch memory.
pub const fn scratch_bytes(_p: &Params) -> usize {
    0
}

fn block(block_size: i32) -> Result<usize, PrepareError> {
    usize::try_from(block_size)
        .ok()
        .filter(|&b| b >= 1)
        .ok_or(PrepareError::InvalidShape)
}

/// DEPTH_TO_SPACE from the input shape `[b, h, w, c]`: `c` must be a multiple of
/// `block_size^2`. Returns the parameters and the output shape `[b, h*bs, w*bs, c/bs^2]`.
pub fn prepare_depth_to_space(
    input: &[usize],
    block_size: i32,
) -> Result<(Params, [usize; 4]), PrepareError> {
    let bs = block(block_size)?;
    let &[b, h, w, c] = input else {
        return Err(PrepareError::InvalidShape);
    };
    let sq = bs.checked_mul(bs).ok_or(PrepareError::InvalidShape)?;
    if c % sq != 0 {
        return Err(PrepareError::InvalidShape);
    }
    let p = Params {
        batches: b,
        height: h,
        width: w,
        depth: c / sq,
        block_size: bs,
    };
    let out = [
        b,
        h.checked_mul(bs).ok_or(PrepareError::InvalidShape)?,
        w.checked_mul(bs).ok_or(PrepareError::InvalidShape)?,
        c / sq,
    ];
    Ok((p, out))
}

/// SPACE_TO_DEPTH from the input shape `[b, h, w, c]`: `h` and `w` must be multiples of
/// `block_size`. Returns the parameters and the output shape `[b, h/bs, w/bs, c*bs^2]`.
pub fn prepare_space_to_depth(
    input: &[usize],
    block_size: i32,
) -> Result<(Params, [usize; 4]), PrepareError> {
    let bs = block(block_size)?;
    let &[b, h, w, c] = input else {
        return Err(PrepareError::InvalidShape);
    };
    if h % bs != 0 || w % bs != 0 {
        return Err(PrepareError::InvalidShape);
    }
    let p = Params {
        batches: b,
        height: h / bs,
        width: w / bs,
        depth: c,
        block_size: bs,
    };
    let c_out = bs
        .checked_mul(bs)
        .and_then(|s| s.checked_mul(c))
        .ok_or(PrepareError::InvalidShape)?;
    Ok((p, [b, h / bs, w / bs, c_out]))
}

/// The offsets of each run of `depth` elements: `(low, high)` element offsets of the
/// low-resolution and high-resolution sides, in low-resolution order.
fn for_each_run(p: &Params, mut f: impl FnMut(usize, usize)) {
    let (bs, d) = (p.block_size, p.depth);
    let (hi_w, hi_h) = (p.width * bs, p.height * bs);
    let mut low = 0;
    for b in 0..p.batches {
        for h in 0..p.height {
            for w in 0..p.width {
                for dh in 0..bs {
                    for dw in 0..bs {
                        let high = ((b * hi_h + h * bs + dh) * hi_w + w * bs + dw) * d;
                        f(low, high);
                        low += d;
                    }
                }
            }
        }
    }
}

/// DEPTH_TO_SPACE (`reference_ops::DepthToSpace`).
pub fn depth_to_space<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    debug_assert_eq!(input.len(), p.size());
    debug_assert_eq!(output.len(), p.size());
    let d = p.depth;
    for_each_run(p, |low, high| {
        output[high..high + d].copy_from_slice(&input[low..low + d])
    });
}

/// SPACE_TO_DEPTH (`reference_ops::SpaceToDepth`).
pub fn space_to_depth<T: Copy>(p: &Params, input: &[T], output: &mut [T]) {
    debug_assert_eq!(input.len(), p.size());
    debug_assert_eq!(output.len(), p.size());
    let d = p.depth;
    for_each_run(p, |low, high| {
        output[low..low + d].copy_from_slice(&input[high..high + d])
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn depth_to_space_and_back() {
        // [1, 1, 1, 4] with block 2 -> [1, 2, 2, 1]: the channels become the pixels.
        let (p, out) = prepare_depth_to_space(&[1, 1, 1, 4], 2).unwrap();
        assert_eq!(out, [1, 2, 2, 1]);
        let mut o = [0i8; 4];
        depth_to_space(&p, &[1, 2, 3, 4], &mut o);
        assert_eq!(o, [1, 2, 3, 4]);
        // [1, 1, 2, 8] block 2 -> [1, 2, 4, 2]
        let (p, out) = prepare_depth_to_space(&[1, 1, 2, 8], 2).unwrap();
        assert_eq!(out, [1, 2, 4, 2]);
        let x: Vec<i32> = (0..16).collect();
        let mut y = [0i32; 16];
        depth_to_space(&p, &x, &mut y);
        // row 0: pixel (0,0) gets c 0,1; (0,1) c 2,3; (0,2) pixel 1's c 0,1 = 8,9; ...
        assert_eq!(y, [0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15]);
        let (q, back) = prepare_space_to_depth(&out, 2).unwrap();
        assert_eq!(back, [1, 1, 2, 8]);
        assert_eq!(p, q);
        let mut z = [0i32; 16];
        space_to_depth(&q, &y, &mut z);
        assert_eq!(&z[..], &x[..]);
    }

    #[test]
    fn refuses_bad_shapes() {
        assert!(prepare_depth_to_space(&[1, 1, 1, 6], 2).is_err());
        assert!(prepare_depth_to_space(&[1, 1, 6], 1).is_err());
        assert!(prepare_space_to_depth(&[1, 3, 2, 1], 2).is_err());
        assert!(prepare_space_to_depth(&[1, 2, 2, 1], 0).is_err());
        assert!(prepare_space_to_depth(&[1, 2, 2, 1], -2).is_err());
    }
}
